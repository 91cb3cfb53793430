/* main.c: agentxdp-analyze, rebuild every RoCE queue pair's timeline from captures. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "analyze/analyze_opts.h"
#include "lib/store/store_sqlite.h"
#include "lib/trace/trace_filter.h"
#include "lib/track/qp_shards.h"
#include "lib/util/log.h"
#include "lib/util/parse_num.h"


static const char usage_text[] =
	"Usage: agentxdp-analyze [OPTIONS] TRACE...\n"
	"       agentxdp-analyze [OPTIONS] -r TRACE [-r TRACE]... [FILTER]\n"
	"\n"
	"Rebuild every RoCE v2 queue pair's request/ACK timeline from pcap or pcapng\n"
	"captures (agentxdp-capture's, tcpdump's, Wireshark's, ibdump's), measure latency,\n"
	"retransmissions, NAKs, RNR, timeouts, CNPs and ECN, store them in SQLite and name\n"
	"the slow or lossy link with its evidence. TRACE may be '-' for standard input;\n"
	"several traces (vantage points of one incident) are merged by time.\n"
	"\n"
	"Options:\n"
	"  -r, --read FILE        read the trace FILE, as tcpdump -r (repeatable); the\n"
	"                         words after the options are then a FILTER, not traces\n"
	"      --pcap-filter EXPR only the frames that pcap-filter(7) EXPR selects, as\n"
	"                         tcpdump would (compiled by libpcap per link type)\n"
	"      --qp QPN           only RoCE packets to destination QP QPN (0x0011a8 or\n"
	"                         decimal; repeatable: give both ends for both directions)\n"
	"  -c, --count N          stop after N frames selected (by FILTER and --qp), as\n"
	"                         tcpdump -c; the analysis covers those frames\n"
	"  -o, --output FILE      write the analysis database (SQLite) to FILE\n"
	"  -w FILE                the same as -o (-w writes a file in every tool; the\n"
	"                         window is --window)\n"
	"      --dump             print one line per RoCE packet (like tshark's summary)\n"
	"  -t                     with --dump, the time column as tcpdump's letters: -t\n"
	"                         none, -tt epoch seconds, -ttt since the previous line,\n"
	"                         -tttt local date and time, -ttttt (the default) since\n"
	"                         the first packet shown\n"
	"      --json             print a JSON summary (flows, totals, findings) on stdout\n"
	"      --summary          print what agentxdp-report's text says (verdict, capture\n"
	"                         health, hosts, host pairs, flows) on stdout\n"
	"      --csv DIR          write the main tables as CSV files into DIR\n"
	"      --report DIR       also write the post-incident report into DIR\n"
	"      --prom FILE        write Prometheus text-format metrics to FILE\n"
	"      --topology FILE    links.csv: link name, endpoint A, endpoint B\n"
	"      --paths FILE       paths.csv: src, dst, UDP source port, links in order\n"
	"                         (further columns, or one field of space-separated names)\n"
	"      --window DURATION  time window of the per-flow series and of the baselines\n"
	"                         (default: about a hundredth of the traces' span,\n"
	"                         100us to 1s, printed; 1s when reading standard input)\n"
	"      --sample-rows N    keep at most N latency sample rows per flow, kind and\n"
	"                         window in the database (default 1000; 0 = all);\n"
	"                         percentiles always use every sample\n"
	"      --samples WHICH    flows whose latency sample and per-packet retransmission\n"
	"                         rows go in the database: findings (default: the flows\n"
	"                         the findings and the report use), all, none; every flow\n"
	"                         keeps its latency histograms (latency_window,\n"
	"                         latency_hist) and retransmission_burst rows\n"
	"      --dedup DURATION   a packet identical to its flow's previous one within\n"
	"                         DURATION is a mirror's copy, not a retransmission\n"
	"                         (default 0: only identical timestamps)\n"
	"      --port PORT        also decode UDP destination PORT as RoCE v2 (repeatable)\n"
	"      --vxlan-port PORT  mirror copies in VXLAN on this UDP port (default 4789)\n"
	"  -j, --jobs N           track on N threads, 1 to 256 (default: the cores\n"
	"                         available, at most 2; 1 from a pipe or with a pcap\n"
	"                         filter); the results are the same for any N: on files\n"
	"                         each thread reads the traces itself (from a pipe or\n"
	"                         with a filter one more thread reads), and the database\n"
	"                         is written by another. --dump reads on one thread\n"
	"                         whatever -j says\n"
	"  -q, --quiet            only errors on standard error\n"
	"  -v, --verbose          more detail on standard error (repeat for debug)\n"
	"  -h, --help             show this help and exit\n"
	"  -V, --version          show the version and exit\n"
	"\n"
	"Durations need a unit: 500us, 10ms, 1s (a bare number is an error; 0 is 0).\n"
	"-w is no longer the window: -w 1ms is refused, use --window 1ms.\n"
	"Exit status: 0 on success, 1 when a trace was unreadable, truncated or corrupt\n"
	"(what was read is still analysed and written), 2 on a usage error, 128+N when\n"
	"signal N (SIGINT, SIGTERM, SIGHUP) stopped reading: what was read is analysed\n"
	"and written, marked interrupted; a second signal aborts.\n"
	"\n"
	"Examples:\n"
	"  agentxdp-analyze --dump trace.pcapng | head\n"
	"  agentxdp-analyze --dump -tttt -c 20 -r trace.pcapng 'host 10.0.0.4'\n"
	"  agentxdp-analyze -r x.pcapng 'host 10.0.0.4 and udp port 4791' -o x.db\n"
	"  agentxdp-analyze --dump --qp 0x0011a8 trace.pcapng\n"
	"  agentxdp-analyze trace.pcapng -o incident.db\n"
	"  agentxdp-analyze leaf1.pcapng leaf2.pcapng -o incident.db --json\n"
	"  agentxdp-analyze -r leaf1.pcapng -r leaf2.pcapng -o incident.db\n"
	"  agentxdp-analyze trace.pcap --topology links.csv --paths paths.csv -o out.db\n"
	"  tcpdump -i eth0 -w - udp port 4791 | agentxdp-analyze - -o live.db\n";

enum {
	OPT_DUMP = 256,
	OPT_JSON,
	OPT_SUMMARY,
	OPT_CSV,
	OPT_REPORT,
	OPT_PROM,
	OPT_TOPOLOGY,
	OPT_PATHS,
	OPT_PORT,
	OPT_VXLAN_PORT,
	OPT_SAMPLE_ROWS,
	OPT_SAMPLES,
	OPT_DEDUP,
	OPT_PCAP_FILTER,
	OPT_QP,
	OPT_WINDOW,
};

static const struct option long_options[] = {
	{ "read", required_argument, NULL, 'r' },
	{ "pcap-filter", required_argument, NULL, OPT_PCAP_FILTER },
	{ "qp", required_argument, NULL, OPT_QP },
	{ "count", required_argument, NULL, 'c' },
	{ "output", required_argument, NULL, 'o' },
	{ "dump", no_argument, NULL, OPT_DUMP },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "summary", no_argument, NULL, OPT_SUMMARY },
	{ "csv", required_argument, NULL, OPT_CSV },
	{ "report", required_argument, NULL, OPT_REPORT },
	{ "prom", required_argument, NULL, OPT_PROM },
	{ "topology", required_argument, NULL, OPT_TOPOLOGY },
	{ "paths", required_argument, NULL, OPT_PATHS },
	{ "window", required_argument, NULL, OPT_WINDOW },
	{ "port", required_argument, NULL, OPT_PORT },
	{ "vxlan-port", required_argument, NULL, OPT_VXLAN_PORT },
	{ "sample-rows", required_argument, NULL, OPT_SAMPLE_ROWS },
	{ "samples", required_argument, NULL, OPT_SAMPLES },
	{ "dedup", required_argument, NULL, OPT_DEDUP },
	{ "jobs", required_argument, NULL, 'j' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 },
};

/* A duration option: a unit is required ("--window 10" is not taken as seconds). */
static int duration_opt(const char *opt, const char *text, uint64_t min_ns, uint64_t max_ns,
			const char *range, uint64_t *out)
{
	if (!parse_duration_ns(text, DURATION_UNIT_REQUIRED, min_ns, max_ns, out))
		return 0;
	return usage_error_duration(opt, text, range);
}

/*
 * -w FILE writes the database, as -w writes a file in every tool. It was the window: a
 * value that reads as a duration (or a bare number of seconds) is that old habit, refused
 * before any file is created.
 */
static int write_opt(const char *text, const char **w_path)
{
	uint64_t ns;
	size_t len;

	if (!parse_duration_ns(text, DURATION_UNIT_REQUIRED, 0, UINT64_MAX, &ns))
		return usage_error("-w writes the database now: for the window use --window %s", text);
	if (!parse_duration_ns(text, 1000000000ull, 0, UINT64_MAX, &ns))
		return usage_error("-w writes the database now: for the window use --window %ss", text);
	if (!*text)
		return usage_error("%s", "empty -w file name");
	/* tcpdump's "-r in.pcap -w out.pcap" habit: the file would be a database, not a trace. */
	len = strlen(text);
	if ((len > 5 && !strcmp(text + len - 5, ".pcap")) || (len > 7 && !strcmp(text + len - 7, ".pcapng")))
		return usage_error("-w %s: -w writes the analysis database (SQLite), not a trace; "
				   "name it .db", text);
	*w_path = text;
	return 0;
}

/* The command line's frame selection: FILTER words after -r, or --pcap-filter. */
#define MAX_READS 1024 /* -r options; positional traces have no limit */

struct select_args {
	const char *reads[MAX_READS];	/* -r FILE... */
	int n_reads;
	const char *pcap_filter;	/* --pcap-filter */
	int tees;			/* how many -t letters */
	const char *w_path;		/* -w FILE, the same as -o */
};

/* -r FILE, repeatable. */
static int read_opt(struct select_args *sa, const char *text)
{
	if (!*text)
		return usage_error("%s", "empty -r file name");
	if (sa->n_reads == MAX_READS)
		return usage_error("too many -r options (at most %d)", MAX_READS);
	sa->reads[sa->n_reads++] = text;
	return 0;
}

/* Join the FILTER words as tcpdump does ("host", "10.0.0.4" -> "host 10.0.0.4"). */
static char *join_words(char **words, int n)
{
	size_t len = 1;
	char *s;

	for (int i = 0; i < n; i++)
		len += strlen(words[i]) + 1;
	s = malloc(len);
	if (!s)
		return NULL;
	s[0] = '\0';
	for (int i = 0; i < n; i++) {
		if (i)
			strcat(s, " ");
		strcat(s, words[i]);
	}
	return s;
}

/* Traces and filter from -r, the words after the options and --pcap-filter; 0 or an exit status. */
static int finish_selection(struct analyze_opts *opts, struct select_args *sa, int argc, char **argv)
{
	char *joined = NULL, err[512];
	const char *expr = sa->pcap_filter;
	int rc;

	if (sa->w_path && opts->db_path && strcmp(sa->w_path, opts->db_path))
		return usage_error("-w %s and -o %s: one database at a time", sa->w_path, opts->db_path);
	if (sa->w_path)
		opts->db_path = sa->w_path;
	if (sa->tees) {
		if (!opts->dump)
			return usage_error("%s", "-t sets --dump's time column: use it with --dump");
		if (sa->tees > 5)
			return usage_error("%s", "-t: at most -ttttt");
		opts->dump_time = sa->tees == 5 ? DUMP_TIME_SINCE_FIRST : (enum dump_time)sa->tees;
	}
	if (sa->n_reads) {
		opts->traces = sa->reads;
		opts->n_traces = sa->n_reads;
		if (optind < argc) {
			if (expr)
				return usage_error("%s", "a FILTER after the options and --pcap-filter: give one");
			joined = join_words(&argv[optind], argc - optind);
			if (!joined)
				return usage_error("%s", strerror(ENOMEM));
			expr = joined;
		}
	} else {
		if (optind >= argc)
			return usage_error("%s", "no trace given");
		opts->traces = (const char **)&argv[optind];
		opts->n_traces = argc - optind;
	}
	if (!expr || !*expr) {
		free(joined);
		return 0;
	}
	rc = trace_filter_new(&opts->filter, expr, err, sizeof(err));
	free(joined);
	if (rc)
		return usage_error("%s", err);
	return 0;
}

/* --port (repeatable) and --vxlan-port: a UDP port, 1 to 65535. */
static int port_opt(struct analyze_opts *o, bool vxlan, const char *arg)
{
	uint64_t v;

	if (parse_u64(arg, 1, 65535, &v))
		return usage_error("invalid %s '%s' (1 to 65535)", vxlan ? "--vxlan-port" : "--port", arg);
	if (vxlan) {
		o->vxlan_port = (uint16_t)v;
		return 0;
	}
	if (o->n_extra_ports == MAX_EXTRA_PORTS)
		return usage_error("too many --port options (at most %d)", MAX_EXTRA_PORTS);
	o->extra_ports[o->n_extra_ports++] = (uint16_t)v;
	return 0;
}

/*
 * What the run keeps and what it runs on: --sample-rows N, --samples findings|all|none
 * (store_samples_name()'s names), -j N (tracker threads).
 */
static int sizing_opt(int c, const char *text, struct analyze_opts *opts)
{
	uint64_t v;

	if (c == 'j') {
		if (parse_u64(text, 1, QP_SHARDS_MAX, &v))
			return usage_error("invalid --jobs '%s' (1 to %d threads)", text, QP_SHARDS_MAX);
		opts->jobs = (unsigned)v;
		return 0;
	}
	if (c == OPT_SAMPLE_ROWS) {
		if (parse_u64(text, 0, UINT32_MAX, &v))
			return usage_error("invalid --sample-rows '%s' (0 to 4294967295)", text);
		opts->max_samples_per_window = (uint32_t)v;
		return 0;
	}
	for (uint8_t m = 0; store_samples_name(m); m++) {
		if (!strcmp(text, store_samples_name(m))) {
			opts->samples = m;
			return 0;
		}
	}
	return usage_error("invalid --samples '%s' (findings, all or none)", text);
}

/*
 * Issue #20: the cores this process may run on, capped at ANALYZE_JOBS_CAP, the most lanes
 * measured to pay (docs/benchmarks.md: -j 2 against -j 1 on 2 cores; more lanes than cores
 * only repeat the reading). analyze_run.c uses it only when lanes fit (regular files, no
 * filter): a pipe's reader thread was slower than -j 1, so there the default stays 1.
 */
#define ANALYZE_JOBS_CAP 2

unsigned analyze_default_jobs(void)
{
	cpu_set_t set;
	int n;

	if (sched_getaffinity(0, sizeof(set), &set))
		return 1; /* more than CPU_SETSIZE CPUs, or no answer: one thread, as before */
	n = CPU_COUNT(&set);
	if (n < 1)
		return 1;
	return n > ANALYZE_JOBS_CAP ? ANALYZE_JOBS_CAP : (unsigned)n;
}


/* A file or folder option: an empty name is a usage error before any work. */
#define PATH_OPT(dst, what)                                                   \
	do {                                                                  \
		if (!*optarg)                                                 \
			return usage_error("%s", "empty " what " name");      \
		(dst) = optarg;                                               \
	} while (0)

int main(int argc, char **argv)
{
	struct analyze_opts opts = {
		.window_ns = 0, /* chosen from the traces' span */
		.max_samples_per_window = 1000,
	};
	static struct select_args sa;
	uint64_t v;
	int c, rc;

	agentxdp_prog = "agentxdp-analyze";
	umask(027); /* outputs 0640, folders 0750: traces and counters can be sensitive */
	opterr = 0; /* usage_error_getopt() prints the one line */
	while ((c = getopt_long(argc, argv, ":r:c:o:tw:j:qvhV", long_options, NULL)) != -1) {
		switch (c) {
		case 'r':
			if ((rc = read_opt(&sa, optarg)))
				return rc;
			break;
		case OPT_PCAP_FILTER:
			sa.pcap_filter = optarg;
			break;
		case OPT_QP:
			if (parse_u64(optarg, 0, 0xffffff, &v))
				return usage_error("invalid --qp '%s' (a 24-bit QP number, e.g. 0x0011a8)", optarg);
			if (opts.n_qps == MAX_QP_SELECT)
				return usage_error("too many --qp options (at most %d)", MAX_QP_SELECT);
			opts.qps[opts.n_qps++] = (uint32_t)v;
			break;
		case 'c':
			if (parse_u64(optarg, 1, UINT64_MAX, &v))
				return usage_error("invalid --count '%s' (1 or more frames)", optarg);
			opts.max_frames = v;
			break;
		case 't':
			sa.tees++;
			break;
		case 'o': /* empty: else "cannot rename .tmp-XXXXXX into place" */
			PATH_OPT(opts.db_path, "--output file");
			break;
		case 'w':
			if ((rc = write_opt(optarg, &sa.w_path)))
				return rc;
			break;
		case OPT_DUMP:
			opts.dump = true;
			break;
		case OPT_SUMMARY:
			opts.summary = true;
			break;
		case OPT_JSON:
			opts.json = true;
			break;
		case OPT_CSV:
			PATH_OPT(opts.csv_dir, "--csv");
			break;
		case OPT_REPORT:
			PATH_OPT(opts.report_dir, "--report");
			break;
		case OPT_PROM:
			PATH_OPT(opts.prom_path, "--prom");
			break;
		case OPT_TOPOLOGY:
			PATH_OPT(opts.topology_csv, "--topology");
			break;
		case OPT_PATHS:
			PATH_OPT(opts.paths_csv, "--paths");
			break;
		case OPT_WINDOW:
			if ((rc = duration_opt("--window", optarg, 100000ull, 3600000000000ull,
					       "100us to 1h, e.g. 1s or 250ms", &v)))
				return rc;
			opts.window_ns = v;
			break;
		case OPT_PORT:
		case OPT_VXLAN_PORT:
			if ((rc = port_opt(&opts, c == OPT_VXLAN_PORT, optarg)))
				return rc;
			break;
		case OPT_SAMPLE_ROWS:
		case OPT_SAMPLES:
		case 'j':
			if ((rc = sizing_opt(c, optarg, &opts)))
				return rc;
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
	if ((rc = finish_selection(&opts, &sa, argc, argv)))
		return rc;

	if (opts.dump) {
		rc = dump_traces(&opts);
	} else {
		analyze_catch_signals();
		rc = analyze_traces(&opts);
	}
	trace_filter_free(opts.filter);
	return rc;
}
