# drops/: agentxdp-drops, kfree_skb drop attribution (bpf/drops.bpf.c is its kernel side).
DROPS_SRCS := drops/drops.c
DROPS_OBJS := $(patsubst %.c,$(BUILD)/obj/%.o,$(DROPS_SRCS))
TOOLS += $(BIN)/agentxdp-drops
MAN_PAGES += docs/agentxdp-drops.8

# The skeleton is generated; the object that includes it must wait for it.
$(DROPS_OBJS): $(BUILD)/drops.skel.h bpf/drops.h

$(BIN)/agentxdp-drops: $(DROPS_OBJS) $(AGENTXDP_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $(DROPS_OBJS) $(AGENTXDP_LIBS) -lbpf -lelf $(LIB_LDLIBS) $(LDLIBS) -o $@
