/* flow_table.c: the tracker's flows, found by key and by host pair (open addressing). */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "lib/track/qp_track_int.h"
#include "lib/util/util.h"

#define FLOW_HUGE_PAGE (2u << 20)

uint32_t flow_table_index(const struct qp_tracker *t, const struct qp_flow *f)
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

/*
 * A flow slot holds the flow's index + 1 (low half, 0 empty) and the top half of its key's
 * hash: a probe compares hashes in the slot array and reads a flow only when they match, so
 * a lookup touches one flow instead of one per probe (each a cache miss on a big trace).
 */
static inline uint64_t slot_make(uint64_t hash, uint32_t idx)
{
	return (hash & 0xffffffff00000000ull) | (idx + 1);
}

static int grow_flow_slots(struct qp_tracker *t)
{
	uint32_t ncap = (t->flow_slots_mask + 1) * 2;
	uint64_t *ns = calloc(ncap, sizeof(*ns));

	if (!ns)
		return -ENOMEM;
	for (uint32_t i = 0; i <= t->flow_slots_mask; i++) {
		uint64_t v = t->flow_slots[i];
		uint32_t j;
		struct qp_flow *f;

		if (!v)
			continue;
		f = flow_at(t, (uint32_t)v - 1);
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
uint32_t *flow_table_hp_slot(struct qp_tracker *t, const uint8_t *src, const uint8_t *dst, uint32_t vantage)
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

uint64_t flow_table_hash(const uint8_t *src, const uint8_t *dst, uint32_t qpn, uint32_t vantage)
{
	return hash_flow(src, dst, qpn, vantage);
}

/*
 * Prefetching for a batch (qp_tracker_add_batch): the slot a hash starts probing at, then
 * the hot lines of the first flow whose tag matches (read without comparing its key: a wrong
 * guess costs a wasted prefetch, never a wrong answer). Returns that flow, or NULL.
 */
void flow_table_prefetch_slot(const struct qp_tracker *t, uint64_t h)
{
	__builtin_prefetch(&t->flow_slots[(uint32_t)h & t->flow_slots_mask]);
}

struct qp_flow *flow_table_prefetch_flow(const struct qp_tracker *t, uint64_t h)
{
	uint64_t tag = h & 0xffffffff00000000ull;
	uint32_t j = (uint32_t)h & t->flow_slots_mask;

	for (uint32_t probes = 0; probes < 4; probes++, j = (j + 1) & t->flow_slots_mask) {
		uint64_t v = t->flow_slots[j];
		const char *f;

		if (!v)
			return NULL;
		if ((v & 0xffffffff00000000ull) != tag)
			continue;
		f = (const char *)flow_at(t, (uint32_t)v - 1);
		/* What every packet reads (struct qp_flow's layout): its first three lines, the
		 * counters of its statistics (struct flow_stats keeps them on two lines). */
		__builtin_prefetch(f);
		__builtin_prefetch(f + 64);
		__builtin_prefetch(f + 128);
		__builtin_prefetch(f + offsetof(struct qp_flow, st));
		__builtin_prefetch(f + offsetof(struct qp_flow, st.packets));
		return (struct qp_flow *)f;
	}
	return NULL;
}

/*
 * A chunk of flows on 2 MB pages (a hint to the kernel): every packet reads its flow, and
 * with 4 KB pages the flows of a big trace (5.3 MB for 5,901 flows) took a TLB miss and, when
 * new, a page fault per 4.5 flows; the prefetch of a flow then waited for the TLB walk.
 */
static struct qp_flow *flow_chunk_alloc(void)
{
	size_t bytes = (FLOW_CHUNK * sizeof(struct qp_flow) + FLOW_HUGE_PAGE - 1) & ~(size_t)(FLOW_HUGE_PAGE - 1);
	void *p = aligned_alloc(FLOW_HUGE_PAGE, bytes);

	if (p)
		madvise(p, bytes, MADV_HUGEPAGE);
	return p;
}

/* Find or create flow; NULL on ENOMEM. */
struct qp_flow *flow_table_get(struct qp_tracker *t, const uint8_t *src, const uint8_t *dst, uint32_t qpn,
				uint32_t vantage, int create)
{
	struct qp_flow *f = t->last_flow;

	/* Packets of one flow often come in runs (a message's packets): the previous lookup's
	 * flow first. */
	if (f && flow_is(f, src, dst, qpn, vantage))
		return f;
	return flow_table_get_hashed(t, hash_flow(src, dst, qpn, vantage), src, dst, qpn, vantage, create);
}

/* flow_table_get() with the key's hash (flow_table_hash) already known. */
struct qp_flow *flow_table_get_hashed(struct qp_tracker *t, uint64_t h, const uint8_t *src, const uint8_t *dst,
				      uint32_t qpn, uint32_t vantage, int create)
{
	uint64_t tag = h & 0xffffffff00000000ull;
	uint32_t j = (uint32_t)h & t->flow_slots_mask, idx, *hs;
	struct qp_flow *f = t->last_flow;

	if (f && flow_is(f, src, dst, qpn, vantage))
		return f;
	for (;;) {
		uint64_t v = t->flow_slots[j];

		if (!v)
			break;
		if ((v & 0xffffffff00000000ull) == tag) {
			f = flow_at(t, (uint32_t)v - 1);
			if (flow_is(f, src, dst, qpn, vantage)) {
				t->last_flow = f;
				return f;
			}
		}
		j = (j + 1) & t->flow_slots_mask;
	}
	if (!create)
		return NULL;
	idx = t->n_flows;
	if ((idx >> FLOW_CHUNK_BITS) >= t->n_chunks) {
		if (util_ensure_mem((void **)&t->chunks, &t->cap_chunks, sizeof(*t->chunks), t->n_chunks + 1))
			return NULL;
		/* On 2 MB pages, as struct qp_flow's layout assumes cache lines; not cleared here
		 * (a flow is when it is created), so its pages are touched only as flows arrive. */
		t->chunks[t->n_chunks] = flow_chunk_alloc();
		if (!t->chunks[t->n_chunks])
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
	t->flow_slots[j] = slot_make(h, idx);
	t->n_flows++;

	hs = flow_table_hp_slot(t, src, dst, vantage);
	if (!*hs)
		t->n_hp++;
	f->hp_next = *hs;
	*hs = idx + 1;

	if ((uint64_t)t->n_flows * 10 > (uint64_t)(t->flow_slots_mask + 1) * 7 && grow_flow_slots(t))
		return NULL;
	if ((uint64_t)t->n_hp * 10 > (uint64_t)(t->hp_slots_mask + 1) * 7 && grow_hp_slots(t))
		return NULL;
	t->last_flow = f;
	return f;
}

/* A flow gets its id (the qp row id) with its first packet. */
int flow_table_assign_id(struct qp_tracker *t, struct qp_flow *f, uint32_t idx)
{
	if (util_ensure_mem((void **)&t->id_to_index, &t->cap_ids, sizeof(*t->id_to_index), t->n_ids + 1))
		return -ENOMEM;
	t->id_to_index[t->n_ids++] = idx;
	f->st.id = t->n_ids;
	t->tot.flows++;
	return 0;
}

