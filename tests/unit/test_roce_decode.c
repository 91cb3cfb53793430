/* test_roce_decode.c: the decoder over crafted frames: every header kind, link type, truncation, malformed input. */
#include <pcap/dlt.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "lib/util/byte_reader.h"
#include "lib/decode/roce_decode.h"
#include "lib/util/util.h"

#include "frame_builder.h"

/* BTH (IBA 9.2): opcode, SE/M/pad/tver, pkey, F/B, QP, A, PSN. */
static void put_bth(struct fb *f, uint8_t opcode, uint8_t pad, uint32_t qp, int ackreq, uint32_t psn)
{
	put8(f, opcode);
	put8(f, (uint8_t)(pad << 4));
	put16(f, 0xffff);
	put8(f, 0);
	put24(f, qp);
	put8(f, ackreq ? 0x80 : 0);
	put24(f, psn);
}

static const uint8_t mac_pair[12] = { 2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 2 };
static const uint8_t ip4_src[4] = { 198, 18, 0, 1 }, ip4_dst[4] = { 198, 18, 0, 2 };
static const uint8_t ip6_src[16] = { 0xfd, 0x99, [15] = 1 }, ip6_dst[16] = { 0xfd, 0x99, [15] = 2 };

struct wrap {
	int linktype;	/* DLT_EN10MB if 0 */
	int vlan_tags;	/* 0, 1 (802.1Q), 2 (QinQ 0x88a8 + 0x8100) */
	int ipv6;
	int ipv4_opt_words;
	int ipv6_ext;	/* hop-by-hop + destination options before UDP */
	uint8_t tos;
	uint16_t sport, dport;
	int udp_len_delta; /* added to the UDP length field (malformed cases) */
};

/* Wrap an IB transport part (BTH..ICRC) in UDP/IP/link-layer. */
static void wrap_v2(struct fb *f, const struct wrap *w, const struct fb *ib)
{
	int lt = w->linktype ? w->linktype : DLT_EN10MB;
	uint16_t ethertype = w->ipv6 ? 0x86dd : 0x0800;
	uint16_t udp_len = (uint16_t)(8 + ib->len + w->udp_len_delta);
	size_t ext_len = w->ipv6_ext ? 16 : 0;

	f->len = 0;
	if (lt == DLT_EN10MB) {
		putn(f, mac_pair, 12);
		if (w->vlan_tags == 2) {
			put16(f, 0x88a8);
			put16(f, 100);
		}
		if (w->vlan_tags >= 1) {
			put16(f, 0x8100);
			put16(f, w->vlan_tags == 2 ? 200 : 0x2000 | 42);
		}
		put16(f, ethertype);
	} else if (lt == DLT_LINUX_SLL) {
		put16(f, 0);
		put16(f, 1);
		put16(f, 6);
		putn(f, mac_pair, 8);
		put16(f, ethertype);
	} else if (lt == DLT_LINUX_SLL2) {
		put16(f, ethertype);
		put16(f, 0);
		put32(f, 3);
		put16(f, 1);
		put8(f, 0);
		put8(f, 6);
		putn(f, mac_pair, 8);
	}
	if (!w->ipv6) {
		size_t opt = (size_t)w->ipv4_opt_words * 4;
		put8(f, (uint8_t)(0x40 | (5 + w->ipv4_opt_words)));
		put8(f, w->tos);
		put16(f, (uint16_t)(20 + opt + 8 + ib->len));
		put16(f, 1);
		put16(f, 0x4000); /* DF */
		put8(f, 64);
		put8(f, 17);
		put16(f, 0);
		putn(f, ip4_src, 4);
		putn(f, ip4_dst, 4);
		for (size_t i = 0; i < opt; i++)
			put8(f, 1); /* NOP options */
	} else {
		put32(f, 6u << 28 | (uint32_t)w->tos << 20 | 0x12345);
		put16(f, (uint16_t)(ext_len + 8 + ib->len));
		put8(f, w->ipv6_ext ? 0 : 17);
		put8(f, 64);
		putn(f, ip6_src, 16);
		putn(f, ip6_dst, 16);
		if (w->ipv6_ext) {
			put8(f, 60); /* hop-by-hop -> destination options */
			put8(f, 0);
			putz(f, 6);
			put8(f, 17); /* destination options -> UDP */
			put8(f, 0);
			putz(f, 6);
		}
	}
	put16(f, w->sport ? w->sport : 49152);
	put16(f, w->dport ? w->dport : 4791);
	put16(f, udp_len);
	put16(f, 0);
	putn(f, ib->b, ib->len);
}

static int decode(const struct fb *f, int linktype, struct roce_pkt *p)
{
	struct roce_decode_opts o;
	roce_decode_opts_default(&o);
	return roce_decode_frame(&o, linktype, f->b, f->len, (uint32_t)f->len, 123, p);
}

/* Every prefix of a frame must decode without reading out of bounds (ASan watches). */
static void decode_all_prefixes(const struct fb *f, int linktype)
{
	struct roce_pkt p;
	for (size_t n = 0; n <= f->len; n++) {
		uint8_t *copy = malloc(n ? n : 1);
		memcpy(copy, f->b, n);
		struct roce_decode_opts o;
		roce_decode_opts_default(&o);
		int rc = roce_decode_frame(&o, linktype, copy, n, (uint32_t)f->len, 0, &p);
		assert_true(rc >= ROCE_DECODE_STATUS_MIN && rc <= ROCE_DECODE_NOT_ROCE);
		free(copy);
	}
}

static void test_rc_send_first_ipv4(void **state)
{
	struct fb ib = { 0 }, f;
	struct wrap w = { .tos = 0x6a /* DSCP 26, ECT(0) */, .sport = 51234 };
	struct roce_pkt p;
	char buf[64];

	put_bth(&ib, 0x00, 0, 0x000147, 1, 1917083);
	putz(&ib, 1024);
	putz(&ib, 4); /* ICRC */
	wrap_v2(&f, &w, &ib);
	assert_int_equal(decode(&f, DLT_EN10MB, &p), ROCE_DECODE_OK);
	assert_int_equal(p.opcode, 0x00);
	assert_int_equal(p.transport, ROCE_TR_RC);
	assert_int_equal(p.dest_qp, 0x147);
	assert_int_equal(p.psn, 1917083);
	assert_true(p.flags & ROCE_F_ACK_REQ);
	assert_int_equal(p.udp_sport, 51234);
	assert_int_equal(p.udp_dport, 4791);
	assert_int_equal(p.payload_len, 1024);
	assert_int_equal(p.roce_version, 2);
	assert_int_equal(p.ip_version, 4);
	assert_int_equal(p.dscp, 26);
	assert_int_equal(p.ecn, 2);
	assert_int_equal(p.pkey, 0xffff);
	assert_int_equal(p.ts_ns, 123);
	assert_int_equal(p.orig_len, f.len);
	assert_int_equal(p.ip_hdr_off, 14);
	assert_int_equal(p.headers, ROCE_H_BTH);
	assert_string_equal(addr_str(p.src_ip, buf, sizeof(buf)), "198.18.0.1");
	assert_string_equal(addr_str(p.dst_ip, buf, sizeof(buf)), "198.18.0.2");
	assert_string_equal(roce_opcode_name(p.opcode), "RC SEND First");
	decode_all_prefixes(&f, DLT_EN10MB);
}

static void test_reth_immdt_pad(void **state)
{
	struct fb ib = { 0 }, f;
	struct wrap w = { 0 };
	struct roce_pkt p;

	put_bth(&ib, 0x0b, 2, 0x11, 1, 7); /* RC RDMA WRITE Only with Immediate, pad 2 */
	put64(&ib, 0x00007f4a68011040ull);
	put32(&ib, 0x0005382b);
	put32(&ib, 18);
	put32(&ib, 0xdeadbeef);
	putz(&ib, 18 + 2);
	putz(&ib, 4);
	wrap_v2(&f, &w, &ib);
	assert_int_equal(decode(&f, DLT_EN10MB, &p), ROCE_DECODE_OK);
	assert_int_equal(p.headers, ROCE_H_BTH | ROCE_H_RETH | ROCE_H_IMMDT);
	assert_int_equal(p.reth_va, 0x00007f4a68011040ull);
	assert_int_equal(p.reth_rkey, 0x0005382b);
	assert_int_equal(p.reth_dma_len, 18);
	assert_int_equal(p.imm_data, 0xdeadbeef);
	assert_int_equal(p.pad_count, 2);
	assert_int_equal(p.payload_len, 18);
	decode_all_prefixes(&f, DLT_EN10MB);
}

static void test_aeth_kinds(void **state)
{
	static const struct {
		uint8_t syndrome;
		const char *name;
	} cases[] = {
		{ 0x1f, "ACK" },
		{ 0x2e, "RNR NAK" },
		{ 0x60, "NAK PSN sequence error" },
		{ 0x61, "NAK invalid request" },
		{ 0x62, "NAK remote access error" },
		{ 0x63, "NAK remote operational error" },
		{ 0x64, "NAK invalid RD request" },
		{ 0x4a, "reserved" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct fb ib = { 0 }, f;
		struct wrap w = { 0 };
		struct roce_pkt p;

		put_bth(&ib, 0x11, 0, 0x151, 0, 8622477);
		put8(&ib, cases[i].syndrome);
		put24(&ib, 929);
		putz(&ib, 4);
		wrap_v2(&f, &w, &ib);
		assert_int_equal(decode(&f, DLT_EN10MB, &p), ROCE_DECODE_OK);
		assert_int_equal(p.headers, ROCE_H_BTH | ROCE_H_AETH);
		assert_int_equal(p.aeth_syndrome, cases[i].syndrome);
		assert_int_equal(p.aeth_msn, 929);
		assert_int_equal(p.payload_len, 0);
		assert_string_equal(roce_aeth_name(p.aeth_syndrome), cases[i].name);
	}
	assert_string_equal(roce_opcode_name(0x11), "RC Acknowledge");
}

static void test_read_and_atomics(void **state)
{
	struct fb ib = { 0 }, f;
	struct wrap w = { 0 };
	struct roce_pkt p;

	/* READ response first: AETH then payload */
	put_bth(&ib, 0x0d, 0, 0x22, 0, 100);
	put8(&ib, 0x00);
	put24(&ib, 5);
	putz(&ib, 256 + 4);
	wrap_v2(&f, &w, &ib);
	assert_int_equal(decode(&f, DLT_EN10MB, &p), ROCE_DECODE_OK);
	assert_int_equal(p.headers, ROCE_H_BTH | ROCE_H_AETH);
	assert_int_equal(p.payload_len, 256);
	/* READ response middle: nothing after BTH */
	ib.len = 0;
	put_bth(&ib, 0x0e, 0, 0x22, 0, 101);
	putz(&ib, 256 + 4);
	wrap_v2(&f, &w, &ib);
	assert_int_equal(decode(&f, DLT_EN10MB, &p), ROCE_DECODE_OK);
	assert_int_equal(p.headers, ROCE_H_BTH);
	/* CmpSwap: AtomicETH */
	ib.len = 0;
	put_bth(&ib, 0x13, 0, 0x22, 1, 102);
	put64(&ib, 0x1000);
	put32(&ib, 0xabcd);
	put64(&ib, 5);
	put64(&ib, 6);
	putz(&ib, 4);
	wrap_v2(&f, &w, &ib);
	assert_int_equal(decode(&f, DLT_EN10MB, &p), ROCE_DECODE_OK);
	assert_int_equal(p.headers, ROCE_H_BTH | ROCE_H_ATOMICETH);
	assert_int_equal(p.atomic_va, 0x1000);
	assert_int_equal(p.atomic_rkey, 0xabcd);
	assert_int_equal(p.atomic_swap_add, 5);
	assert_int_equal(p.atomic_compare, 6);
	assert_int_equal(p.payload_len, 0);
	decode_all_prefixes(&f, DLT_EN10MB);
	/* Atomic ACK: AETH + AtomicAckETH */
	ib.len = 0;
	put_bth(&ib, 0x12, 0, 0x33, 0, 102);
	put8(&ib, 0x1f);
	put24(&ib, 9);
	put64(&ib, 0x77);
	putz(&ib, 4);
	wrap_v2(&f, &w, &ib);
	assert_int_equal(decode(&f, DLT_EN10MB, &p), ROCE_DECODE_OK);
	assert_int_equal(p.headers, ROCE_H_BTH | ROCE_H_AETH | ROCE_H_ATOMICACKETH);
	assert_int_equal(p.atomic_orig, 0x77);
	assert_int_equal(p.aeth_msn, 9);
	/* SEND Last with Invalidate: IETH */
	ib.len = 0;
	put_bth(&ib, 0x16, 0, 0x33, 1, 103);
	put32(&ib, 0x4455);
	putz(&ib, 8 + 4);
	wrap_v2(&f, &w, &ib);
	assert_int_equal(decode(&f, DLT_EN10MB, &p), ROCE_DECODE_OK);
	assert_int_equal(p.headers, ROCE_H_BTH | ROCE_H_IETH);
	assert_int_equal(p.ieth_rkey, 0x4455);
	assert_int_equal(p.payload_len, 8);
}

/* CM REQ in a UD SEND Only to QP1 (IBA 12.6.5 table 106 offsets). */
static void put_cm_req(struct fb *ib)
{
	put_bth(ib, 0x64, 0, 1, 0, 80);
	put32(ib, 0x80010000); /* DETH Q_Key */
	put32(ib, 1);	       /* DETH source QP 1 */
	/* MAD header: base version 1, class 7 (CM), class version 2, method 3 (Send) */
	put8(ib, 1);
	put8(ib, 0x07);
	put8(ib, 2);
	put8(ib, 3);
	put16(ib, 0);
	put16(ib, 0);
	put64(ib, 0x1122334455667788ull);
	put16(ib, CM_ATTR_REQ);
	put16(ib, 0);
	put32(ib, 0);
	/* REQ: local comm ID @0, service ID @8, CA GUID @16, Q_Key @28, QPN @32, PSN @44 */
	size_t msg = ib->len;
	putz(ib, 232);
	put_be32(ib->b + msg + 0, 0x3eb0bde5);
	put_be24(ib->b + msg + 32, 0x0000dc);
	put_be24(ib->b + msg + 44, 97325);
	putz(ib, 4);
}

static void test_ud_cm_req(void **state)
{
	struct fb ib = { 0 }, f;
	struct wrap w = { 0 };
	struct roce_pkt p;

	put_cm_req(&ib);
	wrap_v2(&f, &w, &ib);
	assert_int_equal(decode(&f, DLT_EN10MB, &p), ROCE_DECODE_OK);
	assert_int_equal(p.transport, ROCE_TR_UD);
	assert_int_equal(p.headers, ROCE_H_BTH | ROCE_H_DETH | ROCE_H_MAD);
	assert_int_equal(p.deth_qkey, 0x80010000);
	assert_int_equal(p.deth_src_qp, 1);
	assert_true(p.flags & ROCE_F_CM);
	assert_int_equal(p.mad_mgmt_class, 7);
	assert_int_equal(p.cm_attr_id, CM_ATTR_REQ);
	assert_int_equal(p.cm_local_comm_id, 0x3eb0bde5);
	assert_int_equal(p.cm_local_qpn, 0xdc);
	assert_int_equal(p.cm_start_psn, 97325);
	assert_int_equal(p.payload_len, 256);
	assert_string_equal(roce_cm_attr_name(p.cm_attr_id), "REQ");
	assert_null(roce_cm_attr_name(0x0099));
	decode_all_prefixes(&f, DLT_EN10MB);

	/* The same MAD cut short by the capture: decoded as far as it goes. */
	struct roce_decode_opts o;
	roce_decode_opts_default(&o);
	size_t cut = f.len - 4 - 232 + 40; /* CM message cut at byte 40: QPN there, PSN not */
	assert_int_equal(roce_decode_frame(&o, DLT_EN10MB, f.b, cut, (uint32_t)f.len, 0, &p),
			 ROCE_DECODE_OK);
	assert_true(p.flags & ROCE_F_CM);
	assert_true(p.flags & ROCE_F_TRUNCATED);
	assert_int_equal(p.cm_local_qpn, 0xdc);
	assert_int_equal(p.cm_start_psn, 0);
}

static void test_cm_rep_rtu(void **state)
{
	struct fb ib = { 0 }, f;
	struct wrap w = { 0 };
	struct roce_pkt p;

	put_cm_req(&ib);
	/* Turn it into a REP: attribute 0x13, REP offsets (table 110): remote @4, QPN @12, PSN @20 */
	size_t mad = 12 + 8, msg = mad + 24;
	put_be16(ib.b + mad + 16, CM_ATTR_REP);
	memset(ib.b + msg, 0, 232);
	put_be32(ib.b + msg + 0, 0xe8ac7105);
	put_be32(ib.b + msg + 4, 0x3eb0bde5);
	put_be24(ib.b + msg + 12, 0x8d);
	put_be24(ib.b + msg + 20, 14432175);
	wrap_v2(&f, &w, &ib);
	assert_int_equal(decode(&f, DLT_EN10MB, &p), ROCE_DECODE_OK);
	assert_int_equal(p.cm_attr_id, CM_ATTR_REP);
	assert_int_equal(p.cm_local_comm_id, 0xe8ac7105);
	assert_int_equal(p.cm_remote_comm_id, 0x3eb0bde5);
	assert_int_equal(p.cm_local_qpn, 0x8d);
	assert_int_equal(p.cm_start_psn, 14432175);
	/* REJ: reason at 10 */
	put_be16(ib.b + mad + 16, CM_ATTR_REJ);
	put_be16(ib.b + msg + 10, 28);
	wrap_v2(&f, &w, &ib);
	assert_int_equal(decode(&f, DLT_EN10MB, &p), ROCE_DECODE_OK);
	assert_int_equal(p.cm_attr_id, CM_ATTR_REJ);
	assert_int_equal(p.cm_rej_reason, 28);
	assert_int_equal(p.cm_local_qpn, 0);
	/* DREQ: remote QPN at 8 */
	put_be16(ib.b + mad + 16, CM_ATTR_DREQ);
	put_be24(ib.b + msg + 8, 0x123);
	wrap_v2(&f, &w, &ib);
	assert_int_equal(decode(&f, DLT_EN10MB, &p), ROCE_DECODE_OK);
	assert_int_equal(p.cm_remote_qpn, 0x123);
	/* Not the CM class: MAD header only */
	ib.b[mad + 1] = 0x03;
	wrap_v2(&f, &w, &ib);
	assert_int_equal(decode(&f, DLT_EN10MB, &p), ROCE_DECODE_OK);
	assert_true(p.headers & ROCE_H_MAD);
	assert_false(p.flags & ROCE_F_CM);
	assert_int_equal(p.mad_mgmt_class, 3);
}

static void test_xrc_rd_cnp_vendor(void **state)
{
	struct fb ib = { 0 }, f;
	struct wrap w = { 0 };
	struct roce_pkt p;

	/* XRC RDMA WRITE First: XRCETH then RETH */
	put_bth(&ib, 0xa6, 0, 0x44, 0, 1);
	put32(&ib, 0x00abcdef);
	put64(&ib, 0x2000);
	put32(&ib, 0x99);
	put32(&ib, 4096);
	putz(&ib, 1024 + 4);
	wrap_v2(&f, &w, &ib);
	assert_int_equal(decode(&f, DLT_EN10MB, &p), ROCE_DECODE_OK);
	assert_int_equal(p.transport, ROCE_TR_XRC);
	assert_int_equal(p.headers, ROCE_H_BTH | ROCE_H_XRCETH | ROCE_H_RETH);
	assert_int_equal(p.xrc_srq, 0xabcdef);
	assert_int_equal(p.reth_dma_len, 4096);
	assert_int_equal(p.payload_len, 1024);
	/* XRC ACK: no XRCETH on responses */
	ib.len = 0;
	put_bth(&ib, 0xb1, 0, 0x44, 0, 1);
	put8(&ib, 0x1f);
	put24(&ib, 1);
	putz(&ib, 4);
	wrap_v2(&f, &w, &ib);
	assert_int_equal(decode(&f, DLT_EN10MB, &p), ROCE_DECODE_OK);
	assert_int_equal(p.headers, ROCE_H_BTH | ROCE_H_AETH);
	/* RD SEND Only: RDETH + DETH */
	ib.len = 0;
	put_bth(&ib, 0x44, 0, 0x55, 0, 1);
	put32(&ib, 0x00000777);
	put32(&ib, 0x11111111);
	put32(&ib, 0x00000999);
	putz(&ib, 100 + 4);
	wrap_v2(&f, &w, &ib);
	assert_int_equal(decode(&f, DLT_EN10MB, &p), ROCE_DECODE_OK);
	assert_int_equal(p.transport, ROCE_TR_RD);
	assert_int_equal(p.headers, ROCE_H_BTH | ROCE_H_RDETH | ROCE_H_DETH);
	assert_int_equal(p.rdeth_ee_context, 0x777);
	assert_int_equal(p.deth_qkey, 0x11111111);
	assert_int_equal(p.deth_src_qp, 0x999);
	assert_int_equal(p.payload_len, 100);
	/* CNP: BTH + 16 reserved bytes + ICRC, ECN and BECN kept */
	ib.len = 0;
	put_bth(&ib, ROCE_OPCODE_CNP, 0, 0x66, 0, 0);
	ib.b[4] = 0x40; /* BECN */
	putz(&ib, 16 + 4);
	w.tos = 0x03;
	wrap_v2(&f, &w, &ib);
	assert_int_equal(decode(&f, DLT_EN10MB, &p), ROCE_DECODE_OK);
	assert_int_equal(p.opcode, ROCE_OPCODE_CNP);
	assert_int_equal(p.transport, ROCE_TR_CNP);
	assert_int_equal(p.becn, 1);
	assert_int_equal(p.ecn, 3);
	assert_int_equal(p.payload_len, 16);
	assert_string_equal(roce_opcode_name(0x81), "CNP");
	/* Mellanox DC opcode: recognised, BTH only, nothing mis-decoded */
	ib.len = 0;
	put_bth(&ib, 0xc4, 0, 0x77, 0, 5);
	putz(&ib, 64 + 4);
	wrap_v2(&f, &w, &ib);
	assert_int_equal(decode(&f, DLT_EN10MB, &p), ROCE_DECODE_OK);
	assert_true(p.flags & ROCE_F_VENDOR_OPCODE);
	assert_int_equal(p.transport, ROCE_TR_MLX_DC);
	assert_int_equal(p.headers, ROCE_H_BTH);
	assert_int_equal(p.payload_len, 64);
	/* Reserved RC opcode 0x15: BTH only, flagged */
	ib.b[0] = 0x15;
	wrap_v2(&f, &w, &ib);
	assert_int_equal(decode(&f, DLT_EN10MB, &p), ROCE_DECODE_OK);
	assert_true(p.flags & ROCE_F_RESERVED_OPCODE);
	assert_false(roce_opcode_known(0x15));
	assert_true(roce_opcode_known(0x64));
}

static void simple_ib(struct fb *ib)
{
	ib->len = 0;
	put_bth(ib, 0x04, 0, 0x1234, 1, 42);
	putz(ib, 32 + 4);
}

static void check_simple(const struct roce_pkt *p)
{
	assert_int_equal(p->opcode, 0x04);
	assert_int_equal(p->dest_qp, 0x1234);
	assert_int_equal(p->psn, 42);
	assert_int_equal(p->payload_len, 32);
}

static void test_link_types(void **state)
{
	static const struct {
		int linktype;
		int ipv6;
		size_t ip_off;
	} cases[] = {
		{ DLT_EN10MB, 0, 14 },	   { DLT_EN10MB, 1, 14 },  { DLT_LINUX_SLL, 0, 16 },
		{ DLT_LINUX_SLL2, 1, 20 }, { DLT_RAW, 0, 0 },	   { DLT_RAW, 1, 0 },
		{ DLT_IPV4, 0, 0 },	   { DLT_IPV6, 1, 0 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct fb ib, f;
		struct wrap w = { .linktype = cases[i].linktype, .ipv6 = cases[i].ipv6, .tos = 0x0b };
		struct roce_pkt p;
		char buf[64];

		simple_ib(&ib);
		wrap_v2(&f, &w, &ib);
		assert_int_equal(decode(&f, cases[i].linktype, &p), ROCE_DECODE_OK);
		check_simple(&p);
		assert_int_equal(p.ip_hdr_off, cases[i].ip_off);
		assert_int_equal(p.ip_version, cases[i].ipv6 ? 6 : 4);
		assert_int_equal(p.ecn, 3);
		assert_int_equal(p.dscp, 2);
		assert_int_equal(p.linktype, cases[i].linktype);
		assert_string_equal(addr_str(p.src_ip, buf, sizeof(buf)),
				    cases[i].ipv6 ? "fd99::1" : "198.18.0.1");
		decode_all_prefixes(&f, cases[i].linktype);
	}
}

static void test_vlan_qinq(void **state)
{
	struct fb ib, f;
	struct wrap w = { .vlan_tags = 1 };
	struct roce_pkt p;

	simple_ib(&ib);
	wrap_v2(&f, &w, &ib);
	assert_int_equal(decode(&f, DLT_EN10MB, &p), ROCE_DECODE_OK);
	check_simple(&p);
	assert_true(p.flags & ROCE_F_VLAN);
	assert_false(p.flags & ROCE_F_QINQ);
	assert_int_equal(p.vlan_id, 42);
	assert_int_equal(p.ip_hdr_off, 18);
	w.vlan_tags = 2;
	wrap_v2(&f, &w, &ib);
	assert_int_equal(decode(&f, DLT_EN10MB, &p), ROCE_DECODE_OK);
	check_simple(&p);
	assert_true(p.flags & ROCE_F_QINQ);
	assert_int_equal(p.vlan_id, 100); /* the outer tag */
	assert_int_equal(p.ip_hdr_off, 22);
	decode_all_prefixes(&f, DLT_EN10MB);
}

static void test_ipv4_options_ipv6_ext(void **state)
{
	struct fb ib, f;
	struct wrap w = { .ipv4_opt_words = 3 };
	struct roce_pkt p;

	simple_ib(&ib);
	wrap_v2(&f, &w, &ib);
	assert_int_equal(decode(&f, DLT_EN10MB, &p), ROCE_DECODE_OK);
	check_simple(&p);
	assert_true(p.flags & ROCE_F_IPV4_OPTIONS);
	decode_all_prefixes(&f, DLT_EN10MB);

	struct wrap w6 = { .ipv6 = 1, .ipv6_ext = 1 };
	wrap_v2(&f, &w6, &ib);
	assert_int_equal(decode(&f, DLT_EN10MB, &p), ROCE_DECODE_OK);
	check_simple(&p);
	assert_int_equal(p.ip_version, 6);
	decode_all_prefixes(&f, DLT_EN10MB);
	/* A non-first IPv6 fragment is not a whole RoCE packet */
	f.b[14 + 6] = 44; /* next header: fragment */
	f.b[14 + 40 + 2] = 0x01;
	assert_int_equal(decode(&f, DLT_EN10MB, &p), ROCE_DECODE_NOT_ROCE);
}

/* RoCE v1: EtherType 0x8915, GRH (next header 0x1b), BTH. */
static void test_roce_v1(void **state)
{
	struct fb ib, f = { 0 };
	struct roce_pkt p;
	char buf[64];

	simple_ib(&ib);
	putn(&f, mac_pair, 12);
	put16(&f, 0x8915);
	put32(&f, 6u << 28 | 0x03u << 20); /* traffic class: ECN CE */
	put16(&f, (uint16_t)ib.len);
	put8(&f, 0x1b);
	put8(&f, 1);
	putn(&f, ip6_src, 16);
	putn(&f, ip6_dst, 16);
	putn(&f, ib.b, ib.len);
	putz(&f, 10); /* trailing bytes beyond PayLen are ignored */
	assert_int_equal(decode(&f, DLT_EN10MB, &p), ROCE_DECODE_OK);
	check_simple(&p);
	assert_int_equal(p.roce_version, 1);
	assert_true(p.headers & ROCE_H_GRH);
	assert_int_equal(p.ecn, 3);
	assert_string_equal(addr_str(p.dst_ip, buf, sizeof(buf)), "fd99::2");
	decode_all_prefixes(&f, DLT_EN10MB);
	f.b[14 + 6] = 0x11; /* next header not BTH */
	assert_int_equal(decode(&f, DLT_EN10MB, &p), ROCE_DECODE_BAD_GRH);
}

/* Native InfiniBand (DLT_INFINIBAND): LRH, optional GRH, BTH, ..., ICRC, VCRC. */
static void test_native_infiniband(void **state)
{
	struct fb ib, f = { 0 };
	struct roce_pkt p;

	simple_ib(&ib);
	put8(&f, 0x00);	       /* VL 0, LVer 0 */
	put8(&f, 0x02);	       /* SL 0, LNH 2: BTH follows */
	put16(&f, 0x0003);     /* DLID */
	put16(&f, (uint16_t)((8 + ib.len) / 4));
	put16(&f, 0x0001);     /* SLID */
	putn(&f, ib.b, ib.len);
	putz(&f, 2); /* VCRC */
	assert_int_equal(decode(&f, DLT_INFINIBAND, &p), ROCE_DECODE_OK);
	check_simple(&p);
	assert_int_equal(p.roce_version, 0);
	assert_int_equal(p.ib_dlid, 3);
	assert_int_equal(p.ib_slid, 1);
	decode_all_prefixes(&f, DLT_INFINIBAND);
	f.b[1] = 0x01; /* LNH 1: IP, not IBA transport */
	assert_int_equal(decode(&f, DLT_INFINIBAND, &p), ROCE_DECODE_NOT_ROCE);
}

static void test_not_roce_and_ports(void **state)
{
	struct fb ib, f;
	struct wrap w = { .dport = 4792 };
	struct roce_pkt p;
	struct roce_decode_opts o;

	simple_ib(&ib);
	wrap_v2(&f, &w, &ib);
	assert_int_equal(decode(&f, DLT_EN10MB, &p), ROCE_DECODE_NOT_ROCE);
	roce_decode_opts_default(&o);
	o.udp_ports[1] = 4792;
	assert_int_equal(roce_decode_frame(&o, DLT_EN10MB, f.b, f.len, (uint32_t)f.len, 0, &p),
			 ROCE_DECODE_OK);
	/* Source port 4791 alone does not make RoCE */
	w.sport = 4791;
	w.dport = 53;
	wrap_v2(&f, &w, &ib);
	assert_int_equal(decode(&f, DLT_EN10MB, &p), ROCE_DECODE_NOT_ROCE);
	/* TCP */
	w.dport = 0;
	wrap_v2(&f, &w, &ib);
	f.b[14 + 9] = 6;
	assert_int_equal(decode(&f, DLT_EN10MB, &p), ROCE_DECODE_NOT_ROCE);
	/* ARP */
	f.b[12] = 0x08;
	f.b[13] = 0x06;
	assert_int_equal(decode(&f, DLT_EN10MB, &p), ROCE_DECODE_NOT_ROCE);
	/* IPv4 fragment */
	wrap_v2(&f, &w, &ib);
	put_be16(f.b + 14 + 6, 0x2000);
	assert_int_equal(decode(&f, DLT_EN10MB, &p), ROCE_DECODE_NOT_ROCE);
}

static void test_truncated_and_origlen(void **state)
{
	struct fb ib = { 0 }, f;
	struct wrap w = { 0 };
	struct roce_pkt p;
	struct roce_decode_opts o;
	size_t ip_end;

	roce_decode_opts_default(&o);
	put_bth(&ib, 0x06, 0, 0x99, 1, 1000); /* RDMA WRITE First: RETH */
	put64(&ib, 0x5000);
	put32(&ib, 0x1);
	put32(&ib, 8192);
	putz(&ib, 4096 - 16 - 12 - 4 > 0 ? 1000 : 0);
	putz(&ib, 4);
	wrap_v2(&f, &w, &ib);
	ip_end = f.len;

	/* snaplen 128: the whole RETH captured, payload cut; origlen tells the truth */
	assert_int_equal(roce_decode_frame(&o, DLT_EN10MB, f.b, 128, (uint32_t)f.len, 0, &p),
			 ROCE_DECODE_OK);
	assert_int_equal(p.headers, ROCE_H_BTH | ROCE_H_RETH);
	assert_false(p.flags & ROCE_F_TRUNCATED);
	assert_false(p.flags & ROCE_F_ORIGLEN_FROM_IP);
	assert_int_equal(p.cap_len, 128);
	assert_int_equal(p.orig_len, f.len);
	assert_int_equal(p.payload_len, 1000);
	/* snaplen cutting the RETH: BTH kept, TRUNCATED set, RETH not claimed */
	size_t cut = 14 + 20 + 8 + 12 + 6;
	assert_int_equal(roce_decode_frame(&o, DLT_EN10MB, f.b, cut, (uint32_t)f.len, 0, &p),
			 ROCE_DECODE_OK);
	assert_true(p.flags & ROCE_F_TRUNCATED);
	assert_int_equal(p.headers, ROCE_H_BTH);
	assert_int_equal(p.psn, 1000);
	assert_int_equal(p.reth_dma_len, 0);
	assert_int_equal(p.payload_len, 1000);
	/* The capture recorded origlen == caplen: the IP header knows better */
	assert_int_equal(roce_decode_frame(&o, DLT_EN10MB, f.b, 128, 128, 0, &p), ROCE_DECODE_OK);
	assert_true(p.flags & ROCE_F_ORIGLEN_FROM_IP);
	assert_int_equal(p.orig_len, ip_end);
	/* Ethernet padding after the IP datagram is not payload */
	struct fb small = { 0 };
	put_bth(&small, 0x11, 0, 0x1, 0, 1);
	put8(&small, 0x1f);
	put24(&small, 1);
	putz(&small, 4);
	wrap_v2(&f, &w, &small);
	putz(&f, 60 - f.len + 4);
	assert_int_equal(decode(&f, DLT_EN10MB, &p), ROCE_DECODE_OK);
	assert_int_equal(p.payload_len, 0);
	assert_false(p.flags & ROCE_F_ORIGLEN_FROM_IP);
}

static void test_malformed(void **state)
{
	struct fb ib, f;
	struct wrap w = { 0 };
	struct roce_pkt p;

	simple_ib(&ib);
	wrap_v2(&f, &w, &ib);
	struct fb good = f;

	assert_int_equal(roce_decode_frame(NULL, DLT_EN10MB, f.b, 10, 10, 0, &p), ROCE_DECODE_BAD_LINK);
	assert_int_equal(roce_decode_frame(NULL, 9999, f.b, f.len, (uint32_t)f.len, 0, &p),
			 ROCE_DECODE_BAD_LINK);
	assert_int_equal(roce_decode_frame(NULL, DLT_EN10MB, NULL, 0, 0, 0, &p), ROCE_DECODE_BAD_LINK);
	f.b[14] = 0x55; /* IP version 5 */
	assert_int_equal(decode(&f, DLT_EN10MB, &p), ROCE_DECODE_BAD_IP);
	f = good;
	f.b[14] = 0x44; /* IHL 4 */
	assert_int_equal(decode(&f, DLT_EN10MB, &p), ROCE_DECODE_BAD_IP);
	f = good;
	put_be16(f.b + 16, 10); /* total length < header */
	assert_int_equal(decode(&f, DLT_EN10MB, &p), ROCE_DECODE_BAD_IP);
	f = good;
	assert_int_equal(roce_decode_frame(NULL, DLT_EN10MB, f.b, 14 + 12, (uint32_t)f.len, 0, &p),
			 ROCE_DECODE_BAD_IP);
	assert_int_equal(roce_decode_frame(NULL, DLT_EN10MB, f.b, 14 + 20 + 4, (uint32_t)f.len, 0, &p),
			 ROCE_DECODE_BAD_UDP);
	w.udp_len_delta = 100; /* UDP longer than IP */
	wrap_v2(&f, &w, &ib);
	assert_int_equal(decode(&f, DLT_EN10MB, &p), ROCE_DECODE_BAD_UDP);
	f = good;
	put_be16(f.b + 14 + 20 + 4, 6); /* UDP length < 8 */
	assert_int_equal(decode(&f, DLT_EN10MB, &p), ROCE_DECODE_BAD_UDP);
	f = good;
	put_be16(f.b + 14 + 20 + 4, 8 + 10); /* too short for BTH + ICRC */
	assert_int_equal(decode(&f, DLT_EN10MB, &p), ROCE_DECODE_BAD_BTH);
	f = good;
	f.b[14 + 20 + 8 + 1] = 0x01; /* TVer 1 */
	assert_int_equal(decode(&f, DLT_EN10MB, &p), ROCE_DECODE_BAD_BTH);
	f = good;
	f.b[14 + 20 + 8] = 0x0a; /* RDMA WRITE Only: RETH does not fit before the ICRC... */
	put_be16(f.b + 14 + 20 + 4, 8 + 12 + 8 + 4);
	assert_int_equal(decode(&f, DLT_EN10MB, &p), ROCE_DECODE_BAD_EXT);
	f = good;
	f.b[14 + 20 + 8 + 1] = 0x30; /* pad 3 with 32 payload bytes is fine */
	assert_int_equal(decode(&f, DLT_EN10MB, &p), ROCE_DECODE_OK);
	assert_int_equal(p.payload_len, 29);
	/* 5 VLAN tags */
	struct fb v = { 0 };
	putn(&v, mac_pair, 12);
	for (int i = 0; i < 5; i++) {
		put16(&v, 0x8100);
		put16(&v, 1);
	}
	put16(&v, 0x0800);
	putz(&v, 40);
	assert_int_equal(decode(&v, DLT_EN10MB, &p), ROCE_DECODE_BAD_LINK);
	/* raw IP with version 7 */
	f.b[0] = 0x70;
	assert_int_equal(roce_decode_frame(NULL, DLT_RAW, f.b, 40, 40, 0, &p), ROCE_DECODE_BAD_IP);
}

/* ---- Tunnels of mirror sessions (ERSPAN I/II/III, GRE-TEB, VXLAN) ---- */

struct tun {
	int kind;		/* ROCE_ENCAP_* */
	int outer_ipv6;
	int outer_vlan_tags;	/* 0, 1 (VID 7), 2 (QinQ 5 + 7) */
	int gre_csum, gre_key;	/* GRE-TEB: optional words */
	int platform;		/* ERSPAN III: platform sub-header ID 3 */
	uint32_t session;	/* ERSPAN session ID or VXLAN VNI */
	uint32_t ts, ts_hi;
	uint8_t gra;
	int erspan_ver;		/* 0: the right one; else written as is (malformed cases) */
	int vxlan_flags;	/* 0: I set; else written as is */
	uint16_t gre_flags_extra; /* ORed into the GRE flags (malformed cases) */
};

static const uint8_t out4_src[4] = { 10, 0, 0, 1 }, out4_dst[4] = { 10, 0, 0, 9 };
static const uint8_t out6_src[16] = { 0xfd, 0, [15] = 0x11 }, out6_dst[16] = { 0xfd, 0, [15] = 0x99 };

/* The tunnel header (GRE + ERSPAN, or UDP + VXLAN) for t, then the inner frame. */
static void put_tunnel_hdr(struct fb *f, const struct tun *t, const struct fb *inner)
{
	uint16_t gre_flags = t->gre_flags_extra;

	if (t->kind == ROCE_ENCAP_VXLAN) {
		put16(f, 54321);
		put16(f, 4789);
		put16(f, (uint16_t)(8 + 8 + inner->len));
		put16(f, 0);
		put32(f, t->vxlan_flags ? (uint32_t)t->vxlan_flags : 0x08000000u);
		put32(f, (uint32_t)t->session << 8);
		return;
	}
	if (t->kind == ROCE_ENCAP_ERSPAN2 || t->kind == ROCE_ENCAP_ERSPAN3)
		gre_flags |= 0x1000; /* S */
	if (t->kind == ROCE_ENCAP_GRE_TEB)
		gre_flags |= (t->gre_csum ? 0x8000 : 0) | (t->gre_key ? 0x2000 : 0) | 0x1000;
	put16(f, gre_flags);
	put16(f, t->kind == ROCE_ENCAP_ERSPAN3 ? 0x22eb : t->kind == ROCE_ENCAP_GRE_TEB ? 0x6558 : 0x88be);
	if (gre_flags & 0x8000)
		put32(f, 0xabcd0000);
	if (gre_flags & 0x2000)
		put32(f, 0x00c0ffee);
	if (gre_flags & 0x1000)
		put32(f, 77); /* sequence number */
	if (t->kind == ROCE_ENCAP_ERSPAN2) {
		put16(f, (uint16_t)((t->erspan_ver ? t->erspan_ver : 1) << 12 | 300));
		put16(f, (uint16_t)(0x2000 | (t->session & 0x3ff))); /* COS 1 */
		put32(f, 0x12345); /* index */
	} else if (t->kind == ROCE_ENCAP_ERSPAN3) {
		put16(f, (uint16_t)((t->erspan_ver ? t->erspan_ver : 2) << 12));
		put16(f, t->session & 0x3ff);
		put32(f, t->ts);
		put32(f, 0xbeef0000u | 1u << 3 /* D */ | (uint32_t)t->gra << 1 | (t->platform ? 1 : 0));
		if (t->platform) {
			put32(f, 3u << 26 | 0x1234);
			put32(f, t->ts_hi);
		}
	}
}

static void wrap_tunnel(struct fb *f, const struct tun *t, const struct fb *inner)
{
	struct fb hdr = { 0 };
	uint8_t proto = t->kind == ROCE_ENCAP_VXLAN ? 17 : 47;

	put_tunnel_hdr(&hdr, t, inner);
	f->len = 0;
	putn(f, mac_pair, 12);
	if (t->outer_vlan_tags == 2) {
		put16(f, 0x88a8);
		put16(f, 5);
	}
	if (t->outer_vlan_tags >= 1) {
		put16(f, 0x8100);
		put16(f, 7);
	}
	if (!t->outer_ipv6) {
		put16(f, 0x0800);
		put8(f, 0x45);
		put8(f, 0);
		put16(f, (uint16_t)(20 + hdr.len + inner->len));
		put16(f, 1);
		put16(f, 0x4000);
		put8(f, 60);
		put8(f, proto);
		put16(f, 0);
		putn(f, out4_src, 4);
		putn(f, out4_dst, 4);
	} else {
		put16(f, 0x86dd);
		put32(f, 6u << 28);
		put16(f, (uint16_t)(hdr.len + inner->len));
		put8(f, proto);
		put8(f, 60);
		putn(f, out6_src, 16);
		putn(f, out6_dst, 16);
	}
	putn(f, hdr.b, hdr.len);
	putn(f, inner->b, inner->len);
}

/* The inner frame decodes inside every tunnel exactly as it does bare, and the session is kept. */
static void test_tunnel_kinds(void **state)
{
	static const struct tun cases[] = {
		{ .kind = ROCE_ENCAP_ERSPAN1 },
		{ .kind = ROCE_ENCAP_ERSPAN2, .session = 0x3ff },
		{ .kind = ROCE_ENCAP_ERSPAN2, .session = 17, .outer_ipv6 = 1, .outer_vlan_tags = 1 },
		{ .kind = ROCE_ENCAP_ERSPAN3, .session = 513, .ts = 0xdeadbeef, .gra = ERSPAN_GRA_100NS },
		{ .kind = ROCE_ENCAP_ERSPAN3, .session = 2, .ts = 999999999, .ts_hi = 1767225600,
		  .gra = ERSPAN_GRA_IEEE1588, .platform = 1, .outer_vlan_tags = 2 },
		{ .kind = ROCE_ENCAP_GRE_TEB },
		{ .kind = ROCE_ENCAP_GRE_TEB, .gre_csum = 1, .gre_key = 1, .outer_ipv6 = 1 },
		{ .kind = ROCE_ENCAP_VXLAN, .session = 0xabcdef },
		{ .kind = ROCE_ENCAP_VXLAN, .session = 5, .outer_ipv6 = 1, .outer_vlan_tags = 1 },
	};
	static const struct wrap inner_wraps[] = {
		{ .tos = 0x0b },
		{ .ipv6 = 1, .vlan_tags = 1 },
		{ .vlan_tags = 2, .sport = 1234 },
	};
	char buf[64];

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		for (size_t j = 0; j < ARRAY_SIZE(inner_wraps); j++) {
			const struct tun *t = &cases[i];
			struct fb ib, inner, f;
			struct roce_pkt bare, p;
			uint32_t want_id = t->kind == ROCE_ENCAP_GRE_TEB ? (t->gre_key ? 0x00c0ffee : 0)
										: t->session;

			simple_ib(&ib);
			wrap_v2(&inner, &inner_wraps[j], &ib);
			assert_int_equal(decode(&inner, DLT_EN10MB, &bare), ROCE_DECODE_OK);
			wrap_tunnel(&f, t, &inner);
			assert_int_equal(decode(&f, DLT_EN10MB, &p), ROCE_DECODE_OK);
			check_simple(&p);
			/* The inner frame is the packet: the same addresses, VLAN, lengths, ports. */
			assert_memory_equal(p.src_ip, bare.src_ip, 16);
			assert_memory_equal(p.dst_ip, bare.dst_ip, 16);
			assert_int_equal(p.ip_version, bare.ip_version);
			assert_int_equal(p.vlan_id, bare.vlan_id);
			assert_int_equal(p.flags, bare.flags);
			assert_int_equal(p.orig_len, bare.orig_len);
			assert_int_equal(p.cap_len, bare.cap_len);
			assert_int_equal(p.ip_hdr_off, bare.ip_hdr_off);
			assert_int_equal(p.udp_sport, bare.udp_sport);
			assert_int_equal(p.udp_dport, 4791);
			assert_int_equal(p.dscp, bare.dscp);
			assert_int_equal(p.ecn, bare.ecn);
			/* The session that delivered it. */
			assert_int_equal(p.encap, t->kind);
			assert_int_equal(p.encap_depth, 1);
			assert_int_equal(p.encap_id, want_id);
			assert_int_equal(p.encap_hdr_len, f.len - inner.len);
			assert_int_equal(p.encap_ip_version, t->outer_ipv6 ? 6 : 4);
			assert_int_equal(p.encap_vlan_id, t->outer_vlan_tags ? (t->outer_vlan_tags == 2 ? 5 : 7) : 0);
			assert_string_equal(addr_str(p.encap_src_ip, buf, sizeof(buf)),
					    t->outer_ipv6 ? "fd00::11" : "10.0.0.1");
			assert_string_equal(addr_str(p.encap_dst_ip, buf, sizeof(buf)),
					    t->outer_ipv6 ? "fd00::99" : "10.0.0.9");
			assert_int_equal(p.erspan_ts, t->ts);
			assert_int_equal(p.erspan_ts_hi, t->ts_hi);
			assert_int_equal(p.erspan_gra, t->gra);
			assert_int_equal(p.erspan_platform_id, t->platform ? 3 : 0);
			assert_int_equal(p.erspan_dir, t->kind == ROCE_ENCAP_ERSPAN3);
			decode_all_prefixes(&f, DLT_EN10MB);
		}
	}
}

/* A switch that trimmed the mirrored frame (ERSPAN T bit, or a snaplen on the collector). */
static void test_tunnel_trimmed(void **state)
{
	struct tun t = { .kind = ROCE_ENCAP_ERSPAN2, .session = 9 };
	struct fb ib, inner, f;
	struct wrap w = { 0 };
	struct roce_pkt p;
	size_t hdr;

	simple_ib(&ib);
	wrap_v2(&inner, &w, &ib);
	wrap_tunnel(&f, &t, &inner);
	hdr = f.len - inner.len;
	/* Collector snaplen cuts the ICRC and payload: origlen still says the whole frame. */
	{
		struct roce_decode_opts o;
		roce_decode_opts_default(&o);
		assert_int_equal(roce_decode_frame(&o, DLT_EN10MB, f.b, hdr + 60, (uint32_t)f.len, 0, &p),
				 ROCE_DECODE_OK);
	}
	check_simple(&p);
	assert_int_equal(p.cap_len, 60);
	assert_int_equal(p.orig_len, inner.len);
	assert_false(p.flags & ROCE_F_ORIGLEN_FROM_IP);
	/* Inner Ethernet padding and an outer FCS after the datagram are not part of the frame. */
	putz(&f, 4);
	assert_int_equal(decode(&f, DLT_EN10MB, &p), ROCE_DECODE_OK);
	assert_int_equal(p.orig_len, inner.len);
	assert_int_equal(p.cap_len, inner.len);
}

/* Two tunnels: the ERSPAN session is the one kept, whichever is outside; a third is too many. */
static void test_tunnel_nested(void **state)
{
	struct tun erspan = { .kind = ROCE_ENCAP_ERSPAN2, .session = 33 };
	struct tun vxlan = { .kind = ROCE_ENCAP_VXLAN, .session = 4242, .outer_ipv6 = 1 };
	struct fb ib, inner, mid, f;
	struct wrap w = { 0 };
	struct roce_pkt p;

	simple_ib(&ib);
	wrap_v2(&inner, &w, &ib);
	wrap_tunnel(&mid, &vxlan, &inner);
	wrap_tunnel(&f, &erspan, &mid);
	assert_int_equal(decode(&f, DLT_EN10MB, &p), ROCE_DECODE_OK);
	check_simple(&p);
	assert_int_equal(p.encap, ROCE_ENCAP_ERSPAN2);
	assert_int_equal(p.encap_id, 33);
	assert_int_equal(p.encap_depth, 2);
	assert_int_equal(p.encap_ip_version, 4);
	assert_int_equal(p.encap_hdr_len, f.len - inner.len);
	assert_int_equal(p.orig_len, inner.len);

	wrap_tunnel(&mid, &erspan, &inner);
	wrap_tunnel(&f, &vxlan, &mid);
	assert_int_equal(decode(&f, DLT_EN10MB, &p), ROCE_DECODE_OK);
	assert_int_equal(p.encap, ROCE_ENCAP_ERSPAN2);
	assert_int_equal(p.encap_id, 33);
	assert_int_equal(p.encap_ip_version, 6); /* the outermost IP */
	decode_all_prefixes(&f, DLT_EN10MB);

	wrap_tunnel(&inner, &erspan, &f);
	assert_int_equal(decode(&inner, DLT_EN10MB, &p), ROCE_DECODE_NOT_ROCE);
}

/* Malformed or foreign tunnel headers: a status, never a crash, never a guess. */
static void test_tunnel_malformed(void **state)
{
	struct fb ib, inner, f;
	struct wrap w = { 0 };
	struct roce_pkt p;
	struct tun t;

	simple_ib(&ib);
	wrap_v2(&inner, &w, &ib);

	t = (struct tun){ .kind = ROCE_ENCAP_ERSPAN2, .erspan_ver = 2 };
	wrap_tunnel(&f, &t, &inner);
	assert_int_equal(decode(&f, DLT_EN10MB, &p), ROCE_DECODE_BAD_ENCAP);
	t = (struct tun){ .kind = ROCE_ENCAP_ERSPAN3, .erspan_ver = 1 };
	wrap_tunnel(&f, &t, &inner);
	assert_int_equal(decode(&f, DLT_EN10MB, &p), ROCE_DECODE_BAD_ENCAP);
	t = (struct tun){ .kind = ROCE_ENCAP_VXLAN, .vxlan_flags = 0x01000000 }; /* I clear */
	wrap_tunnel(&f, &t, &inner);
	assert_int_equal(decode(&f, DLT_EN10MB, &p), ROCE_DECODE_BAD_ENCAP);
	/* GRE version 1 (PPTP) and source routing are some other traffic. */
	t = (struct tun){ .kind = ROCE_ENCAP_GRE_TEB, .gre_flags_extra = 0x0001 };
	wrap_tunnel(&f, &t, &inner);
	assert_int_equal(decode(&f, DLT_EN10MB, &p), ROCE_DECODE_NOT_ROCE);
	t = (struct tun){ .kind = ROCE_ENCAP_GRE_TEB, .gre_flags_extra = 0x4000 };
	wrap_tunnel(&f, &t, &inner);
	assert_int_equal(decode(&f, DLT_EN10MB, &p), ROCE_DECODE_NOT_ROCE);
	/* GRE carrying IPv4 (0x0800) is not a mirror session. */
	t = (struct tun){ .kind = ROCE_ENCAP_GRE_TEB };
	wrap_tunnel(&f, &t, &inner);
	f.b[14 + 20 + 2] = 0x08;
	f.b[14 + 20 + 3] = 0x00;
	assert_int_equal(decode(&f, DLT_EN10MB, &p), ROCE_DECODE_NOT_ROCE);
	/* A tunnel header cut by the capture. */
	t = (struct tun){ .kind = ROCE_ENCAP_ERSPAN3, .platform = 1 };
	wrap_tunnel(&f, &t, &inner);
	{
		struct roce_decode_opts o;
		roce_decode_opts_default(&o);
		assert_int_equal(roce_decode_frame(&o, DLT_EN10MB, f.b, 14 + 20 + 8 + 16, (uint32_t)f.len,
						   0, &p),
				 ROCE_DECODE_BAD_ENCAP);
		/* VXLAN turned off: UDP 4789 is other traffic. */
		t = (struct tun){ .kind = ROCE_ENCAP_VXLAN };
		wrap_tunnel(&f, &t, &inner);
		o.vxlan_port = 0;
		assert_int_equal(roce_decode_frame(&o, DLT_EN10MB, f.b, f.len, (uint32_t)f.len, 0, &p),
				 ROCE_DECODE_NOT_ROCE);
	}
	/* The outer IP length cannot end before the inner frame starts. */
	t = (struct tun){ .kind = ROCE_ENCAP_ERSPAN2 };
	wrap_tunnel(&f, &t, &inner);
	put_be16(f.b + 14 + 2, 20 + 8 + 4);
	assert_int_equal(decode(&f, DLT_EN10MB, &p), ROCE_DECODE_BAD_ENCAP);
	assert_string_equal(roce_decode_status_name(ROCE_DECODE_BAD_ENCAP), "bad-encap");
	assert_string_equal(roce_encap_name(ROCE_ENCAP_ERSPAN3), "erspan3");
	assert_string_equal(roce_encap_name(ROCE_ENCAP_NONE), "none");
	assert_string_equal(roce_encap_name(99), "unknown");
}

static void test_names(void **state)
{
	assert_string_equal(roce_decode_status_name(ROCE_DECODE_OK), "ok");
	assert_string_equal(roce_decode_status_name(ROCE_DECODE_NOT_ROCE), "not-roce");
	assert_string_equal(roce_decode_status_name(ROCE_DECODE_BAD_LINK), "bad-link");
	assert_string_equal(roce_decode_status_name(ROCE_DECODE_BAD_GRH), "bad-grh");
	assert_string_equal(roce_decode_status_name(-7), "bad-encap");
	assert_string_equal(roce_decode_status_name(-8), "unknown");
	assert_string_equal(roce_decode_status_name(5), "unknown");
	assert_string_equal(roce_transport_name(ROCE_TR_XRC), "XRC");
	assert_string_equal(roce_opcode_name(0x0a), "RC RDMA WRITE Only");
	assert_string_equal(roce_opcode_name(0x64), "UD SEND Only");
	assert_string_equal(roce_opcode_name(0x2a), "UC RDMA WRITE Only");
	assert_string_equal(roce_opcode_name(0x2c), "reserved"); /* UC has no READ */
	assert_string_equal(roce_opcode_name(0xd0), "Mellanox DC (vendor)");
	/* Every name is a non-empty string */
	for (int op = 0; op < 256; op++)
		assert_true(roce_opcode_name((uint8_t)op)[0] != '\0');
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rc_send_first_ipv4),
		cmocka_unit_test(test_reth_immdt_pad),
		cmocka_unit_test(test_aeth_kinds),
		cmocka_unit_test(test_read_and_atomics),
		cmocka_unit_test(test_ud_cm_req),
		cmocka_unit_test(test_cm_rep_rtu),
		cmocka_unit_test(test_xrc_rd_cnp_vendor),
		cmocka_unit_test(test_link_types),
		cmocka_unit_test(test_vlan_qinq),
		cmocka_unit_test(test_ipv4_options_ipv6_ext),
		cmocka_unit_test(test_roce_v1),
		cmocka_unit_test(test_native_infiniband),
		cmocka_unit_test(test_not_roce_and_ports),
		cmocka_unit_test(test_truncated_and_origlen),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_tunnel_kinds),
		cmocka_unit_test(test_tunnel_trimmed),
		cmocka_unit_test(test_tunnel_nested),
		cmocka_unit_test(test_tunnel_malformed),
		cmocka_unit_test(test_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
