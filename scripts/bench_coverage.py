# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""The wanted coverage of an interval, as mthpctl bench has it, and a ratio
as it prints one, for the scripts that report intervals (bench-table.py,
bench-results.py, kernel-cost-report.py)."""
import os
import re

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def wanted_coverage():
    """BENCH_COVERAGE_WANTED_PCT of src/bench/bench_interval.h, as 0..1."""
    path = os.path.join(TOP, "src", "bench", "bench_interval.h")
    with open(path) as f:
        m = re.search(r"#define\s+BENCH_COVERAGE_WANTED_PCT\s+(\d+)", f.read())
    if not m:
        raise ValueError("%s: no BENCH_COVERAGE_WANTED_PCT" % path)
    return int(m.group(1)) / 100.0


def coverage_str(c):
    """"75", "87.5", "96.9": one decimal, none when it is 0 (as mthpctl)."""
    s = "%.1f" % (c * 100)
    return s[:-2] if s.endswith(".0") else s


def ratio_str(r, wanted):
    """"0.960 [0.900..1.020] 75% unranked", as bench_ratio_fmt() prints a
    ratio's spread (JSON: median, lo, hi, coverage, n): n.d. when an
    interval of the wanted coverage holds 1.0, unranked below it."""
    if not r or not r.get("n"):
        return "-"

    def num(v):
        return "-" if v is None else "%.3f" % v
    text = num(r["median"])
    if r["n"] == 1:
        return text + " unranked"
    text += " [%s..%s] %s%%" % (num(r["lo"]), num(r["hi"]), coverage_str(r["coverage"]))
    if not (r["coverage"] is not None and r["coverage"] >= wanted):
        return text + " unranked"
    if r["lo"] <= 1.0 <= r["hi"]:
        return text + " n.d."
    return text
