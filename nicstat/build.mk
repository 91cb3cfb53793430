# nicstat/: agentxdp-nicstat (RDMA NIC counters from sysfs), and the metric exporters
# every tool shares (analyze/metrics, prom_text, otlp_json: pure; otlp_push, export_file: I/O).
CORE_SRCS += analyze/text_buf.c analyze/metrics.c analyze/prom_text.c analyze/otlp_json.c
IO_SRCS   += analyze/otlp_push.c analyze/export_file.c
UNIT_LIBS += -lcurl -lmicrohttpd -lpthread

CORE_SRCS += nicstat/nic_rates.c
IO_SRCS   += nicstat/sysfs_counters.c nicstat/nic_sensor.c nicstat/nic_db.c

NICSTAT_SRCS := nicstat/nicstat.c
NICSTAT_OBJS := $(patsubst %.c,$(BUILD)/obj/%.o,$(NICSTAT_SRCS))
TOOLS     += $(BIN)/agentxdp-nicstat
MAN_PAGES += docs/agentxdp-nicstat.8

$(BIN)/agentxdp-nicstat: $(NICSTAT_OBJS) $(AGENTXDP_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $(NICSTAT_OBJS) $(AGENTXDP_LIBS) -lsqlite3 -lcurl -lpthread $(LDLIBS) -o $@
