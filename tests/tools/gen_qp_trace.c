/*
 * gen_qp_trace.c: a classic pcap (ns timestamps) of N RC queue pairs, each doing R rounds of
 * one RDMA WRITE Only and its ACK, for agentxdp-analyze's memory tests (how RSS grows with
 * QPs, and that it does not grow with packets). Not installed.
 *
 *   gen_qp_trace QPS ROUNDS [OUT.pcap]     (stdout when OUT is absent or "-")
 *
 * QP i runs between host pair p = i % 16384: 198.18.1.(p % 128 + 1) -> 198.19.1.(p / 128 + 1)
 * (128 requester hosts, 128 responder hosts), requester QPN i + 16, responder QPN
 * 0x800000 + i; its PSNs start at i * 64. A round sends every QP's
 * WRITE (10 ns apart), then every ACK 5 us after its WRITE, so one PSN per QP is outstanding.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/model/roce_frame.h"

#define ROUND_GAP_NS 20000ull
#define REQ_GAP_NS 10ull
#define ACK_DELAY_NS 5000ull
#define PAYLOAD_BYTES 16

static void put_le32(uint8_t *q, uint32_t v)
{
	q[0] = v & 0xff;
	q[1] = (v >> 8) & 0xff;
	q[2] = (v >> 16) & 0xff;
	q[3] = v >> 24;
}

static int write_frame(FILE *out, uint64_t ts_ns, const uint8_t *frame, size_t len)
{
	uint8_t hdr[16];

	put_le32(hdr, (uint32_t)(ts_ns / 1000000000ull));
	put_le32(hdr + 4, (uint32_t)(ts_ns % 1000000000ull));
	put_le32(hdr + 8, (uint32_t)len);
	put_le32(hdr + 12, (uint32_t)len);
	return fwrite(hdr, 1, 16, out) == 16 && fwrite(frame, 1, len, out) == len ? 0 : -1;
}

static void qp_addrs(uint32_t i, struct roce_frame_addr *req, struct roce_frame_addr *resp)
{
	static const uint8_t v4mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	memset(req, 0, sizeof(*req));
	req->ip_version = 4;
	req->ttl = 64;
	memcpy(req->src_ip, v4mapped, 12);
	memcpy(req->dst_ip, v4mapped, 12);
	req->src_ip[12] = 198;
	req->src_ip[13] = 18;
	req->src_ip[14] = 1;
	req->src_ip[15] = (uint8_t)(i % 16384 % 128 + 1);
	req->dst_ip[12] = 198;
	req->dst_ip[13] = 19;
	req->dst_ip[14] = 1;
	req->dst_ip[15] = (uint8_t)(i % 16384 / 128 + 1);
	req->src_mac[0] = 0x02;
	req->src_mac[5] = 1;
	req->dst_mac[0] = 0x02;
	req->dst_mac[5] = 2;
	req->udp_sport = (uint16_t)(49152 + i % 16384);
	*resp = *req;
	memcpy(resp->src_ip, req->dst_ip, 16);
	memcpy(resp->dst_ip, req->src_ip, 16);
	memcpy(resp->src_mac, req->dst_mac, 6);
	memcpy(resp->dst_mac, req->src_mac, 6);
}

int main(int argc, char **argv)
{
	static uint8_t frame[ROCE_FRAME_MAX];
	uint64_t base_ns = 1767225600ull * 1000000000ull;
	struct roce_frame_addr req_addr, resp_addr;
	struct roce_pkt pkt;
	unsigned long qps, rounds;
	FILE *out = stdout;
	uint8_t gh[24];
	char *end;

	if (argc < 3 || argc > 4) {
		fprintf(stderr, "usage: gen_qp_trace QPS ROUNDS [OUT.pcap]\n");
		return 2;
	}
	errno = 0;
	qps = strtoul(argv[1], &end, 10);
	if (errno || *end || qps == 0 || qps > 0x7fffff) {
		fprintf(stderr, "gen_qp_trace: QPS must be 1..8388607\n");
		return 2;
	}
	rounds = strtoul(argv[2], &end, 10);
	if (errno || *end || rounds == 0 || rounds > 1000000) {
		fprintf(stderr, "gen_qp_trace: ROUNDS must be 1..1000000\n");
		return 2;
	}
	if (argc == 4 && strcmp(argv[3], "-")) {
		out = fopen(argv[3], "wb");
		if (!out) {
			fprintf(stderr, "gen_qp_trace: %s: %s\n", argv[3], strerror(errno));
			return 1;
		}
	}
	/* pcap global header, nanosecond magic, LINKTYPE_ETHERNET */
	put_le32(gh, 0xa1b23c4d);
	gh[4] = 2, gh[5] = 0, gh[6] = 4, gh[7] = 0;
	put_le32(gh + 8, 0);
	put_le32(gh + 12, 0);
	put_le32(gh + 16, 65535);
	put_le32(gh + 20, 1);
	if (fwrite(gh, 1, sizeof(gh), out) != sizeof(gh))
		goto write_error;

	for (unsigned long r = 0; r < rounds; r++) {
		uint64_t round_ns = base_ns + r * (qps * REQ_GAP_NS + ACK_DELAY_NS + ROUND_GAP_NS);

		for (int ack = 0; ack < 2; ack++) {
			for (uint32_t i = 0; i < qps; i++) {
				uint64_t ts = round_ns + i * REQ_GAP_NS + (ack ? ACK_DELAY_NS + qps * REQ_GAP_NS : 0);
				size_t len;

				qp_addrs(i, &req_addr, &resp_addr);
				memset(&pkt, 0, sizeof(pkt));
				pkt.psn = (uint32_t)((i * 64u + r) & 0xffffff);
				pkt.pkey = 0xffff;
				if (!ack) {
					pkt.opcode = ROCE_OPCODE(ROCE_TR_RC, ROCE_OP_WRITE_ONLY);
					pkt.flags = ROCE_F_ACK_REQ;
					pkt.dest_qp = 0x800000 + i;
					pkt.reth_dma_len = PAYLOAD_BYTES;
					pkt.payload_len = PAYLOAD_BYTES;
					len = roce_frame_build(frame, sizeof(frame), &req_addr, &pkt, NULL, false);
				} else {
					pkt.opcode = ROCE_OPCODE(ROCE_TR_RC, ROCE_OP_ACK);
					pkt.dest_qp = i + 16;
					pkt.aeth_syndrome = 0x1f; /* ACK, credits invalid */
					pkt.aeth_msn = (uint32_t)(r + 1);
					len = roce_frame_build(frame, sizeof(frame), &resp_addr, &pkt, NULL, false);
				}
				if (!len || write_frame(out, ts, frame, len))
					goto write_error;
			}
		}
	}
	if (fflush(out) || (out != stdout && fclose(out)))
		goto write_error;
	return 0;
write_error:
	fprintf(stderr, "gen_qp_trace: write: %s\n", strerror(errno ? errno : EIO));
	return 1;
}
