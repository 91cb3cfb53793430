# Kernel side: every bpf/X.bpf.c becomes build/X.bpf.o and build/X.skel.h (never committed).
BPF_ARCH   := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')
BPF_CFLAGS := -g -O2 -target bpf -D__TARGET_ARCH_$(BPF_ARCH) -Wall -Wno-unused-value -I$(BUILD) -Ibpf -I.
# Objects are built for the machine they run on (vmlinux.h comes from its kernel). Outside
# x86, roce_capture.bpf.c publishes records with a fetching atomic, which needs BPF v3.
BPF_CFLAGS += $(if $(filter-out x86,$(BPF_ARCH)),-mcpu=v3)

# vmlinux.h from the running kernel's BTF; CO-RE relocates field offsets at load time.
$(BUILD)/vmlinux.h:
	@mkdir -p $(dir $@)
	@if [ -r /sys/kernel/btf/vmlinux ]; then \
		$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > $@.tmp && mv $@.tmp $@; \
	else \
		echo "bpf: /sys/kernel/btf/vmlinux missing: this kernel has no BTF, BPF tools cannot be built" >&2; exit 1; \
	fi

$(BUILD)/%.bpf.o: bpf/%.bpf.c $(BUILD)/vmlinux.h $(wildcard bpf/*.h) lib/decode/bth_opcodes.h
	@mkdir -p $(dir $@)
	$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(BUILD)/%.skel.h: $(BUILD)/%.bpf.o
	$(BPFTOOL) gen skeleton $< > $@.tmp && mv $@.tmp $@
