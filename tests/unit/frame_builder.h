/*
 * frame_builder.h: a frame under construction, for the decoder unit tests. Expected values
 * in the tests come from the bytes written here, never from the decoder.
 */
#ifndef AGENTXDP_FRAME_BUILDER_H
#define AGENTXDP_FRAME_BUILDER_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "lib/util/byte_reader.h"

struct fb {
	uint8_t b[2048];
	size_t len;
};

static inline void put8(struct fb *f, uint8_t v)
{
	f->b[f->len++] = v;
}
static inline void put16(struct fb *f, uint16_t v)
{
	put_be16(f->b + f->len, v);
	f->len += 2;
}
static inline void put24(struct fb *f, uint32_t v)
{
	put_be24(f->b + f->len, v);
	f->len += 3;
}
static inline void put32(struct fb *f, uint32_t v)
{
	put_be32(f->b + f->len, v);
	f->len += 4;
}
static inline void put64(struct fb *f, uint64_t v)
{
	put_be64(f->b + f->len, v);
	f->len += 8;
}
static inline void putn(struct fb *f, const void *p, size_t n)
{
	memcpy(f->b + f->len, p, n);
	f->len += n;
}
static inline void putz(struct fb *f, size_t n)
{
	memset(f->b + f->len, 0, n);
	f->len += n;
}

#endif
