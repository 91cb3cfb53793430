/* nicstat.c: agentxdp-nicstat, RDMA NIC counters from sysfs as rates, findings and metrics. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lib/export/export_file.h"
#include "lib/util/log.h"
#include "lib/export/metrics.h"
#include "lib/nic/nic_db.h"
#include "lib/nic/nic_rates.h"
#include "lib/nic/nic_sensor.h"
#include "lib/export/otlp_json.h"
#include "lib/export/otlp_push.h"
#include "lib/util/parse_num.h"
#include "lib/export/prom_text.h"
#include "lib/nic/sysfs_counters.h"
#include "lib/util/text_buf.h"


#define TEXTFILE_NAME "agentxdp_nicstat.prom"

static const char usage_text[] =
	"Usage: agentxdp-nicstat [OPTIONS]\n"
	"\n"
	"Read every RDMA device's port counters and driver hardware counters from sysfs\n"
	"(/sys/class/infiniband/DEV/ports/N/counters and hw_counters) and the statistics of\n"
	"the bound network interface, every interval; turn them into rates (32/64-bit wraps\n"
	"and device resets handled); name a port whose retransmission, timeout, sequence\n"
	"error, congestion (CNP/ECN), RNR or link error rate stands out among the host's\n"
	"ports or against its own baseline. RoCE is processed inside the NIC, so these\n"
	"counters see what host-side capture cannot. Unknown counters are passed through.\n"
	"\n"
	"Options:\n"
	"      --interval DURATION  time between reads (default 1s; 10ms to 1h; a unit is\n"
	"                           needed: 500ms, 10s)\n"
	"  -c, --count N            stop after N reads (default: until interrupted)\n"
	"      --sysfs DIR          sysfs root to read (default /sys)\n"
	"  -a, --all                print every counter, not only those that moved\n"
	"      --json               JSON lines on stdout: counters, findings, port events,\n"
	"                           and a summary line (type \"read\") ending each read\n"
	"      --prom FILE          rewrite FILE (Prometheus text format) every interval\n"
	"      --textfile DIR       the same as DIR/" TEXTFILE_NAME " (node_exporter\n"
	"                           textfile collector); both written atomically\n"
	"      --otlp URL           push OTLP/HTTP JSON metrics to URL/v1/metrics\n"
	"      --db FILE            append rows to table nic_counter of SQLite FILE\n"
	"      --factor X           a port stands out at X times the reference rate\n"
	"                           (median of the host's other ports, or its own\n"
	"                           baseline; default 4)\n"
	"      --min-rate R         ... and at R events per second or more (default 1)\n"
	"      --require            exit 1 when the host has no RDMA device\n"
	"  -q, --quiet              only errors on standard error\n"
	"  -v, --verbose            more detail on standard error (repeat for debug)\n"
	"  -h, --help               show this help and exit\n"
	"  -V, --version            show the version and exit\n"
	"\n"
	"-i is no longer the interval: use --interval (-i is an interface in every tool).\n"
	"Metric names and labels: docs/metrics.md. Exit status: 0 on success (also when the\n"
	"host has no RDMA device, unless --require), 1 on a runtime error, 2 on a usage error.\n"
	"\n"
	"Examples:\n"
	"  agentxdp-nicstat                            # every second, the counters that moved\n"
	"  agentxdp-nicstat -c 1 -a                    # every counter once\n"
	"  agentxdp-nicstat --interval 10s -c 6 --json | jq 'select(.type==\"finding\")'\n"
	"  agentxdp-nicstat --textfile /var/lib/prometheus/node-exporter -q\n"
	"  agentxdp-nicstat --interval 15s --otlp http://collector:4318\n"
	"  agentxdp-nicstat --interval 1s --db incident.db # beside agentxdp-analyze's tables\n"
	"  agentxdp-nicstat --sysfs /tmp/sysfs-copy -c 2\n";

enum {
	OPT_SYSFS = 256,
	OPT_JSON,
	OPT_PROM,
	OPT_TEXTFILE,
	OPT_OTLP,
	OPT_DB,
	OPT_FACTOR,
	OPT_MIN_RATE,
	OPT_REQUIRE,
	OPT_INTERVAL,
};

static const struct option long_options[] = {
	{ "interval", required_argument, NULL, OPT_INTERVAL },
	{ "count", required_argument, NULL, 'c' },
	{ "sysfs", required_argument, NULL, OPT_SYSFS },
	{ "all", no_argument, NULL, 'a' },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "prom", required_argument, NULL, OPT_PROM },
	{ "textfile", required_argument, NULL, OPT_TEXTFILE },
	{ "otlp", required_argument, NULL, OPT_OTLP },
	{ "db", required_argument, NULL, OPT_DB },
	{ "factor", required_argument, NULL, OPT_FACTOR },
	{ "min-rate", required_argument, NULL, OPT_MIN_RATE },
	{ "require", no_argument, NULL, OPT_REQUIRE },
	{ "quiet", no_argument, NULL, 'q' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 },
};

struct nicstat_opts {
	uint64_t interval_ns;
	uint64_t count;			/* 0 = until interrupted */
	const char *sysfs_root;
	bool all;
	bool json;
	const char *prom_path;
	char *textfile_path;		/* DIR/agentxdp_nicstat.prom */
	const char *otlp_url;
	const char *db_path;
	struct nic_detector_opts detector;
	bool require;
};

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
	stop_requested = 1;
}

static uint64_t realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void format_clock(uint64_t ts_ns, char *out, size_t len)
{
	time_t sec = (time_t)(ts_ns / 1000000000ull);
	struct tm tm;

	gmtime_r(&sec, &tm);
	snprintf(out, len, "%02d:%02d:%02d.%03u", tm.tm_hour, tm.tm_min, tm.tm_sec,
		 (unsigned int)(ts_ns % 1000000000ull / 1000000ull));
}

/* Finding kind names as in finding.h's comment ("slow", "lossy", "congested", "host"). */
static const char *const kind_names[] = {
	[FINDING_SLOW] = "slow", [FINDING_LOSSY] = "lossy",
	[FINDING_CONGESTED] = "congested", [FINDING_HOST] = "host",
};

static void print_text(const struct nicstat_opts *o, const struct nic_snapshot *snap, bool first)
{
	bool all = o->all || o->count == 1;	/* a single read shows everything it read */
	char clock[32];
	size_t i, j;

	format_clock(snap->ts_ns, clock, sizeof(clock));
	for (i = 0; i < snap->n_ports; i++) {
		const struct nic_port *p = &snap->ports[i];

		if (first && !all) {
			printf("%s %s port %u%s%s%s: %zu counters%s%s\n", clock, p->device, p->port,
			       p->netdev[0] ? " (" : "", p->netdev, p->netdev[0] ? ")" : "",
			       p->n_counters, p->state[0] ? ", " : "", p->state);
			continue;
		}
		for (j = 0; j < p->n_counters; j++) {
			const struct nic_counter *c = &p->counters[j];
			char rate[48] = "-";

			if (!all && (c->delta_kind == NIC_DELTA_FIRST || !c->delta))
				continue;
			if (c->delta_kind != NIC_DELTA_FIRST)
				snprintf(rate, sizeof(rate), "%.1f/s%s%s", c->rate_per_s,
					 c->delta_kind == NIC_DELTA_NORMAL ? "" : " ",
					 c->delta_kind == NIC_DELTA_NORMAL ? "" : nic_delta_kind_name(c->delta_kind));
			printf("%s %-10s %2u %-10s %-11s %-30s %20" PRIu64 " %s\n", clock, p->device,
			       p->port, p->netdev[0] ? p->netdev : "-", nic_source_name(c->source),
			       c->name, c->value, rate);
		}
	}
}

/* 0, or -ENOMEM when a line could not be built (the output is then incomplete). */
static int print_json_counters(const struct nic_snapshot *snap, struct text_buf *t)
{
	size_t i, j;

	for (i = 0; i < snap->n_ports; i++) {
		const struct nic_port *p = &snap->ports[i];

		for (j = 0; j < p->n_counters; j++) {
			const struct nic_counter *c = &p->counters[j];

			text_buf_reset(t);
			text_buf_printf(t, "{\"ts_ns\":%" PRIu64 ",\"type\":\"counter\",\"device\":", snap->ts_ns);
			text_buf_json_string(t, p->device);
			text_buf_printf(t, ",\"port\":%u,\"netdev\":", p->port);
			text_buf_json_string(t, p->netdev);
			text_buf_printf(t, ",\"source\":\"%s\",\"counter\":", nic_source_name(c->source));
			text_buf_json_string(t, c->name);
			text_buf_printf(t, ",\"value\":%" PRIu64, c->value);
			if (c->delta_kind == NIC_DELTA_FIRST) {
				text_buf_puts(t, ",\"delta\":null,\"rate_per_s\":null");
			} else {
				text_buf_printf(t, ",\"delta\":%" PRIu64 ",\"rate_per_s\":", c->delta);
				text_buf_json_double(t, c->rate_per_s);
			}
			text_buf_printf(t, ",\"delta_kind\":\"%s\"}\n", nic_delta_kind_name(c->delta_kind));
			if (t->failed)
				return -ENOMEM;
			fwrite(t->data, 1, t->len, stdout);
		}
	}
	return 0;
}

/* 0, or -ENOMEM when a JSON line could not be built (the output is then incomplete). */
static int print_findings(const struct nicstat_opts *o, uint64_t ts_ns, const struct finding *f,
			  size_t n, struct text_buf *t)
{
	char clock[32];
	size_t i;

	format_clock(ts_ns, clock, sizeof(clock));
	for (i = 0; i < n; i++) {
		if (!o->json) {
			printf("%s FINDING %s %s: %s [confidence %.2f]\n", clock, kind_names[f[i].kind],
			       f[i].subject, f[i].severity_text, f[i].confidence);
			continue;
		}
		text_buf_reset(t);
		text_buf_printf(t, "{\"ts_ns\":%" PRIu64 ",\"type\":\"finding\",\"rank\":%d,\"kind\":\"%s\","
				"\"subject_kind\":\"host_link\",\"subject\":", ts_ns, f[i].rank,
				kind_names[f[i].kind]);
		text_buf_json_string(t, f[i].subject);
		text_buf_puts(t, ",\"severity\":");
		text_buf_json_double(t, f[i].severity);
		text_buf_puts(t, ",\"severity_text\":");
		text_buf_json_string(t, f[i].severity_text);
		text_buf_puts(t, ",\"confidence\":");
		text_buf_json_double(t, f[i].confidence);
		text_buf_printf(t, ",\"onset_ns\":%" PRIu64 ",\"evidence\":%s}\n", f[i].onset_ns,
				f[i].evidence ? f[i].evidence : "null");
		if (t->failed)
			return -ENOMEM;
		fwrite(t->data, 1, t->len, stdout);
	}
	return 0;
}

/* The last line of a read in JSON mode: what was read (a reader can wait for it). */
static void print_json_read(const struct nic_snapshot *snap, size_t n_findings)
{
	size_t i, n_counters = 0;

	for (i = 0; i < snap->n_ports; i++)
		n_counters += snap->ports[i].n_counters;
	printf("{\"ts_ns\":%" PRIu64 ",\"type\":\"read\",\"devices\":%zu,\"ports\":%zu,"
	       "\"counters\":%zu,\"read_errors\":%u,\"findings\":%zu}\n",
	       snap->ts_ns, snap->n_devices, snap->n_ports, n_counters, snap->read_errors, n_findings);
}

/* Log (and in JSON mode print) ports that appeared or disappeared since PREV. */
static void report_port_changes(const struct nicstat_opts *o, const struct nic_snapshot *prev,
				const struct nic_snapshot *cur)
{
	size_t i;

	for (i = 0; i < cur->n_ports; i++) {
		const struct nic_port *p = &cur->ports[i];

		if (nic_snapshot_find_port(prev, p->device, p->port))
			continue;
		pr_info("%s port %u appeared\n", p->device, p->port);
		if (o->json)
			printf("{\"ts_ns\":%" PRIu64 ",\"type\":\"port_appeared\",\"device\":\"%s\",\"port\":%u}\n",
			       cur->ts_ns, p->device, p->port);
	}
	for (i = 0; i < prev->n_ports; i++) {
		const struct nic_port *p = &prev->ports[i];

		if (nic_snapshot_find_port(cur, p->device, p->port))
			continue;
		pr_warn("%s port %u disappeared\n", p->device, p->port);
		if (o->json)
			printf("{\"ts_ns\":%" PRIu64 ",\"type\":\"port_disappeared\",\"device\":\"%s\",\"port\":%u}\n",
			       cur->ts_ns, p->device, p->port);
	}
}

static int add_otlp_stats(struct metric_set *set, struct otlp_pusher *pusher)
{
	struct metric_family *f;
	struct otlp_push_stats st;
	struct metric_label l = { "result", "" };
	int err;

	otlp_push_get_stats(pusher, &st);
	f = metric_family_get(set, "agentxdp_otlp_bodies_total", METRIC_COUNTER,
			      "OTLP export bodies by result.", "{body}");
	if (!f)
		return -errno;
	l.value = "sent";
	err = metric_add_int(f, &l, 1, st.sent, 0);
	l.value = "failed";
	if (!err)
		err = metric_add_int(f, &l, 1, st.failed, 0);
	l.value = "dropped";
	if (!err)
		err = metric_add_int(f, &l, 1, st.dropped, 0);
	return err;
}

/* Build this interval's metrics and hand them to every exporter asked for. */
static int export_metrics(const struct nicstat_opts *o, const struct nic_snapshot *snap,
			  uint64_t read_errors_total, struct metric_set *set,
			  struct otlp_pusher *pusher, const struct otlp_resource *res,
			  struct text_buf *t)
{
	int err;

	metric_set_clear(set);
	set->time_ns = snap->ts_ns;
	err = nic_metrics_add(set, snap, read_errors_total);
	if (!err && pusher)
		err = add_otlp_stats(set, pusher);
	if (err) {
		pr_err("building metrics failed: %s\n", strerror(-err));
		return -1;
	}
	if (o->prom_path || o->textfile_path) {
		text_buf_reset(t);
		if (prom_text_write(set, t)) {
			pr_err("building Prometheus text failed: %s\n", strerror(ENOMEM));
			return -1;
		}
		if (o->prom_path && (err = write_file_atomic(o->prom_path, t->data, t->len))) {
			pr_err("cannot write %s: %s\n", o->prom_path, strerror(-err));
			return -1;
		}
		if (o->textfile_path && (err = write_file_atomic(o->textfile_path, t->data, t->len))) {
			pr_err("cannot write %s: %s\n", o->textfile_path, strerror(-err));
			return -1;
		}
	}
	if (pusher) {
		text_buf_reset(t);
		if (otlp_json_write(set, res, t) || otlp_push_enqueue(pusher, t->data, t->len)) {
			pr_err("building OTLP body failed: %s\n", strerror(ENOMEM));
			return -1;
		}
	}
	return 0;
}

static void sleep_until(uint64_t deadline_mono_ns)
{
	struct timespec ts = {
		.tv_sec = (time_t)(deadline_mono_ns / 1000000000ull),
		.tv_nsec = (long)(deadline_mono_ns % 1000000000ull),
	};

	/* A signal interrupts the sleep (no SA_RESTART), so Ctrl-C stops at once. */
	while (!stop_requested && clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int run(const struct nicstat_opts *o)
{
	struct nic_sensor sensor;
	struct metric_set set;
	struct text_buf t = { 0 };
	struct otlp_pusher *pusher = NULL;
	struct nic_db *db = NULL;
	struct finding *findings = NULL;
	size_t n_findings = 0;
	uint64_t next_mono;
	char hostname[256] = "unknown";
	struct metric_label res_attrs[2] = {
		{ "service.name", "agentxdp-nicstat" }, { "host.name", hostname },
	};
	struct otlp_resource res = { res_attrs, 2, "agentxdp", AGENTXDP_VERSION };
	int rc = 0, err;

	gethostname(hostname, sizeof(hostname) - 1);
	metric_set_init(&set, realtime_ns(), 0);
	nic_sensor_init(&sensor, o->sysfs_root, &o->detector);
	if (o->db_path && !(db = nic_db_open(o->db_path))) {
		rc = 1;
		goto cleanup;
	}
	if (o->otlp_url) {
		struct otlp_push_opts po = { .url = o->otlp_url };

		pusher = otlp_push_start(&po);
		if (!pusher) {
			pr_err("cannot start the OTLP exporter for %s: %s\n", o->otlp_url, strerror(errno));
			rc = 1;
			goto cleanup;
		}
	}
	next_mono = mono_ns();
	while (!stop_requested) {
		const struct nic_snapshot *cur;

		err = nic_sensor_poll(&sensor, realtime_ns(), &findings, &n_findings);
		if (err == -ENOENT) {
			pr_err("no sysfs at %s (no %s/class folder)\n", o->sysfs_root, o->sysfs_root);
			rc = 1;
			break;
		}
		if (err) {
			pr_err("reading RDMA counters under %s failed: %s\n", o->sysfs_root, strerror(-err));
			rc = 1;
			break;
		}
		cur = &sensor.cur;
		if (!cur->n_devices && !sensor.have_prev) {
			if (o->require)
				pr_err("no RDMA device under %s/class/infiniband (no RDMA driver loaded?)\n",
				       o->sysfs_root);
			else
				pr_info("no RDMA device under %s/class/infiniband (no RDMA driver loaded?): nothing to report\n",
					o->sysfs_root);
			rc = o->require ? 1 : 0;
			break;
		}
		if (sensor.have_prev)
			report_port_changes(o, &sensor.prev, cur);
		if (o->json)
			err = print_json_counters(cur, &t);
		else
			print_text(o, cur, !sensor.have_prev);
		if (!err)
			err = print_findings(o, cur->ts_ns, findings, n_findings, &t);
		if (err) {
			pr_err("building the JSON output failed: %s\n", strerror(-err));
			rc = 1;
			break;
		}
		if (o->json)
			print_json_read(cur, n_findings);
		nic_findings_free(findings, n_findings);
		findings = NULL;
		n_findings = 0;
		fflush(stdout);
		if (export_metrics(o, cur, sensor.read_errors_total, &set, pusher, &res, &t) ||
		    (db && nic_db_write(db, cur))) {
			rc = 1;
			break;
		}
		if (o->count && sensor.reads >= o->count)
			break;
		next_mono += o->interval_ns;
		sleep_until(next_mono);
	}
cleanup:
	nic_findings_free(findings, n_findings);
	if (pusher) {
		struct otlp_push_stats st;

		otlp_push_stop(pusher, 2000, &st);
		if (st.failed || st.dropped)
			pr_warn("OTLP export: %" PRIu64 " bodies sent, %" PRIu64 " failed, %" PRIu64 " dropped on a full queue\n",
				st.sent, st.failed, st.dropped);
		else
			pr_debug("OTLP: %" PRIu64 " bodies sent\n", st.sent);
	}
	nic_db_close(db);
	nic_sensor_free(&sensor);
	metric_set_free(&set);
	text_buf_free(&t);
	return rc;
}

int main(int argc, char **argv)
{
	struct nicstat_opts opts = {
		.interval_ns = 1000000000ull,
		.sysfs_root = "/sys",
	};
	const char *textfile_dir = NULL;
	struct sigaction sa = { .sa_handler = on_signal };
	struct stat st;
	uint64_t v;
	double d;
	int c, rc;

	agentxdp_prog = "agentxdp-nicstat";
	umask(027); /* outputs 0640, folders 0750: traces and counters can be sensitive */
	opterr = 0;	/* our own one-line messages below */
	while ((c = getopt_long(argc, argv, ":i:c:aqvhV", long_options, NULL)) != -1) {
		switch (c) {
		case 'i': /* one meaning per letter: -i is an interface (docs/flags.md) */
			return usage_error("-i is no longer the interval: use --interval %s", optarg);
		case OPT_INTERVAL:
			if (parse_duration_ns(optarg, DURATION_UNIT_REQUIRED, 10000000ull, 3600000000000ull, &v))
				return usage_error_duration("--interval", optarg, "10ms to 1h, e.g. 1s or 500ms");
			opts.interval_ns = v;
			break;
		case 'c':
			if (parse_u64(optarg, 1, UINT64_MAX, &v))
				return usage_error("invalid --count '%s' (a whole number of reads, 1 or more)", optarg);
			opts.count = v;
			break;
		case OPT_SYSFS:
			opts.sysfs_root = optarg;
			break;
		case 'a':
			opts.all = true;
			break;
		case OPT_JSON:
			opts.json = true;
			break;
		case OPT_PROM:
			opts.prom_path = optarg;
			break;
		case OPT_TEXTFILE:
			textfile_dir = optarg;
			break;
		case OPT_OTLP:
			if (strncmp(optarg, "http://", 7) && strncmp(optarg, "https://", 8))
				return usage_error("invalid --otlp '%s' (an http:// or https:// URL)", optarg);
			opts.otlp_url = optarg;
			break;
		case OPT_DB:
			opts.db_path = optarg;
			break;
		case OPT_FACTOR:
			if (parse_double(optarg, 1.01, 1e6, &d))
				return usage_error("invalid --factor '%s' (a number above 1, e.g. 4)", optarg);
			opts.detector.factor = d;
			break;
		case OPT_MIN_RATE:
			if (parse_double(optarg, 1e-6, 1e12, &d))
				return usage_error("invalid --min-rate '%s' (events per second above 0, e.g. 1)", optarg);
			opts.detector.min_rate_per_s = d;
			break;
		case OPT_REQUIRE:
			opts.require = true;
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
			printf("agentxdp-nicstat %s\n", AGENTXDP_VERSION);
			return 0;
		default:
			return usage_error_getopt(c, argv);
		}
	}
	if (optind < argc)
		return usage_error("unexpected argument '%s'", argv[optind]);
	if (textfile_dir) {
		if (stat(textfile_dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
			pr_err("--textfile %s: not a directory\n", textfile_dir);
			return 1;
		}
		if (asprintf(&opts.textfile_path, "%s/%s", textfile_dir, TEXTFILE_NAME) < 0) {
			pr_err("out of memory\n");
			return 1;
		}
	}
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	rc = run(&opts);
	free(opts.textfile_path);
	return rc;
}
