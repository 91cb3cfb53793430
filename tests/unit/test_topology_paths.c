/* test_topology_paths.c: paths.csv's link list, as further columns or as one space-separated field (issue #21). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "lib/localize/topology.h"

static const char links_csv[] = "link,a,b\n"
				"h1,198.18.0.10,leaf0\n"
				"h2,198.18.0.11,leaf1\n"
				"up0,leaf0,spine0\n"
				"up1,leaf1,spine0\n";

/* The hops of the one path of paths_text, by link name, "" when it does not load. */
static void load_path(const char *paths_text, char *names, size_t len)
{
	static const uint8_t src[16] = { [10] = 0xff, [11] = 0xff, 198, 18, 0, 10 };
	static const uint8_t dst[16] = { [10] = 0xff, [11] = 0xff, 198, 18, 0, 11 };
	const struct topo_path *p;
	struct topology t;
	char err[256];
	size_t used = 0;

	memset(&t, 0, sizeof(t));
	names[0] = '\0';
	assert_int_equal(topology_parse_links(&t, links_csv, strlen(links_csv), "links.csv", err,
					      sizeof(err)), 0);
	if (topology_parse_paths(&t, paths_text, strlen(paths_text), "paths.csv", err, sizeof(err))) {
		print_message("  error: %s\n", err);
		topology_free(&t);
		return;
	}
	p = topology_find_path(&t, src, dst, 5);
	assert_non_null(p);
	for (size_t i = 0; i < p->n_hops; i++)
		used += (size_t)snprintf(names + used, len - used, "%s%s", i ? "," : "",
					 t.links[p->hops[i].link].name);
	topology_free(&t);
}

/* Issue #21: "paths.csv accepts links as further columns or as one space-separated field". */
static void test_paths_links_as_columns_or_one_field(void **state)
{
	static const char *const rows[] = {
		"198.18.0.10,198.18.0.11,5,h1,up0,up1,h2\n",		/* further columns */
		"198.18.0.10,198.18.0.11,5,h1 up0 up1 h2\n",		/* one field */
		"198.18.0.10,198.18.0.11,5,\"h1  up0\tup1 h2 \"\n",	/* quoted, runs of blanks */
		"198.18.0.10,198.18.0.11,5,h1 up0,up1 h2,\n",		/* both, a ragged end */
	};
	char text[256], names[128];

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		snprintf(text, sizeof(text), "src,dst,udp_sport,links...\n%s", rows[i]);
		load_path(text, names, sizeof(names));
		print_message("  %s", rows[i]);
		assert_string_equal(names, "h1,up0,up1,h2");
	}
}

/* A name in the space-separated field that links.csv lacks is named in the error. */
static void test_paths_one_field_unknown_link(void **state)
{
	static const char text[] = "src,dst,udp_sport,links...\n198.18.0.10,198.18.0.11,5,h1 upX up1 h2\n";
	struct topology t;
	char err[256];

	(void)state;
	memset(&t, 0, sizeof(t));
	assert_int_equal(topology_parse_links(&t, links_csv, strlen(links_csv), "links.csv", err,
					      sizeof(err)), 0);
	assert_int_not_equal(topology_parse_paths(&t, text, strlen(text), "paths.csv", err, sizeof(err)), 0);
	assert_non_null(strstr(err, "paths.csv:2: link 'upX' is not in links.csv"));
	topology_free(&t);
}

/* A link whose own name holds blanks, given whole in a field, is that link, not a list. */
static void test_paths_link_name_with_blanks(void **state)
{
	static const char links[] = "link,a,b\n"
				    "\"host one\",198.18.0.10,leaf0\n"
				    "\"up\tzero\",leaf0,spine0\n"
				    "h2,198.18.0.11,spine0\n";
	static const char text[] = "src,dst,udp_sport,links...\n"
				   "198.18.0.10,198.18.0.11,5,\"host one\",\"up\tzero\",h2\n";
	struct topology t;
	char err[256];

	(void)state;
	memset(&t, 0, sizeof(t));
	assert_int_equal(topology_parse_links(&t, links, strlen(links), "links.csv", err, sizeof(err)), 0);
	if (topology_parse_paths(&t, text, strlen(text), "paths.csv", err, sizeof(err)))
		print_message("  error: %s\n", err);
	assert_int_equal(t.n_paths, 1);
	assert_int_equal(t.paths[0].n_hops, 3);
	assert_string_equal(t.links[t.paths[0].hops[0].link].name, "host one");
	assert_string_equal(t.links[t.paths[0].hops[1].link].name, "up\tzero");
	topology_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_paths_links_as_columns_or_one_field),
		cmocka_unit_test(test_paths_one_field_unknown_link),
		cmocka_unit_test(test_paths_link_name_with_blanks),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
