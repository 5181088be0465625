#!/usr/bin/python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""README's results tables from a run folder of `make bench` or of
`make bench-stock` (the hardware-MMU anchor: env.json says "stock").

Usage: scripts/bench-table.py RUNDIR            print the table
       scripts/bench-table.py --check RUNDIR [README]
                                               exit 1 if README's table
                                               (the first table under
                                               "## Results") differs

RUNDIR is a run folder (.output/bench/<date>/) or a published one
(tests/results/RUN-ID/, scripts/bench-publish.sh; an anchor run:
tests/hardware/RUN-ID/). Every cell is read from
the JSON mthpctl bench wrote: a ratio is the median of per-round ratios,
its interval and that interval's coverage, marked as mthpctl marks it
(n.d.: the interval holds 1.0; unranked: its coverage is below the
wanted one, read from src/bench/bench_interval.h, so that the threshold is
defined once). A policy row is compared with each static setting, never
with the best of them.

Exit status: 0 (printed, or README agrees), 1 README's table differs or
has none, 2 usage or a run folder without a benchmark's JSON or env.json.
"""
import json
import os
import sys

import bench_coverage
from bench_coverage import wanted_coverage

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# (file, title) of the redis runs of `make bench`, in the table's order
REDIS_RUNS = (("redis_nobgsave.json", "redis, noBGSAVE"),
              ("redis_bgsave.json", "redis, BGSAVE"),
              ("redis_madvise.json", "redis on a madvise host"))
WORKLOADS = ("shell", "gups", "bloat", "arenas", "compile", "memcached")


class BadRun(Exception):
    pass


WANTED = None       # the wanted coverage, set by main()


def ratio_str(r):
    return bench_coverage.ratio_str(r, WANTED)


def pct_str(v):
    return "-" if v is None else "%+.1f%%" % v


def is_simple(mode):
    return mode.endswith("+simple")


def is_policy(mode):
    """auto (or the --policy given): a mode on a host setting, not simple"""
    return "+" in mode and not is_simple(mode)


def pick(modes):
    """(policy row, simple row) of a list of mode objects (None if absent)."""
    pol = next((m for m in modes if is_policy(m["mode"])), None)
    sim = next((m for m in modes if is_simple(m["mode"])), None)
    return pol, sim


def cells(fmt, key, pol, sim):
    """The auto and simple cells of a row: fmt(row[key]), "-" without the row."""
    return tuple("-" if m is None else fmt(m[key]) for m in (pol, sim))


def vs_each(m, key, claim="beats every static setting"):
    if m is None or "vs_each_static" not in m:
        return "-"
    parts = ["x %s %s" % (s["mode"], ratio_str(s[key])) for s in m["vs_each_static"]]
    parts.append("%s: %s" % (claim, "yes" if m["beats_every_static"] else "no"))
    return "; ".join(parts)


def load(rundir, name):
    path = os.path.join(rundir, name)
    if not os.path.exists(path):
        return None
    with open(path) as f:
        doc = json.load(f)
    if "error" in doc:
        raise BadRun("%s: the benchmark failed: %s" % (path, doc["error"]))
    return doc


def rounds_of(doc):
    return "/".join(str(r["run"]) for r in doc.get("rounds", []))


def redis_rows(rundir):
    rows = []
    for name, title in REDIS_RUNS:
        doc = load(rundir, name)
        if doc is None:
            continue
        for i, lv in enumerate(doc["levels"]):
            high = lv["memory_high"]
            if high != "max":
                high = "%dM" % (high >> 20)
            rounds = doc.get("rounds", [])
            n = rounds[i]["run"] if i < len(rounds) else "?"
            where = "%s, memory.high=%s, %s rounds" % (title, high, n)
            pol, sim = pick(lv["modes"])
            always = next((m for m in lv["modes"] if m["mode"] == "always"), None)

            def cell(m):
                text = vs_each(m, "rps")
                if m is None or always is None or not always.get("pmd_bytes"):
                    return text
                return text + "; 2M bytes at the end %.1f%% of always's" % (
                    100.0 * m["pmd_bytes"] / always["pmd_bytes"])
            rows.append((where + ": rps", cell(pol), cell(sim)))
    return rows


def pagefault_rows(rundir):
    rows = []
    doc = load(rundir, "pagefault.json")
    if doc is not None:
        pol, sim = pick(doc["modes"])
        rows.append(("pagefault, %s rounds: ns per 4K page x always" % rounds_of(doc),)
                    + cells(ratio_str, "ratio_vs_always", pol, sim))
    doc = load(rundir, "pagefault_4k.json")
    if doc is not None:
        pol, _ = pick(doc["modes"])
        rows.append(("pagefault, auto answering 4K, %s rounds: ns per 4K page x never"
                     % rounds_of(doc), ratio_str(pol and pol["ratio_vs_never"]), ""))
    doc = load(rundir, "pagefault_hook.json")
    if doc is not None and doc.get("hook_cost"):
        rows.append(("pagefault hook, %s rounds: ns per call x an empty program's"
                     % rounds_of(doc), ratio_str(doc["hook_cost"]["policy_vs_floor"]), ""))
    return rows


def sparse_rows(rundir):
    doc = load(rundir, "sparse.json")
    if doc is None:
        return []
    pol, sim = pick(doc["modes"])
    return [("sparse, %s rounds: small processes' memory vs never's" % rounds_of(doc),)
            + cells(pct_str, "small_current_vs_never_pct", pol, sim)]


def workload_rows(rundir):
    rows = []
    for name in WORKLOADS:
        doc = load(rundir, name + ".json")
        if doc is None:
            continue
        pol, sim = pick(doc["modes"])
        where = "%s, %s rounds" % (name, rounds_of(doc))

        def cell(m):
            if m is None:
                return "-"
            return "%s; peak memory %s of never's" % (vs_each(m, "speed"),
                                                      pct_str(m["peak_vs_never_pct"]))
        rows.append((where + ": speed; peak memory", cell(pol), cell(sim)))
    return rows


def mixed_rows(rundir):
    doc = load(rundir, "mixed.json")
    if doc is None:
        return []
    pol, sim = pick(doc["modes"])

    def geomean(m):
        if m is None:
            return "-"
        parts = ["x %s %s" % (g["mode"], ratio_str(g["geomean"])) for g in m["vs_each_global"]]
        parts.append("beats every global setting: %s"
                     % ("yes" if m["beats_every_global"] else "no"))
        return "; ".join(parts)

    def cell(m):
        if m is None:
            return "-"
        return "%s; small processes' peak %s of never's" % (
            geomean(m), pct_str(m["workloads"]["small"]["peak_vs_never_pct"]))
    where = "mixed, %s rounds" % rounds_of(doc)
    return [(where + ": geometric mean of the workloads' throughput; small processes' peak",
             cell(pol), cell(sim))]


MIXED_WORKLOADS = ("service", "batch", "small")


def stock_table(rundir, env):
    """The anchor's table: the split against each global setting."""
    doc = load(rundir, "mixed.json")
    if doc is None:
        raise BadRun("%s: no mixed.json" % rundir)
    split = next((m for m in doc["modes"] if "split" in m), None)
    if split is None:
        raise BadRun("%s: mixed.json has no split column (not mthpctl bench mixed --stock)"
                     % rundir)
    head = ("anchor run %s (commit %s, stock kernel %s, no policy, %s rounds)"
            % (os.path.basename(os.path.normpath(rundir)), env["git_commit"][:12],
               env["kernel_key"].removeprefix("host-"), rounds_of(doc)))
    lines = ["| %s | %s | geometric mean |" % (head, " | ".join(MIXED_WORKLOADS)),
             "|---|---|---|---|---|"]
    for g in split["vs_each_global"]:
        lines.append("| %s x %s | %s | %s |"
                     % (split["mode"], g["mode"],
                        " | ".join(ratio_str(g[w]) for w in MIXED_WORKLOADS),
                        ratio_str(g["geomean"])))
    lines.append("| beats every global setting | %s | %s |"
                 % (" | ".join("yes" if split["beats_every_static"][w] else "no"
                               for w in MIXED_WORKLOADS),
                    "yes" if split["beats_every_global"] else "no"))
    return lines


def table(rundir):
    """The table's lines (no trailing newline)."""
    env_path = os.path.join(rundir, "env.json")
    if not os.path.exists(env_path):
        raise BadRun("%s: no env.json (not a run folder of make bench)" % rundir)
    with open(env_path) as f:
        env = json.load(f)
    if env.get("stock"):
        return stock_table(rundir, env)
    rows = (redis_rows(rundir) + pagefault_rows(rundir) + sparse_rows(rundir) +
            workload_rows(rundir) + mixed_rows(rundir))
    if not rows:
        raise BadRun("%s: no benchmark's JSON" % rundir)
    head = "run %s (commit %s, kernel %s)" % (os.path.basename(os.path.normpath(rundir)),
                                             env["git_commit"][:12], env["kernel_key"])
    lines = ["| %s | auto | simple |" % head, "|---|---|---|"]
    lines += ["| %s | %s | %s |" % row for row in rows]
    return lines


def readme_table(path, head):
    """The lines of the first table under '## Results' whose first line
    starts with head (None if none)."""
    with open(path) as f:
        lines = f.read().split("\n")
    if "## Results" not in lines:
        return None
    section = lines[lines.index("## Results") + 1:]
    i = 0
    while i < len(section):
        if section[i].startswith("## "):
            return None
        if section[i].startswith("|"):
            j = i
            while j < len(section) and section[j].startswith("|"):
                j += 1
            if section[i].startswith(head):
                return section[i:j]
            i = j
        else:
            i += 1
    return None


def main(argv):
    global WANTED
    check = False
    if argv and argv[0] == "--check":
        check, argv = True, argv[1:]
    if not argv or len(argv) > (2 if check else 1) or argv[0].startswith("-"):
        print("usage: scripts/bench-table.py [--check] RUNDIR [README]", file=sys.stderr)
        return 2
    try:
        WANTED = wanted_coverage()
        want = table(argv[0])
    except (BadRun, OSError, ValueError, KeyError, TypeError) as e:
        print("bench-table: %s: %s" % (argv[0], e), file=sys.stderr)
        return 2
    if not check:
        print("\n".join(want))
        return 0
    readme = argv[1] if len(argv) > 1 else os.path.join(TOP, "README.md")
    # a bench run's table and an anchor's live side by side
    have = readme_table(readme, want[0].split(" (")[0].rsplit(" ", 1)[0] + " ")
    if have == want:
        print("bench-table: %s's table is the one of %s" % (readme, argv[0]))
        return 0
    if have is None:
        print("bench-table: %s has no table under '## Results'" % readme, file=sys.stderr)
        return 1
    print("bench-table: %s's table differs from the one of %s:" % (readme, argv[0]),
          file=sys.stderr)
    for k in range(max(len(have), len(want))):
        a = have[k] if k < len(have) else "(none)"
        b = want[k] if k < len(want) else "(none)"
        if a != b:
            print("  README: %s\n  run:    %s" % (a, b), file=sys.stderr)
    print("(scripts/bench-table.py %s prints the table)" % argv[0], file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
