/* mirror_vantage.h: every mirror session in a trace is a vantage point, and its clock. */
#ifndef AGENTXDP_MIRROR_VANTAGE_H
#define AGENTXDP_MIRROR_VANTAGE_H

#include <stdbool.h>
#include <stdint.h>

#include "lib/decode/roce_pkt.h"
#include "lib/store/store_sqlite.h"
#include "lib/trace/trace_reader.h"

/*
 * One vantage: a trace's own (untunnelled) packets, or one mirror session inside a trace, or
 * one capture port of an ERF trace (ibdump and Endace cards record several ports in one file).
 */
struct mirror_vantage {
	int trace;			/* input trace index */
	bool used;
	struct roce_source src;		/* its tunnel, session and ERF port */
	bool erf;			/* read from ERF records: src.erf_port tells the port */
	char name[384];			/* "trace.pcapng: erspan2 session 3 from 10.0.0.1" */
	struct trace_health health;	/* a further session's own: packets, span */
	uint64_t packets;		/* RoCE packets of this vantage */
	struct capture_clock clock;	/* ERSPAN III: the switch clock */
	/* ERSPAN III time: the counter unwrapped, and (switch ns, arrival - switch) samples. */
	uint64_t raw_first, raw_last, raw_wraps, anchor_ns;
	bool have_raw;
	bool no_samples;		/* out of memory for them: the clock goes unmeasured */
	int64_t *sw, *delta;		/* samples, every `stride`-th packet */
	uint32_t n_samples, stride, skip;
};

struct mirror_vantages {
	int n_traces;
	struct mirror_vantage *v;	/* [0, n_traces): each trace's first source; then the others */
	uint32_t n, cap;
	uint32_t last;			/* the vantage of the previous packet */
	bool oom;
};

int mirror_vantages_init(struct mirror_vantages *m, int n_traces);
void mirror_vantages_free(struct mirror_vantages *m);

/*
 * The vantage of a decoded packet read from trace `trace`: the trace's index for its first
 * source (so a trace without tunnels, or with one session or ERF port, is what it always
 * was), a new index past the traces for each further session or ERF port. An ERSPAN III packet's time becomes the
 * switch's (pkt->ts_ns) when its granularity is 100 ns or IEEE 1588 (100 us ticks are too
 * coarse: its clock is still measured); the arrival time stays in pkt->arrival_ns.
 */
uint32_t mirror_vantage_of(struct mirror_vantages *m, int trace, struct roce_pkt *pkt);

/* After the last packet: fit every ERSPAN III session's clock; name the vantages. */
void mirror_vantages_finish(struct mirror_vantages *m, const char *const *paths);

#endif
