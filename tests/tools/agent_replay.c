/*
 * agent_replay.c: test driver for agent mode without XDP: feeds a trace's frames to the live
 * agent (lib/agent/live_agent.h) as capture records would arrive, ticks once per second of trace
 * time, then keeps serving /metrics for --serve seconds (for a real Prometheus to scrape).
 *   agent_replay TRACE [--metrics ADDR:PORT] [--otlp URL] [--textfile DIR] [--serve SECONDS]
 *                [--history SECONDS] [--topology FILE] [--paths FILE]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/agent/live_agent.h"
#include "lib/util/log.h"
#include "lib/trace/trace_reader.h"

int main(int argc, char **argv)
{
	struct live_agent_opts o = { .print_findings = true };
	struct trace_reader *tr = NULL;
	struct trace_frame fr;
	struct live_agent *a;
	char err[512];
	int serve_s = 0, rc;
	uint64_t next_tick = 0;

	agentxdp_prog = "agent_replay";
	if (argc < 2) {
		fprintf(stderr, "usage: agent_replay TRACE [--metrics A:P] [--otlp URL] [--textfile DIR] [--serve S]\n");
		return 2;
	}
	for (int i = 2; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--metrics"))
			o.metrics_listen = argv[i + 1];
		else if (!strcmp(argv[i], "--otlp"))
			o.otlp_url = argv[i + 1];
		else if (!strcmp(argv[i], "--textfile"))
			o.textfile_dir = argv[i + 1];
		else if (!strcmp(argv[i], "--serve"))
			serve_s = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--history"))
			o.history_ns = strtoull(argv[i + 1], NULL, 10) * 1000000000ull;
		else if (!strcmp(argv[i], "--topology"))
			o.topology_csv = argv[i + 1];
		else if (!strcmp(argv[i], "--paths"))
			o.paths_csv = argv[i + 1];
	}
	a = live_agent_new(&o, err, sizeof(err));
	if (!a) {
		pr_err("%s\n", err);
		return 1;
	}
	const char *paths[1] = { argv[1] };
	if (trace_reader_open(&tr, paths, 1, err, sizeof(err))) {
		pr_err("%s\n", err);
		live_agent_free(a);
		return 1;
	}
	while ((rc = trace_reader_next(tr, &fr)) == 1) {
		if (!next_tick)
			next_tick = fr.ts_ns + 1000000000ull;
		if (fr.ts_ns >= next_tick) {
			live_agent_tick(a, fr.ts_ns, NULL, 0);
			next_tick += 1000000000ull;
		}
		live_agent_frame(a, fr.data, fr.caplen, fr.origlen, fr.ts_ns);
	}
	trace_reader_close(tr);
	struct agent_capture_stats cap = { .interface = "replay", .packets = 0, .lost = 0 };
	uint64_t roce, other, mal;
	live_agent_counts(a, &roce, &other, &mal);
	cap.packets = roce;
	rc = live_agent_tick(a, next_tick, &cap, 1);
	printf("findings %d\n", rc);
	fflush(stdout);
	for (int s = 0; s < serve_s; s++)
		sleep(1);
	live_agent_free(a);
	return 0;
}
