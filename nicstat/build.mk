# nicstat/: agentxdp-nicstat (RDMA NIC counters from sysfs; the counters code is lib/nic/).
NICSTAT_SRCS := nicstat/nicstat.c
NICSTAT_OBJS := $(patsubst %.c,$(BUILD)/obj/%.o,$(NICSTAT_SRCS))
TOOLS     += $(BIN)/agentxdp-nicstat
MAN_PAGES += docs/agentxdp-nicstat.8

$(BIN)/agentxdp-nicstat: $(NICSTAT_OBJS) $(AGENTXDP_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $(NICSTAT_OBJS) $(AGENTXDP_LIBS) $(LIB_LDLIBS) $(LDLIBS) -o $@
