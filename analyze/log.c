/* log.c: the logging globals every tool shares. */
#include "log.h"

int agentxdp_log_level = LOG_INFO;
const char *agentxdp_prog = "agentxdp";
