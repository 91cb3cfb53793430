/* test_roce_frame.c: frame building, the ICRC against real NIC captures, and transport parsing. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <pcap/pcap.h>

#include "lib/model/roce_frame.h"

static void test_crc32_check_value(void **state)
{
	/* The CRC-32 check value from the catalogue of parametrised CRCs. */
	assert_int_equal(roce_crc32(0, (const uint8_t *)"123456789", 9), 0xCBF43926u);
	/* Incremental use gives the same answer. */
	uint32_t c = roce_crc32(0, (const uint8_t *)"1234", 4);
	assert_int_equal(roce_crc32(c, (const uint8_t *)"56789", 5), 0xCBF43926u);
}

/* ICRC computed by real RoCE NICs (rxe and mlx5) in the shared captures must match ours. */
static void test_icrc_matches_captures(void **state)
{
	const char *files[] = {
		"../shared/captures/magnate3__linux-riscv-dev__rocev2_test.pcap",
		"../shared/captures/magnate3__linux-riscv-dev__read2.pcap",
		"../shared/captures/magnate3__linux-riscv-dev__write.pcap",
	};
	int checked = 0;
	for (size_t f = 0; f < sizeof(files) / sizeof(files[0]); f++) {
		char err[PCAP_ERRBUF_SIZE];
		if (access(files[f], R_OK) != 0)
			continue;
		pcap_t *p = pcap_open_offline(files[f], err);
		assert_non_null(p);
		struct pcap_pkthdr *hdr;
		const u_char *d;
		while (pcap_next_ex(p, &hdr, &d) == 1) {
			if (hdr->caplen != hdr->len || hdr->len < 14 + 20 + 8 + 12 + 4)
				continue;
			if (d[12] != 0x08 || d[13] != 0x00 || d[14 + 9] != 17)
				continue;
			const u_char *ip = d + 14;
			const u_char *udp = ip + (ip[0] & 15) * 4;
			if ((udp[2] << 8 | udp[3]) != 4791)
				continue;
			size_t len = hdr->len - 14 - 4;
			const u_char *q = d + hdr->len - 4;
			uint32_t want = (uint32_t)q[0] | q[1] << 8 | q[2] << 16 | (uint32_t)q[3] << 24;
			assert_int_equal(roce_icrc(ip, len, 4), want);
			checked++;
		}
		pcap_close(p);
	}
	if (!checked)
		skip();	/* ../shared absent */
	assert_true(checked > 100);
}

static uint16_t csum16(const uint8_t *p, size_t n)
{
	uint32_t s = 0;
	for (size_t i = 0; i + 1 < n; i += 2)
		s += (uint32_t)p[i] << 8 | p[i + 1];
	if (n & 1)
		s += (uint32_t)p[n - 1] << 8;
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)s;
}

static void test_build_ipv4_vlan_and_parse(void **state)
{
	struct roce_frame_addr a = {
		.src_mac = {2, 0, 0, 0, 0, 1}, .dst_mac = {2, 0, 0, 1, 0, 0}, .vlan_id = 100,
		.vlan_pcp = 3, .ip_version = 4, .dscp = 26, .ecn = 2, .ttl = 64, .ip_id = 7,
		.udp_sport = 49153,
	};
	a.src_ip[10] = a.src_ip[11] = a.dst_ip[10] = a.dst_ip[11] = 0xff;
	memcpy(a.src_ip + 12, (uint8_t[]){198, 18, 0, 10}, 4);
	memcpy(a.dst_ip + 12, (uint8_t[]){198, 18, 0, 11}, 4);
	struct roce_pkt p = {.opcode = ROCE_OPCODE(ROCE_TR_RC, ROCE_OP_WRITE_ONLY_IMM),
			     .dest_qp = 0x123456, .psn = 0xabcdef, .flags = ROCE_F_ACK_REQ,
			     .reth_va = 0x1122334455667788ull, .reth_rkey = 0x99, .reth_dma_len = 5,
			     .imm_data = 0xdeadbeef, .payload_len = 5};
	uint8_t buf[ROCE_FRAME_MAX];
	size_t n = roce_frame_build(buf, sizeof(buf), &a, &p, NULL, true);
	/* 18 Eth+VLAN, 20 IP, 8 UDP, 12 BTH, 16 RETH, 4 ImmDt, 5 payload + 3 pad, 4 ICRC */
	assert_int_equal(n, 18 + 20 + 8 + 12 + 16 + 4 + 8 + 4);
	assert_int_equal(buf[12] << 8 | buf[13], 0x8100);
	assert_int_equal((buf[14] << 8 | buf[15]) & 0xfff, 100);
	assert_int_equal(buf[14] >> 5, 3);
	const uint8_t *ip = buf + 18;
	assert_int_equal(ip[1], 26 << 2 | 2);
	assert_int_equal(csum16(ip, 20), 0xffff);	/* header checksum verifies */
	assert_int_equal(ip[2] << 8 | ip[3], n - 18);
	const uint8_t *bth = ip + 28;
	assert_int_equal((bth[1] >> 4) & 3, 3);		/* pad count */
	uint32_t icrc = roce_icrc(ip, n - 18 - 4, 4);
	const uint8_t *q = buf + n - 4;
	assert_int_equal((uint32_t)q[0] | q[1] << 8 | q[2] << 16 | (uint32_t)q[3] << 24, icrc);
	/* The ICRC does not cover TTL, TOS (ECN), or the BTH FECN/BECN byte. */
	buf[18 + 8] = 61;
	buf[18 + 1] |= 3;
	buf[18 + 28 + 4] = 0x80;
	assert_int_equal(roce_icrc(ip, n - 18 - 4, 4), icrc);
	buf[n - 10] ^= 1;	/* payload byte */
	assert_int_not_equal(roce_icrc(ip, n - 18 - 4, 4), icrc);

	struct roce_pkt back;
	assert_int_equal(roce_frame_parse_transport(bth, n - 18 - 28, &back), 0);
	assert_int_equal(back.dest_qp, 0x123456);
	assert_int_equal(back.psn, 0xabcdef);
	assert_true(back.flags & ROCE_F_ACK_REQ);
	assert_int_equal(back.reth_va, 0x1122334455667788ull);
	assert_int_equal(back.reth_dma_len, 5);
	assert_int_equal(back.imm_data, 0xdeadbeef);
	assert_int_equal(back.payload_len, 5);
	assert_int_equal(roce_frame_parse_transport(bth, 11, &back), -4);
	assert_int_equal(roce_frame_parse_transport(bth, 20, &back), -5);
}

static void test_build_ipv6_udp_checksum(void **state)
{
	struct roce_frame_addr a = {.ip_version = 6, .dscp = 26, .ecn = 3, .ttl = 64,
				    .flow_label = 0x12345, .udp_sport = 50000};
	a.src_ip[0] = a.dst_ip[0] = 0xfd;
	a.src_ip[1] = a.dst_ip[1] = 0x99;
	a.src_ip[15] = 0x10;
	a.dst_ip[15] = 0x11;
	struct roce_pkt p = {.opcode = ROCE_OPCODE(ROCE_TR_RC, ROCE_OP_ACK), .dest_qp = 5,
			     .psn = 9, .aeth_syndrome = 0x60, .aeth_msn = 3};
	uint8_t buf[ROCE_FRAME_MAX];
	size_t n = roce_frame_build(buf, sizeof(buf), &a, &p, NULL, true);
	assert_int_equal(n, 14 + 40 + 8 + 12 + 4 + 4);
	const uint8_t *ip = buf + 14;
	assert_int_equal(ip[0] >> 4, 6);
	/* UDP checksum over the pseudo header verifies to 0xffff. */
	uint8_t pseudo[40 + 8 + 12 + 4 + 4];
	size_t udp_len = n - 14 - 40;
	memcpy(pseudo, ip + 8, 32);
	uint32_t s = csum16(pseudo, 32) + (uint32_t)udp_len + 17 + csum16(ip + 40, udp_len);
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	assert_int_equal(s, 0xffff);
	struct roce_pkt back;
	assert_int_equal(roce_frame_parse_transport(ip + 48, udp_len - 8, &back), 0);
	assert_int_equal(back.aeth_syndrome, 0x60);
	assert_int_equal(back.aeth_msn, 3);
	assert_int_equal(back.payload_len, 0);
	/* CNP: BTH + 16 reserved bytes + ICRC. */
	struct roce_pkt cnp = {.opcode = ROCE_OPCODE_CNP, .dest_qp = 7, .becn = 1};
	assert_int_equal(roce_frame_build_transport(buf, sizeof(buf), &cnp, NULL), 12 + 16 + 4);
	assert_int_equal(roce_ext_header_bytes(ROCE_OPCODE(ROCE_TR_UD, ROCE_OP_SEND_ONLY_IMM)), 12);
	assert_int_equal(roce_frame_build(buf, 40, &a, &p, NULL, true), 0);	/* does not fit */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_crc32_check_value),
		cmocka_unit_test(test_icrc_matches_captures),
		cmocka_unit_test(test_build_ipv4_vlan_and_parse),
		cmocka_unit_test(test_build_ipv6_udp_checksum),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
