/*
 * decode_fields.c: test helper, the decoder's view of every frame as tab-separated fields, in the
 * column order of tests/golden/test_decode_vs_tshark.sh's tshark -T fields call:
 *   frame  opcode  destqp (0x%06x, as tshark)  psn  ackreq  aeth_syndrome  aeth_msn  reth_dmalen  udp_srcport
 * then extra columns: status, roce_version, payload_len, flags (hex), cm attr, cm qpn, cm psn.
 * Absent headers print empty fields, as tshark does. Non-RoCE frames print nothing; malformed
 * frames print "frame<TAB>!status". --count only counts (for the benchmark).
 * --cm prints CM MADs only: frame, attribute ID, local QPN, starting PSN, local comm ID, in the
 * hex forms tshark prints (QPN and PSN for REQ/REP, comm ID where tshark has a field for it).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/util/parse_num.h"
#include "lib/decode/roce_decode.h"
#include "lib/trace/trace_reader.h"

static void print_fields(FILE *out, uint64_t frame_number, const struct roce_pkt *p)
{
	fprintf(out, "%" PRIu64 "\t%u\t0x%06" PRIx32 "\t%" PRIu32 "\t%d\t", frame_number, p->opcode,
		p->dest_qp, p->psn, (p->flags & ROCE_F_ACK_REQ) ? 1 : 0);
	if (p->headers & ROCE_H_AETH)
		fprintf(out, "%u\t%" PRIu32 "\t", p->aeth_syndrome, p->aeth_msn);
	else
		fputs("\t\t", out);
	if (p->headers & ROCE_H_RETH)
		fprintf(out, "%" PRIu32, p->reth_dma_len);
	fputc('\t', out);
	if (p->roce_version == 2)
		fprintf(out, "%u", p->udp_sport);
	fprintf(out, "\tok\t%u\t%" PRIu32 "\t0x%x\t", p->roce_version, p->payload_len, p->flags);
	if (p->flags & ROCE_F_CM)
		fprintf(out, "%u\t%" PRIu32 "\t%" PRIu32, p->cm_attr_id, p->cm_local_qpn,
			p->cm_start_psn);
	else
		fputs("\t\t", out);
	fputc('\n', out);
}

static void print_cm(FILE *out, uint64_t frame_number, const struct roce_pkt *p)
{
	uint16_t a = p->cm_attr_id;

	if (!(p->flags & ROCE_F_CM))
		return;
	fprintf(out, "%" PRIu64 "\t0x%04x\t", frame_number, a);
	if (a == CM_ATTR_REQ || a == CM_ATTR_REP)
		fprintf(out, "0x%06" PRIx32 "\t0x%06" PRIx32, p->cm_local_qpn, p->cm_start_psn);
	else
		fputc('\t', out);
	fputc('\t', out);
	if (a == CM_ATTR_REQ || a == CM_ATTR_REP || a == CM_ATTR_RTU || a == CM_ATTR_REJ ||
	    a == CM_ATTR_DREQ)
		fprintf(out, "0x%08" PRIx32, p->cm_local_comm_id);
	fputc('\n', out);
}

int main(int argc, char **argv)
{
	static char buf[1 << 16];
	struct roce_decode_opts opts;
	struct trace_reader *tr;
	struct trace_frame f;
	struct roce_pkt pkt;
	uint64_t counts[3] = { 0 }; /* roce, other, malformed */
	int nports = 1, first = 1, count_only = 0, cm_only = 0, status = 0, rc;
	char err[512];

	roce_decode_opts_default(&opts);
	while (first < argc && argv[first][0] == '-' && argv[first][1] == '-') {
		uint64_t v;
		if (!strcmp(argv[first], "--count")) {
			count_only = 1;
			first++;
		} else if (!strcmp(argv[first], "--cm")) {
			cm_only = 1;
			first++;
		} else if (!strcmp(argv[first], "--port") && first + 1 < argc &&
			   !parse_u64(argv[first + 1], 1, 65535, &v) && nports < 8) {
			opts.udp_ports[nports++] = (uint16_t)v;
			first += 2;
		} else {
			fprintf(stderr, "usage: decode_fields [--count|--cm] [--port N]... TRACE...\n");
			return 2;
		}
	}
	if (first >= argc) {
		fprintf(stderr, "usage: decode_fields [--count|--cm] [--port N]... TRACE...\n");
		return 2;
	}
	if (trace_reader_open(&tr, (const char *const *)&argv[first], argc - first, err, sizeof(err))) {
		fprintf(stderr, "decode_fields: %s\n", err);
		return 1;
	}
	setvbuf(stdout, buf, _IOFBF, sizeof(buf));
	while ((rc = trace_reader_next(tr, &f)) != 0) {
		if (rc < 0) {
			fprintf(stderr, "decode_fields: %s\n", trace_reader_error(tr));
			status = 1;
			continue;
		}
		rc = roce_decode_frame(&opts, f.linktype, f.data, f.caplen, f.origlen, f.ts_ns, &pkt);
		if (rc == ROCE_DECODE_OK) {
			counts[0]++;
			if (cm_only)
				print_cm(stdout, f.frame_number, &pkt);
			else if (!count_only)
				print_fields(stdout, f.frame_number, &pkt);
		} else if (rc > 0) {
			counts[1]++;
		} else {
			counts[2]++;
			if (!count_only && !cm_only)
				printf("%" PRIu64 "\t!%s\n", f.frame_number, roce_decode_status_name(rc));
		}
	}
	fflush(stdout);
	fprintf(stderr, "decode_fields: %" PRIu64 " roce, %" PRIu64 " other, %" PRIu64 " malformed\n",
		counts[0], counts[1], counts[2]);
	trace_reader_close(tr);
	return status;
}
