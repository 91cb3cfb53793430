/* fuzz_topology_csv.c: links.csv then paths.csv parsing, then ECMP look-ups, on any bytes. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/localize/topology.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct topology t = { 0 };
	char err[256];
	const uint8_t *split = memchr(data, '\f', size); /* form feed: links | paths */
	size_t links_len = split ? (size_t)(split - data) : size;

	if (!topology_parse_links(&t, (const char *)data, links_len, "links.csv", err,
				  sizeof(err)) &&
	    split)
		topology_parse_paths(&t, (const char *)split + 1, size - links_len - 1, "paths.csv",
				     err, sizeof(err));
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
	return 0;
}
