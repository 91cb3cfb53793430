# analyze/: the core library (no I/O) and agentxdp-analyze.
CORE_SRCS += analyze/parse_num.c analyze/log.c analyze/qp_track.c
CORE_SRCS += analyze/roce_decode.c analyze/pcapng_drops.c analyze/sort_u32.c
IO_SRCS   += analyze/trace_reader.c analyze/store_sqlite.c analyze/export_json.c analyze/export_csv.c
UNIT_LIBS += -lpcap -lsqlite3 -lcsv

ANALYZE_SRCS := analyze/main.c analyze/dump.c analyze/analyze_run.c
ANALYZE_OBJS := $(patsubst %.c,$(BUILD)/obj/%.o,$(ANALYZE_SRCS))
TOOLS += $(BIN)/agentxdp-analyze
MAN_PAGES += docs/agentxdp-analyze.8

$(BIN)/agentxdp-analyze: $(ANALYZE_OBJS) $(AGENTXDP_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $(ANALYZE_OBJS) $(AGENTXDP_LIBS) -lpcap -lsqlite3 -lcsv $(LDLIBS) -o $@

# Test helper (not installed): the decoder's fields per frame, for the tshark comparison and bench.
DECODE_FIELDS := $(BUILD)/decode_fields
all: $(DECODE_FIELDS)
$(DECODE_FIELDS): tests/tools/decode_fields.c $(AGENTXDP_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $< $(AGENTXDP_LIBS) -lpcap $(LDLIBS) -o $@

# Agent metrics (shared by agentxdp-analyze --prom and the live agent) and the /metrics server.
CORE_SRCS += analyze/agent_metrics.c
IO_SRCS   += analyze/metrics_http.c analyze/live_agent.c
UNIT_LIBS += -lmicrohttpd -lcurl -lpthread

# Test driver for agent mode without XDP (not installed).
AGENT_REPLAY := $(BUILD)/agent_replay
all: $(AGENT_REPLAY)
$(AGENT_REPLAY): tests/tools/agent_replay.c $(AGENTXDP_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $< $(AGENTXDP_LIBS) -lpcap -lcsv -lmicrohttpd -lcurl -lpthread $(LDLIBS) -o $@

# agentxdp-analyze built with ASan+UBSan (not installed): tests/golden/test_analyze_sanitized.sh
# runs the samples through it and compares with the normal build.
SAN_ANALYZE := $(BUILD)/san-bin/agentxdp-analyze
all: $(SAN_ANALYZE)
$(SAN_ANALYZE): $(patsubst %.c,$(BUILD)/san/%.o,$(ANALYZE_SRCS)) $(AGENTXDP_SAN_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(SANFLAGS) $(patsubst %.c,$(BUILD)/san/%.o,$(ANALYZE_SRCS)) $(AGENTXDP_SAN_LIBS) -lpcap -lsqlite3 -lcsv $(LDLIBS) -o $@

# Test helper (not installed): N queue pairs x R rounds of WRITE + ACK, for the memory tests.
GEN_QP_TRACE := $(BUILD)/gen_qp_trace
all: $(GEN_QP_TRACE)
$(GEN_QP_TRACE): tests/tools/gen_qp_trace.c $(AGENTXDP_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $< $(AGENTXDP_LIBS) $(LDLIBS) -o $@
