/* qp_track.c: per-queue-pair reconstruction from decoded RoCE packets (no I/O; see qp_track.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/decode/psn.h"
#include "lib/track/qp_track.h"
#include "lib/util/sort_u32.h"

/* ---- latency sample sets: exact up to a cap, then a log-linear histogram ---- */

/*
 * Histogram buckets: values below 64 ns exact; above, 64 sub-buckets per power of two, so a
 * bucket is at most 1/64 of its value wide and its midpoint is within 0.8% of any member.
 */
#define HIST_SUB_BITS 6
#define HIST_SUB (1u << HIST_SUB_BITS)
#define HIST_BUCKETS (HIST_SUB + (32 - HIST_SUB_BITS) * HIST_SUB)

static uint32_t hist_bucket(uint32_t v)
{
	uint32_t e;

	if (v < HIST_SUB)
		return v;
	e = 31 - (uint32_t)__builtin_clz(v); /* >= HIST_SUB_BITS */
	return HIST_SUB + (e - HIST_SUB_BITS) * HIST_SUB + ((v >> (e - HIST_SUB_BITS)) & (HIST_SUB - 1));
}

/* Representative value of a bucket: its midpoint. */
static uint32_t hist_value(uint32_t b)
{
	uint32_t e, sub;
	uint64_t lo, width;

	if (b < HIST_SUB)
		return b;
	e = (b - HIST_SUB) / HIST_SUB + HIST_SUB_BITS;
	sub = (b - HIST_SUB) % HIST_SUB;
	width = 1ull << (e - HIST_SUB_BITS);
	lo = (1ull << e) + sub * width;
	lo += width / 2;
	return lo > UINT32_MAX ? UINT32_MAX : (uint32_t)lo;
}

struct lat_set {
	uint32_t *v;		/* exact samples, ns (saturated at 2^32-1) */
	uint32_t n, cap;
	uint32_t *hist;		/* HIST_BUCKETS counts once the exact cap was passed */
	uint64_t count;
	uint64_t max_ns;
	uint64_t min_ns;
	int sorted;
};

static int lat_add(struct lat_set *s, uint64_t ns, uint32_t exact_cap)
{
	uint32_t v = ns > UINT32_MAX ? UINT32_MAX : (uint32_t)ns;

	if (s->count == 0 || ns < s->min_ns)
		s->min_ns = ns;
	if (ns > s->max_ns)
		s->max_ns = ns;
	s->count++;
	if (s->hist) {
		s->hist[hist_bucket(v)]++;
		return 0;
	}
	if (s->n == s->cap) {
		if (s->cap < exact_cap) {
			uint32_t ncap = s->cap ? s->cap * 2 : 16;
			uint32_t *nv;

			if (ncap > exact_cap)
				ncap = exact_cap;
			nv = realloc(s->v, (size_t)ncap * sizeof(*nv));
			if (!nv)
				goto to_hist;
			s->v = nv;
			s->cap = ncap;
		} else {
to_hist:
			s->hist = calloc(HIST_BUCKETS, sizeof(*s->hist));
			if (!s->hist) {
				s->count--;
				return -ENOMEM;
			}
			for (uint32_t i = 0; i < s->n; i++)
				s->hist[hist_bucket(s->v[i])]++;
			s->hist[hist_bucket(v)]++;
			free(s->v);
			s->v = NULL;
			s->n = s->cap = 0;
			return 0;
		}
	}
	s->v[s->n++] = v;
	s->sorted = 0;
	return 0;
}

static size_t nearest_rank(size_t n, uint32_t q10k)
{
	size_t rank = ((uint64_t)q10k * n + 9999) / 10000;
	return rank < 1 ? 1 : rank > n ? n : rank;
}

uint32_t percentile_nearest_rank_u32(const uint32_t *sorted, size_t n, uint32_t q10k)
{
	if (n == 0)
		return 0;
	return sorted[nearest_rank(n, q10k) - 1];
}

static uint64_t hist_percentile(const uint32_t *hist, uint64_t count, uint32_t q10k)
{
	uint64_t rank = ((__uint128_t)q10k * count + 9999) / 10000, cum = 0;

	if (rank < 1)
		rank = 1;
	for (uint32_t b = 0; b < HIST_BUCKETS; b++) {
		cum += hist[b];
		if (cum >= rank)
			return hist_value(b);
	}
	return 0;
}

/* Percentile in ns, clamped to the exact min/max (histogram midpoints may overshoot). */
static uint64_t lat_percentile(struct lat_set *s, uint32_t q10k)
{
	uint64_t v;

	if (s->count == 0)
		return 0;
	if (!s->hist) {
		if (!s->sorted) {
			sort_u32(s->v, s->n);
			s->sorted = 1;
		}
		v = percentile_nearest_rank_u32(s->v, s->n, q10k);
	} else {
		v = hist_percentile(s->hist, s->count, q10k);
	}
	if (v > s->max_ns)
		v = s->max_ns;
	if (v < s->min_ns)
		v = s->min_ns;
	return v;
}

/* Median absolute deviation (ns), nearest-rank median of |x - median|. */
static uint64_t lat_mad(struct lat_set *s)
{
	uint64_t med = lat_percentile(s, 5000), rank, cum = 0, result = 0;

	if (s->count == 0)
		return 0;
	if (!s->hist) {
		uint32_t *dev = malloc((size_t)s->n * sizeof(*dev));

		if (!dev)
			return 0;
		for (uint32_t i = 0; i < s->n; i++)
			dev[i] = s->v[i] > med ? (uint32_t)(s->v[i] - med) : (uint32_t)(med - s->v[i]);
		sort_u32(dev, s->n);
		result = percentile_nearest_rank_u32(dev, s->n, 5000);
		free(dev);
		return result;
	}
	/* Histogram: walk buckets outward from the median by distance. */
	{
		uint32_t mb = hist_bucket(med > UINT32_MAX ? UINT32_MAX : (uint32_t)med);
		int lo = (int)mb, hi = (int)mb + 1;

		rank = (s->count * 5000 + 9999) / 10000;
		while (lo >= 0 || hi < (int)HIST_BUCKETS) {
			uint64_t dlo = lo >= 0 ? med - (hist_value((uint32_t)lo) < med ? hist_value((uint32_t)lo) : med) : UINT64_MAX;
			uint64_t dhi = hi < (int)HIST_BUCKETS ? (hist_value((uint32_t)hi) > med ? hist_value((uint32_t)hi) - med : 0) : UINT64_MAX;

			if (dlo <= dhi) {
				cum += s->hist[lo--];
				result = dlo;
			} else {
				cum += s->hist[hi++];
				result = dhi;
			}
			if (cum >= rank)
				return result;
		}
	}
	return result;
}

static void lat_free(struct lat_set *s)
{
	free(s->v);
	free(s->hist);
	memset(s, 0, sizeof(*s));
}

/* ---- per-flow state ---- */

enum slot_flags {
	SLOT_VALID = 1u << 0,
	SLOT_ACKED = 1u << 1,
	SLOT_READ = 1u << 2,
	SLOT_ATOMIC = 1u << 3,
	SLOT_MSG_LAST = 1u << 4,	/* last (or only) packet of a message */
	SLOT_NAMED = 1u << 5,		/* an ACK packet named this PSN already */
	SLOT_READ_SPAN = 1u << 6,	/* a PSN a READ request consumed for one of its responses */
};

/* One transmitted request PSN. */
struct psn_slot {
	uint64_t first_tx_ns;
	uint64_t last_tx_ns;
	union {
		uint64_t msg_first_ns;	/* MSG_LAST: first transmission of the message's first packet */
		uint64_t read_len_bytes; /* SLOT_READ: RETH DMA length (a READ is its own message) */
	};
	uint32_t psn;
	uint16_t flags;
	uint8_t tx_count;
	uint8_t opcode;
};

/* Counters a flow carried for its unknown peer while unpaired; moved at pairing. */
struct attrib_pending {
	uint64_t naks_psn_seq, naks_other, rnr_naks, rnr_wait_ns, cnps;
};

#define WIN_SAMPLES_CAP 1024

struct qp_flow {
	uint8_t src_ip[16], dst_ip[16];
	uint32_t dst_qpn;
	uint32_t vantage;		/* key part (0 when vantages are merged) */
	uint32_t hp_next;		/* next flow (index+1) of the same host pair */
	uint32_t peer;			/* paired flow, index+1, 0 if none */

	struct flow_stats st;
	struct attrib_pending pend;

	uint8_t has_requests, has_responses, datagram;
	uint8_t ttl;			/* IP TTL / hop limit of its last request or response */
	uint32_t timeouts_unsure;	/* timeouts counted before the capture side was known */

	/* requester side: this flow's own PSN space */
	uint8_t have_req, last_was_read, in_episode, episode_cause;
	uint8_t nak_pending, nak_kind;
	uint8_t read_active, read_karn_ok, read_gap_pending;
	uint32_t snd_una, snd_nxt;	/* oldest unacknowledged, next new PSN */
	uint32_t seen_lo;		/* PSNs from here to snd_una were seen (acked ones may be forgotten) */
	uint32_t episode_next_psn;
	uint32_t nak_psn;
	uint32_t read_psn;		/* PSN of the READ being answered */
	uint32_t read_next;		/* next response PSN expected */
	uint32_t read_gap_psn;		/* first response PSN missing */
	uint32_t read_gap_resent_psn;	/* re-issued for a gap, no progress since (read_gap_resent) */
	uint8_t read_gap_resent;
	uint64_t read_msg_first_ns;	/* first transmission of the READ being answered */
	uint32_t start_psn;		/* from the CM, when known */
	uint32_t mtu_bytes;		/* path MTU, learnt from FIRST/MIDDLE payloads; 0 unknown */
	uint8_t have_start_psn;
	uint64_t nak_ns;
	uint64_t last_activity_ns;	/* last request sent or response received */
	uint64_t cur_msg_first_ns;
	uint64_t read_tx_ns;
	struct psn_slot *ring;
	uint32_t ring_mask;		/* ring size - 1; 0 means no ring */

	/* responder side: last response carried, for mirror-duplicate detection */

	uint64_t last_ts_ns;
	/* the flow's previous packet, to tell a mirror's copy from a real resend */
	uint32_t prev_psn, prev_len;
	uint8_t prev_opcode, prev_syndrome, have_prev;

	struct lat_set *lat;		/* QP_SAMPLE_KINDS sets, from the flow's first sample */

	/* windows */
	struct flow_window cur_win;
	uint8_t have_win;
	uint32_t *win_samples;		/* ACK latency samples of the current window (reservoir) */
	uint32_t win_n, win_cap;	/* samples in win_samples, its size (grows to WIN_SAMPLES_CAP) */
	uint64_t win_seen;
	struct flow_window *wins;
	size_t n_wins, cap_wins;
};

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

struct qp_tracker {
	struct qp_tracker_cfg cfg;
	struct qp_tracker_totals tot;

	struct qp_flow **chunks;	/* flows, by index, in chunks so pointers stay put */
	uint32_t n_chunks;
	uint32_t n_flows;

	uint32_t *flow_slots;		/* open addressing: flow index+1, 0 empty */
	uint32_t flow_slots_mask;
	uint32_t *hp_slots;		/* host pair -> first flow index+1 */
	uint32_t hp_slots_mask;
	uint32_t n_hp;

	uint32_t *id_to_index;		/* flow id - 1 -> index */
	uint64_t n_ids;
	uint64_t cap_ids;

	struct cm_req cm_reqs[CM_REQS];
	uint32_t cm_next;
	uint32_t n_vantages;		/* highest vantage seen + 1 */

	struct flow_stats *snap;
	size_t snap_n;

	uint64_t last_ts_ns;
	uint32_t *tmp;			/* scratch for window percentiles */
	struct lat_set no_samples[QP_SAMPLE_KINDS]; /* what a flow without samples reads */
};

static inline struct qp_flow *flow_at(const struct qp_tracker *t, uint32_t idx)
{
	return &t->chunks[idx >> FLOW_CHUNK_BITS][idx & (FLOW_CHUNK - 1)];
}

static inline struct qp_flow *peer_of(const struct qp_tracker *t, const struct qp_flow *f)
{
	return f->peer ? flow_at(t, f->peer - 1) : NULL;
}

static uint32_t flow_index(const struct qp_tracker *t, const struct qp_flow *f)
{
	/* Find by chunk: flows are never freed, so this only runs at pairing time. */
	for (uint32_t c = 0; c < t->n_chunks; c++) {
		const struct qp_flow *base = t->chunks[c];

		if (f >= base && f < base + FLOW_CHUNK)
			return c * FLOW_CHUNK + (uint32_t)(f - base);
	}
	return UINT32_MAX;
}

static inline uint64_t load64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
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

static uint64_t hash_pair(const uint8_t *src, const uint8_t *dst, uint32_t vantage)
{
	uint64_t h = load64(src) * 0x9e3779b97f4a7c15ull;

	h = (h ^ load64(src + 8)) * 0x9e3779b97f4a7c15ull;
	h = (h ^ load64(dst)) * 0x9e3779b97f4a7c15ull;
	h = (h ^ load64(dst + 8)) * 0x9e3779b97f4a7c15ull;
	return mix64(h ^ vantage);
}

static inline uint64_t hash_flow(const uint8_t *src, const uint8_t *dst, uint32_t qpn, uint32_t vantage)
{
	return mix64(hash_pair(src, dst, vantage) ^ ((uint64_t)qpn << 17));
}

static inline int flow_is(const struct qp_flow *f, const uint8_t *src, const uint8_t *dst, uint32_t qpn,
			  uint32_t vantage)
{
	return f->dst_qpn == qpn && f->vantage == vantage && !memcmp(f->src_ip, src, 16) &&
	       !memcmp(f->dst_ip, dst, 16);
}

static int grow_flow_slots(struct qp_tracker *t)
{
	uint32_t ncap = (t->flow_slots_mask + 1) * 2, *ns = calloc(ncap, sizeof(*ns));

	if (!ns)
		return -ENOMEM;
	for (uint32_t i = 0; i <= t->flow_slots_mask; i++) {
		uint32_t v = t->flow_slots[i], j;
		struct qp_flow *f;

		if (!v)
			continue;
		f = flow_at(t, v - 1);
		j = (uint32_t)hash_flow(f->src_ip, f->dst_ip, f->dst_qpn, f->vantage) & (ncap - 1);
		while (ns[j])
			j = (j + 1) & (ncap - 1);
		ns[j] = v;
	}
	free(t->flow_slots);
	t->flow_slots = ns;
	t->flow_slots_mask = ncap - 1;
	return 0;
}

static int grow_hp_slots(struct qp_tracker *t)
{
	uint32_t ncap = (t->hp_slots_mask + 1) * 2, *ns = calloc(ncap, sizeof(*ns));

	if (!ns)
		return -ENOMEM;
	for (uint32_t i = 0; i <= t->hp_slots_mask; i++) {
		uint32_t v = t->hp_slots[i], j;
		struct qp_flow *f;

		if (!v)
			continue;
		f = flow_at(t, v - 1);
		j = (uint32_t)hash_pair(f->src_ip, f->dst_ip, f->vantage) & (ncap - 1);
		while (ns[j])
			j = (j + 1) & (ncap - 1);
		ns[j] = v;
	}
	free(t->hp_slots);
	t->hp_slots = ns;
	t->hp_slots_mask = ncap - 1;
	return 0;
}

/* Slot in hp_slots for host pair (src, dst, vantage): either holding its head or empty. */
static uint32_t *hp_slot(struct qp_tracker *t, const uint8_t *src, const uint8_t *dst, uint32_t vantage)
{
	uint32_t j = (uint32_t)hash_pair(src, dst, vantage) & t->hp_slots_mask;

	for (;;) {
		uint32_t v = t->hp_slots[j];
		struct qp_flow *f;

		if (!v)
			return &t->hp_slots[j];
		f = flow_at(t, v - 1);
		if (f->vantage == vantage && !memcmp(f->src_ip, src, 16) && !memcmp(f->dst_ip, dst, 16))
			return &t->hp_slots[j];
		j = (j + 1) & t->hp_slots_mask;
	}
}

/* Find or create flow; NULL on ENOMEM. */
static struct qp_flow *flow_get(struct qp_tracker *t, const uint8_t *src, const uint8_t *dst, uint32_t qpn,
				uint32_t vantage, int create)
{
	uint32_t j = (uint32_t)hash_flow(src, dst, qpn, vantage) & t->flow_slots_mask, idx, *hs;
	struct qp_flow *f;

	for (;;) {
		uint32_t v = t->flow_slots[j];

		if (!v)
			break;
		f = flow_at(t, v - 1);
		if (flow_is(f, src, dst, qpn, vantage))
			return f;
		j = (j + 1) & t->flow_slots_mask;
	}
	if (!create)
		return NULL;
	idx = t->n_flows;
	if ((idx >> FLOW_CHUNK_BITS) >= t->n_chunks) {
		struct qp_flow **nc = realloc(t->chunks, (t->n_chunks + 1) * sizeof(*nc));

		if (!nc)
			return NULL;
		t->chunks = nc;
		nc[t->n_chunks] = calloc(FLOW_CHUNK, sizeof(struct qp_flow));
		if (!nc[t->n_chunks])
			return NULL;
		t->n_chunks++;
	}
	f = flow_at(t, idx);
	memset(f, 0, sizeof(*f));
	memcpy(f->src_ip, src, 16);
	memcpy(f->dst_ip, dst, 16);
	f->dst_qpn = qpn;
	f->vantage = vantage;
	memcpy(f->st.key.src_ip, src, 16);
	memcpy(f->st.key.dst_ip, dst, 16);
	f->st.key.dst_qpn = qpn;
	f->st.vantage = vantage;
	t->flow_slots[j] = idx + 1;
	t->n_flows++;

	hs = hp_slot(t, src, dst, vantage);
	if (!*hs)
		t->n_hp++;
	f->hp_next = *hs;
	*hs = idx + 1;

	if ((uint64_t)t->n_flows * 10 > (uint64_t)(t->flow_slots_mask + 1) * 7 && grow_flow_slots(t))
		return NULL;
	if ((uint64_t)t->n_hp * 10 > (uint64_t)(t->hp_slots_mask + 1) * 7 && grow_hp_slots(t))
		return NULL;
	return f;
}

/* A flow gets its id (the qp row id) with its first packet. */
static int flow_assign_id(struct qp_tracker *t, struct qp_flow *f, uint32_t idx)
{
	if (t->n_ids == t->cap_ids) {
		uint64_t ncap = t->cap_ids ? t->cap_ids * 2 : 1024;
		uint32_t *n = realloc(t->id_to_index, ncap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		t->id_to_index = n;
		t->cap_ids = ncap;
	}
	t->id_to_index[t->n_ids++] = idx;
	f->st.id = t->n_ids;
	t->tot.flows++;
	return 0;
}

/* ---- time windows ---- */

static void window_close(struct qp_tracker *t, struct qp_flow *f)
{
	struct flow_window *w = &f->cur_win;

	if (f->win_n) {
		uint32_t n = f->win_n;

		memcpy(t->tmp, f->win_samples, n * sizeof(*t->tmp));
		sort_u32(t->tmp, n);
		w->ack_latency_p50_ns = percentile_nearest_rank_u32(t->tmp, n, 5000);
		w->ack_latency_p99_ns = percentile_nearest_rank_u32(t->tmp, n, 9900);
	}
	if (f->n_wins < t->cfg.max_windows) {
		if (f->n_wins == f->cap_wins) {
			size_t ncap = f->cap_wins ? f->cap_wins * 2 : 1;
			struct flow_window *nw;

			if (ncap > t->cfg.max_windows)
				ncap = t->cfg.max_windows;
			nw = realloc(f->wins, ncap * sizeof(*nw));
			if (nw) {
				f->wins = nw;
				f->cap_wins = ncap;
			}
		}
		if (f->n_wins < f->cap_wins)
			f->wins[f->n_wins++] = *w;
	}
	if (t->cfg.sink && t->cfg.sink->window && f->st.id)
		t->cfg.sink->window(t->cfg.sink->ctx, f->st.id, w);
	f->have_win = 0;
	f->win_n = 0;
	f->win_seen = 0;
}

/* The window that holds ts (late packets land in the current window). */
static struct flow_window *window_at(struct qp_tracker *t, struct qp_flow *f, uint64_t ts)
{
	uint64_t start = ts - ts % t->cfg.window_ns;

	if (f->have_win && start > f->cur_win.start_ns)
		window_close(t, f);
	if (!f->have_win) {
		memset(&f->cur_win, 0, sizeof(f->cur_win));
		f->cur_win.start_ns = start;
		f->have_win = 1;
	}
	return &f->cur_win;
}

static void window_sample(struct qp_tracker *t, struct qp_flow *f, uint64_t ts, uint64_t ns)
{
	struct flow_window *w = window_at(t, f, ts);
	uint32_t v = ns > UINT32_MAX ? UINT32_MAX : (uint32_t)ns;

	w->ack_samples++;
	w->ack_latency_sum_ns += ns;
	if (v > w->ack_latency_max_ns)
		w->ack_latency_max_ns = v;
	if (f->win_n == f->win_cap && f->win_cap < WIN_SAMPLES_CAP) {
		/* Most flows see a few samples a window: grow to the cap, not start there. */
		uint32_t ncap = f->win_cap ? f->win_cap * 4 : 8;
		uint32_t *nv;

		if (ncap > WIN_SAMPLES_CAP)
			ncap = WIN_SAMPLES_CAP;
		nv = realloc(f->win_samples, ncap * sizeof(*nv));
		if (!nv)
			return;
		f->win_samples = nv;
		f->win_cap = ncap;
	}
	f->win_seen++;
	if (f->win_n < WIN_SAMPLES_CAP) {
		f->win_samples[f->win_n++] = v;
	} else {
		/* Reservoir sampling keeps the window's percentiles unbiased past the cap. */
		uint64_t r = mix64(f->win_seen ^ ts) % f->win_seen;

		if (r < WIN_SAMPLES_CAP)
			f->win_samples[r] = v;
	}
}

/* ---- events ---- */

static void emit_sample(struct qp_tracker *t, struct qp_flow *r, uint8_t kind, uint64_t ts, uint64_t from_ns,
			uint32_t psn)
{
	struct qp_latency_sample s;
	uint64_t ns;

	if (ts < from_ns) {
		r->st.ts_backwards++;
		return;
	}
	ns = ts - from_ns;
	if (!r->lat || r->lat == t->no_samples)
		r->lat = calloc(QP_SAMPLE_KINDS, sizeof(*r->lat)); /* flows without samples: none */
	if (r->lat)
		lat_add(&r->lat[kind], ns, t->cfg.exact_samples);
	if (kind == QP_SAMPLE_ACK)
		window_sample(t, r, ts, ns);
	if (t->cfg.sink && t->cfg.sink->latency) {
		s.flow_id = r->st.id;
		s.ts_ns = ts;
		s.latency_ns = ns;
		s.psn = psn;
		s.kind = kind;
		t->cfg.sink->latency(t->cfg.sink->ctx, &s);
	}
}

/* ---- PSN ring (requester side) ---- */

static struct psn_slot *slot_find(struct qp_flow *f, uint32_t psn)
{
	struct psn_slot *s;

	if (!f->ring_mask)
		return NULL;
	s = &f->ring[psn & f->ring_mask];
	return (s->flags & SLOT_VALID) && s->psn == psn ? s : NULL;
}

static int ring_grow(struct qp_tracker *t, struct qp_flow *f)
{
	uint32_t ocap = f->ring_mask ? f->ring_mask + 1 : 0, ncap = ocap ? ocap * 2 : 16;
	struct psn_slot *nr;

	if (ncap > t->cfg.max_outstanding)
		return -ENOSPC;
	nr = calloc(ncap, sizeof(*nr));
	if (!nr)
		return -ENOMEM;
	for (uint32_t i = 0; i < ocap; i++)
		if (f->ring[i].flags & SLOT_VALID)
			nr[f->ring[i].psn & (ncap - 1)] = f->ring[i];
	free(f->ring);
	f->ring = nr;
	f->ring_mask = ncap - 1;
	return 0;
}

/* Slot for a newly sent PSN, growing the ring while unacknowledged PSNs would be overwritten. */
static struct psn_slot *slot_new(struct qp_tracker *t, struct qp_flow *f, uint32_t psn)
{
	struct psn_slot *s;

	if (!f->ring_mask && ring_grow(t, f))
		return NULL;
	for (;;) {
		s = &f->ring[psn & f->ring_mask];
		if (!(s->flags & SLOT_VALID) || (s->flags & SLOT_ACKED) || s->psn == psn)
			break;
		if (ring_grow(t, f))
			break; /* at the cap: the oldest outstanding PSN is forgotten */
	}
	memset(s, 0, sizeof(*s));
	s->psn = psn;
	s->flags = SLOT_VALID;
	return s;
}

/* ---- opcode classes ---- */

static inline int op_is_request(uint8_t op)
{
	return op <= ROCE_OP_READ_REQUEST || op == ROCE_OP_CMP_SWAP || op == ROCE_OP_FETCH_ADD ||
	       op == ROCE_OP_SEND_LAST_INV || op == ROCE_OP_SEND_ONLY_INV;
}

static inline int op_is_response(uint8_t op)
{
	return op >= ROCE_OP_READ_RESP_FIRST && op <= ROCE_OP_ATOMIC_ACK;
}

static inline int op_starts_message(uint8_t op)
{
	return op == ROCE_OP_SEND_FIRST || op == ROCE_OP_WRITE_FIRST || op == ROCE_OP_SEND_ONLY ||
	       op == ROCE_OP_SEND_ONLY_IMM || op == ROCE_OP_WRITE_ONLY || op == ROCE_OP_WRITE_ONLY_IMM ||
	       op == ROCE_OP_READ_REQUEST || op == ROCE_OP_CMP_SWAP || op == ROCE_OP_FETCH_ADD ||
	       op == ROCE_OP_SEND_ONLY_INV;
}

static inline int op_ends_message(uint8_t op)
{
	return op == ROCE_OP_SEND_LAST || op == ROCE_OP_SEND_LAST_IMM || op == ROCE_OP_SEND_ONLY ||
	       op == ROCE_OP_SEND_ONLY_IMM || op == ROCE_OP_WRITE_LAST || op == ROCE_OP_WRITE_LAST_IMM ||
	       op == ROCE_OP_WRITE_ONLY || op == ROCE_OP_WRITE_ONLY_IMM || op == ROCE_OP_READ_REQUEST ||
	       op == ROCE_OP_CMP_SWAP || op == ROCE_OP_FETCH_ADD || op == ROCE_OP_SEND_LAST_INV ||
	       op == ROCE_OP_SEND_ONLY_INV;
}

static inline int tr_acked(uint8_t transport)
{
	return transport == ROCE_TR_RC || transport == ROCE_TR_XRC;
}

/* ---- pairing ---- */

static void pend_move(struct qp_flow *from, struct qp_flow *to)
{
	struct attrib_pending *p = &from->pend;

	from->st.naks_psn_seq -= p->naks_psn_seq;
	from->st.naks_other -= p->naks_other;
	from->st.rnr_naks -= p->rnr_naks;
	from->st.rnr_wait_ns -= p->rnr_wait_ns;
	from->st.cnps -= p->cnps;
	to->st.naks_psn_seq += p->naks_psn_seq;
	to->st.naks_other += p->naks_other;
	to->st.rnr_naks += p->rnr_naks;
	to->st.rnr_wait_ns += p->rnr_wait_ns;
	to->st.cnps += p->cnps;
	memset(p, 0, sizeof(*p));
}

static void unpair(struct qp_tracker *t, struct qp_flow *f)
{
	struct qp_flow *p = peer_of(t, f);

	if (!p)
		return;
	p->peer = 0;
	p->st.peer_id = 0;
	f->peer = 0;
	f->st.peer_id = 0;
	t->tot.paired_flows -= 2;
}

static void pair_flows(struct qp_tracker *t, struct qp_flow *a, struct qp_flow *b, int by_cm)
{
	uint32_t ia = flow_index(t, a), ib = flow_index(t, b);

	if (a->peer == ib + 1) {
		if (by_cm)
			a->st.cm_confirmed = b->st.cm_confirmed = 1;
		return;
	}
	unpair(t, a);
	unpair(t, b);
	a->peer = ib + 1;
	b->peer = ia + 1;
	a->st.peer_id = b->st.id;
	b->st.peer_id = a->st.id;
	a->st.cm_confirmed = b->st.cm_confirmed = by_cm ? 1 : 0;
	t->tot.paired_flows += 2;
	if (by_cm)
		t->tot.cm_pairings += 2;
	/* What each carried for its then-unknown peer now goes to that peer. */
	pend_move(a, b);
	pend_move(b, a);
}

/*
 * Responses on flow b (addressed to QPN b->dst_qpn at b->dst_ip) answer requests of a flow
 * b->dst_ip -> b->src_ip. Without CM or DETH, find the one whose outstanding PSN window
 * holds the response PSN; ambiguity leaves b unpaired until a later response decides.
 */
static struct qp_flow *pair_by_psn_at(struct qp_tracker *t, struct qp_flow *b, uint32_t psn, uint32_t vantage)
{
	uint32_t *hs = hp_slot(t, b->dst_ip, b->src_ip, vantage), v;
	struct qp_flow *best = NULL;
	uint32_t best_dist = UINT32_MAX;
	int ties = 0;

	for (v = *hs; v; v = flow_at(t, v - 1)->hp_next) {
		struct qp_flow *r = flow_at(t, v - 1);
		int32_t behind, ahead;
		uint32_t dist;

		if (!r->have_req || r->peer)
			continue;
		if (r->st.src_qpn && r->st.src_qpn != b->dst_qpn)
			continue;
		/* psn within [first seen - 1, snd_nxt + read slack] */
		behind = psn_diff(r->snd_nxt, psn); /* > 0 when psn is before snd_nxt */
		ahead = -behind;
		if (behind > 0) {
			if (psn_diff(psn, r->snd_una) < -1 && !slot_find(r, psn))
				continue;
			dist = (uint32_t)behind;
		} else {
			if (!r->last_was_read || ahead > 65536)
				continue;
			dist = (uint32_t)ahead;
		}
		/*
		 * Both directions of a QP usually share the UDP source port (mlx5, Linux derive it
		 * from the QPN pair): a candidate with the same port wins over a closer window.
		 */
		if (dist > (1u << 30))
			dist = 1u << 30;
		dist += (r->st.udp_sport != b->st.udp_sport) ? (1u << 31) : 0;
		if (dist < best_dist) {
			best = r;
			best_dist = dist;
			ties = 0;
		} else if (dist == best_dist) {
			ties++;
		}
	}
	if (best && !ties) {
		pair_flows(t, best, b, 0);
		return best;
	}
	return NULL;
}

/*
 * The requester flow is looked for at the response's own vantage first; a trace that holds
 * only one direction (an ingress-only capture on each host) pairs with another trace's flow.
 */
static struct qp_flow *pair_by_psn(struct qp_tracker *t, struct qp_flow *b, uint32_t psn)
{
	struct qp_flow *r = pair_by_psn_at(t, b, psn, b->vantage);

	if (r)
		return r;
	/*
	 * Requests the other way in b's own trace: its requester is there, just not decidable
	 * from this PSN (a NAK naming a PSN lost before this capture point). Another trace's
	 * flow of the same QP would mix two vantages' timelines.
	 */
	for (uint32_t v = *hp_slot(t, b->dst_ip, b->src_ip, b->vantage); v; v = flow_at(t, v - 1)->hp_next)
		if (flow_at(t, v - 1)->have_req)
			return NULL;
	for (uint32_t v = 0; !r && v < t->n_vantages; v++)
		if (v != b->vantage)
			r = pair_by_psn_at(t, b, psn, v);
	return r;
}

/* ---- requests ---- */

/* Acknowledge PSNs snd_una..psn at ts; a message whose last packet is acknowledged completes. */
static void ack_through(struct qp_tracker *t, struct qp_flow *r, uint32_t psn, uint64_t ts)
{
	int32_t d;
	uint32_t n, cap, p;

	if (!r->have_req)
		return;
	d = psn_diff(psn, r->snd_una);
	if (d < 0)
		return;
	if (psn_diff(psn, r->snd_nxt) >= 0) {
		/* Beyond what was seen sent: a READ response span, or requests the capture missed. */
		if (d > (int32_t)t->cfg.max_outstanding)
			return;
		r->snd_nxt = psn_add(psn, 1);
	}
	n = (uint32_t)d + 1;
	cap = r->ring_mask ? r->ring_mask + 1 : 0;
	p = r->snd_una;
	if (n > cap) {
		p = psn_add(r->snd_una, n - cap);
		n = cap;
	}
	for (uint32_t i = 0; i < n; i++, p = psn_add(p, 1)) {
		struct psn_slot *s = slot_find(r, p);

		if (!s || (s->flags & SLOT_ACKED))
			continue;
		s->flags |= SLOT_ACKED;
		if (s->flags & SLOT_MSG_LAST)
			emit_sample(t, r, QP_SAMPLE_COMPLETION, ts, s->msg_first_ns, p);
	}
	r->snd_una = psn_add(psn, 1);
	r->read_gap_resent = 0;
	if (r->nak_pending && psn_diff(r->nak_psn, psn) <= 0)
		r->nak_pending = 0;
}

static void read_span_fill(struct qp_tracker *t, struct qp_flow *f, uint32_t from, uint32_t to);

/* A READ at psn for len bytes takes one PSN per response packet: mark them sent. */
static void read_span_set(struct qp_tracker *t, struct qp_flow *f, uint32_t psn, uint32_t len)
{
	uint32_t n = f->mtu_bytes ? (len + f->mtu_bytes - 1) / f->mtu_bytes : 1;
	uint32_t end;

	if (n <= 1)
		return;
	if (n > t->cfg.max_outstanding)
		n = t->cfg.max_outstanding;
	end = psn_add(psn, n);
	if (psn_diff(end, f->snd_nxt) > 0)
		f->snd_nxt = end;
	read_span_fill(t, f, psn_add(psn, 1), end);
}

static void new_transmission(struct qp_tracker *t, struct qp_flow *f, const struct roce_pkt *pkt, uint8_t op,
			     uint32_t psn, struct flow_window *w)
{
	struct psn_slot *s = slot_new(t, f, psn);
	uint64_t ts = pkt->ts_ns;

	if (op_starts_message(op))
		f->cur_msg_first_ns = ts;
	if (s) {
		s->first_tx_ns = s->last_tx_ns = ts;
		s->tx_count = 1;
		s->opcode = pkt->opcode;
		if (op == ROCE_OP_READ_REQUEST) {
			s->flags |= SLOT_READ;
			s->read_len_bytes = pkt->reth_dma_len;
		} else if (op == ROCE_OP_CMP_SWAP || op == ROCE_OP_FETCH_ADD) {
			s->flags |= SLOT_ATOMIC;
		}
		if (op_ends_message(op) && op != ROCE_OP_READ_REQUEST) {
			s->flags |= SLOT_MSG_LAST;
			s->msg_first_ns = f->cur_msg_first_ns ? f->cur_msg_first_ns : ts;
		}
	}
	f->last_was_read = op == ROCE_OP_READ_REQUEST;
	f->st.first_transmissions++;
	if (op == ROCE_OP_READ_REQUEST && f->mtu_bytes)
		read_span_set(t, f, psn, pkt->reth_dma_len);
	w->goodput_bytes += pkt->payload_len;
	f->st.goodput_bytes += pkt->payload_len;
	f->last_activity_ns = ts;
}

/*
 * Where the capture point sits for requester flow r: 1 nearer the responder (its requests
 * arrive with a lower TTL than packets the other way leave with, e.g. a capture on the
 * responder's host: it does not see what the requester saw), 0 not nearer it, -1 not known
 * yet (nothing seen the other way between the two hosts in this trace).
 */
static int capture_nearer_responder(struct qp_tracker *t, const struct qp_flow *r)
{
	const struct qp_flow *b = peer_of(t, r);
	uint8_t back_ttl = b ? b->ttl : 0;

	for (uint32_t v = *hp_slot(t, r->dst_ip, r->src_ip, r->vantage); !back_ttl && v;
	     v = flow_at(t, v - 1)->hp_next)
		back_ttl = flow_at(t, v - 1)->ttl; /* same two hosts: same hop count */
	if (!r->ttl || !back_ttl)
		return -1;
	return r->ttl < back_ttl;
}

static void retransmission(struct qp_tracker *t, struct qp_flow *f, const struct roce_pkt *pkt, uint32_t psn,
			   struct psn_slot *s, struct flow_window *w)
{
	struct qp_retx_event e = { 0 };
	uint64_t ts = pkt->ts_ns;
	uint8_t cause;
	int side = 0;

	if (f->nak_pending && psn_diff(psn, f->nak_psn) >= 0) {
		cause = f->nak_kind == QP_NAK_RNR ? QP_RETX_RNR : QP_RETX_NAK;
		e.trigger_ns = f->nak_ns;
		emit_sample(t, f, QP_SAMPLE_NAK_TO_RETX, ts, f->nak_ns, psn);
		f->nak_pending = 0;
	} else if (f->read_gap_pending && psn == f->read_gap_psn) {
		cause = QP_RETX_READ_GAP;
		e.trigger_ns = f->last_activity_ns;
		f->read_gap_pending = 0; /* the next out-of-sequence response re-arms it */
		f->read_gap_resent = 1;
		f->read_gap_resent_psn = psn;
	} else if (f->in_episode && (psn == f->episode_next_psn ||
				      (psn_diff(psn, f->episode_next_psn) > 0 && psn_diff(psn, f->snd_una) <= 0))) {
		/* go-back-N continues (past PSNs an ACK covered meanwhile) */
		cause = f->episode_cause;
	} else if (psn_diff(psn, f->snd_una) <= 0 && (side = capture_nearer_responder(t, f)) == 1) {
		/*
		 * Seen from the responder's side, a restart with no NAK may be the requester's timer
		 * or its answer to a response lost after this capture point: not decidable here.
		 */
		cause = QP_RETX_UNKNOWN;
	} else if (psn_diff(psn, f->snd_una) <= 0) {
		/* Restart at the oldest unacknowledged PSN with no NAK: the requester timed out. */
		cause = QP_RETX_TIMEOUT;
		e.trigger_ns = f->last_activity_ns;
		if (f->last_activity_ns)
			emit_sample(t, f, QP_SAMPLE_TIMEOUT_GAP, ts, f->last_activity_ns, psn);
		f->st.timeouts++;
		w->timeouts++;
		f->read_gap_resent = 0;
		if (side < 0)
			f->timeouts_unsure++; /* snapshots drop it if the capture proves responder-side */
	} else {
		cause = QP_RETX_UNKNOWN;
	}
	f->in_episode = 1;
	f->episode_cause = cause;
	f->episode_next_psn = psn_add(psn, 1);
	if ((pkt->opcode & 0x1f) == ROCE_OP_READ_REQUEST && f->mtu_bytes && pkt->reth_dma_len > f->mtu_bytes)
		f->episode_next_psn = psn_add(psn, (pkt->reth_dma_len + f->mtu_bytes - 1) / f->mtu_bytes);
	f->st.retransmitted_packets++;
	w->retransmitted_packets++;
	f->last_was_read = (pkt->opcode & 0x1f) == ROCE_OP_READ_REQUEST;

	if (!s) {
		/* Never saw its first transmission: remember it so Karn's rule excludes it. */
		s = slot_new(t, f, psn);
		if (s) {
			s->tx_count = 1;
			s->opcode = pkt->opcode;
			if ((pkt->opcode & 0x1f) == ROCE_OP_READ_REQUEST)
				s->flags |= SLOT_READ;
			if (psn_diff(psn, f->snd_una) < 0)
				s->flags |= SLOT_ACKED;
		}
	}
	if (s && (pkt->opcode & 0x1f) == ROCE_OP_READ_REQUEST && (s->flags & SLOT_READ_SPAN)) {
		/* A READ re-issued for the rest of a response: answered like a READ from here. */
		s->flags = (uint16_t)((s->flags & ~(SLOT_READ_SPAN | SLOT_ACKED)) | SLOT_READ);
		s->read_len_bytes = pkt->reth_dma_len;
	}
	if (s) {
		e.first_tx_ns = s->first_tx_ns;
		e.prev_tx_ns = s->last_tx_ns;
		if (s->tx_count < UINT8_MAX)
			s->tx_count++;
		s->last_tx_ns = ts;
		e.tx_count = s->tx_count;
	}
	f->last_activity_ns = ts;
	if (t->cfg.sink && t->cfg.sink->retransmission) {
		e.flow_id = f->st.id;
		e.ts_ns = ts;
		e.psn = psn;
		e.cause = cause;
		e.opcode = pkt->opcode;
		t->cfg.sink->retransmission(t->cfg.sink->ctx, &e);
	}
}

static inline uint64_t abs_diff(uint64_t a, uint64_t b)
{
	return a > b ? a - b : b - a;
}

/* PSNs [from, to) were consumed by the READ before them (one per response packet). */
static void read_span_fill(struct qp_tracker *t, struct qp_flow *f, uint32_t from, uint32_t to)
{
	struct psn_slot *read = slot_find(f, psn_add(from, PSN_MASK));
	uint64_t tx = read ? read->first_tx_ns : 0;
	uint32_t n = (uint32_t)psn_diff(to, from);

	if (n > t->cfg.max_outstanding)
		return;
	for (uint32_t p = from; p != to; p = psn_add(p, 1)) {
		struct psn_slot *s = slot_find(f, p);

		if (s)
			continue;
		s = slot_new(t, f, p);
		if (!s)
			return;
		s->flags |= SLOT_READ_SPAN;
		s->first_tx_ns = s->last_tx_ns = tx;
		s->msg_first_ns = tx;
		s->tx_count = 1;
		s->opcode = ROCE_OPCODE(ROCE_TR_RC, ROCE_OP_READ_REQUEST);
		if (psn_diff(p, f->snd_una) < 0)
			s->flags |= SLOT_ACKED;
	}
}

static void on_request(struct qp_tracker *t, struct qp_flow *f, const struct roce_pkt *pkt, uint8_t op,
		       struct flow_window *w)
{
	uint32_t psn = pkt->psn & PSN_MASK;
	struct psn_slot *s;
	int32_t d;
	int nak_covers;

	if (!f->have_req) {
		f->have_req = 1;
		f->snd_una = f->snd_nxt = f->seen_lo = psn;
	}
	if (psn_diff(f->snd_nxt, f->seen_lo) > (1 << 22))
		f->seen_lo = psn_add(f->snd_nxt, PSN_MASK + 1 - (1 << 22)); /* stay within psn_diff's range */
	if ((op == ROCE_OP_SEND_FIRST || op == ROCE_OP_SEND_MIDDLE || op == ROCE_OP_WRITE_FIRST ||
	     op == ROCE_OP_WRITE_MIDDLE) && pkt->payload_len > f->mtu_bytes)
		f->mtu_bytes = pkt->payload_len;
	d = psn_diff(psn, f->snd_nxt);
	if (d >= 0 && f->read_gap_pending && psn == f->read_gap_psn) {
		d = -1; /* re-issued READ for the missing responses */
	}
	if (d >= 0) {
		if (d > 0 && f->last_was_read && !f->mtu_bytes)
			read_span_fill(t, f, f->snd_nxt, psn); /* the READ's own span (length unknown) */
		else if (d > 0)
			f->st.psn_gaps += (uint32_t)d;
		f->snd_nxt = psn_add(psn, 1);
		f->in_episode = 0;
		new_transmission(t, f, pkt, op, psn, w);
		return;
	}
	nak_covers = f->nak_pending && psn_diff(psn, f->nak_psn) >= 0;
	s = slot_find(f, psn);
	if (!s && psn_diff(psn, f->snd_una) < 0 && psn_diff(psn, f->seen_lo) >= 0) {
		/* Acknowledged, so this trace saw it (or the capture lost it): its slot was reused. */
		retransmission(t, f, pkt, psn, NULL, w);
		return;
	}
	if (!s) {
		/*
		 * A PSN this trace never saw: for this vantage it is a first transmission (the
		 * original was lost before it, or the capture missed it). When a NAK asked for it,
		 * it still continues that go-back-N episode.
		 */
		if (psn_diff(psn, f->seen_lo) < 0 && psn_diff(f->seen_lo, psn) <= (int32_t)t->cfg.max_outstanding) {
			/* Older than anything seen (it was lost before this capture point the first
			 * time): outstanding from now on, like the PSNs after it. */
			f->seen_lo = psn;
			if (psn_diff(psn, f->snd_una) < 0)
				f->snd_una = psn;
		}
		if (nak_covers || (f->in_episode && psn == f->episode_next_psn)) {
			f->in_episode = 1;
			if (nak_covers) {
				f->episode_cause = f->nak_kind == QP_NAK_RNR ? QP_RETX_RNR : QP_RETX_NAK;
				emit_sample(t, f, QP_SAMPLE_NAK_TO_RETX, pkt->ts_ns, f->nak_ns, psn);
				f->nak_pending = 0;
			}
			f->episode_next_psn = psn_add(psn, 1);
		} else {
			f->st.out_of_order++;
		}
		new_transmission(t, f, pkt, op, psn, w);
		return;
	}
	retransmission(t, f, pkt, psn, s, w);
}

/* ---- responses ---- */

uint64_t rnr_timer_ns(uint8_t syndrome)
{
	/* IBA table 45, microseconds x100 to keep integers. */
	static const uint32_t timer_10us[32] = {
		65536, 1,    2,    3,    4,    6,    8,    12,   16,    24,    32,
		48,    64,   96,   128,  192,  256,  384,  512,  768,   1024,  1536,
		2048,  3072, 4096, 6144, 8192, 12288, 16384, 24576, 32768, 49152,
	};
	return (uint64_t)timer_10us[syndrome & 0x1f] * 10000ull;
}

static int first_unanswered_read(struct qp_flow *r, uint32_t psn, uint32_t *out);

static void on_nak(struct qp_tracker *t, struct qp_flow *b, struct qp_flow *r, const struct roce_pkt *pkt)
{
	uint8_t syn = pkt->aeth_syndrome, kind;
	uint32_t psn = pkt->psn & PSN_MASK;
	struct qp_flow *tg = r ? r : b;
	struct flow_window *w = window_at(t, tg, pkt->ts_ns);
	struct qp_nak_event e = { 0 };

	if (AETH_TYPE(syn) == AETH_RNR_NAK) {
		kind = QP_NAK_RNR;
		e.rnr_timer_ns = rnr_timer_ns(syn);
		tg->st.rnr_naks++;
		tg->st.rnr_wait_ns += e.rnr_timer_ns;
		if (!r) {
			b->pend.rnr_naks++;
			b->pend.rnr_wait_ns += e.rnr_timer_ns;
		}
		t->tot.rnr_naks++;
	} else if ((syn & 0x1f) == NAK_PSN_SEQ_ERROR) {
		kind = QP_NAK_PSN_SEQ;
		tg->st.naks_psn_seq++;
		if (!r)
			b->pend.naks_psn_seq++;
	} else {
		kind = QP_NAK_OTHER;
		tg->st.naks_other++;
		if (!r)
			b->pend.naks_other++;
	}
	t->tot.naks++;
	b->st.naks_total++;
	w->naks++;
	if (r && kind != QP_NAK_OTHER) {
		/*
		 * Both name the PSN to resend and acknowledge everything before it, except a READ
		 * or atomic still unanswered: its responses were lost (they would have come before
		 * the NAK), so the requester resends from there.
		 */
		uint32_t resend = psn;

		first_unanswered_read(r, psn, &resend);
		ack_through(t, r, psn_add(resend, PSN_MASK), pkt->ts_ns);
		r->nak_pending = 1;
		r->nak_psn = resend;
		r->nak_ns = pkt->ts_ns;
		r->nak_kind = kind;
		r->in_episode = 0;
	}
	if (r)
		r->last_activity_ns = pkt->ts_ns;
	if (t->cfg.sink && t->cfg.sink->nak) {
		e.flow_id = r ? r->st.id : 0;
		e.responder_flow_id = b->st.id;
		e.ts_ns = pkt->ts_ns;
		e.psn = psn;
		e.msn = pkt->aeth_msn;
		e.syndrome = syn;
		e.kind = kind;
		t->cfg.sink->nak(t->cfg.sink->ctx, &e);
	}
}

/*
 * The first READ (or PSN a READ consumed) or atomic from snd_una up to psn that is still
 * unanswered: they need their own responses, so a response for a later PSN means those were
 * lost and the requester will ask again. Bounded scan.
 */
static int first_unanswered_read(struct qp_flow *r, uint32_t psn, uint32_t *out)
{
	uint32_t n = (uint32_t)psn_diff(psn, r->snd_una), p = r->snd_una;

	if (n > 4096)
		n = 4096;
	for (uint32_t i = 0; i < n; i++, p = psn_add(p, 1)) {
		struct psn_slot *s = slot_find(r, p);

		if (s && (s->flags & (SLOT_READ | SLOT_READ_SPAN | SLOT_ATOMIC)) && !(s->flags & SLOT_ACKED)) {
			*out = p;
			return 1;
		}
	}
	return 0;
}

/* An out-of-sequence READ response: the requester drops it and re-issues from the gap. */
static void read_gap(struct qp_flow *r, uint32_t psn)
{
	uint32_t gap = r->snd_una;

	if (r->read_active && psn_diff(psn, r->read_next) > 0)
		gap = r->read_next;
	else
		first_unanswered_read(r, psn, &gap);
	/*
	 * A requester re-issues once per gap: responses still in flight that show the same gap
	 * after the re-issue ask for nothing more; only progress or its timer re-arms it.
	 */
	if (r->read_gap_resent && gap == r->read_gap_resent_psn)
		return;
	r->read_gap_pending = 1;
	r->read_gap_psn = gap;
}

static void on_response(struct qp_tracker *t, struct qp_flow *b, const struct roce_pkt *pkt, uint8_t op,
			struct flow_window *w)
{
	uint32_t psn = pkt->psn & PSN_MASK;
	uint64_t ts = pkt->ts_ns;
	uint8_t syn = (pkt->headers & ROCE_H_AETH) ? pkt->aeth_syndrome : 0;
	struct qp_flow *r;
	struct psn_slot *s;

	r = peer_of(t, b);
	if (!r)
		r = pair_by_psn(t, b, psn);

	if (op == ROCE_OP_ACK || op == ROCE_OP_ATOMIC_ACK) {
		if ((pkt->headers & ROCE_H_AETH) &&
		    (AETH_TYPE(syn) == AETH_NAK || AETH_TYPE(syn) == AETH_RNR_NAK)) {
			on_nak(t, b, r, pkt);
			return;
		}
		if (!r)
			return;
		r->last_activity_ns = ts;
		s = slot_find(r, psn);
		if (s && !(s->flags & SLOT_NAMED)) {
			/* The first ACK naming a PSN sent exactly once gives a sample (Karn). */
			if (s->tx_count == 1 && !(s->flags & SLOT_READ_SPAN)) {
				emit_sample(t, r, QP_SAMPLE_ACK, ts, s->first_tx_ns, psn);
				if (op == ROCE_OP_ATOMIC_ACK)
					emit_sample(t, r, QP_SAMPLE_ATOMIC, ts, s->first_tx_ns, psn);
			}
			s->flags |= SLOT_NAMED;
		}
		if (psn_diff(psn, r->snd_una) < 0) {
			r->st.dup_acks++;
			return;
		}
		{
			uint32_t gap;

			if (first_unanswered_read(r, psn, &gap)) {
				read_gap(r, psn); /* a READ or atomic response before it is missing */
				return;
			}
		}
		ack_through(t, r, psn, ts);
		return;
	}
	/* READ responses: one PSN each, from the request's PSN on, in order. */
	if (!r) {
		w->goodput_bytes += pkt->payload_len;
		b->st.goodput_bytes += pkt->payload_len;
		return;
	}
	r->last_activity_ns = ts;
	if (psn_diff(psn, r->snd_una) < 0)
		return; /* a repeated response for a PSN already answered */
	if (op == ROCE_OP_READ_RESP_FIRST || op == ROCE_OP_READ_RESP_ONLY) {
		uint32_t expect;

		s = slot_find(r, psn);
		if (!s || !(s->flags & SLOT_READ) || (s->flags & SLOT_ACKED) ||
		    (r->read_active && psn != r->read_next) || first_unanswered_read(r, psn, &expect)) {
			read_gap(r, psn);
			return;
		}
		r->read_active = 1;
		r->read_psn = psn;
		r->read_next = psn;
		r->read_gap_pending = 0;
		r->read_tx_ns = s->first_tx_ns;
		r->read_msg_first_ns = (s->flags & SLOT_READ_SPAN) ? s->msg_first_ns : s->first_tx_ns;
		r->read_karn_ok = s->tx_count == 1 && !(s->flags & SLOT_READ_SPAN);
		if (r->read_karn_ok)
			emit_sample(t, r, QP_SAMPLE_READ_FIRST, ts, s->first_tx_ns, psn);
		if (op == ROCE_OP_READ_RESP_FIRST) {
			/* The PSNs this READ consumed, also when it was sent before the MTU was known. */
			if (pkt->payload_len > r->mtu_bytes)
				r->mtu_bytes = pkt->payload_len;
			read_span_set(t, r, psn, (uint32_t)s->read_len_bytes); /* existing slots kept */
		}
	} else if (!r->read_active || psn != r->read_next) {
		read_gap(r, psn);
		return;
	}
	w->goodput_bytes += pkt->payload_len;
	b->st.goodput_bytes += pkt->payload_len;
	r->read_next = psn_add(psn, 1);
	if (!slot_find(r, psn))
		read_span_fill(t, r, psn, psn_add(psn, 1));
	if (op == ROCE_OP_READ_RESP_LAST || op == ROCE_OP_READ_RESP_ONLY) {
		struct psn_slot *rs = slot_find(r, r->read_psn);

		if (r->read_karn_ok)
			emit_sample(t, r, QP_SAMPLE_READ_LAST, ts, r->read_tx_ns, r->read_psn);
		if (rs)
			rs->flags &= (uint16_t)~SLOT_MSG_LAST; /* completed here, not by ack_through */
		emit_sample(t, r, QP_SAMPLE_COMPLETION, ts, r->read_msg_first_ns, r->read_psn);
		r->read_active = 0;
	}
	ack_through(t, r, psn, ts);
}

/* ---- CNPs, CM, datagrams ---- */

static void on_cnp(struct qp_tracker *t, struct qp_flow *c, const struct roce_pkt *pkt)
{
	struct qp_flow *r = peer_of(t, c);
	struct qp_cnp_event e;

	if (!r) {
		/*
		 * Unpaired: the flow slowed goes the other way at this vantage. A flow whose source
		 * QPN (DETH, CM) is the CNP's destination QPN is it exactly; otherwise the only
		 * candidate, or the only one with the same UDP source port (both directions of a
		 * QP share it).
		 */
		uint32_t *hs = hp_slot(t, c->dst_ip, c->src_ip, c->vantage);
		struct qp_flow *any = NULL, *same_port = NULL, *exact = NULL;
		int n_any = 0, n_port = 0;

		for (uint32_t v = *hs; v; v = flow_at(t, v - 1)->hp_next) {
			struct qp_flow *x = flow_at(t, v - 1);

			if (x->st.src_qpn == c->dst_qpn && (!x->peer || x->peer == flow_index(t, c) + 1)) {
				exact = x;
				break;
			}
			if (x->peer || (x->st.src_qpn && x->st.src_qpn != c->dst_qpn))
				continue;
			any = x;
			n_any++;
			if (x->st.udp_sport == c->st.udp_sport) {
				same_port = x;
				n_port++;
			}
		}
		r = exact ? exact : n_any == 1 ? any : n_port == 1 ? same_port : NULL;
		if (r)
			pair_flows(t, r, c, 0);
	}
	if (r) {
		r->st.cnps++;
		window_at(t, r, pkt->ts_ns)->cnps++;
		if (!r->st.first_cnp_ns)
			r->st.first_cnp_ns = pkt->ts_ns;
		r->st.last_cnp_ns = pkt->ts_ns;
	} else {
		c->st.cnps++;
		c->pend.cnps++;
		window_at(t, c, pkt->ts_ns)->cnps++;
	}
	t->tot.cnps++;
	if (t->cfg.sink && t->cfg.sink->cnp) {
		e.flow_id = r ? r->st.id : 0;
		e.cnp_flow_id = c->st.id;
		e.ts_ns = pkt->ts_ns;
		t->cfg.sink->cnp(t->cfg.sink->ctx, &e);
	}
}

/* CM REQ/REP name both QPNs: pair the two directions exactly. */
static int on_cm(struct qp_tracker *t, const struct roce_pkt *pkt, uint32_t vantage)
{
	struct qp_flow *f1, *f2;
	struct cm_req *q = NULL;

	if (pkt->cm_attr_id == CM_ATTR_REQ) {
		q = &t->cm_reqs[t->cm_next++ % CM_REQS];
		memcpy(q->src_ip, pkt->src_ip, 16);
		memcpy(q->dst_ip, pkt->dst_ip, 16);
		q->vantage = vantage;
		q->comm_id = pkt->cm_local_comm_id;
		q->qpn = pkt->cm_local_qpn & PSN_MASK;
		q->start_psn = pkt->cm_start_psn & PSN_MASK;
		q->used = 1;
		return 0;
	}
	if (pkt->cm_attr_id != CM_ATTR_REP)
		return 0;
	for (uint32_t i = 0; i < CM_REQS; i++) {
		struct cm_req *c = &t->cm_reqs[i];

		if (c->used && c->vantage == vantage && c->comm_id == pkt->cm_remote_comm_id &&
		    !memcmp(c->src_ip, pkt->dst_ip, 16) && !memcmp(c->dst_ip, pkt->src_ip, 16)) {
			q = c;
			break;
		}
	}
	if (!q)
		return 0;
	f1 = flow_get(t, q->src_ip, q->dst_ip, pkt->cm_local_qpn & PSN_MASK, vantage, 1);
	f2 = f1 ? flow_get(t, pkt->src_ip, pkt->dst_ip, q->qpn, vantage, 1) : NULL;
	if (!f1 || !f2)
		return -ENOMEM;
	f1->st.src_qpn = q->qpn;
	f1->start_psn = q->start_psn;
	f1->have_start_psn = 1;
	f2->st.src_qpn = pkt->cm_local_qpn & PSN_MASK;
	f2->start_psn = pkt->cm_start_psn & PSN_MASK;
	f2->have_start_psn = 1;
	pair_flows(t, f1, f2, 1);
	q->used = 0;
	return 0;
}

/*
 * A mirror's copy: identical to the flow's previous packet (PSN, opcode, AETH syndrome, length)
 * and within dup_window_ns of it. A real resend of the same PSN back to back within that time
 * would need a NAK or timer faster than any NIC's.
 */
static int is_mirror_copy(struct qp_tracker *t, struct qp_flow *f, const struct roce_pkt *pkt, uint64_t prev_ts)
{
	uint8_t syn = (pkt->headers & ROCE_H_AETH) ? pkt->aeth_syndrome : 0;
	int copy = f->have_prev && f->prev_psn == (pkt->psn & PSN_MASK) && f->prev_opcode == pkt->opcode &&
		   f->prev_syndrome == syn && f->prev_len == pkt->orig_len &&
		   abs_diff(pkt->ts_ns, prev_ts) <= t->cfg.dup_window_ns;

	f->have_prev = 1;
	f->prev_psn = pkt->psn & PSN_MASK;
	f->prev_opcode = pkt->opcode;
	f->prev_syndrome = syn;
	f->prev_len = pkt->orig_len;
	return copy;
}

/* ---- the entry points ---- */

void qp_tracker_cfg_default(struct qp_tracker_cfg *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->window_ns = 1000000000ull;
	cfg->dup_window_ns = 0;
	cfg->max_outstanding = 65536;
	cfg->exact_samples = 65536;
	cfg->max_windows = 86400;
	cfg->split_vantage = true;
}

struct qp_tracker *qp_tracker_new(const struct qp_tracker_cfg *cfg)
{
	struct qp_tracker *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->cfg = *cfg;
	if (!t->cfg.window_ns)
		t->cfg.window_ns = 1000000000ull;
	if (t->cfg.max_outstanding < 16)
		t->cfg.max_outstanding = 16;
	/* round max_outstanding down to a power of two */
	while (t->cfg.max_outstanding & (t->cfg.max_outstanding - 1))
		t->cfg.max_outstanding &= t->cfg.max_outstanding - 1;
	if (!t->cfg.exact_samples)
		t->cfg.exact_samples = 1;
	t->flow_slots = calloc(1024, sizeof(*t->flow_slots));
	t->hp_slots = calloc(1024, sizeof(*t->hp_slots));
	t->tmp = malloc(WIN_SAMPLES_CAP * sizeof(*t->tmp));
	if (!t->flow_slots || !t->hp_slots || !t->tmp) {
		qp_tracker_free(t);
		errno = ENOMEM;
		return NULL;
	}
	t->flow_slots_mask = 1023;
	t->hp_slots_mask = 1023;
	return t;
}

int qp_tracker_add(struct qp_tracker *t, const struct roce_pkt *pkt, uint32_t vantage)
{
	uint32_t v = t->cfg.split_vantage ? vantage : 0, qpn = pkt->dest_qp & PSN_MASK;
	uint8_t tr = pkt->opcode >> 5, op = pkt->opcode & 0x1f;
	uint64_t ts = pkt->ts_ns, prev_ts;
	struct flow_window *w;
	struct qp_flow *f;

	f = flow_get(t, pkt->src_ip, pkt->dst_ip, qpn, v, 1);
	if (!f)
		return -ENOMEM;
	if (v >= t->n_vantages)
		t->n_vantages = v + 1;
	if (!f->st.id) {
		uint32_t idx = flow_index(t, f);

		if (flow_assign_id(t, f, idx))
			return -ENOMEM;
		f->st.ip_version = pkt->ip_version;
		f->st.transport = pkt->transport;
		f->st.udp_sport = pkt->udp_sport;
		f->st.vantage = vantage;
		f->st.first_ns = ts;
		f->st.opcode_first = pkt->opcode;
	}
	if (t->tot.packets && ts < t->last_ts_ns)
		t->tot.ts_backwards++;
	prev_ts = f->st.packets ? f->last_ts_ns : 0;
	if (f->st.packets && ts < f->last_ts_ns)
		f->st.ts_backwards++;
	t->last_ts_ns = ts;
	f->last_ts_ns = ts;
	if (!t->tot.packets || ts < t->tot.first_ns)
		t->tot.first_ns = ts;
	if (ts > t->tot.last_ns)
		t->tot.last_ns = ts;
	t->tot.packets++;
	t->tot.bytes += pkt->orig_len;

	f->st.packets++;
	f->st.bytes += pkt->orig_len;
	if (ts < f->st.first_ns)
		f->st.first_ns = ts;
	if (ts > f->st.last_ns)
		f->st.last_ns = ts;
	w = window_at(t, f, ts);
	w->packets++;
	w->bytes += pkt->orig_len;
	if (is_mirror_copy(t, f, pkt, prev_ts)) {
		/*
		 * The same packet seen twice (a duplicating mirror, a capture seeing both copies):
		 * counted as seen, but it marks, notifies or transmits nothing a second time
		 * (ECN, CNPs, datagrams, CM included).
		 */
		f->st.duplicates++;
		t->tot.duplicates++;
		return 0;
	}
	if (pkt->ecn == 3) {
		f->st.ecn_ce++;
		w->ecn_ce++;
		t->tot.ecn_ce++;
		if (!f->st.first_ce_ns)
			f->st.first_ce_ns = ts;
		f->st.last_ce_ns = ts;
	}
	if (pkt->flags & ROCE_F_CM)
		if (on_cm(t, pkt, v))
			return -ENOMEM;
	if (pkt->opcode == ROCE_OPCODE_CNP) {
		on_cnp(t, f, pkt);
		return 0;
	}
	if (pkt->transport != ROCE_TR_CNP && f->st.transport == ROCE_TR_CNP)
		f->st.transport = pkt->transport; /* CNPs do not say what the QP is */
	if ((pkt->headers & ROCE_H_DETH) && !f->peer) {
		/* UD: DETH names the source QP, so the reverse flow is known exactly. */
		struct qp_flow *g;

		if (!f->st.src_qpn)
			f->st.src_qpn = pkt->deth_src_qp & PSN_MASK;
		g = flow_get(t, pkt->dst_ip, pkt->src_ip, f->st.src_qpn, v, 0);
		if (g && !g->peer && (!g->st.src_qpn || g->st.src_qpn == qpn))
			pair_flows(t, f, g, 0);
	}
	if (!tr_acked(tr)) {
		f->datagram = 1;
		f->st.first_transmissions++;
		w->goodput_bytes += pkt->payload_len;
		f->st.goodput_bytes += pkt->payload_len;
		return 0;
	}
	f->ttl = pkt->ttl;
	if (op_is_request(op)) {
		f->has_requests = 1;
		on_request(t, f, pkt, op, w);
	} else if (op_is_response(op)) {
		f->has_responses = 1;
		on_response(t, f, pkt, op, w);
	}
	return 0;
}

void qp_tracker_finish(struct qp_tracker *t)
{
	for (uint64_t i = 0; i < t->n_ids; i++) {
		struct qp_flow *f = flow_at(t, t->id_to_index[i]);

		if (f->have_win)
			window_close(t, f);
	}
}

static double ns_to_us(uint64_t ns)
{
	return (double)ns / 1000.0;
}

long qp_tracker_snapshot(struct qp_tracker *t, const struct flow_stats **out)
{
	size_t n = (size_t)t->n_ids;
	uint64_t paired = 0, unattributed = 0;

	if (n > t->snap_n || !t->snap) {
		struct flow_stats *ns = realloc(t->snap, (n ? n : 1) * sizeof(*ns));

		if (!ns)
			return -ENOMEM;
		t->snap = ns;
	}
	t->snap_n = n;
	for (size_t i = 0; i < n; i++) {
		struct qp_flow *f = flow_at(t, t->id_to_index[i]);
		struct qp_flow *p = peer_of(t, f);
		struct flow_stats *st = &t->snap[i];

		*st = f->st;
		if (f->timeouts_unsure && capture_nearer_responder(t, f) == 1)
			st->timeouts -= f->timeouts_unsure; /* seen from the responder's side after all */
		st->carries_requests = f->has_requests;
		st->carries_responses = f->has_responses;
		st->peer_id = p ? p->st.id : 0;
		if (st->peer_id)
			paired++;
		unattributed += f->pend.cnps;
		if (st->transport == ROCE_TR_CNP && p && p->st.transport != ROCE_TR_CNP)
			st->transport = p->st.transport; /* a CNP-only flow is its QP's other direction */
		st->role = f->has_requests ? FLOW_ROLE_REQUESTER
			   : f->has_responses ? FLOW_ROLE_RESPONDER
			   : f->datagram ? FLOW_ROLE_DATAGRAM
			   : tr_acked(st->transport) ? FLOW_ROLE_RESPONDER
			   : st->transport == ROCE_TR_CNP || st->transport == ROCE_TR_UC || st->transport == ROCE_TR_UD
				   ? FLOW_ROLE_DATAGRAM
				   : FLOW_ROLE_UNKNOWN;
		if (!f->lat)
			f->lat = t->no_samples; /* read only: every count is 0 */
		st->ack_samples = f->lat[QP_SAMPLE_ACK].count;
		st->ack_latency_p50_us = ns_to_us(lat_percentile(&f->lat[QP_SAMPLE_ACK], 5000));
		st->ack_latency_p99_us = ns_to_us(lat_percentile(&f->lat[QP_SAMPLE_ACK], 9900));
		st->ack_latency_max_us = ns_to_us(f->lat[QP_SAMPLE_ACK].max_ns);
		st->ack_latency_mad_us = ns_to_us(lat_mad(&f->lat[QP_SAMPLE_ACK]));
		st->read_samples = f->lat[QP_SAMPLE_READ_LAST].count;
		st->read_latency_p50_us = ns_to_us(lat_percentile(&f->lat[QP_SAMPLE_READ_LAST], 5000));
		st->read_latency_p99_us = ns_to_us(lat_percentile(&f->lat[QP_SAMPLE_READ_LAST], 9900));
		st->completion_samples = f->lat[QP_SAMPLE_COMPLETION].count;
		st->completion_p50_us = ns_to_us(lat_percentile(&f->lat[QP_SAMPLE_COMPLETION], 5000));
		st->completion_p99_us = ns_to_us(lat_percentile(&f->lat[QP_SAMPLE_COMPLETION], 9900));
		st->completion_max_us = ns_to_us(f->lat[QP_SAMPLE_COMPLETION].max_ns);
		st->read_latency_max_us = ns_to_us(f->lat[QP_SAMPLE_READ_LAST].max_ns);
		st->atomic_samples = f->lat[QP_SAMPLE_ATOMIC].count;
		st->atomic_latency_p50_us = ns_to_us(lat_percentile(&f->lat[QP_SAMPLE_ATOMIC], 5000));
		st->atomic_latency_p99_us = ns_to_us(lat_percentile(&f->lat[QP_SAMPLE_ATOMIC], 9900));
		st->read_first_samples = f->lat[QP_SAMPLE_READ_FIRST].count;
		st->read_first_p50_us = ns_to_us(lat_percentile(&f->lat[QP_SAMPLE_READ_FIRST], 5000));
		st->read_first_p99_us = ns_to_us(lat_percentile(&f->lat[QP_SAMPLE_READ_FIRST], 9900));
		st->windows = f->wins;
		st->n_windows = f->n_wins;
	}
	t->tot.paired_flows = paired;
	t->tot.cnps_unattributed = unattributed;
	uint64_t retx = 0, to = 0;
	for (size_t i = 0; i < n; i++) {
		retx += t->snap[i].retransmitted_packets;
		to += t->snap[i].timeouts;
	}
	t->tot.retransmitted_packets = retx;
	t->tot.timeouts = to;
	*out = t->snap;
	return (long)n;
}

const struct qp_tracker_totals *qp_tracker_totals(const struct qp_tracker *t)
{
	return &t->tot;
}

void qp_tracker_free(struct qp_tracker *t)
{
	if (!t)
		return;
	for (uint32_t c = 0; c < t->n_chunks; c++) {
		for (uint32_t i = 0; i < FLOW_CHUNK && c * FLOW_CHUNK + i < t->n_flows; i++) {
			struct qp_flow *f = &t->chunks[c][i];

			free(f->ring);
			free(f->win_samples);
			free(f->wins);
			for (int k = 0; f->lat && f->lat != t->no_samples && k < QP_SAMPLE_KINDS; k++)
				lat_free(&f->lat[k]);
			if (f->lat != t->no_samples)
				free(f->lat);
		}
		free(t->chunks[c]);
	}
	free(t->chunks);
	free(t->flow_slots);
	free(t->hp_slots);
	free(t->id_to_index);
	free(t->snap);
	free(t->tmp);
	free(t);
}

const char *qp_sample_kind_name(uint8_t kind)
{
	static const char *const names[QP_SAMPLE_KINDS] = {
		"ack", "read_first", "read_last", "atomic", "completion", "nak_to_retx", "timeout_gap",
	};
	return kind < QP_SAMPLE_KINDS ? names[kind] : "unknown";
}

const char *qp_retx_cause_name(uint8_t cause)
{
	static const char *const names[] = { "nak", "rnr", "timeout", "unknown", "response_gap" };
	return cause < 5 ? names[cause] : "unknown";
}

const char *qp_nak_kind_name(uint8_t kind)
{
	static const char *const names[] = { "psn_seq", "rnr", "other" };
	return kind < 3 ? names[kind] : "other";
}

const char *flow_role_name(uint8_t role)
{
	static const char *const names[] = { "unknown", "requester", "responder", "datagram" };
	return role < 4 ? names[role] : "unknown";
}
