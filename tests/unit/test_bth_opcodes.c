/* test_bth_opcodes.c: the decoder and the XDP program read one opcode table (lib/decode/bth_opcodes.h). */
#include <pcap/dlt.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "lib/decode/bth_opcodes.h"
#include "lib/decode/roce_decode.h"

#define PAYLOAD_AFTER_BTH 64 /* bytes between the BTH and the ICRC, more than any header sequence */

/* The XDP program's table, built as bpf/roce_capture.bpf.c builds it. */
static const uint8_t capture_header_bytes[256] = BTH_HEADER_BYTES_INIT;

/* An IPv4/UDP 4791 packet (DLT_RAW): BTH with this opcode, PAYLOAD_AFTER_BTH bytes, ICRC. */
static size_t build_frame(uint8_t *f, uint8_t opcode)
{
	size_t udp_len = 8 + 12 + PAYLOAD_AFTER_BTH + 4, len = 20 + udp_len;

	memset(f, 0, len);
	f[0] = 0x45;			/* IPv4, 20-byte header */
	f[2] = (uint8_t)(len >> 8);
	f[3] = (uint8_t)len;
	f[8] = 64;			/* TTL */
	f[9] = 17;			/* UDP */
	memcpy(f + 12, "\xc6\x12\x00\x01\xc6\x12\x00\x02", 8);
	f[20] = 0xc0;			/* source port 49152 */
	f[22] = 4791 >> 8;
	f[23] = 4791 & 0xff;
	f[24] = (uint8_t)(udp_len >> 8);
	f[25] = (uint8_t)udp_len;
	f[28] = opcode;			/* BTH: no pad, TVer 0 */
	f[31] = 0xff;			/* P_Key */
	f[34] = 0x12;			/* destination QP 0x12: not QP1, no MAD */
	return len;
}

/*
 * Every opcode: the bytes the decoder takes as extended headers (what is not payload) are
 * the capture's table's, except a CNP's 16 reserved bytes, which the decoder counts as
 * payload and the capture keeps.
 */
static void test_decoder_matches_capture_table(void **state)
{
	struct roce_decode_opts opts;
	uint8_t frame[256];

	(void)state;
	roce_decode_opts_default(&opts);
	for (unsigned op = 0; op < 256; op++) {
		size_t len = build_frame(frame, (uint8_t)op);
		unsigned want = capture_header_bytes[op];
		struct roce_pkt pkt;

		if (op == BTH_OPCODE_CNP)
			want -= BTH_CNP_RESERVED_LEN;
		assert_int_equal(roce_decode_frame(&opts, DLT_RAW, frame, len, (uint32_t)len, 0, &pkt),
				 ROCE_DECODE_OK);
		assert_int_equal(pkt.opcode, op);
		assert_int_equal(PAYLOAD_AFTER_BTH - pkt.payload_len, want);
	}
}

/* The table against IBA 9.2 table 38, one opcode of each header sequence. */
static void test_table_values(void **state)
{
	static const struct {
		uint8_t opcode;
		uint8_t bytes;
	} known[] = {
		{ 0x04, 0 },  /* RC SEND Only */
		{ 0x05, 4 },  /* RC SEND Only with Immediate: ImmDt */
		{ 0x0a, 16 }, /* RC RDMA WRITE Only: RETH */
		{ 0x0b, 20 }, /* RC RDMA WRITE Only with Immediate: RETH + ImmDt */
		{ 0x11, 4 },  /* RC Acknowledge: AETH */
		{ 0x12, 12 }, /* RC ATOMIC Acknowledge: AETH + AtomicAckETH */
		{ 0x13, 28 }, /* RC CmpSwap: AtomicETH */
		{ 0x17, 4 },  /* RC SEND Only with Invalidate: IETH */
		{ 0x2a, 16 }, /* UC RDMA WRITE Only: RETH */
		{ 0x2c, 0 },  /* UC has no READ */
		{ 0x53, 40 }, /* RD CmpSwap: RDETH + DETH + AtomicETH */
		{ 0x51, 8 },  /* RD Acknowledge: RDETH + AETH */
		{ 0x55, 12 }, /* RD RESYNC: RDETH + DETH */
		{ 0x64, 8 },  /* UD SEND Only: DETH */
		{ 0x65, 12 }, /* UD SEND Only with Immediate: DETH + ImmDt */
		{ 0x81, 16 }, /* CNP: 16 reserved bytes */
		{ 0xab, 24 }, /* XRC RDMA WRITE Only with Immediate: XRCETH + RETH + ImmDt */
		{ 0xb1, 4 },  /* XRC Acknowledge: AETH, as RC */
		{ 0xc0, 0 },  /* vendor (Mellanox DC): BTH only */
		{ 0xff, 0 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		assert_int_equal(capture_header_bytes[known[i].opcode], known[i].bytes);
}

/* The opcodes the table lists are the ones the decoder names. */
static void test_table_lists_known_opcodes(void **state)
{
	static const uint8_t listed_init[256] = {
#define LISTED(op, name, hdrs) [op] = 1,
		BTH_OPCODES(LISTED)
#undef LISTED
	};

	(void)state;
	for (unsigned op = 0; op < 256; op++)
		assert_int_equal(!!roce_opcode_known((uint8_t)op), listed_init[op]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decoder_matches_capture_table),
		cmocka_unit_test(test_table_values),
		cmocka_unit_test(test_table_lists_known_opcodes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
