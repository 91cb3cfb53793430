# report/: agentxdp-report (SQL -> text/markdown/HTML + gnuplot charts).
REPORT_SRCS := report/report.c report/report_data.c report/report_render.c report/report_charts.c \
	report/gnuplot_run.c
REPORT_OBJS := $(patsubst %.c,$(BUILD)/obj/%.o,$(REPORT_SRCS))
TOOLS += $(BIN)/agentxdp-report
MAN_PAGES += docs/agentxdp-report.8

$(BIN)/agentxdp-report: $(REPORT_OBJS) $(AGENTXDP_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $(REPORT_OBJS) $(AGENTXDP_LIBS) -lsqlite3 $(LDLIBS) -o $@
