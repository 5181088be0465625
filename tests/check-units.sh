#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# `make check-units`: systemd-analyze verify on the units mthpctl installs
# and writes, with MTHPCTL (an absolute path) as their command:
#   scripts/mthpctl.service.in   as `make install` writes it
#   tests/systemd/example.service with tests/systemd/50-mthpctl.conf, the
#                                drop-in apply writes for a unit target (the
#                                unit tests check that it is apply's text)
# Fails on any message: systemd-analyze exits 0 on an unknown key, and a
# "-" command prefix hides a missing executable. Fails when
# systemd-analyze is missing (Debian: package systemd): nothing verified is
# not a pass.
#   tests/check-units.sh /abs/path/to/mthpctl
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:?usage: check-units.sh /abs/path/to/mthpctl}
[ "${bin#/}" != "$bin" ] && [ -x "$bin" ] || { echo "check-units: $bin is not an executable absolute path" >&2; exit 1; }
if ! command -v systemd-analyze >/dev/null; then
	echo "check-units: FAILED: systemd-analyze not found, nothing verified (scripts/install-deps.sh installs package systemd)" >&2
	exit 1
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
sed "s|@SBINDIR@|$(dirname "$bin")|g" "$top/scripts/mthpctl.service.in" >"$tmp/mthpctl.service"
[ "$(basename "$bin")" = mthpctl ] || { echo "check-units: the command must be named mthpctl: $bin" >&2; exit 1; }
cp "$top/tests/systemd/example.service" "$tmp/"
mkdir "$tmp/example.service.d"
sed "s|@MTHPCTL@|$bin|g" "$top/tests/systemd/50-mthpctl.conf" >"$tmp/example.service.d/50-mthpctl.conf"
fail=0
for unit in mthpctl.service example.service; do
	# (run where no unit of the same name lies around)
	if out=$(cd "$tmp" && systemd-analyze verify --man=no "$tmp/$unit" 2>&1) && [ -z "$out" ]; then
		echo "ok - systemd-analyze verify $unit"
	else
		echo "not ok - systemd-analyze verify $unit:"
		sed 's/^/#   /' <<<"$out"
		fail=1
	fi
done
[ $fail = 0 ] && echo "check-units: 2 units verified" || echo "check-units: FAILED"
exit $fail
