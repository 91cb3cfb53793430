# capture/: agentxdp-capture and the shared pcapng writer.
IO_SRCS += capture/pcapng_writer.c

# agentxdp-capture: the --filter parser is shared I/O code (unit-tested); the XDP side is
# bpf/roce_capture.bpf.c -> build/roce_capture.skel.h (bpf/build.mk).
IO_SRCS += capture/capture_filter.c

# The XDP program on crafted frames (bpf_prog_test_run_opts), run by tests/bpf/test_xdp_prog.sh;
# the same frames as a pcap for the end-to-end tests.
CAPTURE_TEST_BINS := $(BUILD)/tests-bpf/test_xdp_prog $(BUILD)/tests-bpf/gen_roce_pcap \
		     $(BUILD)/tests-bpf/xdp_dummy.bpf.o
all: $(CAPTURE_TEST_BINS)

# "Someone else's" XDP program for the refusal test (attached with ip link).
$(BUILD)/tests-bpf/xdp_dummy.bpf.o: tests/bpf/xdp_dummy.bpf.c $(BUILD)/vmlinux.h
	@mkdir -p $(dir $@)
	$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(BUILD)/tests-bpf/test_xdp_prog: tests/bpf/test_xdp_prog.c tests/bpf/roce_frames.c capture/cpu_ring.c capture/cpu_ring.h $(BUILD)/roce_capture.skel.h $(AGENTXDP_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) tests/bpf/test_xdp_prog.c tests/bpf/roce_frames.c capture/cpu_ring.c $(AGENTXDP_LIBS) -lbpf -lelf -lz $(LDLIBS) -o $@

$(BUILD)/tests-bpf/gen_roce_pcap: tests/bpf/gen_roce_pcap.c tests/bpf/roce_frames.c $(AGENTXDP_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) tests/bpf/gen_roce_pcap.c tests/bpf/roce_frames.c $(AGENTXDP_LIBS) -lpcap $(LDLIBS) -o $@

# agentxdp-capture itself: the session (capture.c: load, attach, drain -> callback) and the CLI.
CAPTURE_SRCS := capture/capture.c capture/cpu_ring.c capture/capture_main.c
CAPTURE_OBJS := $(patsubst %.c,$(BUILD)/obj/%.o,$(CAPTURE_SRCS))
TOOLS += $(BIN)/agentxdp-capture
MAN_PAGES += docs/agentxdp-capture.8

$(CAPTURE_OBJS): $(BUILD)/roce_capture.skel.h
$(BIN)/agentxdp-capture: $(CAPTURE_OBJS) $(AGENTXDP_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $(CAPTURE_OBJS) $(AGENTXDP_LIBS) -lbpf -lelf -lz -lcsv -lmicrohttpd -lcurl -lpthread $(LDLIBS) -o $@
