#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# `make check-plots`: scripts/bench-plots.py on tests/fixtures/bench-plots
# (cut from a real `make bench` and a real demo: see its README), no VM.
#   - every PNG is written, is a valid PNG (signature, chunk CRCs, IHDR,
#     IDAT that inflates to the size IHDR says) of at least 800x400 pixels
#     and 20 KB (a blank figure of that size is ~5 KB), and no temporary
#     file is left;
#   - the refusals keep their documented exit statuses: 1 for a missing
#     directory or a bad option, 2 for a directory without inputs (nothing
#     written), 3 for a broken input,
#     and a broken timeline does not cost the other plots.
# Fails when matplotlib is missing (scripts/install-deps.sh installs it).
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
plots=$top/scripts/bench-plots.py
fixture=$top/tests/fixtures/bench-plots
all_pngs=(bench-redis.png bench-folios.png demo-timeline.png)
passed=0 failed=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

ok() { echo "check-plots: ok: $*"; passed=$((passed + 1)); }
fail() { echo "check-plots: FAIL: $*"; failed=$((failed + 1)); }

# PNG... : each a valid, non-trivial PNG, or a message naming what is wrong
check_png() {
	/usr/bin/python3 - "$@" <<'PY'
import struct, sys, zlib
bad = 0
for path in sys.argv[1:]:
    try:
        data = open(path, "rb").read()
        if data[:8] != b"\x89PNG\r\n\x1a\n":
            raise ValueError("no PNG signature")
        pos, chunks, idat = 8, [], b""
        while pos < len(data):
            n, kind = struct.unpack(">I4s", data[pos:pos + 8])
            body = data[pos + 8:pos + 8 + n]
            crc, = struct.unpack(">I", data[pos + 8 + n:pos + 12 + n])
            if zlib.crc32(kind + body) != crc:
                raise ValueError("bad CRC in chunk %r" % kind)
            chunks.append(kind)
            if kind == b"IDAT":
                idat += body
            pos += 12 + n
        if chunks[0] != b"IHDR" or chunks[-1] != b"IEND":
            raise ValueError("chunks %r" % chunks[:3])
        w, h, depth, ctype = struct.unpack(">IIBB", data[16:26])
        channels = {0: 1, 2: 3, 4: 2, 6: 4}[ctype]
        raw = zlib.decompress(idat)
        if len(raw) != h * (1 + w * channels * depth // 8):
            raise ValueError("IDAT holds %d bytes, IHDR says %dx%d" % (len(raw), w, h))
        if w < 800 or h < 400 or len(data) < 20000:
            raise ValueError("trivial: %dx%d, %d bytes" % (w, h, len(data)))
        print("%s: %dx%d, %d bytes" % (path.rsplit("/", 1)[-1], w, h, len(data)))
    except Exception as e:
        print("%s: %s" % (path, e))
        bad = 1
sys.exit(bad)
PY
}

# NAME WANT-STATUS DIR: run the script on DIR into DIR/png, check its status
run_plots() {
	local name=$1 want=$2 dir=$3 rc
	"$plots" -o "$dir/png" "$dir" >"$tmp/$name.log" 2>&1
	rc=$?
	if [ "$rc" = "$want" ]; then
		ok "$name: exit $rc"
	else
		fail "$name: exit $rc, want $want:"
		sed 's/^/    /' "$tmp/$name.log"
	fi
}

if ! /usr/bin/python3 -c 'import matplotlib' 2>/dev/null; then
	fail "/usr/bin/python3 has no matplotlib: scripts/install-deps.sh (package python3-matplotlib)"
	echo "check-plots: $passed passed, $failed failed"
	exit 1
fi

# the real fixture: every plot
cp -r "$fixture" "$tmp/full"
run_plots full 0 "$tmp/full"
pngs=()
for f in "${all_pngs[@]}"; do pngs+=("$tmp/full/png/$f"); done
if out=$(check_png "${pngs[@]}"); then
	ok "valid PNGs: $(echo $out)"
else
	fail "PNGs: $out"
fi
leftover=$(find "$tmp/full/png" -name '*.tmp.png')
[ -z "$leftover" ] && ok "no temporary file left" || fail "left behind: $leftover"

# the timeline alone (a `make demo` result directory)
mkdir "$tmp/demo"
cp "$fixture/timeline.jsonl" "$fixture/probes.jsonl" "$tmp/demo/"
run_plots demo-only 0 "$tmp/demo"
[ "$(ls "$tmp/demo/png")" = demo-timeline.png ] && ok "demo-only: the timeline only" ||
	fail "demo-only wrote: $(ls "$tmp/demo/png" | tr '\n' ' ')"

# refusals
"$plots" "$tmp/absent" >"$tmp/absent.log" 2>&1
rc=$?
[ "$rc" = 1 ] && grep -q "not a directory" "$tmp/absent.log" && ! grep -q Traceback "$tmp/absent.log" &&
	ok "missing dir: exit 1" ||
	fail "missing dir: exit $rc: $(cat "$tmp/absent.log")"
"$plots" --no-such-option "$tmp/full" >"$tmp/option.log" 2>&1
rc=$?
# (1 is also Python's status for an uncaught exception: the usage message,
# and no traceback, make it the refusal)
[ "$rc" = 1 ] && grep -qx "bench-plots: unrecognized arguments: --no-such-option" "$tmp/option.log" &&
	! grep -q Traceback "$tmp/option.log" && ok "bad option: exit 1, named" ||
	fail "bad option: exit $rc: $(cat "$tmp/option.log")"
mkdir "$tmp/empty"
run_plots empty 2 "$tmp/empty"
[ ! -e "$tmp/empty/png" ] && ok "empty: nothing written" || fail "empty: made $tmp/empty/png"

# a timeline cut mid-line: exit 3 naming it, the bench plots still written
cp -r "$fixture" "$tmp/cut"
head -c 3000 "$fixture/timeline.jsonl" >"$tmp/cut/timeline.jsonl"
run_plots cut-timeline 3 "$tmp/cut"
grep -q "timeline.jsonl:[0-9]*:" "$tmp/cut-timeline.log" && ok "cut timeline: named with its line" ||
	fail "cut timeline: message $(cat "$tmp/cut-timeline.log")"
[ -s "$tmp/cut/png/bench-redis.png" ] && [ -s "$tmp/cut/png/bench-folios.png" ] &&
	[ ! -e "$tmp/cut/png/demo-timeline.png" ] && ok "cut timeline: the bench plots kept" ||
	fail "cut timeline: wrote $(ls "$tmp/cut/png" | tr '\n' ' ')"

# a redis file without a field the plot reads: exit 3 naming file and field
cp -r "$fixture" "$tmp/field"
/usr/bin/python3 - "$tmp/field/redis_bgsave.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
del doc["levels"][1]["modes"][0]["spread"]
json.dump(doc, open(sys.argv[1], "w"))
PY
run_plots missing-field 3 "$tmp/field"
grep -q "redis_bgsave.json: no field spread" "$tmp/missing-field.log" &&
	ok "missing field: named" || fail "missing field: message $(cat "$tmp/missing-field.log")"

echo "check-plots: $passed passed, $failed failed"
[ "$failed" = 0 ]
