/*
 * psn_ring.c: the requester's transmitted PSNs, a ring indexed by PSN that grows up to a cap,
 * and beside it the outstanding sets: a bit per slot, and a bit per non-zero 64-bit word of
 * those, so a walk over a range of slots finds the outstanding ones without visiting the rest
 * (issue #22: a walk PSN by PSN let crafted ACKs cost 65536 steps each). The ring's slots
 * and their exts are one allocation of RING_BYTES(size). A ring of up to 64 slots (most of
 * them) keeps each set in one word inside the flow, on a line every packet fetches anyway.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/track/qp_track_int.h"

/* A ring of over PSN_RING_SMALL slots (psn_ring_sync() does the small ones). */
static void set_put(struct qp_flow *f, enum psn_set set, uint32_t i, int on)
{
	uint32_t w = i >> 6;
	uint64_t *b = &f->set_bits[set][w], m = 1ull << (i & 63);

	if (on) {
		*b |= m;
		f->set_words[set][w >> 6] |= 1ull << (w & 63);
	} else if (*b & m) {
		*b &= ~m;
		if (!*b)
			f->set_words[set][w >> 6] &= ~(1ull << (w & 63));
	}
}

void psn_ring_sync_big(struct qp_flow *f, uint32_t i, bool out, bool need)
{
	set_put(f, PSN_SET_OUTSTANDING, i, out);
	set_put(f, PSN_SET_NEEDS_RESPONSE, i, need);
}

/* First set bit in [lo, hi) of a big ring's set (lo < hi <= ring size), or hi. */
static uint32_t set_next(const struct qp_flow *f, enum psn_set set, uint32_t lo, uint32_t hi)
{
	const uint64_t *bits = f->set_bits[set], *words = f->set_words[set];
	uint32_t w = lo >> 6, last = (hi - 1) >> 6, idx;
	uint64_t x = bits[w] & (~0ull << (lo & 63));

	while (!x) {
		uint32_t sw = w + 1, si = sw >> 6;
		uint64_t y;

		if (sw > last)
			return hi;
		y = words[si] & (~0ull << (sw & 63));
		while (!y) {
			if (++si << 6 > last)
				return hi;
			y = words[si];
		}
		w = (si << 6) + (uint32_t)__builtin_ctzll(y);
		if (w > last)
			return hi;
		x = bits[w];
	}
	idx = (w << 6) + (uint32_t)__builtin_ctzll(x);
	return idx < hi ? idx : hi;
}

uint32_t psn_ring_next_big(const struct qp_flow *f, enum psn_set set, uint32_t from, uint32_t n)
{
	uint32_t cap = f->ring_mask + 1, r;

	if (!n)
		return n;
	if (from + n <= cap)
		return set_next(f, set, from, from + n) - from;
	r = set_next(f, set, from, cap);
	if (r < cap)
		return r - from;
	return cap - from + set_next(f, set, 0, from + n - cap);
}

_Static_assert(sizeof(struct psn_slot) == 16, "four slots to a cache line");

#define RING_BYTES(cap) ((size_t)(cap) * (sizeof(struct psn_slot) + sizeof(struct psn_slot_ext)))

/* Bytes of the outstanding sets of a ring of cap slots (one allocation). */
static size_t sets_bytes(uint32_t cap)
{
	size_t n_bits = (cap + 63) / 64, n_words = (n_bits + 63) / 64;

	return PSN_SETS * (n_bits + n_words) * sizeof(uint64_t);
}

static int ring_grow(struct qp_tracker *t, struct qp_flow *f)
{
	uint32_t ocap = f->ring_mask ? f->ring_mask + 1 : 0, ncap = ocap ? ocap * 2 : 16;
	size_t n_bits = (ncap + 63) / 64, n_words = (n_bits + 63) / 64;
	struct psn_slot *nr, *or = f->ring;
	uint64_t *sets;

	if (ncap > t->cfg.max_outstanding)
		return -ENOSPC;
	nr = track_mem_alloc(&t->mem, RING_BYTES(ncap));
	sets = ncap > PSN_RING_SMALL ? track_mem_alloc(&t->mem, sets_bytes(ncap)) : NULL;
	if (!nr || (ncap > PSN_RING_SMALL && !sets)) {
		track_mem_free(&t->mem, nr, RING_BYTES(ncap));
		track_mem_free(&t->mem, sets, sets_bytes(ncap));
		return -ENOMEM;
	}
	memset(nr, 0, RING_BYTES(ncap));
	if (ocap > PSN_RING_SMALL)
		track_mem_free(&t->mem, f->set_bits[0], sets_bytes(ocap));
	memset(f->set_small, 0, sizeof(f->set_small));
	if (sets)
		memset(sets, 0, sets_bytes(ncap));
	for (int k = 0; sets && k < PSN_SETS; k++) {
		f->set_bits[k] = sets + k * (n_bits + n_words);
		f->set_words[k] = f->set_bits[k] + n_bits;
	}
	f->ring = nr;
	f->ring_mask = ncap - 1;
	for (uint32_t i = 0; i < ocap; i++) {
		if (or[i].flags & SLOT_VALID) {
			struct psn_slot *s = &nr[or[i].psn & (ncap - 1)];

			*s = or[i];
			*psn_slot_ext(f, s) = ((struct psn_slot_ext *)(or + ocap))[i];
			psn_ring_sync(f, s);
		}
	}
	track_mem_free(&t->mem, or, RING_BYTES(ocap));
	return 0;
}

void psn_ring_free(struct qp_tracker *t, struct qp_flow *f)
{
	uint32_t cap = f->ring_mask ? f->ring_mask + 1 : 0;

	if (cap)
		track_mem_free(&t->mem, f->ring, RING_BYTES(cap));
	if (cap > PSN_RING_SMALL)
		track_mem_free(&t->mem, f->set_bits[0], sets_bytes(cap));
	f->ring = NULL;
	f->ring_mask = 0;
	memset(f->set_bits, 0, sizeof(f->set_bits));
	memset(f->set_words, 0, sizeof(f->set_words));
}

/* Slot for a newly sent PSN, growing the ring while unacknowledged PSNs would be overwritten. */
struct psn_slot *psn_ring_slot_new(struct qp_tracker *t, struct qp_flow *f, uint32_t psn)
{
	struct psn_slot *s;

	int err;

	if (!f->ring_mask && (err = ring_grow(t, f))) {
		if (err == -ENOMEM)
			t->tot.alloc_failures++;
		return NULL;
	}
	for (;;) {
		s = &f->ring[psn & f->ring_mask];
		if (!(s->flags & SLOT_VALID) || (s->flags & SLOT_ACKED) || s->psn == psn)
			break;
		err = ring_grow(t, f);
		if (err == -ENOMEM)
			t->tot.alloc_failures++;
		if (err)
			break; /* at the cap (or out of memory): the oldest outstanding PSN is forgotten */
	}
	memset(s, 0, sizeof(*s));
	s->psn = psn;
	s->flags = SLOT_VALID;
	psn_ring_sync(f, s);
	return s;
}

