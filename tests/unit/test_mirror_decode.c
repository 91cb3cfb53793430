/* test_mirror_decode.c: ERSPAN III switch time (roce_erspan3_ns) and what a non-RoCE frame is (roce_frame_kind). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include <pcap/dlt.h>

#include "lib/decode/roce_decode.h"

#define S 1767225600ull		/* a second: 2026-01-01 UTC */
#define NS 1000000000ull

static struct roce_pkt erspan3(uint8_t gra, uint8_t platform_id, uint32_t hi, uint32_t ts)
{
	struct roce_pkt p = { .encap = ROCE_ENCAP_ERSPAN3, .erspan_gra = gra,
			      .erspan_platform_id = platform_id, .erspan_ts_hi = hi, .erspan_ts = ts };
	return p;
}

static void test_erspan3_1588(void **state)
{
	struct roce_pkt p = erspan3(ERSPAN_GRA_IEEE1588, 3, (uint32_t)S, 123456789);
	uint64_t ns = 0;

	(void)state;
	/* Seconds from platform sub-header 3: exact, whatever the arrival. */
	assert_int_equal(roce_erspan3_ns(&p, 0, &ns), 0);
	assert_true(ns == S * NS + 123456789);
	/* Nanoseconds alone: the second nearest the arrival, across a second's edge both ways. */
	p = erspan3(ERSPAN_GRA_IEEE1588, 0, 0, 999999000);
	assert_int_equal(roce_erspan3_ns(&p, (S + 1) * NS + 20000, &ns), 0);
	assert_true(ns == S * NS + 999999000);
	p = erspan3(ERSPAN_GRA_IEEE1588, 0, 0, 1000);
	assert_int_equal(roce_erspan3_ns(&p, S * NS + 30000, &ns), 0);
	assert_true(ns == S * NS + 1000);
	/* The switch ahead of the collector by a little: still the same second. */
	p = erspan3(ERSPAN_GRA_IEEE1588, 0, 0, 5000);
	assert_int_equal(roce_erspan3_ns(&p, S * NS + 1000, &ns), 0);
	assert_true(ns == S * NS + 5000);
}

static void test_erspan3_refused(void **state)
{
	struct roce_pkt p = erspan3(ERSPAN_GRA_100NS, 0, 0, 5);
	uint64_t ns = 7;

	(void)state;
	assert_int_equal(roce_erspan3_ns(&p, S * NS, &ns), -1);	/* a counter: the caller unwraps */
	p = erspan3(ERSPAN_GRA_USER, 0, 0, 5);
	assert_int_equal(roce_erspan3_ns(&p, S * NS, &ns), -1);
	p = erspan3(ERSPAN_GRA_IEEE1588, 0, 0, 1000000000);	/* not nanoseconds in a second */
	assert_int_equal(roce_erspan3_ns(&p, S * NS, &ns), -1);
	p = erspan3(ERSPAN_GRA_IEEE1588, 0, 0, 900000000);	/* before the epoch's first second */
	assert_int_equal(roce_erspan3_ns(&p, 0, &ns), -1);
	p.encap = ROCE_ENCAP_ERSPAN2;
	assert_int_equal(roce_erspan3_ns(&p, S * NS, &ns), -1);
	assert_true(ns == 7);
}

/* Frame bytes, written big-endian as the wire has them. */
struct fb {
	uint8_t b[256];
	size_t n;
};

static void put(struct fb *f, const char *hex)
{
	unsigned v;

	while (*hex && sscanf(hex, "%2x", &v) == 1) {
		f->b[f->n++] = (uint8_t)v;
		hex += 2;
	}
}

static void eth(struct fb *f, const char *ethertype)
{
	put(f, "020000000002020000000001");
	put(f, ethertype);
}

/* IPv4 header of protocol `proto` (hex byte), total length `len` (hex 4 digits). */
static void ip4(struct fb *f, const char *len, const char *proto)
{
	put(f, "4500");
	put(f, len);
	put(f, "0000400040");	/* ID 0, DF, TTL 64 */
	put(f, proto);
	put(f, "00000a0000010a000002");
}

static uint32_t kind_of(const struct fb *f, int linktype)
{
	return roce_frame_kind(linktype, f->b, f->n);
}

static void test_frame_kinds(void **state)
{
	struct fb f = { 0 };
	char s[96];

	(void)state;
	eth(&f, "0806");
	put(&f, "00010800060400010200000000010a000001");
	assert_int_equal(kind_of(&f, DLT_EN10MB), (uint32_t)FRAME_KIND_ETHERTYPE << 24 | 0x0806);
	assert_int_equal(kind_of(&f, 105), (uint32_t)FRAME_KIND_LINKTYPE << 24 | 105);
	roce_frame_kind_str(kind_of(&f, 105), s, sizeof(s));
	assert_string_equal(s, "link type 105");

	/* TCP behind a VLAN tag */
	memset(&f, 0, sizeof(f));
	eth(&f, "8100");
	put(&f, "00640800");
	ip4(&f, "0028", "06");
	put(&f, "0000000000000000000000000000000000000000");
	assert_int_equal(kind_of(&f, DLT_EN10MB), (uint32_t)FRAME_KIND_IP_PROTO << 24 | 6);
	roce_frame_kind_str(kind_of(&f, DLT_EN10MB), s, sizeof(s));
	assert_string_equal(s, "TCP");

	/* UDP to 8472 (Linux's VXLAN port), and the same frame cut in its IP header */
	memset(&f, 0, sizeof(f));
	eth(&f, "0800");
	ip4(&f, "001c", "11");
	put(&f, "c0002118000800000000");
	assert_int_equal(kind_of(&f, DLT_EN10MB), (uint32_t)FRAME_KIND_UDP_PORT << 24 | 8472);
	roce_frame_kind_str(kind_of(&f, DLT_EN10MB), s, sizeof(s));
	assert_string_equal(s, "UDP port 8472");
	assert_int_equal(roce_frame_kind(DLT_EN10MB, f.b, 14 + 12), (uint32_t)FRAME_KIND_SHORT << 24);
	assert_int_equal(roce_frame_kind(DLT_EN10MB, NULL, 0), (uint32_t)FRAME_KIND_SHORT << 24);

	/* GRE of a protocol no mirror session sends */
	memset(&f, 0, sizeof(f));
	eth(&f, "0800");
	ip4(&f, "0030", "2f");
	put(&f, "0000880b");
	assert_int_equal(kind_of(&f, DLT_EN10MB), (uint32_t)FRAME_KIND_GRE_PROTO << 24 | 0x880b);

	/* ERSPAN II (GRE with S) carrying TCP: named inside the tunnel */
	memset(&f, 0, sizeof(f));
	eth(&f, "0800");
	ip4(&f, "0060", "2f");
	put(&f, "100088be00000007" "10000005" "00000000");
	eth(&f, "0800");
	ip4(&f, "0028", "06");
	put(&f, "0000000000000000000000000000000000000000");
	assert_int_equal(kind_of(&f, DLT_EN10MB),
			 (uint32_t)FRAME_KIND_IP_PROTO << 24 | ROCE_ENCAP_ERSPAN2 << 16 | 6);
	roce_frame_kind_str(kind_of(&f, DLT_EN10MB), s, sizeof(s));
	assert_string_equal(s, "TCP in erspan2");

	/* Raw IPv6 (DLT_RAW) with UDP to 53 */
	memset(&f, 0, sizeof(f));
	put(&f, "6000000000081140");
	put(&f, "fd000000000000000000000000000001fd000000000000000000000000000002");
	put(&f, "c000003500080000");
	assert_int_equal(kind_of(&f, DLT_RAW), (uint32_t)FRAME_KIND_UDP_PORT << 24 | 53);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_erspan3_1588),
		cmocka_unit_test(test_erspan3_refused),
		cmocka_unit_test(test_frame_kinds),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
