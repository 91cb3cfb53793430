# analyze/localize.mk: slow-link localization (included from eval/build.mk so the analyzer's
# analyze/build.mk stays theirs).
CORE_SRCS += analyze/localize.c analyze/topology_graph.c analyze/robust_stats.c analyze/finding.c
IO_SRCS   += analyze/topology.c
