/* frame_census.h: what a trace held instead of RoCE, for the one line a run that understood nothing prints. */
#ifndef AGENTXDP_FRAME_CENSUS_H
#define AGENTXDP_FRAME_CENSUS_H

#include <stddef.h>
#include <stdint.h>

#define FRAME_CENSUS_KINDS 16
#define FRAME_CENSUS_LINKTYPES 4

struct frame_census {
	uint32_t kind[FRAME_CENSUS_KINDS];	/* roce_frame_kind() values */
	uint64_t n[FRAME_CENSUS_KINDS];
	uint32_t used;
	uint64_t rest;				/* frames of kinds past the table */
	int linktype[FRAME_CENSUS_LINKTYPES];	/* link types of the frames counted */
	uint32_t n_linktypes;
	uint64_t unknown_tunnel;		/* GRE that no mirror session sends */
};

/* One frame that was not RoCE (or failed at its link layer), of this link type. */
void frame_census_add(struct frame_census *c, int linktype, const uint8_t *frame, size_t caplen,
		      int bad_link);
void frame_census_merge(struct frame_census *dst, const struct frame_census *src);
/* "found instead: link type EN10MB; UDP port 8472 (900 frames), TCP (10); <what would help>" */
void frame_census_str(const struct frame_census *c, char *buf, size_t len);

#endif
