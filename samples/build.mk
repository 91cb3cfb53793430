# samples/: agentxdp-synth (RoCE fabric synthesizer), its RC model library, and the sample traces.
CORE_SRCS += samples/rc_model.c samples/roce_frame.c

SYNTH_SRCS := samples/synth_main.c samples/synth_sim.c samples/synth_out.c
SYNTH_OBJS := $(patsubst %.c,$(BUILD)/obj/%.o,$(SYNTH_SRCS))
TOOLS += $(BIN)/agentxdp-synth

$(BIN)/agentxdp-synth: $(SYNTH_OBJS) $(AGENTXDP_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $(SYNTH_OBJS) $(AGENTXDP_LIBS) $(LDLIBS) -o $@

# make samples: rebuild the committed sample incidents (byte for byte) from samples/scenarios.txt.
samples: $(BIN)/agentxdp-synth
	bash samples/make-samples.sh
MAN_PAGES += docs/agentxdp-synth.8
