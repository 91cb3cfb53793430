/* analyze_read.c: every frame through the decoder into the tracker, on 1 or (lanes) N threads. */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdalign.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "analyze/analyze_read.h"
#include "lib/util/byte_reader.h"
#include "lib/util/log.h"
#include "lib/util/util.h"

/*
 * One reader of the run's frames: the run's own, or with lanes (-j N on files) one per lane,
 * each on its own thread reading every frame of every trace itself (the page cache serves
 * them all), so that no packet is copied between threads. Each on cache lines of its own:
 * what one lane writes per frame shares none with what another lane reads.
 */
struct frame_reader {
	alignas(UTIL_LINE_BYTES) struct analyze_read *r;
	struct trace_reader *tr;
	struct trace_counts *counts;	/* per trace */
	struct mirror_vantages *mv;	/* each reader numbers the vantages alike */
	int lane;			/* its lane, -1: qp_shards_push() */
	bool primary;			/* the run's own: it says errors, its counts are the run's */
	uint64_t frames, selected;
	uint64_t read_errors;		/* inputs that ended with an error */
	bool failed;			/* the tracker ran out of memory */
	uint8_t *plain;			/* per trace: 0 unknown, 1 plain frames may skip lanes, 2 not */
	bool plain_missed;		/* a plain frame of its own was no RoCE packet */
	bool lost;			/* a plain frame of its own decoded to another shard (never) */
	double cpu_s;			/* its thread's CPU time once read (-vv says it) */
	pthread_t thread;
};

/* A frame that is no RoCE packet, in the counts and the census of what else the traces hold. */
static void count_not_roce(struct frame_reader *fr, struct trace_counts *cnt, const struct trace_frame *f,
			   int rc)
{
	if (rc > 0) {
		cnt->other++;
		frame_census_add(&cnt->census, f->linktype, f->data, f->caplen, 0);
		return;
	}
	cnt->malformed[-rc]++;
	if (rc == ROCE_DECODE_BAD_LINK) {
		cnt->bad_linktype = f->linktype;
		frame_census_add(&cnt->census, f->linktype, f->data, f->caplen, 1);
	}
	pr_debug("frame %" PRIu64 " of %s: malformed (%s)\n", f->frame_number,
		 trace_reader_path(fr->tr, f->trace_index), roce_decode_status_name(rc));
}

/*
 * Lanes: the shard of a plain RoCE v2 frame from its headers alone (Ethernet with at most one
 * 802.1Q tag, then IPv4 without options or fragments, or IPv6 straight to UDP, to a RoCE
 * port): such a frame is never a tunnel, so if it decodes, the decoder gives it these
 * addresses. -1: anything else, which every lane decodes.
 */
static int plain_shard(const struct roce_decode_opts *o, const struct trace_frame *f, unsigned n)
{
	const uint8_t *p = f->data, *ip, *udp, *src, *dst;
	uint32_t off = 14;
	uint16_t et, dport;

	if (f->linktype != 1 /* DLT_EN10MB */ || f->caplen < 18)
		return -1;
	et = get_be16(p + 12);
	if (et == 0x8100) {
		et = get_be16(p + 16);
		off = 18;
	}
	ip = p + off;
	if (et == 0x0800) {
		if (f->caplen < off + 28 || ip[0] != 0x45 || ip[9] != 17 || (get_be16(ip + 6) & 0x3fff))
			return -1;
		src = ip + 12;
		dst = ip + 16;
		udp = ip + 20;
	} else if (et == 0x86dd) {
		if (f->caplen < off + 48 || ip[0] >> 4 != 6 || ip[6] != 17)
			return -1;
		src = ip + 8;
		dst = ip + 24;
		udp = ip + 40;
	} else {
		return -1;
	}
	dport = get_be16(udp + 2);
	for (size_t i = 0; i < ARRAY_SIZE(o->udp_ports) && o->udp_ports[i]; i++)
		if (o->udp_ports[i] == dport)
			return (int)(et == 0x0800 ? qp_shard_of_v4(src, dst, n) : qp_shard_of_addrs(src, dst, n));
	return -1;
}

/*
 * Whether a plain frame of trace t may skip the lanes that do not track it: once the trace's
 * own vantage (index t) is its untunnelled packets, a plain packet changes no vantage that
 * any output reads. Until the trace's first RoCE packet every lane decodes every frame, so
 * all lanes decide alike, frame by frame.
 */
static bool plain_known(struct frame_reader *fr, int t)
{
	const struct mirror_vantage *v = &fr->mv->v[t];

	if (!fr->plain[t] && v->used)
		fr->plain[t] = v->src.kind == ROCE_ENCAP_NONE && !v->src.erf_port && !v->erf ? 1 : 2;
	return fr->plain[t] == 1;
}

/* A frame a lane does not track, or not a RoCE packet: its number still goes by. */
static void lane_pass(struct frame_reader *fr, const uint64_t *ts_ns)
{
	if (fr->lane >= 0)
		qp_lane_pass(fr->r->trk, (unsigned)fr->lane, fr->frames, ts_ns);
}

/*
 * Every frame of every trace (that the filter, --qp and -c select) through the decoder into
 * the tracker. Lanes: a plain frame of another lane's is skipped undecoded; the lane that
 * tracks it counts it; every other frame every lane decodes, and the primary counts it.
 */
static void read_frames(struct frame_reader *fr)
{
	struct analyze_read *r = fr->r;
	const struct analyze_opts *opts = r->opts;
	unsigned n_lanes = qp_shards_count(r->trk);
	struct trace_frame frame;
	int rc;

	while ((rc = trace_reader_next(fr->tr, &frame)) != 0) {
		struct roce_pkt *pkt;
		struct trace_counts *cnt;
		bool mine = fr->primary, plain = false;
		uint32_t v;

		if (rc < 0) {
			/* Keep what was read: the other inputs still deliver their frames. */
			fr->read_errors++;
			if (fr->primary) {
				pr_err("%s\n", trace_reader_error(fr->tr));
				r->status = 1;
			}
			continue;
		}
		fr->frames++;
		rc = opts->filter ? analyze_select_link(opts, &frame) : 1; /* a filter: no lanes */
		if (rc <= 0) {
			if (rc < 0)
				r->status = 1;
			continue;
		}
		/* Lanes: another lane's plain frame costs its keying and this much, no more. */
		if (r->plain_keys && (rc = plain_shard(r->dopts, &frame, n_lanes)) >= 0 &&
		    plain_known(fr, frame.trace_index)) {
			if (rc != fr->lane) {
				lane_pass(fr, &frame.ts_ns); /* taken for a RoCE packet: see plain_missed */
				if (opts->max_frames && ++fr->selected == opts->max_frames)
					break;
				continue;
			}
			mine = plain = true;
		}
		pkt = fr->lane < 0 ? qp_shards_slot(r->trk) : qp_lane_slot(r->trk, fr->lane);
		cnt = &fr->counts[frame.trace_index];
		rc = roce_decode_frame(r->dopts, frame.linktype, frame.data, frame.caplen, frame.origlen,
				       frame.ts_ns, pkt);
		if (!analyze_select_qp(opts, rc, pkt)) {
			lane_pass(fr, NULL);
			continue;
		}
		fr->selected++;
		if (rc == ROCE_DECODE_OK) {
			cnt->roce += mine;
			v = mirror_vantage_of(fr->mv, frame.trace_index, pkt);
			fr->lost |= plain && qp_shard_of(pkt, n_lanes) != (unsigned)fr->lane;
			if (fr->lane < 0 ? qp_shards_push(r->trk, v) :
					   qp_lane_push(r->trk, (unsigned)fr->lane, v, fr->frames)) {
				fr->failed = true; /* stop reading; what was tracked is still analyzed and written */
				break;
			}
		} else {
			fr->plain_missed |= plain; /* the other lanes took it for a RoCE packet */
			lane_pass(fr, NULL);
			if (mine)
				count_not_roce(fr, cnt, &frame, rc);
		}
		/* With -j the store is the merge thread's: its failure is seen at the end. */
		if (r->st && n_lanes == 1 && store_failed(r->st))
			break;
		if (opts->max_frames && fr->selected == opts->max_frames)
			break; /* -c */
	}
}

static void *lane_main(void *arg)
{
	struct frame_reader *fr = arg;

	pthread_setname_np(pthread_self(), "analyze-lane");
	read_frames(fr);
	qp_lane_end(fr->r->trk, (unsigned)fr->lane);
	fr->cpu_s = util_thread_cpu_s();
	return NULL;
}

/*
 * Lanes 1 to n - 1 on threads of their own (every signal blocked: the main thread takes
 * them), each with its own reader. A lane that cannot start is ended unfed (the merge waits
 * for every lane) and the run fails (*fatal), unless a signal stopped its first read: the run
 * is then interrupted, as -j 1's would be. The number of readers started.
 */
static unsigned lanes_start(struct analyze_read *r, struct frame_reader *fr, unsigned n, bool *fatal)
{
	sigset_t all, old;
	char err[512];
	unsigned j, started = 0;
	int rc = 0;
	bool stopped = false;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	for (j = 1; j < n && !rc; j++, started++) {
		fr[j] = (struct frame_reader){ .r = r, .lane = (int)j };
		fr[j].mv = util_line_calloc(1, sizeof(*fr[j].mv));
		fr[j].counts = util_line_calloc((size_t)r->n_traces, sizeof(*fr[j].counts));
		fr[j].plain = util_line_calloc((size_t)r->n_traces, 1);
		if (!fr[j].mv || !fr[j].counts || !fr[j].plain || mirror_vantages_init(fr[j].mv, r->n_traces)) {
			snprintf(err, sizeof(err), "%s", strerror(ENOMEM));
			rc = -1;
		} else if (trace_reader_open(&fr[j].tr, r->opts->traces, r->opts->n_traces, err, sizeof(err))) {
			rc = -1;
			stopped = *r->stop; /* a signal came: its read failed, as -j 1's would stop */
		} else if ((rc = pthread_create(&fr[j].thread, NULL, lane_main, &fr[j]))) {
			snprintf(err, sizeof(err), "%s", strerror(rc));
		}
		if (rc)
			break;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc) {
		if (!stopped)
			pr_err("-j %u: starting reader %u: %s\n", n, j, err);
		*fatal = !stopped;
		for (; j < n; j++)
			qp_lane_end(r->trk, j);
	}
	return started;
}

/* The RoCE packets a reader counted: with lanes, its own plain ones and (the primary) the rest. */
static uint64_t reader_roce(const struct analyze_read *r, const struct trace_counts *c)
{
	uint64_t n = 0;

	for (int i = 0; i < r->n_traces; i++)
		n += c[i].roce;
	return n;
}

/* Each lane's counts into the run's (the primary's). */
static void lane_counts_add(struct analyze_read *r, const struct trace_counts *c)
{
	for (int i = 0; i < r->n_traces; i++) {
		r->counts[i].roce += c[i].roce;
		r->counts[i].other += c[i].other;
		for (int m = 0; m < N_MALFORMED; m++)
			r->counts[i].malformed[m] += c[i].malformed[m];
		frame_census_merge(&r->counts[i].census, &c[i].census);
	}
}

/*
 * Whether reader j found the traces the run's reader found: each opened them itself, so a
 * file that shrank, grew or was replaced meanwhile gave its shard other packets. Said once.
 * A signal or a full tracker stops readers at different frames: nothing to compare then.
 */
static bool lane_read_alike(struct analyze_read *r, const struct frame_reader *fr, unsigned j, unsigned n)
{
	const struct frame_reader *a = &fr[0], *b = &fr[j];

	if (*r->stop || a->failed || b->failed || (a->frames == b->frames && a->read_errors == b->read_errors))
		return true;
	pr_err("-j %u: reader %u read %" PRIu64 " frames%s, reader 0 %" PRIu64 "%s: a trace changed while read;"
	       " nothing written (-j 1 reads it once)\n", n, j, b->frames, b->read_errors ? " and an error" : "",
	       a->frames, a->read_errors ? " and an error" : "");
	return false;
}

/*
 * Join the lanes' readers, their counts and flags into fr[0]'s; whether one failed (out of
 * memory). *fatal (set by lanes_start when a reader could not start), or a reader read other
 * traces (both said): the run fails.
 */
static bool lanes_join(struct analyze_read *r, struct frame_reader *fr, unsigned n, unsigned started,
		       bool *fatal)
{
	bool failed = false;

	for (unsigned j = 1; j < n; j++) {
		if (j <= started) {
			pthread_join(fr[j].thread, NULL);
			if (!*fatal && !lane_read_alike(r, fr, j, n))
				*fatal = true;
			failed |= fr[j].failed || fr[j].mv->oom != r->mv->oom;
			fr[0].plain_missed |= fr[j].plain_missed;
			fr[0].lost |= fr[j].lost;
			lane_counts_add(r, fr[j].counts);
			/* Stopped by a signal, the readers stopped at different frames: the
			 * run read as far as the farthest, whose own packets are all in. */
			if (*r->stop) {
				trace_reader_take_farther(r->tr, fr[j].tr);
				if (fr[j].frames > fr[0].frames)
					fr[0].frames = fr[j].frames;
			}
			pr_debug("-j %u: reader %u: %" PRIu64 " frames, %" PRIu64 " RoCE packets counted, %.3f s CPU\n",
				 n, j, fr[j].frames, reader_roce(r, fr[j].counts), fr[j].cpu_s);
		}
		trace_reader_close(fr[j].tr);
		if (fr[j].mv)
			mirror_vantages_free(fr[j].mv);
		free(fr[j].mv);
		free(fr[j].counts);
		free(fr[j].plain);
	}
	return failed;
}

/*
 * The lanes took a plain frame that was no RoCE packet for one: the timestamps that went back
 * are counted again, over one more pass of every frame on this thread (seen on malformed
 * frames only; an interrupted run keeps the lanes' count).
 */
static void recount_ts_backwards(struct analyze_read *r)
{
	struct trace_reader *tr = NULL;
	struct mirror_vantages mv;
	struct trace_frame frame;
	struct roce_pkt pkt;
	uint64_t frames = 0, last = 0, back = 0;
	bool seen = false;
	char err[512];
	int rc;

	if (*r->stop || mirror_vantages_init(&mv, r->n_traces))
		return;
	if (!trace_reader_open(&tr, r->opts->traces, r->opts->n_traces, err, sizeof(err))) {
		while ((rc = trace_reader_next(tr, &frame)) != 0) {
			if (rc < 0)
				continue;
			rc = roce_decode_frame(r->dopts, frame.linktype, frame.data, frame.caplen,
					       frame.origlen, frame.ts_ns, &pkt);
			if (rc == ROCE_DECODE_OK) {
				mirror_vantage_of(&mv, frame.trace_index, &pkt);
				back += seen && pkt.ts_ns < last;
				last = pkt.ts_ns;
				seen = true;
			}
			if (r->opts->max_frames && ++frames == r->opts->max_frames)
				break;
		}
		qp_shards_set_ts_backwards(r->trk, back);
	}
	trace_reader_close(tr);
	mirror_vantages_free(&mv);
}

int analyze_read(struct analyze_read *r)
{
	unsigned n_lanes = r->lanes ? qp_shards_count(r->trk) : 0, started = 0;
	struct frame_reader *fr = util_line_calloc(n_lanes ? n_lanes : 1, sizeof(*fr));
	bool fatal = false;

	if (!fr) {
		pr_err("%s\n", strerror(ENOMEM));
		for (unsigned j = 0; j < n_lanes; j++)
			qp_lane_end(r->trk, j);
		return -1;
	}
	fr[0] = (struct frame_reader){ .r = r, .tr = r->tr, .counts = r->counts, .mv = r->mv,
				       .lane = n_lanes ? 0 : -1, .primary = true };
	fr[0].plain = util_line_calloc((size_t)r->n_traces, 1);
	r->plain_keys = n_lanes && !r->opts->n_qps && fr[0].plain;
	if (n_lanes)
		started = lanes_start(r, fr, n_lanes, &fatal);
	fr[0].cpu_s = util_thread_cpu_s();
	read_frames(&fr[0]);
	r->failed = fr[0].failed;
	if (n_lanes)
		qp_lane_end(r->trk, 0);
	pr_debug("-j %u: reader 0: %" PRIu64 " frames, %" PRIu64 " RoCE packets counted, %.3f s CPU\n",
		 qp_shards_count(r->trk), fr[0].frames, reader_roce(r, r->counts), util_thread_cpu_s() - fr[0].cpu_s);
	if (n_lanes)
		r->failed |= lanes_join(r, fr, n_lanes, started, &fatal);
	if (fr[0].lost) {
		pr_err("-j %u: a packet went to the wrong reader: use -j 1\n", n_lanes);
		r->status = 1;
	}
	if (fr[0].plain_missed)
		recount_ts_backwards(r);
	r->frames = fr[0].frames;
	r->selected = fr[0].selected;
	free(fr[0].plain);
	free(fr);
	return fatal ? -1 : 0;
}
