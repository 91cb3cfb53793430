/* test_ib_decode.c: native InfiniBand (LRH, GRH) and ERF records through the decoder, LID addresses. */
#include <errno.h>
#include <pcap/dlt.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "lib/decode/ib_decode.h"
#include "lib/decode/roce_decode.h"
#include "lib/localize/topology.h"
#include "lib/util/byte_reader.h"
#include "lib/util/util.h"

#include "frame_builder.h"

static const uint8_t gid_src[16] = { 0xfe, 0x80, [8] = 0, 2, 0xc9, 3, 0, 0, 0x1f, 0x2d };
static const uint8_t gid_dst[16] = { 0xff, 0x12, 0x40, 0x1b, 0xff, 0xff, [15] = 1 };

/* BTH (IBA 9.2) + RETH + payload + ICRC: an RC RDMA WRITE First to QP 0x123, PSN 77. */
static void put_transport(struct fb *f, uint32_t payload)
{
	put8(f, 0x06);		/* RC RDMA WRITE First */
	put8(f, 0);
	put16(f, 0xffff);
	put8(f, 0);
	put8(f, 0), put16(f, 0x0123);
	put8(f, 0x80);		/* AckReq */
	put8(f, 0), put16(f, 77);
	put32(f, 0x1), put32(f, 0x2); /* VA */
	put32(f, 0xabcd);	/* R_Key */
	put32(f, 4096);		/* DMA length */
	putz(f, payload);
	putz(f, 4);		/* ICRC */
}

/* LRH [GRH] transport VCRC. lnh 2: no GRH, 3: GRH. */
static void build_ib(struct fb *f, uint8_t lnh, uint32_t payload)
{
	size_t pktlen_at;

	f->len = 0;
	put8(f, 0x30);		/* VL 3, LVer 0 */
	put8(f, (uint8_t)(5 << 4 | lnh)); /* SL 5 */
	put16(f, 0x0004);	/* DLID */
	pktlen_at = f->len;
	put16(f, 0);
	put16(f, 0x0012);	/* SLID 18 */
	if (lnh == 3) {
		put32(f, 6u << 28 | 0xa0u << 20 | 0x12345); /* TClass 0xa0, flow label */
		put16(f, (uint16_t)(12 + 16 + payload + 4));
		put8(f, 0x1b);
		put8(f, 7);	/* hop limit */
		putn(f, gid_src, 16);
		putn(f, gid_dst, 16);
	}
	put_transport(f, payload);
	put_be16(f->b + pktlen_at, (uint16_t)(f->len / 4));
	putz(f, 2);		/* VCRC */
}

static int decode(const struct fb *f, int linktype, struct roce_pkt *p)
{
	struct roce_decode_opts o;

	roce_decode_opts_default(&o);
	return roce_decode_frame(&o, linktype, f->b, f->len, (uint32_t)f->len, 1000, p);
}

/* Every prefix of a frame decodes to some status without reading past it (ASan watches). */
static void decode_all_prefixes(const struct fb *f, int linktype)
{
	struct roce_decode_opts o;
	struct roce_pkt p;

	roce_decode_opts_default(&o);
	for (size_t n = 0; n <= f->len; n++) {
		uint8_t *copy = malloc(n ? n : 1);
		memcpy(copy, f->b, n);
		int rc = roce_decode_frame(&o, linktype, copy, n, (uint32_t)f->len, 0, &p);
		assert_true(rc >= ROCE_DECODE_STATUS_MIN && rc <= ROCE_DECODE_NOT_ROCE);
		free(copy);
	}
}

static void check_transport(const struct roce_pkt *p, uint32_t payload)
{
	assert_int_equal(p->opcode, 0x06);
	assert_int_equal(p->dest_qp, 0x123);
	assert_int_equal(p->psn, 77);
	assert_true(p->flags & ROCE_F_ACK_REQ);
	assert_true(p->headers & ROCE_H_RETH);
	assert_int_equal(p->reth_rkey, 0xabcd);
	assert_int_equal(p->reth_dma_len, 4096);
	assert_int_equal(p->payload_len, payload);
}

static void test_lrh_only_lids_as_addresses(void **state)
{
	struct fb f;
	struct roce_pkt p;
	char buf[ADDR_STR_LEN];

	build_ib(&f, 2, 64);
	assert_int_equal(decode(&f, DLT_INFINIBAND, &p), ROCE_DECODE_OK);
	check_transport(&p, 64);
	assert_int_equal(p.roce_version, 0);
	assert_int_equal(p.ib_vl, 3);
	assert_int_equal(p.ib_sl, 5);
	assert_int_equal(p.ib_lnh, 2);
	assert_int_equal(p.ib_slid, 18);
	assert_int_equal(p.ib_dlid, 4);
	assert_int_equal(p.ib_pkt_len, f.len - 2);
	assert_int_equal(p.orig_len, f.len);
	assert_false(p.headers & ROCE_H_GRH);
	assert_int_equal(addr_lid(p.src_ip), 18);
	assert_int_equal(addr_lid(p.dst_ip), 4);
	assert_string_equal(addr_str(p.src_ip, buf, sizeof(buf)), "LID 18");
	decode_all_prefixes(&f, DLT_INFINIBAND);
}

static void test_grh_gids_as_addresses(void **state)
{
	struct fb f;
	struct roce_pkt p;
	char buf[ADDR_STR_LEN];

	build_ib(&f, 3, 100);
	assert_int_equal(decode(&f, DLT_INFINIBAND, &p), ROCE_DECODE_OK);
	check_transport(&p, 100);
	assert_true(p.headers & ROCE_H_GRH);
	assert_int_equal(p.ib_lnh, 3);
	assert_int_equal(p.grh_tclass, 0xa0);
	assert_int_equal(p.grh_flow_label, 0x12345);
	assert_int_equal(p.ttl, 7);
	assert_memory_equal(p.src_ip, gid_src, 16);
	assert_memory_equal(p.dst_ip, gid_dst, 16);
	assert_int_equal(addr_lid(p.src_ip), -1);
	assert_string_equal(addr_str(p.src_ip, buf, sizeof(buf)), "fe80::2:c903:0:1f2d");
	assert_int_equal(p.ib_slid, 18);
	decode_all_prefixes(&f, DLT_INFINIBAND);
}

static void test_lrh_malformed_and_other(void **state)
{
	struct fb f;
	struct roce_pkt p;

	build_ib(&f, 2, 8);
	f.b[0] = 0x31; /* LVer 1 */
	assert_int_equal(decode(&f, DLT_INFINIBAND, &p), ROCE_DECODE_BAD_LINK);
	build_ib(&f, 2, 8);
	f.b[1] = 0x01; /* LNH 1: IPv6 over IB, not IBA transport */
	assert_int_equal(decode(&f, DLT_INFINIBAND, &p), ROCE_DECODE_NOT_ROCE);
	build_ib(&f, 2, 8);
	put_be16(f.b + 4, 1); /* PktLen 4 bytes: less than the LRH */
	assert_int_equal(decode(&f, DLT_INFINIBAND, &p), ROCE_DECODE_BAD_LINK);
	build_ib(&f, 2, 8);
	put_be16(f.b + 4, 5); /* PktLen 20 bytes: no room for BTH + RETH + ICRC */
	assert_true(decode(&f, DLT_INFINIBAND, &p) < 0);
	build_ib(&f, 3, 8);
	f.b[8 + 6] = 0x11; /* GRH next header not BTH */
	assert_int_equal(decode(&f, DLT_INFINIBAND, &p), ROCE_DECODE_BAD_GRH);
}

/* An ERF record: 16-byte header (+ extension headers), then the payload, then padding. */
static void wrap_erf(struct fb *out, uint8_t type, int ext_headers, const struct fb *in,
		     size_t pad_before, size_t pad_after)
{
	uint64_t ts = (uint64_t)1210794479 << 32 | 0x7febea60u; /* 1210794479.499693535 */
	size_t rlen = 16 + (size_t)ext_headers * 8 + pad_before + in->len + pad_after;

	out->len = 0;
	for (int i = 0; i < 8; i++)
		put8(out, (uint8_t)(ts >> (8 * i)));
	put8(out, (uint8_t)(type | (ext_headers ? 0x80 : 0)));
	put8(out, 0x05);	/* interface 1, varying length */
	put16(out, (uint16_t)rlen);
	put16(out, 0);
	put16(out, (uint16_t)in->len);
	for (int i = 0; i < ext_headers; i++) {
		put8(out, i + 1 < ext_headers ? 0x80 | 3 : 3);
		putz(out, 7);
	}
	putz(out, pad_before);
	putn(out, in->b, in->len);
	putz(out, pad_after);
}

static void test_erf_infiniband(void **state)
{
	struct fb ib, f;
	struct roce_pkt p;

	build_ib(&ib, 2, 32);
	wrap_erf(&f, ERF_TYPE_INFINIBAND, 0, &ib, 0, 6);
	assert_int_equal(decode(&f, DLT_ERF, &p), ROCE_DECODE_OK);
	check_transport(&p, 32);
	assert_int_equal(p.linktype, DLT_ERF);
	assert_int_equal(p.erf_type, ERF_TYPE_INFINIBAND);
	assert_int_equal(p.erf_port, 1);
	assert_int_equal(p.ts_ns, 1210794479499693535ull);
	assert_int_equal(p.orig_len, ib.len);
	assert_int_equal(p.cap_len, ib.len);
	assert_int_equal(p.ib_slid, 18);
	assert_int_equal(p.ip_hdr_off, 8); /* in the IB packet, after the LRH */
	decode_all_prefixes(&f, DLT_ERF);

	wrap_erf(&f, ERF_TYPE_INFINIBAND, 2, &ib, 0, 0); /* two extension headers */
	assert_int_equal(decode(&f, DLT_ERF, &p), ROCE_DECODE_OK);
	check_transport(&p, 32);
	decode_all_prefixes(&f, DLT_ERF);

	wrap_erf(&f, ERF_TYPE_INFINIBAND_LINK, 0, &ib, 0, 0);
	assert_int_equal(decode(&f, DLT_ERF, &p), ROCE_DECODE_NOT_ROCE);
	wrap_erf(&f, ERF_TYPE_INFINIBAND, 0, &ib, 0, 0);
	put_be16(f.b + 10, 8); /* rlen shorter than the header */
	assert_int_equal(decode(&f, DLT_ERF, &p), ROCE_DECODE_BAD_LINK);
}

/* An Ethernet ERF record: 2 pad bytes, then a RoCE v2 frame (IPv4, UDP 4791). */
static void test_erf_ethernet_roce(void **state)
{
	static const uint8_t macs[12] = { 2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 2 };
	struct fb eth = { 0 }, tr = { 0 }, f;
	struct roce_pkt p;
	char buf[ADDR_STR_LEN];

	put_transport(&tr, 16);
	putn(&eth, macs, 12);
	put16(&eth, 0x0800);
	put8(&eth, 0x45), put8(&eth, 0), put16(&eth, (uint16_t)(20 + 8 + tr.len));
	put16(&eth, 1), put16(&eth, 0x4000), put8(&eth, 64), put8(&eth, 17), put16(&eth, 0);
	put32(&eth, 0xc6120001), put32(&eth, 0xc6120002);
	put16(&eth, 49152), put16(&eth, 4791), put16(&eth, (uint16_t)(8 + tr.len)), put16(&eth, 0);
	putn(&eth, tr.b, tr.len);
	wrap_erf(&f, ERF_TYPE_ETH, 0, &eth, 2, 0);
	assert_int_equal(decode(&f, DLT_ERF, &p), ROCE_DECODE_OK);
	check_transport(&p, 16);
	assert_int_equal(p.roce_version, 2);
	assert_int_equal(p.linktype, DLT_ERF);
	assert_int_equal(p.erf_type, ERF_TYPE_ETH);
	assert_int_equal(p.ts_ns, 1210794479499693535ull);
	assert_int_equal(p.ip_hdr_off, 14);
	assert_string_equal(addr_str(p.dst_ip, buf, sizeof(buf)), "198.18.0.2");
	decode_all_prefixes(&f, DLT_ERF);
}

static void test_lid_text(void **state)
{
	uint8_t a[16], b[16];
	char buf[ADDR_STR_LEN];

	assert_int_equal(addr_parse_lid("LID 18", a), 0);
	assert_int_equal(addr_lid(a), 18);
	assert_int_equal(addr_parse_lid("lid 0x0012", b), 0);
	assert_memory_equal(a, b, 16);
	assert_int_equal(addr_parse_lid("LID: 18", b), 0);
	assert_memory_equal(a, b, 16);
	assert_int_equal(addr_parse_lid("LID:65535", b), 0);
	assert_string_equal(addr_str(b, buf, sizeof(buf)), "LID 65535");
	assert_int_equal(addr_parse_lid("LID 65536", b), -EINVAL);
	assert_int_equal(addr_parse_lid("LID", b), -EINVAL);
	assert_int_equal(addr_parse_lid("LID 18x", b), -EINVAL);
	assert_int_equal(addr_parse_lid("LID -1", b), -EINVAL);
	assert_int_equal(addr_parse_lid("host1", b), -EINVAL);
	assert_int_equal(addr_parse_lid("10.0.0.1", b), -EINVAL);
	/* Neither an IPv4-mapped address nor a GID reads as a LID. */
	memset(b, 0, 16);
	b[10] = b[11] = 0xff;
	assert_int_equal(addr_lid(b), -1);
	assert_false(addr_is_v4mapped(a));
	/* links.csv and paths.csv take LIDs as host names. */
	assert_int_equal(topo_parse_addr("LID 18", b), 0);
	assert_memory_equal(a, b, 16);
	assert_int_equal(topo_parse_addr("leaf0", b), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lrh_only_lids_as_addresses),
		cmocka_unit_test(test_grh_gids_as_addresses),
		cmocka_unit_test(test_lrh_malformed_and_other),
		cmocka_unit_test(test_erf_infiniband),
		cmocka_unit_test(test_erf_ethernet_roce),
		cmocka_unit_test(test_lid_text),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
