/*
 * trace_reader.c: pcap/pcapng files (or stdin) through libpcap, merged by timestamp, with
 * per-file health. A pcapng that libpcap refuses for its mixed link types is read again
 * with our own block reader (pcapng_frames), each frame with its interface's link type.
 */
#include <errno.h>
#include <fcntl.h>
#include <pcap/pcap.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/trace/pcapng_drops.h"
#include "lib/trace/pcapng_frames.h"
#include "lib/trace/trace_reader.h"
#include "lib/util/byte_reader.h"
#include "lib/util/util.h"

#define INPUT_BUFFER_BYTES (256 * 1024)
#define LINKTYPE_RAW 101
#define FAST_BUFFER_BYTES (256 * 1024)
#define FAST_PCAP_HEADER 16u	/* a classic pcap record's header */
/* pcapng_frames' range: at most this many whole seconds, so that ns fit in an int64_t */
#define FAST_MAX_S (((uint64_t)INT64_MAX - 999999999u) / 1000000000u)

/*
 * Our own buffered reader of a regular file's records, which libpcap opened and validated
 * first: records are parsed in place in one big buffer, with no per-record stdio call or
 * copy. It reads only what it is sure libpcap reads the same way (native byte order, pcap
 * 2.4 or pcapng EPBs in one section whose interfaces all have libpcap's link type, us or ns
 * timestamps without offset, no record over the snapshot length); on anything else, errors
 * included, the input goes back to libpcap, reopened and past the frames already delivered,
 * so frames, times and error messages stay libpcap's. A pcapng's drop-counter walker is given
 * the blocks parsed, less the EPBs without options (they hold no counter): it does not walk
 * the file a second time.
 */
enum fast_kind { FAST_OFF, FAST_PCAP, FAST_PCAPNG };

struct fast_input {
	enum fast_kind kind;
	int fd;
	uint8_t *buf;
	size_t cap, pos, len;		/* bytes [pos, len) of buf are read, not yet parsed */
	bool eof;
	bool pcap_nsec;			/* classic pcap: the fraction is ns, not us */
	uint32_t snapshot;		/* libpcap's snapshot length: longer records go back to it */
	struct pcapng_frames ng;	/* pcapng: the section's interfaces */
	size_t ng_checked;		/* interfaces checked so far */
	bool ng_section;		/* the first SHB was read */
};

struct trace_input {
	char *path;
	pcap_t *pcap;
	int linktype;
	uint64_t frame_number;		/* frames read so far */
	struct trace_health health;
	/* The frame waiting in the merge heap (valid until the next read on this input). */
	bool pending;
	uint64_t pending_ns;
	uint32_t pending_caplen, pending_origlen;
	int pending_linktype;
	const u_char *pending_data;
	/* Our own pcapng reader, once libpcap refused the file for its mixed link types. */
	FILE *own_fp;			/* NULL: not in use (or ended) */
	struct pcapng_frames own;
	uint8_t *block;			/* the block being read */
	size_t block_cap;
	uint64_t own_skip;		/* frames libpcap delivered already: read past them */
	bool error_unreported;		/* reading stopped on an error not yet returned by next() */
	int fd;				/* what the stream reads, -1 once closed */
	struct pcapng_drops_walker *drops; /* until the input ended */
	struct fast_input fast;		/* our buffered reader, while fast.kind != FAST_OFF */
};

/* Set by trace_reader_interrupt() from a signal handler: reading ends at the next read. */
static volatile sig_atomic_t interrupted;

struct trace_reader {
	int n;
	struct trace_input *inputs;
	struct heap_entry {
		uint64_t ns;		/* the input's pending_ns */
		int input;
	} *heap;			/* min-heap on (pending_ns, input index) */
	int heap_len;
	int last;			/* input whose frame the caller holds (the heap's root), -1 none */
	bool unreported;		/* an input may hold an error next() has not returned */
	char error[640];
};

/* Entries carry their input's pending time: the sift compares them without touching the
 * inputs (a few cache lines each). Equal times: the earlier input first, so merging is stable. */
static bool heap_less(const struct heap_entry *x, const struct heap_entry *y)
{
	if (x->ns != y->ns)
		return x->ns < y->ns;
	return x->input < y->input;
}

static void heap_push(struct trace_reader *tr, int input)
{
	int i = tr->heap_len++;

	tr->heap[i] = (struct heap_entry){ tr->inputs[input].pending_ns, input };
	while (i > 0) {
		int parent = (i - 1) / 2;
		if (!heap_less(&tr->heap[i], &tr->heap[parent]))
			break;
		struct heap_entry t = tr->heap[i];
		tr->heap[i] = tr->heap[parent];
		tr->heap[parent] = t;
		i = parent;
	}
}

/* The root's input has a later frame now, or (gone) none: one sift down, not a pop and a push. */
static void heap_root_moved(struct trace_reader *tr, bool gone)
{
	struct heap_entry *h = tr->heap;
	int i = 0;

	if (gone)
		h[0] = h[--tr->heap_len];
	else
		h[0].ns = tr->inputs[h[0].input].pending_ns;
	for (;;) {
		int l = 2 * i + 1, r = l + 1, m = i;
		if (l < tr->heap_len && heap_less(&h[l], &h[m]))
			m = l;
		if (r < tr->heap_len && heap_less(&h[r], &h[m]))
			m = r;
		if (m == i)
			break;
		struct heap_entry t = h[i];
		h[i] = h[m];
		h[m] = t;
		i = m;
	}
}

/* The drop counters of the bytes read so far (all of them once the input ended). */
static void input_drops_done(struct trace_input *in)
{
	struct pcapng_drops drops;

	if (!in->drops)
		return;
	pcapng_drops_finish(in->drops, &drops);
	in->health.has_drop_counters = pcapng_drops_present(&drops);
	in->health.capture_dropped = pcapng_drops_total(&drops);
	free(in->drops);
	in->drops = NULL;
}

/*
 * A frame's time in ns since the epoch (opened with nanosecond precision: tv_usec holds ns).
 * A pcap record's seconds are an unsigned 32-bit field that libpcap reads as signed: from
 * 2038 on (2^31 s) they arrive negative and are taken modulo 2^32 here. Past INT64_MAX ns
 * (the year 2262, possible in pcapng) a time cannot be stored: -1.
 */
static int frame_time_ns(const struct pcap_pkthdr *hdr, uint64_t *ns)
{
	int64_t sec = hdr->ts.tv_sec;

	if (sec < 0 && sec >= INT32_MIN)
		sec += 1ll << 32;
	if (sec < 0 || (uint64_t)sec > ((uint64_t)INT64_MAX - 999999999u) / 1000000000u)
		return -1;
	*ns = (uint64_t)sec * 1000000000ull + (uint64_t)hdr->ts.tv_usec;
	return 0;
}

/* A frame read: its input's health and frame number count it. */
static inline void input_count(struct trace_input *in, uint64_t ts, uint32_t caplen)
{
	struct trace_health *h = &in->health;

	if (h->frames == 0)
		h->first_ns = ts;
	else if (ts < h->last_ns)
		h->ts_backwards++;
	if (h->frames == 0 || ts > h->last_ns)
		h->last_ns = ts;
	h->frames++;
	h->bytes += caplen;
	in->frame_number++;
}

/* The frame just read becomes the input's pending one; its health counts it. */
static void input_take(struct trace_input *in, uint64_t ts, uint32_t caplen, uint32_t origlen, int linktype,
		       const u_char *data)
{
	input_count(in, ts, caplen);
	in->pending = true;
	in->pending_ns = ts;
	in->pending_caplen = caplen;
	in->pending_origlen = origlen;
	in->pending_linktype = linktype;
	in->pending_data = data;
}

static void fast_close(struct trace_input *in);

/* Reading of this input is over: close what reads it, settle its drop counters. */
static void input_end(struct trace_input *in)
{
	fast_close(in);
	if (in->pcap)
		pcap_close(in->pcap);
	in->pcap = NULL;
	if (in->own_fp)
		fclose(in->own_fp);
	in->own_fp = NULL;
	pcapng_frames_free(&in->own);
	free(in->block);
	in->block = NULL;
	in->block_cap = 0;
	input_drops_done(in);
}

/* Reading stopped on an error (reason): interrupted by us, or a truncated or corrupt input. */
static void input_failed(struct trace_input *in, const char *reason)
{
	if (interrupted) {
		/* Our own read gave up on a signal: the input is not corrupt, it was cut short. */
		snprintf(in->health.stop_reason, sizeof(in->health.stop_reason), "interrupted");
		return;
	}
	in->health.truncated = 1;
	if (!in->health.stop_reason[0])
		snprintf(in->health.stop_reason, sizeof(in->health.stop_reason), "%s", reason);
	in->error_unreported = true;
}

static FILE *input_stream(struct trace_input *in);

/*
 * libpcap 1.10 refuses a pcapng whose interfaces differ in link type or snapshot length
 * ("an interface has a type 113 different from the type of the first interface").
 */
static bool pcap_refused_mixed(pcap_t *pcap)
{
	return strstr(pcap_geterr(pcap), "different from the") && strstr(pcap_geterr(pcap), "of the first interface");
}

/*
 * Read the file again from its start with our own pcapng reader, past the frames libpcap
 * delivered, and the drop counters again with it. Needs a file that can be read twice: a
 * pipe cannot (-1, the reason in stop_reason).
 */
static int input_switch_to_own(struct trace_input *in)
{
	int fd = dup(in->fd);

	pcap_close(in->pcap); /* closes in->fd */
	in->pcap = NULL;
	in->fd = fd;
	if (fd < 0 || lseek(fd, 0, SEEK_SET) != 0) {
		snprintf(in->health.stop_reason, sizeof(in->health.stop_reason),
			 "interfaces of different link types, which libpcap refuses, and %s",
			 fd < 0 ? strerror(errno) : "this input cannot be read twice (give the file, not a pipe)");
		return -1;
	}
	if (in->drops)
		pcapng_drops_walker_init(in->drops);
	in->own_fp = input_stream(in);
	if (!in->own_fp) {
		snprintf(in->health.stop_reason, sizeof(in->health.stop_reason), "%s", strerror(errno));
		return -1;
	}
	pcapng_frames_init(&in->own);
	in->own_skip = in->frame_number;
	return 0;
}

/* The next frame of our own pcapng reader: 1, 0 at a clean end, -1 with *reason. */
static int own_next(struct trace_input *in, struct pcapng_frame *f, const char **reason)
{
	for (;;) {
		uint8_t hdr[12];
		uint32_t total;
		size_t got = fread(hdr, 1, sizeof(hdr), in->own_fp);
		int rc;

		if (got == 0 && feof(in->own_fp))
			return 0;
		if (got < sizeof(hdr)) {
			*reason = ferror(in->own_fp) ? strerror(errno) : "truncated block header";
			return -1;
		}
		if (pcapng_frames_block_length(&in->own, hdr, &total, reason))
			return -1;
		if (util_ensure_mem((void **)&in->block, &in->block_cap, 1, total)) {
			*reason = strerror(ENOMEM);
			return -1;
		}
		memcpy(in->block, hdr, sizeof(hdr));
		if (fread(in->block + sizeof(hdr), 1, total - sizeof(hdr), in->own_fp) != total - sizeof(hdr)) {
			*reason = ferror(in->own_fp) ? strerror(errno) : "truncated block";
			return -1;
		}
		rc = pcapng_frames_block(&in->own, in->block, total, f, reason);
		if (rc)
			return rc;
	}
}

static void input_fetch_own(struct trace_input *in)
{
	struct pcapng_frame f;
	const char *reason = NULL;
	int rc;

	while ((rc = own_next(in, &f, &reason)) == 1 && in->own_skip > 0)
		in->own_skip--; /* libpcap delivered this one already */
	if (rc == 1) {
		/* Files hold LINKTYPE_* values; libpcap hands out DLT_*: they differ for raw IP. */
		input_take(in, f.ts_ns, f.caplen, f.origlen, f.linktype == LINKTYPE_RAW ? DLT_RAW : f.linktype,
			   f.data);
		return;
	}
	if (rc < 0)
		input_failed(in, reason);
	input_end(in);
}

/* Our buffered reader is over (at the end, or back to libpcap): free what it holds. */
static void fast_close(struct trace_input *in)
{
	struct fast_input *fi = &in->fast;

	if (fi->kind == FAST_OFF)
		return;
	if (fi->fd >= 0)
		close(fi->fd);
	free(fi->buf);
	pcapng_frames_free(&fi->ng);
	memset(fi, 0, sizeof(*fi));
	fi->fd = -1;
}

/*
 * At least n bytes at buf + pos: 1; 0 at the end of the file before them; -1 with errno. A
 * classic pcap's bytes go through the pcapng drop-counter walker, as libpcap's stream does
 * (it stops at the first); a pcapng's blocks are given to it by fast_next_pcapng().
 */
static int fast_want(struct trace_input *in, size_t n)
{
	struct fast_input *fi = &in->fast;

	while (fi->len - fi->pos < n) {
		ssize_t got;

		if (fi->eof)
			return 0;
		if (fi->pos) {
			memmove(fi->buf, fi->buf + fi->pos, fi->len - fi->pos);
			fi->len -= fi->pos;
			fi->pos = 0;
		}
		if (util_ensure_mem((void **)&fi->buf, &fi->cap, 1, n > FAST_BUFFER_BYTES ? n : FAST_BUFFER_BYTES))
			return -1;
		if (interrupted) {
			errno = EINTR;
			return -1;
		}
		got = read(fi->fd, fi->buf + fi->len, fi->cap - fi->len);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			return -1;
		if (got == 0)
			fi->eof = true;
		else if (in->drops && fi->kind == FAST_PCAP)
			pcapng_drops_feed(in->drops, fi->buf + fi->len, (size_t)got);
		fi->len += (size_t)got;
	}
	return 1;
}

/* A classic pcap record's header at b: its time (as libpcap gives it at ns precision, and
 * frame_time_ns() takes it) and lengths. */
static inline void fast_pcap_header(const struct fast_input *fi, const uint8_t *b, struct pcapng_frame *f)
{
	uint32_t rec[4];	/* seconds, us or ns, captured length, original length */

	memcpy(rec, b, sizeof(rec));
	f->ts_ns = (uint64_t)rec[0] * 1000000000ull + (uint64_t)rec[1] * (fi->pcap_nsec ? 1 : 1000);
	f->caplen = rec[2];
	f->origlen = rec[3];
}

/* A classic pcap record: 1, 0 at a clean end, -1 for libpcap to read it. */
static int fast_next_pcap(struct trace_input *in, struct pcapng_frame *f)
{
	struct fast_input *fi = &in->fast;
	int rc = fast_want(in, FAST_PCAP_HEADER);

	if (rc <= 0)
		return rc == 0 && fi->pos == fi->len ? 0 : -1;
	fast_pcap_header(fi, fi->buf + fi->pos, f);
	if (f->caplen > fi->snapshot || fast_want(in, FAST_PCAP_HEADER + f->caplen) != 1)
		return -1;
	f->data = fi->buf + fi->pos + FAST_PCAP_HEADER;
	fi->pos += FAST_PCAP_HEADER + f->caplen;
	return 1;
}

/* The section's interfaces read so far are ones libpcap reads as we do (see struct fast_input). */
static bool fast_ng_ifaces_ok(struct trace_input *in)
{
	struct fast_input *fi = &in->fast;

	for (; fi->ng_checked < fi->ng.n_ifaces; fi->ng_checked++) {
		const struct pcapng_iface *ifc = &fi->ng.ifaces[fi->ng_checked];

		if (ifc->linktype != in->linktype || ifc->snaplen != fi->ng.ifaces[0].snaplen || ifc->tsoffset_s ||
		    (ifc->units_per_s != 1000000 && ifc->units_per_s != 1000000000))
			return false;
	}
	return true;
}

/*
 * What pcapng_frames_block() does for the common block, a little-endian EPB wholly in
 * [pos, len) on an interface of the section, no longer than the snapshot length, in one go:
 * its length with *f, or 0 for the long way (which also tells what is malformed, and sends a
 * longer record to libpcap). Needs 12 bytes at pos. Inlined in fast_give() (gcc does not on its
 * own): 10M frames read 0.34 s of CPU against 0.36 s called.
 */
static inline __attribute__((always_inline)) uint32_t fast_epb(struct trace_input *in, struct pcapng_frame *f)
{
	struct fast_input *fi = &in->fast;
	const uint8_t *b = fi->buf + fi->pos;
	const struct pcapng_iface *ifc;
	uint32_t total = get_le32(b + 4), if_id = get_le32(b + 8), caplen;
	uint64_t ts, units;

	if (get_le32(b) != 6 || fi->ng.swapped || !fi->ng.in_section || total < 32 || total % 4 ||
	    total > PCAPNG_FRAMES_MAX_BLOCK || total > fi->len - fi->pos || get_le32(b + total - 4) != total ||
	    if_id >= fi->ng.n_ifaces)
		return 0;
	caplen = get_le32(b + 20);
	ifc = &fi->ng.ifaces[if_id]; /* 10^6 or 10^9 units, no offset: fast_ng_ifaces_ok() */
	units = ifc->units_per_s;
	ts = (uint64_t)get_le32(b + 12) << 32 | get_le32(b + 16);
	if (caplen > total - 32 || caplen > fi->snapshot || ts >= (FAST_MAX_S + 1) * units)
		return 0;
	f->ts_ns = units == 1000000000 ? ts : ts * 1000;
	f->caplen = caplen;
	f->origlen = get_le32(b + 24);
	f->linktype = ifc->linktype;
	f->data = b + 28;
	if (in->drops && 28 + ((caplen + 3) & ~3u) != total - 4)
		pcapng_drops_feed(in->drops, b, total); /* it has options: maybe epb_dropcount */
	return total;
}

/* The next EPB of a pcapng: 1, 0 at a clean end, -1 for libpcap to read it. */
static int fast_next_pcapng(struct trace_input *in, struct pcapng_frame *f)
{
	struct fast_input *fi = &in->fast;

	for (;;) {
		const char *reason;
		uint32_t type, total;
		int rc = fast_want(in, 12);

		if (rc <= 0)
			return rc == 0 && fi->pos == fi->len ? 0 : -1;
		if ((total = fast_epb(in, f)) != 0) {
			fi->pos += total;
			return 1;
		}
		memcpy(&type, fi->buf + fi->pos, 4);
		if (type == 0x0A0D0D0A ? fi->ng_section : type == 2 || type == 3)
			return -1; /* a second section, an SPB or an obsolete PB */
		if (pcapng_frames_block_length(&fi->ng, fi->buf + fi->pos, &total, &reason) || fi->ng.swapped ||
		    fast_want(in, total) != 1)
			return -1;
		if (in->drops)
			pcapng_drops_feed(in->drops, fi->buf + fi->pos, total);
		rc = pcapng_frames_block(&fi->ng, fi->buf + fi->pos, total, f, &reason);
		if (rc < 0)
			return -1;
		fi->pos += total;
		fi->ng_section = true;
		if (!fast_ng_ifaces_ok(in))
			return -1;
		if (rc == 1)
			return f->caplen > fi->snapshot ? -1 : 1;
	}
}

/*
 * Back to libpcap: the file reopened from its start (the drop counters too), past the frames
 * already delivered. 0, or -1 with the reason in stop_reason.
 */
static int fast_fallback(struct trace_input *in)
{
	char pcap_err[PCAP_ERRBUF_SIZE] = "";
	uint64_t skip = in->frame_number;
	FILE *fp;

	fast_close(in);
	in->fd = open(in->path, O_RDONLY | O_CLOEXEC);
	if (in->drops)
		pcapng_drops_walker_init(in->drops);
	fp = in->fd < 0 ? NULL : input_stream(in);
	if (!fp) {
		snprintf(in->health.stop_reason, sizeof(in->health.stop_reason), "%s", strerror(errno));
		return -1;
	}
	in->pcap = pcap_fopen_offline_with_tstamp_precision(fp, PCAP_TSTAMP_PRECISION_NANO, pcap_err);
	if (!in->pcap) {
		fclose(fp);
		snprintf(in->health.stop_reason, sizeof(in->health.stop_reason), "%s", pcap_err);
		return -1;
	}
	while (skip--) {
		struct pcap_pkthdr *hdr;
		const u_char *data;

		if (pcap_next_ex(in->pcap, &hdr, &data) != 1) {
			snprintf(in->health.stop_reason, sizeof(in->health.stop_reason), "%s",
				 interrupted ? "interrupted" : pcap_geterr(in->pcap));
			return -1;
		}
	}
	return 0;
}

/*
 * One input's next frame, when our own reader has it whole in its buffer (a classic pcap
 * record, or the common EPB: fast_epb()), straight to the caller: what input_fetch(),
 * input_take() and give_frame() would give, without their calls, the pending copy or a read
 * ahead. Every lane of -j N reads every frame of its trace this way. False: the long way.
 */
static inline bool fast_give(struct trace_input *in, struct trace_frame *frame)
{
	struct fast_input *fi = &in->fast;
	size_t avail = fi->len - fi->pos;
	const uint8_t *b = fi->buf + fi->pos;
	struct pcapng_frame f;
	uint32_t total;

	if (fi->kind == FAST_PCAPNG) {
		if (avail < 12 || !(total = fast_epb(in, &f)))
			return false;
	} else if (fi->kind == FAST_PCAP) {
		if (avail < FAST_PCAP_HEADER)
			return false;
		fast_pcap_header(fi, b, &f);
		if (f.caplen > fi->snapshot || f.caplen > avail - FAST_PCAP_HEADER)
			return false;
		f.data = b + FAST_PCAP_HEADER;
		total = FAST_PCAP_HEADER + f.caplen;
	} else {
		return false;
	}
	fi->pos += total;
	input_count(in, f.ts_ns, f.caplen);
	frame->ts_ns = f.ts_ns;
	frame->caplen = f.caplen;
	frame->origlen = f.origlen;
	frame->linktype = in->linktype;
	frame->trace_index = 0;
	frame->frame_number = in->frame_number;
	frame->data = f.data;
	return true;
}

/* The next frame by our own reader: true when it was taken (or the input ended). */
static bool fast_fetch(struct trace_input *in)
{
	struct pcapng_frame f;
	int rc = in->fast.kind == FAST_PCAP ? fast_next_pcap(in, &f) : fast_next_pcapng(in, &f);

	if (rc == 1) {
		input_take(in, f.ts_ns, f.caplen, f.origlen, in->linktype, f.data);
		return true;
	}
	if (rc == 0 || interrupted || fast_fallback(in)) {
		if (rc != 0)
			input_failed(in, "read error"); /* the fallback's reason is in stop_reason already */
		input_end(in);
		return true;
	}
	return false;
}

/*
 * After libpcap opened and validated a regular file: read its records ourselves when its
 * format is one fast_next_pcap() or fast_next_pcapng() reads (else nothing changes).
 */
static void fast_start(struct trace_input *in)
{
	struct fast_input *fi = &in->fast;
	uint32_t head[3];	/* pcap: magic, version; pcapng: SHB type, length, byte-order magic */
	int fd = open(in->path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return;
	if (pread(fd, head, sizeof(head), 0) != (ssize_t)sizeof(head)) {
		close(fd);
		return;
	}
	if ((head[0] == 0xa1b2c3d4 || head[0] == 0xa1b23c4d) && head[1] == (4u << 16 | 2u)) {
		fi->kind = FAST_PCAP;
		fi->pcap_nsec = head[0] == 0xa1b23c4d;
	} else if (head[0] == 0x0A0D0D0A && head[2] == 0x1A2B3C4D) {
		fi->kind = FAST_PCAPNG;
		pcapng_frames_init(&fi->ng);
	} else {
		close(fd);
		return;
	}
	fi->fd = fd;
	fi->snapshot = (uint32_t)pcap_snapshot(in->pcap);
	pcap_close(in->pcap); /* closes in->fd */
	in->pcap = NULL;
	if (in->drops)
		pcapng_drops_walker_init(in->drops);
	if (fi->kind == FAST_PCAP && fast_want(in, 24) == 1)
		fi->pos = 24; /* the file header, read by libpcap */
}

/* Read the next frame of one input into its pending slot; record how reading stopped. */
static void input_fetch(struct trace_input *in)
{
	struct pcap_pkthdr *hdr;
	const u_char *data;
	uint64_t ts;
	int rc;

	in->pending = false;
	if (in->fast.kind != FAST_OFF && fast_fetch(in))
		return;
	if (in->own_fp) {
		input_fetch_own(in);
		return;
	}
	if (!in->pcap)
		return;
	rc = pcap_next_ex(in->pcap, &hdr, &data);
	if (rc == 1 && frame_time_ns(hdr, &ts)) {
		snprintf(in->health.stop_reason, sizeof(in->health.stop_reason),
			 "timestamp %lld s is past the year 2262", (long long)hdr->ts.tv_sec);
		rc = PCAP_ERROR;
	} else if (rc == 1) {
		input_take(in, ts, hdr->caplen, hdr->len, in->linktype, data);
		return;
	}
	if (rc == PCAP_ERROR && !interrupted && pcap_refused_mixed(in->pcap)) {
		if (input_switch_to_own(in) == 0) {
			input_fetch_own(in);
			return;
		}
		rc = PCAP_ERROR;
	}
	/* PCAP_ERROR_BREAK: the end of the file. Either way this input is finished. */
	if (rc == PCAP_ERROR)
		input_failed(in, in->pcap ? pcap_geterr(in->pcap) : "");
	input_end(in);
}

/*
 * libpcap reads the file through this stream: big reads, and the same bytes go through the
 * pcapng drop-counter walker (counters libpcap does not expose) while they are in cache. One
 * pass over the file, and memory does not grow with its size.
 */
static ssize_t input_stream_read(void *cookie, char *buf, size_t size)
{
	struct trace_input *in = cookie;
	ssize_t n;

	do {
		if (interrupted) {
			errno = EINTR;
			return -1;
		}
		n = read(in->fd, buf, size);
	} while (n < 0 && errno == EINTR);
	if (n > 0 && in->drops)
		pcapng_drops_feed(in->drops, (const uint8_t *)buf, (size_t)n);
	return n;
}

static int input_stream_close(void *cookie)
{
	struct trace_input *in = cookie;
	int rc = in->fd > STDERR_FILENO ? close(in->fd) : 0;

	in->fd = -1;
	return rc;
}

/* A buffered stream over in->fd through input_stream_read; NULL with errno. */
static FILE *input_stream(struct trace_input *in)
{
	FILE *fp = fopencookie(in, "r", (cookie_io_functions_t){ .read = input_stream_read, .close = input_stream_close });

	if (fp && setvbuf(fp, NULL, _IOFBF, INPUT_BUFFER_BYTES)) {
		fclose(fp);
		errno = ENOMEM;
		return NULL;
	}
	if (fp)
		__fsetlocking(fp, FSETLOCKING_BYCALLER); /* one thread reads it: no stdio locks */
	return fp;
}

/* Open one input, or return -1 with a one-line message. */
static int input_open(struct trace_input *in, const char *path, char *err, size_t errlen)
{
	char pcap_err[PCAP_ERRBUF_SIZE] = "";
	bool is_stdin = !strcmp(path, "-");
	struct stat st;
	FILE *fp;

	in->path = strdup(path);
	if (!in->path) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (!is_stdin) {
		if (stat(path, &st)) {
			snprintf(err, errlen, "%s: %s", path, strerror(errno));
			return -1;
		}
		if (S_ISDIR(st.st_mode)) {
			snprintf(err, errlen, "%s: %s", path, strerror(EISDIR));
			return -1;
		}
		if (S_ISREG(st.st_mode) && st.st_size == 0) {
			snprintf(err, errlen, "%s: empty file (0 bytes), not a pcap or pcapng file", path);
			return -1;
		}
	}
	in->fd = is_stdin ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC);
	if (in->fd < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	in->drops = malloc(sizeof(*in->drops));
	if (!in->drops) {
		snprintf(err, errlen, "%s: %s", path, strerror(ENOMEM));
		return -1;
	}
	pcapng_drops_walker_init(in->drops);
	fp = input_stream(in);
	if (!fp) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno ? errno : ENOMEM));
		return -1;
	}
	if (is_stdin) {
		/* libpcap 1.10 words an empty standard input differently from run to run
		 * ("truncated dump file" or "unknown file format"): look for a first byte. */
		int first = getc(fp);

		if (first == EOF) {
			snprintf(err, errlen, "standard input: %s",
				 ferror(fp) ? strerror(errno) : "empty input, not a pcap or pcapng file");
			fclose(fp);
			return -1;
		}
		ungetc(first, fp);
	}
	in->pcap = pcap_fopen_offline_with_tstamp_precision(fp, PCAP_TSTAMP_PRECISION_NANO, pcap_err);
	if (!in->pcap) {
		fclose(fp);
		const char *name = is_stdin ? "standard input" : path;
		if (strstr(pcap_err, "unknown file format") || strstr(pcap_err, "file header bytes"))
			snprintf(err, errlen, "%s: %s", name,
				 strstr(pcap_err, "only got 0") ? "empty input, not a pcap or pcapng file"
								: "not a pcap or pcapng file");
		else
			snprintf(err, errlen, "%s: %s", name, pcap_err);
		return -1;
	}
	in->linktype = pcap_datalink(in->pcap);
	in->fast.fd = -1;
	if (!is_stdin && S_ISREG(st.st_mode))
		fast_start(in);
	return 0;
}

int trace_reader_open(struct trace_reader **out, const char *const *paths, int n, char *err,
		      size_t errlen)
{
	struct trace_reader *tr;
	int stdin_count = 0;

	*out = NULL;
	if (n <= 0) {
		snprintf(err, errlen, "no trace given");
		return -1;
	}
	tr = calloc(1, sizeof(*tr));
	if (!tr)
		goto nomem;
	tr->last = -1;
	tr->inputs = calloc((size_t)n, sizeof(*tr->inputs));
	tr->heap = calloc((size_t)n, sizeof(*tr->heap));
	if (!tr->inputs || !tr->heap)
		goto nomem;
	tr->n = n;
	for (int i = 0; i < n; i++) {
		if (!strcmp(paths[i], "-") && ++stdin_count > 1) {
			snprintf(err, errlen, "-: standard input given more than once");
			goto fail;
		}
		if (input_open(&tr->inputs[i], paths[i], err, errlen))
			goto fail;
	}
	for (int i = 0; i < n; i++) {
		input_fetch(&tr->inputs[i]);
		tr->unreported |= tr->inputs[i].error_unreported;
		if (tr->inputs[i].pending)
			heap_push(tr, i);
	}
	*out = tr;
	return 0;
nomem:
	snprintf(err, errlen, "trace reader: %s", strerror(ENOMEM));
fail:
	trace_reader_close(tr);
	return -1;
}

void trace_reader_interrupt(void)
{
	interrupted = 1;
}

/* After trace_reader_interrupt(): every input still open stops, and says so. */
static void stop_interrupted(struct trace_reader *tr)
{
	for (int i = 0; i < tr->n; i++) {
		struct trace_input *in = &tr->inputs[i];

		if (!in->pcap && !in->own_fp && in->fast.kind == FAST_OFF)
			continue;
		snprintf(in->health.stop_reason, sizeof(in->health.stop_reason), "interrupted");
		input_end(in);
	}
	tr->heap_len = 0;
}

/* The pending frame of input idx goes to the caller, who holds it until the next call. */
static int give_frame(struct trace_reader *tr, int idx, struct trace_frame *frame)
{
	const struct trace_input *in = &tr->inputs[idx];

	frame->ts_ns = in->pending_ns;
	frame->caplen = in->pending_caplen;
	frame->origlen = in->pending_origlen;
	frame->linktype = in->pending_linktype;
	frame->trace_index = idx;
	frame->frame_number = in->frame_number;
	frame->data = in->pending_data;
	tr->last = idx;
	return 1;
}

/*
 * The merge keeps the input whose frame the caller holds at the heap's root: the next call
 * reads that input's next frame and sifts it down once. Keys (time, input index) are all
 * distinct, so the order is the same whatever the heap's shape.
 */
int trace_reader_next(struct trace_reader *tr, struct trace_frame *frame)
{
	if (interrupted) {
		stop_interrupted(tr);
		tr->last = -1;
	}
	if (tr->last >= 0) {
		struct trace_input *in = &tr->inputs[tr->last];

		if (tr->n == 1 && fast_give(in, frame))
			return 1;
		input_fetch(in);
		tr->unreported |= in->error_unreported;
		/* One input (each lane of -j N reads them all, often one): no merge. */
		if (tr->n == 1 && in->pending && !in->error_unreported)
			return give_frame(tr, 0, frame);
		heap_root_moved(tr, !in->pending);
		tr->last = -1;
	}
	for (int i = 0; tr->unreported && i < tr->n; i++) {
		struct trace_input *in = &tr->inputs[i];
		if (!in->error_unreported)
			continue;
		in->error_unreported = false;
		snprintf(tr->error, sizeof(tr->error), "%s: truncated or corrupt after %llu frames: %s",
			 in->path, (unsigned long long)in->health.frames, in->health.stop_reason);
		return -1;
	}
	tr->unreported = false;
	if (tr->heap_len == 0)
		return 0;
	return give_frame(tr, tr->heap[0].input, frame);
}

const char *trace_reader_error(const struct trace_reader *tr)
{
	return tr->error;
}

int trace_reader_count(const struct trace_reader *tr)
{
	return tr->n;
}

const char *trace_reader_path(const struct trace_reader *tr, int index)
{
	return index >= 0 && index < tr->n ? tr->inputs[index].path : NULL;
}

const struct trace_health *trace_reader_health(const struct trace_reader *tr, int index)
{
	return index >= 0 && index < tr->n ? &tr->inputs[index].health : NULL;
}

void trace_reader_take_farther(struct trace_reader *dst, const struct trace_reader *src)
{
	for (int i = 0; dst && src && i < dst->n && i < src->n; i++) {
		struct trace_health *d = &dst->inputs[i].health;
		const struct trace_health *s = &src->inputs[i].health;

		if (s->frames <= d->frames)
			continue;
		if (!d->frames)
			d->first_ns = s->first_ns;
		d->frames = s->frames;
		d->bytes = s->bytes;
		d->last_ns = s->last_ns;
		d->ts_backwards = s->ts_backwards;
		d->capture_dropped = s->capture_dropped;
		d->has_drop_counters = s->has_drop_counters;
	}
}

void trace_reader_close(struct trace_reader *tr)
{
	if (!tr)
		return;
	for (int i = 0; tr->inputs && i < tr->n; i++) {
		input_end(&tr->inputs[i]); /* a stream closes its fd (fd -1) */
		if (tr->inputs[i].fd > STDERR_FILENO)
			close(tr->inputs[i].fd);
		free(tr->inputs[i].drops);
		free(tr->inputs[i].path);
	}
	free(tr->inputs);
	free(tr->heap);
	free(tr);
}

const char *trace_linktype_name(int linktype)
{
	const char *name = pcap_datalink_val_to_name(linktype);

	return name ? name : "unknown";
}
