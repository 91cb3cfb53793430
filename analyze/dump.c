/* dump.c: agentxdp-analyze --dump, one line per RoCE packet (like tshark's summary) and a count line. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "analyze/analyze_opts.h"
#include "lib/util/log.h"
#include "lib/decode/roce_decode.h"
#include "lib/trace/trace_reader.h"
#include "lib/util/util.h"

#define DUMP_STDOUT_BUF (1 << 16)

struct dump_counts {
	uint64_t roce;
	uint64_t ib;			/* of them, native InfiniBand */
	uint64_t other;
	uint64_t malformed[1 - ROCE_DECODE_STATUS_MIN]; /* by -status */
};

/* The header-specific part of a line: what an SRE needs to follow a QP. */
static void print_ext_fields(FILE *out, const struct roce_pkt *p)
{
	if (p->headers & ROCE_H_DETH)
		fprintf(out, " qkey=0x%08" PRIx32 " srcqp=0x%06" PRIx32, p->deth_qkey, p->deth_src_qp);
	if (p->headers & ROCE_H_XRCETH)
		fprintf(out, " xrcsrq=0x%06" PRIx32, p->xrc_srq);
	if (p->headers & ROCE_H_RETH)
		fprintf(out, " va=0x%016" PRIx64 " rkey=0x%08" PRIx32 " dmalen=%" PRIu32, p->reth_va,
			p->reth_rkey, p->reth_dma_len);
	if (p->headers & ROCE_H_ATOMICETH)
		fprintf(out, " va=0x%016" PRIx64 " rkey=0x%08" PRIx32 " swap_add=0x%" PRIx64
			     " compare=0x%" PRIx64,
			p->atomic_va, p->atomic_rkey, p->atomic_swap_add, p->atomic_compare);
	if (p->headers & ROCE_H_AETH)
		fprintf(out, " %s syndrome=0x%02x msn=%" PRIu32, roce_aeth_name(p->aeth_syndrome),
			p->aeth_syndrome, p->aeth_msn);
	if (p->headers & ROCE_H_ATOMICACKETH)
		fprintf(out, " orig=0x%" PRIx64, p->atomic_orig);
	if (p->headers & ROCE_H_IMMDT)
		fprintf(out, " imm=0x%08" PRIx32, p->imm_data);
	if (p->headers & ROCE_H_IETH)
		fprintf(out, " inv_rkey=0x%08" PRIx32, p->ieth_rkey);
	if (p->flags & ROCE_F_CM) {
		fprintf(out, " CM %s comm_id=0x%08" PRIx32, roce_cm_attr_name(p->cm_attr_id),
			p->cm_local_comm_id);
		if (p->cm_attr_id == CM_ATTR_REQ || p->cm_attr_id == CM_ATTR_REP)
			fprintf(out, " qpn=0x%06" PRIx32 " start_psn=%" PRIu32, p->cm_local_qpn,
				p->cm_start_psn);
		if (p->cm_attr_id == CM_ATTR_REJ)
			fprintf(out, " reason=%u", p->cm_rej_reason);
	} else if (p->headers & ROCE_H_MAD) {
		fprintf(out, " MAD class=0x%02x attr=0x%04x", p->mad_mgmt_class, p->mad_attr_id);
	}
	fprintf(out, " payload=%" PRIu32, p->payload_len);
	if (p->ecn == 3)
		fputs(" ECN-CE", out);
	if (p->becn)
		fputs(" BECN", out);
	if (p->flags & ROCE_F_TRUNCATED)
		fputs(" [truncated]", out);
	if (p->flags & ROCE_F_VENDOR_OPCODE)
		fputs(" [vendor opcode]", out);
	if (p->flags & ROCE_F_RESERVED_OPCODE)
		fputs(" [reserved opcode]", out);
}

/*
 * The mirror session that delivered a tunnelled packet, last on its line so that a plain
 * trace's lines and its mirrored copy's differ only by it: " via erspan2 sid 3 from
 * 10.255.1.1" (ERSPAN session ID, VXLAN VNI, GRE key; ERSPAN I carries no ID).
 */
static void print_session(FILE *out, const struct roce_pkt *p)
{
	static const char *const id_word[ROCE_ENCAP_MAX + 1] = {
		[ROCE_ENCAP_ERSPAN2] = "sid", [ROCE_ENCAP_ERSPAN3] = "sid",
		[ROCE_ENCAP_GRE_TEB] = "key", [ROCE_ENCAP_VXLAN] = "vni",
	};
	char ip[64];

	if (p->encap == ROCE_ENCAP_NONE)
		return;
	fprintf(out, " via %s", roce_encap_name(p->encap));
	if (p->encap <= ROCE_ENCAP_MAX && id_word[p->encap])
		fprintf(out, " %s %" PRIu32, id_word[p->encap], p->encap_id);
	fprintf(out, " from %s", addr_str(p->encap_src_ip, ip, sizeof(ip)));
}

/* The time column, as tcpdump's -t letters choose it; prev_ns is the previous packet shown. */
static void print_time(FILE *out, enum dump_time how, uint64_t ts_ns, uint64_t t0_ns, uint64_t prev_ns)
{
	uint64_t t = ts_ns;
	time_t sec;
	struct tm tm;
	char date[32];

	switch (how) {
	case DUMP_TIME_NONE:
		return;
	case DUMP_TIME_DATE:
		sec = (time_t)(ts_ns / 1000000000u);
		if (localtime_r(&sec, &tm) && strftime(date, sizeof(date), "%Y-%m-%d %H:%M:%S", &tm)) {
			fprintf(out, "%s.%09" PRIu64 " ", date, ts_ns % 1000000000u);
			return;
		}
		break; /* a time localtime cannot show: seconds since the epoch */
	case DUMP_TIME_DELTA:
		t = ts_ns >= prev_ns ? ts_ns - prev_ns : 0;
		break;
	case DUMP_TIME_SINCE_FIRST:
		t = ts_ns >= t0_ns ? ts_ns - t0_ns : 0;
		break;
	case DUMP_TIME_EPOCH:
		break;
	}
	fprintf(out, "%" PRIu64 ".%09" PRIu64 " ", t / 1000000000u, t % 1000000000u);
}

static void print_packet(FILE *out, const struct trace_frame *f, const struct analyze_opts *opts,
			 uint64_t t0_ns, uint64_t prev_ns, const struct roce_pkt *p)
{
	char src[64], dst[64];

	if (opts->n_traces > 1)
		fprintf(out, "%d:", f->trace_index);
	fprintf(out, "%" PRIu64 " ", f->frame_number);
	print_time(out, opts->dump_time, p->ts_ns, t0_ns, prev_ns);
	/* Native InfiniBand: "LID 4" without a GRH (addr_str), else the GIDs; the LRH beside. */
	fprintf(out, "%s -> %s %s", addr_str(p->src_ip, src, sizeof(src)),
		addr_str(p->dst_ip, dst, sizeof(dst)),
		p->roce_version == 2 ? "RoCEv2" : p->roce_version == 1 ? "RoCEv1" : "IB");
	if (p->roce_version == 2)
		fprintf(out, " sport=%u", p->udp_sport);
	if (p->roce_version == 0)
		fprintf(out, " slid=%u dlid=%u sl=%u vl=%u", p->ib_slid, p->ib_dlid, p->ib_sl, p->ib_vl);
	fprintf(out, " len=%" PRIu32 " %s QP=0x%06" PRIx32 " PSN=%" PRIu32 "%s", p->orig_len,
		roce_opcode_name(p->opcode), p->dest_qp, p->psn,
		(p->flags & ROCE_F_ACK_REQ) ? " A" : "");
	print_ext_fields(out, p);
	print_session(out, p);
	fputc('\n', out);
}

static void print_counts(const struct dump_counts *c)
{
	char detail[256] = "";
	size_t used = 0;
	uint64_t malformed = 0;

	for (int s = -1; s >= ROCE_DECODE_STATUS_MIN; s--) {
		uint64_t n = c->malformed[-s];
		if (!n)
			continue;
		malformed += n;
		used += (size_t)snprintf(detail + used, used < sizeof(detail) ? sizeof(detail) - used : 0,
					 "%s%s %" PRIu64, used ? ", " : " (", roce_decode_status_name(s), n);
	}
	if (used && used < sizeof(detail) - 1)
		strcat(detail, ")");
	/* Say InfiniBand for ibdump's files, RoCE for Ethernet ones, both when both were read. */
	if (c->ib && c->ib < c->roce)
		pr_info("%" PRIu64 " InfiniBand packets, %" PRIu64 " RoCE packets, %" PRIu64
			" other packets, %" PRIu64 " malformed%s\n",
			c->ib, c->roce - c->ib, c->other, malformed, detail);
	else
		pr_info("%" PRIu64 " %s packets, %" PRIu64 " other packets, %" PRIu64 " malformed%s\n",
			c->roce, c->ib ? "InfiniBand" : "RoCE", c->other, malformed, detail);
}

int dump_traces(const struct analyze_opts *opts)
{
	static char stdout_buf[DUMP_STDOUT_BUF];
	struct roce_decode_opts dopts;
	struct trace_reader *tr = NULL;
	struct dump_counts counts = { 0 };
	struct trace_frame frame;
	struct roce_pkt pkt;
	char err[512];
	uint64_t t0_ns = 0, prev_ns = 0, selected = 0;
	bool have_t0 = false;
	int status = 0, rc;

	roce_decode_opts_default(&dopts);
	for (int i = 0; i < opts->n_extra_ports && i + 1 < (int)(sizeof(dopts.udp_ports) / 2); i++)
		dopts.udp_ports[i + 1] = opts->extra_ports[i];
	if (opts->vxlan_port)
		dopts.vxlan_port = opts->vxlan_port;

	if (trace_reader_open(&tr, opts->traces, opts->n_traces, err, sizeof(err))) {
		pr_err("%s\n", err);
		return 1;
	}
	setvbuf(stdout, stdout_buf, _IOFBF, sizeof(stdout_buf));
	while ((rc = trace_reader_next(tr, &frame)) != 0) {
		if (rc < 0) {
			/* Keep what was read: the other inputs still deliver their frames. */
			pr_err("%s\n", trace_reader_error(tr));
			status = 1;
			continue;
		}
		rc = analyze_select_link(opts, &frame);
		if (rc <= 0) {
			if (rc < 0)
				status = 1;
			continue;
		}
		rc = roce_decode_frame(&dopts, frame.linktype, frame.data, frame.caplen, frame.origlen,
				       frame.ts_ns, &pkt);
		if (!analyze_select_qp(opts, rc, &pkt))
			continue;
		/* Times count from the first frame selected, as in tcpdump's output of the same;
		 * pkt.ts_ns is the frame's, or an ERF record's own nanosecond time. */
		if (!have_t0) {
			t0_ns = prev_ns = pkt.ts_ns;
			have_t0 = true;
		}
		selected++;
		if (rc == ROCE_DECODE_OK) {
			counts.roce++;
			counts.ib += pkt.roce_version == 0;
			print_packet(stdout, &frame, opts, t0_ns, prev_ns, &pkt);
			prev_ns = pkt.ts_ns;
		} else if (rc > 0) {
			counts.other++;
		} else {
			counts.malformed[-rc]++;
			pr_debug("frame %" PRIu64 " of %s: malformed (%s)\n", frame.frame_number,
				 trace_reader_path(tr, frame.trace_index), roce_decode_status_name(rc));
		}
		if (opts->max_frames && selected == opts->max_frames)
			break; /* -c */
	}
	if (fflush(stdout) == EOF) {
		pr_err("writing the dump: %s\n", strerror(errno));
		status = 1;
	}
	for (int i = 0; i < trace_reader_count(tr); i++) {
		const struct trace_health *h = trace_reader_health(tr, i);
		if (h->has_drop_counters && h->capture_dropped)
			pr_warn("%s: the capture itself dropped %" PRIu64 " packets\n",
				trace_reader_path(tr, i), h->capture_dropped);
	}
	print_counts(&counts);
	trace_reader_close(tr);
	return status;
}
