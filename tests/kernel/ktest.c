// SPDX-License-Identifier: GPL-2.0
/*
 * Kernel-side tests of the bpf_mthp_ops series, run as root inside the VM
 * on the patched kernel: cgroup attachment of struct_ops links (upstream's
 * UAPI: the cgroup as target_fd, ordering flags, revision, cap, query by
 * type id), hierarchy, the folio sizes really allocated, tva_type,
 * khugepaged after a deny at mmap time, grant only by a policy linked with
 * CAP_SYS_ADMIN (not without it, nor with a BPF token), khugepaged
 * registration only in a cgroup with a policy, verifier refusals and the
 * PSI kfunc. Usage: ktest [TEST...]  (default: all but psi_disabled)
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/capability.h>
#include <linux/magic.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "ktest_policies.skel.h"
#include "ktest_mm.h"
#include "ktest_psi.h"

#define CG_ROOT "/sys/fs/cgroup"
#define KT_CG CG_ROOT "/ktest"
#define THP_DIR "/sys/kernel/mm/transparent_hugepage"
#define PIN_DIR "/sys/fs/bpf"
#define MAX_ORDER_SEEN 10
#define SZ_2M (2UL << 20)
#define SZ_64K (64UL << 10)

/* enum bpf_mthp_request */
#define REQ_FAULT 0
#define REQ_KHUGEPAGED 1
#define REQ_SMAPS 2

static int failures, passes;
static char fail_msg[512];
static char libbpf_log[1 << 16];
static size_t libbpf_log_len;

/* Record the first failed expectation of the running test. */
#define EXPECT(cond, ...)						\
	do {								\
		if (!(cond)) {						\
			snprintf(fail_msg, sizeof(fail_msg), __VA_ARGS__); \
			return -1;					\
		}							\
	} while (0)

static int capture_print(enum libbpf_print_level level, const char *fmt,
			 va_list ap)
{
	if (libbpf_log_len < sizeof(libbpf_log) - 1) {
		int n = vsnprintf(libbpf_log + libbpf_log_len,
				  sizeof(libbpf_log) - libbpf_log_len, fmt, ap);
		if (n > 0)
			libbpf_log_len += n;
		if (libbpf_log_len >= sizeof(libbpf_log))
			libbpf_log_len = sizeof(libbpf_log) - 1;
	}
	return 0;
}

static int write_str(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, val, strlen(val));
	close(fd);
	return n < 0 ? -errno : 0;
}

static int read_str(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = 0;
	return 0;
}

static uint64_t cgroup_id_of(const char *path)
{
	struct stat st;

	return stat(path, &st) ? 0 : st.st_ino;
}

static int cg_make(const char *path)
{
	if (mkdir(path, 0755) && errno != EEXIST)
		return -errno;
	return 0;
}

static void cg_enable_memory(const char *parent)
{
	char p[256];

	snprintf(p, sizeof(p), "%s/cgroup.subtree_control", parent);
	write_str(p, "+memory");
}

static int cg_enter(const char *path)
{
	char p[256], pid[32];

	snprintf(p, sizeof(p), "%s/cgroup.procs", path);
	snprintf(pid, sizeof(pid), "%d", getpid());
	return write_str(p, pid);
}

/* rmdir a cgroup tree, children first */
static void cg_remove(const char *path)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd),
		 "find %s -depth -type d -exec rmdir {} + 2>/dev/null", path);
	if (access(path, F_OK) == 0 && system(cmd) < 0)
		perror("system");
}

/* --- mTHP settings, saved and restored ----------------------------------- */

static char saved_enabled[16][32];
static int saved_orders[16];
static int nr_saved;
static char saved_global[64];
static char saved_scan_sleep[32];
#define SCAN_SLEEP THP_DIR "/khugepaged/scan_sleep_millisecs"

static void thp_set_all(const char *mode)
{
	char p[256];
	int o;

	for (o = 2; o <= MAX_ORDER_SEEN; o++) {
		snprintf(p, sizeof(p), THP_DIR "/hugepages-%lukB/enabled",
			 (4096UL << o) >> 10);
		write_str(p, mode);
	}
	write_str(THP_DIR "/enabled", mode);
	/* khugepaged must visit the test's processes within their lifetime */
	write_str(SCAN_SLEEP, "100");
}

static void thp_save(void)
{
	char p[256], buf[256], *s, *e;
	int o;

	for (o = 2; o <= MAX_ORDER_SEEN && nr_saved < 16; o++) {
		snprintf(p, sizeof(p), THP_DIR "/hugepages-%lukB/enabled",
			 (4096UL << o) >> 10);
		if (read_str(p, buf, sizeof(buf)))
			continue;
		s = strchr(buf, '[');
		e = s ? strchr(s, ']') : NULL;
		if (!s || !e)
			continue;
		*e = 0;
		saved_orders[nr_saved] = o;
		snprintf(saved_enabled[nr_saved++], 32, "%s", s + 1);
	}
	if (!read_str(THP_DIR "/enabled", buf, sizeof(buf)) &&
	    (s = strchr(buf, '[')) && (e = strchr(s, ']'))) {
		*e = 0;
		snprintf(saved_global, sizeof(saved_global), "%s", s + 1);
	}
	if (!read_str(SCAN_SLEEP, buf, sizeof(buf)))
		snprintf(saved_scan_sleep, sizeof(saved_scan_sleep), "%s", buf);
}

static void thp_restore(void)
{
	char p[256];
	int i;

	for (i = 0; i < nr_saved; i++) {
		snprintf(p, sizeof(p), THP_DIR "/hugepages-%lukB/enabled",
			 (4096UL << saved_orders[i]) >> 10);
		write_str(p, saved_enabled[i]);
	}
	if (saved_global[0])
		write_str(THP_DIR "/enabled", saved_global);
	if (saved_scan_sleep[0])
		write_str(SCAN_SLEEP, saved_scan_sleep);
}

/* --- what a process really got ------------------------------------------- */

struct folio_report {
	long pages[MAX_ORDER_SEEN + 1];	/* 4 KiB pages in folios of order N */
	int thp_eligible;		/* smaps THPeligible of the buffer */
	int collapse_ret;		/* madvise(MADV_COLLAPSE), 0 or errno */
	long huge_after_collapse;	/* pages in order-9 folios afterwards */
	long folios_16;			/* folios of 16 pages (64 KiB) */
	long misplaced_16;		/* of those, not laid out for contpte */
};

#define KPF_COMPOUND_HEAD 15
#define KPF_COMPOUND_TAIL 16

/* Histogram of the folio orders backing [buf, buf + len), from kpageflags. */
static int folio_histogram(char *buf, size_t len, long *pages)
{
	int pm = open("/proc/self/pagemap", O_RDONLY);
	int kf = open("/proc/kpageflags", O_RDONLY);
	size_t i, n = len / 4096;
	long run = 0;
	int o;

	if (pm < 0 || kf < 0)
		return -1;
	memset(pages, 0, sizeof(long) * (MAX_ORDER_SEEN + 1));
	for (i = 0; i <= n; i++) {
		uint64_t ent = 0, flags = 0;
		bool head = true;

		if (i < n) {
			if (pread(pm, &ent, 8, ((uintptr_t)buf / 4096 + i) * 8) != 8)
				return -1;
			if (!(ent & (1ULL << 63)))
				return -1;	/* not present */
			if (pread(kf, &flags, 8, (ent & ((1ULL << 55) - 1)) * 8) != 8)
				return -1;
			head = !(flags & (1ULL << KPF_COMPOUND_TAIL));
		}
		if (head && run) {
			for (o = 0; o <= MAX_ORDER_SEEN && (1L << o) < run; o++)
				;
			pages[o > MAX_ORDER_SEEN ? MAX_ORDER_SEEN : o] += run;
			run = 0;
		}
		run++;
	}
	close(pm);
	close(kf);
	return 0;
}

/*
 * Count the 64 KiB folios of [buf, buf + len) and those of them not laid
 * out as arm64 maps one with the contiguous bit (contpte: 16 PTEs of one
 * TLB entry): the folio's first page at a 64 KiB aligned virtual address,
 * its 16 frames consecutive from a frame number that is a multiple of 16.
 * The bit itself is not visible from user space (no pagemap, kpageflags or
 * smaps field shows it); this is the layout the kernel sets it for.
 */
static int folio_layout_16(char *buf, size_t len, long *folios, long *misplaced)
{
	int pm = open("/proc/self/pagemap", O_RDONLY);
	int kf = open("/proc/kpageflags", O_RDONLY);
	size_t i, n = len / 4096, start = 0;
	uint64_t first = 0, prev = 0;
	bool bad = false;

	*folios = *misplaced = 0;
	if (pm < 0 || kf < 0)
		return -1;
	for (i = 0; i <= n; i++) {
		uint64_t ent = 0, flags = 0, pfn = 0;
		bool head = true;

		if (i < n) {
			if (pread(pm, &ent, 8, ((uintptr_t)buf / 4096 + i) * 8) != 8 ||
			    !(ent & (1ULL << 63)))
				return -1;
			pfn = ent & ((1ULL << 55) - 1);
			if (pread(kf, &flags, 8, pfn * 8) != 8)
				return -1;
			head = !(flags & (1ULL << KPF_COMPOUND_TAIL));
		}
		if (head && i && i - start == 16) {
			*folios += 1;
			if (bad || ((uintptr_t)(buf + start * 4096) & (SZ_64K - 1)) || (first & 15))
				*misplaced += 1;
		}
		if (head) {
			start = i;
			first = pfn;
			bad = false;
		} else if (pfn != prev + 1) {
			bad = true;
		}
		prev = pfn;
	}
	close(pm);
	close(kf);
	return 0;
}

static int smaps_thp_eligible(void *addr)
{
	char line[256];
	unsigned long start, end;
	bool in = false;
	int val = -1;
	FILE *f = fopen("/proc/self/smaps", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx ", &start, &end) == 2 && strchr(line, '-') < strchr(line, ' ')) {
			in = (uintptr_t)addr >= start && (uintptr_t)addr < end;
			continue;
		}
		if (in && sscanf(line, "THPeligible: %d", &val) == 1)
			break;
	}
	fclose(f);
	return val;
}

static char *map_aligned(size_t len)
{
	char *p = mmap(NULL, len + SZ_2M, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uintptr_t a;

	if (p == MAP_FAILED)
		return NULL;
	a = ((uintptr_t)p + SZ_2M - 1) & ~(SZ_2M - 1);
	return (char *)a;
}

#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25
#endif

/*
 * Fork a child into @cgroup that faults in @len bytes of anonymous memory,
 * one write per 4 KiB page, optionally asks for MADV_COLLAPSE, and reports
 * the folio orders it got.
 */
static int fault_in_cgroup_linger(const char *cgroup, size_t len, bool collapse,
				  int linger_ms, struct folio_report *rep)
{
	int pipefd[2], status;
	pid_t pid;

	if (pipe(pipefd))
		return -1;
	if (linger_ms) {
		/*
		 * khugepaged may collapse what we fault before we look (seen
		 * on a lockdep kernel): park it until the faults are counted,
		 * and let a scan in progress finish first.
		 */
		write_str(SCAN_SLEEP, "600000");
		usleep(300 * 1000);
	}
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		struct folio_report r = {};
		char *buf;
		size_t i;

		close(pipefd[0]);
		if (cg_enter(cgroup))
			_exit(2);
		buf = map_aligned(len);
		if (!buf)
			_exit(3);
		for (i = 0; i < len; i += 4096)
			buf[i] = 1;
		if (folio_histogram(buf, len, r.pages) ||
		    folio_layout_16(buf, len, &r.folios_16, &r.misplaced_16))
			_exit(4);
		r.thp_eligible = smaps_thp_eligible(buf);
		if (collapse) {
			long hist[MAX_ORDER_SEEN + 1];

			r.collapse_ret = madvise(buf, len, MADV_COLLAPSE) ? errno : 0;
			if (folio_histogram(buf, len, hist))
				_exit(5);
			r.huge_after_collapse = hist[9];
		}
		/* Wake khugepaged and give it time to scan this mm */
		if (linger_ms)
			write_str(SCAN_SLEEP, "100");
		usleep(linger_ms * 1000);
		if (write(pipefd[1], &r, sizeof(r)) != sizeof(r))
			_exit(6);
		_exit(0);
	}
	close(pipefd[1]);
	if (read(pipefd[0], rep, sizeof(*rep)) != sizeof(*rep)) {
		close(pipefd[0]);
		waitpid(pid, &status, 0);
		if (linger_ms)
			write_str(SCAN_SLEEP, "100");
		snprintf(fail_msg, sizeof(fail_msg),
			 "fault child in %s failed (status %d)", cgroup, status);
		return -1;
	}
	close(pipefd[0]);
	waitpid(pid, &status, 0);
	if (linger_ms)
		write_str(SCAN_SLEEP, "100");
	return 0;
}

static int fault_in_cgroup(const char *cgroup, size_t len, bool collapse,
			   struct folio_report *rep)
{
	return fault_in_cgroup_linger(cgroup, len, collapse, 0, rep);
}

/* The order holding most of the pages */
static int main_order(const struct folio_report *r)
{
	int o, best = 0;

	for (o = 0; o <= MAX_ORDER_SEEN; o++)
		if (r->pages[o] > r->pages[best])
			best = o;
	return best;
}

static long large_pages(const struct folio_report *r)
{
	long n = 0;
	int o;

	for (o = 1; o <= MAX_ORDER_SEEN; o++)
		n += r->pages[o];
	return n;
}

/* Attach @map to @cgroup with @opts (NULL: appended); NULL with errno. */
static struct bpf_link *attach_link_opts(struct bpf_map *map, const char *cgroup,
					 const struct bpf_cgroup_opts *opts)
{
	struct bpf_link *link;
	int cg = open(cgroup, O_RDONLY | O_DIRECTORY);

	if (cg < 0)
		return NULL;
	link = bpf_map__attach_cgroup_opts(map, cg, opts);
	close(cg);
	return link;
}

static struct bpf_link *attach_link(struct bpf_map *map, const char *cgroup)
{
	return attach_link_opts(map, cgroup, NULL);
}

/* The link fd, or -errno. */
static int attach_opts(struct bpf_map *map, const char *cgroup,
		       const struct bpf_cgroup_opts *opts)
{
	struct bpf_link *link = attach_link_opts(map, cgroup, opts);
	int fd;

	if (!link)
		return -errno;
	/* Keep the fd, drop libbpf's wrapper without detaching. */
	fd = bpf_link__fd(link);
	bpf_link__disconnect(link);
	bpf_link__destroy(link);
	return fd;
}

static int attach(struct bpf_map *map, const char *cgroup)
{
	return attach_opts(map, cgroup, NULL);
}

static int link_info(int link_fd, struct bpf_link_info *info)
{
	__u32 len = sizeof(*info);

	memset(info, 0, sizeof(*info));
	return bpf_link_get_info_by_fd(link_fd, info, &len);
}

static struct ktest_policies *skel;

/* --- tests ----------------------------------------------------------------- */

static int test_folio_sizes(void)
{
	struct folio_report pol, sib;
	int lfd;

	cg_make(KT_CG "/pol");
	cg_make(KT_CG "/sib");
	lfd = attach(skel->maps.pol_only_4k, KT_CG "/pol");
	EXPECT(lfd >= 0, "attach only_4k: %s", strerror(-lfd));
	if (fault_in_cgroup(KT_CG "/pol", 16 << 20, false, &pol) ||
	    fault_in_cgroup(KT_CG "/sib", 16 << 20, false, &sib))
		return -1;
	close(lfd);
	printf("#   policy 4K-only: %ld of %ld pages in large folios, THPeligible %d\n",
	       large_pages(&pol), (16L << 20) / 4096, pol.thp_eligible);
	printf("#   sibling:        %ld of %ld pages in large folios (main order %d), THPeligible %d\n",
	       large_pages(&sib), (16L << 20) / 4096, main_order(&sib), sib.thp_eligible);
	EXPECT(large_pages(&pol) == 0, "policy cgroup got %ld pages in large folios", large_pages(&pol));
	EXPECT(pol.thp_eligible == 0, "smaps THPeligible %d under a 4K-only policy", pol.thp_eligible);
	EXPECT(main_order(&sib) == 9, "sibling's main folio order is %d, not 9", main_order(&sib));
	EXPECT(sib.thp_eligible == 1, "sibling's THPeligible is %d", sib.thp_eligible);
	return 0;
}

/*
 * A 64K-only policy: the faults get 64 KiB folios, each at a 64 KiB aligned
 * address and on 16 consecutive, aligned frames, the layout arm64 maps
 * with the contiguous bit (what can be seen of contpte from user space).
 */
static int test_folio_layout_64k(void)
{
	struct folio_report r;
	int lfd;

	cg_make(KT_CG "/l64");
	skel->bss->allowed_a = 1UL << 4;
	lfd = attach(skel->maps.pol_mask_a, KT_CG "/l64");
	EXPECT(lfd >= 0, "attach 64K-only: %s", strerror(-lfd));
	if (fault_in_cgroup(KT_CG "/l64", 4 << 20, false, &r))
		return -1;
	close(lfd);
	printf("#   64K-only policy: %ld of %ld pages in 64K folios, %ld folios, %ld not contpte-aligned\n",
	       r.pages[4], (4L << 20) / 4096, r.folios_16, r.misplaced_16);
	EXPECT(main_order(&r) == 4, "main order %d, want 4", main_order(&r));
	EXPECT(r.folios_16 > 0 && r.misplaced_16 == 0, "%ld of %ld 64K folios not laid out for contpte",
	       r.misplaced_16, r.folios_16);
	return 0;
}

static int test_link_attach_detach_query(void)
{
	struct bpf_link_info info;
	struct bpf_map_info minfo = {};
	__u32 mlen = sizeof(minfo);
	LIBBPF_OPTS(bpf_link_create_opts, badflag, .flags = 1U << 7);
	struct folio_report r;
	char path[128], buf[512];
	struct bpf_link *link;
	int lfd, fd, tmp;

	cg_make(KT_CG "/q");
	link = attach_link(skel->maps.pol_only_4k, KT_CG "/q");
	EXPECT(link, "attach: %s", strerror(errno));
	lfd = bpf_link__fd(link);
	EXPECT(!link_info(lfd, &info), "link info: %s", strerror(errno));
	bpf_map_get_info_by_fd(bpf_map__fd(skel->maps.pol_only_4k), &minfo, &mlen);
	EXPECT(info.type == BPF_LINK_TYPE_STRUCT_OPS, "link type %u", info.type);
	EXPECT(info.struct_ops.map_id == minfo.id, "map id %u, want %u",
	       info.struct_ops.map_id, minfo.id);
	EXPECT(info.struct_ops.cgroup_id == cgroup_id_of(KT_CG "/q"),
	       "cgroup id %llu, want %llu", (unsigned long long)info.struct_ops.cgroup_id,
	       (unsigned long long)cgroup_id_of(KT_CG "/q"));
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", lfd);
	EXPECT(!read_str(path, buf, sizeof(buf)) && strstr(buf, "cgroup_id:"),
	       "fdinfo lacks cgroup_id: %s", buf);

	/* Refusals (on a map whose value is set, so that the target or the
	 * flag is the only thing wrong): a flag cgroup links do not know
	 * (bit 7, the private cgroup-fd flag of series v1, gone since v2),
	 * no cgroup at all, and a directory that is not a cgroup. */
	tmp = open(KT_CG "/q", O_RDONLY | O_DIRECTORY);
	fd = bpf_link_create(bpf_map__fd(skel->maps.pol_only_4k), tmp, BPF_STRUCT_OPS, &badflag);
	close(tmp);
	EXPECT(fd == -EINVAL, "attach with an unknown flag gave %d, want -EINVAL", fd);
	tmp = open("/dev/null", O_RDONLY);
	fd = bpf_link_create(bpf_map__fd(skel->maps.pol_only_4k), tmp, BPF_STRUCT_OPS, NULL);
	close(tmp);
	EXPECT(fd < 0, "attach with /dev/null as the cgroup succeeded");
	tmp = open("/tmp", O_RDONLY | O_DIRECTORY);
	fd = bpf_link_create(bpf_map__fd(skel->maps.pol_mask_a), tmp, BPF_STRUCT_OPS, NULL);
	close(tmp);
	EXPECT(fd < 0, "attaching to /tmp succeeded");

	/* Replace atomically with a 64K-only policy, then detach. */
	skel->bss->allowed_a = 1UL << 4;
	/* (libbpf sets the new map's value, then BPF_LINK_UPDATE) */
	EXPECT(!bpf_link__update_map(link, skel->maps.pol_mask_a),
	       "link update: %s", strerror(errno));
	if (fault_in_cgroup(KT_CG "/q", 4 << 20, false, &r))
		return -1;
	EXPECT(main_order(&r) == 4, "after replace, main order %d, want 4", main_order(&r));
	EXPECT(!bpf_link_detach(lfd), "detach: %s", strerror(errno));
	EXPECT(!link_info(lfd, &info) && info.struct_ops.map_id == 0 &&
	       info.struct_ops.cgroup_id == 0,
	       "detached link still reports map %u cgroup %llu", info.struct_ops.map_id,
	       (unsigned long long)info.struct_ops.cgroup_id);
	if (fault_in_cgroup(KT_CG "/q", 4 << 20, false, &r))
		return -1;
	EXPECT(main_order(&r) == 9, "after detach, main order %d, want 9", main_order(&r));
	bpf_link__destroy(link);
	return 0;
}

static int test_pin_outlives_creator(void)
{
	const char *pin = PIN_DIR "/ktest_link";
	struct bpf_link_info info;
	struct folio_report r;
	int status, fd;
	pid_t pid;

	cg_make(KT_CG "/pin");
	unlink(pin);
	pid = fork();
	if (pid == 0) {
		int lfd = attach(skel->maps.pol_only_4k, KT_CG "/pin");

		_exit(lfd < 0 || bpf_obj_pin(lfd, pin) ? 1 : 0);
	}
	waitpid(pid, &status, 0);
	EXPECT(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child failed to attach and pin");
	/* The creator is gone; the policy must still be in force. */
	if (fault_in_cgroup(KT_CG "/pin", 4 << 20, false, &r))
		return -1;
	EXPECT(large_pages(&r) == 0, "policy lost with its creator: %ld large pages", large_pages(&r));
	fd = bpf_obj_get(pin);
	EXPECT(fd >= 0, "reopen pin: %s", strerror(errno));
	EXPECT(!link_info(fd, &info) && info.struct_ops.cgroup_id == cgroup_id_of(KT_CG "/pin"),
	       "pinned link reports cgroup %llu", (unsigned long long)info.struct_ops.cgroup_id);
	close(fd);
	unlink(pin);	/* last reference: detaches */
	usleep(200 * 1000);
	if (fault_in_cgroup(KT_CG "/pin", 4 << 20, false, &r))
		return -1;
	EXPECT(main_order(&r) == 9, "after unpinning, main order %d, want 9", main_order(&r));
	return 0;
}

static pid_t spawn_looper(const char *cgroup)
{
	pid_t pid = fork();

	if (pid == 0) {
		if (cg_enter(cgroup))
			_exit(2);
		for (;;) {
			char *p = mmap(NULL, 4 << 20, PROT_READ | PROT_WRITE,
				       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			size_t i;

			if (p == MAP_FAILED)
				_exit(3);
			for (i = 0; i < (4 << 20); i += 4096)
				p[i] = 1;
			munmap(p, 4 << 20);
		}
	}
	return pid;
}

#define POLLER_TIMEOUT_MS 15000

struct poll_result {
	int n;			/* poll()'s return */
	short revents;
	long ms;		/* time spent in poll() */
};

/* A child already waiting in poll() on @fd when this returns; its result
 * comes through *@rfd. The auto-detach must wake such a waiter: a poll()
 * that starts after the detach sees EPOLLHUP from the link's state alone
 * and cannot tell whether the detach woke anyone. */
static pid_t spawn_poller(int fd, int *rfd)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	struct poll_result r;
	struct timespec t0, t1;
	int p[2];
	char c;
	pid_t pid;

	if (pipe(p))
		return -1;
	pid = fork();
	if (pid == 0) {
		close(p[0]);
		c = 'r';
		if (write(p[1], &c, 1) != 1)
			_exit(1);
		clock_gettime(CLOCK_MONOTONIC, &t0);
		r.n = poll(&pfd, 1, POLLER_TIMEOUT_MS);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		r.revents = pfd.revents;
		r.ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
		_exit(write(p[1], &r, sizeof(r)) == sizeof(r) ? 0 : 1);
	}
	close(p[1]);
	if (pid < 0 || read(p[0], &c, 1) != 1) {
		close(p[0]);
		return -1;
	}
	usleep(200000);		/* from its write into poll() */
	*rfd = p[0];
	return pid;
}

static int test_cgroup_removal_detaches(void)
{
	struct poll_result woken = {};
	struct ktest_policies *own = ktest_policies__open_and_load();
	struct bpf_map_info minfo = {};
	__u32 mlen = sizeof(minfo);
	struct bpf_link_info info;
	struct pollfd pfd;
	pid_t loop[3], poller;
	int lfd, sfd, i, fd, rfd;
	__u32 map_id;

	EXPECT(own, "second skeleton: %s", strerror(errno));
	cg_make(KT_CG "/gone");
	cg_make(KT_CG "/gone/leaf");
	cg_make(KT_CG "/stay");
	lfd = attach(own->maps.pol_only_4k, KT_CG "/gone");
	sfd = attach(skel->maps.pol_deny_fault, KT_CG "/stay");
	EXPECT(lfd >= 0 && sfd >= 0, "attach: %d %d", lfd, sfd);
	bpf_map_get_info_by_fd(bpf_map__fd(own->maps.pol_only_4k), &minfo, &mlen);
	map_id = minfo.id;

	/* Tasks fault under the policy right up to the removal. */
	loop[0] = spawn_looper(KT_CG "/gone/leaf");
	loop[1] = spawn_looper(KT_CG "/gone");
	loop[2] = spawn_looper(KT_CG "/stay");
	sleep(1);
	kill(loop[0], SIGKILL);
	kill(loop[1], SIGKILL);
	waitpid(loop[0], NULL, 0);
	waitpid(loop[1], NULL, 0);
	poller = spawn_poller(lfd, &rfd);
	EXPECT(poller > 0, "poller: %s", strerror(errno));
	for (i = 0; i < 50 && (rmdir(KT_CG "/gone/leaf") && errno == EBUSY); i++)
		usleep(20000);
	for (i = 0; i < 50 && (rmdir(KT_CG "/gone") && errno == EBUSY); i++)
		usleep(20000);
	EXPECT(access(KT_CG "/gone", F_OK) != 0, "cgroup not removed");

	pfd.fd = lfd;
	pfd.events = POLLIN;
	i = poll(&pfd, 1, 10000);
	kill(loop[2], SIGKILL);
	waitpid(loop[2], NULL, 0);
	close(sfd);
	EXPECT(i == 1 && (pfd.revents & POLLHUP), "no EPOLLHUP after removal (poll %d, revents %#x)",
	       i, pfd.revents);
	i = read(rfd, &woken, sizeof(woken));
	close(rfd);
	waitpid(poller, NULL, 0);
	/* at its timeout poll() looks once more and finds the state: in time */
	EXPECT(i == sizeof(woken) && woken.n == 1 && (woken.revents & POLLHUP) &&
	       woken.ms < POLLER_TIMEOUT_MS - 5000,
	       "a poll() waiting before the removal was not woken (poll %d, revents %#x, %ld ms)",
	       woken.n, woken.revents, woken.ms);
	printf("#   a poll() waiting since before the rmdir: EPOLLHUP after %ld ms\n", woken.ms);
	EXPECT(!link_info(lfd, &info) && info.struct_ops.map_id == 0 &&
	       info.struct_ops.cgroup_id == 0, "link still attached: map %u cgroup %llu",
	       info.struct_ops.map_id, (unsigned long long)info.struct_ops.cgroup_id);

	/* Nothing keeps the policy alive any more: it must be freed. */
	close(lfd);
	ktest_policies__destroy(own);
	for (i = 0; i < 100; i++) {
		fd = bpf_map_get_fd_by_id(map_id);
		if (fd < 0)
			break;
		close(fd);
		usleep(100000);
	}
	EXPECT(fd < 0 && errno == ENOENT, "struct_ops map %u leaked", map_id);
	return 0;
}

static int test_hierarchy(void)
{
	struct folio_report p, c1, c2, s1, s2, other;
	int lp, lc1, ls1, ls2;

	/* P allows 16K..64K; C1 allows 32K and 2M; the intersection is 32K. */
	skel->bss->allowed_a = (1UL << 2) | (1UL << 3) | (1UL << 4);
	skel->bss->allowed_b = (1UL << 3) | (1UL << 9);
	skel->bss->allowed_c = 1UL << 2;
	cg_make(KT_CG "/p");
	cg_make(KT_CG "/p/c1");
	cg_make(KT_CG "/s1");
	cg_make(KT_CG "/s2");
	cg_make(KT_CG "/other");
	lp = attach(skel->maps.pol_mask_a, KT_CG "/p");
	lc1 = attach(skel->maps.pol_mask_b, KT_CG "/p/c1");
	ls1 = attach(skel->maps.pol_mask_c, KT_CG "/s1");
	ls2 = attach(skel->maps.pol_mask_b, KT_CG "/s2");
	EXPECT(lp >= 0 && lc1 >= 0 && ls1 >= 0 && ls2 >= 0,
	       "nested attach refused: %d %d %d %d", lp, lc1, ls1, ls2);
	/* Created after the attachments: must inherit P's policy. */
	cg_make(KT_CG "/p/c2");
	if (fault_in_cgroup(KT_CG "/p", 4 << 20, false, &p) ||
	    fault_in_cgroup(KT_CG "/p/c1", 4 << 20, false, &c1) ||
	    fault_in_cgroup(KT_CG "/p/c2", 4 << 20, false, &c2) ||
	    fault_in_cgroup(KT_CG "/s1", 4 << 20, false, &s1) ||
	    fault_in_cgroup(KT_CG "/s2", 4 << 20, false, &s2) ||
	    fault_in_cgroup(KT_CG "/other", 4 << 20, false, &other))
		return -1;
	close(lp);
	close(lc1);
	close(ls1);
	close(ls2);
	printf("#   main folio order: p %d, p/c1 %d, p/c2 (new) %d, s1 %d, s2 %d, other %d\n",
	       main_order(&p), main_order(&c1), main_order(&c2), main_order(&s1),
	       main_order(&s2), main_order(&other));
	EXPECT(main_order(&p) == 4, "P: order %d, want 4", main_order(&p));
	EXPECT(main_order(&c1) == 3, "C1: order %d, want 3 (intersection)", main_order(&c1));
	EXPECT(main_order(&c2) == 4, "new child C2: order %d, want 4 (inherited)", main_order(&c2));
	EXPECT(main_order(&s1) == 2, "sibling S1: order %d, want 2", main_order(&s1));
	EXPECT(main_order(&s2) == 9, "sibling S2: order %d, want 9", main_order(&s2));
	EXPECT(main_order(&other) == 9, "no policy: order %d, want 9", main_order(&other));
	return 0;
}

/*
 * Who asks: page faults, khugepaged and smaps ask the policy; MADV_COLLAPSE
 * is the process's own request and does not, so it collapses under a
 * policy refusing page faults and under a 4K-only one alike.
 */
static int test_tva_type(void)
{
	struct folio_report d, n;
	int ld, ln;
	int i;

	cg_make(KT_CG "/deny_fault");
	cg_make(KT_CG "/never");
	skel->bss->watch_cgroup = cgroup_id_of(KT_CG "/deny_fault");
	for (i = 0; i < 3; i++)
		skel->bss->calls[i] = 0;
	ld = attach(skel->maps.pol_deny_fault, KT_CG "/deny_fault");
	ln = attach(skel->maps.pol_only_4k, KT_CG "/never");
	EXPECT(ld >= 0 && ln >= 0, "attach: %d %d", ld, ln);
	if (fault_in_cgroup_linger(KT_CG "/deny_fault", 4 << 20, true, 2000, &d) ||
	    fault_in_cgroup(KT_CG "/never", 4 << 20, true, &n))
		return -1;
	close(ld);
	close(ln);
	printf("#   fault-only refusal: %ld large pages after faults, MADV_COLLAPSE -> %s, %ld pages in 2M folios after\n",
	       large_pages(&d), strerror(d.collapse_ret), d.huge_after_collapse);
	printf("#   4K-only policy:     MADV_COLLAPSE -> %s, %ld pages in 2M folios after\n",
	       strerror(n.collapse_ret), n.huge_after_collapse);
	printf("#   calls seen: smaps %llu, pagefault %llu, khugepaged %llu\n",
	       (unsigned long long)skel->bss->calls[REQ_SMAPS],
	       (unsigned long long)skel->bss->calls[REQ_FAULT],
	       (unsigned long long)skel->bss->calls[REQ_KHUGEPAGED]);
	EXPECT(large_pages(&d) == 0, "faults got large folios despite the policy");
	EXPECT(d.collapse_ret == 0, "MADV_COLLAPSE failed: %s", strerror(d.collapse_ret));
	EXPECT(d.huge_after_collapse == (4 << 20) / 4096,
	       "after MADV_COLLAPSE only %ld pages are in 2M folios", d.huge_after_collapse);
	EXPECT(n.collapse_ret == 0, "MADV_COLLAPSE under a 4K-only policy: %s, want success",
	       strerror(n.collapse_ret));
	EXPECT(n.huge_after_collapse == (4 << 20) / 4096,
	       "MADV_COLLAPSE under a 4K-only policy left %ld pages in 2M folios, want all",
	       n.huge_after_collapse);
	EXPECT(skel->bss->calls[REQ_FAULT] > 0, "no BPF_MTHP_FAULT call");
	EXPECT(skel->bss->calls[REQ_SMAPS] > 0, "no BPF_MTHP_SMAPS call");
	EXPECT(skel->bss->calls[REQ_KHUGEPAGED] > 0, "no BPF_MTHP_KHUGEPAGED call");
	skel->bss->watch_cgroup = 0;
	return 0;
}

/*
 * A page fault asks the policy once, with its address: the PMD
 * attempt on an empty PMD and its fallback to smaller folios are one
 * question with every order, not a PMD-only call and then another.
 */
static int test_one_call_per_fault(void)
{
	struct folio_report r;
	int lfd;

	cg_make(KT_CG "/once");
	skel->bss->watch_cgroup = cgroup_id_of(KT_CG "/once");
	skel->bss->pf_pmd_alone = skel->bss->pf_pmd_and_smaller = 0;
	skel->bss->pf_smaller = skel->bss->pf_addr_outside = 0;
	lfd = attach(skel->maps.pol_no_pmd, KT_CG "/once");
	EXPECT(lfd >= 0, "attach no_pmd: %s", strerror(-lfd));
	if (fault_in_cgroup(KT_CG "/once", 16 << 20, false, &r))
		return -1;
	close(lfd);
	skel->bss->watch_cgroup = 0;
	printf("#   page-fault calls: PMD alone %llu, PMD and smaller %llu, smaller only %llu; address outside the VMA %llu; %ld of %ld pages large (main order %d)\n",
	       (unsigned long long)skel->bss->pf_pmd_alone,
	       (unsigned long long)skel->bss->pf_pmd_and_smaller,
	       (unsigned long long)skel->bss->pf_smaller,
	       (unsigned long long)skel->bss->pf_addr_outside,
	       large_pages(&r), (16L << 20) / 4096, main_order(&r));
	EXPECT(r.pages[9] == 0, "%ld pages in PMD folios under a policy refusing them", r.pages[9]);
	EXPECT(large_pages(&r) > 0, "no large folio below PMD size");
	EXPECT(skel->bss->pf_pmd_and_smaller > 0, "no fault asked for the PMD and smaller orders at once");
	EXPECT(skel->bss->pf_pmd_alone == 0, "%llu faults asked for the PMD order alone (then again for the smaller ones)",
	       (unsigned long long)skel->bss->pf_pmd_alone);
	EXPECT(skel->bss->pf_addr_outside == 0, "%llu calls got an address outside their VMA",
	       (unsigned long long)skel->bss->pf_addr_outside);
	return 0;
}

static __u32 map_id_of(struct bpf_map *map)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);

	return bpf_map_get_info_by_fd(bpf_map__fd(map), &info, &len) ? 0 : info.id;
}

/* BPF_PROG_QUERY of the bpf_mthp_ops of @cgroup: map ids into ids[*cnt]. */
static int query_struct_ops(const char *cgroup, __u32 type_id, bool effective,
			    __u32 *ids, __u32 *cnt, __u64 *revision)
{
	LIBBPF_OPTS(bpf_prog_query_opts, q, .prog_ids = ids, .count = *cnt, .type_id = type_id,
		    .query_flags = effective ? BPF_F_QUERY_EFFECTIVE : 0);
	int cg = open(cgroup, O_RDONLY | O_DIRECTORY), err;

	if (cg < 0)
		return -errno;
	err = bpf_prog_query_opts(cg, BPF_STRUCT_OPS, &q);
	close(cg);
	*cnt = q.count;
	if (revision)
		*revision = q.revision;
	return err;
}

static bool ids_are(const __u32 *got, __u32 n, const __u32 *want, __u32 m)
{
	return n == m && !memcmp(got, want, n * sizeof(*got));
}

/*
 * Upstream's cgroup struct_ops UAPI: placement with BPF_F_BEFORE/AFTER and
 * an anchor link, BPF_F_PREORDER, expected_revision, BPF_PROG_QUERY by
 * type id (attached and effective), the 64-attachment cap.
 */
static int test_order_query_cap(void)
{
	__u32 a = map_id_of(skel->maps.pol_mask_a), b = map_id_of(skel->maps.pol_mask_b);
	__u32 c = map_id_of(skel->maps.pol_mask_c), k = map_id_of(skel->maps.pol_only_4k);
	__u32 d = map_id_of(skel->maps.pol_deny_fault);
	__u32 ids[80], cnt, type_id, other_id;
	int la, lb, lc, lk, lp, fd, i, capfd[64];
	__u64 rev;
	struct btf *vmlinux;

	vmlinux = btf__load_vmlinux_btf();
	EXPECT(vmlinux, "vmlinux BTF: %s", strerror(errno));
	type_id = btf__find_by_name_kind(vmlinux, "bpf_mthp_ops", BTF_KIND_STRUCT);
	other_id = btf__find_by_name_kind(vmlinux, "task_struct", BTF_KIND_STRUCT);
	btf__free(vmlinux);
	EXPECT((int)type_id > 0 && (int)other_id > 0, "BTF ids %d %d", (int)type_id, (int)other_id);

	cg_make(KT_CG "/ord");
	cg_make(KT_CG "/ord/kid");
	la = attach(skel->maps.pol_mask_a, KT_CG "/ord");
	{
		LIBBPF_OPTS(bpf_cgroup_opts, o, .flags = BPF_F_BEFORE);
		lb = attach_opts(skel->maps.pol_mask_b, KT_CG "/ord", &o);
	}
	{
		LIBBPF_OPTS(bpf_cgroup_opts, o, .flags = BPF_F_AFTER | BPF_F_LINK, .relative_fd = lb);
		lc = attach_opts(skel->maps.pol_mask_c, KT_CG "/ord", &o);
	}
	EXPECT(la >= 0 && lb >= 0 && lc >= 0, "attach a %d, b (before) %d, c (after b) %d", la, lb, lc);

	cnt = 80;
	EXPECT(!query_struct_ops(KT_CG "/ord", type_id, false, ids, &cnt, &rev), "query: %s",
	       strerror(errno));
	printf("#   attached to ord: %u maps, revision %llu\n", cnt, (unsigned long long)rev);
	EXPECT(ids_are(ids, cnt, (__u32[]){ b, c, a }, 3), "order %u %u %u (%u), want b c a",
	       ids[0], ids[1], ids[2], cnt);
	/* cgroup-bpf's revision: 1 for a new cgroup, +1 per attachment */
	EXPECT(rev == 4, "revision %llu after 3 attachments", (unsigned long long)rev);

	/* Refusals: a stale revision; an anchor without BPF_F_LINK; an anchor
	 * with both or neither of BEFORE/AFTER; an anchor attached elsewhere;
	 * a type id that is no cgroup struct_ops; a buffer too small. */
	{
		LIBBPF_OPTS(bpf_cgroup_opts, o, .expected_revision = 1);
		fd = attach_opts(skel->maps.pol_only_4k, KT_CG "/ord", &o);
		EXPECT(fd == -ESTALE, "stale revision gave %d, want -ESTALE", fd);
	}
	{
		LIBBPF_OPTS(bpf_cgroup_opts, o, .flags = BPF_F_BEFORE, .relative_fd = la);
		fd = attach_opts(skel->maps.pol_only_4k, KT_CG "/ord", &o);
		EXPECT(fd == -EINVAL, "anchor without BPF_F_LINK gave %d, want -EINVAL", fd);
	}
	{
		LIBBPF_OPTS(bpf_cgroup_opts, o, .flags = BPF_F_LINK, .relative_fd = la);
		fd = attach_opts(skel->maps.pol_only_4k, KT_CG "/ord", &o);
		EXPECT(fd == -EINVAL, "anchor without BEFORE/AFTER gave %d, want -EINVAL", fd);
	}
	{
		LIBBPF_OPTS(bpf_cgroup_opts, o, .flags = BPF_F_BEFORE | BPF_F_LINK, .relative_fd = la);
		fd = attach_opts(skel->maps.pol_only_4k, KT_CG "/ord/kid", &o);
		EXPECT(fd == -ENOENT, "anchor of another cgroup gave %d, want -ENOENT", fd);
	}
	cnt = 80;
	EXPECT(query_struct_ops(KT_CG "/ord", other_id, false, ids, &cnt, NULL) == -ENOENT,
	       "query with task_struct's type id did not give -ENOENT");
	cnt = 2;
	EXPECT(query_struct_ops(KT_CG "/ord", type_id, false, ids, &cnt, NULL) == -ENOSPC &&
	       cnt == 3 && ids[0] == b && ids[1] == c,
	       "short buffer: cnt %u ids %u %u, want -ENOSPC, 3, b c", cnt, ids[0], ids[1]);

	/* Effective for the child: its own first, then the parent's in order;
	 * BPF_F_PREORDER ones before all, the root's first. */
	lk = attach(skel->maps.pol_only_4k, KT_CG "/ord/kid");
	{
		LIBBPF_OPTS(bpf_cgroup_opts, o, .flags = BPF_F_PREORDER);
		lp = attach_opts(skel->maps.pol_deny_fault, KT_CG "/ord", &o);
	}
	EXPECT(lk >= 0 && lp >= 0, "attach kid %d, preorder %d", lk, lp);
	cnt = 80;
	EXPECT(!query_struct_ops(KT_CG "/ord/kid", type_id, true, ids, &cnt, &rev),
	       "effective query: %s", strerror(errno));
	EXPECT(ids_are(ids, cnt, (__u32[]){ d, k, b, c, a }, 5),
	       "effective order %u %u %u %u %u (%u), want d k b c a", ids[0], ids[1], ids[2],
	       ids[3], ids[4], cnt);
	EXPECT(rev == 0, "effective query reported revision %llu", (unsigned long long)rev);
	cnt = 80;
	EXPECT(!query_struct_ops(KT_CG "/ord/kid", type_id, false, ids, &cnt, NULL) &&
	       ids_are(ids, cnt, (__u32[]){ k }, 1), "kid's own list has %u entries", cnt);

	/* The cap: 64 per cgroup and type, the 65th is -E2BIG */
	cg_make(KT_CG "/cap");
	for (i = 0; i < 64; i++) {
		capfd[i] = attach(skel->maps.pol_mask_b, KT_CG "/cap");
		EXPECT(capfd[i] >= 0, "attachment %d of 64: %s", i + 1, strerror(-capfd[i]));
	}
	fd = attach(skel->maps.pol_mask_b, KT_CG "/cap");
	EXPECT(fd == -E2BIG, "attachment 65 gave %d, want -E2BIG", fd);
	for (i = 0; i < 64; i++)
		close(capfd[i]);
	close(la);
	close(lb);
	close(lc);
	close(lk);
	close(lp);
	cnt = 80;
	EXPECT(!query_struct_ops(KT_CG "/ord/kid", type_id, true, ids, &cnt, NULL) && cnt == 0,
	       "%u struct_ops still in effect after closing every link", cnt);
	cg_remove(KT_CG "/ord/kid");
	cg_remove(KT_CG "/ord");
	cg_remove(KT_CG "/cap");
	return 0;
}

/*
 * The exec'd child of test_khugepaged_after_deny: a fresh mm (not forked
 * from one registered with khugepaged) that maps and faults LEN bytes
 * while the policy denies large folios, reports, waits for the word to
 * go, then waits for khugepaged to collapse its memory and reports again.
 */
/*
 * Fork a child into @cgroup that execs this program as "ktest @mode
 * @len WFD RFD" (a fresh mm), writing to the test on @up and reading
 * from @down; the parent keeps up[0] and down[1]. The child's pid, or -1.
 */
static pid_t exec_child_in_cgroup(const char *cgroup, const char *mode, size_t len,
				  int up[2], int down[2])
{
	char a1[32], a2[16], a3[16];
	pid_t pid = fork();

	if (pid == 0) {
		close(up[0]);
		close(down[1]);
		if (cg_enter(cgroup))
			_exit(2);
		snprintf(a1, sizeof(a1), "%zu", len);
		snprintf(a2, sizeof(a2), "%d", up[1]);
		snprintf(a3, sizeof(a3), "%d", down[0]);
		execl("/proc/self/exe", "ktest", mode, a1, a2, a3, (char *)NULL);
		_exit(127);
	}
	close(up[1]);
	close(down[0]);
	return pid;
}

/*
 * Wait for a byte on @rfd if @wait_first; map and fault in @len bytes
 * (@read_first: read every page first, as a calloc'd array or a buffer
 * pool's warm-up does, then write it), report the folio sizes on @wfd,
 * wait for a byte on @rfd, then report again once every page is in a PMD
 * folio or after 30 s.
 */
static int fresh_mm_child(size_t len, int wfd, int rfd, bool read_first)
{
	struct folio_report r = {};
	long hist[MAX_ORDER_SEEN + 1];
	volatile char *vbuf;
	char *buf, go, sum = 0;
	size_t i;
	int t;

	/* started: the test attaches its policy now, past our own startup */
	if (read_first && (write(wfd, "s", 1) != 1 || read(rfd, &go, 1) != 1))
		return 2;
	buf = map_aligned(len);
	if (!buf)
		return 3;
	vbuf = buf;
	for (i = 0; read_first && i < len; i += 4096)
		sum += vbuf[i];
	for (i = 0; i < len; i += 4096)
		buf[i] = 1 + sum;
	if (folio_histogram(buf, len, r.pages))
		return 4;
	if (write(wfd, &r, sizeof(r)) != sizeof(r) || read(rfd, &go, 1) != 1)
		return 6;
	for (t = 0; t < 300; t++) {	/* up to 30 s */
		if (folio_histogram(buf, len, hist))
			return 5;
		r.huge_after_collapse = hist[9];
		if ((size_t)hist[9] == len / 4096)
			break;
		usleep(100 * 1000);
	}
	return write(wfd, &r, sizeof(r)) == sizeof(r) ? 0 : 6;
}

/*
 * An mm whose memory was mapped and faulted while the policy denied large
 * folios is collapsed by khugepaged once the policy allows it:
 * registration with khugepaged does not ask the policy, and happens on
 * the fault that gives the VMA its anon_vma.
 *
 * Without @read_first, on an "always" host, the policy goes away. With
 * it, on a "madvise" host, the mapping is read before it is written (its
 * anon_vma comes with the write fault that replaces the zero page, not
 * with the first fault), the policy is attached after the process has
 * started (so that no fault of its startup registers the mm) and grants
 * every size once the mapping is written.
 */
static int khugepaged_after_deny(const char *cgroup, size_t len, bool read_first)
{
	struct folio_report first, after;
	int up[2], down[2], lfd = -1, status;
	pid_t pid;
	char c;

	cg_make(cgroup);
	skel->bss->allowed_a = 0;
	if (read_first) {
		thp_set_all("madvise");
	} else {
		lfd = attach(skel->maps.pol_mask_a, cgroup);
		EXPECT(lfd >= 0, "attach deny-all: %s", strerror(-lfd));
	}
	EXPECT(!pipe(up) && !pipe(down), "pipe: %s", strerror(errno));
	write_str(SCAN_SLEEP, "100");
	pid = exec_child_in_cgroup(cgroup, read_first ? "--fresh-mm-child-read-first" :
				   "--fresh-mm-child", len, up, down);
	EXPECT(pid > 0, "fork: %s", strerror(errno));
	if (read_first) {
		if (read(up[0], &c, 1) != 1)
			lfd = -EIO;
		else
			lfd = attach(skel->maps.pol_mask_a, cgroup);
		if (lfd < 0 || write(down[1], "m", 1) != 1) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			thp_set_all("always");
			EXPECT(false, "attach deny-all after the child started: %s", strerror(-lfd));
		}
	}
	if (read(up[0], &first, sizeof(first)) != sizeof(first)) {
		waitpid(pid, &status, 0);
		if (lfd >= 0)
			close(lfd);
		thp_set_all("always");
		EXPECT(false, "fresh-mm child failed before reporting (status %d)", status);
	}
	if (read_first)
		skel->bss->allowed_a = ~0UL;	/* the policy grants now */
	else
		close(lfd);	/* the policy goes away: khugepaged may collapse now */
	EXPECT(write(down[1], "g", 1) == 1, "cannot wake the child");
	EXPECT(read(up[0], &after, sizeof(after)) == sizeof(after), "no second report");
	waitpid(pid, &status, 0);
	close(up[0]);
	close(down[1]);
	if (read_first) {
		close(lfd);
		thp_set_all("always");
	}
	printf("#   %s under deny: %ld of %zu pages large; after the policy %s: %ld pages in 2M folios\n",
	       read_first ? "read, then written" : "written", large_pages(&first), len / 4096,
	       read_first ? "granted" : "went", after.huge_after_collapse);
	EXPECT(large_pages(&first) == 0, "the deny policy let %ld pages be large", large_pages(&first));
	EXPECT((size_t)after.huge_after_collapse == len / 4096,
	       "khugepaged collapsed %ld of %zu pages (mm not registered?)",
	       after.huge_after_collapse, len / 4096);
	cg_remove(cgroup);
	return 0;
}

/*
 * One PMD-sized mapping: its single PMD fault is the only chance to
 * register the mm (with two, the second one would hide a registration the
 * first missed).
 */
static int test_khugepaged_after_deny(void)
{
	return khugepaged_after_deny(KT_CG "/kdeny", 2UL << 20, false);
}

/*
 * 8 MiB read before it is written (calloc, a buffer pool's warm-up), on a
 * "madvise" host, under a policy that denies and then grants
 */
static int test_khugepaged_read_first(void)
{
	return khugepaged_after_deny(KT_CG "/kread", 8UL << 20, true);
}

/*
 * On a host whose sizes are all "madvise", a policy grants large folios to
 * a process that never called madvise(); a sibling without a policy gets
 * none; a policy granting every size cannot get past a size set to
 * "never" (the PMD size here: the largest granted is the one below it).
 */
static int test_grant_madvise(void)
{
	struct folio_report g, sib, nopmd;
	char p[128];
	int lfd;

	cg_make(KT_CG "/grant");
	cg_make(KT_CG "/nogrant");
	thp_set_all("madvise");
	skel->bss->allowed_a = ~0UL;
	lfd = attach(skel->maps.pol_mask_a, KT_CG "/grant");
	EXPECT(lfd >= 0, "attach: %s", strerror(-lfd));
	if (fault_in_cgroup(KT_CG "/grant", 4 << 20, false, &g) ||
	    fault_in_cgroup(KT_CG "/nogrant", 4 << 20, false, &sib))
		goto fail;
	snprintf(p, sizeof(p), THP_DIR "/hugepages-%lukB/enabled", (4096UL << 9) >> 10);
	write_str(p, "never");
	if (fault_in_cgroup(KT_CG "/grant", 4 << 20, false, &nopmd))
		goto fail;
	close(lfd);
	thp_set_all("always");
	printf("#   madvise host: granted main order %d (%ld of %d pages in 2M), no policy %ld large pages, PMD never: main order %d\n",
	       main_order(&g), g.pages[9], (4 << 20) / 4096, large_pages(&sib), main_order(&nopmd));
	EXPECT(g.pages[9] == (4 << 20) / 4096, "granted: %ld pages in 2M folios, want all",
	       g.pages[9]);
	EXPECT(large_pages(&sib) == 0, "a cgroup without a policy got %ld large pages",
	       large_pages(&sib));
	EXPECT(nopmd.pages[9] == 0 && main_order(&nopmd) == 8,
	       "PMD size never: %ld pages in 2M, main order %d, want 0 and 8",
	       nopmd.pages[9], main_order(&nopmd));
	return 0;
fail:
	thp_set_all("always");
	return -1;
}

/*
 * The second half of the grant tests, on a "madvise" host: fault in
 * @cgroup under the policy returning every size that a less privileged
 * child (*@pid, told to quit through @ctl) linked there, then under the
 * same object linked by root. The first must give no large folio, the
 * second PMD folios. @how says how the child linked it.
 */
static int expect_grant_by_root_only(const char *cgroup, const char *how,
				     pid_t *pid, int ctl)
{
	struct folio_report child = {}, root = {};
	int lfd, status, ret = -1;

	if (fault_in_cgroup(cgroup, 4 << 20, false, &child))
		return -1;
	EXPECT(write(ctl, "q", 1) == 1, "cannot tell the child to quit");
	waitpid(*pid, &status, 0);
	*pid = -1;
	skel->bss->allowed_a = ~0UL;
	lfd = attach(skel->maps.pol_mask_a, cgroup);
	EXPECT(lfd >= 0, "attach as root: %s", strerror(-lfd));
	if (fault_in_cgroup(cgroup, 4 << 20, false, &root))
		goto out;
	printf("#   madvise host, a policy returning every size: linked %s %ld of %d pages large (main order %d); linked by root %ld in 2M folios\n",
	       how, large_pages(&child), (4 << 20) / 4096, main_order(&child), root.pages[9]);
	if (large_pages(&child) != 0) {
		snprintf(fail_msg, sizeof(fail_msg), "a policy linked %s granted %ld large pages",
			 how, large_pages(&child));
		goto out;
	}
	if (root.pages[9] != (4 << 20) / 4096) {
		snprintf(fail_msg, sizeof(fail_msg),
			 "linked by root: %ld pages in 2M folios, want all", root.pages[9]);
		goto out;
	}
	ret = 0;
out:
	close(lfd);
	return ret;
}

/*
 * A policy whose map a task without CAP_SYS_ADMIN filled in and linked (as
 * a container or a BPF token's holder would, with CAP_BPF and CAP_PERFMON)
 * may take sizes away but not grant: on a "madvise" host its cgroup gets
 * 4 KiB folios from a policy returning every size; the same object linked
 * by root grants PMD folios there.
 */
static int test_grant_unprivileged(void)
{
	int up[2], down[2], status, ret = -1;
	pid_t pid;
	char c;

	cg_make(KT_CG "/unpriv");
	EXPECT(!pipe(up) && !pipe(down), "pipe: %s", strerror(errno));
	thp_set_all("madvise");
	pid = fork();
	if (pid == 0) {
		struct __user_cap_header_struct hdr = {
			.version = _LINUX_CAPABILITY_VERSION_3,
		};
		struct __user_cap_data_struct caps[2];
		struct ktest_policies *own;

		close(up[0]);
		close(down[1]);
		if (syscall(SYS_capget, &hdr, caps))
			_exit(2);
		caps[CAP_SYS_ADMIN / 32].effective &= ~(1U << (CAP_SYS_ADMIN % 32));
		if (syscall(SYS_capset, &hdr, caps))
			_exit(3);
		own = ktest_policies__open_and_load();
		if (!own)
			_exit(4);
		own->bss->allowed_a = ~0UL;
		if (!attach_link(own->maps.pol_mask_a, KT_CG "/unpriv"))
			_exit(5);
		/* hold the link until the parent has faulted */
		if (write(up[1], "a", 1) != 1 || read(down[0], &c, 1) != 1)
			_exit(6);
		_exit(0);
	}
	close(up[1]);
	close(down[0]);
	if (pid < 0 || read(up[0], &c, 1) != 1) {
		snprintf(fail_msg, sizeof(fail_msg),
			 "the child without CAP_SYS_ADMIN could not attach");
		goto out;
	}
	ret = expect_grant_by_root_only(KT_CG "/unpriv", "without CAP_SYS_ADMIN", &pid, down[1]);
out:
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
	}
	close(up[0]);
	close(down[1]);
	thp_set_all("always");
	cg_remove(KT_CG "/unpriv");
	return ret;
}

/* Pass @fd over the unix socket @sock (SCM_RIGHTS); -1 on error */
static int send_fd(int sock, int fd)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = {}, byte = 'f';
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);

	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	return sendmsg(sock, &msg, 0) == 1 ? 0 : -1;
}

/* The fd passed over @sock, or -1 */
static int recv_fd(int sock)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = {}, byte;
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *c;
	int fd;

	if (recvmsg(sock, &msg, 0) != 1)
		return -1;
	c = CMSG_FIRSTHDR(&msg);
	if (!c || c->cmsg_type != SCM_RIGHTS)
		return -1;
	memcpy(&fd, CMSG_DATA(c), sizeof(int));
	return fd;
}

/*
 * The child of test_grant_token(): root of a user namespace of its own
 * (and of a mount namespace, which fsopen() needs), it passes a bpffs
 * context to the parent to configure, gets the mounted bpffs back, loads
 * the test policies with a BPF token from it and links one that returns
 * every size to the cgroup; holds the link until told.
 */
static int token_child(int sock)
{
	LIBBPF_OPTS(bpf_object_open_opts, opts);
	struct ktest_policies *own;
	char path[64], c;
	int fs_fd, mnt_fd;

	if (unshare(CLONE_NEWUSER) ||
	    write_str("/proc/self/setgroups", "deny") ||
	    write_str("/proc/self/uid_map", "0 0 1") ||
	    write_str("/proc/self/gid_map", "0 0 1"))
		return 2;
	if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL))
		return 3;
	/* a bpffs owned by this user namespace: the token's scope */
	fs_fd = fsopen("bpf", 0);
	if (fs_fd < 0 || send_fd(sock, fs_fd))
		return 4;
	mnt_fd = recv_fd(sock);
	if (mnt_fd < 0)
		return 5;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", mnt_fd);
	opts.bpf_token_path = path;
	own = ktest_policies__open_opts(&opts);
	if (!own || ktest_policies__load(own))
		return 6;
	own->bss->allowed_a = ~0UL;
	if (!attach_link(own->maps.pol_mask_a, KT_CG "/token"))
		return 7;
	/* the map, filled in with the token, for root to link */
	if (send_fd(sock, bpf_map__fd(own->maps.pol_mask_a)) || read(sock, &c, 1) != 1)
		return 8;
	return 0;
}

/*
 * The right to grant is the linker's: @map_fd, filled in by a less
 * privileged task, linked to @cgroup by root grants PMD folios there on a
 * "madvise" host.
 */
static int expect_root_link_grants(int map_fd, const char *cgroup, const char *how)
{
	struct folio_report r = {};
	int cg, lfd;

	cg = open(cgroup, O_RDONLY | O_DIRECTORY);
	EXPECT(cg >= 0, "open %s: %s", cgroup, strerror(errno));
	lfd = bpf_link_create(map_fd, cg, BPF_STRUCT_OPS, NULL);
	close(cg);
	EXPECT(lfd >= 0, "root linking a map filled in %s: %s", how, strerror(-lfd));
	if (fault_in_cgroup(cgroup, 4 << 20, false, &r)) {
		close(lfd);
		return -1;
	}
	close(lfd);
	printf("#   a map filled in %s, linked by root: %ld of %d pages in 2M folios\n",
	       how, r.pages[9], (4 << 20) / 4096);
	EXPECT(r.pages[9] == (4 << 20) / 4096,
	       "a map filled in %s and linked by root: %ld pages in 2M folios, want all (the linker's right)",
	       how, r.pages[9]);
	return 0;
}

/*
 * A policy loaded and linked with a BPF token, from a user namespace (as in
 * a container), may take sizes away but not grant: on a "madvise" host
 * its cgroup gets 4 KiB folios from a policy returning every size; the
 * same object linked by root grants PMD folios there, and so does the
 * child's own map, filled in with the token, once root links it: the
 * right is the linker's. The parent, root of the initial user namespace,
 * delegates every command, map, program and attach type through the
 * bpffs, as a container runtime would.
 */
static int test_grant_token(void)
{
	int sv[2], status, fs_fd = -1, mnt_fd = -1, map_fd = -1, ret = -1;
	const char *keys[] = { "delegate_cmds", "delegate_maps",
			       "delegate_progs", "delegate_attachs" };
	size_t i;
	pid_t pid;

	cg_make(KT_CG "/token");
	EXPECT(!socketpair(AF_UNIX, SOCK_STREAM, 0, sv), "socketpair: %s", strerror(errno));
	thp_set_all("madvise");
	pid = fork();
	if (pid == 0) {
		close(sv[0]);
		_exit(token_child(sv[1]));
	}
	close(sv[1]);
	fs_fd = pid < 0 ? -1 : recv_fd(sv[0]);
	if (fs_fd < 0) {
		waitpid(pid, &status, 0);
		pid = -1;
		snprintf(fail_msg, sizeof(fail_msg),
			 "the child in a user namespace did not open a bpffs context (exit %d)",
			 WIFEXITED(status) ? WEXITSTATUS(status) : -1);
		goto out;
	}
	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (fsconfig(fs_fd, FSCONFIG_SET_STRING, keys[i], "any", 0)) {
			snprintf(fail_msg, sizeof(fail_msg), "fsconfig %s: %s", keys[i], strerror(errno));
			goto out;
		}
	if (fsconfig(fs_fd, FSCONFIG_CMD_CREATE, NULL, NULL, 0) ||
	    (mnt_fd = fsmount(fs_fd, 0, 0)) < 0 || send_fd(sv[0], mnt_fd)) {
		snprintf(fail_msg, sizeof(fail_msg), "bpffs for the token: %s", strerror(errno));
		goto out;
	}
	map_fd = recv_fd(sv[0]);
	if (map_fd < 0) {
		waitpid(pid, &status, 0);
		pid = -1;
		snprintf(fail_msg, sizeof(fail_msg), "the child could not load or link with a token (exit %d)",
			 WIFEXITED(status) ? WEXITSTATUS(status) : -1);
		goto out;
	}
	ret = expect_grant_by_root_only(KT_CG "/token", "with a BPF token from a user namespace",
					&pid, sv[0]);
	if (!ret)
		ret = expect_root_link_grants(map_fd, KT_CG "/token", "with a BPF token");
out:
	if (map_fd >= 0)
		close(map_fd);
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
	}
	if (mnt_fd >= 0)
		close(mnt_fd);
	if (fs_fd >= 0)
		close(fs_fd);
	close(sv[0]);
	thp_set_all("always");
	cg_remove(KT_CG "/token");
	return ret;
}

/* Set or clear CAP_SYS_ADMIN in this task's effective set; -errno */
static int set_cap_sys_admin(bool on)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct caps[2];
	__u32 bit = 1U << (CAP_SYS_ADMIN % 32);

	if (syscall(SYS_capget, &hdr, caps))
		return -errno;
	if (on)
		caps[CAP_SYS_ADMIN / 32].effective |= bit;
	else
		caps[CAP_SYS_ADMIN / 32].effective &= ~bit;
	return syscall(SYS_capset, &hdr, caps) ? -errno : 0;
}

/*
 * The child of grant_linked_without_admin(): with the test's maps, filled
 * in by root, inherited, it drops CAP_SYS_ADMIN, tries to put another map
 * on root's link @upd_fd, links pol_mask_a to @target, sends the update's
 * result on @up and holds the link until a byte comes on @down.
 */
static int linker_child(const char *target, int upd_fd, int up, int down)
{
	int upd_err;
	char c;

	if (set_cap_sys_admin(false))
		return 3;
	upd_err = bpf_link_update(upd_fd, bpf_map__fd(skel->maps.pol_mask_b), NULL);
	if (!attach_link(skel->maps.pol_mask_a, target))
		return 4;
	if (write(up, &upd_err, sizeof(upd_err)) != sizeof(upd_err) || read(down, &c, 1) != 1)
		return 5;
	return 0;
}

/*
 * A map root filled in, linked to @target by a task that dropped
 * CAP_SYS_ADMIN (the fd inherited), grants nothing: on a "madvise" host
 * @cgroup (@target or below it) gets 4 KiB folios from a policy returning
 * every size, and PMD folios once root links the same map. Nor may that
 * task put another map on a link root made (-EPERM): the link keeps its
 * creator's right.
 */
static int grant_linked_without_admin(const char *target, const char *cgroup)
{
	int up[2], down[2], upd_fd = -1, upd_err = 0, fd, status, ret = -1;
	char how[160];
	pid_t pid = -1;

	cg_make(cgroup);
	cg_make(KT_CG "/upd");
	EXPECT(!pipe(up) && !pipe(down), "pipe: %s", strerror(errno));
	thp_set_all("madvise");
	skel->bss->allowed_a = ~0UL;
	skel->bss->allowed_b = ~0UL;
	skel->bss->allowed_c = ~0UL;
	/* every map filled in by root first (libbpf fills a map when it links it) */
	fd = attach(skel->maps.pol_mask_a, KT_CG "/upd");
	if (fd >= 0)
		close(fd);
	fd = attach(skel->maps.pol_mask_b, KT_CG "/upd");
	if (fd >= 0)
		close(fd);
	upd_fd = attach(skel->maps.pol_mask_c, KT_CG "/upd");
	if (upd_fd < 0) {
		snprintf(fail_msg, sizeof(fail_msg), "attach as root: %s", strerror(-upd_fd));
		goto out;
	}
	pid = fork();
	if (pid == 0) {
		close(up[0]);
		close(down[1]);
		_exit(linker_child(target, upd_fd, up[1], down[0]));
	}
	close(up[1]);
	up[1] = -1;
	close(down[0]);
	down[0] = -1;
	if (pid < 0 || read(up[0], &upd_err, sizeof(upd_err)) != sizeof(upd_err)) {
		snprintf(fail_msg, sizeof(fail_msg),
			 "the child without CAP_SYS_ADMIN could not link a map root filled in");
		goto out;
	}
	snprintf(how, sizeof(how), "to %s by a task without CAP_SYS_ADMIN (map filled in by root)",
		 target);
	ret = expect_grant_by_root_only(cgroup, how, &pid, down[1]);
	printf("#   BPF_LINK_UPDATE of root's link by a task without CAP_SYS_ADMIN: %s\n",
	       upd_err ? strerror(-upd_err) : "done");
	if (!ret && upd_err != -EPERM) {
		snprintf(fail_msg, sizeof(fail_msg),
			 "a task without CAP_SYS_ADMIN updated root's link: %d, want -EPERM", upd_err);
		ret = -1;
	}
out:
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
	}
	if (upd_fd >= 0)
		close(upd_fd);
	close(up[0]);
	close(down[1]);
	thp_set_all("always");
	cg_remove(cgroup);
	cg_remove(KT_CG "/upd");
	return ret;
}

static int test_grant_linker_not_admin(void)
{
	return grant_linked_without_admin(KT_CG "/linker", KT_CG "/linker");
}

/* The root cgroup takes the same right as any other */
static int test_grant_root_cgroup(void)
{
	return grant_linked_without_admin(CG_ROOT, KT_CG "/under_root");
}

/* Is @pid's mm registered with khugepaged? 1 or 0; -1 if it cannot tell */
static int khugepaged_registered(pid_t pid)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts);
	struct mm_flags_args a = { .pid = pid };
	int err;

	opts.ctx_in = &a;
	opts.ctx_size_in = sizeof(a);
	err = bpf_prog_test_run_opts(bpf_program__fd(skel->progs.read_mm_flags), &opts);
	if (err || opts.retval || !a.has_mm)
		return -1;
	return !!(a.flags & (1ULL << KTEST_MMF_VM_HUGEPAGE));
}

/*
 * A process that faults in fresh anonymous memory on request, in an mm of
 * its own: exec'd, since fork() would copy a registration of ktest's mm.
 */
struct faulter {
	pid_t pid;
	int cmd;	/* a byte written here: fault FAULTER_LEN more bytes */
	int done;	/* a byte read here: done */
};

#define FAULTER_LEN (4UL << 20)

static int faulter_child(int cmd, int done)
{
	char c, *buf;
	size_t i;

	/* 'f': fault all of a fresh mapping; 'p': only its first page */
	while (read(cmd, &c, 1) == 1) {
		buf = mmap(NULL, FAULTER_LEN, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (buf == MAP_FAILED)
			return 3;
		for (i = 0; i < (c == 'p' ? 4096 : FAULTER_LEN); i += 4096)
			buf[i] = 1;
		if (write(done, "d", 1) != 1)
			return 4;
	}
	return 0;
}

static int faulter_start(struct faulter *f, const char *cgroup)
{
	int cmd[2], done[2];
	char a1[16], a2[16];

	/*
	 * Close-on-exec: a faulter started later must not keep this one's
	 * command pipe open, or it never sees the end of its commands.
	 */
	if (pipe2(cmd, O_CLOEXEC) || pipe2(done, O_CLOEXEC))
		return -1;
	f->pid = fork();
	if (f->pid == 0) {
		if (cg_enter(cgroup))
			_exit(2);
		/* dup() leaves the faulter's own ends open across exec */
		snprintf(a1, sizeof(a1), "%d", dup(cmd[0]));
		snprintf(a2, sizeof(a2), "%d", dup(done[1]));
		execl("/proc/self/exe", "ktest", "--faulter", a1, a2, (char *)NULL);
		_exit(127);
	}
	close(cmd[0]);
	close(done[1]);
	f->cmd = cmd[1];
	f->done = done[0];
	return f->pid < 0 ? -1 : 0;
}

/* 1 if registered after faulting (@what: 'f' or 'p'), 0 if not, -1 */
static int faulter_request(struct faulter *f, char what)
{
	char c;

	if (write(f->cmd, &what, 1) != 1 || read(f->done, &c, 1) != 1)
		return -1;
	return khugepaged_registered(f->pid);
}

/* 1 if registered after faulting FAULTER_LEN more bytes, 0 if not, -1 */
static int faulter_fault(struct faulter *f)
{
	return faulter_request(f, 'f');
}

static void faulter_stop(struct faulter *f)
{
	if (f->pid <= 0)
		return;
	close(f->cmd);
	close(f->done);
	waitpid(f->pid, NULL, 0);
	f->pid = 0;
}

/*
 * khugepaged registration follows the policies in effect, not whether one
 * is attached anywhere: on a "madvise" host, with a policy returning every
 * size attached to cgroup A and another to C, a process in A is registered
 * on its anonymous faults, one in the sibling B is not; after A's policy is
 * detached (C's still attached), and after C's too, B faulting more is
 * still not registered.
 */
static int test_khugepaged_registration(void)
{
	struct faulter a = {}, b = {};
	int lfd_a = -1, lfd_c = -1, ret = -1;
	int reg_a, reg_b, reg_b_detached, reg_b_none, reg_a_detached;

	cg_make(KT_CG "/reg_a");
	cg_make(KT_CG "/reg_b");
	cg_make(KT_CG "/reg_c");
	thp_set_all("madvise");
	skel->bss->allowed_a = ~0UL;
	skel->bss->allowed_b = ~0UL;
	lfd_a = attach(skel->maps.pol_mask_a, KT_CG "/reg_a");
	lfd_c = attach(skel->maps.pol_mask_b, KT_CG "/reg_c");
	if (lfd_a < 0 || lfd_c < 0) {
		snprintf(fail_msg, sizeof(fail_msg), "attach: %s",
			 strerror(-(lfd_a < 0 ? lfd_a : lfd_c)));
		goto out;
	}
	if (faulter_start(&a, KT_CG "/reg_a") || faulter_start(&b, KT_CG "/reg_b")) {
		snprintf(fail_msg, sizeof(fail_msg), "fork: %s", strerror(errno));
		goto out;
	}
	reg_a = faulter_fault(&a);
	reg_b = faulter_fault(&b);
	close(lfd_a);
	lfd_a = -1;
	reg_b_detached = faulter_fault(&b);
	reg_a_detached = faulter_fault(&a);
	close(lfd_c);
	lfd_c = -1;
	reg_b_none = faulter_fault(&b);
	printf("#   madvise host, registered with khugepaged: policy on A and C: A %d, B %d; A's detached: B %d (A %d, left from before); none attached: B %d\n",
	       reg_a, reg_b, reg_b_detached, reg_a_detached, reg_b_none);
	if (reg_a != 1 || reg_b != 0 || reg_b_detached != 0 || reg_b_none != 0) {
		snprintf(fail_msg, sizeof(fail_msg),
			 "want A 1, B 0, 0, 0; got A %d, B %d, %d, %d (-1: unknown)",
			 reg_a, reg_b, reg_b_detached, reg_b_none);
		goto out;
	}
	ret = 0;
out:
	faulter_stop(&a);
	faulter_stop(&b);
	if (lfd_a >= 0)
		close(lfd_a);
	if (lfd_c >= 0)
		close(lfd_c);
	thp_set_all("always");
	cg_remove(KT_CG "/reg_a");
	cg_remove(KT_CG "/reg_b");
	cg_remove(KT_CG "/reg_c");
	return ret;
}

#define STALE_PROCS 200
#define STALE_WINDOW_S 5

struct khugepaged_rate {
	long long passes;	/* full_scans over the window */
	long long cpu_ms;	/* khugepaged's CPU time over it */
};

/* khugepaged's pid, or -1 */
static pid_t khugepaged_pid(void)
{
	char path[64], comm[32];
	struct dirent *d;
	pid_t pid = -1;
	DIR *dir = opendir("/proc");

	while (dir && pid < 0 && (d = readdir(dir))) {
		if (!isdigit((unsigned char)d->d_name[0]))
			continue;
		snprintf(path, sizeof(path), "/proc/%s/comm", d->d_name);
		if (!read_str(path, comm, sizeof(comm)) && !strcmp(comm, "khugepaged\n"))
			pid = atoi(d->d_name);
	}
	if (dir)
		closedir(dir);
	return pid;
}

/* utime + stime of @pid in ms, or -1 */
static long long task_cpu_ms(pid_t pid)
{
	unsigned long long ut, st;
	char path[64], buf[1024], *p;
	FILE *f;
	int n;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n > 0 ? n : 0] = 0;
	/* the fields after the command name: state is field 3, utime 14 */
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu",
			 &ut, &st) != 2)
		return -1;
	return (long long)(ut + st) * 1000 / sysconf(_SC_CLK_TCK);
}

static long long read_ll(const char *path)
{
	char buf[32];

	return read_str(path, buf, sizeof(buf)) ? -1 : atoll(buf);
}

/* khugepaged's full passes and CPU time over STALE_WINDOW_S seconds */
static int khugepaged_measure(pid_t kh, struct khugepaged_rate *r)
{
	long long scans0 = read_ll(THP_DIR "/khugepaged/full_scans"), cpu0 = task_cpu_ms(kh);

	sleep(STALE_WINDOW_S);
	r->passes = read_ll(THP_DIR "/khugepaged/full_scans") - scans0;
	r->cpu_ms = task_cpu_ms(kh) - cpu0;
	return scans0 < 0 || cpu0 < 0 ? -1 : 0;
}

/* VMAs of @pid (lines of /proc/PID/maps), or -1 */
static int count_vmas(pid_t pid)
{
	char path[64], line[512];
	int n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		n++;
	fclose(f);
	return n;
}

/*
 * What the khugepaged slots a detach leaves behind cost (the series keeps
 * them until the mm exits, as upstream keeps an mm whose advised VMA went
 * away): STALE_PROCS processes of one cgroup registered under a policy on
 * a "madvise" host (a deny-all one: registration does not ask the policy,
 * and 4 KiB pages keep the VM's memory free), then the policy detached.
 * khugepaged, woken every 100 ms, is measured over STALE_WINDOW_S s with
 * one probe process registered under a policy of its own, then with the
 * stale mms beside it, then after they exited: full passes over its list
 * and CPU time. A figure, not a timed assertion: the test fails only if
 * the stale mms did not stay registered, so that nothing was measured.
 */
static int test_khugepaged_stale_slots(void)
{
	static struct faulter stale[STALE_PROCS];
	struct khugepaged_rate alone = {}, with = {}, after = {};
	struct faulter probe = {};
	int lfd_a = -1, lfd_b = -1, ret = -1, registered = 0, vmas = -1, i;
	char pages_to_scan[32] = "?";
	pid_t kh = khugepaged_pid();

	cg_make(KT_CG "/stale");
	cg_make(KT_CG "/probe");
	thp_set_all("madvise");
	if (!read_str(THP_DIR "/khugepaged/pages_to_scan", pages_to_scan, sizeof(pages_to_scan)))
		pages_to_scan[strcspn(pages_to_scan, "\n")] = 0;
	skel->bss->allowed_a = 0;
	skel->bss->allowed_b = ~0UL;
	lfd_a = attach(skel->maps.pol_mask_a, KT_CG "/stale");
	lfd_b = attach(skel->maps.pol_mask_b, KT_CG "/probe");
	if (kh < 0 || lfd_a < 0 || lfd_b < 0) {
		snprintf(fail_msg, sizeof(fail_msg), "khugepaged pid %d, attach: %s", kh,
			 strerror(-(lfd_a < 0 ? lfd_a : lfd_b)));
		goto out;
	}
	if (faulter_start(&probe, KT_CG "/probe") || faulter_fault(&probe) != 1 ||
	    khugepaged_measure(kh, &alone)) {
		snprintf(fail_msg, sizeof(fail_msg), "probe not registered, or no counters");
		goto out;
	}
	for (i = 0; i < STALE_PROCS; i++) {
		if (faulter_start(&stale[i], KT_CG "/stale")) {
			snprintf(fail_msg, sizeof(fail_msg), "fork: %s", strerror(errno));
			goto out;
		}
		registered += faulter_request(&stale[i], 'p') == 1;
	}
	vmas = count_vmas(stale[0].pid);
	close(lfd_a);
	lfd_a = -1;
	for (i = 0, registered = 0; i < STALE_PROCS; i++)
		registered += khugepaged_registered(stale[i].pid) == 1;
	khugepaged_measure(kh, &with);
	for (i = 0; i < STALE_PROCS; i++)
		faulter_stop(&stale[i]);
	khugepaged_measure(kh, &after);
	printf("#   khugepaged every 100 ms, pages_to_scan %s, over %d s: probe alone %lld passes, %lld ms CPU; with %d stale mms of %d VMAs each (policy detached) %lld passes, %lld ms CPU; after they exited %lld passes, %lld ms CPU\n",
	       pages_to_scan, STALE_WINDOW_S, alone.passes, alone.cpu_ms, registered, vmas,
	       with.passes, with.cpu_ms, after.passes, after.cpu_ms);
	if (registered != STALE_PROCS) {
		snprintf(fail_msg, sizeof(fail_msg),
			 "%d of %d mms still registered after the detach: nothing measured",
			 registered, STALE_PROCS);
		goto out;
	}
	ret = 0;
out:
	for (i = 0; i < STALE_PROCS; i++)
		faulter_stop(&stale[i]);
	faulter_stop(&probe);
	if (lfd_a >= 0)
		close(lfd_a);
	if (lfd_b >= 0)
		close(lfd_b);
	thp_set_all("always");
	cg_remove(KT_CG "/stale");
	cg_remove(KT_CG "/probe");
	return ret;
}

/* A counter of /proc/vmstat, or -1 if this kernel has none by that name */
static long long vmstat_read(const char *name)
{
	char line[128];
	size_t n = strlen(name);
	long long val = -1;
	FILE *f = fopen("/proc/vmstat", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, name, n) && line[n] == ' ') {
			val = atoll(line + n + 1);
			break;
		}
	fclose(f);
	return val;
}

struct collapse_report {
	long fill_ms;		/* the fill of the whole mapping */
	long pages_2m;		/* pages in PMD folios after it */
};

#define COLLAPSE_REFAULT_ROUNDS 2

/*
 * Wait for a byte on @rfd ('f': fill, 'r': fill, then refault), fill @len
 * bytes of a fresh mapping one write per 4 KiB page, timed, and report. 'r'
 * then gives back one 4 KiB page of every 2 MiB range and writes it again,
 * COLLAPSE_REFAULT_ROUNDS times, as an allocator returning freed pages
 * does: each such page faults again in a range a collapse could fill.
 */
static int collapse_child(size_t len, int wfd, int rfd)
{
	struct collapse_report r = {};
	long hist[MAX_ORDER_SEEN + 1];
	struct timespec t0, t1;
	size_t i, off, page;
	char *buf, go;
	int round;

	buf = map_aligned(len);
	if (!buf || read(rfd, &go, 1) != 1)
		return 3;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < len; i += 4096)
		buf[i] = 1;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	r.fill_ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
	if (folio_histogram(buf, len, hist))
		return 4;
	r.pages_2m = hist[9];
	for (round = 0; go == 'r' && round < COLLAPSE_REFAULT_ROUNDS; round++)
		for (off = 0; off < len; off += SZ_2M) {
			page = off + 4096 * (1 + round);
			if (madvise(buf + page, 4096, MADV_DONTNEED))
				return 5;
			buf[page] = 2;
		}
	return write(wfd, &r, sizeof(r)) == sizeof(r) ? 0 : 6;
}

/* Run collapse_child() in @cgroup as collapse_tgid; @go as it takes it */
static int collapse_run(const char *cgroup, size_t len, char go, struct collapse_report *r)
{
	int up[2], down[2], status, ret = -1;
	pid_t pid;

	if (pipe(up) || pipe(down))
		return -1;
	pid = exec_child_in_cgroup(cgroup, "--collapse-child", len, up, down);
	if (pid > 0) {
		skel->bss->collapse_tgid = pid;
		if (write(down[1], &go, 1) == 1 && read(up[0], r, sizeof(*r)) == sizeof(*r))
			ret = 0;
		waitpid(pid, &status, 0);
	}
	close(up[0]);
	close(down[1]);
	if (ret)
		snprintf(fail_msg, sizeof(fail_msg), "collapse child in %s failed", cgroup);
	return ret;
}

static void collapse_counts_reset(void)
{
	skel->bss->collapse_queued = 0;
	skel->bss->collapse_again = 0;
	skel->bss->collapse_busy = 0;
	skel->bss->collapse_perm = 0;
	skel->bss->collapse_other = 0;
}

/*
 * bpf_mthp_collapse_on_return() is bounded: a policy asking for a collapse
 * on every page fault of a 256 MiB fill, and again on every refault of a
 * page given back in each 2 MiB range, gets no more collapses (each one
 * an LRU drain of every CPU: thp_collapse_on_return in /proc/vmstat counts
 * them) than the mapping has 2 MiB ranges; in fact one per khugepaged
 * sleep (scan_sleep_millisecs, 10 s here). The first fault's collapse
 * runs (its range is in a PMD folio after the fill). A policy linked
 * without CAP_SYS_ADMIN, which may not grant, may not collapse (-EPERM).
 * Prints the fill's time with and without the calls.
 */
static int test_collapse_bounded(void)
{
	const size_t len = 256UL << 20, ranges = len / SZ_2M;
	struct collapse_report without = {}, with = {}, denied = {};
	long long runs0, runs1, runs2, allocs0, allocs1;
	unsigned long long queued, again, perm;
	int lfd = -1, ret = -1;

	cg_make(KT_CG "/collapse");
	write_str(SCAN_SLEEP, "10000");
	lfd = attach(skel->maps.pol_collapse_each, KT_CG "/collapse");
	if (lfd < 0) {
		snprintf(fail_msg, sizeof(fail_msg), "attach: %s", strerror(-lfd));
		goto out;
	}
	skel->bss->collapse_call = 0;
	if (collapse_run(KT_CG "/collapse", len, 'f', &without))
		goto out;
	collapse_counts_reset();
	skel->bss->collapse_call = 1;
	runs0 = vmstat_read("thp_collapse_on_return");
	allocs0 = vmstat_read("thp_collapse_alloc");
	if (collapse_run(KT_CG "/collapse", len, 'r', &with))
		goto out;
	runs1 = vmstat_read("thp_collapse_on_return");
	allocs1 = vmstat_read("thp_collapse_alloc");
	queued = skel->bss->collapse_queued;
	again = skel->bss->collapse_again;
	close(lfd);
	/* linked without CAP_SYS_ADMIN: may not grant, so may not collapse */
	set_cap_sys_admin(false);
	lfd = attach(skel->maps.pol_collapse_each, KT_CG "/collapse");
	set_cap_sys_admin(true);
	if (lfd < 0) {
		snprintf(fail_msg, sizeof(fail_msg), "attach without CAP_SYS_ADMIN: %s",
			 strerror(-lfd));
		goto out;
	}
	collapse_counts_reset();
	if (collapse_run(KT_CG "/collapse", 16UL << 20, 'f', &denied))
		goto out;
	runs2 = vmstat_read("thp_collapse_on_return");
	perm = skel->bss->collapse_perm;
	printf("#   fill of %zu MiB, 4 KiB faults: %ld ms without the calls, %ld ms with a call on every fault\n",
	       len >> 20, without.fill_ms, with.fill_ms);
	printf("#   %zu ranges, fill and %d refaults per range: %llu collapses queued, %llu -EAGAIN, %llu -EBUSY, %llu other; collapse runs (LRU drains) %lld, PMD folios allocated %lld, %ld pages in 2M folios after the fill\n",
	       ranges, COLLAPSE_REFAULT_ROUNDS, queued, again, skel->bss->collapse_busy,
	       skel->bss->collapse_other, runs1 - runs0, allocs1 - allocs0, with.pages_2m);
	printf("#   linked without CAP_SYS_ADMIN: %llu calls -EPERM, %llu queued, collapse runs %lld\n",
	       perm, skel->bss->collapse_queued, runs2 - runs1);
	if (queued > ranges) {
		snprintf(fail_msg, sizeof(fail_msg), "%llu collapses queued for %zu ranges", queued, ranges);
		goto out;
	}
	if (runs0 < 0 || runs1 - runs0 > (long long)ranges || runs1 - runs0 < 1) {
		snprintf(fail_msg, sizeof(fail_msg),
			 "collapse runs (thp_collapse_on_return) %lld, want 1..%zu", runs1 - runs0, ranges);
		goto out;
	}
	if (with.pages_2m < 512) {
		snprintf(fail_msg, sizeof(fail_msg), "the first fault's collapse did not run: %ld pages in 2M",
			 with.pages_2m);
		goto out;
	}
	if (!perm || skel->bss->collapse_queued || runs2 != runs1) {
		snprintf(fail_msg, sizeof(fail_msg),
			 "a policy linked without CAP_SYS_ADMIN: %llu -EPERM, %llu queued, %lld runs; want >0, 0, 0",
			 perm, skel->bss->collapse_queued, runs2 - runs1);
		goto out;
	}
	ret = 0;
out:
	skel->bss->collapse_call = 0;
	skel->bss->collapse_tgid = 0;
	if (lfd >= 0)
		close(lfd);
	write_str(SCAN_SLEEP, "100");
	cg_remove(KT_CG "/collapse");
	return ret;
}

static int expect_rejected(const char *obj_path, const char *needle)
{
	struct bpf_object *obj;
	int err;

	libbpf_log_len = 0;
	libbpf_log[0] = 0;
	obj = bpf_object__open_file(obj_path, NULL);
	EXPECT(obj, "open %s: %s", obj_path, strerror(errno));
	err = bpf_object__load(obj);
	bpf_object__close(obj);
	EXPECT(err, "%s was accepted", obj_path);
	EXPECT(strstr(libbpf_log, needle), "verifier log of %s lacks \"%s\"", obj_path, needle);
	printf("#   %s: refused with \"%s\"\n", obj_path, needle);
	return 0;
}

static char objdir[256];

static int test_verifier_rejects(void)
{
	char p[512];

	snprintf(p, sizeof(p), "%s/ktest_reject_sleepable.bpf.o", objdir);
	if (expect_rejected(p, "attach to unsupported member choose_orders of struct bpf_mthp_ops"))
		return -1;
	snprintf(p, sizeof(p), "%s/ktest_reject_signature.bpf.o", objdir);
	return expect_rejected(p, "func 'choose_orders' doesn't have 4-th argument");
}

static int read_psi(const char *cgroup, struct psi_args *a)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts);
	int err;

	memset(a, 0, sizeof(*a));
	a->cgroup_id = cgroup_id_of(cgroup);
	/* A syscall program's context is copied back to ctx_in */
	opts.ctx_in = a;
	opts.ctx_size_in = sizeof(*a);
	err = bpf_prog_test_run_opts(bpf_program__fd(skel->progs.read_psi), &opts);
	if (err || opts.retval) {
		snprintf(fail_msg, sizeof(fail_msg), "read_psi(%s): err %d retval %d",
			 cgroup, err, opts.retval);
		return -1;
	}
	return 0;
}

static void zram_swap_on(void)
{
	char buf[256];

	if (!read_str("/proc/swaps", buf, sizeof(buf)) && strstr(buf, "zram0"))
		return;
	write_str("/sys/block/zram0/disksize", "512M");
	if (system("mkswap /dev/zram0 >/dev/null && swapon /dev/zram0"))
		fprintf(stderr, "# zram swap could not be enabled\n");
}

static int test_psi_kfunc(void)
{
	struct psi_args t0, t1, i0, i1;
	pid_t thr, idle;

	zram_swap_on();
	cg_make(KT_CG "/thrash");
	cg_make(KT_CG "/idle");
	EXPECT(!write_str(KT_CG "/thrash/memory.high", "16M"), "memory.high: %s", strerror(errno));
	idle = fork();
	if (idle == 0) {
		cg_enter(KT_CG "/idle");
		pause();
		_exit(0);
	}
	usleep(200000);
	if (read_psi(KT_CG "/thrash", &t0) || read_psi(KT_CG "/idle", &i0))
		return -1;
	EXPECT(t0.bad_state == -EINVAL, "an unknown stall gave %lld, want -EINVAL",
	       (long long)t0.bad_state);
	EXPECT(t0.mem_some >= 0 && i0.mem_some >= 0, "stall read failed: %lld %lld",
	       (long long)t0.mem_some, (long long)i0.mem_some);
	thr = fork();
	if (thr == 0) {
		size_t len = 64 << 20, i;
		char *p;
		time_t end = time(NULL) + 2;

		cg_enter(KT_CG "/thrash");
		p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		while (time(NULL) < end)
			for (i = 0; i < len; i += 4096)
				p[i]++;
		_exit(0);
	}
	waitpid(thr, NULL, 0);
	/* Read at once: the periodic aggregation may not have run yet. */
	if (read_psi(KT_CG "/thrash", &t1) || read_psi(KT_CG "/idle", &i1))
		return -1;
	kill(idle, SIGKILL);
	waitpid(idle, NULL, 0);
	printf("#   thrasher cgroup: memory some +%.1f ms, full +%.1f ms; idle cgroup: some +%.1f ms, full +%.1f ms\n",
	       (t1.mem_some - t0.mem_some) / 1e6, (t1.mem_full - t0.mem_full) / 1e6,
	       (i1.mem_some - i0.mem_some) / 1e6, (i1.mem_full - i0.mem_full) / 1e6);
	EXPECT(t1.mem_some - t0.mem_some > 10 * 1000000LL, "thrasher's memory stall grew only %lld ns",
	       (long long)(t1.mem_some - t0.mem_some));
	EXPECT(t1.mem_full > t0.mem_full, "thrasher's full stall did not grow");
	EXPECT(i1.mem_some == i0.mem_some && i1.mem_full == i0.mem_full,
	       "idle cgroup's stall moved: %lld -> %lld", (long long)i0.mem_some, (long long)i1.mem_some);
	return 0;
}

/* Run only when booted with psi=0 */
static int test_psi_disabled(void)
{
	struct psi_args a;

	cg_make(KT_CG "/nopsi");
	if (read_psi(KT_CG "/nopsi", &a))
		return -1;
	EXPECT(a.mem_some == -EOPNOTSUPP && a.mem_full == -EOPNOTSUPP,
	       "with psi=0: %lld %lld, want -EOPNOTSUPP", (long long)a.mem_some,
	       (long long)a.mem_full);
	printf("#   psi=0: bpf_cgroup_psi_stall returns -EOPNOTSUPP\n");
	return 0;
}

struct test {
	const char *name;
	int (*fn)(void);
	bool by_default;
};

static const struct test tests[] = {
	{ "link_attach_detach_query", test_link_attach_detach_query, true },
	{ "order_query_cap", test_order_query_cap, true },
	{ "folio_sizes", test_folio_sizes, true },
	{ "folio_layout_64k", test_folio_layout_64k, true },
	{ "pin_outlives_creator", test_pin_outlives_creator, true },
	{ "cgroup_removal_detaches", test_cgroup_removal_detaches, true },
	{ "hierarchy", test_hierarchy, true },
	{ "tva_type", test_tva_type, true },
	{ "one_call_per_fault", test_one_call_per_fault, true },
	{ "khugepaged_after_deny", test_khugepaged_after_deny, true },
	{ "khugepaged_read_first", test_khugepaged_read_first, true },
	{ "grant_madvise", test_grant_madvise, true },
	{ "grant_unprivileged", test_grant_unprivileged, true },
	{ "grant_token", test_grant_token, true },
	{ "grant_linker_not_admin", test_grant_linker_not_admin, true },
	{ "grant_root_cgroup", test_grant_root_cgroup, true },
	{ "khugepaged_registration", test_khugepaged_registration, true },
	{ "khugepaged_stale_slots", test_khugepaged_stale_slots, true },
	{ "collapse_bounded", test_collapse_bounded, true },
	{ "verifier_rejects", test_verifier_rejects, true },
	{ "psi_kfunc", test_psi_kfunc, true },
	{ "psi_disabled", test_psi_disabled, false },
};

static void run(const struct test *t)
{
	fail_msg[0] = 0;
	if (t->fn() == 0) {
		passes++;
		printf("ok - %s\n", t->name);
	} else {
		failures++;
		printf("not ok - %s: %s\n", t->name, fail_msg);
	}
	fflush(stdout);
}

int main(int argc, char **argv)
{
	struct statfs fs;
	char *slash;
	size_t i;
	int a;

	if (argc == 5 && !strcmp(argv[1], "--fresh-mm-child"))
		return fresh_mm_child(strtoul(argv[2], NULL, 0), atoi(argv[3]), atoi(argv[4]),
				      false);
	if (argc == 5 && !strcmp(argv[1], "--fresh-mm-child-read-first"))
		return fresh_mm_child(strtoul(argv[2], NULL, 0), atoi(argv[3]), atoi(argv[4]),
				      true);
	if (argc == 5 && !strcmp(argv[1], "--collapse-child"))
		return collapse_child(strtoul(argv[2], NULL, 0), atoi(argv[3]), atoi(argv[4]));
	if (argc == 4 && !strcmp(argv[1], "--faulter"))
		return faulter_child(atoi(argv[2]), atoi(argv[3]));
	setvbuf(stdout, NULL, _IOLBF, 0);
	snprintf(objdir, sizeof(objdir), "%s", argv[0]);
	slash = strrchr(objdir, '/');
	if (slash)
		*slash = 0;
	else
		snprintf(objdir, sizeof(objdir), ".");
	libbpf_set_print(capture_print);

	if (geteuid()) {
		fprintf(stderr, "ktest: must run as root (inside the VM)\n");
		return 2;
	}
	skel = ktest_policies__open_and_load();
	if (!skel) {
		fprintf(stderr, "ktest: cannot load the test policies: %s\n%s",
			strerror(errno), libbpf_log);
		return 1;
	}
	/* virtme-ng does not mount bpffs; the pin test needs it */
	if (statfs(PIN_DIR, &fs) || fs.f_type != BPF_FS_MAGIC) {
		if (mount("bpf", PIN_DIR, "bpf", 0, NULL)) {
			fprintf(stderr, "ktest: cannot mount bpffs on %s: %s\n",
				PIN_DIR, strerror(errno));
			ktest_policies__destroy(skel);
			return 1;
		}
	}
	thp_save();
	thp_set_all("always");
	cg_enable_memory(CG_ROOT);
	cg_remove(KT_CG);
	cg_make(KT_CG);
	cg_enable_memory(KT_CG);

	for (i = 0; i < sizeof(tests) / sizeof(tests[0]); i++) {
		bool want = argc == 1 && tests[i].by_default;

		for (a = 1; a < argc; a++)
			want |= !strcmp(argv[a], tests[i].name);
		if (want)
			run(&tests[i]);
	}

	cg_remove(KT_CG);
	thp_restore();
	ktest_policies__destroy(skel);
	printf("%d passed, %d failed\n", passes, failures);
	return failures ? 1 : 0;
}
