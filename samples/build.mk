# samples/: agentxdp-synth (RoCE fabric synthesizer), its RC model library, and the sample traces.
CORE_SRCS += samples/rc_model.c samples/roce_frame.c
