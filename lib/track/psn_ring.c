/* psn_ring.c: the requester's transmitted PSNs, a ring indexed by PSN that grows up to a cap. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/track/qp_track_int.h"

struct psn_slot *psn_ring_find(struct qp_flow *f, uint32_t psn)
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
	return s;
}

