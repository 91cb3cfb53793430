/* capture_main.c: agentxdp-capture, XDP capture of RoCE headers into pcapng (tcpdump-like CLI). */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "capture/capture.h"
#include "lib/capture/capture_iface.h"
#include "lib/trace/pcapng_writer.h"
#include "lib/agent/live_agent.h"
#include "lib/util/log.h"
#include "lib/util/parse_num.h"
#include "lib/util/util.h"


#define LINKTYPE_ETHERNET 1
#define POLL_MS 100
#define STATUS_EVERY_NS 500000000ull	/* live status line refresh */
#define STATS_EVERY_NS 10000000000ull	/* an ISB per interface every 10 s */
#define FLUSH_EVERY_NS 1000000000ull	/* at most 1 s of packets only in memory */
#define DEFAULT_RING_KIB 8192

static const char usage_text[] =
	"Usage: agentxdp-capture -i IFACE [-i IFACE]... -w FILE [OPTIONS]\n"
	"\n"
	"Capture RoCE v2 (UDP 4791) and RoCE v1 (EtherType 0x8915) packets with an XDP\n"
	"program and write them to a pcapng file that tshark, Wireshark, tcpdump and\n"
	"agentxdp-analyze read. By default only the headers are kept: Ethernet, VLAN tags,\n"
	"IPv4/IPv6 or GRH, UDP, BTH and the extended headers the opcode implies (RETH, AETH,\n"
	"DETH, ...), plus the first 96 bytes of CM MADs on QP1; each packet keeps its\n"
	"original length. Other traffic is untouched (XDP_PASS) and costs a few ns.\n"
	"\n"
	"Options:\n"
	"  -i, --interface IFACE   capture on IFACE (repeat for up to 8 interfaces, one file)\n"
	"  -w, --write FILE        write pcapng to FILE ('-' for standard output)\n"
	"  -c, --count N           stop after N packets\n"
	"      --duration DURATION stop after this long (500ms, 30s, 5m)\n"
	"  -C, --file-size MB      start a new file when the current one exceeds MB million\n"
	"                          bytes: FILE, FILE1, FILE2, ... (as tcpdump)\n"
	"  -G, --rotate SECONDS    start a new file every SECONDS (as tcpdump -G: a bare\n"
	"                          number is seconds; 5m also works); FILE is an strftime(3)\n"
	"                          pattern (e.g. roce-%H%M%S.pcapng); a repeated name gets\n"
	"                          a number appended\n"
	"  -U, --packet-buffered   write each packet to the file at once (as tcpdump -U);\n"
	"                          by default packets reach the file within a second\n"
	"  -s, --snaplen BYTES     keep BYTES of each packet (1-9216, 0 = 9216) instead of\n"
	"                          the headers only\n"
	"  -B, --buffer-size KIB   memory for the record rings in KiB (default 8192), split\n"
	"                          over the CPUs: each gets the largest power of two that fits\n"
	"      --filter FILTER     capture only matching packets, decided in the kernel:\n"
	"                            [src|dst] host ADDRESS   (IPv4/IPv6; RoCE v1: GID)\n"
	"                            qpn NUMBER               (BTH destination QP)\n"
	"                          joined by 'and'; repeated --filter options are and-ed\n"
	"      --mode MODE         XDP mode: native, generic or auto (default: auto =\n"
	"                          native where the driver supports it)\n"
	"      --analyze           agent mode: run the analysis (the same code as\n"
	"                          agentxdp-analyze) on the live packets; -w is then optional\n"
	"      --metrics ADDR:PORT serve Prometheus /metrics (with --analyze; default\n"
	"                          127.0.0.1:9476, loopback unless told otherwise; 'off' = none)\n"
	"      --textfile DIR      also write DIR/agentxdp.prom for node_exporter's textfile\n"
	"                          collector every interval (atomically)\n"
	"      --otlp URL          also push the metrics with OTLP/HTTP JSON to URL/v1/metrics\n"
	"                          (bounded queue, retries: a slow collector never stalls capture)\n"
	"      --topology FILE     links.csv for localization (with --analyze)\n"
	"      --paths FILE        paths.csv for localization (with --analyze)\n"
	"      --interval DURATION how often the agent localizes and exports (default 1s)\n"
	"      --forget DURATION   start the flow table afresh once half its flows (256 or\n"
	"                          more) have been idle this long (default 10m)\n"
	"      --max-flows N       ... or once it holds N flows (default 50000)\n"
	"      --max-pairs N       host pairs with their own metric labels (default 200)\n"
	"      --top-qps N         queue pairs with their own p99 gauge (default 20)\n"
	"  -q, --quiet             no status line, no summary; only errors\n"
	"  -v, --verbose           more detail on standard error (repeat for libbpf debug)\n"
	"  -h, --help              show this help and exit\n"
	"  -V, --version           show the version and exit\n"
	"\n"
	"While running, a one-line status (packets, bytes, lost) is shown on standard\n"
	"error when it is a terminal; at exit a summary per interface. SIGINT or SIGTERM\n"
	"stop the capture; the file is always complete pcapng, and holds every packet\n"
	"captured more than a second before even kill -9. The XDP program is attached\n"
	"with a bpf_link: it goes away when the process exits, even on kill -9. Packets the\n"
	"rings could not take are counted, reported in the summary, in each packet's\n"
	"epb_dropcount and in the interface statistics blocks.\n"
	"\n"
	"Needs CAP_BPF and CAP_NET_ADMIN. Exit status: 0 on success, 1 on a runtime error\n"
	"(e.g. disk full: what was written stays readable, ends with statistics that count\n"
	"the packets not written as isb_osdrop, and the message says how many it holds),\n"
	"2 on a usage error.\n"
	"\n"
	"Durations need a unit (500ms, 30s, 5m); only -G takes a bare number of seconds.\n"
	"-d is no longer the duration: use --duration (one meaning per letter, docs/flags.md).\n"
	"\n"
	"Examples:\n"
	"  agentxdp-capture -i eth0 -w roce.pcapng\n"
	"  agentxdp-capture -i eth0 -i eth1 -w both.pcapng --duration 30s\n"
	"  agentxdp-capture -i eth0 -w - --filter 'host 198.18.0.1 and qpn 0x12' | tshark -r -\n"
	"  agentxdp-capture -i eth0 -w roce.pcapng -C 100 -c 1000000 -s 128\n"
	"  agentxdp-capture -i eth0 -w 'roce-%Y%m%d-%H%M%S.pcapng' -G 60 --mode generic\n"
	"  agentxdp-capture -i eth0 --analyze --metrics 127.0.0.1:9476\n"
	"  agentxdp-capture -i eth0 --analyze --otlp http://127.0.0.1:4318 --textfile /var/lib/node_exporter\n";

enum {
	OPT_FILTER = 256,
	OPT_MODE,
	OPT_ANALYZE,
	OPT_METRICS,
	OPT_TEXTFILE,
	OPT_OTLP,
	OPT_TOPOLOGY,
	OPT_PATHS,
	OPT_INTERVAL,
	OPT_FORGET,
	OPT_MAX_FLOWS,
	OPT_MAX_PAIRS,
	OPT_TOP_QPS,
	OPT_DURATION,
};

static const struct option long_options[] = {
	{ "interface", required_argument, NULL, 'i' },
	{ "write", required_argument, NULL, 'w' },
	{ "count", required_argument, NULL, 'c' },
	{ "duration", required_argument, NULL, OPT_DURATION },
	{ "file-size", required_argument, NULL, 'C' },
	{ "rotate", required_argument, NULL, 'G' },
	{ "snaplen", required_argument, NULL, 's' },
	{ "packet-buffered", no_argument, NULL, 'U' },
	{ "buffer-size", required_argument, NULL, 'B' },
	{ "filter", required_argument, NULL, OPT_FILTER },
	{ "mode", required_argument, NULL, OPT_MODE },
	{ "analyze", no_argument, NULL, OPT_ANALYZE },
	{ "metrics", required_argument, NULL, OPT_METRICS },
	{ "textfile", required_argument, NULL, OPT_TEXTFILE },
	{ "otlp", required_argument, NULL, OPT_OTLP },
	{ "topology", required_argument, NULL, OPT_TOPOLOGY },
	{ "paths", required_argument, NULL, OPT_PATHS },
	{ "interval", required_argument, NULL, OPT_INTERVAL },
	{ "forget", required_argument, NULL, OPT_FORGET },
	{ "max-flows", required_argument, NULL, OPT_MAX_FLOWS },
	{ "max-pairs", required_argument, NULL, OPT_MAX_PAIRS },
	{ "top-qps", required_argument, NULL, OPT_TOP_QPS },
	{ "quiet", no_argument, NULL, 'q' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 },
};

struct capture_opts {
	struct capture_config cfg;
	const char *out_pattern;	/* -w */
	uint64_t max_pkts;		/* -c, 0 = no limit */
	uint64_t duration_ns;		/* --duration, 0 = no limit */
	uint64_t rotate_bytes;		/* -C, 0 = never */
	uint64_t rotate_ns;		/* -G, 0 = never */
	bool packet_buffered;		/* -U: each packet written at once */
	bool quiet;
	bool analyze;			/* --analyze: agent mode */
	bool metrics_set;		/* --metrics given (else the default endpoint) */
	struct live_agent_opts agent;	/* --metrics, --textfile, --otlp, --topology, --paths */
	uint64_t agent_interval_ns;	/* --interval */
	bool agent_tuned;		/* --forget, --max-flows, --max-pairs or --top-qps given */
};

/* Everything the record callback and the main loop share. */
struct capture_run {
	const struct capture_opts *opts;
	struct capture_session *session;
	struct pcapng_writer *writer;
	char path[4096 + 16];		/* current file: base_name + file_index */
	char base_name[4096];		/* strftime result the current name was built from */
	unsigned file_index;		/* number appended to base_name (0 = none) */
	unsigned files_opened;
	uint64_t file_opened_ns;
	uint64_t start_ns;
	uint64_t pkts, bytes, lost;	/* written packets, their original bytes, ring losses seen */
	uint64_t if_pkts[ROCE_CAP_MAX_IFACES];
	uint64_t file_pkts[ROCE_CAP_MAX_IFACES]; /* handed to the current file's writer, per interface */
	uint64_t file_held;		/* after a write error: packets the file holds */
	uint64_t file_not_written;	/* ... and the captured ones it does not */
	bool final_stats_lost;		/* ... and whether its statistics could not be written */
	int write_errno;		/* first write error; stops the capture */
	bool done;			/* -c reached, or a write failed */
	bool failed;			/* a new file could not be opened */
	struct live_agent *agent;	/* --analyze */
	uint64_t agent_oom;		/* frames the agent could not track (no memory) */
};

static volatile sig_atomic_t stop_requested;

static void on_stop_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

/*
 * The numeric options: each goes through one checked parser with its bounds, and lands
 * times scale in its field. A duration needs a unit, except -G's bare seconds (tcpdump's).
 */
enum num_kind { NUM_PLAIN, NUM_DURATION, NUM_SECONDS };

struct num_option {
	int key;			/* getopt_long's return */
	const char *name;		/* as the usage error names it */
	uint64_t min, max;
	enum num_kind kind;
	uint64_t scale;			/* the field holds value * scale */
	size_t off, width;		/* the field in struct capture_opts */
	bool agent_tuning;		/* needs --analyze */
	const char *range;		/* the usage error's hint */
};

#define OPT_FIELD(f) offsetof(struct capture_opts, f), sizeof(((struct capture_opts *)0)->f)
#define NS_PER_S 1000000000ull
#define NS_PER_DAY (86400 * NS_PER_S)

static const struct num_option num_options[] = {
	{ 'c', "-c", 1, UINT64_MAX, NUM_PLAIN, 1, OPT_FIELD(max_pkts), false, "a packet count >= 1" },
	{ OPT_DURATION, "--duration", 1000000ull, 366 * NS_PER_DAY, NUM_DURATION, 1,
	  OPT_FIELD(duration_ns), false, "1ms to 366 days, e.g. 30s or 500ms" },
	{ 'C', "-C", 1, 1000000, NUM_PLAIN, 1000000ull, OPT_FIELD(rotate_bytes), false,
	  "1 to 1000000 MB" },
	{ 'G', "-G", NS_PER_S, 366 * NS_PER_DAY, NUM_SECONDS, 1, OPT_FIELD(rotate_ns), false,
	  "1s to 366 days" },
	{ 'B', "-B", 4, 1048576, NUM_PLAIN, 1024, OPT_FIELD(cfg.ring_bytes), false,
	  "4 to 1048576 KiB" },
	{ OPT_INTERVAL, "--interval", 100000000ull, 3600 * NS_PER_S, NUM_DURATION, 1,
	  OPT_FIELD(agent_interval_ns), false, "100ms to 1h, e.g. 1s" },
	{ OPT_FORGET, "--forget", NS_PER_S, 30 * NS_PER_DAY, NUM_DURATION, 1,
	  OPT_FIELD(agent.forget_ns), true, "1s to 30d, e.g. 10m" },
	{ OPT_MAX_FLOWS, "--max-flows", 1000, 100000000, NUM_PLAIN, 1, OPT_FIELD(agent.max_flows),
	  true, "1000 to 100000000" },
	{ OPT_MAX_PAIRS, "--max-pairs", 1, 100000, NUM_PLAIN, 1, OPT_FIELD(agent.max_pairs), true,
	  "1 to 100000" },
	{ OPT_TOP_QPS, "--top-qps", 1, 100000, NUM_PLAIN, 1, OPT_FIELD(agent.top_qps), true,
	  "1 to 100000" },
};

static const struct num_option *find_num_option(int key)
{
	for (size_t i = 0; i < ARRAY_SIZE(num_options); i++)
		if (num_options[i].key == key)
			return &num_options[i];
	return NULL;
}

/* Parse text for one numeric option into its field: 0, or the usage error's exit status. */
static int set_num_option(struct capture_opts *o, const struct num_option *n, const char *text)
{
	uint64_t v;
	int err;

	if (n->kind == NUM_DURATION) {
		if (parse_duration_ns(text, DURATION_UNIT_REQUIRED, n->min, n->max, &v))
			return usage_error_duration(n->name, text, n->range);
	} else {
		if (n->kind == NUM_SECONDS)
			err = parse_duration_ns(text, NS_PER_S, n->min, n->max, &v);
		else
			err = parse_u64(text, n->min, n->max, &v);
		if (err)
			return usage_error("invalid %s '%s' (%s)", n->name, text, n->range);
	}
	v *= n->scale; /* no overflow: every scaled option's max times its scale fits */
	if (n->width == sizeof(uint32_t)) {
		uint32_t v32 = (uint32_t)v;

		memcpy((char *)o + n->off, &v32, sizeof(v32));
	} else {
		memcpy((char *)o + n->off, &v, sizeof(v));
	}
	if (n->agent_tuning)
		o->agent_tuned = true;
	return 0;
}

static int parse_options(int argc, char **argv, struct capture_opts *o)
{
	const struct num_option *num;
	uint64_t v;
	char err[256];
	int c, rc;

	opterr = 0; /* usage_error_getopt() prints the one line */
	while ((c = getopt_long(argc, argv, ":i:w:c:d:C:G:s:B:UqvhV", long_options, NULL)) != -1) {
		num = find_num_option(c);
		if (num) {
			rc = set_num_option(o, num, optarg);
			if (rc)
				return rc;
			continue;
		}
		switch (c) {
		case 'd': /* was the duration; one meaning per letter (docs/flags.md) */
			return usage_error("-d is no longer the duration: use --duration %s", optarg);
		case 'i':
			if (o->cfg.n_ifaces == ROCE_CAP_MAX_IFACES)
				return usage_error("too many -i options (at most %d)", ROCE_CAP_MAX_IFACES);
			for (unsigned i = 0; i < o->cfg.n_ifaces; i++)
				if (!strcmp(o->cfg.ifnames[i], optarg))
					return usage_error("interface %s given twice", optarg);
			o->cfg.ifnames[o->cfg.n_ifaces++] = optarg;
			break;
		case 'w':
			o->out_pattern = optarg;
			break;
		case 's':
			if (parse_u64(optarg, 0, ROCE_CAP_MAX_SNAPLEN, &v))
				return usage_error("invalid -s '%s' (0 to %d bytes)", optarg, ROCE_CAP_MAX_SNAPLEN);
			o->cfg.snaplen = v ? (uint32_t)v : ROCE_CAP_MAX_SNAPLEN;
			break;
		case 'U':
			o->packet_buffered = true;
			break;
		case OPT_FILTER:
			if (capture_filter_parse(optarg, &o->cfg.filter, err, sizeof(err)))
				return usage_error("%s", err);
			break;
		case OPT_MODE:
			if (!strcmp(optarg, "auto"))
				o->cfg.mode = CAPTURE_MODE_AUTO;
			else if (!strcmp(optarg, "native"))
				o->cfg.mode = CAPTURE_MODE_NATIVE;
			else if (!strcmp(optarg, "generic"))
				o->cfg.mode = CAPTURE_MODE_GENERIC;
			else
				return usage_error("invalid --mode '%s' (native, generic or auto)", optarg);
			break;
		case OPT_ANALYZE:
			o->analyze = true;
			break;
		case OPT_METRICS:
			o->agent.metrics_listen = strcmp(optarg, "off") ? optarg : NULL;
			o->metrics_set = true;
			break;
		case OPT_TEXTFILE:
			o->agent.textfile_dir = optarg;
			break;
		case OPT_OTLP:
			o->agent.otlp_url = optarg;
			break;
		case OPT_TOPOLOGY:
			o->agent.topology_csv = optarg;
			break;
		case OPT_PATHS:
			o->agent.paths_csv = optarg;
			break;
		case 'q':
			o->quiet = true;
			agentxdp_log_level = LOG_ERR;
			break;
		case 'v':
			agentxdp_log_level++;
			break;
		case 'h':
			fputs(usage_text, stdout);
			exit(0);
		case 'V':
			printf("agentxdp-capture %s\n", AGENTXDP_VERSION);
			exit(0);
		default:
			return usage_error_getopt(c, argv);
		}
	}
	if (optind < argc)
		return usage_error("unexpected argument '%s' (filters go in --filter)", argv[optind]);
	if (!o->cfg.n_ifaces)
		return usage_error("%s", "no interface given (-i IFACE)");
	if (!o->analyze && (o->metrics_set || o->agent.textfile_dir || o->agent.otlp_url || o->agent.topology_csv ||
			    o->agent.paths_csv || o->agent_tuned))
		return usage_error("%s", "--metrics, --textfile, --otlp, --topology, --paths, --forget, --max-flows, "
				   "--max-pairs and --top-qps need --analyze");
	if (o->analyze && !o->metrics_set)
		o->agent.metrics_listen = "127.0.0.1:9476";
	if (!o->agent_interval_ns)
		o->agent_interval_ns = 1000000000ull;
	if (!o->out_pattern && !o->analyze)
		return usage_error("%s", "no output file given (-w FILE, '-' for standard output; or --analyze)");
	if (!o->out_pattern)
		return 0;
	if (!strcmp(o->out_pattern, "-") && (o->rotate_bytes || o->rotate_ns))
		return usage_error("%s", "-C and -G need a file name, not '-'");
	if (!strcmp(o->out_pattern, "-") && isatty(STDOUT_FILENO))
		return usage_error("%s", "refusing to write pcapng to a terminal (redirect or pipe it)");
	return 0;
}

/* Next file name: strftime(-w) for -G, then a number when the name repeats (-C, or -G too fast). */
static int next_path(struct capture_run *run, uint64_t now_ns)
{
	const char *pattern = run->opts->out_pattern;
	char name[sizeof(run->base_name)];

	if (run->opts->rotate_ns) {
		time_t t = (time_t)(now_ns / 1000000000ull);
		struct tm tm;

		localtime_r(&t, &tm);
		/* The pattern is the user's -w, as in tcpdump -G. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
		size_t n = strftime(name, sizeof(name), pattern, &tm);
#pragma GCC diagnostic pop
		if (!n) {
			pr_err("-w '%s' gives an empty or too long file name\n", pattern);
			return -1;
		}
	} else {
		snprintf(name, sizeof(name), "%s", pattern);
	}
	if (run->files_opened && !strcmp(name, run->base_name))
		run->file_index++;
	else
		run->file_index = 0;
	snprintf(run->base_name, sizeof(run->base_name), "%s", name);
	if (run->file_index)
		snprintf(run->path, sizeof(run->path), "%s%u", name, run->file_index);
	else
		snprintf(run->path, sizeof(run->path), "%s", name);
	return 0;
}

static void write_stats(struct capture_run *run, uint64_t now_ns)
{
	if (!run->writer)
		return;
	for (unsigned i = 0; i < run->opts->cfg.n_ifaces; i++) {
		struct capture_if_counters c;
		struct pcapng_if_stats st = { .if_id = i, .ts_ns = now_ns, .start_ns = run->start_ns,
					      .end_ns = now_ns };

		if (capture_session_counters(run->session, i, &c))
			continue;
		st.received = c.seen_pkts;
		st.dropped = c.lost_pkts;
		if (pcapng_writer_write_stats(run->writer, &st) && !run->write_errno)
			run->write_errno = errno;
	}
}

static int open_output(struct capture_run *run, uint64_t now_ns)
{
	const struct capture_opts *o = run->opts;
	struct utsname uts;
	char app[64], desc[640], filter[512];
	struct pcapng_shb_info shb = { 0 };

	if (!o->out_pattern)
		return 0; /* --analyze without -w: nothing to write */
	uname(&uts);
	snprintf(app, sizeof(app), "agentxdp-capture %s", AGENTXDP_VERSION);
	shb.hardware = uts.machine;
	shb.application = app;
	if (!strcmp(o->out_pattern, "-")) {
		snprintf(run->path, sizeof(run->path), "standard output");
		run->writer = pcapng_writer_open("-", &shb);
	} else {
		if (next_path(run, now_ns))
			return -1;
		run->writer = pcapng_writer_open(run->path, &shb);
	}
	if (!run->writer) {
		pr_err("cannot write %s: %s\n", run->path, strerror(errno));
		return -1;
	}
	capture_filter_format(&o->cfg.filter, filter, sizeof(filter));
	for (unsigned i = 0; i < o->cfg.n_ifaces; i++) {
		struct pcapng_if_info ifi = {
			.name = o->cfg.ifnames[i],
			.description = desc,
			.linktype = LINKTYPE_ETHERNET,
			/* One snaplen for every interface, so libpcap reads the file. */
			.snaplen = o->cfg.snaplen ? o->cfg.snaplen : ROCE_CAP_HDR_SNAPLEN,
		};

		snprintf(desc, sizeof(desc), "agentxdp-capture XDP %s mode, ifindex %u, %s%s%s",
			 capture_session_mode_name(run->session, i),
			 capture_session_ifindex(run->session, i),
			 o->cfg.snaplen ? "snaplen set by -s" : "RoCE headers only",
			 filter[0] ? ", filter: " : "", filter);
		if (pcapng_writer_add_interface(run->writer, &ifi) < 0) {
			pr_err("cannot write %s: %s\n", run->path, strerror(errno));
			return -1;
		}
	}
	run->file_opened_ns = now_ns;
	run->files_opened++;
	memset(run->file_pkts, 0, sizeof(run->file_pkts));
	return 0;
}

/*
 * Close the current file with final statistics; 0 or -1 (errno kept in run->write_errno).
 * After a write error the file holds fewer packets than were handed to it: its statistics
 * count the rest as isb_osdrop (the writer makes room for them on a full disk).
 */
static int close_output(struct capture_run *run, uint64_t now_ns)
{
	struct pcapng_if_stats st[ROCE_CAP_MAX_IFACES];
	unsigned n = 0;
	int err;

	if (!run->writer)
		return 0;
	if (pcapng_writer_flush(run->writer) && !run->write_errno)
		run->write_errno = errno;
	for (unsigned i = 0; i < run->opts->cfg.n_ifaces; i++) {
		struct capture_if_counters c;

		if (capture_session_counters(run->session, i, &c))
			continue;
		st[n++] = (struct pcapng_if_stats){
			.if_id = i, .ts_ns = now_ns, .start_ns = run->start_ns, .end_ns = now_ns,
			.received = c.seen_pkts, .dropped = c.lost_pkts,
			.os_dropped = run->file_pkts[i] - pcapng_writer_packets(run->writer, i),
		};
	}
	if (pcapng_writer_write_final_stats(run->writer, st, n)) {
		run->final_stats_lost = true;
		if (!run->write_errno)
			run->write_errno = errno;
	}
	run->file_held = run->file_not_written = 0;
	for (unsigned i = 0; i < run->opts->cfg.n_ifaces; i++) {
		run->file_held += pcapng_writer_packets(run->writer, i);
		run->file_not_written += run->file_pkts[i] - pcapng_writer_packets(run->writer, i);
	}
	err = pcapng_writer_close(run->writer);
	run->writer = NULL;
	if (err && !run->write_errno)
		run->write_errno = errno;
	return err;
}

/* Close the current file (with its statistics) and start the next one. */
static int rotate_output(struct capture_run *run, uint64_t now_ns)
{
	if (close_output(run, now_ns))
		return -1;
	return open_output(run, now_ns);
}

static int on_record(void *ctx, const struct capture_record *rec)
{
	struct capture_run *run = ctx;
	struct pcapng_packet pkt = {
		.if_id = rec->if_id,
		.ts_ns = rec->ts_ns,
		.data = rec->frame,
		.caplen = rec->cap_len,
		.origlen = rec->orig_len,
		.has_flags = true,
		.flags = PCAPNG_EPB_FLAG_INBOUND,
		.has_queue = true,
		.queue = rec->rx_queue,
		.has_dropcount = rec->lost_before > 0,
		.dropcount = rec->lost_before,
	};

	if (run->done)
		return -ECANCELED;
	if (run->agent && live_agent_frame(run->agent, rec->frame, rec->cap_len, rec->orig_len, rec->ts_ns))
		run->agent_oom++;
	/* Counted as captured before the write: a packet a full disk refuses is captured too. */
	run->pkts++;
	run->bytes += rec->orig_len;
	run->lost += rec->lost_before;
	if (rec->if_id < ROCE_CAP_MAX_IFACES)
		run->if_pkts[rec->if_id]++;
	/* --analyze without -w: the agent is the only consumer; nothing to write. */
	if (run->writer) {
		/* -C: checked before each packet, so no file grows past the limit by a whole batch. */
		if (run->opts->rotate_bytes && pcapng_writer_bytes(run->writer) >= run->opts->rotate_bytes &&
		    rotate_output(run, rec->ts_ns)) {
			run->failed = run->done = true;
			return -ECANCELED;
		}
		if (rec->if_id < ROCE_CAP_MAX_IFACES)
			run->file_pkts[rec->if_id]++; /* captured for this file, written or not */
		if (pcapng_writer_write_packet(run->writer, &pkt) ||
		    (run->opts->packet_buffered && pcapng_writer_flush(run->writer))) {
			run->write_errno = errno;
			run->done = true;
			return -ECANCELED;
		}
	}
	if (run->opts->max_pkts && run->pkts >= run->opts->max_pkts) {
		run->done = true;
		return -ECANCELED;
	}
	return 0;
}

static void human_bytes(uint64_t bytes, char *buf, size_t len)
{
	if (bytes >= 10000000000ull)
		snprintf(buf, len, "%.1f GB", bytes / 1e9);
	else if (bytes >= 10000000)
		snprintf(buf, len, "%.1f MB", bytes / 1e6);
	else if (bytes >= 10000)
		snprintf(buf, len, "%.1f kB", bytes / 1e3);
	else
		snprintf(buf, len, "%llu B", (unsigned long long)bytes);
}

static uint64_t total_lost(struct capture_run *run)
{
	uint64_t lost = 0;

	for (unsigned i = 0; i < run->opts->cfg.n_ifaces; i++) {
		struct capture_if_counters c;

		if (!capture_session_counters(run->session, i, &c))
			lost += c.lost_pkts;
	}
	return lost;
}

static void print_summary(struct capture_run *run)
{
	char bytes[32];

	human_bytes(run->bytes, bytes, sizeof(bytes));
	fprintf(stderr, "%llu packets captured (%s on the wire), %llu lost in the rings\n",
		(unsigned long long)run->pkts, bytes, (unsigned long long)total_lost(run));
	for (unsigned i = 0; i < run->opts->cfg.n_ifaces; i++) {
		struct capture_if_counters c;

		if (capture_session_counters(run->session, i, &c))
			continue;
		fprintf(stderr,
			"  %s (%s): %llu captured, %llu lost, %llu RoCE seen, %llu filtered out, "
			"%llu malformed, %llu frames seen\n",
			run->opts->cfg.ifnames[i], capture_session_mode_name(run->session, i),
			(unsigned long long)run->if_pkts[i], (unsigned long long)c.lost_pkts,
			(unsigned long long)c.roce_pkts, (unsigned long long)c.filtered_pkts,
			(unsigned long long)c.malformed_pkts, (unsigned long long)c.seen_pkts);
	}
}

/* Agent mode: localize and export, with the capture's own health per interface. */
static void agent_tick(struct capture_run *run, uint64_t now_ns)
{
	struct agent_capture_stats caps[ROCE_CAP_MAX_IFACES];
	unsigned n = 0;
	int found;

	for (unsigned i = 0; i < run->opts->cfg.n_ifaces; i++) {
		struct capture_if_counters c;

		if (capture_session_counters(run->session, i, &c))
			continue;
		caps[n].interface = run->opts->cfg.ifnames[i];
		caps[n].packets = run->if_pkts[i];
		caps[n].lost = c.lost_pkts;
		n++;
	}
	found = live_agent_tick(run->agent, now_ns, caps, n);
	if (found < 0)
		pr_warn("analysis: %s\n", strerror(-found));
}

static int capture_loop(struct capture_run *run)
{
	const struct capture_opts *o = run->opts;
	bool status = !o->quiet && isatty(STDERR_FILENO);
	uint64_t last_status_ns = 0, last_stats_ns, last_tick_ns, last_flush_ns;
	int n;

	run->start_ns = last_stats_ns = last_tick_ns = last_flush_ns = capture_session_now_ns(run->session);
	while (!run->done && !stop_requested) {
		uint64_t now;

		n = capture_session_poll(run->session, POLL_MS);
		if (n < 0 && n != -ECANCELED) {
			pr_err("reading the rings failed: %s\n", strerror(-n));
			return -1;
		}
		now = capture_session_now_ns(run->session);
		if (o->duration_ns && now - run->start_ns >= o->duration_ns)
			break;
		if (run->failed)
			return -1;
		if (o->rotate_ns && now - run->file_opened_ns >= o->rotate_ns && rotate_output(run, now))
			return -1;
		if (now - last_stats_ns >= STATS_EVERY_NS) {
			write_stats(run, now);
			last_stats_ns = now;
		}
		/*
		 * One write(2) per drained batch (and when the buffer fills); a quiet link still
		 * reaches the file: kill -9 loses at most the last second.
		 */
		if (run->writer && (n > 0 || now - last_flush_ns >= FLUSH_EVERY_NS)) {
			if (pcapng_writer_flush(run->writer)) {
				run->write_errno = errno;
				run->done = true;
				break;
			}
			last_flush_ns = now;
		}
		if (run->agent && now - last_tick_ns >= o->agent_interval_ns) {
			agent_tick(run, now);
			last_tick_ns = now;
		}
		if (status && now - last_status_ns >= STATUS_EVERY_NS) {
			char bytes[32];

			human_bytes(run->bytes, bytes, sizeof(bytes));
			fprintf(stderr, "\r%llu packets  %s  %llu lost   ", (unsigned long long)run->pkts,
				bytes, (unsigned long long)total_lost(run));
			last_status_ns = now;
		}
	}
	/* Stopped by a signal or --duration: take what is already in the ring (up to -c). */
	if (!run->done)
		capture_session_drain(run->session);
	if (run->agent)
		agent_tick(run, capture_session_now_ns(run->session));
	if (status)
		fprintf(stderr, "\r\033[K");
	return run->failed ? -1 : 0;
}

int main(int argc, char **argv)
{
	struct capture_opts opts = {
		.cfg.mode = CAPTURE_MODE_AUTO,
		.cfg.ring_bytes = DEFAULT_RING_KIB * 1024ull,
	};
	struct capture_run run = { .opts = &opts };
	struct sigaction sa = { .sa_handler = on_stop_signal };
	char ib_err[256];
	int status = 1, err;

	agentxdp_prog = "agentxdp-capture";
	umask(027); /* outputs 0640, folders 0750: traces and counters can be sensitive */
	err = parse_options(argc, argv, &opts);
	if (err)
		return err;
	/* Before any BPF: an InfiniBand port gets a pointer to ibdump, not a loader error. */
	for (unsigned i = 0; i < opts.cfg.n_ifaces; i++)
		if (capture_iface_check(NULL, opts.cfg.ifnames[i], ib_err, sizeof(ib_err))) {
			pr_err("%s\n", ib_err);
			return 1;
		}
	opts.cfg.on_record = on_record;
	opts.cfg.ctx = &run;

	/* No SA_RESTART: a signal must wake the wake-up ring's epoll_wait. */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	if (opts.analyze) {
		char agent_err[512];

		opts.agent.print_findings = !opts.quiet;
		run.agent = live_agent_new(&opts.agent, agent_err, sizeof(agent_err));
		if (!run.agent) {
			pr_err("%s\n", agent_err);
			return 1;
		}
	}
	if (capture_session_open(&opts.cfg, &run.session))
		goto cleanup;
	if (open_output(&run, capture_session_now_ns(run.session)))
		goto cleanup;
	for (unsigned i = 0; i < opts.cfg.n_ifaces; i++)
		pr_info("capturing RoCE on %s (XDP %s mode), %s%s\n", opts.cfg.ifnames[i],
			capture_session_mode_name(run.session, i), run.writer ? "writing " : "analyzing live",
			run.writer ? run.path : "");
	if (run.agent && opts.agent.metrics_listen)
		pr_info("metrics: http://%s/metrics\n", opts.agent.metrics_listen);
	if (capture_loop(&run))
		goto cleanup;
	status = 0;

cleanup:
	if (run.writer)
		close_output(&run, capture_session_now_ns(run.session));
	if (run.write_errno == ENOSPC || run.write_errno == EDQUOT || run.write_errno == EFBIG) {
		pr_err("%s writing %s: it holds %llu packets; %llu captured were not written%s; stopping\n",
		       run.write_errno == ENOSPC ? "disk full" : strerror(run.write_errno), run.path,
		       (unsigned long long)run.file_held, (unsigned long long)run.file_not_written,
		       run.final_stats_lost ? " (no room for its statistics block)"
					    : " (counted in its statistics, isb_osdrop)");
		status = 1;
	} else if (run.write_errno) {
		pr_err("cannot write %s: %s\n", run.path, strerror(run.write_errno));
		status = 1;
	}
	if (!opts.quiet && run.session)
		print_summary(&run);
	if (run.agent_oom)
		pr_warn("analysis: %llu packets not tracked (out of memory)\n", (unsigned long long)run.agent_oom);
	capture_session_close(run.session);
	live_agent_free(run.agent);
	return status;
}
