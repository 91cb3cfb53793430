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

/*
 * roce_decode.c, shared with ib_decode.c so native InfiniBand and RoCE decode the transport
 * with the same code: the GRH (40 bytes: GIDs into src_ip/dst_ip), the BTH with its extended
 * headers and CM MADs (ib_wire_len: BTH to ICRC on the wire, br: the captured part), and the
 * wire length raised to what the headers say when the capture said less.
 */
struct roce_pkt;
int roce_dissect_grh(struct byte_reader *br, struct roce_pkt *pkt, uint32_t *ib_wire_len,
		     uint32_t *l3_wire_end);
int roce_dissect_ib_transport(struct byte_reader *br, uint32_t ib_wire_len, struct roce_pkt *pkt);
void roce_set_wire_len(struct roce_pkt *pkt, uint32_t wire_end);

#endif
