/* pcapng_writer.c: the pcapng (and classic pcap) writer that agentxdp-capture and agentxdp-synth share. */
#include "lib/trace/pcapng_writer.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "lib/util/util.h"

/*
 * Blocks are assembled whole in a buffer and handed to write(2) in one piece. When a write
 * stops short (ENOSPC, EFBIG), a regular file is truncated back to the end of the last block
 * that made it completely, so a full disk leaves a file every reader can open.
 */

#define PCAPNG_BT_SHB 0x0A0D0D0Au
#define PCAPNG_BT_IDB 0x00000001u
#define PCAPNG_BT_ISB 0x00000005u
#define PCAPNG_BT_EPB 0x00000006u
#define PCAPNG_BOM 0x1A2B3C4Du

/* Option codes (draft-ietf-opsawg-pcapng sections 4.1-4.6). */
#define OPT_ENDOFOPT 0
#define OPT_SHB_HARDWARE 2
#define OPT_SHB_OS 3
#define OPT_SHB_USERAPPL 4
#define OPT_IF_NAME 2
#define OPT_IF_DESCRIPTION 3
#define OPT_IF_TSRESOL 9
#define OPT_EPB_FLAGS 2
#define OPT_EPB_DROPCOUNT 4
#define OPT_EPB_QUEUE 6
#define OPT_ISB_STARTTIME 2
#define OPT_ISB_ENDTIME 3
#define OPT_ISB_IFRECV 4
#define OPT_ISB_IFDROP 5
#define OPT_ISB_OSDROP 7

#define WRITER_BUF_BYTES (256u * 1024u)
#define MAX_OPTION_STRING 65535u

/* An output: a file descriptor plus a buffer of whole blocks not yet written. */
struct block_out {
	int fd;
	bool own_fd;
	bool failed;		/* a write failed: refuse more, the file holds whole blocks only */
	int saved_errno;
	uint8_t *buf;
	size_t used;
	size_t cap;
	uint64_t bytes;		/* bytes handed to the kernel (whole blocks) */
	/* Offset of a record's length field and the fixed size it adds, to walk blocks. */
	bool pcap_records;	/* classic pcap: 16-byte header, incl_len at offset 8 */
	uint64_t *if_packets;	/* pcapng: packet blocks in the file, per interface */
	uint64_t *if_pending;	/* pcapng: packet blocks in buf, per interface */
	size_t n_if;
};

static inline uint32_t get_u32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Length of the whole block/record starting at p (at least 1 so a walk always advances). */
static size_t block_len_at(const struct block_out *o, const uint8_t *p, size_t avail)
{
	uint32_t v;

	if (o->pcap_records) {
		if (avail < 16)
			return avail;
		v = get_u32(p + 8);
		return 16 + (size_t)v;
	}
	if (avail < 8)
		return avail;
	v = get_u32(p + 4);
	return v ? v : 1;
}

/*
 * Count the packet blocks among the whole blocks in buf[0, len), per interface. Only a
 * short write needs the walk: a whole buffer's packets are the pending counts.
 */
static void out_count_packets(struct block_out *o, size_t len)
{
	size_t off = 0;

	if (o->if_pending)
		memset(o->if_pending, 0, o->n_if * sizeof(*o->if_pending));

	while (o->if_packets && off + 12 <= len) {
		if (get_u32(o->buf + off) == PCAPNG_BT_EPB) {
			uint32_t if_id = get_u32(o->buf + off + 8);

			if (if_id < o->n_if)
				o->if_packets[if_id]++;
		}
		off += block_len_at(o, o->buf + off, len - off);
	}
}

static int out_drain(struct block_out *o)
{
	size_t done = 0;

	if (o->failed) {
		errno = o->saved_errno;
		return -1;
	}
	while (done < o->used) {
		ssize_t n = write(o->fd, o->buf + done, o->used - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			int err = n < 0 ? errno : ENOSPC;
			size_t whole = 0, step;

			/* Keep only blocks that were written completely. */
			while (whole < o->used) {
				step = block_len_at(o, o->buf + whole, o->used - whole);
				if (whole + step > done)
					break;
				whole += step;
			}
			if (whole < done) {
				struct stat st;
				if (fstat(o->fd, &st) == 0 && S_ISREG(st.st_mode) &&
				    ftruncate(o->fd, (off_t)(o->bytes + whole)) == 0)
					lseek(o->fd, (off_t)(o->bytes + whole), SEEK_SET);
			}
			out_count_packets(o, whole);
			o->bytes += whole;
			o->used = 0;
			o->failed = true;
			o->saved_errno = err;
			errno = err;
			return -1;
		}
		done += (size_t)n;
	}
	for (size_t i = 0; o->if_pending && i < o->n_if; i++) {
		o->if_packets[i] += o->if_pending[i];
		o->if_pending[i] = 0;
	}
	o->bytes += o->used;
	o->used = 0;
	return 0;
}

/* Room for `n` more bytes in the buffer, draining or growing it. */
static int out_reserve(struct block_out *o, size_t n)
{
	int err;

	if (o->failed) {
		errno = o->saved_errno;
		return -1;
	}
	if (o->used + n <= o->cap)
		return 0;
	if (out_drain(o) < 0)
		return -1;
	/* Empty now: a block bigger than the whole buffer needs a bigger one. */
	err = util_ensure_mem((void **)&o->buf, &o->cap, 1, n);
	if (err) {
		errno = -err;
		return -1;
	}
	return 0;
}

static int out_init(struct block_out *o, int fd, bool own_fd, bool pcap_records)
{
	memset(o, 0, sizeof(*o));
	o->fd = fd;
	o->own_fd = own_fd;
	o->pcap_records = pcap_records;
	o->cap = WRITER_BUF_BYTES;
	o->buf = malloc(o->cap);
	return o->buf ? 0 : -1;
}

static int out_close(struct block_out *o)
{
	int rc = 0, err = 0;

	if (out_drain(o) < 0) {
		rc = -1;
		err = errno;
	}
	if (o->own_fd && close(o->fd) < 0 && rc == 0) {
		rc = -1;
		err = errno;
	}
	free(o->buf);
	o->buf = NULL;
	if (rc)
		errno = err;
	return rc;
}

static int open_output(const char *path)
{
	struct stat st;
	int fd;

	if (strcmp(path, "-") == 0)
		return STDOUT_FILENO;
	/* A regular file is opened for reading too: on a full disk the final statistics read
	 * back the last blocks to take their room. A FIFO or a device stays write-only. */
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode))
		return open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0640);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0640);
	if (fd < 0 && errno == EACCES)
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0640);
	return fd;
}

/* Little-endian host order writers into the block buffer (pcapng is host order; we write LE). */
static inline void put_u16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static inline void put_u32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

static inline size_t pad4(size_t n)
{
	return (n + 3) & ~(size_t)3;
}

/* One block under construction at the end of the buffer. */
struct block {
	uint8_t *start;
	size_t len;
};

static uint8_t *block_add(struct block *b, size_t n)
{
	uint8_t *p = b->start + b->len;
	memset(p, 0, pad4(n));
	b->len += pad4(n);
	return p;
}

static void block_opt(struct block *b, uint16_t code, const void *val, size_t len)
{
	uint8_t *p = block_add(b, 4);
	put_u16(p, code);
	put_u16(p + 2, (uint16_t)len);
	if (len)
		memcpy(block_add(b, len), val, len);
}

static void block_opt_u64(struct block *b, uint16_t code, uint64_t v)
{
	uint8_t val[8];
	put_u32(val, (uint32_t)v);
	put_u32(val + 4, (uint32_t)(v >> 32));
	block_opt(b, code, val, 8);
}

/* pcapng timestamps in options: high 32 bits, then low 32 bits (same as the EPB fields). */
static void block_opt_ts(struct block *b, uint16_t code, uint64_t ts)
{
	uint8_t val[8];
	put_u32(val, (uint32_t)(ts >> 32));
	put_u32(val + 4, (uint32_t)ts);
	block_opt(b, code, val, 8);
}

static size_t opt_str_len(const char *s)
{
	size_t n = s ? strlen(s) : 0;
	return n > MAX_OPTION_STRING ? MAX_OPTION_STRING : n;
}

static void block_opt_str(struct block *b, uint16_t code, const char *s)
{
	if (s && *s)
		block_opt(b, code, s, opt_str_len(s));
}

/* Room an option takes: 4-byte header plus padded value. */
static size_t opt_room(size_t len)
{
	return 4 + pad4(len);
}

static int block_begin(struct block_out *o, struct block *b, size_t max_len, uint32_t type)
{
	if (out_reserve(o, max_len) < 0)
		return -1;
	b->start = o->buf + o->used;
	b->len = 0;
	uint8_t *p = block_add(b, 8);
	put_u32(p, type);
	return 0;
}

static void block_end(struct block_out *o, struct block *b, bool has_options)
{
	if (has_options)
		block_opt(b, OPT_ENDOFOPT, NULL, 0);
	uint8_t *p = block_add(b, 4);
	put_u32(p, (uint32_t)(b->len));
	put_u32(b->start + 4, (uint32_t)b->len);
	o->used += b->len;
}

struct pcapng_writer {
	struct block_out out;
	uint32_t n_interfaces;
	uint32_t *snaplens;	/* per interface, to trim caplen */
	size_t snaplens_cap;	/* entries allocated in snaplens */
	uint64_t *if_packets;	/* per interface: packets the file holds whole */
	size_t if_packets_cap;
	uint64_t *if_pending;	/* per interface: packets in the buffer */
	size_t if_pending_cap;
	bool any_packet;
};

static struct pcapng_writer *writer_new(int fd, bool own_fd, const struct pcapng_shb_info *shb)
{
	struct pcapng_writer *w = calloc(1, sizeof(*w));
	struct utsname uts;
	char os_buf[sizeof(uts.sysname) + sizeof(uts.release) + 2];
	const char *os = shb ? shb->os : NULL;
	const char *hw = shb ? shb->hardware : NULL;
	const char *app = shb ? shb->application : NULL;
	struct block b;
	int err;

	if (!w)
		return NULL;
	if (out_init(&w->out, fd, own_fd, false) < 0)
		goto fail;
	if (!os && uname(&uts) == 0) {
		snprintf(os_buf, sizeof(os_buf), "%s %s", uts.sysname, uts.release);
		os = os_buf;
	}
	size_t max_len = 28 + opt_room(opt_str_len(hw)) + opt_room(opt_str_len(os)) +
			 opt_room(opt_str_len(app)) + 4 + 4;
	if (block_begin(&w->out, &b, max_len, PCAPNG_BT_SHB) < 0)
		goto fail;
	uint8_t *p = block_add(&b, 16);
	put_u32(p, PCAPNG_BOM);
	put_u16(p + 4, 1);	/* major */
	put_u16(p + 6, 0);	/* minor */
	put_u32(p + 8, 0xffffffffu);	/* section length: not given */
	put_u32(p + 12, 0xffffffffu);
	block_opt_str(&b, OPT_SHB_HARDWARE, hw);
	block_opt_str(&b, OPT_SHB_OS, os);
	block_opt_str(&b, OPT_SHB_USERAPPL, app);
	block_end(&w->out, &b, true);
	/* The SHB goes out now: a capture that dies at once still leaves a readable file. */
	if (out_drain(&w->out) < 0)
		goto fail;
	return w;
fail:
	err = errno;
	free(w->out.buf);
	free(w);
	errno = err;
	return NULL;
}

struct pcapng_writer *pcapng_writer_open(const char *path, const struct pcapng_shb_info *shb)
{
	int fd = open_output(path);
	bool own = fd != STDOUT_FILENO;
	struct pcapng_writer *w;
	int err;

	if (fd < 0)
		return NULL;
	w = writer_new(fd, own, shb);
	if (!w) {
		err = errno;
		if (own)
			close(fd);
		errno = err;
	}
	return w;
}

struct pcapng_writer *pcapng_writer_open_stream(FILE *f, const struct pcapng_shb_info *shb)
{
	if (!f) {
		errno = EINVAL;
		return NULL;
	}
	if (fflush(f) != 0)
		return NULL;
	return writer_new(fileno(f), false, shb);
}

int pcapng_writer_add_interface(struct pcapng_writer *w, const struct pcapng_if_info *ifi)
{
	struct block b;
	uint8_t tsresol = 9;

	if (!w || !ifi || w->any_packet) {
		errno = EINVAL;
		return -1;
	}
	int err = util_ensure_mem((void **)&w->snaplens, &w->snaplens_cap, sizeof(*w->snaplens),
				  (size_t)w->n_interfaces + 1);
	if (!err)
		err = util_ensure_mem((void **)&w->if_packets, &w->if_packets_cap, sizeof(*w->if_packets),
				      (size_t)w->n_interfaces + 1);
	if (!err)
		err = util_ensure_mem((void **)&w->if_pending, &w->if_pending_cap, sizeof(*w->if_pending),
				      (size_t)w->n_interfaces + 1);
	if (err) {
		errno = -err;
		return -1;
	}
	w->out.if_packets = w->if_packets;
	w->out.if_pending = w->if_pending;
	w->if_packets[w->n_interfaces] = 0;
	w->if_pending[w->n_interfaces] = 0;
	size_t max_len = 20 + opt_room(opt_str_len(ifi->name)) +
			 opt_room(opt_str_len(ifi->description)) + opt_room(1) + 4 + 4;
	if (block_begin(&w->out, &b, max_len, PCAPNG_BT_IDB) < 0)
		return -1;
	uint8_t *p = block_add(&b, 8);
	put_u16(p, ifi->linktype);
	put_u16(p + 2, 0);
	put_u32(p + 4, ifi->snaplen);
	block_opt_str(&b, OPT_IF_NAME, ifi->name);
	block_opt_str(&b, OPT_IF_DESCRIPTION, ifi->description);
	block_opt(&b, OPT_IF_TSRESOL, &tsresol, 1);
	block_end(&w->out, &b, true);
	w->snaplens[w->n_interfaces] = ifi->snaplen;
	w->out.n_if = w->n_interfaces + 1;
	return (int)w->n_interfaces++;
}

/* An option with a 4-byte value at p: 8 bytes. */
static inline uint8_t *put_opt_u32(uint8_t *p, uint16_t code, uint32_t v)
{
	put_u16(p, code);
	put_u16(p + 2, 4);
	put_u32(p + 4, v);
	return p + 8;
}

/*
 * The per-packet path: one Enhanced Packet Block stored straight into the buffer with its
 * length known up front (no block walk, no zeroing beyond the data's padding); the bytes
 * are those of the generic block helpers. A write(2) happens only when the buffer fills
 * or the caller flushes.
 */
int pcapng_writer_write_packet(struct pcapng_writer *w, const struct pcapng_packet *pkt)
{
	if (!w || !pkt || pkt->if_id >= w->n_interfaces || (pkt->caplen && !pkt->data)) {
		errno = EINVAL;
		return -1;
	}
	uint32_t caplen = pkt->caplen;
	uint32_t snaplen = w->snaplens[pkt->if_id];
	if (snaplen && caplen > snaplen)
		caplen = snaplen;
	uint32_t origlen = pkt->origlen < caplen ? caplen : pkt->origlen;
	size_t data_room = pad4(caplen);
	size_t opt_len = (pkt->has_flags ? 8 : 0) + (pkt->has_dropcount ? 12 : 0) + (pkt->has_queue ? 8 : 0);
	if (opt_len)
		opt_len += 4; /* opt_endofopt */
	size_t len = 28 + data_room + opt_len + 4;
	if (out_reserve(&w->out, len) < 0)
		return -1;
	uint8_t *p = w->out.buf + w->out.used;
	put_u32(p, PCAPNG_BT_EPB);
	put_u32(p + 4, (uint32_t)len);
	put_u32(p + 8, pkt->if_id);
	put_u32(p + 12, (uint32_t)(pkt->ts_ns >> 32));
	put_u32(p + 16, (uint32_t)pkt->ts_ns);
	put_u32(p + 20, caplen);
	put_u32(p + 24, origlen);
	p += 28;
	if (caplen)
		memcpy(p, pkt->data, caplen);
	memset(p + caplen, 0, data_room - caplen);
	p += data_room;
	if (pkt->has_flags)
		p = put_opt_u32(p, OPT_EPB_FLAGS, pkt->flags);
	if (pkt->has_dropcount) {
		put_u16(p, OPT_EPB_DROPCOUNT);
		put_u16(p + 2, 8);
		put_u32(p + 4, (uint32_t)pkt->dropcount);
		put_u32(p + 8, (uint32_t)(pkt->dropcount >> 32));
		p += 12;
	}
	if (pkt->has_queue)
		p = put_opt_u32(p, OPT_EPB_QUEUE, pkt->queue);
	if (opt_len) {
		put_u32(p, OPT_ENDOFOPT); /* code 0, length 0 */
		p += 4;
	}
	put_u32(p, (uint32_t)len);
	w->out.used += len;
	w->if_pending[pkt->if_id]++;
	w->any_packet = true;
	return 0;
}

int pcapng_writer_write_stats(struct pcapng_writer *w, const struct pcapng_if_stats *st)
{
	struct block b;

	if (!w || !st || st->if_id >= w->n_interfaces) {
		errno = EINVAL;
		return -1;
	}
	if (block_begin(&w->out, &b, 20 + 5 * opt_room(8) + 4 + 4, PCAPNG_BT_ISB) < 0)
		return -1;
	uint8_t *p = block_add(&b, 12);
	put_u32(p, st->if_id);
	put_u32(p + 4, (uint32_t)(st->ts_ns >> 32));
	put_u32(p + 8, (uint32_t)st->ts_ns);
	if (st->start_ns)
		block_opt_ts(&b, OPT_ISB_STARTTIME, st->start_ns);
	if (st->end_ns)
		block_opt_ts(&b, OPT_ISB_ENDTIME, st->end_ns);
	block_opt_u64(&b, OPT_ISB_IFRECV, st->received);
	block_opt_u64(&b, OPT_ISB_IFDROP, st->dropped);
	if (st->os_dropped)
		block_opt_u64(&b, OPT_ISB_OSDROP, st->os_dropped);
	block_end(&w->out, &b, true);
	return 0;
}

/* The last block of the file ends at `end`: its type, length and (a packet's) interface. */
static int last_block(int fd, uint64_t end, uint32_t *type, uint32_t *len, uint32_t *if_id)
{
	uint8_t b[12];

	if (end < 12 || pread(fd, b, 4, (off_t)end - 4) != 4)
		return -1;
	*len = get_u32(b);
	if (*len < 12 || *len > end || *len % 4 || pread(fd, b, 12, (off_t)(end - *len)) != 12)
		return -1;
	*type = get_u32(b);
	*if_id = get_u32(b + 8);
	return 0;
}

/* The statistics blocks at the end of the buffer; 0 or -1 with errno. */
static int put_stats(struct pcapng_writer *w, const struct pcapng_if_stats *st, size_t n,
		     const uint64_t *removed)
{
	for (size_t i = 0; i < n; i++) {
		struct pcapng_if_stats s = st[i];

		if (removed && s.if_id < w->n_interfaces)
			s.os_dropped += removed[s.if_id];
		if (pcapng_writer_write_stats(w, &s))
			return -1;
	}
	return 0;
}

int pcapng_writer_write_final_stats(struct pcapng_writer *w, const struct pcapng_if_stats *st, size_t n)
{
	struct block_out *o = &w->out;
	uint64_t *removed;
	struct stat sb;
	int err, rc = -1;

	if (!o->failed) {
		if (put_stats(w, st, n, NULL) == 0 && out_drain(o) == 0)
			return 0;
		if (!o->failed)
			return -1; /* not a write error */
	}
	err = o->saved_errno;
	if ((err != ENOSPC && err != EDQUOT && err != EFBIG) || fstat(o->fd, &sb) || !S_ISREG(sb.st_mode)) {
		errno = err;
		return -1;
	}
	removed = calloc(w->n_interfaces ? w->n_interfaces : 1, sizeof(*removed));
	if (!removed)
		return -1;
	for (;;) {
		uint32_t type, len, if_id;
		uint64_t end = o->bytes;

		/* Try: the statistics after the last whole block. */
		o->failed = false;
		o->used = 0;
		if (put_stats(w, st, n, removed) == 0 && out_drain(o) == 0) {
			rc = 0;
			break;
		}
		if (errno != ENOSPC && errno != EDQUOT && errno != EFBIG)
			break;
		/* No room: give the last packet's bytes to the statistics, and count it as dropped. */
		/* An earlier statistics block goes first: the final ones supersede it. */
		if (ftruncate(o->fd, (off_t)end) || last_block(o->fd, end, &type, &len, &if_id) ||
		    (type != PCAPNG_BT_ISB && (type != PCAPNG_BT_EPB || if_id >= w->n_interfaces ||
					       !w->if_packets[if_id]))) {
			errno = err;
			break;
		}
		end -= len;
		if (ftruncate(o->fd, (off_t)end) || lseek(o->fd, (off_t)end, SEEK_SET) < 0)
			break;
		o->bytes = end;
		if (type == PCAPNG_BT_EPB) {
			w->if_packets[if_id]--;
			removed[if_id]++;
		}
	}
	err = errno;
	free(removed);
	o->used = 0;
	o->failed = true; /* nothing more after the final statistics */
	o->saved_errno = rc ? err : o->saved_errno;
	errno = err;
	return rc;
}

uint64_t pcapng_writer_packets(const struct pcapng_writer *w, uint32_t if_id)
{
	return w && if_id < w->n_interfaces ? w->if_packets[if_id] : 0;
}

int pcapng_writer_flush(struct pcapng_writer *w)
{
	if (!w) {
		errno = EINVAL;
		return -1;
	}
	return out_drain(&w->out);
}

uint64_t pcapng_writer_bytes(const struct pcapng_writer *w)
{
	return w ? w->out.bytes + w->out.used : 0;
}

int pcapng_writer_close(struct pcapng_writer *w)
{
	int rc;

	if (!w)
		return 0;
	rc = out_close(&w->out);
	free(w->snaplens);
	free(w->if_packets);
	free(w->if_pending);
	free(w);
	return rc;
}

/* Classic pcap, nanosecond magic (libpcap savefile.c). */
#define PCAP_MAGIC_NS 0xa1b23c4du

struct pcap_writer {
	struct block_out out;
	uint32_t snaplen;
};

struct pcap_writer *pcap_writer_open(const char *path, uint16_t linktype, uint32_t snaplen)
{
	int fd = open_output(path);
	bool own = fd != STDOUT_FILENO;
	struct pcap_writer *w;
	int err;

	if (fd < 0)
		return NULL;
	w = calloc(1, sizeof(*w));
	if (!w || out_init(&w->out, fd, own, true) < 0)
		goto fail;
	w->snaplen = snaplen ? snaplen : 262144;
	uint8_t *p = w->out.buf;
	put_u32(p, PCAP_MAGIC_NS);
	put_u16(p + 4, 2);
	put_u16(p + 6, 4);
	put_u32(p + 8, 0);	/* thiszone */
	put_u32(p + 12, 0);	/* sigfigs */
	put_u32(p + 16, w->snaplen);
	put_u32(p + 20, linktype);
	/* The file header is not a record: write it directly so the record walk starts after it. */
	w->out.pcap_records = false;
	w->out.used = 24;
	if (out_drain(&w->out) < 0)
		goto fail;
	w->out.pcap_records = true;
	return w;
fail:
	err = errno;
	if (w)
		free(w->out.buf);
	free(w);
	if (own)
		close(fd);
	errno = err;
	return NULL;
}

int pcap_writer_write_packet(struct pcap_writer *w, uint64_t ts_ns, const uint8_t *data,
			     uint32_t caplen, uint32_t origlen)
{
	if (!w || (caplen && !data)) {
		errno = EINVAL;
		return -1;
	}
	if (caplen > w->snaplen)
		caplen = w->snaplen;
	if (origlen < caplen)
		origlen = caplen;
	if (out_reserve(&w->out, 16 + (size_t)caplen) < 0)
		return -1;
	uint8_t *p = w->out.buf + w->out.used;
	put_u32(p, (uint32_t)(ts_ns / 1000000000ull));
	put_u32(p + 4, (uint32_t)(ts_ns % 1000000000ull));
	put_u32(p + 8, caplen);
	put_u32(p + 12, origlen);
	if (caplen)
		memcpy(p + 16, data, caplen);
	w->out.used += 16 + (size_t)caplen;
	return 0;
}

int pcap_writer_close(struct pcap_writer *w)
{
	int rc;

	if (!w)
		return 0;
	rc = out_close(&w->out);
	free(w);
	return rc;
}
