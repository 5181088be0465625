#!/usr/bin/env python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""Summarise a scripts/kernel-cost.sh run: the series' cost per 4 KiB fault.

Usage: scripts/kernel-cost-report.py OUT [--json FILE]

Reads OUT/boot-NN-{base,series}/rR-{none,sibling}.json (mthpctl bench
pagefault, one round each) and prints, per row (mode of bench pagefault):
each boot's median ns per 4 KiB page; the series against the base, the
ratio of the medians of the two boots of each pair (boots 1-2, 3-4, ...);
the series with a policy on a sibling cgroup against none, the per-round
ratio within each series boot. A ratio's median comes with the interval
[x(k), x(n-k+1)] of its sorted values and that interval's exact coverage
(the sign test's: 1 - 2 P(Bin(n, 1/2) < k)), the largest k whose coverage
is at least the wanted one (BENCH_COVERAGE_WANTED_PCT of
src/bench/bench_interval.h, as mthpctl bench); below 6 values no k reaches
95%, and the interval is [min..max] with the coverage it has. A ratio is
"above" or "below" 1.0 only when such an interval excludes 1.0; "n.d." when
it holds 1.0; "unranked" when its coverage is below the wanted one.
Writes the same as JSON to OUT/summary.json (or --json FILE), and every
figure it used, one line per boot, round, setup and mode, to
OUT/rounds.jsonl: a folder holding only env.json and rounds.jsonl (a
published run, kernel/cost/RUN-ID) is summarised from those.
Exit status: 0, or 1 when OUT holds no run.
"""
import glob
import json
import math
import os
import re
import statistics
import sys

from bench_coverage import coverage_str, wanted_coverage

WANTED = wanted_coverage()
CONTROL = "never"   # the row whose faults never reach the policy check


def coverage(n, k):
    """P(x(k) <= median <= x(n-k+1)) for n values of a continuous variable."""
    below = sum(math.comb(n, i) for i in range(k)) / 2.0 ** n
    return 1.0 - 2.0 * below


def interval(values):
    """{"median", "lo", "hi", "coverage", "n", "verdict"} of the values."""
    xs = sorted(v for v in values if v is not None)
    n = len(xs)
    if n == 0:
        return None
    k = 1
    while k + 1 <= (n + 1) // 2 and coverage(n, k + 1) >= WANTED:
        k += 1
    cov = coverage(n, k) if n > 1 else 0.0
    lo, hi = xs[k - 1], xs[n - k]
    if cov < WANTED:
        verdict = "unranked"
    elif lo > 1.0:
        verdict = "above"
    elif hi < 1.0:
        verdict = "below"
    else:
        verdict = "n.d."
    return {"median": statistics.median(xs), "lo": lo, "hi": hi,
            "coverage": cov, "n": n, "verdict": verdict}


def load_round(path):
    """{mode: ns_per_4k} of one bench pagefault JSON, or None."""
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, ValueError):
        return None
    return {m["mode"]: m["ns_per_4k"] for m in doc.get("modes", [])
            if m.get("ns_per_4k") is not None}


def load_rounds_jsonl(out):
    boots = {}
    with open(os.path.join(out, "rounds.jsonl")) as f:
        for line in f:
            x = json.loads(line)
            b = boots.setdefault(x["boot"], {"boot": x["boot"], "kind": x["kind"], "rounds": {}})
            b["rounds"].setdefault(x["round"], {}).setdefault(x["setup"], {})[x["mode"]] = \
                x["ns_per_4k"]
    return [boots[k] for k in sorted(boots)]


def write_rounds_jsonl(out, boots):
    with open(os.path.join(out, "rounds.jsonl"), "w") as f:
        for b in boots:
            for r in sorted(b["rounds"]):
                for setup in sorted(b["rounds"][r]):
                    for mode, ns in sorted(b["rounds"][r][setup].items()):
                        f.write(json.dumps({"boot": b["boot"], "kind": b["kind"], "round": r,
                                            "setup": setup, "mode": mode,
                                            "ns_per_4k": ns}) + "\n")


def load_boots(out):
    if not glob.glob(os.path.join(out, "boot-*-*")) and \
       os.path.exists(os.path.join(out, "rounds.jsonl")):
        return load_rounds_jsonl(out)
    boots = []
    for d in sorted(glob.glob(os.path.join(out, "boot-*-*"))):
        m = re.match(r"boot-(\d+)-(base|series)$", os.path.basename(d))
        if not m:
            continue
        rounds = {}
        for f in glob.glob(os.path.join(d, "r*-*.json")):
            fm = re.match(r"r(\d+)-(none|sibling)\.json$", os.path.basename(f))
            if fm:
                got = load_round(f)
                if got:
                    rounds.setdefault(int(fm.group(1)), {})[fm.group(2)] = got
        boots.append({"boot": int(m.group(1)), "kind": m.group(2), "rounds": rounds})
    if boots:
        write_rounds_jsonl(out, boots)
    return boots


def boot_median(boot, setup, mode):
    vals = [r[setup][mode] for r in boot["rounds"].values()
            if setup in r and mode in r[setup]]
    return statistics.median(vals) if vals else None


def fmt_ratio(r):
    if not r:
        return "-"
    if r["n"] == 1:
        return "%.3f (one value, unranked)" % r["median"]
    return "%.3f [%.3f..%.3f] %s%% %s" % (r["median"], r["lo"], r["hi"],
                                          coverage_str(r["coverage"]), r["verdict"])


def summarise(out):
    boots = load_boots(out)
    if not boots:
        return None
    modes = sorted({m for b in boots for r in b["rounds"].values()
                    for s in r.values() for m in s})
    pairs = [boots[i:i + 2] for i in range(0, len(boots) - 1, 2)]
    pairs = [{p[0]["kind"]: p[0], p[1]["kind"]: p[1]} for p in pairs
             if {p[0]["kind"], p[1]["kind"]} == {"base", "series"}]
    res = {"boots": [], "rows": {}}
    for b in boots:
        res["boots"].append({"boot": b["boot"], "kind": b["kind"], "rounds": len(b["rounds"]),
                             "median_ns_per_4k": {s: {m: boot_median(b, s, m) for m in modes}
                                                  for s in ("none", "sibling")
                                                  if any(s in r for r in b["rounds"].values())}})
    for m in modes:
        def pair_ratios(setup):
            out_ = []
            for p in pairs:
                s, b = boot_median(p["series"], setup, m), boot_median(p["base"], "none", m)
                if s is not None and b:
                    out_.append(s / b)
            return out_
        sib = [r["sibling"][m] / r["none"][m]
               for b in boots if b["kind"] == "series" for r in b["rounds"].values()
               if "sibling" in r and "none" in r and m in r["sibling"] and r["none"].get(m)]
        res["rows"][m] = {
            "series_vs_base": interval(pair_ratios("none")),
            "series_sibling_vs_base": interval(pair_ratios("sibling")),
            "sibling_vs_none": interval(sib),
        }
        if m == CONTROL or CONTROL not in modes:
            continue
        # the same, each figure first divided by never's of its own run
        # (or boot): never's faults stop at the sysfs filter on both
        # kernels, policy or not, so what moves never too (the guest's
        # speed, a policy's own timers) cancels out
        def by_control(kind_rounds, setup):
            return [r[setup][m] / r[setup][CONTROL] for r in kind_rounds
                    if setup in r and r[setup].get(m) and r[setup].get(CONTROL)]
        pair_norm = []
        for p in pairs:
            s_ = boot_median(p["series"], "none", m), boot_median(p["series"], "none", CONTROL)
            b_ = boot_median(p["base"], "none", m), boot_median(p["base"], "none", CONTROL)
            if None not in s_ + b_:
                pair_norm.append((s_[0] / s_[1]) / (b_[0] / b_[1]))
        sib_norm = [r["sibling"][m] / r["sibling"][CONTROL] / (r["none"][m] / r["none"][CONTROL])
                    for b in boots if b["kind"] == "series" for r in b["rounds"].values()
                    if "sibling" in r and "none" in r and
                    all(r[x].get(y) for x in ("sibling", "none") for y in (m, CONTROL))]
        res["rows"][m]["series_vs_base_by_never"] = interval(pair_norm)
        res["rows"][m]["sibling_vs_none_by_never"] = interval(sib_norm)
    # boots that measured nothing and were booted again (kernel-cost.sh)
    failed = os.path.join(out, "failed-boots.txt")
    if os.path.exists(failed):
        with open(failed) as f:
            res["failed_boots"] = [line.rstrip("\n") for line in f if line.strip()]
    return res


def text(res):
    lines = ["ns per 4 KiB page, each boot's median (none / with a policy on a sibling cgroup):"]
    for b in res["boots"]:
        meds = b["median_ns_per_4k"]
        cells = []
        for m in sorted(meds.get("none", {})):
            n = meds["none"][m]
            s = meds.get("sibling", {}).get(m)
            cells.append("%s %s%s" % (m, "-" if n is None else "%.0f" % n,
                                      "" if s is None else " / %.0f" % s))
        lines.append("  boot %2d %-6s %d rounds: %s" % (b["boot"], b["kind"], b["rounds"],
                                                        ", ".join(cells)))
    for line in res.get("failed_boots", []):
        lines.append("  booted again: " + line)
    lines.append("ratios, median [interval] coverage verdict (wanted %.0f%%):" % (WANTED * 100))
    for m, row in res["rows"].items():
        lines.append("  %s:" % m)
        lines.append("    series / base, no policy (per boot pair):      %s"
                     % fmt_ratio(row["series_vs_base"]))
        lines.append("    series with a sibling policy / base (pairs):   %s"
                     % fmt_ratio(row["series_sibling_vs_base"]))
        lines.append("    sibling policy / none, series (per round):     %s"
                     % fmt_ratio(row["sibling_vs_none"]))
        if "series_vs_base_by_never" in row:
            lines.append("    the same in units of never's time:")
            lines.append("      series / base, no policy (per boot pair):    %s"
                         % fmt_ratio(row["series_vs_base_by_never"]))
            lines.append("      sibling policy / none (per round):           %s"
                         % fmt_ratio(row["sibling_vs_none_by_never"]))
    return "\n".join(lines)


def main(argv):
    if len(argv) < 2 or argv[1] in ("-h", "--help"):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    out = argv[1]
    path = os.path.join(out, "summary.json")
    if len(argv) == 4 and argv[2] == "--json":
        path = argv[3]
    res = summarise(out)
    if not res:
        print("kernel-cost-report: no runs in %s (scripts/kernel-cost.sh -o %s)" % (out, out),
              file=sys.stderr)
        return 1
    with open(path, "w") as f:
        json.dump(res, f, indent=1)
    print(text(res))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
