# report/: agentxdp-report's command line. The report itself is lib/report/, so that
# agentxdp-analyze --report draws the same one.
REPORT_OBJS := $(BUILD)/obj/report/report.o
TOOLS += $(BIN)/agentxdp-report
MAN_PAGES += docs/agentxdp-report.8

$(BIN)/agentxdp-report: $(REPORT_OBJS) $(AGENTXDP_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $(REPORT_OBJS) $(AGENTXDP_LIBS) $(LIB_LDLIBS) $(LDLIBS) -o $@
