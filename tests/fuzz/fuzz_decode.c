/* fuzz_decode.c: libFuzzer harness for the RoCE decoder (and the mirror tunnels around it); every input as every link type (ERF records and native InfiniBand too). */
#include <pcap/dlt.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/decode/roce_decode.h"
#include "lib/util/util.h"

static const int link_types[] = {
	DLT_EN10MB, DLT_LINUX_SLL, DLT_LINUX_SLL2, DLT_RAW, DLT_IPV4, DLT_IPV6, DLT_INFINIBAND,
	DLT_ERF,
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct roce_decode_opts opts;
	struct roce_pkt pkt;
	char addr[64];

	roce_decode_opts_default(&opts);
	opts.udp_ports[1] = 4792;
	for (size_t i = 0; i < sizeof(link_types) / sizeof(link_types[0]); i++) {
		/* origlen both as recorded and as a trimmed capture would record it */
		for (uint32_t extra = 0; extra <= 1000; extra += 1000) {
			int rc = roce_decode_frame(&opts, link_types[i], data, size,
						   (uint32_t)size + extra, 1, &pkt);
			if (rc < ROCE_DECODE_STATUS_MIN || rc > ROCE_DECODE_NOT_ROCE)
				abort();
			if (rc != ROCE_DECODE_OK) {
				/* What analyze says a refused frame was (frame_kind.c). */
				uint32_t k = roce_frame_kind(link_types[i], data, size);

				if (k >> 24 > FRAME_KIND_GRE_PROTO || FRAME_KIND_TUNNEL(k) > ROCE_ENCAP_MAX)
					abort();
				roce_frame_kind_str(k, addr, sizeof(addr));
				continue;
			}
			/* Invariants of a decoded record. */
			if (pkt.dest_qp > 0xffffff || pkt.psn > 0xffffff || pkt.orig_len < pkt.cap_len ||
			    !(pkt.headers & ROCE_H_BTH) || pkt.pad_count > 3)
				abort();
			addr_str(pkt.src_ip, addr, sizeof(addr));
			addr_str(pkt.dst_ip, addr, sizeof(addr));
			if (!roce_opcode_name(pkt.opcode) || !roce_aeth_name(pkt.aeth_syndrome) ||
			    !roce_transport_name(pkt.transport))
				abort();
			/* A tunnel's inner frame lies inside the captured bytes. */
			if (pkt.encap > ROCE_ENCAP_MAX || pkt.encap_depth > ROCE_MAX_TUNNELS ||
			    !pkt.encap != !pkt.encap_depth ||
			    (size_t)pkt.encap_hdr_len + pkt.cap_len > size ||
			    pkt.ip_hdr_off > pkt.cap_len)
				abort();
			addr_str(pkt.encap_src_ip, addr, sizeof(addr));
			/* Native InfiniBand: an IBA transport after the LRH, and no IP or UDP. */
			if (pkt.roce_version == 0 &&
			    ((pkt.ib_lnh != 2 && pkt.ib_lnh != 3) || pkt.ib_vl > 15 || pkt.ib_sl > 15 ||
			     pkt.udp_dport || pkt.ib_pkt_len > 0x7ff * 4 ||
			     (!(pkt.headers & ROCE_H_GRH) && addr_lid(pkt.src_ip) != pkt.ib_slid)))
				abort();
			if (pkt.erf_type > 0x7f || pkt.erf_port > 3)
				abort();
			if (!roce_erspan3_ns(&pkt, pkt.ts_ns, &pkt.arrival_ns) && pkt.erspan_gra != ERSPAN_GRA_IEEE1588)
				abort();
			if (!roce_encap_name(pkt.encap))
				abort();
		}
	}
	return 0;
}
