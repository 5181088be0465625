// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * mthpctl bench: the machine's state at a benchmark's start, and the same
 * state for every benchmark and every run. What ran before leaves memory
 * behind that changes the next figure: free memory split into blocks too
 * small for a 2M folio (a fault under always then falls back, and
 * kcompactd works during the run), the page cache of earlier runs, swap
 * (zram) holding what earlier pressure pushed out, khugepaged still
 * working through what it registered. bench_start_settle() measures that
 * state, settles it (khugepaged's pass run to its end, caches dropped,
 * memory compacted) and measures it again; the report prints both
 * (bench_report.c). Each run then starts from dropped caches and compacted
 * memory (bench_settle_memory()). Swap is reset by the caller that owns
 * it (scripts/bench.sh resets the VM's zram before each benchmark): a
 * swapoff on a user's host is not the benchmark's to do.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench_common.h"
#include "mthpctl.h"
#include "sysfs.h"

#define KHUGEPAGED_DIR		MTHPCTL_THP_DIR "/khugepaged"
/* khugepaged's pass at full speed: no sleep between its scans, many
 * pages per scan; restored right after */
#define KHUGEPAGED_FAST_PAGES	"65536"
/* a pass ends within this; idle when its counters hold this long */
#define KHUGEPAGED_WAIT_NS	(30 * NSEC_PER_SEC)
#define KHUGEPAGED_IDLE_NS	NSEC_PER_SEC
#define KHUGEPAGED_TICK_NS	(50 * NSEC_PER_MSEC)

static struct bench_start start;

static __u64 read_u64(const char *path)
{
	char buf[64];
	__u64 v = 0;

	if (mthpctl_read_file(path, buf, sizeof(buf)) > 0)
		v = strtoull(buf, NULL, 10);
	return v;
}

void bench_start_state_read(struct bench_start_state *s)
{
	char buf[8192];
	__u64 total = 0, free_kb = 0, v = 0;

	memset(s, 0, sizeof(*s));
	if (mthpctl_read_file("/proc/buddyinfo", buf, sizeof(buf)) > 0 &&
	    !bench_parse_buddyinfo(buf, mthpctl_pmd_order(), &v))
		s->free_pmd_blocks = v;
	if (mthpctl_read_file("/proc/meminfo", buf, sizeof(buf)) > 0) {
		if (!bench_parse_meminfo_kb(buf, "SwapTotal", &total) &&
		    !bench_parse_meminfo_kb(buf, "SwapFree", &free_kb) && total >= free_kb)
			s->swap_used = (total - free_kb) << 10;
		if (!bench_parse_meminfo_kb(buf, "Cached", &v))
			s->page_cache = v << 10;
		if (!bench_parse_meminfo_kb(buf, "MemFree", &v))
			s->mem_free = v << 10;
	}
	s->khugepaged_full_scans = read_u64(KHUGEPAGED_DIR "/full_scans");
	s->khugepaged_pages_collapsed = read_u64(KHUGEPAGED_DIR "/pages_collapsed");
}

void bench_settle_memory(void)
{
	sync();
	bench_write_file("/proc/sys/vm/drop_caches", "3");
	/* synchronous: returns when every zone has been compacted */
	bench_write_file("/proc/sys/vm/compact_memory", "1");
}

/* khugepaged's work: a full pass over what it registered, at full speed,
 * or nothing to do (its counters hold). */
static enum bench_khugepaged khugepaged_drain(void)
{
	struct timespec tick = { 0, KHUGEPAGED_TICK_NS };
	char sleep_ms[32], pages[32];
	__u64 t0 = bench_now_ns(), quiet_since = t0, scans0, scans, coll, c;
	enum bench_khugepaged ret = BENCH_KHUGEPAGED_BUSY;

	if (mthpctl_read_file(KHUGEPAGED_DIR "/scan_sleep_millisecs", sleep_ms, sizeof(sleep_ms)) <= 0 ||
	    mthpctl_read_file(KHUGEPAGED_DIR "/pages_to_scan", pages, sizeof(pages)) <= 0)
		return BENCH_KHUGEPAGED_NONE;
	sleep_ms[strcspn(sleep_ms, "\n")] = '\0';
	pages[strcspn(pages, "\n")] = '\0';
	scans0 = scans = read_u64(KHUGEPAGED_DIR "/full_scans");
	coll = read_u64(KHUGEPAGED_DIR "/pages_collapsed");
	/* saved for bench_restore() as well: a signal now still restores them */
	if (bench_set_knob(KHUGEPAGED_DIR "/pages_to_scan", KHUGEPAGED_FAST_PAGES) ||
	    bench_set_knob(KHUGEPAGED_DIR "/scan_sleep_millisecs", "0"))	/* wakes it */
		ret = BENCH_KHUGEPAGED_NONE;
	while (ret == BENCH_KHUGEPAGED_BUSY && !bench_stop &&
	       bench_now_ns() - t0 < KHUGEPAGED_WAIT_NS) {
		nanosleep(&tick, NULL);
		c = read_u64(KHUGEPAGED_DIR "/pages_collapsed");
		scans = read_u64(KHUGEPAGED_DIR "/full_scans");
		/* two passes ended: one began after we woke it */
		if (scans >= scans0 + 2)
			ret = BENCH_KHUGEPAGED_PASS;
		else if (c != coll || scans != scans0)
			quiet_since = bench_now_ns();
		else if (bench_now_ns() - quiet_since >= KHUGEPAGED_IDLE_NS)
			ret = BENCH_KHUGEPAGED_IDLE;
		coll = c;
	}
	bench_write_file(KHUGEPAGED_DIR "/scan_sleep_millisecs", sleep_ms);
	bench_write_file(KHUGEPAGED_DIR "/pages_to_scan", pages);
	return ret;
}

void bench_start_settle(const struct bench_opts *o)
{
	__u64 t0 = bench_now_ns();

	bench_progress(o, "settling the start state (khugepaged's pass, caches dropped, memory "
		       "compacted) ...");
	bench_start_state_read(&start.found);
	start.khugepaged = khugepaged_drain();
	bench_settle_memory();
	bench_start_state_read(&start.settled);
	start.settle_ns = bench_now_ns() - t0;
	start.valid = true;
}

const struct bench_start *bench_start_get(void)
{
	return start.valid ? &start : NULL;
}

const char *bench_khugepaged_name(enum bench_khugepaged k)
{
	static const char *const names[] = {
		[BENCH_KHUGEPAGED_NONE] = "not settled (no khugepaged knobs)",
		[BENCH_KHUGEPAGED_PASS] = "a full pass done",
		[BENCH_KHUGEPAGED_IDLE] = "idle",
		[BENCH_KHUGEPAGED_BUSY] = "still busy when the wait ended",
	};

	return names[k];
}
