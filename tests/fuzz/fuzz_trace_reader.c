/*
 * fuzz_trace_reader.c: agentxdp-analyze's reading path on any bytes: trace_reader (libpcap,
 * drop counters, health, the merge of inputs by time) -> decoder -> per-QP tracker.
 * A second pcapng section header (0a 0d 0d 0a) past the start splits the input into two
 * files, read as two vantage points; odd-sized inputs turn mirror-duplicate detection on.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "lib/track/qp_track.h"
#include "lib/decode/roce_decode.h"
#include "lib/trace/trace_reader.h"

static const uint8_t shb_magic[4] = { 0x0a, 0x0d, 0x0d, 0x0a };

/* A memory file holding p[0..len), opened by path like any trace. -1 on failure. */
static int memory_file(const uint8_t *p, size_t len, char *path, size_t path_len)
{
	int fd = memfd_create("fuzz-trace", MFD_CLOEXEC);

	if (fd < 0)
		return -1;
	if (len && write(fd, p, len) != (ssize_t)len) {
		close(fd);
		return -1;
	}
	snprintf(path, path_len, "/proc/self/fd/%d", fd);
	return fd;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *second = size > 4 ? memmem(data + 4, size - 4, shb_magic, 4) : NULL;
	size_t first_len = second ? (size_t)(second - data) : size;
	char path0[64], path1[64], err[512];
	const char *paths[2] = { path0, path1 };
	int fds[2] = { -1, -1 }, n = second ? 2 : 1;
	struct roce_decode_opts dopts;
	struct qp_tracker_cfg cfg;
	struct qp_tracker *t = NULL;
	struct trace_reader *tr = NULL;
	const struct flow_stats *flows;
	struct trace_frame frame;
	struct roce_pkt pkt;
	uint64_t added = 0;
	long n_flows;
	int rc;

	fds[0] = memory_file(data, first_len, path0, sizeof(path0));
	if (second)
		fds[1] = memory_file(second, size - first_len, path1, sizeof(path1));
	if (fds[0] < 0 || (second && fds[1] < 0))
		goto cleanup;
	if (trace_reader_open(&tr, paths, n, err, sizeof(err))) {
		if (!err[0] || strchr(err, '\n'))	/* the one-line message contract */
			abort();
		goto cleanup;
	}

	roce_decode_opts_default(&dopts);
	qp_tracker_cfg_default(&cfg);
	/* Small caps and windows so the limits are reached within a fuzz input. */
	cfg.window_ns = 1000000;
	cfg.max_outstanding = 64;
	cfg.exact_samples = 16;
	cfg.max_windows = 32;
	cfg.dup_window_ns = (size & 1) ? 1000 : 0;
	t = qp_tracker_new(&cfg);
	if (!t)
		goto cleanup;

	while ((rc = trace_reader_next(tr, &frame)) != 0) {
		if (rc < 0) {
			if (!trace_reader_error(tr))
				abort();
			continue;	/* the other input keeps delivering */
		}
		if (frame.trace_index < 0 || frame.trace_index >= n)
			abort();
		/* A record may claim caplen > len (libpcap passes it on): the decoder settles it. */
		if (roce_decode_frame(&dopts, frame.linktype, frame.data, frame.caplen, frame.origlen,
				      frame.ts_ns, &pkt) != ROCE_DECODE_OK)
			continue;
		if (pkt.orig_len < pkt.cap_len)
			abort();
		if (qp_tracker_add(t, &pkt, (uint32_t)frame.trace_index))
			break;
		added++;
	}
	qp_tracker_finish(t);
	n_flows = qp_tracker_snapshot(t, &flows);
	if (n_flows >= 0) {
		uint64_t packets = 0;

		for (long i = 0; i < n_flows; i++) {
			const struct flow_stats *f = &flows[i];

			packets += f->packets;
			if (f->n_windows > cfg.max_windows || f->ack_latency_p50_us > f->ack_latency_p99_us ||
			    f->ack_latency_p99_us > f->ack_latency_max_us || f->first_ns > f->last_ns)
				abort();
		}
		/* Every packet added lands in exactly one flow, duplicates included or not. */
		if (packets > added || qp_tracker_totals(t)->packets != added)
			abort();
	}
	for (int i = 0; i < n; i++)
		if (!trace_reader_health(tr, i))
			abort();

cleanup:
	qp_tracker_free(t);
	if (tr)
		trace_reader_close(tr);
	for (int i = 0; i < 2; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	return 0;
}
