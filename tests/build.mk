# tests/: helpers the tests and benchmarks run (not installed). Unit tests and fuzz replay
# drivers are built by the top-level Makefile.

# The decoder's fields per frame, for the tshark comparison and bench_decode.
DECODE_FIELDS := $(BUILD)/decode_fields
# Agent mode without XDP: the live agent fed from a trace.
AGENT_REPLAY := $(BUILD)/agent_replay
# N queue pairs x R rounds of WRITE + ACK, for the memory tests.
GEN_QP_TRACE := $(BUILD)/gen_qp_trace
# The crafted-ACK trace (issue #22) and the tracker's work on a trace.
GEN_CRAFTED_ACKS := $(BUILD)/gen_crafted_acks
# The core's CPU per packet (decode, decode + track) without reading or storing: bench_analyze.
BENCH_CORE := $(BUILD)/bench_core
TEST_HELPERS := $(DECODE_FIELDS) $(AGENT_REPLAY) $(GEN_QP_TRACE) $(GEN_CRAFTED_ACKS) $(BENCH_CORE)
all: $(TEST_HELPERS)
$(TEST_HELPERS): $(BUILD)/%: tests/tools/%.c $(MODEL_LIB) $(AGENTXDP_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $< $(MODEL_LIB) $(AGENTXDP_LIBS) $(LIB_LDLIBS) $(LDLIBS) -o $@

# The XDP program on crafted frames (bpf_prog_test_run_opts), run by tests/bpf/test_xdp_prog.sh;
# the same frames as a pcap for the end-to-end tests; "someone else's" XDP program for the
# refusal test (attached with ip link).
BPF_TEST_BINS := $(BUILD)/tests-bpf/test_xdp_prog $(BUILD)/tests-bpf/gen_roce_pcap \
		 $(BUILD)/tests-bpf/xdp_dummy.bpf.o
all: $(BPF_TEST_BINS)

$(BUILD)/tests-bpf/xdp_dummy.bpf.o: tests/bpf/xdp_dummy.bpf.c $(BUILD)/vmlinux.h
	@mkdir -p $(dir $@)
	$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(BUILD)/tests-bpf/test_xdp_prog: tests/bpf/test_xdp_prog.c tests/bpf/roce_frames.c $(BUILD)/roce_capture.skel.h $(AGENTXDP_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) tests/bpf/test_xdp_prog.c tests/bpf/roce_frames.c $(AGENTXDP_LIBS) -lbpf -lelf $(LIB_LDLIBS) $(LDLIBS) -o $@

$(BUILD)/tests-bpf/gen_roce_pcap: tests/bpf/gen_roce_pcap.c tests/bpf/roce_frames.c $(AGENTXDP_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) tests/bpf/gen_roce_pcap.c tests/bpf/roce_frames.c $(AGENTXDP_LIBS) $(LIB_LDLIBS) $(LDLIBS) -o $@
