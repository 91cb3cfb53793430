/*
 * gen_roce_pcap.c: write a known mix of RoCE frames (v2 over IPv4/IPv6, 802.1Q, QinQ, RoCE v1,
 * every header sequence class) plus non-RoCE noise to a pcap, for the capture end-to-end tests.
 * Usage: gen_roce_pcap OUT.pcap COUNT [PAYLOAD_BYTES] [NOISE_EVERY]
 *   COUNT frames in all; every NOISE_EVERY-th (default 5, 0 = none) is UDP to port 4790.
 */
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/util/parse_num.h"
#include "tests/bpf/roce_frames.h"

static const uint8_t opcodes[] = {
	0x04, 0x11, 0x06, 0x07, 0x08, 0x11, 0x0a, 0x0c, 0x0d, 0x0e, 0x0f, 0x10,
	0x0b, 0x05, 0x03, 0x13, 0x12, 0x81, 0x64, 0x24, 0x2a, 0x17, 0xa4, 0x65,
};

int main(int argc, char **argv)
{
	uint64_t count, payload = 64, noise_every = 5;
	struct roce_frame_spec s;
	pcap_dumper_t *dumper;
	uint8_t frame[16384];
	pcap_t *dead;

	if (argc < 3 || parse_u64(argv[2], 1, 100000000, &count) ||
	    (argc > 3 && parse_u64(argv[3], 0, 9000, &payload)) ||
	    (argc > 4 && parse_u64(argv[4], 0, 1000000, &noise_every))) {
		fprintf(stderr, "usage: gen_roce_pcap OUT.pcap COUNT [PAYLOAD_BYTES] [NOISE_EVERY]\n");
		return 2;
	}
	dead = pcap_open_dead_with_tstamp_precision(DLT_EN10MB, 65535, PCAP_TSTAMP_PRECISION_NANO);
	dumper = dead ? pcap_dump_open(dead, argv[1]) : NULL;
	if (!dumper) {
		fprintf(stderr, "gen_roce_pcap: cannot write %s: %s\n", argv[1], dead ? pcap_geterr(dead) : "");
		return 1;
	}
	for (uint64_t i = 0; i < count; i++) {
		struct pcap_pkthdr h;
		size_t len;

		roce_frame_default(&s);
		s.opcode = opcodes[i % sizeof(opcodes)];
		s.dest_qp = 0x10 + (uint32_t)(i % 7);
		s.psn = (uint32_t)(0xfffff0 + i) & 0xffffff; /* wraps past 2^24 */
		s.udp_sport = (uint16_t)(49152 + i % 64);
		s.payload_bytes = (uint32_t)payload;
		s.seed = (uint8_t)i;
		switch (i / sizeof(opcodes) % 5) {
		case 1:
			s.ip_version = 6;
			memcpy(s.src_ip, "\xfd\x99\0\0\0\0\0\0\0\0\0\0\0\0\0\x01", 16);
			memcpy(s.dst_ip, "\xfd\x99\0\0\0\0\0\0\0\0\0\0\0\0\0\x02", 16);
			break;
		case 2:
			s.n_vlan = 1;
			break;
		case 3:
			s.n_vlan = 2;
			s.ip_version = 6;
			break;
		case 4:
			s.roce_version = 1;
			break;
		}
		if (s.opcode == 0x64)
			s.dest_qp = 1; /* UD to QP1: a CM MAD */
		if (noise_every && i % noise_every == noise_every - 1) {
			s.roce_version = 2; /* noise: UDP to port 4790, not RoCE */
			s.udp_dport = 4790;
		}
		len = roce_frame_build(&s, frame, sizeof(frame));
		if (!len) {
			fprintf(stderr, "gen_roce_pcap: frame too large\n");
			return 1;
		}
		h.ts.tv_sec = 1700000000 + (time_t)(i / 1000000);
		h.ts.tv_usec = (suseconds_t)(i % 1000000) * 1000; /* ns precision file: 1 us apart */
		h.caplen = h.len = (bpf_u_int32)len;
		pcap_dump((u_char *)dumper, &h, frame);
	}
	pcap_dump_close(dumper);
	pcap_close(dead);
	return 0;
}
