/* dump.c: agentxdp-analyze --dump, one line per RoCE packet. (stub until the decoder lands) */
#include "analyze_opts.h"
#include "log.h"

int dump_traces(const struct analyze_opts *opts)
{
	pr_err("--dump: not implemented yet\n");
	return 1;
}
