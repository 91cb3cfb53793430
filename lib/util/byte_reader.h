/* byte_reader.h: bounds-checked big-endian reads over packet bytes (tcpdump GET_BE_U_* style). */
#ifndef AGENTXDP_BYTE_READER_H
#define AGENTXDP_BYTE_READER_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

/*
 * A cursor over (p, len). Every read checks that its bytes are there; a short read
 * sets `short_read` and returns 0, so a parser can read a whole header and test once.
 * Packet bytes are never cast to a struct.
 */
struct byte_reader {
	const uint8_t *p;
	size_t len;
	size_t off;
	bool short_read;
};

static inline void br_init(struct byte_reader *br, const uint8_t *p, size_t len)
{
	br->p = p;
	br->len = len;
	br->off = 0;
	br->short_read = false;
}

static inline size_t br_remaining(const struct byte_reader *br)
{
	return br->off <= br->len ? br->len - br->off : 0;
}

static inline bool br_has(const struct byte_reader *br, size_t n)
{
	return br_remaining(br) >= n;
}

static inline const uint8_t *br_ptr(const struct byte_reader *br)
{
	return br->p + br->off;
}

static inline bool br_skip(struct byte_reader *br, size_t n)
{
	if (!br_has(br, n)) {
		br->short_read = true;
		br->off = br->len;
		return false;
	}
	br->off += n;
	return true;
}

/* Big-endian reads at q, for a header whose bytes the caller has checked (br_has) once. */
static inline uint16_t get_be16(const uint8_t *q)
{
	return (uint16_t)(q[0] << 8 | q[1]);
}
static inline uint32_t get_be24(const uint8_t *q)
{
	return (uint32_t)q[0] << 16 | (uint32_t)q[1] << 8 | q[2];
}
static inline uint32_t get_be32(const uint8_t *q)
{
	return (uint32_t)q[0] << 24 | (uint32_t)q[1] << 16 | (uint32_t)q[2] << 8 | q[3];
}
static inline uint64_t get_be64(const uint8_t *q)
{
	return (uint64_t)get_be32(q) << 32 | get_be32(q + 4);
}

static inline uint8_t br_u8(struct byte_reader *br)
{
	if (!br_has(br, 1)) {
		br->short_read = true;
		return 0;
	}
	return br->p[br->off++];
}

static inline uint16_t br_be16(struct byte_reader *br)
{
	if (!br_has(br, 2)) {
		br->short_read = true;
		br->off = br->len;
		return 0;
	}
	const uint8_t *q = br->p + br->off;
	br->off += 2;
	return get_be16(q);
}

static inline uint32_t br_be24(struct byte_reader *br)
{
	if (!br_has(br, 3)) {
		br->short_read = true;
		br->off = br->len;
		return 0;
	}
	const uint8_t *q = br->p + br->off;
	br->off += 3;
	return get_be24(q);
}

static inline uint32_t br_be32(struct byte_reader *br)
{
	if (!br_has(br, 4)) {
		br->short_read = true;
		br->off = br->len;
		return 0;
	}
	const uint8_t *q = br->p + br->off;
	br->off += 4;
	return get_be32(q);
}

static inline uint64_t br_be64(struct byte_reader *br)
{
	uint64_t hi = br_be32(br);
	return hi << 32 | br_be32(br);
}

/* Little-endian reads, for pcapng and pcap headers written on little-endian hosts. */
static inline uint16_t get_le16(const uint8_t *q)
{
	return (uint16_t)(q[0] | q[1] << 8);
}
static inline uint32_t get_le32(const uint8_t *q)
{
	return (uint32_t)q[0] | (uint32_t)q[1] << 8 | (uint32_t)q[2] << 16 | (uint32_t)q[3] << 24;
}
static inline void put_be16(uint8_t *q, uint16_t v)
{
	q[0] = v >> 8;
	q[1] = v & 0xff;
}
static inline void put_be24(uint8_t *q, uint32_t v)
{
	q[0] = (v >> 16) & 0xff;
	q[1] = (v >> 8) & 0xff;
	q[2] = v & 0xff;
}
static inline void put_be32(uint8_t *q, uint32_t v)
{
	q[0] = v >> 24;
	q[1] = (v >> 16) & 0xff;
	q[2] = (v >> 8) & 0xff;
	q[3] = v & 0xff;
}
static inline void put_be64(uint8_t *q, uint64_t v)
{
	put_be32(q, (uint32_t)(v >> 32));
	put_be32(q + 4, (uint32_t)v);
}

#endif
