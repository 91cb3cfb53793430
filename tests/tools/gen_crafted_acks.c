/*
 * gen_crafted_acks.c: the crafted-ACK trace of issue #22 (algorithmic DoS), and a work meter
 * for it. Not installed.
 *
 *   gen_crafted_acks PACKETS [OUT.pcapng]   write the trace (stdout when OUT is absent or "-")
 *   gen_crafted_acks --work TRACE           feed TRACE through the decoder and the tracker;
 *                                           print "packets N psn_slots_visited M"
 *
 * One RC queue pair, 198.18.0.1 -> 198.18.0.2. The requester sends WRITE Only requests at
 * PSNs 0, 16, 32, 64, ..., 32768: each lands on a ring slot held by PSN 0, still outstanding,
 * so the outstanding-PSN ring doubles to 65536 slots with 13 packets. The rest of the
 * PACKETS are ACKs from the responder, the first naming 32768, each later one 65536 PSNs
 * further: a tracker that walks the PSNs an ACK covers does 65536 steps per packet.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/decode/roce_decode.h"
#include "lib/model/roce_frame.h"
#include "lib/trace/pcapng_writer.h"
#include "lib/trace/trace_reader.h"
#include "lib/track/qp_track.h"

#define BASE_NS (1767225600ull * 1000000000ull)
#define GAP_NS 1000ull
#define REQ_QPN 0x11
#define RESP_QPN 0x22
#define RING_PSN_LAST 32768u	/* the last request: the ring is 2 * 32768 slots then */
#define ACK_STEP_PSN 65536u

static void addrs(struct roce_frame_addr *req, struct roce_frame_addr *resp)
{
	static const uint8_t v4mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	memset(req, 0, sizeof(*req));
	req->ip_version = 4;
	req->ttl = 64;
	memcpy(req->src_ip, v4mapped, 12);
	memcpy(req->dst_ip, v4mapped, 12);
	req->src_ip[12] = 198, req->src_ip[13] = 18, req->src_ip[15] = 1;
	req->dst_ip[12] = 198, req->dst_ip[13] = 18, req->dst_ip[15] = 2;
	req->src_mac[0] = 0x02, req->src_mac[5] = 1;
	req->dst_mac[0] = 0x02, req->dst_mac[5] = 2;
	req->udp_sport = 49152;
	*resp = *req;
	memcpy(resp->src_ip, req->dst_ip, 16);
	memcpy(resp->dst_ip, req->src_ip, 16);
	memcpy(resp->src_mac, req->dst_mac, 6);
	memcpy(resp->dst_mac, req->src_mac, 6);
}

static int write_trace(unsigned long packets, const char *path)
{
	static uint8_t frame[ROCE_FRAME_MAX];
	struct pcapng_shb_info shb = { .application = "gen_crafted_acks", .os = "test" };
	struct pcapng_if_info ifi = { .name = "crafted0", .linktype = 1, .snaplen = 65535 };
	struct roce_frame_addr req_addr, resp_addr;
	struct pcapng_writer *w = pcapng_writer_open(path, &shb);
	uint32_t req_psn = 0, ack_psn = RING_PSN_LAST;
	int requests = 1;

	if (!w || pcapng_writer_add_interface(w, &ifi) < 0)
		goto fail;
	addrs(&req_addr, &resp_addr);
	for (unsigned long i = 0; i < packets; i++) {
		struct pcapng_packet out = { 0 };
		struct roce_pkt pkt = { 0 };
		size_t len;

		pkt.pkey = 0xffff;
		if (requests) {
			pkt.opcode = ROCE_OPCODE(ROCE_TR_RC, ROCE_OP_WRITE_ONLY);
			pkt.flags = ROCE_F_ACK_REQ;
			pkt.dest_qp = RESP_QPN;
			pkt.psn = req_psn;
			pkt.reth_dma_len = 16;
			pkt.payload_len = 16;
			len = roce_frame_build(frame, sizeof(frame), &req_addr, &pkt, NULL, false);
			req_psn = req_psn ? req_psn * 2 : 16;
			requests = req_psn <= RING_PSN_LAST;
		} else {
			pkt.opcode = ROCE_OPCODE(ROCE_TR_RC, ROCE_OP_ACK);
			pkt.dest_qp = REQ_QPN;
			pkt.psn = ack_psn;
			pkt.aeth_syndrome = 0x1f; /* ACK, credits invalid */
			pkt.aeth_msn = (uint32_t)i;
			len = roce_frame_build(frame, sizeof(frame), &resp_addr, &pkt, NULL, false);
			ack_psn = (ack_psn + ACK_STEP_PSN) & 0xffffff;
		}
		if (!len) {
			errno = EINVAL;
			goto fail;
		}
		out.ts_ns = BASE_NS + i * GAP_NS;
		out.data = frame;
		out.caplen = out.origlen = (uint32_t)len;
		if (pcapng_writer_write_packet(w, &out))
			goto fail;
	}
	if (pcapng_writer_close(w))
		goto fail_closed;
	return 0;
fail:
	if (w)
		pcapng_writer_close(w);
fail_closed:
	fprintf(stderr, "gen_crafted_acks: %s: %s\n", path, strerror(errno ? errno : EIO));
	return 1;
}

/* The tracker's work on a trace: PSN slots it visited, against the packets it was given. */
static int measure_work(const char *path)
{
	const char *paths[1] = { path };
	struct roce_decode_opts opts;
	struct qp_tracker_cfg cfg;
	struct trace_reader *tr = NULL;
	struct trace_frame fr;
	struct qp_tracker *t;
	char err[256];
	int rc;

	if (trace_reader_open(&tr, paths, 1, err, sizeof(err))) {
		fprintf(stderr, "gen_crafted_acks: %s\n", err);
		return 1;
	}
	roce_decode_opts_default(&opts);
	qp_tracker_cfg_default(&cfg);
	t = qp_tracker_new(&cfg);
	if (!t) {
		fprintf(stderr, "gen_crafted_acks: tracker: %s\n", strerror(errno));
		trace_reader_close(tr);
		return 1;
	}
	while ((rc = trace_reader_next(tr, &fr)) == 1) {
		struct roce_pkt pkt;

		if (roce_decode_frame(&opts, fr.linktype, fr.data, fr.caplen, fr.origlen, fr.ts_ns, &pkt) == 0)
			qp_tracker_add(t, &pkt, 0);
	}
	if (rc < 0)
		fprintf(stderr, "gen_crafted_acks: %s: %s\n", path, trace_reader_error(tr));
	else
		printf("packets %" PRIu64 " psn_slots_visited %" PRIu64 "\n", qp_tracker_totals(t)->packets,
		       qp_tracker_totals(t)->psn_slots_visited);
	qp_tracker_free(t);
	trace_reader_close(tr);
	return rc < 0;
}

int main(int argc, char **argv)
{
	unsigned long packets;
	char *end;

	if (argc == 3 && !strcmp(argv[1], "--work"))
		return measure_work(argv[2]);
	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: gen_crafted_acks PACKETS [OUT.pcapng] | gen_crafted_acks --work TRACE\n");
		return 2;
	}
	errno = 0;
	packets = strtoul(argv[1], &end, 10);
	if (errno || *end || packets < 14 || packets > 100000000) {
		fprintf(stderr, "gen_crafted_acks: PACKETS must be 14..100000000\n");
		return 2;
	}
	return write_trace(packets, argc == 3 ? argv[2] : "-");
}
