/* trace_span.c: a trace file's first and last timestamps without reading its packets. */
#include "lib/trace/trace_span.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "lib/trace/pcapng_drops.h"
#include "lib/trace/pcapng_frames.h"

#define PCAPNG_SHB 0x0A0D0D0Au
#define PCAPNG_IDB 0x00000001u
#define PCAPNG_PB 0x00000002u	/* obsolete Packet Block */
#define PCAPNG_EPB 0x00000006u
#define PCAPNG_BOM 0x1A2B3C4Du
#define PCAPNG_OPT_TSRESOL 9

struct span_file {
	FILE *f;
	bool swap;			/* pcapng: the section's byte order is not ours */
	uint64_t size;
	uint64_t units_per_s;		/* pcapng: the (single) interface time resolution */
};

static uint32_t get32(const struct span_file *sf, const uint8_t *p)
{
	return pcapng_get32(p, sf->swap);
}

static int read_at(const struct span_file *sf, uint64_t off, void *buf, size_t len)
{
	if (off + len > sf->size || fseeko(sf->f, (off_t)off, SEEK_SET) || fread(buf, 1, len, sf->f) != len)
		return -1;
	return 0;
}

/* The resolution an IDB's options declare (10^6 by default). 0: unusable. */
static uint64_t idb_units(const struct span_file *sf, const uint8_t *body, uint32_t len)
{
	size_t off = 8; /* link type, reserved, snaplen */
	const uint8_t *val;
	uint16_t code, vlen;

	while (len > 8 && pcapng_option_next(body, len, &off, sf->swap, &code, &val, &vlen) > 0)
		if (code == PCAPNG_OPT_TSRESOL && vlen >= 1)
			return pcapng_tsresol_units(val[0]);
	return 1000000;
}

static uint64_t to_ns(uint64_t ts, uint64_t units)
{
	if (units == 1000000000)
		return ts;
	return (uint64_t)((long double)ts * 1e9L / (long double)units);
}

/* The timestamp of the packet block at off with total length len, if it is one. */
static int block_ts(const struct span_file *sf, uint64_t off, uint32_t type, uint64_t *ts_ns)
{
	uint8_t b[20];

	if ((type != PCAPNG_EPB && type != PCAPNG_PB) || read_at(sf, off, b, sizeof(b)))
		return -1;
	*ts_ns = to_ns(((uint64_t)get32(sf, b + 12) << 32) | get32(sf, b + 16), sf->units_per_s);
	return 0;
}

/*
 * pcapng: forward from the section header to the first packet block (learning the
 * interfaces' resolution), then backward from the end of the file through the blocks'
 * trailing lengths to the last one. One section and one resolution only (-1 otherwise:
 * the caller reads the whole file).
 */
static int span_pcapng(struct span_file *sf, uint64_t *first, uint64_t *last)
{
	uint8_t hdr[12], *body = NULL;
	uint64_t off = 0, end = sf->size;
	int found = 0, err = -1;

	if (read_at(sf, 0, hdr, sizeof(hdr)))
		return -1;
	sf->swap = false;
	if (get32(sf, hdr + 8) != PCAPNG_BOM) {
		sf->swap = true;
		if (get32(sf, hdr + 8) != PCAPNG_BOM)
			return -1;
	}
	sf->units_per_s = 0;
	while (off + 12 <= sf->size) {
		uint32_t type, len;

		if (read_at(sf, off, hdr, 8))
			goto out;
		type = get32(sf, hdr);
		len = get32(sf, hdr + 4);
		if (len < 12 || len % 4 || off + len > sf->size)
			goto out;
		if (type == PCAPNG_SHB && off)
			goto out; /* a second section: its own interfaces */
		if (type == PCAPNG_IDB) {
			uint64_t u;

			free(body);
			body = malloc(len - 8);
			if (!body || read_at(sf, off + 8, body, len - 12))
				goto out;
			u = idb_units(sf, body, len - 12);
			if (!u || (sf->units_per_s && u != sf->units_per_s))
				goto out;
			sf->units_per_s = u;
		}
		if (sf->units_per_s && !block_ts(sf, off, type, first)) {
			found = 1;
			break;
		}
		off += len;
	}
	if (!found)
		goto out;
	while (end > off) {
		uint8_t tail[4], head[8];
		uint32_t len, type;

		if (read_at(sf, end - 4, tail, 4))
			goto out;
		len = get32(sf, tail);
		if (len < 12 || len % 4 || len > end - off)
			goto out;
		if (read_at(sf, end - len, head, 8) || get32(sf, head + 4) != len)
			goto out;
		type = get32(sf, head);
		if (type == PCAPNG_SHB || type == PCAPNG_IDB)
			goto out; /* interfaces after the packets: leave it to the full read */
		if (!block_ts(sf, end - len, type, last)) {
			err = 0;
			break;
		}
		end -= len;
	}
out:
	free(body);
	return err;
}

/* pcap: every record header, skipping the packets (no backward walk in this format). */
static int span_pcap(struct span_file *sf, const uint8_t *fh, uint64_t *first, uint64_t *last)
{
	enum { CHUNK = 1 << 20 };
	uint8_t *buf = malloc(CHUNK);
	uint64_t off = 24, buf_off = 0, buf_len = 0;
	uint32_t magic;
	bool nano;
	int any = 0;

	memcpy(&magic, fh, 4);
	if (!buf || (magic != 0xa1b2c3d4u && magic != 0xa1b23c4du && magic != 0xd4c3b2a1u &&
		     magic != 0x4d3cb2a1u)) {
		free(buf);
		return -1;
	}
	sf->swap = magic == 0xd4c3b2a1u || magic == 0x4d3cb2a1u;
	nano = magic == 0xa1b23c4du || magic == 0x4d3cb2a1u;
	while (off + 16 <= sf->size) {
		const uint8_t *rh;
		uint64_t ts;

		/* Record headers are read from a 1 MiB window that moves forward only. */
		if (off < buf_off || off + 16 > buf_off + buf_len) {
			size_t want = sf->size - off < CHUNK ? (size_t)(sf->size - off) : CHUNK;

			if (fseeko(sf->f, (off_t)off, SEEK_SET) || fread(buf, 1, want, sf->f) != want)
				break;
			buf_off = off;
			buf_len = want;
		}
		rh = buf + (off - buf_off);
		ts = (uint64_t)get32(sf, rh) * 1000000000ull + (uint64_t)get32(sf, rh + 4) * (nano ? 1 : 1000);
		if (!any || ts < *first)
			*first = ts;
		if (!any || ts > *last)
			*last = ts;
		any = 1;
		off += 16 + (uint64_t)get32(sf, rh + 8);
	}
	free(buf);
	return any ? 0 : -1;
}

int trace_span(const char *path, uint64_t *first_ns, uint64_t *last_ns)
{
	struct span_file sf = { 0 };
	struct stat st;
	uint8_t fh[24];
	int err = -1;

	sf.f = fopen(path, "rb");
	if (!sf.f)
		return -1;
	if (fstat(fileno(sf.f), &st) || !S_ISREG(st.st_mode))
		goto out;
	sf.size = (uint64_t)st.st_size;
	/* Unbuffered: every read is a seek and a known length (pcap walks its own window). */
	setvbuf(sf.f, NULL, _IONBF, 0);
	if (read_at(&sf, 0, fh, sizeof(fh)))
		goto out;
	*first_ns = *last_ns = 0;
	{
		uint32_t m;

		memcpy(&m, fh, 4);
		err = m == PCAPNG_SHB ? span_pcapng(&sf, first_ns, last_ns) : span_pcap(&sf, fh, first_ns, last_ns);
	}
out:
	fclose(sf.f);
	return err;
}
