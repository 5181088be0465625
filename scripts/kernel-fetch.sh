#!/usr/bin/env bash
# Fetch Debian's linux-source-7.3 without touching the machine's apt
# configuration, verify it against kernel/BASE and extract it into the cache.
#
# Prints the path of the extracted (pristine) source tree on stdout.
#   KERNEL_CACHE  cache root (default: ${XDG_CACHE_HOME:-$HOME/.cache}/mthpctl)
#   MTHPCTL_DEBIAN_MIRROR  Debian mirror URL (default: the first one in the
#                 machine's apt sources)
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=/dev/null
. "$top/kernel/BASE"

cache=${KERNEL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/mthpctl}
apt_dir=$cache/apt
mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial" "$cache/src"
# one fetch at a time: two extractions would replace each other's tree
exec 8>"$cache/.fetch.lock"
flock 8

log() { printf 'kernel-fetch: %s\n' "$*" >&2; }

# shellcheck source=scripts/debian-mirror.sh
. "$top/scripts/debian-mirror.sh"
apt_opts=(-o "Dir::Etc::SourceList=$apt_dir/sources.list"
	  -o "Dir::Etc::SourceParts=/dev/null"
	  -o "Dir::State::Lists=$apt_dir/lists"
	  -o "Dir::Cache=$apt_dir/cache"
	  -o "Debug::NoLocking=1"
	  -o "APT::Get::List-Cleanup=0"
	  -o "APT::Sandbox::User=root")

deb=$apt_dir/${BASE_PACKAGE}_${BASE_VERSION//:/%3a}_all.deb
version=$BASE_VERSION
if [ ! -s "$deb" ]; then
	BASE_MIRROR=${MTHPCTL_DEBIAN_MIRROR:-$(debian_mirror)}
	[ -n "$BASE_MIRROR" ] ||
		{ log "error: no Debian mirror in the apt sources; set MTHPCTL_DEBIAN_MIRROR=URL"; exit 1; }
	echo "deb $BASE_MIRROR $BASE_SUITE main" >"$apt_dir/sources.list"
	log "fetching package lists for $BASE_SUITE from $BASE_MIRROR"
	apt-get -qq "${apt_opts[@]}" update >&2
	if ! (cd "$apt_dir" && apt-get -qq "${apt_opts[@]}" download \
		"$BASE_PACKAGE=$BASE_VERSION" >&2); then
		version=$(apt-cache "${apt_opts[@]}" show "$BASE_PACKAGE" 2>/dev/null |
			  sed -n 's/^Version: //p' | sort -V | tail -n1)
		[ -n "$version" ] || { log "error: $BASE_PACKAGE is not served by $BASE_MIRROR $BASE_SUITE"; exit 1; }
		log "WARNING: pinned $BASE_PACKAGE $BASE_VERSION is no longer served;"
		log "WARNING: using the newest one, $version (checksum not pinned)"
		(cd "$apt_dir" && apt-get -qq "${apt_opts[@]}" download \
			"$BASE_PACKAGE=$version" >&2)
		deb=$apt_dir/${BASE_PACKAGE}_${version//:/%3a}_all.deb
	fi
fi

src=$cache/src/$BASE_PACKAGE-$version
if [ ! -f "$src/.extracted" ]; then
	tmp=$(mktemp -d "$cache/src/.extract.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
	log "extracting $(basename "$deb")"
	dpkg-deb --fsys-tarfile "$deb" |
		tar -x -C "$tmp" "./usr/src/$BASE_PACKAGE.tar.xz"
	sum=$(sha256sum "$tmp/usr/src/$BASE_PACKAGE.tar.xz" | cut -d' ' -f1)
	if [ "$version" = "$BASE_VERSION" ] && [ "$sum" != "$BASE_TARBALL_SHA256" ]; then
		log "error: sha256 of $BASE_PACKAGE.tar.xz is $sum, kernel/BASE pins $BASE_TARBALL_SHA256"
		exit 1
	fi
	tar -xJf "$tmp/usr/src/$BASE_PACKAGE.tar.xz" -C "$tmp"
	rm -rf "$src"
	mv "$tmp/$BASE_PACKAGE" "$src"
	echo "$version $sum" >"$src/.extracted"
fi
echo "$src"
