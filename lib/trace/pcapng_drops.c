/* pcapng_drops.c: a bounds-checked pcapng block walker that sums drop counters (draft-ietf-opsawg-pcapng). */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "lib/util/byte_reader.h"
#include "lib/trace/pcapng_drops.h"

#define BT_IDB 0x00000001u
#define BT_PB 0x00000002u	/* obsolete Packet Block */
#define BT_ISB 0x00000005u
#define BT_EPB 0x00000006u
#define BYTE_ORDER_MAGIC 0x1a2b3c4du
#define OPT_ENDOFOPT 0
#define OPT_EPB_DROPCOUNT 4
#define OPT_ISB_IFDROP 5
#define OPT_ISB_OSDROP 7
#define MAX_IFACES PCAPNG_DROPS_MAX_IFACES
#define HEAD_MAX 28		/* block header + the EPB's fixed fields */

uint32_t pcapng_get32(const uint8_t *q, bool swapped)
{
	return swapped ? get_be32(q) : get_le32(q);
}

uint16_t pcapng_get16(const uint8_t *q, bool swapped)
{
	return swapped ? get_be16(q) : get_le16(q);
}

uint64_t pcapng_get64(const uint8_t *q, bool swapped)
{
	/* A 64-bit option value is in the section's byte order. */
	uint64_t a = pcapng_get32(q, swapped), b = pcapng_get32(q + 4, swapped);
	return swapped ? a << 32 | b : b << 32 | a;
}

/* Fold the finished section's cumulative counters into the totals. */
static void end_section(struct pcapng_drops_walker *w)
{
	for (int i = 0; i < MAX_IFACES; i++) {
		w->d.isb_ifdrop_sum += w->ifdrop[i];
		w->d.isb_osdrop_sum += w->osdrop[i];
	}
	memset(w->ifdrop, 0, sizeof(w->ifdrop));
	memset(w->osdrop, 0, sizeof(w->osdrop));
}

/*
 * Options (section 3.5): code 2, length 2, value padded to 4 bytes, until opt_endofopt.
 *   +---------------+---------------+
 *   |  Option Code  | Option Length |
 *   +---------------+---------------+
 *   /  Value (padded to 32 bits)    /
 */
int pcapng_option_next(const uint8_t *p, size_t len, size_t *off, bool swapped, uint16_t *code,
		       const uint8_t **val, uint16_t *vlen)
{
	size_t padded;

	if (*off > len || len - *off < 4)
		return 0; /* options may end without opt_endofopt */
	*code = pcapng_get16(p + *off, swapped);
	*vlen = pcapng_get16(p + *off + 2, swapped);
	padded = ((size_t)*vlen + 3) & ~(size_t)3;
	*off += 4;
	if (*code == OPT_ENDOFOPT)
		return 0;
	if (padded > len - *off)
		return -1;
	*val = p + *off;
	*off += padded;
	return 1;
}

/* The one or two 64-bit counter codes we care about in this block type. */
static int walk_options(const uint8_t *p, size_t len, bool swapped, uint16_t want_a,
			uint64_t *val_a, bool *has_a, uint16_t want_b, uint64_t *val_b, bool *has_b)
{
	size_t off = 0;
	uint16_t code, olen;
	const uint8_t *val;
	int rc;

	while ((rc = pcapng_option_next(p, len, &off, swapped, &code, &val, &olen)) == 1) {
		if (olen == 8 && code == want_a) {
			*val_a = pcapng_get64(val, swapped);
			*has_a = true;
		} else if (olen == 8 && want_b && code == want_b) {
			*val_b = pcapng_get64(val, swapped);
			*has_b = true;
		}
	}
	return rc;
}

uint64_t pcapng_drops_total(const struct pcapng_drops *d)
{
	uint64_t per_packet = d->epb_dropcount_sum + d->pb_drops_sum;
	uint64_t stats = d->isb_ifdrop_sum + d->isb_osdrop_sum;
	return per_packet > stats ? per_packet : stats;
}

bool pcapng_drops_present(const struct pcapng_drops *d)
{
	return d->has_epb_dropcount || d->has_pb_drops || d->has_isb_ifdrop || d->has_isb_osdrop;
}

/*
 * Generic block (section 3.1):
 *   +---------------------------------------------------------------+
 *   |                          Block Type                           |
 *   +---------------------------------------------------------------+
 *   |                      Block Total Length                       |
 *   +---------------------------------------------------------------+
 *   /                          Block Body                           /
 *   +---------------------------------------------------------------+
 *   |                      Block Total Length                       |
 *   +---------------------------------------------------------------+
 * The SHB (type 0x0a0d0d0a) body starts with the byte-order magic 0x1a2b3c4d.
 *
 * The walk is a stream: a block wholly inside the bytes fed is read in place; one cut by the
 * end of a piece keeps its first HEAD_MAX bytes, its options and its trailing length.
 */

static void stop(struct pcapng_drops_walker *w, const char *reason)
{
	w->stopped = true;
	w->d.stop_reason = reason;
	w->d.stop_offset = w->block_off;
}

/* The first 12 bytes of a block: its length (0 when the walk stopped). */
static uint32_t block_header(struct pcapng_drops_walker *w, const uint8_t *h)
{
	uint32_t type = get_le32(h), total; /* the SHB type is a palindrome; others need the section order */

	if (type == PCAPNG_SHB_TYPE) {
		uint32_t magic = get_le32(h + 8);

		if (magic == BYTE_ORDER_MAGIC) {
			w->swapped = false;
		} else if (magic == 0x4d3c2b1au) {
			w->swapped = true;
		} else {
			stop(w, "bad byte-order magic");
			return 0;
		}
		if (w->in_section)
			end_section(w);
		w->in_section = true;
	} else if (!w->in_section) {
		stop(w, "first block is not a section header");
		return 0;
	}
	total = pcapng_get32(h + 4, w->swapped);
	if (total < 12 || total % 4) {
		stop(w, "bad block length");
		return 0;
	}
	return total;
}

/* Where the options of a block start, from its first min(total, HEAD_MAX) bytes; total - 4: none. */
static uint32_t options_start(const struct pcapng_drops_walker *w, const uint8_t *head, uint32_t total)
{
	uint32_t type = pcapng_get32(head, w->swapped), body_len = total - 12;

	if (type == BT_EPB && body_len >= 20) {
		/* if_id, ts high, ts low, caplen, origlen, data padded to 4, options */
		size_t data_len = ((size_t)pcapng_get32(head + 20, w->swapped) + 3) & ~(size_t)3;

		if (data_len <= body_len - 20)
			return 28 + (uint32_t)data_len;
	} else if (type == BT_ISB && body_len >= 12) {
		return 20; /* if_id, ts high, ts low, options */
	}
	return total - 4;
}

/* A whole block: head (its first min(total, HEAD_MAX) bytes), its options (NULL: not kept). */
static void block_done(struct pcapng_drops_walker *w, const uint8_t *head, uint32_t total, const uint8_t *opts,
		       size_t opts_len, uint32_t trailer)
{
	struct pcapng_drops *out = &w->d;
	uint32_t type, body_len = total - 12;

	if (trailer != total) {
		stop(w, "trailing block length differs");
		return;
	}
	type = pcapng_get32(head, w->swapped);
	if (type == BT_EPB && opts) {
		uint64_t drops = 0, unused = 0;
		bool has = false, unused_has = false;

		if (walk_options(opts, opts_len, w->swapped, OPT_EPB_DROPCOUNT, &drops, &has, 0, &unused,
				 &unused_has) == 0 &&
		    has) {
			out->epb_dropcount_sum += drops;
			out->has_epb_dropcount = true;
		}
	} else if (type == BT_PB && body_len >= 4) {
		/* obsolete: if_id (2), drops_count (2), ... ; 0xffff = not known */
		uint16_t drops = pcapng_get16(head + 10, w->swapped);

		if (drops != 0xffff) {
			out->pb_drops_sum += drops;
			out->has_pb_drops = true;
		}
	} else if (type == BT_ISB && body_len >= 12 && opts) {
		uint32_t if_id = pcapng_get32(head + 8, w->swapped);
		uint64_t ifdrop = 0, osdrop = 0;
		bool has_if = false, has_os = false;

		walk_options(opts, opts_len, w->swapped, OPT_ISB_IFDROP, &ifdrop, &has_if, OPT_ISB_OSDROP, &osdrop,
			     &has_os);
		if (if_id < MAX_IFACES) {
			if (has_if) {
				w->ifdrop[if_id] = ifdrop;
				out->has_isb_ifdrop = true;
			}
			if (has_os) {
				w->osdrop[if_id] = osdrop;
				out->has_isb_osdrop = true;
			}
		}
	}
	out->blocks++;
	w->block_off += total;
}

/* Copy the bytes at block positions [pos, pos + n) that fall in [a, b) to dst[x - a]. */
static void copy_range(uint8_t *dst, size_t a, size_t b, size_t pos, const uint8_t *p, size_t n)
{
	size_t lo = pos > a ? pos : a, hi = pos + n < b ? pos + n : b;

	if (lo < hi)
		memcpy(dst + (lo - a), p + (lo - pos), hi - lo);
}

/* n more bytes (n may be 0) of a block whose header is known; the block ends within them or later. */
static void block_piece(struct pcapng_drops_walker *w, const uint8_t *p, size_t n)
{
	uint32_t total = w->block_total;

	if (!w->opts_known) {
		copy_range(w->head, 0, w->head_len, w->block_pos, p, n);
		if (w->block_pos + n >= w->head_len) {
			/* The head is whole now: what it holds of the options and trailer counts too. */
			w->opts_start = options_start(w, w->head, total);
			if (total - 4 - w->opts_start <= PCAPNG_DROPS_OPTIONS_MAX)
				copy_range(w->opts, w->opts_start, total - 4, 0, w->head, w->block_pos);
			copy_range(w->trailer, total - 4, total, 0, w->head, w->block_pos);
			w->opts_known = true;
		}
	}
	if (w->opts_known) {
		if (total - 4 - w->opts_start <= PCAPNG_DROPS_OPTIONS_MAX)
			copy_range(w->opts, w->opts_start, total - 4, w->block_pos, p, n);
		copy_range(w->trailer, total - 4, total, w->block_pos, p, n);
	}
	w->block_pos += n;
	if (w->block_pos == total) {
		size_t opts_len = total - 4 - w->opts_start;

		block_done(w, w->head, total, opts_len <= PCAPNG_DROPS_OPTIONS_MAX ? w->opts : NULL, opts_len,
			   pcapng_get32(w->trailer, w->swapped));
		w->block_pos = 0;
		w->block_total = 0;
		w->opts_known = false;
	}
}

void pcapng_drops_walker_init(struct pcapng_drops_walker *w)
{
	memset(w, 0, offsetof(struct pcapng_drops_walker, opts));
	memset(w->ifdrop, 0, sizeof(w->ifdrop));
	memset(w->osdrop, 0, sizeof(w->osdrop));
}

/*
 * The common block of a little-endian file, an EPB wholly in the piece and well formed, read
 * in one go (what block_header + block_done do for it). Returns its length, 0 for the long way.
 */
static uint32_t epb_fast(struct pcapng_drops_walker *w, const uint8_t *p, size_t n)
{
	uint32_t total, os;
	size_t data_len;

	if (w->swapped || !w->in_section || n < 32 || get_le32(p) != BT_EPB)
		return 0;
	total = get_le32(p + 4);
	if (total < 32 || total % 4 || total > n || get_le32(p + total - 4) != total)
		return 0;
	data_len = ((size_t)get_le32(p + 20) + 3) & ~(size_t)3;
	if (data_len > total - 32)
		return 0;
	os = 28 + (uint32_t)data_len;
	if (os < total - 4) {
		uint64_t drops = 0, unused = 0;
		bool has = false, unused_has = false;

		if (walk_options(p + os, total - 4 - os, false, OPT_EPB_DROPCOUNT, &drops, &has, 0, &unused,
				 &unused_has) == 0 &&
		    has) {
			w->d.epb_dropcount_sum += drops;
			w->d.has_epb_dropcount = true;
		}
	}
	w->d.blocks++;
	w->block_off += total;
	return total;
}

void pcapng_drops_feed(struct pcapng_drops_walker *w, const uint8_t *p, size_t n)
{
	while (n && !w->stopped) {
		uint32_t total;
		size_t k;

		if (w->block_pos == 0 && (total = epb_fast(w, p, n)) != 0) {
			p += total;
			n -= total;
			continue;
		}

		if (w->block_total) {
			/* the rest of a block cut by the previous piece */
			k = w->block_total - w->block_pos;
			if (k > n)
				k = (uint32_t)n;
			block_piece(w, p, k);
			p += k;
			n -= k;
			continue;
		}
		if (w->block_pos == 0 && n >= 12) {
			total = block_header(w, p);
			if (!total)
				return;
			if (total <= n) {
				/* the usual case: the whole block is here */
				uint32_t os = options_start(w, p, total);

				block_done(w, p, total, p + os, total - 4 - os, pcapng_get32(p + total - 4, w->swapped));
				p += total;
				n -= total;
				continue;
			}
		} else {
			/* a header cut by the end of a piece: gather its 12 bytes */
			k = 12 - w->block_pos;
			if (k > n)
				k = n;
			memcpy(w->head + w->block_pos, p, k);
			w->block_pos += (uint32_t)k;
			p += k;
			n -= k;
			if (w->block_pos < 12)
				return;
			total = block_header(w, w->head);
			if (!total)
				return;
			/* the header's 12 bytes are in head already */
			w->block_total = total;
			w->head_len = total < HEAD_MAX ? total : HEAD_MAX;
			block_piece(w, p, 0); /* a 12-byte block ends here */
			continue;
		}
		/* a block that goes on in the next piece */
		w->block_total = total;
		w->head_len = total < HEAD_MAX ? total : HEAD_MAX;
		w->block_pos = 0;
		block_piece(w, p, n);
		return;
	}
}

int pcapng_drops_finish(struct pcapng_drops_walker *w, struct pcapng_drops *out)
{
	if (!w->stopped && (w->block_total || w->block_pos))
		stop(w, w->block_total ? "truncated block" : "truncated block header");
	end_section(w);
	*out = w->d;
	return w->stopped ? -1 : 0;
}

int pcapng_walk_drops(const uint8_t *p, size_t len, struct pcapng_drops *out)
{
	/* The walker keeps a 64 KiB options buffer: on the heap, not the stack. */
	struct pcapng_drops_walker *w = malloc(sizeof(*w));
	int rc;

	if (!w) {
		memset(out, 0, sizeof(*out));
		out->stop_reason = "out of memory";
		return -1;
	}
	pcapng_drops_walker_init(w);
	pcapng_drops_feed(w, p, len);
	rc = pcapng_drops_finish(w, out);
	free(w);
	return rc;
}
