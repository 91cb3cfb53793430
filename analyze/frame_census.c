/* frame_census.c: what a trace held instead of RoCE, and the option or step that would help. */
#include <stdio.h>
#include <string.h>

#include "analyze/frame_census.h"
#include "lib/decode/roce_decode.h"
#include "lib/trace/trace_reader.h"

static void count(struct frame_census *c, uint32_t kind, uint64_t n)
{
	uint32_t i;

	for (i = 0; i < c->used && c->kind[i] != kind; i++)
		;
	if (i == c->used) {
		if (c->used == FRAME_CENSUS_KINDS) {
			c->rest += n;
			return;
		}
		c->kind[c->used++] = kind;
	}
	c->n[i] += n;
}

static void add_linktype(struct frame_census *c, int linktype)
{
	for (uint32_t i = 0; i < c->n_linktypes; i++)
		if (c->linktype[i] == linktype)
			return;
	if (c->n_linktypes < FRAME_CENSUS_LINKTYPES)
		c->linktype[c->n_linktypes++] = linktype;
}

void frame_census_add(struct frame_census *c, int linktype, const uint8_t *frame, size_t caplen,
		      int bad_link)
{
	uint32_t kind = bad_link ? (uint32_t)FRAME_KIND_LINKTYPE << 24 | ((uint32_t)linktype & 0xffff)
				 : roce_frame_kind(linktype, frame, caplen);

	add_linktype(c, linktype);
	if (kind >> 24 == FRAME_KIND_GRE_PROTO)
		c->unknown_tunnel++;
	count(c, kind, 1);
}

void frame_census_merge(struct frame_census *dst, const struct frame_census *src)
{
	for (uint32_t i = 0; i < src->used; i++)
		count(dst, src->kind[i], src->n[i]);
	dst->rest += src->rest;
	dst->unknown_tunnel += src->unknown_tunnel;
	for (uint32_t i = 0; i < src->n_linktypes; i++)
		add_linktype(dst, src->linktype[i]);
}

/* What would help, from the most common kind. */
static const char *hint(uint32_t kind, char *buf, size_t len)
{
	uint32_t v = kind & 0xffff;

	if (FRAME_KIND_TUNNEL(kind))
		return "the mirror session delivers no RoCE: mirror the ports (or ACL) RoCE flows through";
	switch (kind >> 24) {
	case FRAME_KIND_LINKTYPE:
		return "not a link type agentxdp-analyze reads (Ethernet, Linux cooked, raw IP, InfiniBand):"
		       " capture on an Ethernet port, or convert the file";
	case FRAME_KIND_GRE_PROTO:
		return "GRE that is neither ERSPAN (0x88be, 0x22eb) nor bridged Ethernet (0x6558):"
		       " check the switch's mirror session type";
	case FRAME_KIND_UDP_PORT:
		if (v == 8472) {
			snprintf(buf, len, "if UDP port %u is VXLAN (Linux's default port): --vxlan-port %u", v, v);
			return buf;
		}
		snprintf(buf, len, "if UDP port %u is RoCE v2 on another port: --port %u", v, v);
		return buf;
	default:
		return "no RoCE at this capture point: capture where RoCE flows, or have a switch mirror"
		       " it to agentxdp-capture (agentxdp-capture(8), MIRROR SESSIONS)";
	}
}

void frame_census_str(const struct frame_census *c, char *buf, size_t len)
{
	uint32_t order[FRAME_CENSUS_KINDS], n = c->used;
	size_t off = 0;
	char what[96], tip[160];

#define PUT(...) (off += (size_t)snprintf(buf + off, off < len ? len - off : 0, __VA_ARGS__))
	buf[0] = 0;
	PUT("found instead: link type%s ", c->n_linktypes == 1 ? "" : "s");
	for (uint32_t i = 0; i < c->n_linktypes; i++)
		PUT("%s%s", i ? ", " : "", trace_linktype_name(c->linktype[i]));
	for (uint32_t i = 0; i < n; i++)
		order[i] = i;
	/* Most frames first (a handful of kinds: insertion sort). */
	for (uint32_t i = 1; i < n; i++)
		for (uint32_t j = i; j > 0 && c->n[order[j]] > c->n[order[j - 1]]; j--) {
			uint32_t t = order[j];

			order[j] = order[j - 1];
			order[j - 1] = t;
		}
	for (uint32_t i = 0; i < n && i < 4; i++) {
		roce_frame_kind_str(c->kind[order[i]], what, sizeof(what));
		PUT("%s%s (%llu)", i ? ", " : "; ", what, (unsigned long long)c->n[order[i]]);
	}
	if (n > 4 || c->rest)
		PUT(", ...");
	if (n)
		PUT("; %s", hint(c->kind[order[0]], tip, sizeof(tip)));
#undef PUT
	if (off >= len && len > 4)
		strcpy(buf + len - 4, "...");
}
