/* analyze_opts.h: agentxdp-analyze's configuration, filled by main.c from one option table. */
#ifndef AGENTXDP_ANALYZE_OPTS_H
#define AGENTXDP_ANALYZE_OPTS_H

#include <stdbool.h>
#include <stdint.h>

#define MAX_EXTRA_PORTS 8
#define MAX_QP_SELECT 16

struct trace_filter;
struct trace_frame;
struct roce_pkt;

/* --dump's time column, as tcpdump's -t letters count: none, -t, -tt, -ttt, -tttt, -ttttt. */
enum dump_time {
	DUMP_TIME_SINCE_FIRST,		/* default and -ttttt: seconds since the first packet shown */
	DUMP_TIME_NONE,			/* -t */
	DUMP_TIME_EPOCH,		/* -tt: seconds since the epoch */
	DUMP_TIME_DELTA,		/* -ttt: since the previous packet shown */
	DUMP_TIME_DATE,			/* -tttt: local date and time */
};

struct analyze_opts {
	const char **traces;		/* input files, "-" for stdin */
	int n_traces;
	const char *db_path;		/* -o out.db */
	bool dump;			/* --dump: one line per RoCE packet */
	bool json;			/* --json summary on stdout */
	bool summary;			/* --summary: the report's text section on stdout */
	const char *csv_dir;		/* --csv DIR */
	const char *report_dir;		/* --report DIR */
	const char *prom_path;		/* --prom FILE */
	const char *topology_csv;	/* --topology links.csv */
	const char *paths_csv;		/* --paths paths.csv */
	uint64_t window_ns;		/* --window; 0: chosen from the traces' span */
	uint16_t extra_ports[MAX_EXTRA_PORTS]; /* --port: more UDP ports decoded as RoCE v2 */
	int n_extra_ports;
	uint16_t vxlan_port;		/* --vxlan-port: VXLAN's UDP port (0: the default, 4789) */
	uint32_t max_samples_per_window; /* --sample-rows: latency rows kept per flow/kind/window, 0 = all */
	uint8_t samples;		/* --samples: enum store_samples, which flows keep rows */
	uint64_t dedup_ns;		/* --dedup: identical packets this close are mirror copies */
	struct trace_filter *filter;	/* pcap-filter expression (after -r, or --pcap-filter), NULL none */
	uint32_t qps[MAX_QP_SELECT];	/* --qp: keep RoCE packets to these destination QPs */
	int n_qps;
	uint64_t max_frames;		/* -c: stop after this many selected frames, 0 = all */
	enum dump_time dump_time;	/* --dump -t... */
	unsigned jobs;			/* -j: tracker threads (1: one thread; 0: the default) */
};

/*
 * The selection -r/--pcap-filter, --qp and -c make, the same in both modes:
 * analyze_select_link() before decoding (1 keep, 0 leave out, -1 the filter cannot apply to
 * this frame's link type: the one-line error is printed), analyze_select_qp() after.
 */
int analyze_select_link(const struct analyze_opts *opts, const struct trace_frame *f);
int analyze_select_qp(const struct analyze_opts *opts, int decode_rc, const struct roce_pkt *p);

/* Entry points of the two modes; each returns the process exit status. */
int dump_traces(const struct analyze_opts *opts);
int analyze_traces(const struct analyze_opts *opts);
/* -j's default: the cores this process may run on, at most 16 (the reader is one more thread). */
unsigned analyze_default_jobs(void);
/* SIGINT, SIGTERM, SIGHUP: finish with what was read (analyze_run.c); main mode only. */
void analyze_catch_signals(void);

#endif
