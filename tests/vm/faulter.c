// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * faulter: join a cgroup, optionally keep an mlocked ballast of anonymous
 * memory (so the cgroup's anon usage stays above the auto policy's minimum
 * even under reclaim), then probe: map SIZE MiB of 2 MiB-aligned anonymous
 * memory, write one byte per 4 KiB page, read the folio order of every page
 * from /proc/self/pagemap + /proc/kpageflags, print one line, unmap. Run as
 * root (kpageflags) inside the VM.
 *
 *   faulter [-c CGROUP] [-b BALLAST_MIB] [-s SIZE_MIB] [-n COUNT]
 *           [-i INTERVAL_MS] [-d DURATION_MS] [-H] [-P] [-r] [-t STRIDE_KIB]
 *
 *   -s SIZE_MIB    1 or a multiple of 2 (1: no whole 2 MiB chunk)
 *   -n COUNT       probes (default 1; 0 = until -d expires or killed)
 *   -d DURATION_MS stop probing after this long
 *   -H             after probing, stay alive (in the cgroup) until killed
 *   -P             prctl(PR_SET_THP_DISABLE) first, as systemd's
 *                  MemoryTHP=disable does at exec
 *   -r             write the pages in random order (each once), as a hash
 *                  table or a GUPS-style array is filled
 *   -t STRIDE_KIB  write one page per STRIDE_KIB only (a sparse toucher)
 *
 * Output, one line per probe (times are CLOCK_REALTIME in ms, comparable
 * with `date +%s%3N`):
 *   probe=N start_ms=T end_ms=T pages=P absent=A max_order=M large_pct=L
 *   o0=.. o1=.. ... o9=..
 *   first_small_ms=T first_large_ms=T
 * where oK counts 4 KiB pages that sit in folios of order K, large_pct is
 * the share of present pages in folios of order >= 1 and max_order is the
 * largest order seen (0 when all are 4 KiB). first_small_ms is when the
 * first 2 MiB chunk that got only 4 KiB pages was faulted, first_large_ms
 * when the first chunk with a larger folio was (0: none): a probe can take
 * seconds under memory.high throttling, these say when the decision
 * changed. "ready" is printed once the
 * ballast is in place; errors go to stderr with a non-zero exit.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "../shuffle.h"

#define PAGE 4096UL
#define SZ_2M (2UL << 20)
#define NR_ORDERS 10		/* 4K .. 2M */
#define KPF_COMPOUND_TAIL 16
#define PM_PRESENT (1ULL << 63)
#define PM_PFN_MASK ((1ULL << 55) - 1)

static int pagemap_fd = -1, kpageflags_fd = -1;

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

static void die(const char *what)
{
	fprintf(stderr, "faulter: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void join_cgroup(const char *cg)
{
	char path[4096], pid[32];
	int fd, n;

	snprintf(path, sizeof(path), "%s/cgroup.procs", cg);
	fd = open(path, O_WRONLY);
	if (fd < 0)
		die(path);
	n = snprintf(pid, sizeof(pid), "%d\n", getpid());
	if (write(fd, pid, n) != n)
		die(path);
	close(fd);
}

static char *map_aligned(size_t len)
{
	char *p = mmap(NULL, len + SZ_2M, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uintptr_t a, end;

	if (p == MAP_FAILED)
		die("mmap");
	a = ((uintptr_t)p + SZ_2M - 1) & ~(SZ_2M - 1);
	/* give back the unaligned head and tail */
	if (a > (uintptr_t)p)
		munmap(p, a - (uintptr_t)p);
	end = (uintptr_t)p + len + SZ_2M;
	if (end > a + len)
		munmap((char *)(a + len), end - (a + len));
	return (char *)a;
}

/*
 * Folio order histogram of [buf, buf + len): a folio is a head page followed
 * by tail pages; a page that is not present (reclaimed meanwhile) ends the
 * current folio and is counted as absent.
 */
static void histogram(const char *buf, size_t len, long *pages, long *absent,
		      int *chunk_max)
{
	size_t i, n = len / PAGE;
	long run = 0;
	int o;

	for (i = 0; i < len / SZ_2M; i++)
		chunk_max[i] = 0;

	memset(pages, 0, sizeof(long) * NR_ORDERS);
	*absent = 0;
	for (i = 0; i <= n; i++) {
		uint64_t ent = 0, flags = 0;
		int boundary = 1, present = 0;

		if (i < n) {
			if (pread(pagemap_fd, &ent, 8, ((uintptr_t)buf / PAGE + i) * 8) != 8)
				die("pagemap");
			present = !!(ent & PM_PRESENT);
			if (present) {
				if (pread(kpageflags_fd, &flags, 8, (ent & PM_PFN_MASK) * 8) != 8)
					die("kpageflags");
				boundary = !(flags & (1ULL << KPF_COMPOUND_TAIL));
			}
		}
		if (boundary && run) {
			for (o = 0; o < NR_ORDERS - 1 && (1L << o) < run; o++)
				;
			pages[o] += run;
			if (o > chunk_max[(i - 1) * PAGE / SZ_2M])
				chunk_max[(i - 1) * PAGE / SZ_2M] = o;
			run = 0;
		}
		if (i < n) {
			if (present)
				run++;
			else
				(*absent)++;
		}
	}
}

static int random_order;
static size_t stride_pages = 1;

/* Page I of the fill: in order, or the I-th of a random permutation of
 * the N pages (a fixed seed: each probe fills the same way). */
static size_t *fill_order(size_t n)
{
	size_t i, *a = malloc(n * sizeof(*a));

	if (!a)
		die("malloc");
	if (random_order)
		test_shuffle(a, n, 0x9e3779b97f4a7c15ULL);
	else
		for (i = 0; i < n; i++)
			a[i] = i;
	return a;
}

static void probe(int nr, size_t len)
{
	long pages[NR_ORDERS], absent, present = 0, large = 0;
	long long start, end, first_small = 0, first_large = 0;
	size_t i, nchunks = len / SZ_2M;
	long long chunk_ms[nchunks ? nchunks : 1];
	int chunk_max[nchunks ? nchunks : 1];
	size_t *order = fill_order(len / PAGE);
	int o, max_order = 0;
	char *buf;

	memset(chunk_ms, 0, sizeof(chunk_ms));	/* 0: not touched yet */
	start = now_ms();
	buf = map_aligned(len);
	for (i = 0; i < len / PAGE; i++) {
		size_t off = order[i] * PAGE;

		if (order[i] % stride_pages)
			continue;
		if (nchunks && !chunk_ms[off / SZ_2M])
			chunk_ms[off / SZ_2M] = now_ms();
		buf[off] = 1;
	}
	free(order);
	histogram(buf, len, pages, &absent, chunk_max);
	for (i = 0; i < nchunks; i++) {
		if (!chunk_max[i] && !first_small)
			first_small = chunk_ms[i];
		if (chunk_max[i] && !first_large)
			first_large = chunk_ms[i];
	}
	end = now_ms();
	munmap(buf, len);
	for (o = 0; o < NR_ORDERS; o++) {
		present += pages[o];
		if (o)
			large += pages[o];
		if (pages[o])
			max_order = o;
	}
	printf("probe=%d start_ms=%lld end_ms=%lld pages=%ld absent=%ld max_order=%d large_pct=%ld",
	       nr, start, end, present, absent, max_order, present ? large * 100 / present : 0);
	for (o = 0; o < NR_ORDERS; o++)
		printf(" o%d=%ld", o, pages[o]);
	printf(" first_small_ms=%lld first_large_ms=%lld\n", first_small, first_large);
}

int main(int argc, char **argv)
{
	const char *cgroup = NULL;
	long ballast = 0, size = 4, count = 1, interval = 0, duration = 0;
	int hold = 0, no_thp = 0, opt, nr;
	long long deadline = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	while ((opt = getopt(argc, argv, "c:b:s:n:i:d:HPrt:")) != -1) {
		switch (opt) {
		case 'c': cgroup = optarg; break;
		case 'b': ballast = atol(optarg); break;
		case 's': size = atol(optarg); break;
		case 'n': count = atol(optarg); break;
		case 'i': interval = atol(optarg); break;
		case 'd': duration = atol(optarg); break;
		case 'H': hold = 1; break;
		case 'P': no_thp = 1; break;
		case 'r': random_order = 1; break;
		case 't': stride_pages = atol(optarg) * 1024 / PAGE; break;
		default:
			fprintf(stderr, "usage: faulter [-c CGROUP] [-b BALLAST_MIB] [-s SIZE_MIB] "
				"[-n COUNT] [-i INTERVAL_MS] [-d DURATION_MS] [-H] [-P] [-r] [-t STRIDE_KIB]\n");
			return 2;
		}
	}
	if (size <= 0 || (size % 2 && size != 1) || ballast < 0 || !stride_pages || count < 0 || (!count && !duration)) {
		fprintf(stderr, "faulter: bad arguments\n");
		return 2;
	}
	pagemap_fd = open("/proc/self/pagemap", O_RDONLY);
	kpageflags_fd = open("/proc/kpageflags", O_RDONLY);
	if (pagemap_fd < 0 || kpageflags_fd < 0)
		die("open pagemap/kpageflags (run as root)");
	if (no_thp && prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0))
		die("prctl(PR_SET_THP_DISABLE)");
	if (cgroup)
		join_cgroup(cgroup);
	if (ballast) {
		size_t blen = (size_t)ballast << 20, i;
		char *b = map_aligned(blen);

		for (i = 0; i < blen; i += PAGE)
			b[i] = 1;
		if (mlock(b, blen))
			die("mlock ballast");
	}
	printf("ready pid=%d\n", getpid());
	if (duration)
		deadline = now_ms() + duration;
	for (nr = 0; !count || nr < count; nr++) {
		if (deadline && now_ms() >= deadline)
			break;
		if (nr && interval)
			usleep(interval * 1000);
		probe(nr, (size_t)size << 20);
	}
	while (hold)
		pause();
	return 0;
}
