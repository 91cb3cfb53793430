/* pcapng_frames.c: frames of pcapng blocks with their interface's link type (draft-ietf-opsawg-pcapng). */
#include <stdlib.h>
#include <string.h>

#include "lib/trace/pcapng_drops.h"
#include "lib/trace/pcapng_frames.h"
#include "lib/util/byte_reader.h"
#include "lib/util/util.h"

#define BT_IDB 0x00000001u
#define BT_PB 0x00000002u	/* obsolete Packet Block */
#define BT_SPB 0x00000003u
#define BT_EPB 0x00000006u
#define BYTE_ORDER_MAGIC 0x1a2b3c4du
#define OPT_IF_TSRESOL 9
#define OPT_IF_TSOFFSET 14
#define NS_PER_S 1000000000ull

void pcapng_frames_init(struct pcapng_frames *s)
{
	memset(s, 0, sizeof(*s));
}

void pcapng_frames_free(struct pcapng_frames *s)
{
	free(s->ifaces);
	pcapng_frames_init(s);
}

int pcapng_frames_block_length(struct pcapng_frames *s, const uint8_t hdr[12], uint32_t *total,
			       const char **reason)
{
	/* The SHB type is a palindrome; its byte-order magic says how to read the rest. */
	if (get_le32(hdr) == PCAPNG_SHB_TYPE) {
		uint32_t magic = get_le32(hdr + 8);

		if (magic != BYTE_ORDER_MAGIC && magic != 0x4d3c2b1au) {
			*reason = "bad byte-order magic";
			return -1;
		}
		s->swapped = magic != BYTE_ORDER_MAGIC;
		s->in_section = true;
		s->n_ifaces = 0; /* a new section describes its own interfaces */
	} else if (!s->in_section) {
		*reason = "first block is not a section header";
		return -1;
	}
	*total = pcapng_get32(hdr + 4, s->swapped);
	if (*total < 12 || *total % 4 || *total > PCAPNG_FRAMES_MAX_BLOCK) {
		*reason = *total > PCAPNG_FRAMES_MAX_BLOCK ? "block longer than 16 MiB" : "bad block length";
		return -1;
	}
	return 0;
}

uint64_t pcapng_tsresol_units(uint8_t v)
{
	uint64_t u = 1;

	if (v & 0x80)
		return (v & 0x7f) < 64 ? 1ull << (v & 0x7f) : 0;
	for (uint8_t i = 0; i < v; i++) {
		if (u > UINT64_MAX / 10)
			return 0;
		u *= 10;
	}
	return u;
}

/*
 * Interface Description Block (section 4.2), body:
 *   +-------------------------------+-------------------------------+
 *   |           LinkType            |           Reserved            |
 *   +-------------------------------+-------------------------------+
 *   |                            SnapLen                            |
 *   +---------------------------------------------------------------+
 *   /                           Options                             /
 */
static int idb(struct pcapng_frames *s, const uint8_t *body, size_t len, const char **reason)
{
	struct pcapng_iface ifc = { .units_per_s = 1000000 };
	const uint8_t *val;
	uint16_t code, vlen;
	size_t off = 8;
	int rc;

	if (len < 8) {
		*reason = "interface description block too short";
		return -1;
	}
	ifc.linktype = pcapng_get16(body, s->swapped);
	ifc.snaplen = pcapng_get32(body + 4, s->swapped);
	while ((rc = pcapng_option_next(body, len, &off, s->swapped, &code, &val, &vlen)) == 1) {
		if (code == OPT_IF_TSRESOL && vlen >= 1) {
			ifc.units_per_s = pcapng_tsresol_units(val[0]);
		} else if (code == OPT_IF_TSOFFSET && vlen == 8) {
			ifc.tsoffset_s = (int64_t)pcapng_get64(val, s->swapped);
		}
	}
	if (rc < 0 || !ifc.units_per_s) {
		*reason = rc < 0 ? "interface option overruns its block" : "unusable if_tsresol";
		return -1;
	}
	if (util_ensure_mem_max((void **)&s->ifaces, &s->cap_ifaces, sizeof(*s->ifaces), s->n_ifaces + 1,
				PCAPNG_FRAMES_MAX_IFACES)) {
		*reason = "too many interfaces";
		return -1;
	}
	s->ifaces[s->n_ifaces++] = ifc;
	return 0;
}

/* A timestamp in its interface's units -> ns since the epoch; -1 outside 1970..2262. */
static int ts_to_ns(const struct pcapng_iface *ifc, uint64_t t, uint64_t *ns)
{
	uint64_t units = ifc->units_per_s, frac = t % units, frac_ns;
	int64_t sec = (int64_t)(t / units);

	if (units <= NS_PER_S && NS_PER_S % units == 0)
		frac_ns = frac * (NS_PER_S / units);
	else
		frac_ns = (uint64_t)((unsigned __int128)frac * NS_PER_S / units);
	if (__builtin_add_overflow(sec, ifc->tsoffset_s, &sec) || sec < 0 ||
	    (uint64_t)sec > ((uint64_t)INT64_MAX - (NS_PER_S - 1)) / NS_PER_S)
		return -1;
	*ns = (uint64_t)sec * NS_PER_S + frac_ns;
	return 0;
}

static const struct pcapng_iface *iface(const struct pcapng_frames *s, uint32_t if_id, const char **reason)
{
	if (if_id >= s->n_ifaces) {
		*reason = "packet on an interface not described";
		return NULL;
	}
	return &s->ifaces[if_id];
}

/*
 * The packet blocks, bodies after the 8-byte block header:
 *   EPB (4.3): Interface ID (4), Timestamp high (4), low (4), Captured len (4), Original len (4), data
 *   PB  (obsolete, appendix): Interface ID (2), Drops (2), Timestamp high, low, Captured, Original, data
 *   SPB (4.4): Original len (4), data (captured = min(original, snaplen, what is there)), no time
 */
static int packet(struct pcapng_frames *s, uint32_t type, const uint8_t *body, size_t len,
		  struct pcapng_frame *f, const char **reason)
{
	const struct pcapng_iface *ifc;
	uint32_t if_id;

	if (type == BT_SPB) {
		if (len < 4 || !(ifc = iface(s, 0, reason))) {
			*reason = len < 4 ? "simple packet block too short" : *reason;
			return -1;
		}
		f->origlen = pcapng_get32(body, s->swapped);
		f->caplen = f->origlen;
		if (ifc->snaplen && f->caplen > ifc->snaplen)
			f->caplen = ifc->snaplen;
		if (f->caplen > len - 4)
			f->caplen = (uint32_t)(len - 4);
		f->ts_ns = 0;
		f->linktype = ifc->linktype;
		f->data = body + 4;
		return 1;
	}
	if (len < 20) {
		*reason = "packet block too short";
		return -1;
	}
	if_id = type == BT_PB ? pcapng_get16(body, s->swapped) : pcapng_get32(body, s->swapped);
	if (!(ifc = iface(s, if_id, reason)))
		return -1;
	f->caplen = pcapng_get32(body + 12, s->swapped);
	f->origlen = pcapng_get32(body + 16, s->swapped);
	if (f->caplen > len - 20) {
		*reason = "captured length past the end of its block";
		return -1;
	}
	if (ts_to_ns(ifc, (uint64_t)pcapng_get32(body + 4, s->swapped) << 32 | pcapng_get32(body + 8, s->swapped),
		     &f->ts_ns)) {
		*reason = "timestamp outside 1970 to 2262";
		return -1;
	}
	f->linktype = ifc->linktype;
	f->data = body + 20;
	return 1;
}

int pcapng_frames_block(struct pcapng_frames *s, const uint8_t *blk, size_t len, struct pcapng_frame *f,
			const char **reason)
{
	uint32_t type, total;

	if (len < 12) {
		*reason = "truncated block header";
		return -1;
	}
	if (pcapng_frames_block_length(s, blk, &total, reason))
		return -1;
	if (total != len || pcapng_get32(blk + len - 4, s->swapped) != total) {
		*reason = total != len ? "truncated block" : "trailing block length differs";
		return -1;
	}
	type = pcapng_get32(blk, s->swapped);
	if (type == BT_IDB)
		return idb(s, blk + 8, len - 12, reason);
	if (type == BT_EPB || type == BT_PB || type == BT_SPB)
		return packet(s, type, blk + 8, len - 12, f, reason);
	return 0; /* SHB (read above), statistics, names, custom blocks: no frame */
}
