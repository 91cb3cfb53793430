/* qp_shards.c: the per-QP tracker on N threads, with one tracker's results (see qp_shards.h). */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "lib/track/qp_shards.h"
#include "lib/track/qp_track_int.h"	/* mix64() */
#include "lib/track/read_queue.h"
#include "lib/util/util.h"

#define IN_BATCH 256		/* packets per input slot */
#define IN_DEPTH 16		/* input slots per shard */
#define OUT_BATCH 1024		/* events per output slot */
#define OUT_DEPTH 8		/* output slots per shard */
#define OUT_EVERY 4		/* input slots between two progress reports at most */
#define SPIN 256		/* polls before sleeping on a ring */
#define LANE_SAY 2048		/* lanes: packets between two progress reports */

/*
 * Events are merged by key: a packet's events by the packet's number (from 1), the
 * finish events after every packet's, by global flow id.
 */
#define KEY_FINISH (1ull << 62)
#define WM_PACKETS (KEY_FINISH - 1)	/* every packet's events are out, finish's to come */
#define WM_ALL UINT64_MAX		/* the shard is done */

/* ---- single-producer single-consumer rings: counters, and a futex for the slow path ---- */

/* A side asleep until the other side's counter reaches target. */
struct ring_waiter {
	_Atomic uint32_t sleeping;
	_Atomic uint32_t target;
};

struct spsc {
	_Atomic uint32_t head;		/* slots published, by the producer */
	struct ring_waiter wait_head;	/* the consumer, for slots to read */
	char apart[52];			/* the two sides' counters on different cache lines */
	_Atomic uint32_t tail;		/* slots released, by the consumer */
	struct ring_waiter wait_tail;	/* the producer, for free slots */
	char after[52];
};

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

static inline bool reached(uint32_t v, uint32_t target)
{
	return (int32_t)(v - target) >= 0;
}

/*
 * Until *ctr reaches target: a short spin, then the futex. A shared machine must not spin,
 * and a system call per slot costs more than the slot's work: the producer waits for half
 * the ring (see ring_produce_slot()), so a side sleeps and is woken once per many slots.
 */
static void wait_reach(_Atomic uint32_t *ctr, struct ring_waiter *w, uint32_t target)
{
	uint32_t v;

	for (int i = 0; i < SPIN; i++) {
		if (reached(atomic_load_explicit(ctr, memory_order_acquire), target))
			return;
		cpu_relax();
	}
	atomic_store(&w->target, target);
	atomic_store(&w->sleeping, 1);
	for (;;) {
		atomic_thread_fence(memory_order_seq_cst);
		v = atomic_load_explicit(ctr, memory_order_acquire);
		if (reached(v, target))
			break;
		syscall(SYS_futex, (uint32_t *)ctr, FUTEX_WAIT_PRIVATE, v, NULL, NULL, 0);
	}
	/*
	 * Only the sleeper clears its flag: a waker that cleared it could do so late, after this
	 * side had returned and gone to sleep again for a later target, and its wake would then
	 * come before that futex wait: no later advance() would wake it (both sides asleep).
	 */
	atomic_store_explicit(&w->sleeping, 0, memory_order_relaxed);
}

/* ++*ctr (release), and wake the other side if it sleeps for this value. */
static void advance(_Atomic uint32_t *ctr, struct ring_waiter *w)
{
	uint32_t v = atomic_fetch_add_explicit(ctr, 1, memory_order_release) + 1;

	atomic_thread_fence(memory_order_seq_cst);
	if (atomic_load_explicit(&w->sleeping, memory_order_acquire) &&
	    reached(v, atomic_load_explicit(&w->target, memory_order_relaxed)))
		syscall(SYS_futex, (uint32_t *)ctr, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

/* Producer: the index of a free slot; a full ring is waited on until half of it is free. */
static uint32_t ring_produce_slot(struct spsc *r, uint32_t depth)
{
	uint32_t h = atomic_load_explicit(&r->head, memory_order_relaxed);

	if (h - atomic_load_explicit(&r->tail, memory_order_acquire) == depth)
		wait_reach(&r->tail, &r->wait_tail, h - depth / 2);
	return h % depth;
}

/* Consumer: whether a published slot waits (index in *idx); blocking or not. */
static bool ring_consume_slot(struct spsc *r, uint32_t depth, bool block, uint32_t *idx)
{
	uint32_t t = atomic_load_explicit(&r->tail, memory_order_relaxed);

	if (atomic_load_explicit(&r->head, memory_order_acquire) == t) {
		if (!block)
			return false;
		wait_reach(&r->head, &r->wait_head, t + 1);
	}
	*idx = t % depth;
	return true;
}

/* Consumer: whether nothing is published beyond what it took. */
static bool ring_empty(struct spsc *r)
{
	return atomic_load_explicit(&r->head, memory_order_acquire) ==
	       atomic_load_explicit(&r->tail, memory_order_relaxed);
}

/* ---- what travels ---- */

/* Packets as qp_tracker_add_batch() takes them, with their numbers. */
struct in_slot {
	uint32_t n;
	bool last;		/* end of input: finish the tracker after these */
	uint64_t through_seq;	/* the shard's packets numbered up to this are here or before */
	struct roce_pkt pkts[IN_BATCH];
	uint32_t vantage[IN_BATCH];
	uint64_t seq[IN_BATCH];	/* the packet's number in the run, from 1 */
};

enum shard_ev_type { EV_BORN, EV_LATENCY, EV_RETX, EV_NAK, EV_CNP, EV_WINDOW };

/*
 * An event as it travels, 48 bytes: a latency sample, most of them, fits in under a line (the
 * lanes write them and the merge thread reads them, so each line crosses cores). Larger ones
 * wait in their slot's big[]. Every kind's flow id comes first (head_key() reads it as any).
 */
struct shard_event {
	uint64_t seq;		/* the packet that caused it, 0: qp_tracker_finish() */
	union {
		uint64_t born_id;	/* EV_BORN: the shard's flow id its packet gave it */
		struct qp_latency_sample lat;
		struct qp_cnp_event cnp;
		struct {
			uint64_t flow_id;
			uint32_t at;	/* EV_RETX, EV_NAK, EV_WINDOW: its big[] entry */
		} big;
	};
	uint8_t type;		/* enum shard_ev_type */
};
_Static_assert(sizeof(struct shard_event) <= 48, "a latency event in under a cache line");

union shard_big {
	struct qp_retx_event retx;
	struct qp_nak_event nak;
	struct {
		uint64_t flow_id;
		struct flow_window w;
	} win;
};

struct out_slot {
	uint32_t n, n_big;
	uint64_t wm;		/* the shard's events keyed up to this are here or before */
	struct shard_event ev[OUT_BATCH];
	union shard_big big[OUT_BATCH];
};

struct shard {
	alignas(UTIL_LINE_BYTES) struct qp_shards *owner;	/* each shard on lines of its own */
	struct qp_tracker *t;
	struct qp_event_sink rec;	/* the tracker's sink: records into out slots */
	pthread_t thread;
	bool started;
	struct spsc in_ring, out_ring;
	struct in_slot *in;		/* IN_DEPTH slots */
	struct out_slot *out;		/* OUT_DEPTH slots */
	/* the reader's side */
	struct in_slot *fill;		/* being filled, NULL none */
	/* the shard thread's side */
	struct out_slot *cur_out;	/* being filled, NULL none */
	const uint64_t *cur_seqs;	/* the numbers of the batch being tracked, NULL in finish */
	uint64_t cur_base;		/* the tracker's packet count before the batch */
	uint64_t done_seq;		/* its events are out up to here */
	bool failed;
	const struct flow_stats *fin_snap;	/* its tracker's snapshot, taken as it finished */
	long fin_n;			/* its length, or -ENOMEM; 0 with fin_snap NULL: not taken */
	/* the merge thread's side */
	struct out_slot *mslot;		/* being merged, NULL none */
	uint32_t mi;			/* next event in it */
	uint64_t mwm;			/* watermark of the last slot merged */
	uint64_t *map;			/* shard flow id - 1 -> flow id */
	size_t map_n, map_cap;
	uint64_t *born;			/* no sink: shard flow id - 1 -> its first packet's number */
	size_t born_n, born_cap;
	struct lane *lane;		/* lanes: what its reader thread feeds it */
};

/* A lane: a shard whose own reader thread reads every packet and keeps its shard's. */
struct lane {
	alignas(UTIL_LINE_BYTES) struct roce_pkt pkts[QP_BATCH_MAX];	/* its packets; the next one is decoded at pkts[n] */
	uint32_t vantage[QP_BATCH_MAX];
	uint64_t seq[QP_BATCH_MAX];
	uint32_t n;
	bool ended;
	uint64_t packets, cm_reqs;	/* its own packets, and the CM REQs among them */
	uint64_t said;			/* number of its last progress report */
	uint64_t last_ts_ns, ts_backwards; /* as one tracker counts them, over every lane's packets */
	bool seen;			/* a packet's time was given */
};

struct qp_shards {
	unsigned n;
	struct qp_tracker_cfg cfg;	/* the caller's, with its sink */
	uint64_t seq;			/* packets added */
	uint64_t cm_reqs;
	bool finished;
	bool lanes;			/* qp_shards_new_lanes(): the caller's threads feed the shards */
	/* n == 1: one tracker fed in batches on the caller's thread */
	struct qp_tracker *one;
	struct roce_pkt batch[QP_BATCH_MAX];
	uint32_t batch_vantage[QP_BATCH_MAX];
	size_t batch_n;
	int one_rc;
	/* n > 1 */
	struct roce_pkt scratch;	/* decoded here, then copied to its shard */
	struct shard *sh;
	pthread_t merger;
	bool merge;			/* a sink: events go through the merge thread */
	bool merger_started;
	double merge_cpu_s;		/* the merge thread's CPU time, once joined */
	bool map_failed;		/* a flow could not be numbered: no event goes out */
	_Atomic int failed;		/* a shard or the merge ran out of memory */
	_Atomic unsigned n_ended;	/* shards whose tracker finished (shard_snap()) */
	uint64_t last_ts_ns, ts_backwards; /* as one tracker counts them, over all packets */
	bool ts_backwards_set;		/* lanes: the caller counted them (qp_shards_set_ts_backwards()) */
	uint64_t n_ids;			/* flow ids given by the merge */
	struct qp_tracker_totals tot;
	struct flow_stats *snap;
	size_t snap_cap;
};

/* ---- the shard threads: track, and record the events with their packet's number ---- */

/*
 * A finished shard's snapshot (the flows' percentiles and deviations), taken on its own
 * thread as it ends, beside the shards still tracking, not after the last one on the
 * caller's: qp_shards_snapshot() only copies it. Nothing else reads the tracker meanwhile.
 * The last shard to end leaves its own to qp_shards_snapshot(), which takes it after the
 * others' copies are freed: at -j 2 the peak memory stays the merged array plus one shard's.
 * Not with a sink: the copy would be held while the merge and the store finish, the run's
 * peak (+340 bytes per QP with -o, measured).
 */
static void shard_snap(struct shard *sh)
{
	if (sh->owner->merge || atomic_fetch_add(&sh->owner->n_ended, 1) + 1 >= sh->owner->n)
		return;
	sh->fin_n = qp_tracker_snapshot(sh->t, &sh->fin_snap);
	if (sh->fin_n < 0)
		sh->fin_snap = NULL;
}

/* The slot this shard is filling, taken from the ring (empty) when none is. */
static struct out_slot *out_open(struct shard *sh)
{
	if (!sh->cur_out) {
		sh->cur_out = &sh->out[ring_produce_slot(&sh->out_ring, OUT_DEPTH)];
		sh->cur_out->n = sh->cur_out->n_big = 0;
	}
	return sh->cur_out;
}

static void out_publish(struct shard *sh, uint64_t wm)
{
	out_open(sh)->wm = wm;
	sh->cur_out = NULL;
	advance(&sh->out_ring.head, &sh->out_ring.wait_head);
}

/* The number of the packet being tracked, 0 in finish (`counted`: see out_next_at()). */
static uint64_t cur_seq(const struct shard *sh, bool counted)
{
	uint64_t i;

	if (!sh->cur_seqs)
		return 0;
	i = qp_tracker_totals(sh->t)->packets - sh->cur_base - (counted ? 1 : 0);
	return sh->cur_seqs[i];
}

/*
 * The next event of the packet being tracked; `counted`: whether the tracker has counted the
 * packet yet (it does before emitting anything but the new flow's id).
 */
static struct shard_event *out_next_at(struct shard *sh, uint8_t type, bool counted)
{
	struct out_slot *o;
	struct shard_event *e;

	if (sh->cur_out && sh->cur_out->n == OUT_BATCH)
		out_publish(sh, sh->done_seq);
	o = out_open(sh);
	e = &o->ev[o->n++];
	e->seq = cur_seq(sh, counted);
	e->type = type;
	return e;
}

static struct shard_event *out_next(struct shard *sh, uint8_t type)
{
	return out_next_at(sh, type, true);
}

static void rec_latency(void *ctx, const struct qp_latency_sample *s)
{
	out_next(ctx, EV_LATENCY)->lat = *s;
}

/* The next event of the packet being tracked, its payload in the slot's big[]. */
static union shard_big *out_next_big(struct shard *sh, uint8_t type, uint64_t flow_id)
{
	struct shard_event *e = out_next(sh, type);

	e->big.flow_id = flow_id;
	e->big.at = sh->cur_out->n_big++;
	return &sh->cur_out->big[e->big.at];
}

static void rec_retx(void *ctx, const struct qp_retx_event *e)
{
	out_next_big(ctx, EV_RETX, e->flow_id)->retx = *e;
}

static void rec_nak(void *ctx, const struct qp_nak_event *e)
{
	out_next_big(ctx, EV_NAK, e->flow_id)->nak = *e;
}

static void rec_cnp(void *ctx, const struct qp_cnp_event *e)
{
	out_next(ctx, EV_CNP)->cnp = *e;
}

static void rec_window(void *ctx, uint64_t flow_id, const struct flow_window *w)
{
	union shard_big *b = out_next_big(ctx, EV_WINDOW, flow_id);

	b->win.flow_id = flow_id;
	b->win.w = *w;
}

/* A new flow: the merge numbers it at its packet, as one tracker does. */
static void rec_flow(void *ctx, uint64_t flow_id)
{
	struct shard *sh = ctx;

	if (sh->owner->merge) {
		out_next_at(sh, EV_BORN, false)->born_id = flow_id;
		return;
	}
	/* No sink: no merge thread; the ids are given at finish from the packets' numbers. */
	if (util_ensure_mem((void **)&sh->born, &sh->born_cap, sizeof(*sh->born), sh->born_n + 1)) {
		sh->failed = true;
		atomic_store(&sh->owner->failed, 1);
		return;
	}
	sh->born[sh->born_n++] = cur_seq(sh, false);
}

/* A slot's packets, in the tracker's batches (prefetching, as on one thread). */
static void shard_track(struct shard *sh, const struct in_slot *in)
{
	for (uint32_t i = 0; i < in->n && !sh->failed; i += QP_BATCH_MAX) {
		uint32_t m = in->n - i < QP_BATCH_MAX ? in->n - i : QP_BATCH_MAX;

		sh->cur_seqs = &in->seq[i];
		sh->cur_base = qp_tracker_totals(sh->t)->packets;
		if (qp_tracker_add_batch(sh->t, &in->pkts[i], &in->vantage[i], m)) {
			sh->failed = true;
			atomic_store(&sh->owner->failed, 1);
		}
		sh->done_seq = in->seq[i + m - 1];
	}
	sh->cur_seqs = NULL;
}

static void *shard_main(void *arg)
{
	struct shard *sh = arg;
	uint32_t idx, unsaid = 0;

	for (;;) {
		struct in_slot *in;
		bool last;

		ring_consume_slot(&sh->in_ring, IN_DEPTH, true, &idx);
		in = &sh->in[idx];
		shard_track(sh, in);
		sh->done_seq = in->through_seq;
		last = in->last;
		advance(&sh->in_ring.tail, &sh->in_ring.wait_tail);
		if (last)
			break;
		/*
		 * The merge needs this shard's progress to release the others' events: said before
		 * waiting for input (so nothing waits on a sleeping shard), and every few slots.
		 */
		if (sh->owner->merge && (++unsaid == OUT_EVERY || ring_empty(&sh->in_ring))) {
			out_publish(sh, sh->done_seq);
			unsaid = 0;
		}
	}
	sh->done_seq = WM_PACKETS;
	qp_tracker_finish(sh->t);
	if (sh->owner->merge)
		out_publish(sh, WM_ALL);
	shard_snap(sh);
	return NULL;
}

/* ---- the merge thread: every shard's events in one tracker's order, into the sink ---- */

/* The flow id of shard flow `id` (0 stays 0); a new one is numbered now. */
static uint64_t global_id(struct qp_shards *s, struct shard *sh, uint64_t id)
{
	if (!id)
		return 0;
	if (id <= sh->map_n)
		return sh->map[id - 1];
	/*
	 * Shard ids come in order: an unknown one is its packet's new flow, numbered at its packet.
	 * After a failed numbering the next id would take the missing one's place: none is given.
	 */
	if (s->map_failed || id != sh->map_n + 1 ||
	    util_ensure_mem((void **)&sh->map, &sh->map_cap, sizeof(*sh->map), sh->map_n + 1)) {
		s->map_failed = true;
		atomic_store(&s->failed, 1);
		return 0;
	}
	sh->map[sh->map_n++] = ++s->n_ids;
	return s->n_ids;
}

static void merge_emit(struct qp_shards *s, struct shard *sh, const struct out_slot *o, uint32_t i)
{
	const struct qp_event_sink *k = s->cfg.sink;
	const struct shard_event *e = &o->ev[i];

	switch (e->type) {
	case EV_BORN: {
		uint64_t id = global_id(s, sh, e->born_id);

		if (k->flow && !s->map_failed)
			k->flow(k->ctx, id);
		break;
	}
	case EV_LATENCY: {
		struct qp_latency_sample x = e->lat;

		x.flow_id = global_id(s, sh, x.flow_id);
		if (!s->map_failed)
			k->latency(k->ctx, &x);
		break;
	}
	case EV_RETX: {
		struct qp_retx_event x = o->big[e->big.at].retx;

		x.flow_id = global_id(s, sh, x.flow_id);
		if (!s->map_failed)
			k->retransmission(k->ctx, &x);
		break;
	}
	case EV_NAK: {
		struct qp_nak_event x = o->big[e->big.at].nak;

		x.flow_id = global_id(s, sh, x.flow_id);
		x.responder_flow_id = global_id(s, sh, x.responder_flow_id);
		if (!s->map_failed)
			k->nak(k->ctx, &x);
		break;
	}
	case EV_CNP: {
		struct qp_cnp_event x = e->cnp;

		x.flow_id = global_id(s, sh, x.flow_id);
		x.cnp_flow_id = global_id(s, sh, x.cnp_flow_id);
		if (!s->map_failed)
			k->cnp(k->ctx, &x);
		break;
	}
	case EV_WINDOW: {
		const union shard_big *b = &o->big[e->big.at];
		uint64_t id = global_id(s, sh, b->win.flow_id);

		if (!s->map_failed)
			k->window(k->ctx, id, &b->win.w);
		break;
	}
	}
}

/* Whether the shard has an event to merge; takes its next published slot (blocking or not). */
static bool merge_head(struct shard *sh, bool block)
{
	uint32_t idx;

	for (;;) {
		if (sh->mslot && sh->mi < sh->mslot->n)
			return true;
		if (sh->mslot) {
			sh->mwm = sh->mslot->wm;
			sh->mslot = NULL;
			advance(&sh->out_ring.tail, &sh->out_ring.wait_tail);
		}
		if (sh->mwm == WM_ALL || !ring_consume_slot(&sh->out_ring, OUT_DEPTH, block, &idx))
			return false;
		sh->mslot = &sh->out[idx];
		sh->mi = 0;
		block = false; /* a slot came: look at it before waiting again */
	}
}

static uint64_t head_key(struct qp_shards *s, struct shard *sh)
{
	const struct shard_event *e = &sh->mslot->ev[sh->mi];

	return e->seq ? e->seq : KEY_FINISH + global_id(s, sh, e->big.flow_id);
}

/*
 * Each round: the shard whose next event comes first is merged up to the first key another
 * shard may still hold (its next event's, or past its watermark); when that is not known
 * yet, wait for the shard that holds it back.
 */
static void *merge_main(void *arg)
{
	struct qp_shards *s = arg;

	for (;;) {
		struct shard *best = NULL, *hold = NULL;
		uint64_t best_key = WM_ALL, limit = WM_ALL;

		for (unsigned j = 0; j < s->n; j++) {
			struct shard *sh = &s->sh[j];
			uint64_t key;

			if (!merge_head(sh, false))
				continue;
			key = head_key(s, sh);
			if (key < best_key) {
				best = sh;
				best_key = key;
			}
		}
		for (unsigned j = 0; j < s->n; j++) {
			struct shard *sh = &s->sh[j];
			uint64_t lim;

			if (sh == best || sh->mwm == WM_ALL)
				continue;
			lim = sh->mslot ? head_key(s, sh) - 1 : sh->mwm;
			if (lim < limit)
				limit = lim;
			if (!sh->mslot && (!best || sh->mwm < best_key))
				hold = sh;
		}
		if (!best && !hold)
			break; /* every shard is done */
		/*
		 * Nothing to wait for and best not first: two finish keys alike, as when flows could
		 * not be numbered (out of memory, no event goes out): merge on, never wait on nobody.
		 */
		if (!best || (best_key > limit && hold)) {
			merge_head(hold, true);
			continue;
		}
		do {
			merge_emit(s, best, best->mslot, best->mi);
			best->mi++;
		} while (merge_head(best, false) && head_key(s, best) <= limit);
	}
	s->merge_cpu_s = util_thread_cpu_s();
	return NULL;
}

/* ---- the reader's side ---- */

static inline uint64_t addr_fold(const uint8_t *a)
{
	uint64_t x, y;

	memcpy(&x, a, 8);
	memcpy(&y, a + 8, 8);
	return x ^ (y * 0x9e3779b97f4a7c15ull);
}

static inline unsigned shard_of_folds(uint64_t a, uint64_t b, unsigned n)
{
	/* Unordered: both directions of a host pair give the same h. */
	uint64_t h = a < b ? mix64(a * 0xff51afd7ed558ccdull + b) : mix64(b * 0xff51afd7ed558ccdull + a);

	return n > 1 ? (unsigned)(((unsigned __int128)h * n) >> 64) : 0;
}

unsigned qp_shard_of_folded(const uint8_t src[16], const uint8_t dst[16], unsigned n)
{
	return shard_of_folds(addr_fold(src), addr_fold(dst), n);
}

/* Every shard's slot goes out, empty or not: the watermarks let the merge go on. */
static void flush_all(struct qp_shards *s, bool last)
{
	for (unsigned j = 0; j < s->n; j++) {
		struct shard *sh = &s->sh[j];

		if (!sh->fill) {
			sh->fill = &sh->in[ring_produce_slot(&sh->in_ring, IN_DEPTH)];
			sh->fill->n = 0;
		}
		sh->fill->through_seq = s->seq;
		sh->fill->last = last;
		sh->fill = NULL;
		advance(&sh->in_ring.head, &sh->in_ring.wait_head);
	}
}

static int one_flush(struct qp_shards *s)
{
	int rc = s->batch_n ? qp_tracker_add_batch(s->one, s->batch, s->batch_vantage, s->batch_n) : 0;

	s->batch_n = 0;
	if (rc)
		s->one_rc = rc;
	return rc;
}

struct roce_pkt *qp_shards_slot(struct qp_shards *s)
{
	return s->n == 1 ? &s->batch[s->batch_n] : &s->scratch;
}

int qp_shards_push(struct qp_shards *s, uint32_t vantage)
{
	const struct roce_pkt *pkt = qp_shards_slot(s);
	struct shard *sh;
	struct in_slot *in;

	if (s->finished)
		return -EINVAL;
	s->seq++;
	if ((pkt->flags & ROCE_F_CM) && pkt->cm_attr_id == CM_ATTR_REQ)
		s->cm_reqs++;
	if (s->n == 1) {
		s->batch_vantage[s->batch_n++] = vantage;
		return s->batch_n == QP_BATCH_MAX ? one_flush(s) : 0;
	}
	if (atomic_load_explicit(&s->failed, memory_order_relaxed))
		return -ENOMEM;
	if (s->seq > 1 && pkt->ts_ns < s->last_ts_ns)
		s->ts_backwards++;
	s->last_ts_ns = pkt->ts_ns;
	sh = &s->sh[qp_shard_of(pkt, s->n)];
	if (!sh->fill) {
		sh->fill = &sh->in[ring_produce_slot(&sh->in_ring, IN_DEPTH)];
		sh->fill->n = 0;
	}
	in = sh->fill;
	in->pkts[in->n] = *pkt;
	in->vantage[in->n] = vantage;
	in->seq[in->n++] = s->seq;
	if (in->n == IN_BATCH)
		flush_all(s, false);
	return 0;
}

/* ---- lanes: the caller's threads each read every packet and keep their shard's ---- */

/* The lane's packets so far through its tracker (prefetching batches, as on one thread). */
static void lane_flush(struct qp_shards *s, struct shard *sh)
{
	struct lane *l = sh->lane;

	if (!l->n)
		return;
	sh->cur_seqs = l->seq;
	sh->cur_base = qp_tracker_totals(sh->t)->packets;
	if (!sh->failed && qp_tracker_add_batch(sh->t, l->pkts, l->vantage, l->n)) {
		sh->failed = true;
		atomic_store(&s->failed, 1);
	}
	sh->done_seq = l->seq[l->n - 1];
	sh->cur_seqs = NULL;
	l->n = 0;
}

struct roce_pkt *qp_lane_slot(struct qp_shards *s, unsigned lane)
{
	struct lane *l = s->sh[lane].lane;

	return &l->pkts[l->n];
}

/*
 * The merge holds the other shards' events until this one has passed their packets: it says
 * how far it is every LANE_SAY numbers, its own packets tracked first.
 */
static void lane_progress(struct qp_shards *s, struct shard *sh, uint64_t seq)
{
	struct lane *l = sh->lane;

	if (!s->merge || seq - l->said < LANE_SAY)
		return;
	lane_flush(s, sh);
	sh->done_seq = seq;
	out_publish(sh, seq);
	l->said = seq;
}

/* What one tracker counts over all packets: the timestamps that went back. */
static void lane_time(struct lane *l, uint64_t ts_ns)
{
	if (l->seen && ts_ns < l->last_ts_ns)
		l->ts_backwards++;
	l->last_ts_ns = ts_ns;
	l->seen = true;
}

int qp_lane_push(struct qp_shards *s, unsigned lane, uint32_t vantage, uint64_t seq)
{
	struct shard *sh = &s->sh[lane];
	struct lane *l = sh->lane;
	const struct roce_pkt *pkt = &l->pkts[l->n];

	lane_time(l, pkt->ts_ns);
	if (qp_shard_of(pkt, s->n) == lane) {
		l->packets++;
		if ((pkt->flags & ROCE_F_CM) && pkt->cm_attr_id == CM_ATTR_REQ)
			l->cm_reqs++;
		l->vantage[l->n] = vantage;
		l->seq[l->n++] = seq;
		if (l->n == QP_BATCH_MAX)
			lane_flush(s, sh);
	}
	lane_progress(s, sh, seq);
	return atomic_load_explicit(&s->failed, memory_order_relaxed) ? -ENOMEM : 0;
}

void qp_lane_pass(struct qp_shards *s, unsigned lane, uint64_t seq, const uint64_t *ts_ns)
{
	struct shard *sh = &s->sh[lane];

	if (ts_ns)
		lane_time(sh->lane, *ts_ns);
	lane_progress(s, sh, seq);
}

void qp_shards_set_ts_backwards(struct qp_shards *s, uint64_t n)
{
	s->ts_backwards = n;
	s->ts_backwards_set = true;
}

void qp_lane_end(struct qp_shards *s, unsigned lane)
{
	struct shard *sh = &s->sh[lane];

	if (sh->lane->ended)
		return;
	sh->lane->ended = true;
	lane_flush(s, sh);
	sh->done_seq = WM_PACKETS;
	qp_tracker_finish(sh->t);
	if (s->merge)
		out_publish(sh, WM_ALL);
	shard_snap(sh);
}

/* ---- start, finish, results ---- */

static int shard_init(struct qp_shards *s, struct shard *sh)
{
	const struct qp_event_sink *k = s->cfg.sink;
	struct qp_tracker_cfg cfg = s->cfg;

	sh->owner = s;
	sh->rec = (struct qp_event_sink){
		.ctx = sh,
		.latency = k && k->latency ? rec_latency : NULL,
		.retransmission = k && k->retransmission ? rec_retx : NULL,
		.nak = k && k->nak ? rec_nak : NULL,
		.cnp = k && k->cnp ? rec_cnp : NULL,
		.window = k && k->window ? rec_window : NULL,
		.flow = rec_flow,
	};
	cfg.sink = &sh->rec;
	sh->t = qp_tracker_new(&cfg);
	if (s->lanes)
		sh->lane = util_line_calloc(1, sizeof(*sh->lane));
	else
		sh->in = calloc(IN_DEPTH, sizeof(*sh->in));
	sh->out = s->merge ? calloc(OUT_DEPTH, sizeof(*sh->out)) : NULL; /* no sink, no merge */
	return sh->t && (sh->in || sh->lane) && (sh->out || !s->merge) ? 0 : -ENOMEM;
}

/* The threads, with every signal blocked: the caller's thread keeps taking them. */
static int start_threads(struct qp_shards *s)
{
	sigset_t all, old;
	int rc = 0;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	for (unsigned j = 0; j < s->n && !rc && !s->lanes; j++) {
		rc = -pthread_create(&s->sh[j].thread, NULL, shard_main, &s->sh[j]);
		s->sh[j].started = !rc;
	}
	if (!rc && s->merge) {
		rc = -pthread_create(&s->merger, NULL, merge_main, s);
		s->merger_started = !rc;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return rc;
}

static struct qp_shards *shards_new(const struct qp_tracker_cfg *cfg, unsigned n, bool lanes)
{
	struct qp_shards *s;
	int rc = 0;

	if (n < 1 || n > QP_SHARDS_MAX) {
		errno = EINVAL;
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->n = n;
	s->cfg = *cfg;
	s->lanes = lanes;
	if (n == 1 && !lanes) {
		s->one = qp_tracker_new(cfg);
		if (!s->one) {
			free(s);
			return NULL;
		}
		return s;
	}
	s->merge = cfg->sink != NULL;
	s->sh = util_line_calloc(n, sizeof(*s->sh));
	if (!s->sh)
		rc = -ENOMEM;
	for (unsigned j = 0; j < n && !rc; j++)
		rc = shard_init(s, &s->sh[j]);
	if (!rc)
		rc = start_threads(s);
	if (rc) {
		qp_shards_free(s);
		errno = -rc;
		return NULL;
	}
	return s;
}

struct qp_shards *qp_shards_new(const struct qp_tracker_cfg *cfg, unsigned n)
{
	return shards_new(cfg, n, false);
}

struct qp_shards *qp_shards_new_lanes(const struct qp_tracker_cfg *cfg, unsigned n)
{
	return shards_new(cfg, n, true);
}

/* No sink: flow ids in the order of the flows' first packets, from each shard's record. */
static void number_flows(struct qp_shards *s)
{
	for (;;) {
		struct shard *best = NULL;

		for (unsigned j = 0; j < s->n; j++) {
			struct shard *sh = &s->sh[j];

			if (sh->map_n < sh->born_n && (!best || sh->born[sh->map_n] < best->born[best->map_n]))
				best = sh;
		}
		if (!best)
			return;
		if (!global_id(s, best, best->map_n + 1))
			return; /* out of memory: said by the failed flag */
	}
}

int qp_shards_finish(struct qp_shards *s)
{
	if (s->finished)
		return 0;
	s->finished = true;
	if (s->one) {
		one_flush(s);
		qp_tracker_finish(s->one);
		return s->one_rc;
	}
	if (s->lanes) {
		/* Each lane's thread has ended it; one never fed (or no more fed) ends here. */
		for (unsigned j = 0; s->sh && j < s->n; j++)
			if (s->sh[j].lane && s->sh[j].t && (!s->merge || s->merger_started))
				qp_lane_end(s, j);
		for (unsigned j = 0; s->sh && j < s->n && s->sh[j].lane; j++) {
			s->seq += s->sh[j].lane->packets;
			s->cm_reqs += s->sh[j].lane->cm_reqs;
		}
		if (s->sh && s->sh[0].lane && !s->ts_backwards_set)
			s->ts_backwards = s->sh[0].lane->ts_backwards;
	} else if (s->sh[0].started) { /* all started, or none (qp_shards_new failed) */
		flush_all(s, true);
	}
	for (unsigned j = 0; j < s->n; j++)
		if (s->sh[j].started)
			pthread_join(s->sh[j].thread, NULL);
	if (s->merger_started)
		pthread_join(s->merger, NULL);
	if (!s->merge)
		number_flows(s);
	return atomic_load(&s->failed) ? -ENOMEM : 0;
}

/*
 * A responder's connections are in several shards (keyed by host pair): each shard's
 * snapshot joined only its own READs, so every shard's are joined here, as one tracker would.
 */
static int join_read_items(struct qp_shards *s)
{
	size_t n = 0, k = 0;
	struct read_item *it;
	int rc;

	for (unsigned j = 0; j < s->n; j++)
		n += qp_tracker_n_read_msgs(s->sh[j].t);
	it = malloc((n ? n : 1) * sizeof(*it));
	if (!it)
		return -ENOMEM;
	for (unsigned j = 0; j < s->n; j++) {
		size_t from = k, m = qp_tracker_read_items(s->sh[j].t, &it[from]);

		for (size_t i = from; i < from + m; i++) {
			uint64_t id = global_id(s, &s->sh[j], it[i].m.flow_id);

			if (id && id <= s->n_ids) {
				it[k] = it[i];
				it[k++].st = &s->snap[id - 1];
			}
		}
	}
	n = k;
	rc = read_queue_fill(it, n);
	free(it);
	return rc;
}

long qp_shards_snapshot(struct qp_shards *s, const struct flow_stats **out)
{
	uint64_t n_ids = s->n_ids;
	bool taken[QP_SHARDS_MAX];

	if (s->one)
		return qp_tracker_snapshot(s->one, out);
	if (!s->finished)
		return -EINVAL;
	if (track_mem_ensure_big((void **)&s->snap, &s->snap_cap, sizeof(*s->snap), n_ids ? n_ids : 1))
		return -ENOMEM;
	for (unsigned j = 0; j < s->n; j++)
		taken[j] = s->sh[j].fin_snap || s->sh[j].fin_n < 0;
	/* The copies the shards took as they ended first, freed before the others are taken. */
	for (unsigned k = 0; k < 2 * s->n; k++) {
		struct shard *sh = &s->sh[k % s->n];
		const struct flow_stats *fl = sh->fin_snap;
		long m;

		if (taken[k % s->n] != (k < s->n))
			continue;
		m = fl || sh->fin_n < 0 ? sh->fin_n : qp_tracker_snapshot(sh->t, &fl);
		if (m < 0)
			return m;
		for (long i = 0; i < m; i++) {
			uint64_t id = global_id(s, sh, fl[i].id);

			if (!id || id > n_ids)
				return -ENOMEM; /* the merge could not number it */
			s->snap[id - 1] = fl[i];
			s->snap[id - 1].id = id;
			s->snap[id - 1].peer_id = global_id(s, sh, fl[i].peer_id);
		}
		qp_tracker_snapshot_release(sh->t); /* copied */
		sh->fin_snap = NULL;
		sh->fin_n = 0;
	}
	if (join_read_items(s))
		s->tot.alloc_failures++;
	*out = s->snap;
	return (long)n_ids;
}

const struct qp_tracker_totals *qp_shards_totals(struct qp_shards *s)
{
	struct qp_tracker_totals *t = &s->tot;
	bool any = false;

	if (s->one)
		return qp_tracker_totals(s->one);
	memset(t, 0, sizeof(*t));
	for (unsigned j = 0; j < s->n; j++) {
		const struct qp_tracker_totals *x = qp_tracker_totals(s->sh[j].t);

		t->packets += x->packets;
		t->bytes += x->bytes;
		t->flows += x->flows;
		t->paired_flows += x->paired_flows;
		t->cm_pairings += x->cm_pairings;
		t->retransmitted_packets += x->retransmitted_packets;
		t->naks += x->naks;
		t->rnr_naks += x->rnr_naks;
		t->timeouts += x->timeouts;
		t->cnps += x->cnps;
		t->cnps_unattributed += x->cnps_unattributed;
		t->ecn_ce += x->ecn_ce;
		t->duplicates += x->duplicates;
		t->alloc_failures += x->alloc_failures;
		t->psn_slots_visited += x->psn_slots_visited;
		if (!x->packets)
			continue;
		if (!any || x->first_ns < t->first_ns)
			t->first_ns = x->first_ns;
		if (x->last_ns > t->last_ns)
			t->last_ns = x->last_ns;
		any = true;
	}
	t->ts_backwards = s->ts_backwards;
	return t;
}

uint64_t qp_shards_packets(const struct qp_shards *s)
{
	uint64_t n = 0;

	if (!s->lanes || s->finished)
		return s->seq;
	for (unsigned j = 0; j < s->n; j++)
		n += s->sh[j].lane->packets;
	return n;
}

uint64_t qp_shards_cm_reqs(const struct qp_shards *s)
{
	return s->cm_reqs;
}

double qp_shards_merge_cpu_s(const struct qp_shards *s)
{
	return s->merge_cpu_s;
}

unsigned qp_shards_count(const struct qp_shards *s)
{
	return s->n;
}

void qp_shards_free(struct qp_shards *s)
{
	if (!s)
		return;
	qp_shards_finish(s);
	qp_tracker_free(s->one);
	for (unsigned j = 0; s->sh && j < s->n; j++) {
		qp_tracker_free(s->sh[j].t);
		free(s->sh[j].in);
		free(s->sh[j].out);
		free(s->sh[j].map);
		free(s->sh[j].born);
		free(s->sh[j].lane);
	}
	free(s->sh);
	free(s->snap);
	free(s);
}
