/* test_hop_groups.c: hosts grouped by leaf from TTLs, and the cases where it must refuse. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "lib/localize/hop_groups.h"

/* 10.0.0.<last> as a v4-mapped address. */
static void v4(uint8_t *a, uint8_t last)
{
	memset(a, 0, 16);
	a[10] = a[11] = 0xff;
	a[12] = 10;
	a[15] = last;
}

static struct hop_pair pair(uint8_t a, uint8_t b, uint8_t ttl)
{
	struct hop_pair p = { .ttl = ttl };

	v4(p.a, a);
	v4(p.b, b);
	return p;
}

static long group_of(const struct hop_groups *g, uint8_t last)
{
	uint8_t a[16];

	v4(a, last);
	return hop_groups_find(g, a);
}

/*
 * A Clos fabric of 3 leaves (hosts 1-4, 5-8, 9-12) seen the way the synthesizer writes it:
 * packets arrive with 64 - (links - 1), so 63 on one leaf and 61 over a spine; each pair
 * also shows its TTL as sent (64: no hop seen), which must not pull it together.
 */
static size_t clos(struct hop_pair *p, uint8_t initial_odd)
{
	size_t n = 0;

	for (uint8_t a = 1; a <= 12; a++)
		for (uint8_t b = a + 1; b <= 12; b++) {
			bool same = (a - 1) / 4 == (b - 1) / 4;
			/* hosts with an odd address send with initial_odd (another OS) */
			uint8_t init = (a & 1) ? initial_odd : 64;

			if ((a + b) % 3 == 0)
				continue; /* not every pair talks */
			p[n++] = pair(a, b, (uint8_t)(init - (same ? 1 : 3)));
			p[n++] = pair(b, a, 64);
		}
	return n;
}

static void test_clos_leaves(void **state)
{
	struct hop_pair p[200];
	struct hop_groups g;
	char buf[64];

	for (int os = 0; os < 3; os++) {
		size_t n = clos(p, os == 0 ? 64 : os == 1 ? 128 : 255);

		assert_int_equal(hop_groups_build(p, n, &g), 0);
		assert_int_equal(g.status, HOP_GROUPS_OK);
		assert_int_equal(g.n_groups, 3);
		assert_int_equal(g.min_hops, 1);
		assert_int_equal(g.max_hops, 3);
		for (uint8_t h = 1; h <= 12; h++)
			assert_int_equal(group_of(&g, h), (h - 1) / 4);
		assert_int_equal(group_of(&g, 13), -1);
		assert_int_equal(hop_groups_size(&g, 1), 4);
		hop_groups_members(&g, 1, buf, sizeof(buf));
		assert_string_equal(buf, "10.0.0.5..8");
		hop_groups_free(&g);
	}
}

static void test_hop_count(void **state)
{
	assert_int_equal(hop_count(0), 0);
	assert_int_equal(hop_count(64), 0);
	assert_int_equal(hop_count(61), 3);
	assert_int_equal(hop_count(65), 63);
	assert_int_equal(hop_count(126), 2);
	assert_int_equal(hop_count(254), 1);
	assert_int_equal(hop_count(255), 0);
}

/* A capture nearer the sender sees fewer hops: the pair keeps the most it showed. */
static void test_most_hops_per_pair(void **state)
{
	struct hop_pair p[] = {
		pair(1, 2, 63), pair(3, 4, 63),
		pair(1, 3, 63), pair(3, 1, 61), /* mid-way mirror: 1 hop; receiver: 3 */
		pair(2, 4, 61),
	};
	struct hop_groups g;

	assert_int_equal(hop_groups_build(p, 5, &g), 0);
	assert_int_equal(g.status, HOP_GROUPS_OK);
	assert_int_equal(g.n_pairs, 4);
	assert_int_equal(g.n_groups, 2);
	assert_int_not_equal(group_of(&g, 1), group_of(&g, 3));
	assert_int_equal(group_of(&g, 1), group_of(&g, 2));
	hop_groups_free(&g);
}

static void test_refusals(void **state)
{
	struct hop_groups g;
	/* InfiniBand without a GRH, or only packets as they were sent */
	struct hop_pair none[] = { pair(1, 2, 0), pair(1, 3, 64), pair(2, 3, 128),
				   pair(3, 4, 255) };
	/* one leaf, or switches that do not route (every pair one hop) */
	struct hop_pair equal[] = { pair(1, 2, 63), pair(1, 3, 63), pair(2, 3, 63),
				    pair(3, 4, 127) };
	struct hop_pair few[] = { pair(1, 2, 63), pair(1, 3, 61), pair(2, 1, 62) };
	/* 1-2 and 2-3 one hop apart, 1-3 three: no leaf grouping explains it */
	struct hop_pair odd[] = { pair(1, 2, 63), pair(2, 3, 63), pair(1, 3, 61), pair(4, 5, 61) };

	assert_int_equal(hop_groups_build(none, 4, &g), 0);
	assert_int_equal(g.status, HOP_GROUPS_NO_TTL);
	assert_int_equal(g.n_groups, 0);
	hop_groups_free(&g);
	assert_int_equal(hop_groups_build(NULL, 0, &g), 0);
	assert_int_equal(g.status, HOP_GROUPS_NO_TTL);
	hop_groups_free(&g);
	assert_int_equal(hop_groups_build(equal, 4, &g), 0);
	assert_int_equal(g.status, HOP_GROUPS_ALL_EQUAL);
	assert_int_equal(group_of(&g, 1), -1);
	hop_groups_free(&g);
	assert_int_equal(hop_groups_build(few, 3, &g), 0);
	assert_int_equal(g.status, HOP_GROUPS_TOO_FEW);
	assert_int_equal(g.n_pairs, 2);
	hop_groups_free(&g);
	assert_int_equal(hop_groups_build(odd, 4, &g), 0);
	assert_int_equal(g.status, HOP_GROUPS_INCONSISTENT);
	assert_int_equal(g.n_groups, 0);
	assert_string_not_equal(hop_groups_status_text(g.status), "?");
	hop_groups_free(&g);
}

/*
 * The side of the hurt pairs one leaf holds: a slow cable of leaf 0 hurts pairs from its
 * hosts to both other leaves, and the other side spans two known leaves: side of leaf 0.
 */
static void test_sides(void **state)
{
	struct hop_pair p[200];
	struct hop_groups g;
	uint8_t side[8];
	char buf[64];
	size_t n = clos(p, 64);
	struct hop_pair leaf0_out[] = { pair(1, 5, 0), pair(9, 2, 0), pair(3, 10, 0),
					pair(4, 6, 0) };
	struct hop_pair two_leaves[] = { pair(1, 5, 0), pair(6, 2, 0) };
	struct hop_pair inside[] = { pair(1, 5, 0), pair(1, 2, 0) };
	struct hop_pair cycle[] = { pair(1, 5, 0), pair(5, 9, 0), pair(9, 1, 0) };
	struct hop_pair unknown[] = { pair(1, 5, 0), pair(1, 40, 0) };

	assert_int_equal(hop_groups_build(p, n, &g), 0);
	assert_int_equal(g.status, HOP_GROUPS_OK);
	assert_int_equal(hop_groups_sides(&g, leaf0_out, 4, side), 1);
	assert_int_equal(side[group_of(&g, 1)], 1);
	assert_int_equal(side[group_of(&g, 5)], 2);
	assert_int_equal(side[group_of(&g, 9)], 2);
	hop_groups_side_members(&g, side, 1, buf, sizeof(buf));
	assert_string_equal(buf, "10.0.0.1..4");
	hop_groups_side_members(&g, side, 2, buf, sizeof(buf));
	assert_string_equal(buf, "10.0.0.5..12");
	/* Only leaf 0 <-> leaf 1: either side may be the cable's leaf. */
	assert_int_equal(hop_groups_sides(&g, two_leaves, 2, side), 3);
	assert_int_equal(hop_groups_sides(&g, inside, 2, side), 0);
	assert_int_equal(hop_groups_sides(&g, cycle, 3, side), 0);
	assert_int_equal(hop_groups_sides(&g, unknown, 2, side), 0);
	assert_int_equal(hop_groups_sides(&g, NULL, 0, side), 0);
	hop_groups_free(&g);

	/* Host 20 talks to other leaves only (a group of its own): on one hurt pair, that
	 * could be its own slow connection; it is left out of the sides. */
	p[n++] = pair(20, 5, 61);
	p[n++] = pair(20, 9, 61);
	struct hop_pair with_lone[] = { pair(1, 5, 0), pair(9, 2, 0), pair(3, 10, 0),
					pair(20, 6, 0) };
	assert_int_equal(hop_groups_build(p, n, &g), 0);
	assert_int_equal(g.n_groups, 4);
	assert_int_equal(hop_groups_sides(&g, with_lone, 4, side), 1);
	assert_int_equal(side[group_of(&g, 20)], 0);
	hop_groups_side_members(&g, side, 1, buf, sizeof(buf));
	assert_string_equal(buf, "10.0.0.1..4");
	hop_groups_free(&g);
}

/* Members as text: runs shortened, other addresses listed, cut with ", ..." when long. */
static void test_members_text(void **state)
{
	struct hop_pair p[] = {
		pair(1, 2, 63), pair(2, 3, 63), pair(3, 9, 63), pair(9, 20, 63),
		pair(1, 40, 61), pair(40, 41, 63),
	};
	struct hop_groups g;
	char buf[64], small[20];

	assert_int_equal(hop_groups_build(p, 6, &g), 0);
	assert_int_equal(g.status, HOP_GROUPS_OK);
	assert_int_equal(g.n_groups, 2);
	hop_groups_members(&g, (uint32_t)group_of(&g, 1), buf, sizeof(buf));
	assert_string_equal(buf, "10.0.0.1..3, 10.0.0.9, 10.0.0.20");
	hop_groups_members(&g, (uint32_t)group_of(&g, 1), small, sizeof(small));
	assert_string_equal(small, "10.0.0.1..3, ...");
	hop_groups_members(&g, (uint32_t)group_of(&g, 41), buf, sizeof(buf));
	assert_string_equal(buf, "10.0.0.40..41");
	hop_groups_free(&g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hop_count),
		cmocka_unit_test(test_clos_leaves),
		cmocka_unit_test(test_most_hops_per_pair),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_sides),
		cmocka_unit_test(test_members_text),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
