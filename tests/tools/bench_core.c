/*
 * bench_core.c: the analysis core's CPU cost per packet, without the trace reading and the
 * store around it. Not installed.
 *
 *   bench_core TRACE   print "packets N roce R decode_ns X decode_mpps Y core_ns Z
 *                      single_ns S flows F"
 *   bench_core --core-only TRACE   the batch path alone (decode_ns and single_ns 0), for
 *                      profiling it without the other two passes; also prints "chunk_ns"
 *                      and each chunk's ns per packet: on a shared machine the sum over
 *                      chunks of each chunk's minimum across runs is steadier than any total
 *
 * The trace is read (trace_reader) in chunks of CHUNK frames copied into memory; each chunk
 * is then decoded alone (decode_ns: roce_decode_frame per frame), decoded and tracked as
 * agentxdp-analyze does (core_ns: roce_decode_frame + qp_tracker_add_batch, no event sink),
 * and decoded and tracked one packet at a time by a second tracker (single_ns:
 * qp_tracker_add, the peer in the same run), each timed with this thread's CPU clock.
 * Every frame is used; memory grows with the trackers' state, not with the trace.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/decode/roce_decode.h"
#include "lib/trace/trace_reader.h"
#include "lib/track/qp_track.h"

#define CHUNK 65536
#define SNAP 256	/* frames are cut here: the decoder never reads past the headers */

struct chunk_frame {
	uint64_t ts_ns;
	uint32_t caplen, origlen;
	int linktype;
	uint32_t vantage;
};

static uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Decode every frame of the chunk; the count of RoCE packets keeps the work from being dropped. */
static uint64_t decode_chunk(const struct roce_decode_opts *dopts, const struct chunk_frame *fr,
			     const uint8_t *data, size_t n)
{
	struct roce_pkt pkt;
	uint64_t ok = 0;

	for (size_t i = 0; i < n; i++)
		ok += roce_decode_frame(dopts, fr[i].linktype, data + i * SNAP, fr[i].caplen, fr[i].origlen,
					fr[i].ts_ns, &pkt) == ROCE_DECODE_OK;
	return ok;
}

/* Decode and track, in batches as agentxdp-analyze does (qp_tracker_add_batch). */
/* The peer: one qp_tracker_add() per packet, no batch. */
static int track_chunk_single(const struct roce_decode_opts *dopts, struct qp_tracker *t,
			      const struct chunk_frame *fr, const uint8_t *data, size_t n)
{
	struct roce_pkt pkt;

	for (size_t i = 0; i < n; i++)
		if (roce_decode_frame(dopts, fr[i].linktype, data + i * SNAP, fr[i].caplen, fr[i].origlen,
				      fr[i].ts_ns, &pkt) == ROCE_DECODE_OK &&
		    qp_tracker_add(t, &pkt, fr[i].vantage))
			return -1;
	return 0;
}

static int track_chunk(const struct roce_decode_opts *dopts, struct qp_tracker *t, const struct chunk_frame *fr,
		       const uint8_t *data, size_t n)
{
	static struct roce_pkt pkts[QP_BATCH_MAX];
	uint32_t vantages[QP_BATCH_MAX];
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		if (roce_decode_frame(dopts, fr[i].linktype, data + i * SNAP, fr[i].caplen, fr[i].origlen,
				      fr[i].ts_ns, &pkts[k]) == ROCE_DECODE_OK)
			vantages[k++] = fr[i].vantage;
		if (k == QP_BATCH_MAX || (i + 1 == n && k)) {
			if (qp_tracker_add_batch(t, pkts, vantages, k))
				return -1;
			k = 0;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct roce_decode_opts dopts;
	struct qp_tracker_cfg cfg;
	struct qp_tracker *t = NULL, *t1 = NULL;
	struct trace_reader *tr = NULL;
	struct chunk_frame *fr = malloc(CHUNK * sizeof(*fr));
	uint8_t *data = malloc((size_t)CHUNK * SNAP);
	uint64_t packets = 0, roce = 0, dec_ns = 0, core_ns = 0, single_ns = 0;
	char err[512];
	int status = 1, rc = 1, core_only = argc == 3 && !strcmp(argv[1], "--core-only");

	if (argc != 2 && !core_only) {
		fprintf(stderr, "usage: bench_core [--core-only] TRACE\n");
		return 2;
	}
	argv += core_only;
	roce_decode_opts_default(&dopts);
	qp_tracker_cfg_default(&cfg);
	t = qp_tracker_new(&cfg);
	t1 = qp_tracker_new(&cfg);
	if (!fr || !data || !t || !t1) {
		fprintf(stderr, "bench_core: %s\n", strerror(ENOMEM));
		goto cleanup;
	}
	if (trace_reader_open(&tr, (const char *const *)&argv[1], 1, err, sizeof(err))) {
		fprintf(stderr, "bench_core: %s\n", err);
		goto cleanup;
	}
	while (rc != 0) {
		struct trace_frame f;
		size_t n = 0;
		uint64_t c0, c1, c2, c3;

		while (n < CHUNK && (rc = trace_reader_next(tr, &f)) == 1) {
			uint32_t len = f.caplen < SNAP ? f.caplen : SNAP;

			fr[n] = (struct chunk_frame){ f.ts_ns, len, f.origlen, f.linktype, (uint32_t)f.trace_index };
			memcpy(data + n * SNAP, f.data, len);
			n++;
		}
		if (rc < 0) {
			fprintf(stderr, "bench_core: %s\n", trace_reader_error(tr));
			goto cleanup;
		}
		c0 = cpu_ns();
		if (!core_only)
			roce += decode_chunk(&dopts, fr, data, n);
		c1 = cpu_ns();
		rc = track_chunk(&dopts, t, fr, data, n) ? -2 : rc;
		c2 = cpu_ns();
		if (!core_only)
			rc = track_chunk_single(&dopts, t1, fr, data, n) ? -2 : rc;
		c3 = cpu_ns();
		if (rc == -2) {
			fprintf(stderr, "bench_core: out of memory\n");
			goto cleanup;
		}
		dec_ns += c1 - c0;
		core_ns += c2 - c1;
		if (core_only)
			fprintf(stderr, "%s%.1f", packets ? " " : "chunk_ns ", (double)(c2 - c1) / (double)(n ? n : 1));
		single_ns += c3 - c2;
		packets += n;
	}
	if (core_only)
		fputc('\n', stderr);
	qp_tracker_finish(t);
	qp_tracker_finish(t1);
	if (!packets) {
		fprintf(stderr, "bench_core: %s: no frames\n", argv[1]);
		goto cleanup;
	}
	printf("packets %" PRIu64 " roce %" PRIu64 " decode_ns %.1f decode_mpps %.2f core_ns %.1f single_ns %.1f"
	       " flows %" PRIu64 "\n",
	       packets, roce, (double)dec_ns / packets, packets * 1e3 / (double)(dec_ns ? dec_ns : 1),
	       (double)core_ns / packets, (double)single_ns / packets, qp_tracker_totals(t)->flows);
	status = 0;
cleanup:
	trace_reader_close(tr);
	qp_tracker_free(t);
	qp_tracker_free(t1);
	free(fr);
	free(data);
	return status;
}
