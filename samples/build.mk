# samples/: agentxdp-synth (RoCE fabric synthesizer) and the sample traces. The RC model and
# the frame builder it drives are lib/model/.
SYNTH_SRCS := samples/synth_main.c samples/synth_sim.c samples/synth_out.c
SYNTH_OBJS := $(patsubst %.c,$(BUILD)/obj/%.o,$(SYNTH_SRCS))
TOOLS += $(BIN)/agentxdp-synth
MAN_PAGES += docs/agentxdp-synth.8

$(BIN)/agentxdp-synth: $(SYNTH_OBJS) $(MODEL_LIB) $(AGENTXDP_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $(SYNTH_OBJS) $(MODEL_LIB) $(AGENTXDP_LIBS) $(LIB_LDLIBS) $(LDLIBS) -o $@

# make samples: rebuild the committed sample incidents (byte for byte) from samples/scenarios.txt.
samples: $(BIN)/agentxdp-synth
	bash samples/make-samples.sh
