# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# shellcheck shell=bash
# A test of tests/vm/run.sh, sourced by it (its helpers and variables).

# --- 2: pressure: down the ladder to 4K, large folios back after ---------

t_auto_pressure() {
	local p f t0 t1 line react_on react_off j out wdur
	p=$(mkcg p) || return 1
	"$M" attach --cgroup "$p" >/dev/null || fail "attach failed" || return 1
	f=$logs/s2-probes.out
	# 24M mlocked (stays counted as anon under reclaim) + a 4M probe every 100ms
	"$H/faulter" -c "$p" -b 24 -s 4 -n 0 -d 120000 -i 100 >"$f" 2>&1 &
	wait_line "$f" '^ready' 20 || fail "faulter not ready: $(cat "$f")" || return 1
	t0=$(now_ms)
	line=$(wait_probe "$f" "$t0" 10000 'v["o9"] * 2 >= v["pages"]') ||
		fail "no large folios before pressure: $(tail -n1 "$f")" || return 1
	note "before pressure: large folios after $(( $(field "$line" start_ms) - t0 )) ms ($(field "$line" large_pct)% large)"

	"$H/thrasher" -c "$p" -s 64 >"$logs/s2-thrasher.out" 2>&1 &
	local thr=$!
	wait_line "$logs/s2-thrasher.out" '^ready' 60 || fail "thrasher not ready" || return 1
	t0=$(now_ms)
	echo 40M >"$p/memory.high" || fail "memory.high" || return 1
	wdur=$(( $(now_ms) - t0 ))
	# A probe may take seconds under memory.high throttling: the time that
	# counts is when its first 4K-only 2M chunk was faulted. The limit: the
	# stall must build up over up to two windows, then the ladder takes two
	# steps half a window apart (16K first, then 4K while the stall stays).
	local lim=$((3 * WINDOW_MS + MARGIN_MS))
	line=$(wait_probe "$f" 0 $((lim + 10000)) "v[\"first_small_ms\"] >= $t0" "$t0") ||
		fail "no 4K-only faults $((lim + 10000)) ms after memory.high=40M: $(tail -n1 "$f"); $(policy_json "$p" | jq -c '.sample | {stall_per_window_ns, usage_bytes, pressure, low_usage, ladder}')" || return 1
	react_on=$(( $(field "$line" first_small_ms) - t0 ))
	[ "$react_on" -le "$lim" ] ||
		fail "first 4K-only fault $react_on ms after memory.high=40M (limit $lim ms)" || return 1
	note "pressure on (memory.high=40M, 64M thrasher; the write took $wdur ms): 4K-only faults after $react_on ms"
	# it stays there while the pressure lasts, and says why
	sleep 2
	j=$(policy_json "$p")
	# (the size ladder starts at 16K and steps to 4K while the stall stays
	# at or above the threshold, as it does with this thrasher)
	jq -e '.restriction == "pressure" and .sample.pressure == true and
	       .sample.stall_per_window_ns >= .params.threshold_ns and
	       .sample.ladder.steps_down >= 2 and .sample.ladder.rung_kb == 4 and
	       .totals.fallbacks.pressure.pagefault > 0 and .allowed_sizes_kb == [4]' \
		<<<"$j" >/dev/null || fail "status under pressure: $j" || return 1
	note "under pressure: stall $(jq '.sample.stall_per_window_ns / 1000000 | floor' <<<"$j") ms per window, anon+shmem $(jq '.sample.usage_bytes / 1048576 | floor' <<<"$j") MiB, ladder at $(jq '.sample.ladder.rung_kb' <<<"$j")K after $(jq '.sample.ladder.steps_down' <<<"$j") steps down, pressure fallbacks $(jq '.totals.fallbacks.pressure.pagefault' <<<"$j")"
	# The hook's counting (the fast path answers most calls from the
	# memo): while only 4 KiB (or the ladder's 16K) is allowed, every
	# page-fault call narrows the offer, so pressure fallbacks are >= 90%
	# of the calls counted over 2 s (the policy's only cgroup is P).
	local j2 dj
	sleep 2
	j2=$(policy_json "$p")
	jq -e '.restriction == "pressure"' <<<"$j2" >/dev/null || fail "pressure ended during the count: $j2" || return 1
	dj=$(jq -n --argjson a "$j" --argjson b "$j2" '{calls: ($b.totals.calls.pagefault - $a.totals.calls.pagefault),
		pressure: ($b.totals.fallbacks.pressure.pagefault - $a.totals.fallbacks.pressure.pagefault)}')
	count_ratio "$dj" .pressure .calls 500 "under pressure, 2 s: pressure fallbacks" || return 1
	out=$("$M" status --cgroup "$p")
	grep -q "allows now:    4K only (pressure)" <<<"$out" || fail "status text: $out" || return 1
	grep -q "fell back:.* pressure/pagefault [1-9]" <<<"$out" || fail "status text: $out" || return 1
	t1=$(now_ms)
	# nothing above the ladder's first rung (16K) while the pressure lasts
	line=$(probes "$f" "$(( $(field "$line" end_ms) + 1 ))" "v[\"end_ms\"] < $t1 && v[\"max_order\"] > 2" | head -n1)
	[ -z "$line" ] || fail "flapped back to large folios under pressure: $line" || return 1

	t1=$(now_ms)
	echo max >"$p/memory.high"
	kill -9 $thr
	wait $thr 2>/dev/null
	line=$(wait_probe "$f" 0 $((2 * WINDOW_MS + MARGIN_MS + 10000)) "v[\"first_large_ms\"] >= $t1" "$t1") ||
		fail "no large folios after the pressure ended: $(tail -n1 "$f"); $(policy_json "$p" | jq -c '.sample')" || return 1
	react_off=$(( $(field "$line" first_large_ms) - t1 ))
	[ "$react_off" -le $((2 * WINDOW_MS + MARGIN_MS)) ] ||
		fail "first large folio $react_off ms after the pressure ended (limit $((2 * WINDOW_MS + MARGIN_MS)) ms)" || return 1
	line=$(wait_probe "$f" "$(field "$line" end_ms)" 5000 'v["o9"] * 2 >= v["pages"]') ||
		fail "large folios came back but not mostly 2M: $(tail -n1 "$f")" || return 1
	note "pressure off (memory.high=max, thrasher killed): large folios after $react_off ms ($(field "$line" large_pct)% large)"
	j=$(policy_json "$p")
	jq -e '.restriction == "none" and .sample.pressure == false' <<<"$j" >/dev/null ||
		fail "status after pressure: $j" || return 1
	echo "react_on_ms=$react_on react_off_ms=$react_off" >"$logs/s2-reaction"
}
