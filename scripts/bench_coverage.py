# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""The wanted coverage of an interval, as mthpctl bench has it, for the
scripts that report intervals (bench-table.py, kernel-cost-report.py)."""
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
