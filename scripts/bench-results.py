#!/usr/bin/python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""RESULTS.md of a run folder: every figure of every benchmark's JSON, as
tables a reader can check against the rounds.

Usage: scripts/bench-results.py RUNDIR             print it
       scripts/bench-results.py --write RUNDIR     write RUNDIR/RESULTS.md
       scripts/bench-results.py --check RUNDIR     exit 1 if RUNDIR/RESULTS.md
                                                   is not what the JSON gives

RUNDIR is a run folder of `make bench` or `make bench-stock`, or a
published one (tests/results/RUN-ID/, tests/hardware/RUN-ID/). Per
benchmark: its configuration, its rounds and why they stopped, then per
group of modes (redis: one per memory.high level) a table of every
interval (median [lo..hi] and the interval's coverage; a ratio marked as
mthpctl marks it: n.d. when the interval holds 1.0, unranked below the
wanted coverage), the comparisons of each policy with each static setting,
and a table of the counts (faults, folio bytes by size, memory). The
figures README, the man pages and the cover letter quote are checked
against this document (tests/check-figures.py), and it against the JSON.

Exit status: 0, 1 (--check: RESULTS.md differs or is missing), 2 usage or
not a run folder.
"""
import json
import os
import sys

from bench_coverage import coverage_str, ratio_str, wanted_coverage

# the benchmarks of `make bench` (scripts/bench.sh) in its order; an
# anchor run has mixed alone
ORDER = ("redis_nobgsave", "redis_bgsave", "pagefault", "pagefault_4k", "pagefault_hook",
         "sparse", "shell", "gups", "bloat", "arenas", "compile", "memcached", "mixed",
         "redis_madvise", "scale")
# lists of every round's figures: in the JSON, not repeated here
RAW_SUFFIXES = ("_runs", "_rounds")
COMPARISONS = ("vs_each_static", "vs_each_global")
# spreads outside the modes that are ratios (marked n.d. or unranked)
RATIO_KEYS = ("policy_vs_floor", "policy_vs_floor_per_page")

WANTED = None


class BadRun(Exception):
    pass


def is_spread(v):
    return isinstance(v, dict) and "median" in v and "coverage" in v and "n" in v


def num(v):
    if v is None:
        return "-"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if v.is_integer() and abs(v) >= 100:
            return "%d" % v
        return "%.3f" % v if abs(v) < 10 else "%.1f" % v
    return str(v)


def spread_str(s, ratio):
    # a ratio as mthpctl and bench-table.py print it (three decimals, its
    # mark); any other spread with num()'s precision
    if ratio:
        return ratio_str(s, WANTED)
    if not s.get("n"):
        return "-"
    text = num(s["median"])
    if s["n"] == 1:
        return text
    return text + " [%s..%s] %s%%" % (num(s.get("lo")), num(s.get("hi")),
                                      coverage_str(s.get("coverage")))


def flatten(obj, path=""):
    """(path, value) of every leaf: spreads whole, lists of per-size objects
    keyed by their size, raw round lists and comparison lists left out."""
    if is_spread(obj):
        yield path, obj
        return
    if isinstance(obj, dict):
        for k, v in obj.items():
            if k in COMPARISONS or k.endswith(RAW_SUFFIXES) or k in ("mode", "modes"):
                continue
            yield from flatten(v, path + "." + k if path else k)
        return
    if isinstance(obj, list):
        for i, v in enumerate(obj):
            if isinstance(v, dict) and "size_kb" in v:
                rest = {k: x for k, x in v.items() if k != "size_kb"}
                yield from flatten(rest, "%s %sK" % (path, v["size_kb"]))
            elif isinstance(v, (dict, list)):
                yield from flatten(v, "%s[%d]" % (path, i))
            else:
                yield "%s[%d]" % (path, i), v
        return
    yield path, obj


def table(head, rows):
    out = ["| %s |" % " | ".join(head), "|%s" % ("---|" * len(head))]
    out += ["| %s |" % " | ".join(r) for r in rows]
    return out


def modes_section(modes, label):
    """The tables of one list of modes."""
    names = [m.get("mode", "?") for m in modes]
    leaves = [dict(flatten(m)) for m in modes]
    keys = []
    for lv in leaves:
        keys += [k for k in lv if k not in keys]
    spreads = [k for k in keys if any(is_spread(lv.get(k)) for lv in leaves)]
    counts = [k for k in keys if k not in spreads and any(
        isinstance(lv.get(k), (int, float)) and not isinstance(lv.get(k), bool) for lv in leaves)]
    out = []
    if spreads:
        out += ["", "%smedian [interval] coverage of the rounds:" % label, ""]
        out += table(["figure"] + names,
                     [[k] + [spread_str(lv[k], False) if is_spread(lv.get(k)) else "-"
                             for lv in leaves] for k in spreads])
    for m in modes:
        for comp in COMPARISONS:
            if comp not in m:
                continue
            rows = []
            for c in m[comp]:
                rows += [["%s x %s" % (m["mode"], c["mode"]), k, spread_str(v, True)]
                         for k, v in c.items() if is_spread(v)]
            out += ["", "%s%s against each static setting, per round:" % (label, m["mode"]), ""]
            out += table(["comparison", "figure", "ratio [interval] coverage"], rows)
            claims = [(k, v) for k, v in m.items() if k.startswith("beats_every")]
            for k, v in claims:
                if isinstance(v, dict):
                    v = ", ".join("%s %s" % (w, num(x)) for w, x in v.items())
                out.append("")
                out.append("%s: %s" % (k.replace("_", " "), num(v)))
    if counts:
        out += ["", "%scounts (medians of the rounds where a median):" % label, ""]
        out += table(["figure"] + names, [[k] + [num(lv.get(k)) for lv in leaves]
                                          for k in counts])
    return out


def find_mode_lists(obj, label=""):
    """(label, modes) of every "modes" list; redis: one per level."""
    if isinstance(obj, dict):
        if isinstance(obj.get("modes"), list):
            yield label, obj["modes"]
        for k, v in obj.items():
            if k == "modes":
                continue
            if isinstance(v, list):
                for x in v:
                    if isinstance(x, dict):
                        sub = label
                        if "memory_high" in x:
                            h = x["memory_high"]
                            if isinstance(h, int):
                                h = "%dM" % (h >> 20)
                            sub = "memory.high %s: " % h
                        yield from find_mode_lists(x, sub)


def benchmark_section(name, doc):
    out = ["", "## %s" % name]
    if "error" in doc:
        return out + ["", "failed: %s" % doc["error"]]
    cfg = doc.get("config", {})
    if cfg:
        out.append("")
        out.append("config: " + ", ".join("%s %s" % (k, num(v) if not isinstance(v, list) else
                                                      ",".join(num(x) for x in v))
                                           for k, v in cfg.items()))
    for r in doc.get("rounds", []):
        out.append("")
        out.append("rounds%s: %s run, stop: %s" % (
            " " + r["label"] if r.get("label") else "", r["run"], r.get("stop", "-")))
    for n in doc.get("notes", []):
        out += ["", "note: %s" % n]
    if doc.get("interrupted"):
        out += ["", "interrupted: partial figures"]
    lists = list(find_mode_lists(doc))
    # the figures outside the modes (scale's all of them, pagefault
    # --hook-cost's comparison, each benchmark's start state)
    rest = {k: v for k, v in doc.items()
            if k not in ("benchmark", "kernel", "config", "notes", "rounds", "interrupted",
                         "modes", "levels")}
    for label, modes in lists:
        out += modes_section(modes, label)
    rows = [[k, spread_str(v, k.endswith(RATIO_KEYS)) if is_spread(v) else num(v)]
            for k, v in flatten(rest)]
    if rows:
        out += ["", "other figures:", ""] + table(["figure", "value"], rows)
    return out


def render(rundir):
    env_path = os.path.join(rundir, "env.json")
    if not os.path.exists(env_path):
        raise BadRun("no env.json (not a run folder of make bench or make bench-stock)")
    with open(env_path) as f:
        env = json.load(f)
    run_id = os.path.basename(os.path.normpath(rundir))
    out = ["# Run %s" % run_id, "",
           "Generated by scripts/bench-results.py from the JSON beside it; do not edit.",
           "Intervals: median [lo..hi] of the rounds and the interval's coverage (the",
           "sign-test order statistics; mthpctl-bench(8), STATISTICS); ratios are taken per",
           "round, n.d.: the interval holds 1.0, unranked: coverage below %s%%."
           % coverage_str(WANTED), "",
           "commit %s%s, kernel %s" % (env.get("git_commit", "?"),
                                        " (dirty)" if env.get("git_dirty") else "",
                                        env.get("kernel_key", "?")),
           "host: %s, %s CPUs (%s)" % (env["host"].get("uname"), env["host"].get("cpus"),
                                      env["host"].get("cpu_model"))]
    if "vm" in env:
        vm = env["vm"]
        out.append("VM: %s vCPUs, %s, zram swap %s, %s" % (vm["cpus"], vm["memory"],
                                                         vm["zram_swap"], vm["accel"]))
    if "beside" in env:
        out.append("beside the run: %s qemu processes, load %s" % (
            env["beside"]["qemu_processes"], " ".join(env["beside"]["loadavg"])))
    found = 0
    for name in ORDER:
        path = os.path.join(rundir, name + ".json")
        if not os.path.exists(path):
            continue
        with open(path) as f:
            out += benchmark_section(name, json.load(f))
        found += 1
    if not found:
        raise BadRun("no benchmark's JSON")
    return out


def main(argv):
    global WANTED
    mode = None
    if argv and argv[0] in ("--write", "--check"):
        mode, argv = argv[0], argv[1:]
    if len(argv) != 1 or argv[0].startswith("-"):
        print("usage: scripts/bench-results.py [--write|--check] RUNDIR", file=sys.stderr)
        return 2
    try:
        WANTED = wanted_coverage()
        text = "\n".join(render(argv[0])) + "\n"
    except (BadRun, OSError, ValueError, KeyError, TypeError) as e:
        print("bench-results: %s: %s" % (argv[0], e), file=sys.stderr)
        return 2
    path = os.path.join(argv[0], "RESULTS.md")
    if mode is None:
        sys.stdout.write(text)
    elif mode == "--write":
        with open(path, "w") as f:
            f.write(text)
    else:
        try:
            with open(path) as f:
                have = f.read()
        except OSError:
            have = None
        if have != text:
            print("bench-results: %s is not what the JSON gives (scripts/bench-results.py "
                  "--write %s)" % (path, argv[0]), file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
