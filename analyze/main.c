/* main.c: agentxdp-analyze, rebuild every RoCE queue pair's timeline from captures. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "analyze/analyze_opts.h"
#include "lib/util/log.h"
#include "lib/util/parse_num.h"


static const char usage_text[] =
	"Usage: agentxdp-analyze [OPTIONS] TRACE...\n"
	"\n"
	"Rebuild every RoCE v2 queue pair's request/ACK timeline from pcap or pcapng\n"
	"captures (agentxdp-capture's, tcpdump's, Wireshark's, ibdump's), measure latency,\n"
	"retransmissions, NAKs, RNR, timeouts, CNPs and ECN, store them in SQLite and name\n"
	"the slow or lossy link with its evidence. TRACE may be '-' for standard input;\n"
	"several traces (vantage points of one incident) are merged by time.\n"
	"\n"
	"Options:\n"
	"  -o, --output FILE      write the analysis database (SQLite) to FILE\n"
	"      --dump             print one line per RoCE packet (like tshark's summary)\n"
	"      --json             print a JSON summary (flows, totals, findings) on stdout\n"
	"      --csv DIR          write the main tables as CSV files into DIR\n"
	"      --report DIR       also write the post-incident report into DIR\n"
	"      --prom FILE        write Prometheus text-format metrics to FILE\n"
	"      --topology FILE    links.csv: link name, endpoint A, endpoint B\n"
	"      --paths FILE       paths.csv: src, dst, UDP source port, links in order\n"
	"                         (further columns, or one field of space-separated names)\n"
	"  -w, --window DURATION  time window of the per-flow series and of the baselines\n"
	"                         (default: about a hundredth of the traces' span,\n"
	"                         100us to 1s, printed; 1s when reading standard input)\n"
	"      --sample-rows N    keep at most N latency sample rows per flow, kind and\n"
	"                         window in the database (default 1000; 0 = all);\n"
	"                         percentiles always use every sample\n"
	"      --dedup DURATION   a packet identical to its flow's previous one within\n"
	"                         DURATION is a mirror's copy, not a retransmission\n"
	"                         (default 0: only identical timestamps)\n"
	"      --port PORT        also decode UDP destination PORT as RoCE v2 (repeatable)\n"
	"  -q, --quiet            only errors on standard error\n"
	"  -v, --verbose          more detail on standard error (repeat for debug)\n"
	"  -h, --help             show this help and exit\n"
	"  -V, --version          show the version and exit\n"
	"\n"
	"Durations need a unit: 500us, 10ms, 1s (a bare number is an error; 0 is 0).\n"
	"Exit status: 0 on success, 1 when a trace\n"
	"was unreadable, truncated or corrupt (what was read is still analysed and written),\n"
	"2 on a usage error, 128+N when signal N (SIGINT, SIGTERM, SIGHUP) stopped reading:\n"
	"what was read is analysed and written, marked interrupted; a second signal aborts.\n"
	"\n"
	"Examples:\n"
	"  agentxdp-analyze --dump trace.pcapng | head\n"
	"  agentxdp-analyze trace.pcapng -o incident.db\n"
	"  agentxdp-analyze leaf1.pcapng leaf2.pcapng -o incident.db --json\n"
	"  agentxdp-analyze trace.pcap --topology links.csv --paths paths.csv -o out.db\n"
	"  tcpdump -i eth0 -w - udp port 4791 | agentxdp-analyze - -o live.db\n";

enum {
	OPT_DUMP = 256,
	OPT_JSON,
	OPT_CSV,
	OPT_REPORT,
	OPT_PROM,
	OPT_TOPOLOGY,
	OPT_PATHS,
	OPT_PORT,
	OPT_SAMPLE_ROWS,
	OPT_DEDUP,
};

static const struct option long_options[] = {
	{ "output", required_argument, NULL, 'o' },
	{ "dump", no_argument, NULL, OPT_DUMP },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "csv", required_argument, NULL, OPT_CSV },
	{ "report", required_argument, NULL, OPT_REPORT },
	{ "prom", required_argument, NULL, OPT_PROM },
	{ "topology", required_argument, NULL, OPT_TOPOLOGY },
	{ "paths", required_argument, NULL, OPT_PATHS },
	{ "window", required_argument, NULL, 'w' },
	{ "port", required_argument, NULL, OPT_PORT },
	{ "sample-rows", required_argument, NULL, OPT_SAMPLE_ROWS },
	{ "dedup", required_argument, NULL, OPT_DEDUP },
	{ "quiet", no_argument, NULL, 'q' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 },
};

/* A duration option: a unit is required ("-w 10" is not taken as seconds). */
static int duration_opt(const char *opt, const char *text, uint64_t min_ns, uint64_t max_ns,
			const char *range, uint64_t *out)
{
	double bare;
	int err = parse_duration_ns(text, DURATION_UNIT_REQUIRED, min_ns, max_ns, out);

	if (!err)
		return 0;
	if (!parse_double(text, 0, INFINITY, &bare))
		return usage_error("invalid %s '%s': a duration needs a unit (%s)", opt, text, range);
	return usage_error("invalid %s '%s' (%s)", opt, text, range);
}

int main(int argc, char **argv)
{
	struct analyze_opts opts = {
		.window_ns = 0, /* chosen from the traces' span */
		.max_samples_per_window = 1000,
	};
	uint64_t v;
	int c, rc;

	agentxdp_prog = "agentxdp-analyze";
	umask(027); /* outputs 0640, folders 0750: traces and counters can be sensitive */
	opterr = 0; /* usage_error_getopt() prints the one line */
	while ((c = getopt_long(argc, argv, ":o:w:qvhV", long_options, NULL)) != -1) {
		switch (c) {
		case 'o':
			if (!*optarg) /* else "cannot rename .tmp-XXXXXX into place" */
				return usage_error("%s", "empty --output file name");
			opts.db_path = optarg;
			break;
		case OPT_DUMP:
			opts.dump = true;
			break;
		case OPT_JSON:
			opts.json = true;
			break;
		case OPT_CSV:
			opts.csv_dir = optarg;
			break;
		case OPT_REPORT:
			opts.report_dir = optarg;
			break;
		case OPT_PROM:
			opts.prom_path = optarg;
			break;
		case OPT_TOPOLOGY:
			opts.topology_csv = optarg;
			break;
		case OPT_PATHS:
			opts.paths_csv = optarg;
			break;
		case 'w':
			if ((rc = duration_opt("--window", optarg, 100000ull, 3600000000000ull,
					       "100us to 1h, e.g. 1s or 250ms", &v)))
				return rc;
			opts.window_ns = v;
			break;
		case OPT_PORT:
			if (parse_u64(optarg, 1, 65535, &v))
				return usage_error("invalid --port '%s' (1 to 65535)", optarg);
			if (opts.n_extra_ports == MAX_EXTRA_PORTS)
				return usage_error("too many --port options (at most %d)", MAX_EXTRA_PORTS);
			opts.extra_ports[opts.n_extra_ports++] = (uint16_t)v;
			break;
		case OPT_SAMPLE_ROWS:
			if (parse_u64(optarg, 0, UINT32_MAX, &v))
				return usage_error("invalid --sample-rows '%s' (0 to 4294967295)", optarg);
			opts.max_samples_per_window = (uint32_t)v;
			break;
		case OPT_DEDUP:
			if ((rc = duration_opt("--dedup", optarg, 0, 1000000000ull, "0 to 1s, e.g. 500ns", &v)))
				return rc;
			opts.dedup_ns = v;
			break;
		case 'q':
			agentxdp_log_level = LOG_ERR;
			break;
		case 'v':
			agentxdp_log_level++;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		case 'V':
			printf("agentxdp-analyze %s\n", AGENTXDP_VERSION);
			return 0;
		default:
			return usage_error_getopt(c, argv);
		}
	}
	if (optind >= argc)
		return usage_error("%s", "no trace given");
	opts.traces = (const char **)&argv[optind];
	opts.n_traces = argc - optind;

	if (opts.dump)
		return dump_traces(&opts);
	analyze_catch_signals();
	return analyze_traces(&opts);
}
