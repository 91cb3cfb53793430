# report/: agentxdp-report (SQL -> text/markdown/HTML + gnuplot charts). The report code is
# in the I/O library so agentxdp-analyze --report can call report_write_from_db().
IO_SRCS += report/report_data.c report/report_render.c report/report_charts.c \
	report/report_write.c report/gnuplot_run.c
REPORT_OBJS := $(BUILD)/obj/report/report.o
TOOLS += $(BIN)/agentxdp-report
MAN_PAGES += docs/agentxdp-report.8

$(BIN)/agentxdp-report: $(REPORT_OBJS) $(AGENTXDP_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $(REPORT_OBJS) $(AGENTXDP_LIBS) -lsqlite3 $(LDLIBS) -o $@
