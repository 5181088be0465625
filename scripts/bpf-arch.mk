# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# libbpf's name for the machine's architecture (bpf_tracing.h's PT_REGS
# macros need __TARGET_ARCH_$(BPF_ARCH)); included by the Makefile and
# tests/kernel/Makefile. The target's: the kernel's ARCH (make ARCH=arm64)
# if given, else the build host's.
BPF_ARCH ?= $(shell echo $(or $(ARCH),$(shell uname -m)) | sed -e 's/x86_64/x86/' -e 's/i.86/x86/' -e 's/aarch64/arm64/' \
	    -e 's/ppc64le/powerpc/' -e 's/riscv64/riscv/' -e 's/s390x/s390/' \
	    -e 's/loongarch64/loongarch/')
