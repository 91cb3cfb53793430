/* report.c: agentxdp-report, turn an analysis database into a post-incident report. */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/util/log.h"
#include "lib/util/parse_num.h"
#include "lib/report/report_charts.h"
#include "lib/report/report_data.h"
#include "lib/report/report_render.h"
#include "lib/report/report_write.h"
#include "lib/util/text_buf.h"
#include "lib/util/util.h"


#define NS_PER_S 1000000000ull

static const char usage_text[] =
	"Usage: agentxdp-report [OPTIONS] DATABASE\n"
	"\n"
	"Turn an analysis database (made by agentxdp-analyze -o) into a post-incident report:\n"
	"the verdict (the slow or lossy link, severity, onset, confidence, the flows it hurt, or\n"
	"\"no slow link found\" with what was checked), capture health, links and flows ranked by\n"
	"how bad they are, and gnuplot charts. With -o, writes DIR/index.html (charts beside it in\n"
	"DIR/charts/; nothing is loaded from the network) and prints a short summary.\n"
	"\n"
	"Options:\n"
	"  -o, --output DIR       write the HTML report into DIR (created if missing)\n"
	"  -f, --format FORMAT    what to print on standard output: text (default), markdown, html\n"
	"      --png              draw charts as PNG instead of SVG\n"
	"  -n, --top N            rows per table and flows per chart (default 10, 1 to 1000)\n"
	"      --query-timeout DURATION  stop any database query after DURATION (default\n"
	"                         120s, 1s to 1d, a unit is needed; whole seconds, rounded up):\n"
	"                         the database is input, a hostile one must not hang the report\n"
	"  -q, --quiet            print nothing on standard output (with -o)\n"
	"  -v, --verbose          more detail on standard error\n"
	"  -h, --help             show this help and exit\n"
	"  -V, --version          show the version and exit\n"
	"\n"
	"Flows are ranked by badness = p99 ACK latency / the population's median p99, plus\n"
	"1000 x (retransmissions + NAKs + RNR NAKs + timeouts + CNPs) / packets.\n"
	"Exit status: 0 on success, 1 when the database cannot be read or the report written,\n"
	"2 on a usage error.\n"
	"\n"
	"Examples:\n"
	"  agentxdp-report incident.db\n"
	"  agentxdp-report incident.db -o report/\n"
	"  agentxdp-report incident.db --format markdown > incident.md\n"
	"  agentxdp-analyze trace.pcapng -o incident.db && agentxdp-report incident.db -o report/\n";

static const struct option long_options[] = {
	{ "output", required_argument, NULL, 'o' }, { "format", required_argument, NULL, 'f' },
	{ "png", no_argument, NULL, 'P' },	    { "top", required_argument, NULL, 'n' },
	{ "quiet", no_argument, NULL, 'q' },	    { "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },	    { "query-timeout", required_argument, NULL, 'T' },
	{ NULL, 0, NULL, 0 },
};

struct report_opts {
	const char *db_path;
	const char *out_dir;
	enum report_format format;
	bool png;
	bool quiet;
	uint64_t top_n;
	uint64_t query_timeout_s;
};

int main(int argc, char **argv)
{
	struct report_opts o = { .format = REPORT_TEXT, .top_n = 10, .query_timeout_s = REPORT_QUERY_TIMEOUT_S };
	struct report_data d;
	struct text_buf out = { 0 };
	char err[1024];
	uint64_t ns;
	int c, rc = 1;

	agentxdp_prog = "agentxdp-report";
	umask(027); /* report files 0640, folders 0750: traces can be sensitive */
	opterr = 0; /* usage_error_getopt() prints the one line */
	while ((c = getopt_long(argc, argv, ":o:f:n:qvhV", long_options, NULL)) != -1) {
		switch (c) {
		case 'o':
			o.out_dir = optarg;
			break;
		case 'f':
			if (!strcmp(optarg, "text"))
				o.format = REPORT_TEXT;
			else if (!strcmp(optarg, "markdown") || !strcmp(optarg, "md"))
				o.format = REPORT_MARKDOWN;
			else if (!strcmp(optarg, "html"))
				o.format = REPORT_HTML;
			else
				return usage_error("invalid --format '%s' (text, markdown or html)", optarg);
			break;
		case 'P':
			o.png = true;
			break;
		case 'n':
			if (parse_u64(optarg, 1, 1000, &o.top_n))
				return usage_error("invalid --top '%s' (1 to 1000)", optarg);
			break;
		case 'T':
			if (parse_duration_ns(optarg, DURATION_UNIT_REQUIRED, NS_PER_S, 86400 * NS_PER_S, &ns))
				return usage_error_duration("--query-timeout", optarg, "1s to 1d, e.g. 30s");
			o.query_timeout_s = (ns + NS_PER_S - 1) / NS_PER_S;
			break;
		case 'q':
			o.quiet = true;
			break;
		case 'v':
			agentxdp_log_level++;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		case 'V':
			printf("agentxdp-report %s\n", AGENTXDP_VERSION);
			return 0;
		default:
			return usage_error_getopt(c, argv);
		}
	}
	if (optind >= argc)
		return usage_error("no database given");
	if (argc - optind > 1)
		return usage_error("one database at a time ('%s' is extra)", argv[optind + 1]);
	o.db_path = argv[optind];
	if (access(o.db_path, R_OK)) {
		pr_err("%s: %s\n", o.db_path, strerror(errno));
		return 1;
	}

	if (report_data_load(o.db_path, o.top_n, (unsigned int)o.query_timeout_s, &d, err, sizeof(err))) {
		pr_err("%s\n", err);
		return 1;
	}
	pr_debug("%s: %llu flows (%zu loaded), %zu findings, %zu captures\n", o.db_path,
		 (unsigned long long)d.total_flows, d.n_flows, d.n_findings, d.n_captures);
	if (o.out_dir) {
		struct report_write_opts wo = { .png = o.png, .top_n = o.top_n,
						.query_timeout_s = (unsigned int)o.query_timeout_s };
		if (report_write_dir(&d, o.out_dir, &wo))
			goto cleanup;
	}
	if (!o.quiet) {
		int r = o.format == REPORT_HTML ? report_render_html(&out, &d, NULL, 0, o.top_n)
						: report_render_summary(&out, &d, o.format, o.top_n);
		if (r) {
			pr_err("out of memory while rendering\n");
			goto cleanup;
		}
		fwrite(out.data ? out.data : "", 1, out.len, stdout);
		if (o.out_dir && o.format == REPORT_TEXT)
			printf("\nreport: %s%sindex.html\n", o.out_dir, dir_sep(o.out_dir));
		if (fflush(stdout) || ferror(stdout)) {
			pr_err("standard output: %s\n", strerror(errno));
			goto cleanup;
		}
	}
	rc = 0;
cleanup:
	text_buf_free(&out);
	report_data_free(&d);
	return rc;
}
