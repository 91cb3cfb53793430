/*
 * analyze_read.h: agentxdp-analyze's reading: every frame of every trace (that the filter,
 * --qp and -c select) through the decoder into the tracker, on the main thread, or with -j N
 * on files on N threads that each read every frame (lanes, qp_shards.h).
 */
#ifndef AGENTXDP_ANALYZE_READ_H
#define AGENTXDP_ANALYZE_READ_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "analyze/analyze_opts.h"
#include "analyze/frame_census.h"
#include "analyze/mirror_vantage.h"
#include "lib/decode/roce_decode.h"
#include "lib/store/store_sqlite.h"
#include "lib/track/qp_shards.h"
#include "lib/trace/trace_reader.h"

#define N_MALFORMED (1 - ROCE_DECODE_STATUS_MIN)

struct trace_counts {
	uint64_t roce, other;
	uint64_t malformed[N_MALFORMED]; /* by -status */
	int bad_linktype;		/* link type of the last frame the link layer failed on */
	struct frame_census census;	/* what the frames that were not RoCE held */
};

struct analyze_read {
	const struct analyze_opts *opts;
	const struct roce_decode_opts *dopts;
	struct qp_shards *trk;		/* from qp_shards_new_lanes() when lanes */
	struct store *st;		/* -j 1: reading stops once the store failed */
	struct trace_reader *tr;	/* the run's: its health is the run's */
	int n_traces;
	struct trace_counts *counts;	/* per trace, the run's */
	struct mirror_vantages *mv;	/* the run's */
	bool lanes;			/* -j N on files: N readers */
	const volatile sig_atomic_t *stop; /* a signal stopped reading */
	bool plain_keys;		/* lanes skip other lanes' plain frames undecoded (not with --qp) */
	/* what reading found */
	int status;			/* 1: an error was said */
	bool failed;			/* the tracker ran out of memory */
	uint64_t frames, selected;
};

/*
 * Read until the end (or -c, a signal, a full tracker); -1 (said): out of memory, or with
 * lanes a reader that could not start or found other traces than the run's reader.
 */
int analyze_read(struct analyze_read *ar);

#endif
