# drops/: agentxdp-drops, kfree_skb drop attribution (bpf/drops.bpf.c is its kernel side).
IO_SRCS += drops/drop_names.c

DROPS_SRCS := drops/drops.c
DROPS_OBJS := $(patsubst %.c,$(BUILD)/obj/%.o,$(DROPS_SRCS))
TOOLS += $(BIN)/agentxdp-drops
MAN_PAGES += docs/agentxdp-drops.8

# The skeleton is generated; the object that includes it must wait for it.
$(BUILD)/obj/drops/drops.o: $(BUILD)/drops.skel.h bpf/drops.h
$(BUILD)/obj/drops/drops.o: CFLAGS += -Ibpf -Idrops

$(BIN)/agentxdp-drops: $(DROPS_OBJS) $(AGENTXDP_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $(DROPS_OBJS) $(AGENTXDP_LIBS) -lbpf -lelf -lz -lsqlite3 $(LDLIBS) -o $@
