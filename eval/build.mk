# eval/: localization accuracy over synthesized fabrics (docs/localization.md).
include analyze/localize.mk

.PHONY: eval
eval: all
	@bash eval/run_eval.sh
