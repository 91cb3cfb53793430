/* emu_icrc.h: the RoCE v2 ICRC of a UDP payload sent through a socket, from its 5-tuple. */
#ifndef AGENTXDP_EMU_ICRC_H
#define AGENTXDP_EMU_ICRC_H

#include <stddef.h>
#include <stdint.h>

#define EMU_ICRC_BYTES 4

/* The IP/UDP 5-tuple a QP's packets travel with: the ICRC covers a masked copy of it. */
struct emu_path {
	int family;		/* AF_INET or AF_INET6 */
	uint8_t src[16];	/* IPv4 in the first 4 bytes */
	uint8_t dst[16];
	uint16_t sport;		/* this QP's own UDP source port (ECMP entropy) */
	uint16_t dport;		/* 4791 */
};

/*
 * RoCE v2 ICRC (IBA annex A17.8) over the masked IP/UDP headers the kernel will put in front
 * of pkt (BTH onwards, len bytes, ICRC excluded), as rdma_rxe computes it. IPv4 assumes
 * DF set and IP ID 0: what an unconnected UDP socket with IP_PMTUDISC_DO sends.
 */
uint32_t emu_icrc(const struct emu_path *path, const uint8_t *pkt, size_t len);

#endif
