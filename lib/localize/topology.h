/*
 * topology.h: the fabric as links.csv and paths.csv describe it, and the path look-ups
 * localization needs (the recorded path of one flow, or every ECMP shortest path).
 *
 * links.csv: header `link,a,b`; one row per link; a and b are hosts (IPv4/IPv6 addresses)
 *            or switches (any other name). Extra columns are ignored.
 * paths.csv: header `src,dst,udp_sport,links...`; one row per flow direction; the link
 *            names in order from src to dst.
 * Lines starting with '#' and blank lines are skipped. Quoted fields may not span lines.
 * Lines end in LF, CRLF or a lone CR; a UTF-8 byte-order mark at the start is skipped.
 * A links.csv without a single link is an error.
 *
 * The builders and look-ups (topology_graph.c) are pure and live in the core; the CSV
 * parsers (topology.c) are shared I/O code.
 */
#ifndef AGENTXDP_TOPOLOGY_H
#define AGENTXDP_TOPOLOGY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TOPO_NAME_MAX 64

struct topo_node {
	char name[TOPO_NAME_MAX];	/* as written in links.csv */
	bool is_host;			/* name parsed as an IP address */
	uint8_t addr[16];		/* host address, IPv4 v4-mapped; zero for switches */
};

struct topo_link {
	char name[TOPO_NAME_MAX];
	uint32_t a, b;			/* node indices */
};

/* One link of a path, and which way the path crosses it. */
struct topo_hop {
	uint32_t link;			/* index into topology.links */
	bool a_to_b;			/* true: crossed from links[link].a to .b */
};

struct topo_path {
	uint8_t src[16], dst[16];	/* v4-mapped like struct flow_key */
	uint16_t udp_sport;
	struct topo_hop *hops;		/* from src to dst */
	size_t n_hops;
};

/*
 * A hash index over one of the arrays below (open addressing, slots hold index + 1). The
 * builders keep it; a look-up uses it while it covers the whole array (`upto` == the array's
 * count) and searches linearly otherwise, so a topology filled by hand still works.
 */
struct topo_index {
	uint32_t *slots;
	size_t cap;			/* a power of two, or 0 */
	size_t used;			/* slots taken */
	size_t upto;			/* array entries considered so far */
};

struct topology {
	struct topo_node *nodes;
	size_t n_nodes;
	struct topo_link *links;
	size_t n_links;
	struct topo_path *paths;
	size_t n_paths;
	/* so that a file of N rows is read in O(N), not O(N^2) (issue #22) */
	struct topo_index node_names, host_addrs, link_names, path_keys;
};

/* --- pure builders and look-ups (topology_graph.c) --- */

/* Text address -> 16 bytes (IPv4 as ::ffff:a.b.c.d, "LID 18" as addr_from_lid()). 0 or -EINVAL. */
int topo_parse_addr(const char *text, uint8_t addr[16]);
/* Node index by name, created when absent; -ENOMEM on failure. */
long topology_node(struct topology *t, const char *name);
/* Adds a link; -EEXIST when the name is taken, -EINVAL for a loop (a == b) or a bad name. */
int topology_add_link(struct topology *t, const char *name, const char *a, const char *b);
long topology_link_by_name(const struct topology *t, const char *name);
/* Host node with this address, or -1. */
long topology_host(const struct topology *t, const uint8_t addr[16]);
/*
 * Adds a path given as link indices from src to dst. Checks that the links chain from the
 * src host to the dst host; on failure returns -EINVAL with a reason in err.
 */
int topology_add_path(struct topology *t, const uint8_t src[16], const uint8_t dst[16],
		      uint16_t udp_sport, const uint32_t *links, size_t n_links, char *err,
		      size_t err_len);
/* The recorded path of (src, dst, udp_sport), or NULL. */
const struct topo_path *topology_find_path(const struct topology *t, const uint8_t src[16],
					   const uint8_t dst[16], uint16_t udp_sport);
/*
 * Every shortest path between two nodes (the ECMP alternatives of a Clos fabric), at most
 * max_paths of them. Writes *n_paths paths of *path_len hops each into a malloc'ed array
 * (*hops, n_paths * path_len entries). Returns 0, -ENOENT when unreachable, -ENOMEM.
 */
int topology_shortest_paths(const struct topology *t, uint32_t src_node, uint32_t dst_node,
			    size_t max_paths, struct topo_hop **hops, size_t *n_paths,
			    size_t *path_len);
void topology_free(struct topology *t);

/* --- CSV parsers (topology.c) --- */

/*
 * Parse links.csv / paths.csv text (paths after links). `file` names the input in errors.
 * On error returns a negative errno and writes one line "FILE:LINE: what is wrong" to err.
 */
int topology_parse_links(struct topology *t, const char *text, size_t len, const char *file,
			 char *err, size_t err_len);
int topology_parse_paths(struct topology *t, const char *text, size_t len, const char *file,
			 char *err, size_t err_len);
/* Read and parse the files (paths_csv may be NULL). Same error convention. */
int topology_load(struct topology *t, const char *links_csv, const char *paths_csv, char *err,
		  size_t err_len);

#endif
