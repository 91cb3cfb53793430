/* analyze_run.c: agentxdp-analyze's main mode. (stub until reconstruction lands) */
#include "analyze_opts.h"
#include "log.h"

int analyze_traces(const struct analyze_opts *opts)
{
	pr_err("analysis: not implemented yet\n");
	return 1;
}
