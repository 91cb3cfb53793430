# analyze/: the core library (no I/O) and agentxdp-analyze.
CORE_SRCS += analyze/parse_num.c analyze/log.c analyze/qp_track.c
IO_SRCS   +=
UNIT_LIBS += -lpcap -lsqlite3 -lcsv

ANALYZE_SRCS := analyze/main.c analyze/dump.c analyze/analyze_run.c
ANALYZE_OBJS := $(patsubst %.c,$(BUILD)/obj/%.o,$(ANALYZE_SRCS))
TOOLS += $(BIN)/agentxdp-analyze

$(BIN)/agentxdp-analyze: $(ANALYZE_OBJS) $(AGENTXDP_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $(ANALYZE_OBJS) $(AGENTXDP_LIBS) -lpcap -lsqlite3 -lcsv $(LDLIBS) -o $@
