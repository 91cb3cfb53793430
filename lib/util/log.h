/* log.h: levelled logging for the tools (xdp-tools lib/util/logging.h style). */
#ifndef AGENTXDP_LOG_H
#define AGENTXDP_LOG_H

#include <stdio.h>

enum log_level { LOG_ERR = 0, LOG_WARN = 1, LOG_INFO = 2, LOG_DEBUG = 3 };

/* Set by the tools' -q / -v options; messages above it are dropped. */
extern int agentxdp_log_level;
/* Program name printed before every message ("agentxdp-analyze: ..."). */
extern const char *agentxdp_prog;

#define pr_log(lvl, fmt, ...)                                                           \
	do {                                                                            \
		if ((lvl) <= agentxdp_log_level)                                        \
			fprintf(stderr, "%s: " fmt, agentxdp_prog, ##__VA_ARGS__);      \
	} while (0)
#define pr_err(fmt, ...) pr_log(LOG_ERR, fmt, ##__VA_ARGS__)
#define pr_warn(fmt, ...) pr_log(LOG_WARN, "warning: " fmt, ##__VA_ARGS__)
#define pr_info(fmt, ...) pr_log(LOG_INFO, fmt, ##__VA_ARGS__)
#define pr_debug(fmt, ...) pr_log(LOG_DEBUG, fmt, ##__VA_ARGS__)

/* Exit status of every tool for a bad command line. */
#define EXIT_USAGE 2

/*
 * usage_error: one line on stderr, "agentxdp-X: <message> (see --help)", and returns
 * EXIT_USAGE so option parsers can `return usage_error(...)`.
 */
__attribute__((format(printf, 1, 2))) int usage_error(const char *fmt, ...);

/*
 * usage_error_getopt: the one line for getopt_long's '?' (unknown option, or a value
 * given to an option that takes none) and ':' (missing value) returns. Callers set
 * opterr = 0 and start the optstring with ':' so getopt prints nothing itself.
 */
int usage_error_getopt(int getopt_rc, char *const argv[]);

/*
 * usage_error_duration: the one line for a duration option parse_duration_ns() refused;
 * a bare number gets "a duration needs a unit", so "-w 10" never reads as seconds.
 */
int usage_error_duration(const char *opt, const char *text, const char *range);

#endif
