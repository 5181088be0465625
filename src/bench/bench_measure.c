// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * mthpctl bench: what a run measures outside the benchmark itself. The
 * per-size mTHP counters, a cgroup's events, PSI, peak and memory.stat
 * (the parsing is in bench_calc.c, unit-tested), and the anonymous folios
 * of a cgroup's processes by size from their pagemap and /proc/kpageflags.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_common.h"
#include "mthpctl.h"

const char *const bench_cnt_names[BENCH_NR_CNT] = {
	"anon_fault_alloc", "anon_fault_fallback", "swpout",
};

void bench_counters_read(struct bench_counters *c)
{
	struct mthpctl_hp_size *hp;
	size_t j;
	int n, i, k;

	memset(c, 0, sizeof(*c));
	n = mthpctl_scan_hugepages(MTHPCTL_THP_DIR, &hp);
	for (i = 0; i < n && c->nr < BENCH_MAX_SIZES; i++) {
		c->size_kb[c->nr] = hp[i].size_kb;
		for (k = 0; k < BENCH_NR_CNT; k++)
			for (j = 0; j < hp[i].nr_stats; j++)
				if (!strcmp(hp[i].stats[j].name, bench_cnt_names[k]))
					c->v[c->nr][k] = hp[i].stats[j].value;
		c->nr++;
	}
	if (n > 0)
		free(hp);
}

void bench_counters_delta(const struct bench_counters *a, const struct bench_counters *b,
			  struct bench_counters *d)
{
	int i, j, k;

	memset(d, 0, sizeof(*d));
	for (i = 0; i < b->nr; i++) {
		d->size_kb[i] = b->size_kb[i];
		for (j = 0; j < a->nr; j++)
			if (a->size_kb[j] == b->size_kb[i])
				break;
		for (k = 0; k < BENCH_NR_CNT; k++)
			d->v[i][k] = b->v[i][k] - (j < a->nr ? a->v[j][k] : 0);
	}
	d->nr = b->nr;
}

static __u64 read_u64_file(const char *cg, const char *file)
{
	char path[600], buf[64];

	snprintf(path, sizeof(path), "%s/%s", cg, file);
	if (mthpctl_read_file(path, buf, sizeof(buf)) <= 0)
		return 0;
	return strtoull(buf, NULL, 10);
}

void bench_cgstat_read(const char *cg, struct bench_cgstat *s)
{
	char path[600], buf[1024];
	struct mthpctl_psi psi;

	memset(s, 0, sizeof(*s));
	snprintf(path, sizeof(path), "%s/memory.events", cg);
	if (mthpctl_read_file(path, buf, sizeof(buf)) > 0) {
		mthpctl_stat_get(buf, "high", &s->high_events);
		mthpctl_stat_get(buf, "max", &s->max_events);
		mthpctl_stat_get(buf, "oom", &s->oom_events);
	}
	snprintf(path, sizeof(path), "%s/memory.pressure", cg);
	if (mthpctl_read_file(path, buf, sizeof(buf)) > 0 && !mthpctl_parse_psi(buf, &psi)) {
		s->psi_some_us = psi.some.total_us;
		s->psi_full_us = psi.full.total_us;
	}
	s->peak = read_u64_file(cg, "memory.peak");
	s->current = read_u64_file(cg, "memory.current");
}

void bench_memstat_read(const char *cg, struct bench_memstat *m)
{
	char path[600], *buf;

	buf = malloc(65536);
	if (!buf) {
		bench_memstat_parse(NULL, m);
		return;
	}
	if (cg)
		snprintf(path, sizeof(path), "%s/memory.stat", cg);
	else
		snprintf(path, sizeof(path), "/proc/vmstat");
	bench_memstat_parse(mthpctl_read_file(path, buf, 65536) > 0 ? buf : NULL, m);
	free(buf);
}

#define PM_PRESENT	(1ULL << 63)
#define PM_PFN_MASK	((1ULL << 55) - 1)
#define PM_CHUNK	512

struct kpf_cache {
	int fd;
	__u64 base;		/* first pfn in v, or ~0 */
	int nr;
	__u64 v[PM_CHUNK];
};

/*
 * The flags of pfn. kpageflags costs per entry read, so a miss reads one
 * entry, and after a compound head the rest up to the next 2M-aligned PFN
 * (a naturally aligned folio of up to order 9 ends there): its tails then
 * come from the cache.
 */
static __u64 kpf_get(struct kpf_cache *c, __u64 pfn)
{
	__u64 v = 0;
	ssize_t r;
	int n;

	if (c->base != ~0ULL && pfn >= c->base && pfn < c->base + c->nr)
		return c->v[pfn - c->base];
	c->base = ~0ULL;
	if (pread(c->fd, &v, 8, pfn * 8) != 8)
		return 0;
	if (!(v & (1ULL << BENCH_KPF_COMPOUND_HEAD)))
		return v;
	n = PM_CHUNK - (pfn & (PM_CHUNK - 1));
	r = pread(c->fd, c->v, n * 8, pfn * 8);
	if (r >= 8) {
		c->base = pfn;
		c->nr = r / 8;
	}
	return v;
}

/* One process: every mapping of /proc/PID/maps through its pagemap. */
static void pid_folios(int pid, struct kpf_cache *kc, struct bench_folios *f)
{
	char path[64], line[512];
	__u64 ent[PM_CHUNK];
	FILE *maps;
	int pm;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	maps = fopen(path, "re");
	snprintf(path, sizeof(path), "/proc/%d/pagemap", pid);
	pm = open(path, O_RDONLY | O_CLOEXEC);
	if (!maps || pm < 0)
		goto out;
	while (fgets(line, sizeof(line), maps)) {
		unsigned long long start, end, va;

		if (sscanf(line, "%llx-%llx", &start, &end) != 2 || strstr(line, "[vsyscall]"))
			continue;
		for (va = start; va < end;) {
			size_t want = (end - va) / 4096, i;
			ssize_t r;

			if (want > PM_CHUNK)
				want = PM_CHUNK;
			r = pread(pm, ent, want * 8, va / 4096 * 8);
			if (r <= 0)
				break;
			for (i = 0; i < (size_t)r / 8; i++) {
				bool present = ent[i] & PM_PRESENT;
				__u64 pfn = ent[i] & PM_PFN_MASK;

				bench_folios_feed(f, present, pfn, present ? kpf_get(kc, pfn) : 0);
			}
			va += (r / 8) * 4096;
		}
		bench_folios_flush(f);
	}
out:
	if (maps)
		fclose(maps);
	if (pm >= 0)
		close(pm);
}

int bench_self_folios(const void *addr, size_t len, struct bench_folios *f)
{
	static struct kpf_cache kc;
	__u64 ent[PM_CHUNK], va = (unsigned long)addr, end = va + len;
	int pm, err = 0;

	bench_folios_init(f);
	kc.fd = open("/proc/kpageflags", O_RDONLY | O_CLOEXEC);
	if (kc.fd < 0)
		return -errno;
	kc.base = ~0ULL;
	pm = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	if (pm < 0) {
		err = -errno;
		goto out;
	}
	while (va < end) {
		size_t want = (end - va) / 4096, i;
		ssize_t r;

		if (want > PM_CHUNK)
			want = PM_CHUNK;
		r = pread(pm, ent, want * 8, va / 4096 * 8);
		if (r <= 0) {
			err = r < 0 ? -errno : -EIO;
			break;
		}
		for (i = 0; i < (size_t)r / 8; i++) {
			bool present = ent[i] & PM_PRESENT;
			__u64 pfn = ent[i] & PM_PFN_MASK;

			bench_folios_feed(f, present, pfn, present ? kpf_get(&kc, pfn) : 0);
		}
		va += (r / 8) * 4096;
	}
	bench_folios_flush(f);
	close(pm);
out:
	close(kc.fd);
	return err;
}

int bench_cg_folios(const char *cg, struct bench_folios *f)
{
	static struct kpf_cache kc;
	char path[600], buf[8192], *p, *save = NULL;

	bench_folios_init(f);
	kc.fd = open("/proc/kpageflags", O_RDONLY | O_CLOEXEC);
	if (kc.fd < 0)
		return -errno;
	kc.base = ~0ULL;
	snprintf(path, sizeof(path), "%s/cgroup.procs", cg);
	if (mthpctl_read_file(path, buf, sizeof(buf)) > 0)
		for (p = strtok_r(buf, "\n", &save); p; p = strtok_r(NULL, "\n", &save))
			pid_folios(atoi(p), &kc, f);
	close(kc.fd);
	return 0;
}
