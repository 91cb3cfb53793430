/*
 * qp_track_int.h: the tracker's private state, shared by its parts (qp_track.c, the request/ACK
 * state machine; flow_table.c, the two hash tables; flow_window.c, the time windows;
 * psn_ring.c, the outstanding-PSN ring; qp_pairing.c, pairing the two directions of a QP;
 * sample_defer.c, the samples a batch keeps for its end).
 * Not for consumers: they read struct flow_stats.
 */
#ifndef AGENTXDP_QP_TRACK_INT_H
#define AGENTXDP_QP_TRACK_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "lib/track/latency_set.h"
#include "lib/track/qp_track.h"
#include "lib/track/read_queue.h"
#include "lib/track/track_mem.h"

enum slot_flags {
	SLOT_VALID = 1u << 0,
	SLOT_ACKED = 1u << 1,
	SLOT_READ = 1u << 2,
	SLOT_ATOMIC = 1u << 3,
	SLOT_MSG_LAST = 1u << 4,	/* last (or only) packet of a message */
	SLOT_NAMED = 1u << 5,		/* an ACK packet named this PSN already */
	SLOT_READ_SPAN = 1u << 6,	/* a PSN a READ request consumed for one of its responses */
	SLOT_LOST = 1u << 7,		/* dropped from the outstanding set: a ring's length or more
					 * from where an ACK or READ lookup expected it */
};

/* The outstanding sets kept beside the ring (bitmaps by slot index), see psn_ring.c. */
enum psn_set {
	PSN_SET_OUTSTANDING = 0,	/* VALID, not ACKED or LOST */
	PSN_SET_NEEDS_RESPONSE = 1,	/* outstanding READ, READ span PSN or atomic */
	PSN_SETS = 2,
};

/*
 * One transmitted request PSN, 16 bytes: four to a line, since a new PSN's slot and an ACK's
 * are each a cache miss on a big trace. What only resends, multi-packet messages and READs
 * need is in struct psn_slot_ext, a second array after the ring (psn_slot_ext()).
 */
struct psn_slot {
	uint64_t first_tx_ns;
	uint32_t psn;
	uint8_t flags;			/* enum slot_flags */
	uint8_t tx_count;		/* last_tx_ns is first_tx_ns while this is 1 */
	uint8_t opcode;
	uint8_t ext_u;			/* the ext's union is set; else it is first_tx_ns */
};

struct psn_slot_ext {
	uint64_t last_tx_ns;		/* read only when tx_count > 1 */
	union {
		uint64_t msg_first_ns;	/* MSG_LAST: first transmission of the message's first packet */
		uint64_t read_len_bytes; /* SLOT_READ: RETH DMA length (a READ is its own message) */
	};
};

/* Counters a flow carried for its unknown peer while unpaired; moved at pairing. */
struct attrib_pending {
	uint64_t naks_psn_seq, naks_other, rnr_naks, rnr_wait_ns, cnps;
};

#define WIN_SAMPLES_CAP 1024

/*
 * One direction of a QP. Laid out by use, on 64-byte lines (the struct is aligned to them):
 * line 0 is what a lookup and a request's PSN bookkeeping read, line 1 what every packet
 * writes, line 2 the outstanding sets and the current window's counts, line 3 the rest of
 * the window and its samples; the READ and NAK state, the pairing and the window history
 * after, then the statistics (whose hot counters take their first four lines).
 */
struct qp_flow {
	/* line 0: the key, the peer, the requester's PSNs */
	uint8_t src_ip[16], dst_ip[16];
	uint32_t dst_qpn;
	uint32_t vantage;		/* key part (0 when vantages are merged) */
	uint32_t peer;			/* paired flow, index+1, 0 if none */
	uint32_t snd_una, snd_nxt;	/* oldest unacknowledged, next new PSN */
	uint32_t seen_lo;		/* PSNs from here to snd_una were seen (acked ones may be forgotten) */
	uint32_t episode_next_psn;
	uint32_t mtu_bytes;		/* path MTU, learnt from FIRST/MIDDLE payloads; 0 unknown */

	/* line 1: written by every packet */
	uint64_t last_ts_ns;
	uint64_t last_activity_ns;	/* last request sent or response received */
	uint64_t cur_msg_first_ns;
	struct psn_slot *ring;
	struct latency_set *lat;		/* QP_SAMPLE_KINDS sets, from the flow's first sample */
	uint32_t ring_mask;		/* ring size - 1; 0 means no ring */
	/* the flow's previous packet, to tell a mirror's copy from a real resend */
	uint32_t prev_psn, prev_len;
	uint8_t prev_opcode, prev_syndrome, have_prev;
	uint8_t have_req, last_was_read, in_episode, nak_pending;
	uint8_t read_gap_pending;	/* every new request reads it: here, not with the READ state */
	uint8_t has_requests, has_responses;
	uint8_t ttl;			/* IP TTL / hop limit of its last request or response */
	uint8_t have_win;

	/* lines 2 and 3: the outstanding sets, the current window */
	union {
		struct {
			uint64_t *set_bits[PSN_SETS];	/* a bit per ring slot, in one allocation with ... */
			uint64_t *set_words[PSN_SETS];	/* ... a bit per non-zero word of set_bits */
		};
		uint64_t set_small[PSN_SETS];	/* rings of up to 64 slots: a set is a word, here */
	};
	struct flow_window cur_win;
	uint32_t *win_samples;		/* ACK latency samples of the current window (reservoir) */
	uint32_t win_n;			/* samples in win_samples */
	uint8_t nak_kind;
	uint8_t read_active, read_karn_ok, episode_cause;
	uint64_t win_seen;
	size_t win_cap;			/* its size (grows to WIN_SAMPLES_CAP) */

	/* READs and NAKs */
	uint32_t nak_psn;
	uint32_t read_psn;		/* PSN of the READ being answered */
	uint32_t read_next;		/* next response PSN expected */
	uint32_t read_gap_psn;		/* first response PSN missing */
	uint32_t read_gap_resent_psn;	/* re-issued for a gap, no progress since (read_gap_resent) */
	uint8_t read_gap_resent;
	uint8_t datagram;
	uint8_t have_start_psn;
	uint64_t read_msg_first_ns;	/* first transmission of the READ being answered */
	uint64_t nak_ns;
	uint64_t read_tx_ns;
	uint64_t read_first_ns;		/* first response of the READ being answered */
	uint32_t start_psn;		/* from the CM, when known */
	uint32_t hp_next;		/* next flow (index+1) of the same host pair */
	uint32_t timeouts_unsure;	/* timeouts counted before the capture side was known */
	uint32_t clear_ack_ns;		/* round trip of this flow's last unmarked timed ACK, 0 none */
	uint32_t ce_pending_ns;		/* a marked ACK's round trip awaiting the next unmarked one */

	/* closed windows */
	struct flow_window *wins;
	size_t n_wins, cap_wins;

	struct attrib_pending pend;
	struct flow_stats st __attribute__((aligned(64)));
} __attribute__((aligned(64)));

#define FLOW_CHUNK_BITS 12
#define FLOW_CHUNK (1u << FLOW_CHUNK_BITS)

struct cm_req {
	uint8_t src_ip[16], dst_ip[16];
	uint32_t vantage;
	uint32_t comm_id;
	uint32_t qpn;
	uint32_t start_psn;
	uint8_t used;
};
#define CM_REQS 256

/* A latency sample whose set is written at the end of its batch (sample_defer.c). */
struct pending_sample {
	struct latency_set *set;
	uint64_t ns;
};
/* A window sample's store into its flow's win_samples[idx], likewise. */
struct pending_win_sample {
	struct qp_flow *f;
	uint32_t idx, ns;
};
#define PENDING_SAMPLES 256

struct qp_tracker {
	struct qp_tracker_cfg cfg;
	struct qp_tracker_totals tot;

	struct qp_flow **chunks;	/* flows, by index, in chunks so pointers stay put */
	uint32_t n_chunks;
	size_t cap_chunks;
	uint32_t n_flows;

	uint64_t *flow_slots;		/* open addressing: hash tag << 32 | flow index+1, 0 empty */
	uint32_t flow_slots_mask;
	uint32_t *hp_slots;		/* host pair -> first flow index+1 */
	uint32_t hp_slots_mask;
	uint32_t n_hp;
	struct qp_flow *last_flow;	/* the previous lookup's flow (flows never move) */

	uint32_t *id_to_index;		/* flow id - 1 -> index */
	uint64_t n_ids;
	size_t cap_ids;

	struct cm_req cm_reqs[CM_REQS];
	uint32_t cm_next;
	uint32_t n_vantages;		/* highest vantage seen + 1 */

	struct flow_stats *snap;
	size_t snap_cap;

	uint64_t last_ts_ns;
	uint32_t *tmp;			/* scratch for window percentiles */
	struct latency_set no_samples[QP_SAMPLE_KINDS]; /* what a flow without samples reads */
	struct track_mem mem;		/* rings, sets and sample arrays of every flow */

	struct read_msg *read_msgs;	/* READs timed to first and last response (read_queue.h) */
	size_t n_read_msgs, cap_read_msgs;

	/* Inside qp_tracker_add_batch: latency samples kept for the end of the batch. */
	bool defer_samples;
	uint32_t n_pending, n_pending_win;
	struct pending_sample pending[PENDING_SAMPLES];
	struct pending_win_sample pending_win[PENDING_SAMPLES];
};

static inline struct qp_flow *flow_at(const struct qp_tracker *t, uint32_t idx)
{
	return &t->chunks[idx >> FLOW_CHUNK_BITS][idx & (FLOW_CHUNK - 1)];
}

static inline struct qp_flow *peer_of(const struct qp_tracker *t, const struct qp_flow *f)
{
	return f->peer ? flow_at(t, f->peer - 1) : NULL;
}

static inline uint64_t mix64(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ull;
	h ^= h >> 33;
	return h;
}

/* flow_table.c: flows by (src, dst, dst QPN, vantage) and by host pair */
uint32_t flow_table_index(const struct qp_tracker *t, const struct qp_flow *f);
/* Slot in hp_slots for host pair (src, dst, vantage): either holding its head or empty. */
uint32_t *flow_table_hp_slot(struct qp_tracker *t, const uint8_t *src, const uint8_t *dst, uint32_t vantage);
/* Find or create flow; NULL on ENOMEM. */
struct qp_flow *flow_table_get(struct qp_tracker *t, const uint8_t *src, const uint8_t *dst, uint32_t qpn,
			       uint32_t vantage, int create);
struct qp_flow *flow_table_get_hashed(struct qp_tracker *t, uint64_t h, const uint8_t *src, const uint8_t *dst,
				      uint32_t qpn, uint32_t vantage, int create);
uint64_t flow_table_hash(const uint8_t *src, const uint8_t *dst, uint32_t qpn, uint32_t vantage);
void flow_table_prefetch_slot(const struct qp_tracker *t, uint64_t h);
struct qp_flow *flow_table_prefetch_flow(const struct qp_tracker *t, uint64_t h);
int flow_table_assign_id(struct qp_tracker *t, struct qp_flow *f, uint32_t idx);

/* sample_defer.c: inside a batch (t->defer_samples) samples are kept for its end */
/* Add a sample to set s, now or at the end of the batch (the same order either way). */
void qp_sample_add(struct qp_tracker *t, struct latency_set *s, uint64_t ns);
/* f->win_samples[idx] = v, likewise. */
void qp_win_sample_put(struct qp_tracker *t, struct qp_flow *f, uint32_t idx, uint32_t v);
/* The kept samples into their sets and windows, in order: before anything reads them. */
void qp_pending_flush(struct qp_tracker *t);

/* flow_window.c: per-flow time windows */
/* Bytes of a flow's array of cap closed windows, as track_mem was asked for them. */
static inline size_t flow_wins_bytes(size_t cap)
{
	return cap * sizeof(struct flow_window);
}
void flow_window_close(struct qp_tracker *t, struct qp_flow *f);
struct flow_window *flow_window_at(struct qp_tracker *t, struct qp_flow *f, uint64_t ts);
void flow_window_sample(struct qp_tracker *t, struct qp_flow *f, uint64_t ts, uint64_t ns);

/* The ring's second array: slot i's ext is at ring + ring size + i (one allocation). */
static inline struct psn_slot_ext *psn_slot_ext(const struct qp_flow *f, const struct psn_slot *s)
{
	return (struct psn_slot_ext *)(f->ring + f->ring_mask + 1) + (s - f->ring);
}

static inline uint64_t psn_slot_last_tx_ns(const struct qp_flow *f, const struct psn_slot *s)
{
	return s->tx_count > 1 ? psn_slot_ext(f, s)->last_tx_ns : s->first_tx_ns;
}

/* msg_first_ns or read_len_bytes, whichever the slot's flags say its union holds. */
static inline uint64_t psn_slot_u(const struct qp_flow *f, const struct psn_slot *s)
{
	return s->ext_u ? psn_slot_ext(f, s)->msg_first_ns : s->first_tx_ns;
}

static inline void psn_slot_set_u(const struct qp_flow *f, struct psn_slot *s, uint64_t v)
{
	s->ext_u = v != s->first_tx_ns;
	if (s->ext_u)
		psn_slot_ext(f, s)->msg_first_ns = v;
}

/* psn_ring.c: the requester's outstanding PSNs; rings of up to PSN_RING_SMALL slots here */
#define PSN_RING_SMALL 64

static inline bool psn_ring_small(const struct qp_flow *f)
{
	return f->ring_mask < PSN_RING_SMALL;
}

static inline struct psn_slot *psn_ring_find(struct qp_flow *f, uint32_t psn)
{
	struct psn_slot *s;

	if (!f->ring_mask)
		return NULL;
	s = &f->ring[psn & f->ring_mask];
	return (s->flags & SLOT_VALID) && s->psn == psn ? s : NULL;
}

struct psn_slot *psn_ring_slot_new(struct qp_tracker *t, struct qp_flow *f, uint32_t psn);
void psn_ring_sync_big(struct qp_flow *f, uint32_t i, bool out, bool need);

/* After changing a slot's flags: update the outstanding sets. */
static inline void psn_ring_sync(struct qp_flow *f, const struct psn_slot *s)
{
	uint32_t i = (uint32_t)(s - f->ring);
	bool out = (s->flags & (SLOT_VALID | SLOT_ACKED | SLOT_LOST)) == SLOT_VALID;
	bool need = out && (s->flags & (SLOT_READ | SLOT_READ_SPAN | SLOT_ATOMIC));
	uint64_t m = 1ull << (i & 63);

	if (!psn_ring_small(f)) {
		psn_ring_sync_big(f, i, out, need);
		return;
	}
	f->set_small[PSN_SET_OUTSTANDING] = (f->set_small[PSN_SET_OUTSTANDING] & ~m) | (-(uint64_t)out & m);
	f->set_small[PSN_SET_NEEDS_RESPONSE] = (f->set_small[PSN_SET_NEEDS_RESPONSE] & ~m) | (-(uint64_t)need & m);
}

uint32_t psn_ring_next_big(const struct qp_flow *f, enum psn_set set, uint32_t from, uint32_t n);

/*
 * The first slot of `set` among the n ring slots from index `from` on (circularly, n <= ring
 * size), as a distance from `from`; n when there is none. Cost: O(ring size / 4096) words.
 */
static inline uint32_t psn_ring_next(const struct qp_flow *f, enum psn_set set, uint32_t from, uint32_t n)
{
	uint32_t cap = f->ring_mask + 1;
	uint64_t x;

	if (!psn_ring_small(f))
		return psn_ring_next_big(f, set, from, n);
	if (!f->ring_mask || !n)
		return n;
	/* the set's word turned so that bit 0 is slot `from`, cut to n slots */
	x = f->set_small[set];
	if (from)
		x = (x >> from) | (x << (cap - from));
	if (n < 64)
		x &= (1ull << n) - 1;
	return x ? (uint32_t)__builtin_ctzll(x) : n;
}

void psn_ring_free(struct qp_tracker *t, struct qp_flow *f);

/* qp_pairing.c: the two directions of a QP */
void qp_pair_flows(struct qp_tracker *t, struct qp_flow *a, struct qp_flow *b, int by_cm);
struct qp_flow *qp_pair_by_psn(struct qp_tracker *t, struct qp_flow *b, uint32_t psn);

/* The READ records joined into the tracker's own snapshot (qp_track_read.c). 0 or -ENOMEM. */
int qp_tracker_read_items_fill(struct qp_tracker *t);

#endif
