# analyze/: agentxdp-analyze (its command line, the analysis driver, --dump).
ANALYZE_SRCS := analyze/main.c analyze/dump.c analyze/analyze_run.c analyze/analyze_read.c analyze/mirror_vantage.c analyze/frame_census.c
ANALYZE_OBJS := $(patsubst %.c,$(BUILD)/obj/%.o,$(ANALYZE_SRCS))
TOOLS += $(BIN)/agentxdp-analyze
MAN_PAGES += docs/agentxdp-analyze.8

$(BIN)/agentxdp-analyze: $(ANALYZE_OBJS) $(AGENTXDP_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $(ANALYZE_OBJS) $(AGENTXDP_LIBS) $(LIB_LDLIBS) $(LDLIBS) -o $@

# agentxdp-analyze built with ASan+UBSan (not installed): tests/golden/test_analyze_sanitized.sh
# runs the samples through it and compares with the normal build.
SAN_ANALYZE := $(BUILD)/san-bin/agentxdp-analyze
all: $(SAN_ANALYZE)
$(SAN_ANALYZE): $(patsubst %.c,$(BUILD)/san/%.o,$(ANALYZE_SRCS)) $(AGENTXDP_SAN_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(SANFLAGS) $(patsubst %.c,$(BUILD)/san/%.o,$(ANALYZE_SRCS)) $(AGENTXDP_SAN_LIBS) $(LIB_LDLIBS) $(LDLIBS) -o $@
