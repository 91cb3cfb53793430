/* test_emu_icrc.c: the emulator's ICRC (from a 5-tuple) equals roce_frame's (from a whole IP header). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <cmocka.h>

#include "lib/model/roce_frame.h"
#include "lib/model/emu_icrc.h"

/* A UDP payload: BTH (RDMA WRITE ONLY, AckReq, FECN/BECN byte set: masked) + RETH + 64 B + ICRC. */
static size_t make_payload(uint8_t *p)
{
	static const uint8_t bth[12] = { 0x0a, 0x00, 0xff, 0xff, 0xc0, 0x01, 0x23, 0x45,
					 0x80, 0xab, 0xcd, 0xef };
	size_t n = 0;

	memcpy(p, bth, sizeof(bth));
	n += sizeof(bth);
	for (int i = 0; i < 16 + 64; i++)
		p[n++] = (uint8_t)(i * 7 + 3);
	return n; /* without the 4 ICRC bytes */
}

static void test_ipv4(void **state)
{
	uint8_t frame[20 + 8 + 256] = { 0 };
	uint8_t *ip = frame, *udp = frame + 20, *pl = frame + 28;
	size_t len = make_payload(pl);
	struct emu_path path = { .family = AF_INET, .src = { 198, 18, 0, 1 }, .dst = { 198, 18, 0, 2 },
				 .sport = 49231, .dport = 4791 };
	uint16_t udp_len = (uint16_t)(8 + len + 4);

	ip[0] = 0x45;
	ip[1] = 0x6a; /* DSCP 26, ECT(0): masked */
	ip[2] = (uint8_t)((20 + udp_len) >> 8);
	ip[3] = (uint8_t)(20 + udp_len);
	ip[4] = ip[5] = 0;	/* IP ID 0: what an unconnected DF socket sends */
	ip[6] = 0x40;		/* DF */
	ip[8] = 63;		/* TTL: masked */
	ip[9] = 17;
	ip[10] = 0x12;		/* checksum: masked */
	ip[11] = 0x34;
	memcpy(ip + 12, path.src, 4);
	memcpy(ip + 16, path.dst, 4);
	udp[0] = path.sport >> 8;
	udp[1] = path.sport & 0xff;
	udp[2] = path.dport >> 8;
	udp[3] = path.dport & 0xff;
	udp[4] = udp_len >> 8;
	udp[5] = udp_len & 0xff;
	udp[6] = 0xbe;		/* UDP checksum: masked */
	udp[7] = 0xef;
	assert_int_equal(emu_icrc(&path, pl, len), roce_icrc(ip, 28 + len, 4));
	/* And it depends on what is not masked: the addresses. */
	path.dst[3] = 3;
	assert_int_not_equal(emu_icrc(&path, pl, len), roce_icrc(ip, 28 + len, 4));
}

static void test_ipv6(void **state)
{
	uint8_t frame[40 + 8 + 256] = { 0 };
	uint8_t *ip = frame, *udp = frame + 40, *pl = frame + 48;
	size_t len = make_payload(pl);
	struct emu_path path = { .family = AF_INET6, .sport = 50000, .dport = 4791 };
	uint16_t udp_len = (uint16_t)(8 + len + 4);

	path.src[0] = path.dst[0] = 0xfd;
	path.src[1] = path.dst[1] = 0x99;
	path.src[15] = 1;
	path.dst[15] = 2;
	ip[0] = 0x61;		/* version 6, traffic class and flow label: masked */
	ip[1] = 0xa2;
	ip[2] = 0x34;
	ip[3] = 0x56;
	ip[4] = udp_len >> 8;
	ip[5] = udp_len & 0xff;
	ip[6] = 17;
	ip[7] = 64;		/* hop limit: masked */
	memcpy(ip + 8, path.src, 16);
	memcpy(ip + 24, path.dst, 16);
	udp[0] = path.sport >> 8;
	udp[1] = path.sport & 0xff;
	udp[2] = path.dport >> 8;
	udp[3] = path.dport & 0xff;
	udp[4] = udp_len >> 8;
	udp[5] = udp_len & 0xff;
	udp[6] = 0x11;
	udp[7] = 0x22;
	assert_int_equal(emu_icrc(&path, pl, len), roce_icrc(ip, 48 + len, 6));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ipv4),
		cmocka_unit_test(test_ipv6),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
