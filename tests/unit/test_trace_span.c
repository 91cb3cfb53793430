/* test_trace_span.c: first and last timestamps of pcap and pcapng files without reading packets. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/trace/pcapng_writer.h"
#include "lib/trace/trace_span.h"

static char path[64];
static const uint8_t frame[64];

static int setup(void **state)
{
	int fd;

	snprintf(path, sizeof(path), "/tmp/agentxdp-span-XXXXXX");
	fd = mkstemp(path);

	assert_true(fd >= 0);
	close(fd);
	return 0;
}

static int teardown(void **state)
{
	unlink(path);
	return 0;
}

/* The shared writer: ns resolution, packets out of order, a statistics block at the end. */
static void test_pcapng_writer_file(void **state)
{
	struct pcapng_shb_info shb = { .os = "", .application = "test_trace_span" };
	struct pcapng_if_info ifi = { .name = "eth0", .linktype = 1, .snaplen = 128 };
	struct pcapng_writer *w = pcapng_writer_open(path, &shb);
	uint64_t ts[] = { 1767225600000000100ull, 1767225600000000050ull, 1767225600020000000ull };
	struct pcapng_if_stats st = { .if_id = 0, .ts_ns = 1767225600030000000ull, .received = 3 };
	uint64_t first, last;

	assert_non_null(w);
	assert_int_equal(pcapng_writer_add_interface(w, &ifi), 0);
	for (size_t i = 0; i < 3; i++) {
		struct pcapng_packet p = { .ts_ns = ts[i], .data = frame, .caplen = 64, .origlen = 64 };
		assert_int_equal(pcapng_writer_write_packet(w, &p), 0);
	}
	assert_int_equal(pcapng_writer_write_stats(w, &st), 0);
	assert_int_equal(pcapng_writer_close(w), 0);
	assert_int_equal(trace_span(path, &first, &last), 0);
	/* First and last in file order: what the walk promises (a window needs no more). */
	assert_true(first == ts[0]);
	assert_true(last == ts[2]);
}

static void put32(FILE *f, uint32_t v)
{
	fwrite(&v, 4, 1, f);
}

/* A hand-built pcapng with the default microsecond resolution (no if_tsresol option). */
static void test_pcapng_microseconds(void **state)
{
	FILE *f = fopen(path, "wb");
	uint64_t first, last;
	uint64_t us[] = { 1000000ull, 3500000ull };

	assert_non_null(f);
	put32(f, 0x0A0D0D0A), put32(f, 28), put32(f, 0x1A2B3C4D), put32(f, 1), put32(f, 0xffffffff),
		put32(f, 0xffffffff), put32(f, 28);
	put32(f, 1), put32(f, 20), put32(f, 1), put32(f, 0), put32(f, 20);
	for (int i = 0; i < 2; i++) {
		put32(f, 6), put32(f, 32 + 64), put32(f, 0), put32(f, (uint32_t)(us[i] >> 32)),
			put32(f, (uint32_t)us[i]), put32(f, 64), put32(f, 64);
		fwrite(frame, 64, 1, f);
		put32(f, 32 + 64);
	}
	fclose(f);
	assert_int_equal(trace_span(path, &first, &last), 0);
	assert_true(first == 1000000000ull);
	assert_true(last == 3500000000ull);
}

/* Classic pcap, microsecond and nanosecond magic. */
static void test_pcap(void **state)
{
	struct pcap_writer *w = pcap_writer_open(path, 1, 128);
	uint64_t first, last;

	assert_non_null(w);
	assert_int_equal(pcap_writer_write_packet(w, 1767225600000000007ull, frame, 64, 64), 0);
	assert_int_equal(pcap_writer_write_packet(w, 1767225600000000001ull, frame, 60, 64), 0);
	assert_int_equal(pcap_writer_write_packet(w, 1767225601000000009ull, frame, 64, 64), 0);
	assert_int_equal(pcap_writer_close(w), 0);
	assert_int_equal(trace_span(path, &first, &last), 0);
	assert_true(first == 1767225600000000001ull); /* pcap is walked whole: true minimum */
	assert_true(last == 1767225601000000009ull);
}

/* Not a trace, truncated, empty, a directory: -1, so the caller reads the file itself. */
static void test_refusals(void **state)
{
	FILE *f = fopen(path, "wb");
	uint64_t first, last;

	assert_non_null(f);
	fputs("link,a,b\n", f);
	fclose(f);
	assert_int_equal(trace_span(path, &first, &last), -1);
	f = fopen(path, "wb");
	put32(f, 0x0A0D0D0A), put32(f, 28), put32(f, 0x1A2B3C4D);
	fclose(f);
	assert_int_equal(trace_span(path, &first, &last), -1);
	assert_int_equal(trace_span("/tmp", &first, &last), -1);
	assert_int_equal(trace_span("/nonexistent/x.pcap", &first, &last), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_pcapng_writer_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pcapng_microseconds, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pcap, setup, teardown),
		cmocka_unit_test_setup_teardown(test_refusals, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
