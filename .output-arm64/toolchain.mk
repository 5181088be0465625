BPF_TOOLCHAIN := /root/.cache/mthpctl/bpf-toolchain/linux-source-7.3-7.3.4-1~bpo13+1-arm64
