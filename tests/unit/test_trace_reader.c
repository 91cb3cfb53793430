/* test_trace_reader.c: pcap/pcapng reading, merging by time, health, clear errors, pcapng drop counters. */
#include <pcap/pcap.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <fcntl.h>
#include <sys/stat.h>

#include "lib/trace/pcapng_writer.h"
#include "lib/trace/pcapng_drops.h"
#include "lib/trace/trace_reader.h"
#include "lib/util/util.h"

static char tmp_paths[8][64];
static int n_tmp;

static const char *tmp_path(void)
{
	char *p = tmp_paths[n_tmp++];
	int fd;

	snprintf(p, 64, "/tmp/axdec-trace.XXXXXX");
	fd = mkstemp(p);
	assert_true(fd >= 0);
	close(fd);
	return p;
}

static int cleanup(void **state)
{
	for (int i = 0; i < n_tmp; i++)
		unlink(tmp_paths[i]);
	n_tmp = 0;
	return 0;
}

/* Write a pcap file through libpcap itself; frame i has byte value marks[i] and time ts[i] ns. */
static const char *write_pcap(const uint64_t *ts_ns, const uint8_t *marks, int n, int precision)
{
	const char *path = tmp_path();
	pcap_t *dead = pcap_open_dead_with_tstamp_precision(DLT_EN10MB, 65535, precision);
	pcap_dumper_t *d = pcap_dump_open(dead, path);
	uint8_t frame[60];

	assert_non_null(d);
	for (int i = 0; i < n; i++) {
		struct pcap_pkthdr h = { 0 };
		uint64_t div = precision == PCAP_TSTAMP_PRECISION_NANO ? 1 : 1000;
		h.ts.tv_sec = (time_t)(ts_ns[i] / 1000000000ull);
		h.ts.tv_usec = (suseconds_t)(ts_ns[i] % 1000000000ull / div);
		h.caplen = h.len = sizeof(frame);
		memset(frame, marks[i], sizeof(frame));
		pcap_dump((u_char *)d, &h, frame);
	}
	pcap_dump_close(d);
	pcap_close(dead);
	return path;
}

static void test_merge_by_time(void **state)
{
	const uint64_t ta[] = { 1000000000ull, 3000000000ull, 5000000000ull };
	const uint64_t tb[] = { 2000000000ull, 3000000000ull, 4000000007ull, 4500000000ull };
	const uint8_t ma[] = { 0xa1, 0xa2, 0xa3 }, mb[] = { 0xb1, 0xb2, 0xb3, 0xb4 };
	const char *paths[2];
	struct trace_reader *tr;
	struct trace_frame f;
	char err[256];
	/* Expected order derived from the timestamps above; equal times: first input first. */
	const uint8_t expect[] = { 0xa1, 0xb1, 0xa2, 0xb2, 0xb3, 0xb4, 0xa3 };
	const uint64_t expect_no[] = { 1, 1, 2, 2, 3, 4, 3 };
	int i = 0;

	paths[0] = write_pcap(ta, ma, 3, PCAP_TSTAMP_PRECISION_NANO);
	paths[1] = write_pcap(tb, mb, 4, PCAP_TSTAMP_PRECISION_NANO);
	assert_int_equal(trace_reader_open(&tr, paths, 2, err, sizeof(err)), 0);
	assert_int_equal(trace_reader_count(tr), 2);
	while (trace_reader_next(tr, &f) == 1) {
		assert_true(i < 7);
		assert_int_equal(f.data[0], expect[i]);
		assert_int_equal(f.frame_number, expect_no[i]);
		assert_int_equal(f.trace_index, expect[i] >= 0xb0);
		assert_int_equal(f.caplen, 60);
		assert_int_equal(f.linktype, DLT_EN10MB);
		i++;
	}
	assert_int_equal(i, 7);
	const struct trace_health *h = trace_reader_health(tr, 1);
	assert_int_equal(h->frames, 4);
	assert_int_equal(h->bytes, 240);
	assert_int_equal(h->first_ns, 2000000000ull);
	assert_int_equal(h->last_ns, 4500000000ull);
	assert_int_equal(h->truncated, 0);
	assert_string_equal(h->stop_reason, "");
	assert_string_equal(trace_reader_path(tr, 0), paths[0]);
	assert_null(trace_reader_path(tr, 2));
	assert_int_equal(trace_reader_next(tr, &f), 0);
	trace_reader_close(tr);
}

static void test_microsecond_file_and_backwards(void **state)
{
	const uint64_t ts[] = { 1700000000123456000ull, 1700000000000001000ull, 1700000001000000000ull };
	const uint8_t m[] = { 1, 2, 3 };
	const char *path = write_pcap(ts, m, 3, PCAP_TSTAMP_PRECISION_MICRO);
	struct trace_reader *tr;
	struct trace_frame f;
	char err[256];

	assert_int_equal(trace_reader_open(&tr, &path, 1, err, sizeof(err)), 0);
	assert_int_equal(trace_reader_next(tr, &f), 1);
	assert_int_equal(f.ts_ns, ts[0]); /* microseconds scaled to nanoseconds by libpcap */
	while (trace_reader_next(tr, &f) == 1)
		;
	const struct trace_health *h = trace_reader_health(tr, 0);
	assert_int_equal(h->frames, 3);
	assert_int_equal(h->ts_backwards, 1);
	assert_int_equal(h->first_ns, ts[0]);
	assert_int_equal(h->last_ns, ts[2]);
	assert_int_equal(h->has_drop_counters, 0);
	trace_reader_close(tr);
}

static void expect_open_error(const char *path, const char *what)
{
	struct trace_reader *tr = (struct trace_reader *)1;
	char err[256];

	assert_int_equal(trace_reader_open(&tr, &path, 1, err, sizeof(err)), -1);
	assert_null(tr);
	assert_non_null(strstr(err, what));
	assert_non_null(strstr(err, path));
	assert_null(strchr(err, '\n'));
}

static void test_open_errors(void **state)
{
	const char *empty = tmp_path();
	const char *text = tmp_path();
	FILE *f = fopen(text, "w");

	fputs("this is not a capture file at all, just text\n", f);
	fclose(f);
	expect_open_error("/nonexistent/axdec.pcap", "No such file or directory");
	expect_open_error(empty, "empty file");
	expect_open_error(text, "not a pcap or pcapng file");
	expect_open_error("/tmp", "Is a directory");

	/* Two inputs, the second missing: nothing is returned, the message names it. */
	const uint64_t ts[] = { 1 };
	const uint8_t m[] = { 1 };
	const char *paths[2] = { write_pcap(ts, m, 1, PCAP_TSTAMP_PRECISION_NANO), "/nonexistent/b.pcap" };
	struct trace_reader *tr;
	char err[256];
	assert_int_equal(trace_reader_open(&tr, paths, 2, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "/nonexistent/b.pcap"));
	const char *dash[2] = { "-", "-" };
	assert_int_equal(trace_reader_open(&tr, dash, 2, err, sizeof(err)), -1);
}

static void test_truncated_file(void **state)
{
	const uint64_t ts[] = { 1000, 2000, 3000 };
	const uint8_t m[] = { 1, 2, 3 };
	const char *paths[2];
	struct trace_reader *tr;
	struct trace_frame f;
	char err[256];
	int frames = 0, errors = 0, rc;

	paths[0] = write_pcap(ts, m, 3, PCAP_TSTAMP_PRECISION_NANO);
	/* Cut the last record in the middle of its data. */
	assert_int_equal(truncate(paths[0], 24 + 2 * (16 + 60) + 16 + 20), 0);
	const uint64_t ts2[] = { 1500, 9000 };
	paths[1] = write_pcap(ts2, m, 2, PCAP_TSTAMP_PRECISION_NANO);
	assert_int_equal(trace_reader_open(&tr, paths, 2, err, sizeof(err)), 0);
	while ((rc = trace_reader_next(tr, &f)) != 0) {
		if (rc < 0) {
			errors++;
			assert_non_null(strstr(trace_reader_error(tr), paths[0]));
			assert_non_null(strstr(trace_reader_error(tr), "truncated"));
			continue;
		}
		frames++;
	}
	assert_int_equal(errors, 1);
	assert_int_equal(frames, 4); /* 2 from the cut file, 2 from the other: nothing lost */
	const struct trace_health *h = trace_reader_health(tr, 0);
	assert_int_equal(h->truncated, 1);
	assert_int_equal(h->frames, 2);
	assert_true(strlen(h->stop_reason) > 0);
	assert_int_equal(trace_reader_health(tr, 1)->truncated, 0);
	trace_reader_close(tr);
}

/* ---- pcapng built by hand (draft-ietf-opsawg-pcapng), little-endian ---- */

struct ng {
	uint8_t b[4096];
	size_t len;
};

static void ng32(struct ng *g, uint32_t v)
{
	memcpy(g->b + g->len, &v, 4); /* host order = little-endian section */
	g->len += 4;
}
static void ng16(struct ng *g, uint16_t v)
{
	memcpy(g->b + g->len, &v, 2);
	g->len += 2;
}
static void ng64(struct ng *g, uint64_t v)
{
	memcpy(g->b + g->len, &v, 8);
	g->len += 8;
}
static size_t ng_begin(struct ng *g, uint32_t type)
{
	size_t start = g->len;
	ng32(g, type);
	ng32(g, 0);
	return start;
}
static void ng_end(struct ng *g, size_t start)
{
	uint32_t total = (uint32_t)(g->len - start + 4);
	memcpy(g->b + start + 4, &total, 4);
	ng32(g, total);
}

static void ng_shb(struct ng *g)
{
	size_t s = ng_begin(g, PCAPNG_SHB_TYPE);
	ng32(g, 0x1a2b3c4d);
	ng16(g, 1);
	ng16(g, 0);
	ng64(g, UINT64_MAX);
	ng_end(g, s);
}

static void ng_idb_snaplen(struct ng *g, uint32_t snaplen)
{
	size_t s = ng_begin(g, 1);
	ng16(g, 1); /* Ethernet */
	ng16(g, 0);
	ng32(g, snaplen);
	ng16(g, 9); /* if_tsresol = 9: nanoseconds */
	ng16(g, 1);
	g->b[g->len] = 9;
	g->len += 4;
	ng32(g, 0); /* opt_endofopt */
	ng_end(g, s);
}

static void ng_idb(struct ng *g)
{
	ng_idb_snaplen(g, 65535);
}

static void ng_epb(struct ng *g, uint64_t ts_ns, int with_drop, uint64_t drops)
{
	size_t s = ng_begin(g, 6);
	ng32(g, 0);
	ng32(g, (uint32_t)(ts_ns >> 32));
	ng32(g, (uint32_t)ts_ns);
	ng32(g, 60);
	ng32(g, 60);
	memset(g->b + g->len, 0xee, 60);
	g->len += 60;
	if (with_drop) {
		ng16(g, 4); /* epb_dropcount */
		ng16(g, 8);
		ng64(g, drops);
		ng32(g, 0);
	}
	ng_end(g, s);
}

static void ng_isb(struct ng *g, uint64_t ifdrop)
{
	size_t s = ng_begin(g, 5);
	ng32(g, 0);
	ng32(g, 0);
	ng32(g, 1);
	ng16(g, 5); /* isb_ifdrop */
	ng16(g, 8);
	ng64(g, ifdrop);
	ng32(g, 0);
	ng_end(g, s);
}

static void test_pcapng_drop_counters(void **state)
{
	struct ng g = { 0 };
	struct pcapng_drops d;

	ng_shb(&g);
	ng_idb(&g);
	ng_epb(&g, 1000, 1, 3);
	ng_epb(&g, 2000, 0, 0);
	ng_epb(&g, 3000, 1, 4);
	ng_isb(&g, 5);
	ng_isb(&g, 9); /* cumulative: the last one counts */
	assert_int_equal(pcapng_walk_drops(g.b, g.len, &d), 0);
	assert_null(d.stop_reason);
	assert_int_equal(d.blocks, 7);
	assert_int_equal(d.epb_dropcount_sum, 7);
	assert_int_equal(d.isb_ifdrop_sum, 9);
	assert_true(pcapng_drops_present(&d));
	assert_int_equal(pcapng_drops_total(&d), 9);

	/* Through the reader: libpcap reads the frames, the walker the counters. */
	const char *path = tmp_path();
	FILE *f = fopen(path, "wb");
	fwrite(g.b, 1, g.len, f);
	fclose(f);
	struct trace_reader *tr;
	struct trace_frame fr;
	char err[256];
	int frames = 0;
	assert_int_equal(trace_reader_open(&tr, &path, 1, err, sizeof(err)), 0);
	while (trace_reader_next(tr, &fr) == 1) {
		assert_int_equal(fr.ts_ns, 1000ull * (uint64_t)(frames + 1));
		frames++;
	}
	assert_int_equal(frames, 3);
	const struct trace_health *h = trace_reader_health(tr, 0);
	assert_int_equal(h->has_drop_counters, 1);
	assert_int_equal(h->capture_dropped, 9);
	trace_reader_close(tr);

	/* A second section restarts interface numbering: its counters add up. */
	ng_shb(&g);
	ng_idb(&g);
	ng_isb(&g, 2);
	assert_int_equal(pcapng_walk_drops(g.b, g.len, &d), 0);
	assert_int_equal(d.isb_ifdrop_sum, 11);
}

/* Every frame of a trace (one path, "-": standard input) folded into one hash, and its health. */
struct read_all {
	uint64_t frames, hash;
	int rc_errors;
	struct trace_health h;
};

/*
 * Every frame of path, hashed, and its health; after the first `first` frames (0: never),
 * between(path) changes the file under the reader, whose errors must then name a truncation.
 */
static void read_around(const char *path, int first, void (*between)(const char *), struct read_all *out)
{
	struct trace_reader *tr;
	struct trace_frame fr;
	char err[256];
	int rc;

	memset(out, 0, sizeof(*out));
	assert_int_equal(trace_reader_open(&tr, &path, 1, err, sizeof(err)), 0);
	while ((rc = trace_reader_next(tr, &fr)) != 0) {
		if (rc < 0) {
			out->rc_errors++;
			if (between)
				assert_non_null(strstr(trace_reader_error(tr), "truncated"));
			continue;
		}
		out->hash = out->hash * 1099511628211ull ^ fr.ts_ns ^ (uint64_t)fr.caplen << 40 ^ fr.origlen;
		for (uint32_t i = 0; i < fr.caplen; i++)
			out->hash = (out->hash ^ fr.data[i]) * 1099511628211ull;
		if (++out->frames == (uint64_t)first && between)
			between(path);
	}
	out->h = *trace_reader_health(tr, 0);
	trace_reader_close(tr);
}

static void read_all(const char *path, struct read_all *out)
{
	read_around(path, 0, NULL, out);
}

/* The same file through standard input, which libpcap alone reads: the judge of our own reader. */
static void read_all_stdin(const char *path, struct read_all *out)
{
	int saved = dup(STDIN_FILENO), fd = open(path, O_RDONLY);

	assert_true(saved >= 0 && fd >= 0);
	assert_int_equal(dup2(fd, STDIN_FILENO), STDIN_FILENO);
	close(fd);
	read_all("-", out);
	assert_int_equal(dup2(saved, STDIN_FILENO), STDIN_FILENO);
	close(saved);
}

static void expect_same_reading(const struct read_all *a, const struct read_all *b)
{
	assert_int_equal(a->frames, b->frames);
	assert_int_equal(a->hash, b->hash);
	assert_int_equal(a->rc_errors, b->rc_errors);
	assert_int_equal(a->h.truncated, b->h.truncated);
	assert_int_equal(a->h.has_drop_counters, b->h.has_drop_counters);
	assert_int_equal(a->h.capture_dropped, b->h.capture_dropped);
	assert_int_equal(a->h.ts_backwards, b->h.ts_backwards);
}

/*
 * Our reader gives the drop-counter walker the blocks it parses, less the EPBs without
 * options: a file of several read buffers (blocks cut by their edges), EPBs with and without
 * epb_dropcount, ISBs between them, read from the file and by libpcap from standard input,
 * whole and cut in the middle of a block.
 */
static void test_pcapng_counters_across_buffers(void **state)
{
	const char *path = tmp_path();
	uint64_t want_drops = 0;
	struct read_all a, b;
	struct ng g = { 0 };
	FILE *f = fopen(path, "wb");
	long size;

	assert_non_null(f);
	ng_shb(&g);
	ng_idb(&g);
	for (int i = 0; i < 6000; i++) {
		bool drop = i % 97 == 5;

		ng_epb(&g, 1000000000ull + 1000ull * (uint64_t)i, drop, drop ? 2 : 0);
		want_drops += drop ? 2 : 0;
		if (i % 1500 == 7)
			ng_isb(&g, (uint64_t)i / 1500 + 1);
		if (g.len > sizeof(g.b) - 256) {
			fwrite(g.b, 1, g.len, f);
			g.len = 0;
		}
	}
	fwrite(g.b, 1, g.len, f);
	size = ftell(f);
	fclose(f);
	assert_true(size > 2 * 256 * 1024);

	read_all(path, &a);
	assert_int_equal(a.frames, 6000);
	assert_int_equal(a.h.has_drop_counters, 1);
	assert_int_equal(a.h.capture_dropped, want_drops); /* the EPB sum beats the ISBs' 4 */
	read_all_stdin(path, &b);
	expect_same_reading(&a, &b);

	/* Cut in the middle of a block past the first buffer. */
	assert_int_equal(truncate(path, 300001), 0);
	read_all(path, &a);
	read_all_stdin(path, &b);
	assert_true(a.frames > 2000 && a.frames < 6000);
	assert_int_equal(a.h.truncated, 1);
	expect_same_reading(&a, &b);
}

static uint64_t xorshift(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

/* An EPB with random bytes, sometimes options, a bad length, caplen, interface or time. */
static void gen_epb(FILE *f, uint64_t *x, uint64_t ts, uint64_t units)
{
	uint32_t cap = (uint32_t)(xorshift(x) % 200), pad = (4 - cap % 4) % 4, r = (uint32_t)(xorshift(x) % 1000);
	bool opts = r % 10 == 1;
	uint32_t total = 12 + 20 + cap + pad + (opts ? 16 : 0), hdr[7], trailer = total;
	uint8_t data[204] = { 0 }, opt[16] = { 4, 0, 8, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 };

	if (r < 6) /* at or past the last time in ns that fits in an int64_t */
		ts = (9223372036ull - (r & 1)) * units + (r & 2 ? units - 1 : 0);
	for (uint32_t i = 0; i < cap; i++)
		data[i] = (uint8_t)xorshift(x);
	hdr[0] = 6;
	hdr[1] = r == 10 ? total + 4 : total;
	hdr[2] = r == 11 ? 3 : 0;				/* an interface not described */
	hdr[3] = (uint32_t)(ts >> 32);
	hdr[4] = (uint32_t)ts;
	hdr[5] = r == 12 ? cap + 8 : r == 13 ? 70000 : cap;	/* past the block, over the snaplen */
	if (r == 15 && !opts)
		hdr[5] = cap + pad + 4; /* into the trailing length */
	hdr[6] = cap + (r & 16);
	trailer = r == 14 ? total + 4 : total;
	fwrite(hdr, 4, 7, f);
	fwrite(data, 1, cap + pad, f);
	if (opts)
		fwrite(opt, 1, 16, f);
	fwrite(&trailer, 4, 1, f);
}

/*
 * Our reader parses common EPBs in one go and leaves the rest to pcapng_frames and libpcap:
 * generated pcapngs (us or ns units, blocks with every kind of fault above, a second
 * section, cut files) must read the same from the file as libpcap reads them from
 * standard input.
 */
static void test_pcapng_generated_vs_libpcap(void **state)
{
	uint64_t x = 88172645463325252ull;

	for (int k = 0; k < 150; k++) {
		const char *path = tmp_path();
		uint64_t units = xorshift(&x) % 2 ? 1000000000ull : 1000000ull;
		int n = 1 + (int)(xorshift(&x) % 300);
		struct read_all a, b;
		struct ng g = { 0 };
		FILE *f = fopen(path, "wb");

		assert_non_null(f);
		ng_shb(&g);
		ng_idb(&g);
		if (units == 1000000ull)
			g.b[g.len - 12] = 6; /* if_tsresol 6: microseconds */
		fwrite(g.b, 1, g.len, f);
		for (int i = 0; i < n; i++) {
			gen_epb(f, &x, 1700000000ull * units + (uint64_t)i * 997 - xorshift(&x) % 50, units);
			if (xorshift(&x) % 500 == 0) {
				g.len = 0;
				ng_shb(&g);
				fwrite(g.b, 1, g.len, f);
			}
		}
		fclose(f);
		if (xorshift(&x) % 5 == 0) {
			struct stat st;

			assert_int_equal(stat(path, &st), 0);
			assert_int_equal(truncate(path, 28 + (off_t)(xorshift(&x) % (uint64_t)(st.st_size - 28))), 0);
		}
		read_all(path, &a);
		read_all_stdin(path, &b);
		expect_same_reading(&a, &b);
		unlink(path);
		n_tmp--;
	}
}

/* The same for a classic nanosecond pcap: records cut by the buffer's edges, whole and cut. */
static void test_pcap_across_buffers(void **state)
{
	enum { N = 5000 };
	uint64_t *ts = calloc(N, sizeof(*ts));
	uint8_t *marks = calloc(N, 1);
	struct read_all a, b;
	const char *path;

	assert_non_null(ts);
	assert_non_null(marks);
	for (int i = 0; i < N; i++) {
		ts[i] = 1700000000000000000ull + 997ull * (uint64_t)i - (i % 50 == 3 ? 5000 : 0); /* some go back */
		marks[i] = (uint8_t)(i * 7);
	}
	path = write_pcap(ts, marks, N, PCAP_TSTAMP_PRECISION_NANO);
	free(ts);
	free(marks);
	read_all(path, &a);
	assert_int_equal(a.frames, N);
	assert_true(a.h.ts_backwards > 0);
	read_all_stdin(path, &b);
	expect_same_reading(&a, &b);

	assert_int_equal(truncate(path, 24 + 76 * 3500 + 30), 0); /* inside record 3501's data */
	read_all(path, &a);
	read_all_stdin(path, &b);
	assert_int_equal(a.frames, 3500);
	assert_int_equal(a.h.truncated, 1);
	expect_same_reading(&a, &b);
}

/*
 * Records longer than the snapshot length, among others across several read buffers: our
 * reader must leave them to libpcap (whose reading of them is the judge), in a pcapng and in a
 * classic pcap, the ones just before them straight from its buffer.
 */
static void test_over_snaplen_across_buffers(void **state)
{
	enum { N = 6000, SNAP = 64, LONG = 100 };
	uint8_t data[LONG];
	struct read_all a, b;
	const char *path = tmp_path();
	struct ng g = { 0 };
	FILE *f = fopen(path, "wb");
	pcap_t *dead;
	pcap_dumper_t *d;

	assert_non_null(f);
	ng_shb(&g);
	ng_idb_snaplen(&g, SNAP);
	fwrite(g.b, 1, g.len, f);
	for (int i = 0; i < N; i++) {
		uint32_t cap = i % 1000 == 999 ? LONG : 60;
		size_t s;

		g.len = 0;
		s = ng_begin(&g, 6);
		ng32(&g, 0);
		ng32(&g, 0);
		ng32(&g, (uint32_t)(1000000 + i));
		ng32(&g, cap);
		ng32(&g, cap);
		memset(g.b + g.len, i & 0xff, cap);
		g.len += cap;
		ng_end(&g, s);
		fwrite(g.b, 1, g.len, f);
	}
	fclose(f);
	read_all(path, &a);
	read_all_stdin(path, &b);
	assert_true(a.frames >= 999);
	expect_same_reading(&a, &b);

	path = tmp_path();
	dead = pcap_open_dead_with_tstamp_precision(DLT_EN10MB, SNAP, PCAP_TSTAMP_PRECISION_MICRO);
	d = pcap_dump_open(dead, path);
	assert_non_null(d);
	for (int i = 0; i < N; i++) {
		struct pcap_pkthdr h = { .ts = { .tv_sec = 1700000000, .tv_usec = i } };

		h.caplen = h.len = i % 1000 == 999 ? LONG : 60;
		memset(data, i & 0xff, sizeof(data));
		pcap_dump((u_char *)d, &h, data);
	}
	pcap_dump_close(d);
	pcap_close(dead);
	read_all(path, &a);
	read_all_stdin(path, &b);
	assert_true(a.frames >= 999);
	expect_same_reading(&a, &b);
}

static void test_pcapng_walk_malformed(void **state)
{
	struct ng g = { 0 };
	struct pcapng_drops d;

	ng_shb(&g);
	size_t after_shb = g.len;
	ng_idb(&g);
	size_t after_idb = g.len;
	ng_epb(&g, 1000, 1, 3);
	size_t good = g.len;
	/* Every prefix: never reads past the end, stops with a reason unless it is whole. */
	for (size_t n = 0; n < good; n++) {
		uint8_t *copy = malloc(n ? n : 1);
		memcpy(copy, g.b, n);
		int rc = pcapng_walk_drops(copy, n, &d);
		free(copy);
		if (n == 0)
			assert_int_equal(rc, 0);
		else if (rc == 0)
			assert_true(n == after_shb || n == after_idb); /* block boundaries only */
		else
			assert_non_null(d.stop_reason);
	}
	/* Block length not a multiple of 4 */
	g.b[good - 4] = 0x7f;
	assert_int_equal(pcapng_walk_drops(g.b, good, &d), -1);
	/* Not starting with a section header */
	assert_int_equal(pcapng_walk_drops(g.b + after_shb, good - after_shb, &d), -1);
	assert_string_equal(d.stop_reason, "first block is not a section header");
	/* An option length running past the block: the EPB drop count is not taken */
	struct ng h = { 0 };
	ng_shb(&h);
	ng_epb(&h, 1, 1, 5);
	memcpy(h.b + h.len - 4 - 4 - 8 - 2, "\xff\x00", 2);
	assert_int_equal(pcapng_walk_drops(h.b, h.len, &d), 0);
	assert_false(d.has_epb_dropcount);
}

static bool drops_equal(const struct pcapng_drops *a, const struct pcapng_drops *b)
{
	return a->blocks == b->blocks && a->epb_dropcount_sum == b->epb_dropcount_sum &&
	       a->pb_drops_sum == b->pb_drops_sum && a->isb_ifdrop_sum == b->isb_ifdrop_sum &&
	       a->isb_osdrop_sum == b->isb_osdrop_sum && a->has_epb_dropcount == b->has_epb_dropcount &&
	       a->has_pb_drops == b->has_pb_drops && a->has_isb_ifdrop == b->has_isb_ifdrop &&
	       a->has_isb_osdrop == b->has_isb_osdrop && a->stop_offset == b->stop_offset &&
	       (a->stop_reason == b->stop_reason ||
		(a->stop_reason && b->stop_reason && !strcmp(a->stop_reason, b->stop_reason)));
}

/* The stream walker fed in pieces (cut anywhere, twice) finds what one walk over the whole finds. */
static void test_pcapng_drops_stream_pieces(void **state)
{
	struct pcapng_drops_walker *w = malloc(sizeof(*w));
	struct pcapng_drops whole, pieces;
	struct ng g = { 0 };
	size_t s;

	assert_non_null(w);
	ng_shb(&g);
	ng_idb(&g);
	ng_epb(&g, 1000, 1, 3);
	ng_epb(&g, 2000, 0, 0);
	s = ng_begin(&g, 2); /* obsolete Packet Block: if_id 0, drops_count 2 */
	ng16(&g, 0);
	ng16(&g, 2);
	ng_end(&g, s);
	ng_epb(&g, 3000, 1, 4);
	ng_isb(&g, 5);
	ng_shb(&g);
	ng_idb(&g);
	ng_isb(&g, 7);
	assert_int_equal(pcapng_walk_drops(g.b, g.len, &whole), 0);
	assert_int_equal(whole.epb_dropcount_sum, 7);
	assert_int_equal(whole.pb_drops_sum, 2);
	assert_int_equal(whole.isb_ifdrop_sum, 12);
	assert_int_equal(whole.blocks, 10);

	/* every prefix (whole or cut mid-block), cut once more anywhere inside it */
	for (size_t n = 0; n <= g.len; n++) {
		int rc_whole = pcapng_walk_drops(g.b, n, &whole);

		for (size_t cut = 0; cut <= n; cut++) {
			pcapng_drops_walker_init(w);
			pcapng_drops_feed(w, g.b, cut);
			pcapng_drops_feed(w, g.b + cut, n - cut);
			assert_int_equal(pcapng_drops_finish(w, &pieces), rc_whole);
			if (!drops_equal(&whole, &pieces))
				fail_msg("prefix %zu cut at %zu: pieces differ from the whole walk", n, cut);
		}
	}
	/* one byte at a time */
	pcapng_drops_walker_init(w);
	for (size_t i = 0; i < g.len; i++)
		pcapng_drops_feed(w, g.b + i, 1);
	assert_int_equal(pcapng_drops_finish(w, &pieces), 0);
	assert_int_equal(pcapng_walk_drops(g.b, g.len, &whole), 0);
	assert_true(drops_equal(&whole, &pieces));
	free(w);

	/* Standard input is walked too: its counters come with its frames. */
	struct ng h = { 0 };
	ng_shb(&h);
	ng_idb(&h);
	ng_epb(&h, 1000, 1, 3);
	ng_epb(&h, 2000, 0, 0);
	ng_epb(&h, 3000, 1, 4);
	ng_isb(&h, 12);
	const char *path = tmp_path();
	FILE *f = fopen(path, "wb");
	fwrite(h.b, 1, h.len, f);
	fclose(f);
	assert_non_null(freopen(path, "rb", stdin));
	struct trace_reader *tr;
	struct trace_frame fr;
	const char *dash = "-";
	char err[256];
	int frames = 0;
	assert_int_equal(trace_reader_open(&tr, &dash, 1, err, sizeof(err)), 0);
	while (trace_reader_next(tr, &fr) == 1)
		frames++;
	assert_int_equal(frames, 3);
	assert_int_equal(trace_reader_health(tr, 0)->has_drop_counters, 1);
	assert_int_equal(trace_reader_health(tr, 0)->capture_dropped, 12);
	trace_reader_close(tr);
}

/* What agentxdp-capture writes (the shared pcapng writer) reads back with its drop counters. */
static void test_project_pcapng_writer(void **state)
{
	const char *path = tmp_path();
	struct pcapng_shb_info shb = { .application = "test_trace_reader" };
	struct pcapng_if_info ifi = { .name = "veth0", .linktype = 1, .snaplen = 256 };
	struct pcapng_writer *w = pcapng_writer_open(path, &shb);
	uint8_t frame[64];
	struct trace_reader *tr;
	struct trace_frame f;
	char err[256];
	int n = 0;

	assert_non_null(w);
	assert_int_equal(pcapng_writer_add_interface(w, &ifi), 0);
	memset(frame, 0x5a, sizeof(frame));
	for (int i = 0; i < 3; i++) {
		struct pcapng_packet pkt = {
			.if_id = 0,
			.ts_ns = 1767225600000000000ull + (uint64_t)i * 1001,
			.data = frame,
			.caplen = sizeof(frame),
			.origlen = 1500,
			.has_dropcount = i == 2,
			.dropcount = 2,
		};
		assert_int_equal(pcapng_writer_write_packet(w, &pkt), 0);
	}
	struct pcapng_if_stats st = { .if_id = 0, .ts_ns = 1767225601000000000ull, .received = 10, .dropped = 6 };
	assert_int_equal(pcapng_writer_write_stats(w, &st), 0);
	assert_int_equal(pcapng_writer_close(w), 0);

	assert_int_equal(trace_reader_open(&tr, &path, 1, err, sizeof(err)), 0);
	while (trace_reader_next(tr, &f) == 1) {
		assert_int_equal(f.ts_ns, 1767225600000000000ull + (uint64_t)n * 1001); /* ns kept */
		assert_int_equal(f.caplen, 64);
		assert_int_equal(f.origlen, 1500);
		n++;
	}
	assert_int_equal(n, 3);
	const struct trace_health *h = trace_reader_health(tr, 0);
	assert_int_equal(h->has_drop_counters, 1);
	assert_int_equal(h->capture_dropped, 6); /* max(EPB sum 2, ISB ifdrop 6) */
	assert_int_equal(h->truncated, 0);
	trace_reader_close(tr);
}

/* A pcapng built block by block, in either byte order. */
struct mx_file {
	uint8_t b[4096];
	size_t n;
	bool big;
};

static void mx_put(struct mx_file *g, uint64_t v, int bytes)
{
	for (int i = 0; i < bytes; i++)
		g->b[g->n++] = (uint8_t)(v >> 8 * (g->big ? bytes - 1 - i : i));
}

static void mx_block(struct mx_file *g, uint32_t type, const uint8_t *body, size_t len)
{
	size_t padded = (len + 3) & ~(size_t)3;

	mx_put(g, type, 4);
	mx_put(g, 12 + padded, 4);
	memcpy(g->b + g->n, body, len);
	memset(g->b + g->n + len, 0, padded - len);
	g->n += padded;
	mx_put(g, 12 + padded, 4);
}

/* The body of a block in the file's byte order: put into a second mx_file, then mx_block. */
static void mx_shb(struct mx_file *g, bool big)
{
	struct mx_file body = { .big = big };

	g->big = big;
	mx_put(&body, 0x1a2b3c4d, 4);
	mx_put(&body, 1, 2);
	mx_put(&body, 0, 2);
	mx_put(&body, UINT64_MAX, 8);
	mx_block(g, 0x0a0d0d0a, body.b, body.n);
}

/* An IDB; tsresol 0xff: none given; tsoffset in seconds. */
static void mx_idb(struct mx_file *g, uint16_t linktype, uint32_t snaplen, uint8_t tsresol, int64_t tsoffset)
{
	struct mx_file body = { .big = g->big };

	mx_put(&body, linktype, 2);
	mx_put(&body, 0, 2);
	mx_put(&body, snaplen, 4);
	if (tsresol != 0xff) {
		mx_put(&body, 9, 2);
		mx_put(&body, 1, 2);
		mx_put(&body, tsresol, 4); /* the value byte first: only in little-endian order */
		if (g->big)
			body.b[body.n - 4] = tsresol, body.b[body.n - 1] = 0;
	}
	if (tsoffset) {
		mx_put(&body, 14, 2);
		mx_put(&body, 8, 2);
		mx_put(&body, (uint64_t)tsoffset, 8);
	}
	mx_put(&body, 0, 4); /* opt_endofopt */
	mx_block(g, 1, body.b, body.n);
}

/* type 6 EPB, 2 PB (if_id 16 bits, drops 0xffff), 3 SPB (no time); the frame is len bytes of mark. */
static void mx_packet(struct mx_file *g, uint32_t type, uint32_t if_id, uint64_t ts, uint8_t mark, uint32_t len)
{
	struct mx_file body = { .big = g->big };

	if (type == 3) {
		mx_put(&body, len + 8, 4); /* original length: the snapshot length cut it */
	} else {
		if (type == 2) {
			mx_put(&body, if_id, 2);
			mx_put(&body, 0xffff, 2);
		} else {
			mx_put(&body, if_id, 4);
		}
		mx_put(&body, ts >> 32, 4);
		mx_put(&body, ts & 0xffffffffu, 4);
		mx_put(&body, len, 4);
		mx_put(&body, len, 4);
	}
	memset(body.b + body.n, mark, len);
	body.n += len;
	mx_block(g, type, body.b, body.n);
}

static const char *mx_write(const struct mx_file *g)
{
	const char *path = tmp_path();
	FILE *f = fopen(path, "wb");

	assert_non_null(f);
	assert_int_equal(fwrite(g->b, 1, g->n, f), g->n);
	fclose(f);
	return path;
}

/*
 * mergecap of an Ethernet and a Linux cooked capture: libpcap refuses a pcapng whose
 * interfaces differ in link type. Two sections (big-endian, then little-endian), per-interface
 * if_tsresol and if_tsoffset, EPB, obsolete PB and SPB: every frame with its interface's link type.
 */
static void test_pcapng_mixed_link_types(void **state)
{
	struct mx_file g = { 0 };
	struct trace_reader *tr;
	struct trace_frame f;
	const char *path;
	char err[256];
	const struct {
		int linktype;
		uint64_t ts_ns;
		uint8_t mark;
		uint32_t caplen;
	} want[] = {
		{ DLT_EN10MB, 1700000000123456000ull, 0xa1, 60 },	/* us, EPB */
		{ DLT_LINUX_SLL, 1700000100500000000ull, 0xa2, 62 },	/* 2^-2 s, offset 100 s, EPB */
		{ DLT_LINUX_SLL, 1700000100750000000ull, 0xa3, 62 },	/* the same, obsolete PB */
		{ DLT_RAW, 1700000000000000001ull, 0xb1, 32 },		/* second section: ns, LINKTYPE_RAW */
		{ DLT_EN10MB, 1700000000000000002ull, 0xb2, 60 },
		{ DLT_RAW, 0, 0xb3, 32 },				/* SPB: no time, 40 bytes cut at 32 */
	};
	int n = 0;

	mx_shb(&g, true);
	mx_idb(&g, DLT_EN10MB, 0, 0xff, 0);
	mx_idb(&g, DLT_LINUX_SLL, 0, 0x82, 100);
	mx_packet(&g, 6, 0, 1700000000123456ull, 0xa1, 60);
	mx_packet(&g, 6, 1, 1700000000ull * 4 + 2, 0xa2, 62);
	mx_packet(&g, 2, 1, 1700000000ull * 4 + 3, 0xa3, 62);
	mx_shb(&g, false);
	mx_idb(&g, 101 /* LINKTYPE_RAW */, 32, 9, 0);
	mx_idb(&g, DLT_EN10MB, 0, 9, 0);
	mx_packet(&g, 6, 0, 1700000000000000001ull, 0xb1, 32);
	mx_packet(&g, 6, 1, 1700000000000000002ull, 0xb2, 60);
	mx_packet(&g, 3, 0, 0, 0xb3, 32);
	path = mx_write(&g);

	assert_int_equal(trace_reader_open(&tr, &path, 1, err, sizeof(err)), 0);
	while (trace_reader_next(tr, &f) == 1) {
		assert_true(n < (int)ARRAY_SIZE(want));
		assert_int_equal(f.linktype, want[n].linktype);
		assert_int_equal(f.ts_ns, want[n].ts_ns);
		assert_int_equal(f.caplen, want[n].caplen);
		assert_int_equal(f.frame_number, (uint64_t)n + 1);
		for (uint32_t i = 0; i < f.caplen; i++)
			assert_int_equal(f.data[i], want[n].mark);
		n++;
	}
	assert_int_equal(n, ARRAY_SIZE(want));
	assert_string_equal(trace_reader_error(tr), "");
	assert_int_equal(trace_reader_health(tr, 0)->truncated, 0);
	trace_reader_close(tr);

	/* A packet on an interface the section never described: corrupt, the frames before it kept. */
	g.n -= 12 + 4 + 32;
	mx_packet(&g, 6, 7, 1700000000000000003ull, 0xb4, 40);
	path = mx_write(&g);
	n = 0;
	assert_int_equal(trace_reader_open(&tr, &path, 1, err, sizeof(err)), 0);
	while (trace_reader_next(tr, &f) == 1)
		n++;
	assert_int_equal(n, 5);
	assert_non_null(strstr(trace_reader_error(tr), "after 5 frames: packet on an interface not described"));
	trace_reader_close(tr);
}

/* n ns-pcap records of 60 bytes (as write_pcap() writes them) appended to path, times from ts0 on. */
static void append_pcap_records(const char *path, uint64_t ts0, int n)
{
	FILE *f = fopen(path, "ab");
	uint8_t frame[60];

	assert_non_null(f);
	memset(frame, 0xab, sizeof(frame));
	for (int i = 0; i < n; i++) {
		uint64_t ts = ts0 + 1000ull * (uint64_t)i;
		uint32_t rec[4] = { (uint32_t)(ts / 1000000000ull), (uint32_t)(ts % 1000000000ull), 60, 60 };
		assert_int_equal(fwrite(rec, sizeof(rec), 1, f), 1);
		assert_int_equal(fwrite(frame, sizeof(frame), 1, f), 1);
	}
	assert_int_equal(fclose(f), 0);
}

enum { AROUND_FRAMES = 20000 }; /* 1.5 MB: several read buffers, many pages */

static void append_100(const char *path)
{
	append_pcap_records(path, 1800000000000000000ull, 100);
}

static void cut_to_1000(const char *path)
{
	assert_int_equal(truncate(path, 24 + 76 * 1000 + 30), 0); /* inside record 1001's data */
}

static const char *around_file(void)
{
	uint64_t *ts = calloc(AROUND_FRAMES, sizeof(*ts));
	uint8_t *marks = calloc(AROUND_FRAMES, 1);
	const char *path;

	assert_non_null(ts);
	assert_non_null(marks);
	for (int i = 0; i < AROUND_FRAMES; i++) {
		ts[i] = 1700000000000000000ull + 1000ull * (uint64_t)i;
		marks[i] = (uint8_t)i;
	}
	path = write_pcap(ts, marks, AROUND_FRAMES, PCAP_TSTAMP_PRECISION_NANO);
	free(ts);
	free(marks);
	return path;
}

/* A capture still being written: frames added while it is read are read too, as read() reads them. */
static void test_file_grows_while_read(void **state)
{
	struct read_all a;

	read_around(around_file(), 10, append_100, &a);
	assert_int_equal(a.frames, AROUND_FRAMES + 100);
	assert_int_equal(a.rc_errors, 0);
	assert_int_equal(a.h.truncated, 0);
}

/* Another process cuts the file while it is read: no crash, the input is called truncated. */
static void test_file_cut_while_read(void **state)
{
	struct read_all a;

	read_around(around_file(), 10, cut_to_1000, &a);
	assert_true(a.frames >= 1000 && a.frames < AROUND_FRAMES);
	assert_int_equal(a.rc_errors, 1);
	assert_int_equal(a.h.truncated, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_merge_by_time, cleanup),
		cmocka_unit_test_teardown(test_microsecond_file_and_backwards, cleanup),
		cmocka_unit_test_teardown(test_open_errors, cleanup),
		cmocka_unit_test_teardown(test_truncated_file, cleanup),
		cmocka_unit_test_teardown(test_pcapng_drop_counters, cleanup),
		cmocka_unit_test_teardown(test_pcapng_counters_across_buffers, cleanup),
		cmocka_unit_test_teardown(test_pcap_across_buffers, cleanup),
		cmocka_unit_test_teardown(test_over_snaplen_across_buffers, cleanup),
		cmocka_unit_test_teardown(test_pcapng_generated_vs_libpcap, cleanup),
		cmocka_unit_test_teardown(test_pcapng_walk_malformed, cleanup),
		cmocka_unit_test_teardown(test_pcapng_drops_stream_pieces, cleanup),
		cmocka_unit_test_teardown(test_project_pcapng_writer, cleanup),
		cmocka_unit_test_teardown(test_pcapng_mixed_link_types, cleanup),
		cmocka_unit_test_teardown(test_file_grows_while_read, cleanup),
		cmocka_unit_test_teardown(test_file_cut_while_read, cleanup),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
