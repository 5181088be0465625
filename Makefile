# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# mthpctl: build, test and install. `make V=1` shows the commands.

OUTPUT		:= .output
# The tool, natively: ./mthpctl. `make ARCH=arm64` cross-builds it and its BPF
# objects into .output-arm64/ (the tool as .output-arm64/mthpctl) with
# CROSS_COMPILE (default aarch64-linux-gnu- on another host), libbpf
# cross-compiled by scripts/bpf-toolchain.sh, and the arm64 kernel's
# vmlinux.h (include/vmlinux/arm64/).
TOOL		:= mthpctl
ifneq ($(filter arm64 aarch64,$(ARCH)),)
override ARCH	:= arm64
ifneq ($(shell uname -m),aarch64)
CROSS_COMPILE	?= aarch64-linux-gnu-
endif
OUTPUT		:= .output-arm64
TOOL		:= $(OUTPUT)/mthpctl
export ARCH CROSS_COMPILE
endif
ifneq ($(CROSS_COMPILE),)
CC		:= $(CROSS_COMPILE)gcc
endif
PREFIX		?= /usr/local
DESTDIR		?=
SBINDIR		?= $(PREFIX)/sbin
MANDIR		?= $(PREFIX)/share/man
BASHCOMPDIR	?= $(PREFIX)/share/bash-completion/completions
# systemd reads units from /usr/local/lib/systemd/system as well
SYSTEMDUNITDIR	?= $(PREFIX)/lib/systemd/system
SYSCONFDIR	?= /etc
# the example policies (objects and sources) and the headers for writing one
DATADIR		?= $(PREFIX)/share/mthpctl
INCLUDEDIR	?= $(PREFIX)/include

CC		?= cc
CLANG		?= clang-19
RST2MAN		?= rst2man
VERSION		:= 0.1.0

CFLAGS		?= -O2 -g
WARN		:= -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers \
		   -Wno-format-truncation
BASE_CFLAGS	:= $(WARN) -std=gnu11 -D_GNU_SOURCE \
		   -DMTHPCTL_VERSION='"$(VERSION)"' -DMTHPCTL_SRC_DIR='"$(CURDIR)"' \
		   -Iinclude -Isrc -I$(OUTPUT)
USER_CFLAGS	:= $(CFLAGS) $(BASE_CFLAGS)

# AddressSanitizer + UndefinedBehaviorSanitizer builds (clang-19): the unit
# tests, the tool (libbpf.a stays uninstrumented) and the fuzz targets.
SAN_FLAGS	:= -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
SAN_CFLAGS	:= -O1 -g $(SAN_FLAGS) $(BASE_CFLAGS)
SAN_OUT		:= $(OUTPUT)/asan
FUZZ_OUT	:= $(OUTPUT)/fuzz
# every report is fatal; leaks are reported at exit
SAN_ENV		:= ASAN_OPTIONS=halt_on_error=1:detect_leaks=1:abort_on_error=0 \
		   UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1

ifeq ($(V),1)
Q :=
msg :=
else
Q := @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
MAKEFLAGS += --no-print-directory
endif

# libbpf + bpftool: a matched pair built from the kernel tree by
# scripts/bpf-toolchain.sh (see README.md, Requirements). Override with
# BPF_TOOLCHAIN=DIR (containing include/, lib/libbpf.a, bin/bpftool).
NO_TOOLCHAIN_GOALS := clean unit-check unit-check-asan fuzz fuzz-short fuzz-build nri-check nri-plugin \
		      compile-bench check-arm64
ifeq ($(BPF_TOOLCHAIN),)
ifneq ($(filter-out $(NO_TOOLCHAIN_GOALS),$(or $(MAKECMDGOALS),all)),)
-include $(OUTPUT)/toolchain.mk
endif
endif
BPFTOOL		?= $(BPF_TOOLCHAIN)/bin/bpftool
LIBBPF_A	:= $(BPF_TOOLCHAIN)/lib/libbpf.a
LIBBPF_INC	:= $(BPF_TOOLCHAIN)/include

# The committed vmlinux header of the patched kernel; until it exists, a
# temporary one is generated from the running kernel's BTF (never committed).
VMLINUX_H	:= $(if $(wildcard include/vmlinux/vmlinux.h),include/vmlinux/vmlinux.h,$(OUTPUT)/vmlinux/vmlinux.h)
ifeq ($(ARCH),arm64)
# arm64: the header of the arm64 kernel (scripts/gen-vmlinux-h.sh with
# ARCH=arm64); without it, one generated from that kernel's BTF, building
# the kernel if needed (never the build host's BTF, another architecture's)
VMLINUX_H	:= $(if $(wildcard include/vmlinux/arm64/vmlinux.h),include/vmlinux/arm64/vmlinux.h,$(OUTPUT)/vmlinux/vmlinux.h)
endif

include scripts/bpf-arch.mk
BPF_CFLAGS	:= -g -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_$(BPF_ARCH) -Wall \
		   -Wno-missing-declarations -Iinclude -I$(dir $(VMLINUX_H)) -I$(LIBBPF_INC)

# mthpctl bench (src/bench/): the benchmarks, calling attach and detach.
BENCH_SRCS	:= src/bench/bench.c src/bench/bench_setup.c src/bench/bench_env.c src/bench/bench_proc.c \
		   src/bench/bench_cgroup.c src/bench/bench_measure.c src/bench/bench_report.c \
		   src/bench/bench_redis.c src/bench/bench_redis_report.c \
		   src/bench/bench_pagefault.c src/bench/bench_pagefault_report.c src/bench/bench_sparse.c src/bench/bench_hook.c \
		   src/bench/bench_workload.c src/bench/bench_wl_kinds.c src/bench/bench_mixed.c \
		   src/bench/bench_rounds.c src/bench/bench_wl_compile.c src/bench/bench_start.c \
		   src/bench/bench_progress.c
# Pure logic, unit-tested without libbpf.
LIB_SRCS	:= src/parse.c src/json.c src/sysfs.c src/cgroup.c src/pin.c src/bench/bench_calc.c src/bench/bench_stats.c src/bench/bench_interval.c \
		   src/needs.c src/policy_spec.c src/conf.c src/plan.c src/object.c
TOOL_SRCS	:= src/main.c src/attach.c src/detach.c src/status.c src/bpfutil.c src/output.c \
		   $(BENCH_SRCS) \
		   src/status_pins.c src/status_hook.c src/status_allowed.c src/status_plain.c src/status_json.c src/status_prometheus.c \
		   src/attach_object.c src/version.c src/apply.c src/apply_config.c src/apply_systemd.c src/apply_report.c
LIB_OBJS	:= $(LIB_SRCS:%.c=$(OUTPUT)/%.o)
TOOL_OBJS	:= $(TOOL_SRCS:%.c=$(OUTPUT)/%.o)
TEST_SRCS	:= $(wildcard tests/unit/*.c)
TEST_OBJS	:= $(TEST_SRCS:%.c=$(OUTPUT)/%.o)
TEST_BIN	:= $(OUTPUT)/tests/unit-tests
SAN_LIB_OBJS	:= $(LIB_SRCS:%.c=$(SAN_OUT)/%.o)
SAN_TOOL_OBJS	:= $(TOOL_SRCS:%.c=$(SAN_OUT)/%.o)
SAN_TEST_OBJS	:= $(TEST_SRCS:%.c=$(SAN_OUT)/%.o)
SAN_TEST_BIN	:= $(SAN_OUT)/tests/unit-tests
# libFuzzer targets (tests/fuzz/fuzz_NAME.c, seeds in tests/fuzz/corpus/NAME)
FUZZ_SRCS	:= $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_NAMES	:= $(patsubst tests/fuzz/fuzz_%.c,%,$(FUZZ_SRCS))
FUZZ_BINS	:= $(FUZZ_NAMES:%=$(FUZZ_OUT)/fuzz_%)
FUZZ_LIB_OBJS	:= $(LIB_SRCS:%.c=$(FUZZ_OUT)/%.o)
FUZZ_SECONDS	?= 60
FUZZ_SHORT_SECONDS ?= 5
SKEL		:= $(OUTPUT)/mthp.skel.h
# Example policies for attach --object (bpf/example_*.bpf.c), shipped.
EXAMPLE_SRCS	:= $(wildcard bpf/example_*.bpf.c)
EXAMPLE_OBJS	:= $(EXAMPLE_SRCS:bpf/%.c=$(OUTPUT)/%.o)
OPS_HEADERS	:= include/mthp_ops.h include/mthp_policy.h include/mthp_stats.h
MANS		:= $(patsubst man/%.rst,$(OUTPUT)/man/%,$(wildcard man/*.rst))

# a recipe that fails leaves no half-written target behind
.DELETE_ON_ERROR:

.PHONY: all examples clean install unit-check unit-check-asan mthpctl-asan fuzz fuzz-short fuzz-build check-docs check-bench-deps check-units check-patches check-kernel-configs vm-tests vm-check check bench demo plots check-plots
all: $(TOOL) examples
ifneq ($(TOOL),mthpctl)
.PHONY: mthpctl
mthpctl: $(TOOL)
endif

$(OUTPUT)/toolchain.mk: scripts/bpf-toolchain.sh
	$(call msg,TOOLCHN,libbpf+bpftool)
	$(Q)mkdir -p $(OUTPUT)
	$(Q)dir=$$(scripts/bpf-toolchain.sh) && echo "BPF_TOOLCHAIN := $$dir" > $@

$(OUTPUT)/vmlinux/vmlinux.h: | $(OUTPUT)/toolchain.mk
	$(call msg,GEN,$@ (from $(if $(filter arm64,$(ARCH)),the arm64 kernel,running kernel); temporary))
	$(Q)mkdir -p $(@D)
	$(Q)$(BPFTOOL) btf dump file $(if $(filter arm64,$(ARCH)),$$(scripts/kernel-build.sh | tail -n1)/vmlinux,/sys/kernel/btf/vmlinux) format c > $@.tmp
	$(Q)printf '%s\n' '#ifndef MTHPCTL_HAVE_BPF_MTHP_OPS' \
		'enum bpf_mthp_request { BPF_MTHP_FAULT, BPF_MTHP_KHUGEPAGED, BPF_MTHP_SMAPS };' \
		'enum bpf_psi_stall { BPF_PSI_MEM_SOME, BPF_PSI_MEM_FULL, BPF_PSI_IO_SOME, BPF_PSI_IO_FULL, BPF_PSI_CPU_SOME, BPF_PSI_CPU_FULL, BPF_PSI_IRQ_FULL };' \
		'struct bpf_mthp_ctx { enum bpf_mthp_request request; __u32 flags; __u64 address, vma_start, vma_end, rss_anon, allowed, grantable; };' \
		'struct bpf_mthp_ops { unsigned long (*choose_orders)(struct bpf_mthp_ctx *ctx, struct cgroup *cgrp, struct cgroup *task_cgrp); };' \
		'#endif' >> $@.tmp
	$(Q)mv $@.tmp $@

# BPF_EXTRA_CFLAGS: for the built-in policy only (scripts/nri-e2e.sh builds
# a second object with -DMTHPCTL_OBJECT_VARIANT=2 in another OUTPUT).
$(OUTPUT)/mthp.bpf.o: bpf/mthp.bpf.c $(VMLINUX_H) | $(OUTPUT)/toolchain.mk
	$(call msg,BPF,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(BPF_CFLAGS) $(BPF_EXTRA_CFLAGS) -MMD -MP -c $< -o $@

# The examples are shipped linked by `gen object` (as the built-in policy's
# skeleton is): their BTF stays, the DWARF (~500 KB of vmlinux.h types) goes.
examples: $(EXAMPLE_OBJS)
$(EXAMPLE_OBJS:$(OUTPUT)/%=$(OUTPUT)/bpf/%): $(OUTPUT)/bpf/%.o: bpf/%.c $(VMLINUX_H) | $(OUTPUT)/toolchain.mk
	$(call msg,BPF,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(BPF_CFLAGS) -MMD -MP -c $< -o $@
$(EXAMPLE_OBJS): $(OUTPUT)/%.o: $(OUTPUT)/bpf/%.o
	$(call msg,GEN-OBJ,$@)
	$(Q)$(BPFTOOL) gen object $@ $<

# `gen object` links the object and drops DWARF: a smaller skeleton.
$(OUTPUT)/mthp.lbpf.o: $(OUTPUT)/mthp.bpf.o
	$(call msg,GEN-OBJ,$@)
	$(Q)$(BPFTOOL) gen object $@ $<

$(SKEL): $(OUTPUT)/mthp.lbpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name mthp_bpf > $@.tmp && mv $@.tmp $@

$(LIB_OBJS) $(TEST_OBJS): $(OUTPUT)/%.o: %.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(USER_CFLAGS) -MMD -MP -c $< -o $@

$(TOOL_OBJS): $(OUTPUT)/%.o: %.c $(SKEL)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(USER_CFLAGS) -I$(LIBBPF_INC) -MMD -MP -c $< -o $@

# STATIC=1: libbpf, libelf, zlib and the C library linked in (libelf.a and
# libz.a from libelf-dev and zlib1g-dev), one file that runs on any
# x86-64 host with the kernel series, whatever its libraries; the image
# (nri-image) always has that one. The link's flags are kept in
# $(OUTPUT)/mthpctl.link, so that changing STATIC links again.
STATIC		?=
MTHPCTL_LDFLAGS	:= $(if $(filter 1 yes,$(STATIC)),-static)
MTHPCTL_LIBS	:= $(LIBBPF_A) -lelf -lz -lm

$(OUTPUT)/mthpctl.link: FORCE
	$(Q)mkdir -p $(@D)
	$(Q)echo '$(CC) $(CFLAGS) $(LDFLAGS) $(MTHPCTL_LDFLAGS)' | cmp -s - $@ || \
		echo '$(CC) $(CFLAGS) $(LDFLAGS) $(MTHPCTL_LDFLAGS)' > $@

$(TOOL): $(TOOL_OBJS) $(LIB_OBJS) $(LIBBPF_A) $(OUTPUT)/mthpctl.link
	$(call msg,LINK,$@$(if $(MTHPCTL_LDFLAGS), (static)))
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $(MTHPCTL_LDFLAGS) -o $@ $(TOOL_OBJS) $(LIB_OBJS) $(MTHPCTL_LIBS)

# The image's: static whatever STATIC says, beside the tree's mthpctl.
$(OUTPUT)/static/mthpctl: $(TOOL_OBJS) $(LIB_OBJS) $(LIBBPF_A)
	$(call msg,LINK,$@ (static))
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -static -o $@ $(TOOL_OBJS) $(LIB_OBJS) $(MTHPCTL_LIBS)

.PHONY: FORCE
FORCE:

$(TEST_BIN): $(TEST_OBJS) $(LIB_OBJS)
	$(call msg,LINK,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -o $@ $^ -lcmocka

unit-check: $(TEST_BIN)
	$(Q)$(TEST_BIN)

# What `mthpctl bench compile` builds (src/bench/bench_wl_compile.c), with
# make -jN and the system cc: the objects of the pure sources and the unit
# tests (no libbpf needed), into OUTPUT=DIR; COMPILE_FILES=N: the first N.
COMPILE_SRCS	:= $(LIB_SRCS) $(TEST_SRCS)
.PHONY: compile-bench
compile-bench: $(patsubst %.c,$(OUTPUT)/%.o,$(wordlist 1,$(or $(COMPILE_FILES),$(words $(COMPILE_SRCS))),$(COMPILE_SRCS)))

# --- sanitizers --------------------------------------------------------

$(SAN_LIB_OBJS) $(SAN_TEST_OBJS): $(SAN_OUT)/%.o: %.c
	$(call msg,CC-SAN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(SAN_CFLAGS) -MMD -MP -c $< -o $@

$(SAN_TOOL_OBJS): $(SAN_OUT)/%.o: %.c $(SKEL)
	$(call msg,CC-SAN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(SAN_CFLAGS) -I$(LIBBPF_INC) -MMD -MP -c $< -o $@

$(SAN_TEST_BIN): $(SAN_TEST_OBJS) $(SAN_LIB_OBJS)
	$(call msg,LINK,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(SAN_FLAGS) -o $@ $^ -lcmocka -lm

unit-check-asan: $(SAN_TEST_BIN)
	$(Q)$(SAN_ENV) $(SAN_TEST_BIN)

# The tool with ASan+UBSan, for tests/vm/asan.sh.
mthpctl-asan: $(SAN_OUT)/mthpctl
$(SAN_OUT)/mthpctl: $(SAN_TOOL_OBJS) $(SAN_LIB_OBJS) $(LIBBPF_A)
	$(call msg,LINK,$@)
	$(Q)$(CLANG) $(SAN_FLAGS) -o $@ $(SAN_TOOL_OBJS) $(SAN_LIB_OBJS) $(LIBBPF_A) -lelf -lz -lm

# --- fuzzing (libFuzzer; no libbpf, no skeleton) -----------------------

$(FUZZ_LIB_OBJS): $(FUZZ_OUT)/%.o: %.c
	$(call msg,CC-FUZZ,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(SAN_CFLAGS) -fsanitize=fuzzer-no-link -MMD -MP -c $< -o $@

$(FUZZ_OUT)/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZ_LIB_OBJS)
	$(call msg,FUZZ-LD,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(SAN_CFLAGS) -fsanitize=fuzzer -MMD -MP -o $@ $< $(FUZZ_LIB_OBJS) -lm

fuzz-build: $(FUZZ_BINS)

# Each target for FUZZ_SECONDS (fuzz) or FUZZ_SHORT_SECONDS (fuzz-short,
# part of check), starting from its committed corpus (the regression inputs
# included); new inputs go to .output/fuzz/corpus, crashes to
# .output/fuzz/artifacts.
fuzz: $(FUZZ_BINS)
	$(Q)tests/fuzz/run.sh $(FUZZ_SECONDS) $(FUZZ_NAMES)
fuzz-short: $(FUZZ_BINS)
	$(Q)tests/fuzz/run.sh $(FUZZ_SHORT_SECONDS) $(FUZZ_NAMES)

# --help, man pages and completion agree; README's results tables are the
# newest published runs' (tests/results/ and tests/hardware/, when there
# are) and their generators pass on their fixtures (tests/check-results.sh);
# every figure quoted with its interval is in a committed run's RESULTS.md
# or a kernel cost run's summary.txt (tests/check-figures.py).
check-docs: mthpctl $(MANS) $(EXAMPLE_OBJS)
	$(Q)tests/check-docs.sh ./mthpctl $(OUTPUT)/man
	$(Q)tests/check-results.sh
	$(Q)tests/check-figures.py

# No two files of src/bench/ call into each other (from the built objects).
check-bench-deps: mthpctl
	$(Q)tests/check-bench-deps.sh $(OUTPUT)/src/bench

# systemd-analyze verify on mthpctl.service and on a service with the drop-in
# apply writes for a unit target (tests/systemd), with this tree's mthpctl as
# the command; any message fails it (an unknown key is only a notice there).
check-units: mthpctl
	$(Q)tests/check-units.sh $(CURDIR)/mthpctl

# Helpers of the VM integration tests (tests/vm/run.sh).
VM_TEST_BINS	:= $(addprefix $(OUTPUT)/tests/vm/,faulter thrasher bpfobjs)
# objects attach --object is tested with (beside the examples)
VM_TEST_OBJS	:= $(patsubst tests/vm/%.bpf.c,$(OUTPUT)/tests/vm/%.bpf.o,$(wildcard tests/vm/*.bpf.c))
vm-tests: $(VM_TEST_BINS) $(VM_TEST_OBJS) $(EXAMPLE_OBJS)

$(VM_TEST_OBJS): $(OUTPUT)/tests/vm/%.bpf.o: tests/vm/%.bpf.c $(VMLINUX_H) | $(OUTPUT)/toolchain.mk
	$(call msg,BPF,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(BPF_CFLAGS) -MMD -MP -c $< -o $@

$(OUTPUT)/tests/vm/faulter $(OUTPUT)/tests/vm/thrasher: $(OUTPUT)/tests/vm/%: tests/vm/%.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(USER_CFLAGS) -MMD -MP -o $@ $<

$(OUTPUT)/tests/vm/bpfobjs: tests/vm/bpfobjs.c $(LIBBPF_A)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(USER_CFLAGS) -I$(LIBBPF_INC) -MMD -MP -o $@ $< $(LIBBPF_A) -lelf -lz

vm-check: mthpctl mthpctl-asan vm-tests
	$(Q)scripts/vm-check.sh

# The series with lock, RCU, VM and KASAN checking (kernel/config-debug),
# its kernel tests and mthpctl's VM tests on it, 0 splats allowed (~40 min
# on 2 cores from an empty object tree: not part of check).
.PHONY: check-debug-kernel
check-debug-kernel: mthpctl vm-tests
	$(Q)scripts/vm-check.sh --debug-kernel

# What the series costs an anonymous page fault on a distribution's
# configuration (kernel/config-distro: PREEMPT_DYNAMIC, preemptible RCU,
# JUMP_LABEL), against the same kernel without it, with and without a
# policy on a sibling cgroup, on "always" and "madvise" hosts
# (scripts/kernel-cost.sh: two more kernel builds, then 12 boots, ~40 min;
# not part of check).
.PHONY: kernel-cost
kernel-cost: mthpctl
	$(Q)scripts/kernel-cost.sh

# The series, mthpctl and the tests on an arm64 guest: the arm64 kernel,
# tool, BPF objects and kernel tests cross-built, the guest's root made once
# (scripts/arm64-rootfs.sh), the kernel tests and the folio-size
# integration tests in the guest under TCG (times in kernel/README.md; not part
# of check). Needs scripts/install-deps.sh --arm64.
.PHONY: check-arm64
check-arm64:
	$(Q)scripts/arm64-check.sh

# The series' in-tree selftests (tools/testing/selftests/bpf test_progs:
# cgroup_mthp_ops, mthp_ops_mm, cgroup_psi_stall) built from the patched tree and run in the
# VM on the test kernel plus kernel/config-selftests (5 min with that
# kernel cached; see kernel/README.md).
.PHONY: kernel-selftests
kernel-selftests:
	$(Q)scripts/kernel-selftests.sh

# checkpatch --strict from the base tree on the kernel series, and no fuzz.
check-patches:
	$(Q)scripts/kernel-checkpatch.sh

# The series' directories built with PSI, BPF_SYSCALL, THP, MEMCG, CGROUP_BPF
# and BPF_MTHP each off (~15 min on 2 cores; not part of check).
check-kernel-configs:
	$(Q)scripts/kernel-config-check.sh

# scripts/bench-plots.py on a fixture cut from real bench and demo results
# (tests/fixtures/bench-plots): every PNG written and valid, the refusals
# with their exit statuses (a few seconds; no VM).
check-plots:
	$(Q)tests/check-plots.sh

# The NRI plugin (src/nri, Go, a module of its own): go vet, and its tests,
# which drive it through NRI's runtime side (containerd's pkg/adaptation)
# over ttRPC on a socket in /tmp, with a fake mthpctl (and this tree's
# mthpctl's refusals when it is built: check-docs builds it first); then the deployment
# (src/nri/deploy/check, another module, Helm's packages): helm lint, the
# chart rendered with several value sets and every object, and
# daemonset.yaml's, decoded strictly into the Kubernetes API's types, the
# dashboard's queries against the series served. The modules come from the
# Go module proxy at the versions go.sum pins (~2 min the first time).
GO		?= $(or $(shell command -v go 2>/dev/null),/usr/local/go/bin/go)
NRI_GOENV	:= GOTOOLCHAIN=local GOFLAGS=-mod=readonly
.PHONY: nri-check nri-plugin
nri-check:
	$(call msg,GO-VET,src/nri)
	$(Q)cd src/nri && $(NRI_GOENV) $(GO) vet ./...
	$(call msg,GO-TEST,src/nri)
	$(Q)cd src/nri && $(NRI_GOENV) $(if $(wildcard mthpctl),MTHPCTL_BIN=$(CURDIR)/mthpctl) $(GO) test -count=1 ./...
	$(call msg,GO-TEST,src/nri/deploy/check (helm lint, manifests))
	$(Q)cd src/nri/deploy/check && $(NRI_GOENV) $(GO) vet ./... && $(NRI_GOENV) $(GO) test -count=1 ./...

# The plugin's binary: static (no cgo), stripped (-s -w), no build paths.
nri-plugin:
	$(call msg,GO-BUILD,$(OUTPUT)/mthpctl-nri)
	$(Q)mkdir -p $(OUTPUT)
	$(Q)cd src/nri && CGO_ENABLED=0 $(NRI_GOENV) $(GO) build -trimpath -ldflags '-s -w' \
		-o $(CURDIR)/$(OUTPUT)/mthpctl-nri .

# The plugin's image, an OCI archive the DaemonSet runs (load it with ctr
# -n k8s.io images import, or push it): mthpctl as `make install` installs
# it but static and stripped, the plugin, no shell, no library: nothing
# taken from this machine but what the two binaries link in, which
# tests/check-nri-image.sh checks in the archive's layer. Assembled by
# scripts/oci-image.sh with go-containerregistry's Go library: no
# container engine, no network but the Go module proxy.
NRI_IMAGE	:= $(OUTPUT)/mthpctl-nri-image.tar
NRI_IMAGE_ROOT	:= $(OUTPUT)/nri-image/root
STRIP		?= strip
.PHONY: nri-image
nri-image: mthpctl $(OUTPUT)/static/mthpctl $(MANS) $(EXAMPLE_OBJS) nri-plugin
	$(call msg,IMAGE,$(NRI_IMAGE) (mthpctl-nri:$(VERSION)))
	$(Q)rm -rf $(NRI_IMAGE_ROOT)
	$(Q)$(MAKE) -s install DESTDIR=$(CURDIR)/$(NRI_IMAGE_ROOT) PREFIX=/usr/local SYSCONFDIR=/etc
	$(Q)install -m 0755 -s --strip-program=$(STRIP) $(OUTPUT)/static/mthpctl $(NRI_IMAGE_ROOT)/usr/local/sbin/mthpctl
	$(Q)install -D -m 0755 $(OUTPUT)/mthpctl-nri $(NRI_IMAGE_ROOT)/usr/local/bin/mthpctl-nri
	$(Q)mkdir -p $(NRI_IMAGE_ROOT)/run/mthpctl $(NRI_IMAGE_ROOT)/tmp $(NRI_IMAGE_ROOT)/etc/mthpctl-nri
	$(Q)scripts/oci-image.sh -r $(NRI_IMAGE_ROOT) -n mthpctl-nri:$(VERSION) -o $(NRI_IMAGE) \
		-e /usr/local/bin/mthpctl-nri
	$(Q)tests/check-nri-image.sh $(NRI_IMAGE)

# The plugin on a real containerd in the VM (scripts/nri-e2e.sh,
# tests/nri-e2e/run.sh), once per cgroup driver: cgroupfs, then systemd
# (systemd as PID 1, runc's SystemdCgroup; NRI_E2E_DRIVERS=systemd runs
# one): containerd and crictl built from their Go modules
# once (scripts/runtime-build.sh, cached beside the kernel), Debian's runc,
# the images built offline, the plugin run from its image with the
# chart's mounts and security context; pods get their policies, survive
# a slow mthpctl, a containerd restart, a plugin restart, a sandbox
# re-created, and move to the new policy object of an upgraded image.
.PHONY: nri-e2e
nri-e2e: nri-image
	$(Q)scripts/nri-e2e.sh

check: unit-check unit-check-asan fuzz-short check-docs check-bench-deps check-units check-plots nri-check check-patches vm-check nri-e2e kernel-selftests

# The main job on the patched kernel in the VM: attach, pressure, status.
demo: mthpctl vm-tests
	$(Q)scripts/demo.sh

# The standard benchmark set in the VM on the patched kernel (~20 min under TCG:
# see mthpctl-bench(8)); BENCH_REPEATS=N (default 3; BENCH_UNTIL_WIDTH=PCT
# and BENCH_MAX_TIME=DURATION: rounds until the ratios are that narrow),
# results and plots in
# .output/bench/; the demo's helpers (vm-tests) record its timeline.
bench: mthpctl vm-tests
	$(Q)BENCH_UNTIL_WIDTH=$(BENCH_UNTIL_WIDTH) BENCH_MAX_TIME=$(BENCH_MAX_TIME) \
		scripts/bench.sh $(if $(BENCH_REPEATS),-r $(BENCH_REPEATS))

# The hardware-MMU anchor: bench mixed --stock on this machine's own kernel
# (no VM, no policy; every THP setting checked afterwards), into
# .output/bench-stock/ (scripts/bench-stock.sh; ~20 min; see
# mthpctl-bench(8), HARDWARE ANCHOR).
.PHONY: bench-stock
bench-stock: mthpctl
	$(Q)scripts/bench-stock.sh

# The plots of a result directory again (PLOTS_DIR, default the latest
# bench; .output/demo for a `make demo`'s timeline alone).
PLOTS_DIR	?= $(OUTPUT)/bench/latest
plots:
	$(Q)scripts/bench-plots.py $(PLOTS_DIR)

# Many policies at once in the VM (scripts/bench-scale.sh): the cgroups
# attached by one mthpctl apply and a sample by single attach calls, detach
# and status times, kernel memory per policy, the page-fault cost with them
# against with none; SCALE_N=N policies (default 200; 10000: a node's worth).
.PHONY: bench-scale
bench-scale: mthpctl
	$(Q)scripts/bench-scale.sh --vm $(if $(SCALE_N),-n $(SCALE_N))

$(OUTPUT)/man/%: man/%.rst
	$(call msg,RST2MAN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(RST2MAN) --exit-status=2 $< $@

install: mthpctl $(MANS) $(EXAMPLE_OBJS)
	$(Q)install -d $(DESTDIR)$(SBINDIR) $(DESTDIR)$(MANDIR)/man5 $(DESTDIR)$(MANDIR)/man7 \
		$(DESTDIR)$(MANDIR)/man8 $(DESTDIR)$(BASHCOMPDIR) $(DESTDIR)$(SYSTEMDUNITDIR) \
		$(DESTDIR)$(SYSCONFDIR)/mthpctl/policies.d $(DESTDIR)$(DATADIR)/examples \
		$(DESTDIR)$(INCLUDEDIR)/mthpctl
	$(Q)install -m 0644 $(EXAMPLE_OBJS) $(EXAMPLE_SRCS) $(DESTDIR)$(DATADIR)/examples/
	$(Q)install -m 0644 $(OPS_HEADERS) $(DESTDIR)$(INCLUDEDIR)/mthpctl/
	$(Q)install -m 0755 mthpctl $(DESTDIR)$(SBINDIR)/mthpctl
	$(Q)sed 's|@SBINDIR@|$(SBINDIR)|g' scripts/mthpctl.service.in > $(OUTPUT)/mthpctl.service
	$(Q)install -m 0644 $(OUTPUT)/mthpctl.service $(DESTDIR)$(SYSTEMDUNITDIR)/mthpctl.service
	$(Q)for m in $(MANS); do \
		s=$${m##*.}; install -m 0644 $$m $(DESTDIR)$(MANDIR)/man$$s/$$(basename $$m); \
	done
	$(Q)install -m 0644 scripts/mthpctl.bash-completion $(DESTDIR)$(BASHCOMPDIR)/mthpctl

clean:
	$(call msg,CLEAN,)
	$(Q)rm -rf $(OUTPUT) $(filter mthpctl,$(TOOL))

-include $(wildcard $(OUTPUT)/*.d $(OUTPUT)/bpf/*.d $(OUTPUT)/src/*.d $(OUTPUT)/src/bench/*.d $(OUTPUT)/tests/unit/*.d $(OUTPUT)/tests/vm/*.d \
	$(SAN_OUT)/src/*.d $(SAN_OUT)/src/bench/*.d $(SAN_OUT)/tests/unit/*.d $(FUZZ_OUT)/src/*.d $(FUZZ_OUT)/src/bench/*.d $(FUZZ_OUT)/*.d)
