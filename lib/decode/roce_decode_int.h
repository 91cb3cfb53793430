/* roce_decode_int.h: what the decoder's files share (not for callers). */
#ifndef AGENTXDP_ROCE_DECODE_INT_H
#define AGENTXDP_ROCE_DECODE_INT_H

#include <stdint.h>

#include "lib/util/byte_reader.h"

/* One tunnel header's identity, copied into the record when it is the session's. */
struct roce_tunnel {
	uint8_t kind;		/* enum roce_encap */
	uint8_t gra, platform_id, dir;
	uint32_t id;
	uint32_t ts, ts_hi;
};

/* roce_tunnel.c: a tunnel header at br (GRE with what it carries, or VXLAN); br is left at
 * the inner Ethernet frame. 0, ROCE_DECODE_NOT_ROCE or ROCE_DECODE_BAD_ENCAP. */
int roce_dissect_gre_tunnel(struct byte_reader *br, struct roce_tunnel *t);
int roce_dissect_vxlan(struct byte_reader *br, struct roce_tunnel *t);

#endif
