# shellcheck shell=bash
# debian_mirror: the machine's own Debian mirror, the first archive URI (not
# -security) of its apt sources, one-line or deb822, so that no host is
# written into the repository. Sourced by kernel-fetch.sh and arm64-rootfs.sh.
debian_mirror() {
	local f
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list \
		 /etc/apt/sources.list.d/*.sources; do
		[ -r "$f" ] || continue
		sed -n -e 's/^deb\(\s\+\[[^]]*\]\)\?\s\+\(\S\+\)\s.*/\2/p' \
		       -e 's/^URIs:\s*\(\S\+\).*/\1/p' "$f"
	done | grep -E '/debian/?$' | head -n1 || true
}
