/* fuzz_topology_csv.c: links.csv then paths.csv parsing, then ECMP look-ups, on any bytes;
 * and the same text with other line endings or a byte-order mark must read the same. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/localize/topology.h"

struct outcome {
	int links_ret, paths_ret;
	size_t n_nodes, n_links, n_paths;
	char err[256];
};

/* data is "links.csv \f paths.csv" (form feed: the split); parse both into t. */
static void parse(struct topology *t, const uint8_t *data, size_t size, struct outcome *o)
{
	const uint8_t *split = memchr(data, '\f', size);
	size_t links_len = split ? (size_t)(split - data) : size;

	memset(o, 0, sizeof(*o));
	o->links_ret = topology_parse_links(t, (const char *)data, links_len, "links.csv", o->err,
					    sizeof(o->err));
	if (!o->links_ret && split)
		o->paths_ret = topology_parse_paths(t, (const char *)split + 1, size - links_len - 1,
						    "paths.csv", o->err, sizeof(o->err));
	o->n_nodes = t->n_nodes;
	o->n_links = t->n_links;
	o->n_paths = t->n_paths;
}

/* Every line ending made eol (CRLF and lone CR and LF alike); a BOM after each \f too. */
static size_t restyle(const uint8_t *in, size_t n, const char *eol, bool bom, uint8_t *out)
{
	size_t o = 0, eol_len = strlen(eol);

	if (bom) {
		memcpy(out, "\xef\xbb\xbf", 3);
		o = 3;
	}
	for (size_t i = 0; i < n; i++) {
		if (in[i] == '\r' || in[i] == '\n') {
			if (in[i] == '\r' && i + 1 < n && in[i + 1] == '\n')
				i++;
			memcpy(out + o, eol, eol_len);
			o += eol_len;
		} else {
			out[o++] = in[i];
			if (in[i] == '\f' && bom) {
				memcpy(out + o, "\xef\xbb\xbf", 3);
				o += 3;
			}
		}
	}
	return o;
}

static void same_outcome(const struct outcome *a, const struct outcome *b)
{
	if (a->links_ret != b->links_ret || a->paths_ret != b->paths_ret ||
	    a->n_nodes != b->n_nodes || a->n_links != b->n_links || a->n_paths != b->n_paths ||
	    strcmp(a->err, b->err)) {
		fprintf(stderr, "line endings or a BOM changed the reading: '%s' vs '%s'\n", a->err,
			b->err);
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const eols[] = { "\n", "\r\n", "\r" };
	struct topology t = { 0 };
	struct outcome first, other;
	uint8_t *copy;

	parse(&t, data, size, &first);
	/* Walk ECMP between the first hosts found. */
	for (size_t i = 0, seen = 0; i < t.n_nodes && seen < 4; i++) {
		if (!t.nodes[i].is_host)
			continue;
		seen++;
		for (size_t j = 0; j < t.n_nodes; j++) {
			struct topo_hop *hops;
			size_t n, len;
			if (j != i && t.nodes[j].is_host &&
			    !topology_shortest_paths(&t, (uint32_t)i, (uint32_t)j, 8, &hops, &n, &len))
				free(hops);
		}
	}
	topology_free(&t);

	/* The text in each line-ending style, with and without a BOM, reads the same (unless it
	 * starts with a BOM of its own, or holds bytes a style would change the meaning of). */
	if (size > 4096 || (size >= 3 && !memcmp(data, "\xef\xbb\xbf", 3)) ||
	    memmem(data, size, "\f\xef\xbb\xbf", 4) || memchr(data, '\0', size))
		return 0;
	copy = malloc(size * 2 + 3 * (size + 1));
	if (!copy)
		return 0;
	for (size_t e = 0; e < sizeof(eols) / sizeof(eols[0]); e++) {
		for (int bom = 0; bom < 2; bom++) {
			struct outcome lf;
			size_t n = restyle(data, size, "\n", false, copy);

			parse(&t, copy, n, &lf);
			topology_free(&t);
			n = restyle(data, size, eols[e], bom, copy);
			parse(&t, copy, n, &other);
			topology_free(&t);
			same_outcome(&lf, &other);
		}
	}
	free(copy);
	return 0;
}
