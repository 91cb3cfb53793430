# testbed/: agentxdp-roce-emu, the RoCE v2 RC traffic emulator scripts/testbed.sh drives.
# The transport is the synthesizer's RC model (lib/model/).
EMU_SRCS := testbed/roce_emu.c testbed/emu_net.c testbed/emu_loop.c testbed/emu_results.c
EMU_OBJS := $(patsubst %.c,$(BUILD)/obj/%.o,$(EMU_SRCS))
TOOLS += $(BIN)/agentxdp-roce-emu
MAN_PAGES += docs/agentxdp-roce-emu.8

$(BIN)/agentxdp-roce-emu: $(EMU_OBJS) $(MODEL_LIB) $(AGENTXDP_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $(EMU_OBJS) $(MODEL_LIB) $(AGENTXDP_LIBS) $(LIB_LDLIBS) $(LDLIBS) -o $@
