/*
 * store_spill.h: raw rows waiting for the end of a run in an unlinked file beside the
 * database (--samples findings keeps them only for the flows the findings name).
 *
 * Records are variable-length: unsigned LEB128 integers (7 bits a byte), times as zigzag
 * differences from the previous record's. A latency sample takes about 12 bytes instead of
 * a 32-byte struct: writing the file into the page cache was 11% of a run's CPU.
 */
#ifndef AGENTXDP_STORE_SPILL_H
#define AGENTXDP_STORE_SPILL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The longest record a writer may put in one go (8 integers of at most 10 bytes). */
#define SPILL_REC_MAX 80

struct spill_file {
	int fd;			/* -1: not open */
	size_t len;		/* bytes in buf */
	size_t pos;		/* reading: the next record */
	int eof;		/* reading: nothing more to read from fd */
	uint8_t buf[1 << 16];
};

/* Creates base + suffix, a new file (never an existing one, nor a link): its descriptor,
 * its name in *path (the caller's to unlink and free); -1 and errno. */
int store_sibling_create(const char *base, const char *suffix, char **path);
/* Creates base + suffix, unlinked at once: nothing to clean up. 0, or an errno. */
int store_spill_open(struct spill_file *f, const char *base, const char *suffix);
void store_spill_close(struct spill_file *f);

/* Write out what is buffered: 0 or an errno. */
int store_spill_flush(struct spill_file *f);

/* Writing: room for one record (SPILL_REC_MAX bytes) at the end, the buffer written out
 * first when full; *err an errno (ENOSPC for a short write) when that failed. Inline: once
 * per spilled row, millions of them. */
static inline uint8_t *store_spill_room(struct spill_file *f, int *err)
{
	*err = 0;
	if (__builtin_expect(f->len + SPILL_REC_MAX > sizeof(f->buf), 0))
		*err = store_spill_flush(f);
	return f->buf + f->len;
}

/* The record written up to end (inside the room) is kept. */
static inline void store_spill_done(struct spill_file *f, const uint8_t *end)
{
	f->len = (size_t)(end - f->buf);
}

/* After the last record: back to the start for reading. 0 or an errno. */
int store_spill_rewind(struct spill_file *f);
/* Reading: 1 with [*p, *end) holding the next record (SPILL_REC_MAX bytes, or up to the
 * file's end); 0 at the end; -errno. The caller sets f->pos to where its record ended. */
int store_spill_next(struct spill_file *f, const uint8_t **p, const uint8_t **end);

static inline uint8_t *spill_put(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

/* One integer from [*p, end): 0, or -1 when it runs past end or past 64 bits. */
static inline int spill_get(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	uint64_t x = 0;

	for (unsigned shift = 0; *p < end && shift < 64; shift += 7) {
		uint8_t b = *(*p)++;

		if (shift == 63 && b > 1)
			return -1; /* the 10th byte holds bit 63 only */
		x |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*v = x;
			return 0;
		}
	}
	return -1;
}

/* A signed difference as an unsigned integer that stays small: 0, -1, 1, -2 ... -> 0, 1, 2, 3 ... */
static inline uint64_t spill_zigzag(uint64_t diff)
{
	return diff << 1 ^ (uint64_t)((int64_t)diff >> 63);
}

static inline uint64_t spill_unzigzag(uint64_t z)
{
	return z >> 1 ^ (0 - (z & 1));
}

#endif
