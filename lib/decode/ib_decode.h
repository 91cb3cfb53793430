/* ib_decode.h: native InfiniBand frames (LRH, GRH) and ERF records -> struct roce_pkt. */
#ifndef AGENTXDP_IB_DECODE_H
#define AGENTXDP_IB_DECODE_H

#include <stdint.h>

#include "lib/decode/roce_decode.h"
#include "lib/util/byte_reader.h"

/* ERF record types (Endace ERF types reference; Wireshark wiretap/erf_record.h). */
enum erf_type {
	ERF_TYPE_ETH = 2,
	ERF_TYPE_COLOR_ETH = 11,
	ERF_TYPE_DSM_COLOR_ETH = 16,
	ERF_TYPE_COLOR_HASH_ETH = 20,
	ERF_TYPE_INFINIBAND = 21,	/* an IB packet from its LRH to its VCRC */
	ERF_TYPE_IPV4 = 22,
	ERF_TYPE_IPV6 = 23,
	ERF_TYPE_INFINIBAND_LINK = 25,	/* IB link (flow control) packets: no transport */
};

#define ERF_HDR_LEN 16
#define ERF_EXT_HDR_LEN 8
#define ERF_ETH_PAD 2	/* Ethernet records: 2 bytes (offset, pad) before the frame */

/*
 * Decode a frame of link type DLT_INFINIBAND (LRH [GRH] BTH ... ICRC VCRC) or DLT_ERF (an
 * ERF record: InfiniBand, Ethernet or raw IP inside). `br` holds the captured bytes; *out
 * has been cleared and carries the capture's times and lengths. Returns as
 * roce_decode_frame(); ERF records take their own (nanosecond) timestamp and wire length.
 */
int ib_decode_frame(const struct roce_decode_opts *opts, int linktype, struct byte_reader *br,
		    struct roce_pkt *out);

#endif
