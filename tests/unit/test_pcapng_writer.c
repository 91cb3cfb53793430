/* test_pcapng_writer.c: files from the shared writer read back with libpcap and block by block. */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>
#include <pcap/pcap.h>

#include "lib/trace/pcapng_writer.h"

static char tmp_path[64];

static int setup(void **state)
{
	strcpy(tmp_path, "/tmp/agentxdp-pcapng-XXXXXX");
	int fd = mkstemp(tmp_path);
	if (fd < 0)
		return -1;
	close(fd);
	unlink(tmp_path);	/* the writer creates it, so its mode is the writer's */
	return 0;
}

static int teardown(void **state)
{
	unlink(tmp_path);
	return 0;
}

static uint8_t *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	uint8_t *buf = malloc((size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	*len = (size_t)n;
	return buf;
}

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint16_t le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

/* Find option `code` in the options area [p, end); returns its value or NULL. */
static const uint8_t *find_opt(const uint8_t *p, const uint8_t *end, uint16_t code, uint16_t *len)
{
	while (p + 4 <= end) {
		uint16_t c = le16(p), l = le16(p + 2);
		if (c == 0)
			return NULL;
		if (c == code) {
			*len = l;
			return p + 4;
		}
		p += 4 + ((l + 3u) & ~3u);
	}
	return NULL;
}

static void fill(uint8_t *buf, size_t n, uint8_t seed)
{
	for (size_t i = 0; i < n; i++)
		buf[i] = (uint8_t)(seed + i * 7);
}

static void test_two_interfaces_options_isb(void **state)
{
	struct pcapng_shb_info shb = {.hardware = "test-hw", .os = "test-os",
				      .application = "test_pcapng_writer"};
	uint8_t frame[300];
	umask(022);
	struct pcapng_writer *w = pcapng_writer_open(tmp_path, &shb);
	assert_non_null(w);
	struct pcapng_if_info if0 = {.name = "eth0", .description = "mirror", .linktype = 1,
				     .snaplen = 128};
	/* libpcap reads a section only when every interface has one linktype and snaplen. */
	struct pcapng_if_info if1 = {.name = "eth1", .linktype = 1, .snaplen = 128};
	assert_int_equal(pcapng_writer_add_interface(w, &if0), 0);
	assert_int_equal(pcapng_writer_add_interface(w, &if1), 1);

	fill(frame, sizeof(frame), 1);
	struct pcapng_packet p0 = {.if_id = 0, .ts_ns = 1700000000123456789ull, .data = frame,
				   .caplen = 300, .origlen = 300, .has_flags = true,
				   .flags = PCAPNG_EPB_FLAG_INBOUND, .has_queue = true, .queue = 5,
				   .has_dropcount = true, .dropcount = 42};
	struct pcapng_packet p1 = {.if_id = 1, .ts_ns = 1700000000123456790ull, .data = frame,
				   .caplen = 61, .origlen = 1000};
	assert_int_equal(pcapng_writer_write_packet(w, &p0), 0);
	assert_int_equal(pcapng_writer_write_packet(w, &p1), 0);
	struct pcapng_packet bad = p1;
	bad.if_id = 2;
	assert_int_equal(pcapng_writer_write_packet(w, &bad), -1);
	assert_int_equal(errno, EINVAL);
	/* Interfaces come before packets. */
	assert_int_equal(pcapng_writer_add_interface(w, &if1), -1);
	struct pcapng_if_stats st = {.if_id = 0, .ts_ns = 1700000001000000000ull, .received = 2,
				     .dropped = 3, .start_ns = 1700000000000000001ull,
				     .end_ns = 1700000001000000000ull};
	assert_int_equal(pcapng_writer_write_stats(w, &st), 0);
	uint64_t bytes = pcapng_writer_bytes(w);
	assert_int_equal(pcapng_writer_close(w), 0);

	struct stat sb;
	assert_int_equal(stat(tmp_path, &sb), 0);
	assert_int_equal(sb.st_mode & 0777, 0640);
	assert_int_equal((uint64_t)sb.st_size, bytes);

	/* libpcap reads it back, nanoseconds intact, caplen trimmed to if0's snaplen. */
	char errbuf[PCAP_ERRBUF_SIZE];
	pcap_t *pc = pcap_open_offline_with_tstamp_precision(tmp_path, PCAP_TSTAMP_PRECISION_NANO,
							     errbuf);
	assert_non_null(pc);
	assert_int_equal(pcap_datalink(pc), DLT_EN10MB);
	struct pcap_pkthdr *h;
	const u_char *data;
	assert_int_equal(pcap_next_ex(pc, &h, &data), 1);
	assert_int_equal(h->caplen, 128);
	assert_int_equal(h->len, 300);
	assert_int_equal(h->ts.tv_sec, 1700000000);
	assert_int_equal(h->ts.tv_usec, 123456789);
	assert_memory_equal(data, frame, 128);
	assert_int_equal(pcap_next_ex(pc, &h, &data), 1);
	assert_int_equal(h->caplen, 61);
	assert_int_equal(h->len, 1000);
	assert_int_equal(h->ts.tv_usec, 123456790);
	assert_int_equal(pcap_next_ex(pc, &h, &data), PCAP_ERROR_BREAK);
	pcap_close(pc);

	/* Walk the blocks: SHB, IDB, IDB, EPB, EPB, ISB, and check every option we wrote. */
	size_t len;
	uint8_t *f = slurp(tmp_path, &len);
	const uint32_t want_types[] = {0x0A0D0D0A, 1, 1, 6, 6, 5};
	size_t off = 0, n = 0;
	uint16_t ol;
	const uint8_t *v;
	while (off < len) {
		assert_true(off + 12 <= len);
		uint32_t type = le32(f + off), blen = le32(f + off + 4);
		assert_true(n < 6);
		assert_int_equal(type, want_types[n]);
		assert_int_equal(blen % 4, 0);
		assert_true(off + blen <= len);
		assert_int_equal(le32(f + off + blen - 4), blen);	/* trailing length */
		const uint8_t *b = f + off, *end = f + off + blen - 4;
		switch (n) {
		case 0:
			assert_int_equal(le32(b + 8), 0x1A2B3C4D);
			v = find_opt(b + 24, end, 2, &ol);
			assert_non_null(v);
			assert_memory_equal(v, "test-hw", ol);
			v = find_opt(b + 24, end, 3, &ol);
			assert_non_null(v);
			assert_memory_equal(v, "test-os", ol);
			v = find_opt(b + 24, end, 4, &ol);
			assert_non_null(v);
			assert_memory_equal(v, "test_pcapng_writer", ol);
			break;
		case 1:
			assert_int_equal(le16(b + 8), 1);
			assert_int_equal(le32(b + 12), 128);
			v = find_opt(b + 16, end, 2, &ol);
			assert_non_null(v);
			assert_int_equal(ol, 4);
			assert_memory_equal(v, "eth0", 4);
			v = find_opt(b + 16, end, 3, &ol);
			assert_non_null(v);
			assert_memory_equal(v, "mirror", ol);
			v = find_opt(b + 16, end, 9, &ol);
			assert_non_null(v);
			assert_int_equal(ol, 1);
			assert_int_equal(v[0], 9);
			break;
		case 2:
			assert_null(find_opt(b + 16, end, 3, &ol));	/* no description given */
			break;
		case 3: {
			uint32_t cap = le32(b + 20);
			const uint8_t *opts = b + 28 + ((cap + 3) & ~3u);
			assert_int_equal(le32(b + 8), 0);
			v = find_opt(opts, end, 2, &ol);	/* epb_flags */
			assert_non_null(v);
			assert_int_equal(le32(v), PCAPNG_EPB_FLAG_INBOUND);
			v = find_opt(opts, end, 6, &ol);	/* epb_queue */
			assert_non_null(v);
			assert_int_equal(le32(v), 5);
			v = find_opt(opts, end, 4, &ol);	/* epb_dropcount */
			assert_non_null(v);
			assert_int_equal(ol, 8);
			assert_int_equal(le32(v), 42);
			break;
		}
		case 4:
			assert_int_equal(le32(b + 8), 1);
			assert_int_equal(blen, 32 + 64);	/* no options: 28 + padded 61 + trailer */
			break;
		case 5: {
			const uint8_t *opts = b + 20;
			v = find_opt(opts, end, 2, &ol);	/* isb_starttime, high word first */
			assert_non_null(v);
			assert_int_equal(((uint64_t)le32(v) << 32) | le32(v + 4),
					 1700000000000000001ull);
			v = find_opt(opts, end, 3, &ol);
			assert_non_null(v);
			assert_int_equal(((uint64_t)le32(v) << 32) | le32(v + 4),
					 1700000001000000000ull);
			v = find_opt(opts, end, 4, &ol);
			assert_non_null(v);
			assert_int_equal(le32(v), 2);
			v = find_opt(opts, end, 5, &ol);
			assert_non_null(v);
			assert_int_equal(le32(v), 3);
			break;
		}
		}
		off += blen;
		n++;
	}
	assert_int_equal(n, 6);
	free(f);
}

static void test_full_device(void **state)
{
	errno = 0;
	struct pcapng_writer *w = pcapng_writer_open("/dev/full", NULL);
	assert_null(w);
	assert_int_equal(errno, ENOSPC);
	struct pcap_writer *pw = pcap_writer_open("/dev/full", 1, 65535);
	assert_null(pw);
	assert_int_equal(errno, ENOSPC);
}

/* A file-size limit stops writes mid-buffer like a full disk: the file must stay whole. */
static void write_until_limit(bool classic)
{
	uint8_t frame[200];
	fill(frame, sizeof(frame), 9);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct rlimit rl = {.rlim_cur = 5000, .rlim_max = 5000};
		signal(SIGXFSZ, SIG_IGN);
		if (setrlimit(RLIMIT_FSIZE, &rl) < 0)
			_exit(2);
		int rc = 0, err = 0;
		if (classic) {
			struct pcap_writer *w = pcap_writer_open(tmp_path, 1, 65535);
			if (!w)
				_exit(3);
			for (int i = 0; i < 100 && rc == 0; i++)
				rc = pcap_writer_write_packet(w, 1000 + i, frame, sizeof(frame),
							      sizeof(frame));
			int crc = pcap_writer_close(w);
			err = errno;
			_exit(crc == -1 && err == EFBIG ? 0 : 4);
		}
		struct pcapng_writer *w = pcapng_writer_open(tmp_path, NULL);
		struct pcapng_if_info ifi = {.name = "x", .linktype = 1, .snaplen = 65535};
		if (!w || pcapng_writer_add_interface(w, &ifi) != 0)
			_exit(3);
		for (int i = 0; i < 100 && rc == 0; i++) {
			struct pcapng_packet p = {.ts_ns = 1000 + i, .data = frame, .caplen = 200,
						  .origlen = 200};
			rc = pcapng_writer_write_packet(w, &p);
		}
		int frc = pcapng_writer_flush(w);
		err = errno;
		pcapng_writer_close(w);
		_exit(frc == -1 && err == EFBIG ? 0 : 4);
	}
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);

	struct stat sb;
	assert_int_equal(stat(tmp_path, &sb), 0);
	assert_true(sb.st_size <= 5000);
	char errbuf[PCAP_ERRBUF_SIZE];
	pcap_t *pc = pcap_open_offline(tmp_path, errbuf);
	assert_non_null(pc);
	struct pcap_pkthdr *h;
	const u_char *data;
	int rc, n = 0;
	while ((rc = pcap_next_ex(pc, &h, &data)) == 1) {
		assert_int_equal(h->caplen, 200);
		assert_memory_equal(data, frame, 200);
		n++;
	}
	assert_int_equal(rc, PCAP_ERROR_BREAK);	/* clean end of file, no truncated record */
	assert_true(n >= 10);
	pcap_close(pc);
}

static void test_size_limit_pcapng(void **state)
{
	write_until_limit(false);
}

static void test_size_limit_pcap(void **state)
{
	write_until_limit(true);
}

/*
 * Full disk (a file-size limit here): the writer counts the packets the file really holds,
 * and the final statistics still go in, with the packets that did not make it as isb_osdrop;
 * the file's last packets make room for them.
 */
static void test_full_disk_counts_and_final_stats(void **state)
{
	uint8_t frame[200];
	uint64_t told[4]; /* per interface: captured, in the file by the writer's count */
	int fds[2];

	fill(frame, sizeof(frame), 3);
	assert_int_equal(pipe(fds), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct rlimit rl = {.rlim_cur = 6000, .rlim_max = 6000};
		uint64_t captured[2] = {0, 0}, out[4];
		int rc = 0;

		signal(SIGXFSZ, SIG_IGN);
		if (setrlimit(RLIMIT_FSIZE, &rl) < 0)
			_exit(2);
		struct pcapng_writer *w = pcapng_writer_open(tmp_path, NULL);
		struct pcapng_if_info ifi = {.name = "x", .linktype = 1, .snaplen = 65535};
		if (!w || pcapng_writer_add_interface(w, &ifi) != 0 || pcapng_writer_add_interface(w, &ifi) != 1)
			_exit(3);
		for (int i = 0; rc == 0 && i < 1000; i++) {
			struct pcapng_packet p = {.if_id = (uint32_t)i % 3 ? 0 : 1, .ts_ns = 1000 + i,
						  .data = frame, .caplen = 200, .origlen = 200};
			rc = pcapng_writer_write_packet(w, &p);
			captured[p.if_id]++; /* the failing one too: captured, never written */
			if (rc == 0 && i % 7 == 0)
				rc = pcapng_writer_flush(w);
		}
		if (rc == 0 || errno != EFBIG)
			_exit(4);
		struct pcapng_if_stats st[2];
		for (uint32_t i = 0; i < 2; i++)
			st[i] = (struct pcapng_if_stats){.if_id = i, .ts_ns = 5000, .received = captured[i],
							 .os_dropped = captured[i] - pcapng_writer_packets(w, i)};
		if (pcapng_writer_write_final_stats(w, st, 2))
			_exit(5);
		for (uint32_t i = 0; i < 2; i++) {
			out[2 * i] = captured[i];
			out[2 * i + 1] = pcapng_writer_packets(w, i);
		}
		pcapng_writer_close(w);
		_exit(write(fds[1], out, sizeof(out)) == sizeof(out) ? 0 : 6);
	}
	close(fds[1]);
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_int_equal(read(fds[0], told, sizeof(told)), sizeof(told));
	close(fds[0]);

	size_t len;
	uint8_t *f = slurp(tmp_path, &len);
	uint64_t in_file[2] = {0, 0}, osdrop[2] = {0, 0};
	int isbs = 0;
	size_t off = 0;
	assert_true(len <= 6000);
	while (off + 12 <= len) {
		const uint8_t *b = f + off;
		uint32_t type = le32(b), blen = le32(b + 4);
		uint16_t ol;

		assert_true(blen >= 12 && off + blen <= len);
		assert_int_equal(le32(b + blen - 4), blen);
		if (type == 6) {
			assert_int_equal(isbs, 0); /* no packet after the statistics */
			in_file[le32(b + 8)]++;
		} else if (type == 5) {
			const uint8_t *v = find_opt(b + 20, b + blen - 4, 7, &ol);
			assert_non_null(v);
			osdrop[le32(b + 8)] = le32(v) | (uint64_t)le32(v + 4) << 32;
			isbs++;
		}
		off += blen;
	}
	assert_int_equal(off, len);
	assert_int_equal(isbs, 2);
	for (int i = 0; i < 2; i++) {
		assert_true(in_file[i] > 0);
		assert_int_equal(told[2 * i + 1], in_file[i]);
		assert_int_equal(osdrop[i], told[2 * i] - in_file[i]);
		assert_true(osdrop[i] > 0);
	}
	free(f);
}

static void test_classic_pcap(void **state)
{
	uint8_t frame[100];
	fill(frame, sizeof(frame), 3);
	struct pcap_writer *w = pcap_writer_open(tmp_path, 1, 64);
	assert_non_null(w);
	assert_int_equal(pcap_writer_write_packet(w, 5000000001ull, frame, 100, 100), 0);
	assert_int_equal(pcap_writer_write_packet(w, 5000000002ull, frame, 40, 1500), 0);
	assert_int_equal(pcap_writer_close(w), 0);
	char errbuf[PCAP_ERRBUF_SIZE];
	pcap_t *pc = pcap_open_offline_with_tstamp_precision(tmp_path, PCAP_TSTAMP_PRECISION_NANO,
							     errbuf);
	assert_non_null(pc);
	assert_int_equal(pcap_snapshot(pc), 64);
	struct pcap_pkthdr *h;
	const u_char *data;
	assert_int_equal(pcap_next_ex(pc, &h, &data), 1);
	assert_int_equal(h->caplen, 64);
	assert_int_equal(h->len, 100);
	assert_int_equal(h->ts.tv_sec, 5);
	assert_int_equal(h->ts.tv_usec, 1);
	assert_memory_equal(data, frame, 64);
	assert_int_equal(pcap_next_ex(pc, &h, &data), 1);
	assert_int_equal(h->caplen, 40);
	assert_int_equal(h->len, 1500);
	assert_int_equal(pcap_next_ex(pc, &h, &data), PCAP_ERROR_BREAK);
	pcap_close(pc);
}

/*
 * Enough interfaces to grow the snaplen table past its first allocation, and one packet
 * bigger than the whole write buffer (256 KiB), so both grow; read back block by block.
 */
static void test_many_interfaces_big_block(void **state)
{
	enum { N_IF = 40, BIG = 300 * 1024 };
	uint8_t *frame = malloc(BIG);
	assert_non_null(frame);
	fill(frame, BIG, 9);
	struct pcapng_writer *w = pcapng_writer_open(tmp_path, NULL);
	assert_non_null(w);
	for (int i = 0; i < N_IF; i++) {
		/* Interface i trims to 64 + i bytes, the last one not at all. */
		struct pcapng_if_info ifi = {.name = "ethX", .linktype = 1,
					     .snaplen = i == N_IF - 1 ? 0 : 64u + (uint32_t)i};
		assert_int_equal(pcapng_writer_add_interface(w, &ifi), i);
	}
	struct pcapng_packet big = {.if_id = N_IF - 1, .ts_ns = 1, .data = frame, .caplen = BIG,
				    .origlen = BIG};
	struct pcapng_packet small = {.if_id = N_IF - 2, .ts_ns = 2, .data = frame, .caplen = 1000,
				      .origlen = 1000};
	assert_int_equal(pcapng_writer_write_packet(w, &small), 0);
	assert_int_equal(pcapng_writer_write_packet(w, &big), 0);
	assert_int_equal(pcapng_writer_write_packet(w, &small), 0);
	assert_int_equal(pcapng_writer_close(w), 0);

	size_t len, off = 0, n_idb = 0, n_epb = 0;
	uint8_t *f = slurp(tmp_path, &len);
	while (off + 12 <= len) {
		uint32_t type = le32(f + off), blen = le32(f + off + 4);
		assert_true(blen >= 12 && off + blen <= len);
		assert_int_equal(le32(f + off + blen - 4), blen);
		if (type == 1) {
			n_idb++;
		} else if (type == 6) {
			uint32_t want = n_epb == 1 ? BIG : 64 + N_IF - 2;
			assert_int_equal(le32(f + off + 8), n_epb == 1 ? N_IF - 1 : N_IF - 2);
			assert_int_equal(le32(f + off + 20), want);
			assert_memory_equal(f + off + 28, frame, want);
			n_epb++;
		}
		off += blen;
	}
	assert_int_equal(off, len);
	assert_int_equal(n_idb, N_IF);
	assert_int_equal(n_epb, 3);
	free(f);
	free(frame);
}

static void test_stream(void **state)
{
	FILE *f = fopen(tmp_path, "wb");
	assert_non_null(f);
	struct pcapng_writer *w = pcapng_writer_open_stream(f, NULL);
	assert_non_null(w);
	struct pcapng_if_info ifi = {.name = "lo", .linktype = 1, .snaplen = 0};
	assert_int_equal(pcapng_writer_add_interface(w, &ifi), 0);
	uint8_t frame[60] = {0};
	struct pcapng_packet p = {.ts_ns = 7, .data = frame, .caplen = 60, .origlen = 60};
	assert_int_equal(pcapng_writer_write_packet(w, &p), 0);
	assert_int_equal(pcapng_writer_close(w), 0);
	assert_int_equal(fclose(f), 0);	/* the stream stays the caller's */
	char errbuf[PCAP_ERRBUF_SIZE];
	pcap_t *pc = pcap_open_offline(tmp_path, errbuf);
	assert_non_null(pc);
	struct pcap_pkthdr *h;
	const u_char *data;
	assert_int_equal(pcap_next_ex(pc, &h, &data), 1);
	assert_int_equal(h->caplen, 60);
	pcap_close(pc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_two_interfaces_options_isb, setup, teardown),
		cmocka_unit_test_setup_teardown(test_full_device, setup, teardown),
		cmocka_unit_test_setup_teardown(test_size_limit_pcapng, setup, teardown),
		cmocka_unit_test_setup_teardown(test_size_limit_pcap, setup, teardown),
		cmocka_unit_test_setup_teardown(test_full_disk_counts_and_final_stats, setup, teardown),
		cmocka_unit_test_setup_teardown(test_classic_pcap, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stream, setup, teardown),
		cmocka_unit_test_setup_teardown(test_many_interfaces_big_block, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
