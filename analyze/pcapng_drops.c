/* pcapng_drops.c: a bounds-checked pcapng block walker that sums drop counters (draft-ietf-opsawg-pcapng). */
#include <string.h>

#include "byte_reader.h"
#include "pcapng_drops.h"

#define BT_IDB 0x00000001u
#define BT_PB 0x00000002u	/* obsolete Packet Block */
#define BT_ISB 0x00000005u
#define BT_EPB 0x00000006u
#define BYTE_ORDER_MAGIC 0x1a2b3c4du
#define OPT_ENDOFOPT 0
#define OPT_EPB_DROPCOUNT 4
#define OPT_ISB_IFDROP 5
#define OPT_ISB_OSDROP 7
#define MAX_IFACES 256		/* per section; statistics of higher interface ids are ignored */

/* Per-section state: the latest cumulative ISB counters of each interface. */
struct section_stats {
	uint64_t ifdrop[MAX_IFACES];
	uint64_t osdrop[MAX_IFACES];
};

static uint32_t rd32(const uint8_t *q, bool swapped)
{
	return swapped ? (uint32_t)q[0] << 24 | (uint32_t)q[1] << 16 | (uint32_t)q[2] << 8 | q[3]
		       : get_le32(q);
}

static uint16_t rd16(const uint8_t *q, bool swapped)
{
	return swapped ? (uint16_t)(q[0] << 8 | q[1]) : get_le16(q);
}

static uint64_t rd64(const uint8_t *q, bool swapped)
{
	/* A 64-bit option value is in the section's byte order. */
	uint64_t a = rd32(q, swapped), b = rd32(q + 4, swapped);
	return swapped ? a << 32 | b : b << 32 | a;
}

/* Fold the finished section's cumulative counters into the totals. */
static void end_section(struct section_stats *st, struct pcapng_drops *out)
{
	for (int i = 0; i < MAX_IFACES; i++) {
		out->isb_ifdrop_sum += st->ifdrop[i];
		out->isb_osdrop_sum += st->osdrop[i];
	}
	memset(st, 0, sizeof(*st));
}

/*
 * Options (section 3.5): code 2, length 2, value padded to 4 bytes, until opt_endofopt.
 *   +---------------+---------------+
 *   |  Option Code  | Option Length |
 *   +---------------+---------------+
 *   /  Value (padded to 32 bits)    /
 * Calls back for the one 64-bit counter code we care about in this block type.
 */
static int walk_options(const uint8_t *p, size_t len, bool swapped, uint16_t want_a,
			uint64_t *val_a, bool *has_a, uint16_t want_b, uint64_t *val_b, bool *has_b)
{
	size_t off = 0;

	while (off + 4 <= len) {
		uint16_t code = rd16(p + off, swapped);
		uint16_t olen = rd16(p + off + 2, swapped);
		size_t padded = ((size_t)olen + 3) & ~(size_t)3;

		off += 4;
		if (code == OPT_ENDOFOPT)
			return 0;
		if (padded > len - off)
			return -1;
		if (olen == 8 && code == want_a) {
			*val_a = rd64(p + off, swapped);
			*has_a = true;
		} else if (olen == 8 && want_b && code == want_b) {
			*val_b = rd64(p + off, swapped);
			*has_b = true;
		}
		off += padded;
	}
	return 0; /* options may end without opt_endofopt */
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
 */
int pcapng_walk_drops(const uint8_t *p, size_t len, struct pcapng_drops *out)
{
	struct section_stats st; /* 4 KiB on the stack */
	bool swapped = false, in_section = false;
	size_t off = 0;

	memset(out, 0, sizeof(*out));
	memset(&st, 0, sizeof(st));
	while (off < len) {
		uint32_t type, total;
		const uint8_t *body;
		size_t body_len;

		if (len - off < 12) {
			out->stop_reason = "truncated block header";
			goto stop;
		}
		type = get_le32(p + off); /* the SHB type is a palindrome; others need the section order */
		if (type == PCAPNG_SHB_TYPE) {
			uint32_t magic = get_le32(p + off + 8);
			if (magic == BYTE_ORDER_MAGIC) {
				swapped = false;
			} else if (magic == 0x4d3c2b1au) {
				swapped = true;
			} else {
				out->stop_reason = "bad byte-order magic";
				goto stop;
			}
			if (in_section)
				end_section(&st, out);
			in_section = true;
		} else if (!in_section) {
			out->stop_reason = "first block is not a section header";
			goto stop;
		}
		type = rd32(p + off, swapped);
		total = rd32(p + off + 4, swapped);
		if (total < 12 || total % 4 || total > len - off) {
			out->stop_reason = total > len - off ? "truncated block" : "bad block length";
			goto stop;
		}
		if (rd32(p + off + total - 4, swapped) != total) {
			out->stop_reason = "trailing block length differs";
			goto stop;
		}
		body = p + off + 8;
		body_len = total - 12;

		if (type == BT_EPB && body_len >= 20) {
			/* if_id, ts high, ts low, caplen, origlen, data padded to 4, options */
			uint32_t caplen = rd32(body + 12, swapped);
			size_t data_len = ((size_t)caplen + 3) & ~(size_t)3;
			uint64_t drops = 0, unused = 0;
			bool has = false, unused_has = false;
			if (data_len <= body_len - 20 &&
			    walk_options(body + 20 + data_len, body_len - 20 - data_len, swapped,
					 OPT_EPB_DROPCOUNT, &drops, &has, 0, &unused, &unused_has) == 0 &&
			    has) {
				out->epb_dropcount_sum += drops;
				out->has_epb_dropcount = true;
			}
		} else if (type == BT_PB && body_len >= 4) {
			/* obsolete: if_id (2), drops_count (2), ... ; 0xffff = not known */
			uint16_t drops = rd16(body + 2, swapped);
			if (drops != 0xffff) {
				out->pb_drops_sum += drops;
				out->has_pb_drops = true;
			}
		} else if (type == BT_ISB && body_len >= 12) {
			uint32_t if_id = rd32(body, swapped);
			uint64_t ifdrop = 0, osdrop = 0;
			bool has_if = false, has_os = false;
			walk_options(body + 12, body_len - 12, swapped, OPT_ISB_IFDROP, &ifdrop, &has_if,
				     OPT_ISB_OSDROP, &osdrop, &has_os);
			if (if_id < MAX_IFACES) {
				if (has_if) {
					st.ifdrop[if_id] = ifdrop;
					out->has_isb_ifdrop = true;
				}
				if (has_os) {
					st.osdrop[if_id] = osdrop;
					out->has_isb_osdrop = true;
				}
			}
		}
		out->blocks++;
		off += total;
	}
	end_section(&st, out);
	return 0;
stop:
	end_section(&st, out);
	out->stop_offset = off;
	return -1;
}
