/* util.h: the small helpers every part of AgentXDP shares, each kept once. */
#ifndef AGENTXDP_UTIL_H
#define AGENTXDP_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* AGENTXDP_VERSION is set by the Makefile only (-DAGENTXDP_VERSION="X.Y.Z"). */
#ifndef AGENTXDP_VERSION
#error "AGENTXDP_VERSION is set by the Makefile"
#endif

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/*
 * Make room for at least need elements of elem_size bytes in *data, which holds *cap of
 * them now: grows by half again (at least to need, at least 16), with the size checked
 * for overflow. Returns 0 (nothing moved when need <= *cap), -ENOMEM or -EOVERFLOW; on
 * failure *data and *cap are unchanged. The model is libbpf's libbpf_ensure_mem().
 */
int util_ensure_mem(void **data, size_t *cap, size_t elem_size, size_t need);

/*
 * The same with an upper bound on the capacity: never grows past max_cap elements
 * (returns -E2BIG when need > max_cap).
 */
int util_ensure_mem_max(void **data, size_t *cap, size_t elem_size, size_t need, size_t max_cap);

/* A cache line: what one thread writes shares none with what another reads. */
#define UTIL_LINE_BYTES 64
/* n zeroed objects of size bytes on cache lines of their own (free() frees them); NULL
 * when out of memory or n * size overflows. */
void *util_line_calloc(size_t n, size_t size);

/* The calling thread's CPU seconds (-vv: where a phase's time goes). */
double util_thread_cpu_s(void);

/* A 16-byte address as text: dotted quad for IPv4-mapped (::ffff:a.b.c.d), "LID 18", else IPv6. */
#define ADDR_STR_LEN 46 /* INET6_ADDRSTRLEN */
const char *addr_str(const uint8_t addr[16], char *buf, size_t len);
/* True for an IPv4-mapped address (::ffff:0:0/96). */
int addr_is_v4mapped(const uint8_t addr[16]);
/*
 * A native InfiniBand LID (a packet without GRH) as a 16-byte address, so flow keys keep one
 * shape: 0100::LID (RFC 6666's discard-only prefix, never a GID). addr_str() writes it as
 * "LID 18" (decimal, as Wireshark's lrh.slid/dlid); addr_lid() gives the LID or -1;
 * addr_parse_lid() reads "LID 18", "LID: 18" or "lid 0x0012" (any case), 0 or -EINVAL.
 */
void addr_from_lid(uint8_t addr[16], uint16_t lid);
int addr_lid(const uint8_t addr[16]);
int addr_parse_lid(const char *text, uint8_t addr[16]);

/*
 * JSON strings, escaped one way everywhere: quote and backslash escaped, \n \r \t, other
 * control characters as \u00XX, invalid UTF-8 replaced by U+FFFD, so any C string becomes
 * text a strict JSON parser accepts. json_write_string() feeds put() (which returns < 0 to
 * stop); json_fput_string() writes to a stream.
 */
typedef int (*json_put_fn)(void *ctx, const char *s, size_t n);
int json_write_string(json_put_fn put, void *ctx, const char *s);
int json_fput_string(FILE *f, const char *s);

/* "/" to put between a folder name and a file name, "" when the name already ends in one. */
static inline const char *dir_sep(const char *dir)
{
	size_t n = strlen(dir);

	return n && dir[n - 1] == '/' ? "" : "/";
}

#endif
