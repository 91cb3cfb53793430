# eval/: localization accuracy over seeded fabrics (docs/localization.md).
EVAL_SRCS := eval/loc_eval.c eval/fabric_sim.c
EVAL_OBJS := $(patsubst %.c,$(BUILD)/obj/%.o,$(EVAL_SRCS))
LOC_EVAL  := $(BUILD)/eval/agentxdp-loc-eval
all: $(LOC_EVAL)

$(LOC_EVAL): $(EVAL_OBJS) $(AGENTXDP_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $(EVAL_OBJS) $(AGENTXDP_LIBS) $(LIB_LDLIBS) $(LDLIBS) -o $@

.PHONY: eval
eval: all
	@bash eval/run_eval.sh
