# testbed/: agentxdp-roce-emu, the RoCE v2 RC traffic emulator scripts/testbed.sh drives.
# The transport is the synthesizer's RC model (samples/rc_model.c, in the core library).
EMU_SRCS := testbed/roce_emu.c testbed/emu_icrc.c
EMU_OBJS := $(patsubst %.c,$(BUILD)/obj/%.o,$(EMU_SRCS))
TOOLS += $(BIN)/agentxdp-roce-emu
# tests/unit/test_emu_icrc.c includes testbed/emu_icrc.c and needs zlib.
UNIT_LIBS += -lz

$(BIN)/agentxdp-roce-emu: $(EMU_OBJS) $(AGENTXDP_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $(EMU_OBJS) $(AGENTXDP_LIBS) -lz $(LDLIBS) -o $@
MAN_PAGES += docs/agentxdp-roce-emu.8
