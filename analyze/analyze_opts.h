/* analyze_opts.h: agentxdp-analyze's configuration, filled by main.c from one option table. */
#ifndef AGENTXDP_ANALYZE_OPTS_H
#define AGENTXDP_ANALYZE_OPTS_H

#include <stdbool.h>
#include <stdint.h>

#define MAX_EXTRA_PORTS 8

struct analyze_opts {
	const char **traces;		/* input files, "-" for stdin */
	int n_traces;
	const char *db_path;		/* -o out.db */
	bool dump;			/* --dump: one line per RoCE packet */
	bool json;			/* --json summary on stdout */
	const char *csv_dir;		/* --csv DIR */
	const char *report_dir;		/* --report DIR */
	const char *prom_path;		/* --prom FILE */
	const char *topology_csv;	/* --topology links.csv */
	const char *paths_csv;		/* --paths paths.csv */
	uint64_t window_ns;		/* --window; 0: chosen from the traces' span */
	uint16_t extra_ports[MAX_EXTRA_PORTS]; /* --port: more UDP ports decoded as RoCE v2 */
	int n_extra_ports;
	uint32_t max_samples_per_window; /* --sample-rows: latency rows kept per flow/kind/window, 0 = all */
	uint64_t dedup_ns;		/* --dedup: identical packets this close are mirror copies */
};

/* Entry points of the two modes; each returns the process exit status. */
int dump_traces(const struct analyze_opts *opts);
int analyze_traces(const struct analyze_opts *opts);
/* SIGINT, SIGTERM, SIGHUP: finish with what was read (analyze_run.c); main mode only. */
void analyze_catch_signals(void);

#endif
