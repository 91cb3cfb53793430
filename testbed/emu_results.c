/* emu_results.c: agentxdp-roce-emu's output: perftest's header and result tables, and the STATS line. */
#include <arpa/inet.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "lib/decode/roce_pkt.h"
#include "testbed/roce_emu.h"

const char *emu_op_name(enum emu_op op)
{
	static const char *const names[] = { "RDMA_Write", "RDMA_Read", "Send" };
	return (unsigned)op < 3 ? names[op] : "?";
}

/* ---- results ---- */

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static double pct_us(const uint64_t *sorted, size_t n, double pct)
{
	size_t idx;

	if (n == 0)
		return 0;
	idx = (size_t)ceil(pct / 100.0 * (double)n);
	if (idx > 0)
		idx--;
	if (idx >= n)
		idx = n - 1;
	return (double)sorted[idx] / 1000.0;
}

static const char *const dash_line =
	"---------------------------------------------------------------------------------------\n";

void print_header(struct emu_session *s)
{
	const struct emu_config *c = s->cfg;
	char la[INET6_ADDRSTRLEN], pa[INET6_ADDRSTRLEN];

	printf("%s", dash_line);
	printf("                    %s %s Test (agentxdp-roce-emu: RoCE v2 over UDP sockets)\n",
	       emu_op_name(c->op), c->lat_mode ? "Latency" : "BW");
	printf(" Number of qps   : %u\t\tTransport type : IB (emulated)\n", c->qps);
	printf(" Connection type : RC\t\tUsing SRQ      : OFF\n");
	printf(" TX depth        : %u\t\tMtu            : %u[B]\n", c->lat_mode ? 1 : c->depth, c->mtu);
	printf(" Link type       : Ethernet (RoCE v2, UDP port %d)\n", ROCE_V2_UDP_PORT);
	printf(" ECN             : %s\t\tDSCP           : %u\n", c->ecn ? "ECT(0)" : "Not-ECT", c->dscp);
	printf("%s", dash_line);
	addr_text(&s->local, la, sizeof(la));
	addr_text(&s->peer, pa, sizeof(pa));
	for (uint32_t i = 0; i < s->nqps; i++) {
		const struct emu_qp *qp = &s->qps[i];
		if (qp->is_requester)
			printf(" local address: IP %s QPN %#06x PSN %#08x UDP sport %u -> remote IP %s QPN %#06x\n",
			       la, qp->qpn, qp->start_psn, qp->path.sport, pa, qp->dest_qpn);
		else
			printf(" local address: IP %s QPN %#06x (responder) UDP sport %u <- remote IP %s QPN %#06x\n",
			       la, qp->qpn, qp->path.sport, pa, qp->dest_qpn);
	}
	printf("%s", dash_line);
	fflush(stdout);
}

/* What one side did, summed over its QPs (rc_model's counters plus the emulator's). */
struct emu_totals {
	uint64_t ops_posted, ops_completed, ops_failed, bytes_completed;
	uint64_t req_pkts, retransmitted, timeouts, acks_received, naks_received, rnr_naks_received;
	uint64_t read_resp_received, cnps_received;
	uint64_t rsp_ops_received, dup_pkts, out_of_seq, acks_sent, naks_sent, resp_pkts_sent;
	uint64_t ce_received, cnps_sent;
};

int print_results(struct emu_session *s, const char *side)
{
	const struct emu_config *c = s->cfg;
	struct emu_totals t = { 0 };
	uint32_t failed = 0, nreq = 0;
	struct emu_lat *lat = &s->lat;
	uint64_t end_ns = lat->last_ns > s->start_ns ? lat->last_ns : mono_ns();
	double secs = (double)(end_ns - s->start_ns) / 1e9, peak = 0, avg, rate;
	uint64_t full_bins;

	for (uint32_t i = 0; i < s->nqps; i++) {
		const struct emu_qp *qp = &s->qps[i];
		const struct rc_qp_stats *x = rc_qp_get_stats(qp->rc);
		if (qp->is_requester) {
			nreq++;
			t.ops_posted += qp->ops_posted;
			t.ops_completed += qp->ops_completed;
			t.ops_failed += qp->ops_failed;
			t.bytes_completed += qp->bytes_completed;
			t.req_pkts += x->req_packets;
			t.retransmitted += x->retransmitted_packets;
			t.timeouts += x->timeouts;
			t.acks_received += x->acks_received;
			t.naks_received += x->naks_seq_received + x->naks_other_received;
			t.rnr_naks_received += x->rnr_naks_received;
			t.read_resp_received += qp->read_resp_received;
			t.cnps_received += x->cnps_received;
			if (x->retry_exceeded) {
				failed++;
				printf(" Completion with error: transport retry counter exceeded (QP %#06x, %llu timeouts)\n",
				       qp->qpn, (unsigned long long)x->timeouts);
			}
		} else {
			t.rsp_ops_received += qp->last_msn;
			t.dup_pkts += x->duplicates_received;
			t.out_of_seq += x->out_of_sequence_received;
			t.acks_sent += x->acks_sent;
			t.naks_sent += x->naks_seq_sent + x->naks_other_sent + x->rnr_naks_sent;
			t.resp_pkts_sent += x->resp_packets;
			t.ce_received += qp->ce_received;
			t.cnps_sent += x->cnps_sent;
		}
	}
	if (nreq) {
		avg = secs > 0 ? (double)t.bytes_completed / secs / 1048576.0 : 0;
		rate = secs > 0 ? (double)t.ops_completed / secs / 1e6 : 0;
		/* Peak over the full 100 ms bins (the last one is partial). */
		full_bins = (end_ns - s->start_ns) / EMU_BIN_NS;
		for (uint64_t b = 0; b < full_bins && b < EMU_MAX_BINS; b++) {
			double bw = (double)lat->bin_bytes[b] / (EMU_BIN_NS / 1e9) / 1048576.0;
			if (bw > peak)
				peak = bw;
		}
		if (full_bins == 0)
			peak = avg;
		printf(" #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]\n");
		printf(" %-10u %-16llu %-18.2f %-20.2f %.6f\n", c->size_bytes,
		       (unsigned long long)t.ops_completed, peak, avg, rate);
		printf("%s", dash_line);
		qsort(lat->samples_ns, lat->n, sizeof(uint64_t), cmp_u64);
		double n = (double)(lat->n + lat->dropped);
		double mean = n > 0 ? lat->sum_ns / n : 0;
		double var = n > 1 ? (lat->sum_sq_ns - n * mean * mean) / (n - 1) : 0;
		printf(" #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    t_stdev[usec]   99%% percentile[usec]   99.9%% percentile[usec]\n");
		printf(" %-6u %-14llu %-14.2f %-12.2f %-18.2f %-14.2f %-15.2f %-22.2f %.2f\n", c->size_bytes,
		       (unsigned long long)t.ops_completed, lat->n ? (double)lat->samples_ns[0] / 1000 : 0,
		       lat->n ? (double)lat->samples_ns[lat->n - 1] / 1000 : 0,
		       pct_us(lat->samples_ns, lat->n, 50), mean / 1000, var > 0 ? sqrt(var) / 1000 : 0,
		       pct_us(lat->samples_ns, lat->n, 99), pct_us(lat->samples_ns, lat->n, 99.9));
		printf("%s", dash_line);
		if (lat->dropped)
			printf(" note: %llu latency samples beyond the first %zu were counted but not stored\n",
			       (unsigned long long)lat->dropped, lat->n);
	}
	printf("STATS side=%s engine=rc_model op=%s mode=%s size_bytes=%u qps=%u requesters=%u seconds=%.3f "
	       "ops_posted=%llu ops_completed=%llu ops_failed=%llu bytes_completed=%llu req_pkts_sent=%llu "
	       "retransmitted_pkts=%llu timeouts=%llu acks_received=%llu naks_received=%llu "
	       "rnr_naks_received=%llu read_resp_received=%llu cnps_received=%llu failed_qps=%u "
	       "t_p50_us=%.2f t_p99_us=%.2f t_max_us=%.2f "
	       "rsp_ops_received=%llu dup_pkts=%llu out_of_seq=%llu acks_sent=%llu naks_sent=%llu "
	       "resp_pkts_sent=%llu ce_received=%llu cnps_sent=%llu "
	       "malformed=%llu unknown_qpn=%llu local_drops=%llu send_errors=%llu\n",
	       side, emu_op_name(c->op), c->lat_mode ? "lat" : "bw", c->size_bytes, c->qps, nreq, secs,
	       (unsigned long long)t.ops_posted, (unsigned long long)t.ops_completed,
	       (unsigned long long)t.ops_failed, (unsigned long long)t.bytes_completed,
	       (unsigned long long)t.req_pkts, (unsigned long long)t.retransmitted,
	       (unsigned long long)t.timeouts, (unsigned long long)t.acks_received,
	       (unsigned long long)t.naks_received, (unsigned long long)t.rnr_naks_received,
	       (unsigned long long)t.read_resp_received, (unsigned long long)t.cnps_received, failed,
	       pct_us(lat->samples_ns, lat->n, 50), pct_us(lat->samples_ns, lat->n, 99),
	       lat->n ? (double)lat->samples_ns[lat->n - 1] / 1000 : 0,
	       (unsigned long long)t.rsp_ops_received, (unsigned long long)t.dup_pkts,
	       (unsigned long long)t.out_of_seq, (unsigned long long)t.acks_sent,
	       (unsigned long long)t.naks_sent, (unsigned long long)t.resp_pkts_sent,
	       (unsigned long long)t.ce_received, (unsigned long long)t.cnps_sent,
	       (unsigned long long)s->malformed, (unsigned long long)s->unknown_qpn,
	       (unsigned long long)s->local_drops, (unsigned long long)s->send_errors);
	fflush(stdout);
	return failed ? -1 : 0;
}
