/* emu_icrc.c: RoCE v2 ICRC for packets the emulator hands to a UDP socket. */
#include "lib/model/emu_icrc.h"

#include <string.h>
#include <sys/socket.h>
#include <zlib.h>

#include "lib/util/byte_reader.h"

#define EMU_BTH_BYTES 12

uint32_t emu_icrc(const struct emu_path *path, const uint8_t *pkt, size_t len)
{
	uint8_t ph[8 + 40 + 8 + EMU_BTH_BYTES];
	size_t n = 0;
	uint16_t udp_len = (uint16_t)(8 + len + EMU_ICRC_BYTES);
	uLong crc;

	/* The masked LRH: 8 bytes of ones (IBA A17.8.2). */
	memset(ph, 0xff, 8);
	n = 8;
	if (path->family == AF_INET6) {
		ph[n++] = 0x6f; /* version 6, traffic class and flow label masked */
		ph[n++] = 0xff;
		ph[n++] = 0xff;
		ph[n++] = 0xff;
		put_be16(ph + n, udp_len);
		n += 2;
		ph[n++] = 17;
		ph[n++] = 0xff; /* hop limit masked */
		memcpy(ph + n, path->src, 16);
		memcpy(ph + n + 16, path->dst, 16);
		n += 32;
	} else {
		ph[n++] = 0x45;
		ph[n++] = 0xff; /* TOS masked */
		put_be16(ph + n, (uint16_t)(20 + udp_len));
		n += 2;
		/* Unconnected sockets with DF set send IP ID 0 (ip_select_ident_segs()). */
		ph[n++] = 0;
		ph[n++] = 0;
		ph[n++] = 0x40;
		ph[n++] = 0;
		ph[n++] = 0xff; /* TTL masked */
		ph[n++] = 17;
		ph[n++] = 0xff; /* header checksum masked */
		ph[n++] = 0xff;
		memcpy(ph + n, path->src, 4);
		memcpy(ph + n + 4, path->dst, 4);
		n += 8;
	}
	put_be16(ph + n, path->sport);
	put_be16(ph + n + 2, path->dport);
	put_be16(ph + n + 4, udp_len);
	ph[n + 6] = 0xff; /* UDP checksum masked */
	ph[n + 7] = 0xff;
	n += 8;
	memcpy(ph + n, pkt, EMU_BTH_BYTES);
	ph[n + 4] = 0xff; /* BTH resv8a (FECN/BECN) masked */
	n += EMU_BTH_BYTES;
	crc = crc32(0L, ph, (uInt)n);
	crc = crc32(crc, pkt + EMU_BTH_BYTES, (uInt)(len - EMU_BTH_BYTES));
	return (uint32_t)crc;
}
