# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""The fields of a run folder's env.json that every run has, for
scripts/bench.sh (make bench) and scripts/bench-stock.sh (make
bench-stock): the commit it ran from, when, and the host."""
import os
import platform
import subprocess
import time


def cmd(top, *argv):
    """A command's stdout in the source tree (None if it cannot run)."""
    try:
        return subprocess.run(argv, capture_output=True, text=True, cwd=top).stdout.strip()
    except OSError:
        return None


def first(path, key):
    """The value after "KEY:" on the first line of path starting with it."""
    try:
        for line in open(path):
            if line.startswith(key):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return None


def base_env(top, kernel_key):
    """git_commit, git_dirty, kernel_key, started and host."""
    return {"git_commit": cmd(top, "git", "rev-parse", "HEAD"),
            "git_dirty": bool(cmd(top, "git", "status", "--porcelain", "--untracked-files=no")),
            "kernel_key": kernel_key,
            "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "host": {"uname": " ".join(f for f in platform.uname() if f),
                     "cpus": os.cpu_count(),
                     "cpu_model": first("/proc/cpuinfo", "model name"),
                     "mem_total_kb": int((first("/proc/meminfo", "MemTotal") or "0 kB")
                                         .split()[0])}}
