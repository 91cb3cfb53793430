/* test_store_links.c: which links a flow crosses, and its share of each (flow_link, issue #21). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/store/store_links.h"
#include "test_addr.h"

/* Two leaves under three spines: 3 ECMP paths between hosts of different leaves. */
static const char links_csv[] = "link,a,b\n"
				"h0,198.18.0.10,leaf0\n"
				"h1,198.18.0.11,leaf1\n"
				"l0s0,leaf0,spine0\n"
				"l0s1,leaf0,spine1\n"
				"l0s2,leaf0,spine2\n"
				"l1s0,leaf1,spine0\n"
				"l1s1,leaf1,spine1\n"
				"l1s2,leaf1,spine2\n";

struct rows {
	char links[16][96];
	size_t n_links;
	char flow_links[32][64];
	size_t n_flow_links;
};

static void on_link(void *ctx, const char *name, const char *a, const char *b, const char *kind, int a_tier,
		    int b_tier)
{
	struct rows *r = ctx;

	assert_true(r->n_links < 16);
	snprintf(r->links[r->n_links++], sizeof(r->links[0]), "%s %s-%s %s %d/%d", name, a, b, kind, a_tier, b_tier);
}

static void on_flow_link(void *ctx, uint64_t qp_id, const char *link, double share, bool a_to_b)
{
	struct rows *r = ctx;

	assert_true(r->n_flow_links < 32);
	snprintf(r->flow_links[r->n_flow_links++], sizeof(r->flow_links[0]), "%llu %s %.4f %d",
		 (unsigned long long)qp_id, link, share, a_to_b);
}

static void walk(const char *paths_csv, struct rows *r)
{
	struct flow_stats f[3];
	struct store_links_cb cb = { .link = on_link, .flow_link = on_flow_link, .ctx = r };
	struct topology t;
	char err[256];

	memset(&t, 0, sizeof(t));
	memset(f, 0, sizeof(f));
	memset(r, 0, sizeof(*r));
	assert_int_equal(topology_parse_links(&t, links_csv, strlen(links_csv), "links.csv", err, sizeof(err)), 0);
	if (paths_csv)
		assert_int_equal(topology_parse_paths(&t, paths_csv, strlen(paths_csv), "paths.csv", err, sizeof(err)), 0);
	f[0].id = 1; /* 10 -> 11, sport 7 */
	test_host_addr(f[0].key.src_ip, 10);
	test_host_addr(f[0].key.dst_ip, 11);
	f[0].udp_sport = 7;
	f[1].id = 2; /* 11 -> 10 */
	test_host_addr(f[1].key.src_ip, 11);
	test_host_addr(f[1].key.dst_ip, 10);
	f[2].id = 3; /* a host the topology does not name */
	test_host_addr(f[2].key.src_ip, 10);
	test_host_addr(f[2].key.dst_ip, 99);
	assert_int_equal(store_links_walk(&t, f, 3, &cb), 0);
	topology_free(&t);
}

static bool has_row(const struct rows *r, const char *row)
{
	for (size_t i = 0; i < r->n_flow_links; i++)
		if (!strcmp(r->flow_links[i], row))
			return true;
	return false;
}

/* Every link once, its kind and tiers (0 host, 1 leaf, 2 spine). */
static void test_links_kinds_and_tiers(void **state)
{
	struct rows r;

	(void)state;
	walk(NULL, &r);
	assert_int_equal(r.n_links, 8);
	assert_string_equal(r.links[0], "h0 198.18.0.10-leaf0 host 0/1");
	assert_string_equal(r.links[2], "l0s0 leaf0-spine0 leaf-spine 1/2");
}

/* No recorded path: the access links share 1, each spine's links 1/3, in the right direction. */
static void test_ecmp_shares(void **state)
{
	struct rows r;

	(void)state;
	walk(NULL, &r);
	/* two flows x (2 access + 6 spine links); the unknown host gets none */
	assert_int_equal(r.n_flow_links, 16);
	assert_true(has_row(&r, "1 h0 1.0000 1"));
	assert_true(has_row(&r, "1 l0s1 0.3333 1"));
	assert_true(has_row(&r, "1 l1s1 0.3333 0"));
	assert_true(has_row(&r, "1 h1 1.0000 0"));
	assert_true(has_row(&r, "2 l0s2 0.3333 0"));
	for (size_t i = 0; i < r.n_flow_links; i++)
		assert_true(strncmp(r.flow_links[i], "3 ", 2));
}

/* A paths.csv path: its links with share 1, no ECMP spreading for that flow. */
static void test_recorded_path(void **state)
{
	static const char paths[] = "src,dst,udp_sport,links...\n198.18.0.10,198.18.0.11,7,h0,l0s2,l1s2,h1\n";
	struct rows r;
	size_t n1 = 0;

	(void)state;
	walk(paths, &r);
	for (size_t i = 0; i < r.n_flow_links; i++)
		n1 += !strncmp(r.flow_links[i], "1 ", 2);
	assert_int_equal(n1, 4);
	assert_true(has_row(&r, "1 l0s2 1.0000 1"));
	assert_true(has_row(&r, "1 l1s2 1.0000 0"));
	assert_true(has_row(&r, "2 l1s0 0.3333 1")); /* the reverse direction has no recorded path */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_links_kinds_and_tiers),
		cmocka_unit_test(test_ecmp_shares),
		cmocka_unit_test(test_recorded_path),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
