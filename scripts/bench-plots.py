#!/usr/bin/python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# PNG plots of a `make bench` result directory, beside its tables.
#
# Usage: scripts/bench-plots.py [-o OUTDIR] DIR
#        scripts/bench-plots.py .output/bench/latest
#        scripts/bench-plots.py .output/demo          (the timeline only)
#
# Reads what DIR holds (field names as their writers write them) and draws
# every plot whose input is there, into OUTDIR (default DIR):
#   bench-redis.png     redis_nobgsave.json, redis_bgsave.json (mthpctl bench
#                       redis --json-out, src/bench/bench_redis_report.c): median
#                       rps and p99 per mode and memory.high level, error bars
#                       from the interval of the median (spread.*.lo/hi; runs
#                       before the coverage was reported: ci95_lo/hi),
#                       each round's rps (rps_runs) as a dot
#   bench-folios.png    the same files and sparse.json (src/bench/bench_sparse.c):
#                       the cgroup's anonymous memory by folio size at the end
#                       of a run (folio_bytes, median of the rounds), stacked
#   demo-timeline.png   timeline.jsonl and probes.jsonl (scripts/demo.sh, run
#                       by scripts/bench.sh too): memory.high, the sizes the
#                       policy allows and why, its stall and usage samples,
#                       and the share of large folios each probe got
#
# Exit status:
#   0  every plot whose input DIR holds was written
#   1  usage: bad option, DIR is not a directory
#   2  DIR holds none of the inputs above
#   3  an input could not be read or lacks a field a plot needs, or a plot
#      failed to render (the message names it; the other plots are written)
#   4  matplotlib is missing (Debian: python3-matplotlib, which
#      scripts/install-deps.sh installs)
#
# Debian's python3-matplotlib lives in /usr/bin/python3's path, hence that
# interpreter rather than whichever python3 comes first in PATH.
import argparse
import json
import os
import sys

EXIT_USAGE, EXIT_NO_INPUT, EXIT_BAD_INPUT, EXIT_NO_MATPLOTLIB = 1, 2, 3, 4

REDIS_FILES = (("redis_nobgsave.json", "noBGSAVE"), ("redis_bgsave.json", "BGSAVE"))
SPARSE_FILE = "sparse.json"
TIMELINE_FILE = "timeline.jsonl"
PROBES_FILE = "probes.jsonl"


class BadInput(Exception):
    """An input file that cannot be read or lacks a needed field."""


def size_label(kb):
    """4 -> 4K, 2048 -> 2M (folio sizes are powers of two in KiB)."""
    return "%dM" % (kb // 1024) if kb >= 1024 else "%dK" % kb


def high_label(high):
    """memory_high is "max" or a byte count (bench_redis_report.c)."""
    if high == "max" or high is None:
        return "max"
    return size_label(int(high) // 1024)


def load_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        raise BadInput("%s: %s" % (path, e))


def load_jsonl(path):
    rows = []
    try:
        with open(path) as f:
            for n, line in enumerate(f, 1):
                if line.strip():
                    rows.append(json.loads(line))
    except ValueError as e:
        raise BadInput("%s:%d: %s" % (path, n, e))
    except OSError as e:
        raise BadInput("%s: %s" % (path, e))
    return rows


def field(obj, path, where):
    """obj["a"]["b"]... for path "a.b", BadInput naming WHERE if absent."""
    for key in path.split("."):
        if not isinstance(obj, dict) or key not in obj:
            raise BadInput("%s: no field %s" % (where, path))
        obj = obj[key]
    return obj


def mode_color(mode, caps):
    """One colour per mode, the same in every panel: caps in shades of one
    hue from the smallest to the largest cap."""
    fixed = {"always": "#d62728", "never": "#7f7f7f", "madvise": "#bcbd22"}
    if mode in fixed:
        return fixed[mode]
    # a policy on either host: a built-in one green, the simple baseline orange,
    # a policy of the user's own (--policy "--object FILE") purple
    policy = mode.split("+", 1)[1] if "+" in mode else ""
    if policy == "simple":
        return "#ff7f0e"
    if policy and not policy.startswith("-"):
        return "#2ca02c"
    if mode in caps:
        shades = ["#c6dbef", "#9ecae1", "#6baed6", "#4292c6", "#2171b5",
                  "#08519c", "#08306b"]
        i = caps.index(mode)
        return shades[min(len(shades) - 1, i * len(shades) // max(1, len(caps)))]
    return "#9467bd"


# --- inputs --------------------------------------------------------------

def read_redis(directory):
    """[(title, [level]), ...] of the redis files present, each level
    {"high", "modes": [mode dict as written]}."""
    runs = []
    for name, title in REDIS_FILES:
        path = os.path.join(directory, name)
        if not os.path.exists(path):
            continue
        doc = load_json(path)
        if "error" in doc:
            raise BadInput("%s: the run failed: %s" % (path, doc["error"]))
        levels = []
        for lv in field(doc, "levels", path):
            modes = field(lv, "modes", path)
            for m in modes:
                for key in ("mode", "rps", "p99_ms", "spread.rps", "spread.p99_ms",
                            "folio_bytes"):
                    field(m, key, path)
            levels.append({"high": high_label(field(lv, "memory_high", path)),
                           "modes": modes})
        if doc.get("interrupted"):
            title += " (interrupted)"
        runs.append((title, levels))
    return runs


def read_sparse(directory):
    path = os.path.join(directory, SPARSE_FILE)
    if not os.path.exists(path):
        return None
    doc = load_json(path)
    modes = field(doc, "modes", path)
    for m in modes:
        field(m, "mode", path)
        field(m, "folio_bytes", path)
    return modes


def read_timeline(directory):
    """The demo's samples that show the policy's state, each with "policy":
    its status' .policies[0], and its probes."""
    path = os.path.join(directory, TIMELINE_FILE)
    if not os.path.exists(path):
        return None
    samples = []
    for r in load_jsonl(path):
        pols = (r.get("status") or {}).get("policies") or []
        if pols and pols[0].get("sample"):
            r["policy"] = pols[0]
            samples.append(r)
    if len(samples) < 2:
        raise BadInput("%s: %d samples with a policy state, need 2" % (path, len(samples)))
    for r in samples:
        for key in ("t_ms", "phase", "phase_t_ms", "memory_high", "policy.allowed_sizes_kb",
                    "policy.restriction", "policy.sample.stall_per_window_ns",
                    "policy.sample.usage_bytes"):
            field(r, key, path)
    probes = []
    ppath = os.path.join(directory, PROBES_FILE)
    if os.path.exists(ppath):
        probes = [p for p in load_jsonl(ppath) if p.get("large_pct") is not None]
    return samples, probes


# --- plots ---------------------------------------------------------------

def spread_err(median, spread):
    """Error bar lengths below and above MEDIAN from a spread object; the
    interval of the median, or min/max where the interval is null."""
    lo = spread.get("lo", spread.get("ci95_lo", spread.get("min")))
    hi = spread.get("hi", spread.get("ci95_hi", spread.get("max")))
    if median is None or lo is None or hi is None:
        return 0.0, 0.0
    return max(0.0, median - lo), max(0.0, hi - median)


def all_caps(runs):
    caps = []
    for _, levels in runs:
        for lv in levels:
            for m in lv["modes"]:
                if m.get("cap_size") is not None:
                    caps.append((m["cap_size"], m["mode"]))
    return [mode for _, mode in sorted(set(caps))]


def plot_redis(plt, runs, out):
    caps = all_caps(runs)
    metrics = (("rps", "spread.rps", "requests/s (median)", False),
               ("p99_ms", "spread.p99_ms", "p99 latency, ms (median, log)", True))
    fig, axes = plt.subplots(len(metrics), len(runs), figsize=(6.5 * len(runs), 8),
                             squeeze=False)
    legend = {}		# mode -> legend handle, in the order the modes first appear
    for col, (title, levels) in enumerate(runs):
        for row, (key, spread_key, ylabel, log) in enumerate(metrics):
            ax = axes[row][col]
            for li, lv in enumerate(levels):
                modes = lv["modes"]
                width = 0.8 / max(1, len(modes))
                for mi, m in enumerate(modes):
                    x = li + (mi - (len(modes) - 1) / 2) * width
                    val = m[key]
                    if val is None:
                        continue
                    lo, hi = spread_err(val, field(m, spread_key, title))
                    if m["mode"] not in legend:
                        legend[m["mode"]] = plt.Rectangle(
                            (0, 0), 1, 1, color=mode_color(m["mode"], caps))
                    ax.bar(x, val, width * 0.92, color=mode_color(m["mode"], caps))
                    ax.errorbar(x, val, yerr=[[lo], [hi]], fmt="none", ecolor="black",
                                elinewidth=0.9, capsize=2.5)
                    if key == "rps":
                        pts = [r for r in m.get("rps_runs") or [] if r is not None]
                        ax.plot([x] * len(pts), pts, "o", markerfacecolor="white",
                                markeredgecolor="black", markersize=3.5, markeredgewidth=0.8)
                        text = "%.1fk" % (val / 1000)
                    else:
                        text = "%.0f" % val if val >= 100 else "%.1f" % val
                    ax.annotate(text, (x, val + hi), textcoords="offset points",
                                xytext=(0, 5), ha="center", va="bottom", fontsize=6.5,
                                rotation=90)
            ax.set_xticks(range(len(levels)))
            ax.set_xticklabels(["memory.high=%s" % lv["high"] for lv in levels])
            ax.set_ylabel(ylabel)
            if log:
                ax.set_yscale("log")
                ax.margins(y=0.25)
            else:
                ax.set_ylim(0, ax.get_ylim()[1] * 1.15)
            ax.grid(axis="y", alpha=0.3)
            if row == 0:
                ax.set_title("redis SET, %s" % title)
    fig.legend(list(legend.values()), list(legend.keys()), loc="lower center",
               ncol=len(legend), fontsize=8)
    fig.suptitle("rps and p99 per mode; bars: median of the rounds, whiskers: the "
                 "interval of the median\n(3 rounds: [min..max], 75% coverage), dots: each "
                 "round",
                 fontsize=9)
    fig.tight_layout(rect=(0, 0.04, 1, 1))
    fig.savefig(out, dpi=110)
    plt.close(fig)


def plot_folios(plt, runs, sparse, out):
    panels = []		# (title, [(mode, {size_kb: bytes})])
    for title, levels in runs:
        for lv in levels:
            panels.append(("redis %s, memory.high=%s" % (title, lv["high"]),
                           [(m["mode"], m["folio_bytes"]) for m in lv["modes"]]))
    if sparse:
        panels.append(("sparse: the small processes", [(m["mode"], m["folio_bytes"])
                                                       for m in sparse]))
    sizes = sorted({f["size_kb"] for _, modes in panels for _, fb in modes for f in fb
                    if f.get("bytes")})
    # base pages in grey, the large sizes from dark (small) to bright (PMD)
    large = [kb for kb in sizes if kb > 4]
    cmap = plt.get_cmap("viridis")
    color = {kb: cmap(i / max(1, len(large) - 1)) for i, kb in enumerate(large)}
    color[4] = "#bbbbbb"
    ncols = min(3, len(panels))
    nrows = (len(panels) + ncols - 1) // ncols
    fig, axes = plt.subplots(nrows, ncols, figsize=(5 * ncols, 4 * nrows), squeeze=False)
    for i, (title, modes) in enumerate(panels):
        ax = axes[i // ncols][i % ncols]
        for x, (mode, fb) in enumerate(modes):
            bottom = 0.0
            by_size = {f["size_kb"]: (f.get("bytes") or 0) / 1048576.0 for f in fb}
            for kb in sizes:
                mib = by_size.get(kb, 0.0)
                if mib > 0:
                    ax.bar(x, mib, 0.7, bottom=bottom, color=color[kb])
                    bottom += mib
            ax.annotate("%.0f" % bottom, (x, bottom), textcoords="offset points",
                        xytext=(0, 2), ha="center", fontsize=7)
        ax.set_xticks(range(len(modes)))
        ax.set_xticklabels([m for m, _ in modes], rotation=30, ha="right", fontsize=8)
        ax.set_ylabel("MiB in folios of each size")
        ax.set_ylim(0, ax.get_ylim()[1] * 1.1)
        ax.set_title(title, fontsize=9)
        ax.grid(axis="y", alpha=0.3)
    for j in range(len(panels), nrows * ncols):
        axes[j // ncols][j % ncols].axis("off")
    handles = [plt.Rectangle((0, 0), 1, 1, color=color[kb]) for kb in reversed(sizes)]
    fig.legend(handles, [size_label(kb) for kb in reversed(sizes)], title="folio size",
               loc="center right", fontsize=8)
    fig.suptitle("anonymous memory of the benchmark's cgroup by folio size at the end of "
                 "a run (median of the rounds, /proc/kpageflags)", fontsize=9)
    fig.tight_layout(rect=(0, 0, 0.92, 1))
    fig.savefig(out, dpi=110)
    plt.close(fig)


RESTRICTION_COLORS = {"none": "#2ca02c", "pressure": "#d62728", "low-usage": "#ff7f0e",
                      "no-sample": "#7f7f7f", "cap": "#1f77b4", "sparse": "#9467bd"}


def pressure_spans(samples, phase_ms):
    """[(start_ms, end_ms, memory.high)] while memory.high was below max. A
    sample shows the file as read after its t_ms, so a change happened
    between two samples; when a demo step began there (its phase_t_ms is
    taken just before the write), that is when."""
    def edge(i):
        lo = samples[i - 1]["t_ms"] if i > 0 else float("-inf")
        hi = samples[i + 1]["t_ms"] if i + 1 < len(samples) else float("inf")
        near = [p for p in phase_ms if lo < p < hi]
        return min(near, key=lambda p: abs(p - samples[i]["t_ms"])) if near \
            else samples[i]["t_ms"]
    spans, start, limit = [], None, None
    for i, s in enumerate(samples):
        on = s["memory_high"] not in ("max", "")
        if on and start is None:
            start, limit = edge(i), s["memory_high"]
        elif not on and start is not None:
            spans.append((start, edge(i), limit))
            start = None
    if start is not None:
        spans.append((start, samples[-1]["t_ms"], limit))
    return spans


def plot_timeline(plt, timeline, out):
    samples, probes = timeline
    # the demo's steps, at the exact time each began; time 0 is the first
    phases = sorted({(s["phase_t_ms"], s["phase"]) for s in samples})
    t0 = min(samples[0]["t_ms"], phases[0][0])
    t = [(s["t_ms"] - t0) / 1000.0 for s in samples]
    # a sample holds until the next one; the last for the median interval
    steps = sorted(b - a for a, b in zip(t, t[1:]))
    ends = t[1:] + [t[-1] + steps[len(steps) // 2]]
    pol = [s["policy"] for s in samples]
    nrows = 4 if probes else 3
    fig, axes = plt.subplots(nrows, 1, figsize=(11, 2.3 * nrows + 1), sharex=True,
                             gridspec_kw={"height_ratios": [2.2] + [1] * (nrows - 1)})
    # memory.high below max: the demo's pressure, shaded in every panel
    spans = [((a - t0) / 1000.0, (b - t0) / 1000.0, limit)
             for a, b, limit in pressure_spans(samples, [ms for ms, _ in phases])]

    ax = axes[0]
    sizes = sorted({kb for p in pol for kb in p["allowed_sizes_kb"]})
    ypos = {kb: i for i, kb in enumerate(sizes)}
    for p, a, b in zip(pol, t, ends):
        c = RESTRICTION_COLORS.get(p["restriction"], "#17becf")
        for kb in p["allowed_sizes_kb"]:
            ax.broken_barh([(a, b - a)], (ypos[kb] - 0.35, 0.7), color=c, linewidth=0)
    ax.set_yticks(range(len(sizes)))
    ax.set_yticklabels([size_label(kb) for kb in sizes])
    ax.set_ylim(-0.7, len(sizes) - 0.3)
    ax.set_ylabel("sizes the policy allows")
    seen = sorted({p["restriction"] for p in pol})
    ax.legend([plt.Rectangle((0, 0), 1, 1, color=RESTRICTION_COLORS.get(r, "#17becf"))
               for r in seen] + [plt.Rectangle((0, 0), 1, 1, color="#d62728", alpha=0.12)],
              ["restriction: %s" % r for r in seen] + ["memory.high below max"],
              fontsize=7, loc="lower left", ncol=len(seen) + 1)
    ymax = ax.get_ylim()[1]
    for ms, name in phases:
        x = (ms - t0) / 1000.0
        for a in axes:
            a.axvline(x, color="black", linestyle=":", linewidth=0.8)
        ax.annotate(name, (x, ymax), xytext=(2, -2), textcoords="offset points",
                    fontsize=7, va="top", rotation=0)

    ax = axes[1]
    stall = [p["sample"]["stall_per_window_ns"] / 1e6 for p in pol]
    ax.step(t, stall, where="post", color="#d62728", label="stall per window (policy's sample)")
    thr = [(p.get("params") or {}).get("threshold_ns") for p in pol]
    if thr[0]:
        ax.axhline(thr[0] / 1e6, color="black", linestyle="--", linewidth=0.8,
                   label="threshold %.0f ms" % (thr[0] / 1e6))
    ax.set_ylabel("memory stall, ms")
    ax.legend(fontsize=7, loc="upper right")

    ax = axes[2]
    usage = [p["sample"]["usage_bytes"] / 1048576.0 for p in pol]
    ax.step(t, usage, where="post", color="#1f77b4", label="anon+shmem (policy's sample)")
    live = [((p.get("live") or {}).get("anon_shmem_bytes"), x) for p, x in zip(pol, t)]
    live = [(v / 1048576.0, x) for v, x in live if v is not None]
    if live:
        ax.plot([x for _, x in live], [v for v, _ in live], ".", color="#1f77b4",
                markersize=3, label="anon+shmem (memory.stat, at the status call)")
    for a, b, limit in spans:
        try:
            mib = int(limit) / 1048576.0
        except ValueError:
            continue
        ax.hlines(mib, a, b, color="black", linestyle="--", linewidth=0.8)
        ax.annotate("memory.high", (a, mib), xytext=(2, 2), textcoords="offset points",
                    fontsize=7)
    ax.set_ylabel("usage, MiB")
    ax.set_ylim(bottom=0)
    ax.legend(fontsize=7, loc="upper right")

    if probes:
        ax = axes[3]
        for cg in sorted({p["cgroup"] for p in probes}):
            pts = [((p["t_ms"] - t0) / 1000.0, p["large_pct"]) for p in probes
                   if p["cgroup"] == cg]
            ax.plot([x for x, _ in pts], [y for _, y in pts], "o", markersize=4,
                    label="8 MiB probe in %s" % os.path.basename(cg))
        ax.set_ylabel("% in large folios")
        ax.set_ylim(-5, 105)
        ax.legend(fontsize=7, loc="center right")

    for a in axes:
        for s0, s1, _ in spans:
            a.axvspan(s0, s1, color="#d62728", alpha=0.12, linewidth=0, zorder=0)
        a.grid(alpha=0.3)
    axes[-1].set_xlabel("seconds since attach (one mthpctl -j status --cgroup per sample)")
    fig.suptitle("the demo's auto policy over time: pressure on and off against the sizes "
                 "it allows", fontsize=10)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)


class Parser(argparse.ArgumentParser):
    def error(self, message):
        # argparse would exit 2, which means "no input" here
        self.print_usage(sys.stderr)
        print("bench-plots: %s" % message, file=sys.stderr)
        sys.exit(EXIT_USAGE)


def main():
    ap = Parser(
        description="PNG plots of a bench result directory (see the header of this script)")
    ap.add_argument("dir", metavar="DIR", help="result directory (.output/bench/latest)")
    ap.add_argument("-o", "--out", metavar="OUTDIR", help="where the PNGs go (default: DIR)")
    args = ap.parse_args()
    if not os.path.isdir(args.dir):
        print("bench-plots: %s is not a directory: give a result directory such as "
              ".output/bench/latest" % args.dir, file=sys.stderr)
        return EXIT_USAGE
    out = args.out or args.dir

    status = 0
    jobs = []		# (PNG name, function drawing it into a path)
    try:
        runs = read_redis(args.dir)
        sparse = read_sparse(args.dir)
        if runs:
            jobs.append(("bench-redis.png", lambda plt, o: plot_redis(plt, runs, o)))
        if runs or sparse:
            jobs.append(("bench-folios.png", lambda plt, o: plot_folios(plt, runs, sparse, o)))
    except BadInput as e:
        print("bench-plots: %s" % e, file=sys.stderr)
        status = EXIT_BAD_INPUT
    try:
        timeline = read_timeline(args.dir)
        if timeline:
            jobs.append(("demo-timeline.png", lambda plt, o: plot_timeline(plt, timeline, o)))
    except BadInput as e:
        print("bench-plots: %s" % e, file=sys.stderr)
        status = EXIT_BAD_INPUT
    if not jobs:
        if status:
            return status
        print("bench-plots: %s holds none of %s: run make bench (or scripts/demo.sh)"
              % (args.dir, ", ".join([f for f, _ in REDIS_FILES] +
                                     [SPARSE_FILE, TIMELINE_FILE])), file=sys.stderr)
        return EXIT_NO_INPUT

    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as e:
        print("bench-plots: %s: install python3-matplotlib (scripts/install-deps.sh)" % e,
              file=sys.stderr)
        return EXIT_NO_MATPLOTLIB
    os.makedirs(out, exist_ok=True)
    for name, draw in jobs:
        path = os.path.join(out, name)
        try:
            draw(plt, path + ".tmp.png")
            os.replace(path + ".tmp.png", path)
            print("bench-plots: wrote %s" % path, file=sys.stderr)
        except Exception as e:		# noqa: a plot's bug must not stop the others
            plt.close("all")
            if os.path.exists(path + ".tmp.png"):
                os.unlink(path + ".tmp.png")
            print("bench-plots: %s: %s: %s" % (name, type(e).__name__, e), file=sys.stderr)
            status = EXIT_BAD_INPUT
    return status


if __name__ == "__main__":
    sys.exit(main())
