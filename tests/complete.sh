#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Run the bash completion of mthpctl (scripts/mthpctl.bash-completion) on
# a command line, without bash-completion installed: its two helpers the
# completion uses are stubbed (_filedir answers "DIRS" for directories,
# "FILES" for files, "FILES.EXT" for files named *.EXT). Prints the
# candidates, one per line, sorted.
#
#   tests/complete.sh MTHPCTL WORD... ''     (the last word: the one completed)
# e.g. tests/complete.sh ./mthpctl detach --cgroup /sys/fs/cgroup/
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
[ $# -ge 2 ] || { echo "usage: $0 MTHPCTL WORD... LAST-WORD" >&2; exit 1; }

_init_completion() {
	words=("${COMP_WORDS[@]}")
	cword=$COMP_CWORD
	cur=${words[cword]}
	prev=${words[cword - 1]}
}
_filedir() {
	case ${1:-} in
	-d) COMPREPLY=(DIRS) ;;
	'') COMPREPLY=(FILES) ;;
	*) COMPREPLY=("FILES.$1") ;;
	esac
}
# shellcheck source=../scripts/mthpctl.bash-completion
source "$top/scripts/mthpctl.bash-completion"

COMP_WORDS=("$@")
COMP_CWORD=$(($# - 1))
COMPREPLY=()
_mthpctl "$1" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
[ ${#COMPREPLY[@]} -gt 0 ] && printf '%s\n' "${COMPREPLY[@]}" | LC_ALL=C sort
exit 0
