/* log.c: the logging globals every tool shares, and the one-line usage error. */
#include <getopt.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "lib/util/log.h"
#include "lib/util/parse_num.h"

int agentxdp_log_level = LOG_INFO;
const char *agentxdp_prog = "agentxdp";

int usage_error(const char *fmt, ...)
{
	char msg[512];
	size_t len;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	/* No newline may split the one line; a message ending in "(...)" takes the hint inside. */
	for (char *nl = strchr(msg, '\n'); nl; nl = strchr(nl, '\n'))
		*nl = ' ';
	len = strlen(msg);
	if (len && msg[len - 1] == ')')
		fprintf(stderr, "%s: %.*s; see --help)\n", agentxdp_prog, (int)(len - 1), msg);
	else
		fprintf(stderr, "%s: %s (see --help)\n", agentxdp_prog, msg);
	return EXIT_USAGE;
}

int usage_error_getopt(int getopt_rc, char *const argv[])
{
	/* The argument getopt just looked at (optind has moved past it, except inside a
	 * cluster of short options like "-qx", where optopt names the letter). */
	const char *arg = optind > 0 && argv[optind - 1] ? argv[optind - 1] : "";
	bool is_long = !strncmp(arg, "--", 2);
	const char *eq = strchr(arg, '=');

	if (getopt_rc == ':') {
		if (is_long)
			return usage_error("option '%s' needs a value", arg);
		return usage_error("option '-%c' needs a value", optopt);
	}
	if (optopt == 0) /* glibc: an unknown or ambiguous long option */
		return usage_error("unknown option '%s'", arg);
	if (is_long && eq)
		return usage_error("option '%.*s' takes no value", (int)(eq - arg), arg);
	if (optopt > ' ' && optopt < 127)
		return usage_error("unknown option '-%c'", optopt);
	return usage_error("unknown option '%s'", arg);
}

int usage_error_duration(const char *opt, const char *text, const char *range)
{
	double bare;

	if (!parse_double(text, 0, 1e300, &bare))
		return usage_error("invalid %s '%s': a duration needs a unit (%s)", opt, text, range);
	return usage_error("invalid %s '%s' (%s)", opt, text, range);
}
