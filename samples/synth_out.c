/* synth_out.c: agentxdp-synth's outputs: traces per vantage point, ground truth (truth.json), links.csv, paths.csv. */
#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/util/byte_reader.h"
#include "lib/util/log.h"
#include "lib/decode/psn.h"
#include "lib/decode/roce_decode.h"
#include "lib/trace/pcapng_writer.h"
#include "lib/model/roce_frame.h"
#include "lib/util/util.h"
#include "samples/synth_sim.h"


#define PSN_RING 2048u	/* PSNs remembered per requester flow (window + READ spans fit) */

struct psn_slot {
	uint64_t first_ts;	/* first transmission, trace time */
	uint32_t psn;
	uint16_t count;		/* transmissions seen */
	uint8_t acked;		/* an ACK named it already */
	uint8_t valid;
};

/* One flow as one vantage saw it: the ground truth the analyzer must reproduce. */
struct vflow {
	uint64_t packets, bytes, first_ns, last_ns;
	uint64_t first_tx, retx, naks_seq, naks_other, rnr_naks, timeouts, cnps, ecn_ce;
	uint64_t *samples;
	uint32_t n_samples;
	size_t cap_samples;
	struct psn_slot *ring;
};

struct vantage {
	char name[64];
	char file[2048];	/* path written */
	char file_rel[512];	/* as named in truth.json (relative to the output directory) */
	int host;		/* -1 = mirror */
	struct pcapng_writer *ng;
	struct pcap_writer *pc;
	struct vflow *flows;	/* qp_id * 2 + side */
	uint64_t packets, first_ns, last_ns;
};

/* The collector's clock (--collector-*): its own stream, so the incident is the plain one's. */
static struct rng collector_rng;

static char out_dir[1024];
static char trace_stem[200];
static const char *trace_ext;

#define IB_LRH_LEN 8
#define IB_VCRC_LEN 2
#define LINKTYPE_INFINIBAND 247

uint32_t synth_frame_len(const struct sim *s, const struct roce_pkt *pkt)
{
	uint32_t pay = pkt->opcode == ROCE_OPCODE_CNP ? 0 : pkt->payload_len;
	uint32_t n = s->o->link_ib ? IB_LRH_LEN + IB_VCRC_LEN + 12
				   : 14 + (s->o->vlan ? 4 : 0) + (s->o->ipv6 ? 40 : 20) + 8 + 12;
	return n + (uint32_t)roce_ext_header_bytes(pkt->opcode) + pay + ((4 - (pay & 3)) & 3) + 4;
}

static bool is_request_op(uint8_t op)
{
	return op <= ROCE_OP_READ_REQUEST || op == ROCE_OP_CMP_SWAP || op == ROCE_OP_FETCH_ADD ||
	       op == ROCE_OP_SEND_LAST_INV || op == ROCE_OP_SEND_ONLY_INV;
}

/* Out of memory sets s->oom: the truth would be short of a sample, so the run fails. */
static void add_sample(struct sim *s, struct vflow *f, uint64_t v)
{
	if (util_ensure_mem_max((void **)&f->samples, &f->cap_samples, sizeof(*f->samples),
				(size_t)f->n_samples + 1, UINT32_MAX)) {
		s->oom = true;
		return;
	}
	f->samples[f->n_samples++] = v;
}

/* Ground truth for one packet as vantage `v` records it at trace time `ts`. */
static void truth_packet(struct sim *s, struct vantage *v, const struct flight *fl,
			 const struct flight_pkt *fp, uint64_t ts)
{
	const struct qp *q = &s->qps[fl->qp];
	struct vflow *f = &v->flows[fl->qp * 2 + fl->side];
	const struct roce_pkt *p = &fp->pkt;
	uint8_t op = p->opcode & 0x1f;

	if (!f->packets)
		f->first_ns = ts;
	f->packets++;
	f->bytes += fl->frame_len;
	f->last_ns = ts;
	if (fl->ecn == 3)
		f->ecn_ce++;
	if (p->opcode == ROCE_OPCODE_CNP) {
		v->flows[fl->qp * 2 + (1 - fl->side)].cnps++;
		return;
	}
	if (q->svc != RC_SVC_RC) {
		if (fl->side == 0)
			f->first_tx++;
		return;
	}
	if (fl->side == 0 && is_request_op(op)) {
		if (!f->ring) {
			f->ring = calloc(PSN_RING, sizeof(*f->ring));
			if (!f->ring) {
				s->oom = true;
				return;
			}
		}
		uint32_t n = 1;
		if (op == ROCE_OP_READ_REQUEST)
			n = p->reth_dma_len ? (p->reth_dma_len + s->o->mtu - 1) / s->o->mtu : 1;
		struct psn_slot *sl = &f->ring[p->psn % PSN_RING];
		bool seen = sl->valid && sl->psn == p->psn;
		if (seen)
			f->retx++;
		else
			f->first_tx++;
		/* A timeout is observable only through the retransmission it causes, and only where
		 * the requester's view is captured: counted when that packet is in this trace and
		 * the vantage is the mirror or the requester's host (docs/ground-truth.md). */
		if (fp->timeout_retx && (v->host < 0 || (uint32_t)v->host == q->host[0]))
			f->timeouts++;
		for (uint32_t i = 0; i < n && i < PSN_RING; i++) {
			uint32_t psn = psn_add(p->psn, i);
			sl = &f->ring[psn % PSN_RING];
			if (sl->valid && sl->psn == psn) {
				if (sl->count < UINT16_MAX)
					sl->count++;
			} else {
				*sl = (struct psn_slot){.first_ts = ts, .psn = psn, .count = 1, .valid = 1};
			}
		}
		return;
	}
	if (fl->side == 1 && (op == ROCE_OP_ACK || op == ROCE_OP_ATOMIC_ACK)) {
		struct vflow *r = &v->flows[fl->qp * 2];
		switch (AETH_TYPE(p->aeth_syndrome)) {
		case AETH_ACK: {
			if (!r->ring)
				break;
			struct psn_slot *sl = &r->ring[p->psn % PSN_RING];
			if (sl->valid && sl->psn == p->psn && !sl->acked) {
				sl->acked = 1;
				if (sl->count == 1 && ts >= sl->first_ts)
					add_sample(s, r, ts - sl->first_ts);
			}
			break;
		}
		case AETH_RNR_NAK:
			r->rnr_naks++;
			break;
		case AETH_NAK:
			if ((p->aeth_syndrome & 0x1f) == NAK_PSN_SEQ_ERROR)
				r->naks_seq++;
			else
				r->naks_other++;
			break;
		default:
			break;
		}
	}
}

static void leaf_mac(uint32_t leaf, uint8_t mac[6])
{
	mac[0] = 0x02;
	mac[1] = mac[2] = 0;
	mac[3] = 0x01;
	mac[4] = (uint8_t)(leaf >> 8);
	mac[5] = (uint8_t)leaf;
}

static bool vantage_sees(const struct vantage *v, const struct flight *fl, uint32_t host,
			 bool arrival)
{
	if (v->host >= 0)
		return (uint32_t)v->host == host;
	/* Mirror: the requester side's packets as they leave, the responder side's as they arrive. */
	return fl->side == 0 ? !arrival : arrival;
}

/*
 * A remote mirror session's headers in front of the frame at `inner` (len bytes): from the
 * switch 10.255.0.1 (--mirror-sessions: the host's leaf, 10.255.LEAF.1) to the collector
 * 10.255.0.100, session (VNI) = vantage index + 1, GRE sequence = the vantage's packet count,
 * ERSPAN III time = the packet's. Returns their length.
 */
static size_t encap_frame(struct sim *s, uint32_t vi, const struct qp *q, uint8_t *inner,
			  size_t len, uint64_t ts)
{
	struct roce_frame_tunnel t = {
		.kind = s->o->encap,
		.src_mac = { 0x02, 0xee, 0, 0, 0, 0x01 },
		.dst_mac = { 0x02, 0xee, 0, 0, 0, 0x64 },
		.src_ip = { 10, 255, 0, 1 },
		.dst_ip = { 10, 255, 0, 100 },
		.session_id = vi + 1,
		.seq = (uint32_t)s->vantages[vi].packets,
		.ts_ns = ts,
		.udp_sport = q->sport,
	};
	size_t hdr = roce_frame_tunnel_hdr_len(t.kind);

	if (s->o->mirror_sessions && s->vantages[vi].host >= 0)
		t.src_ip[2] = (uint8_t)s->hosts[s->vantages[vi].host].leaf;
	return roce_frame_tunnel_hdr(inner - hdr, hdr, &t, len);
}

/*
 * A native InfiniBand packet (--link ib): LRH (IBA 7.7: VL 0, SL 0, LNH 2 = BTH follows,
 * the hosts' LIDs, PktLen in words up to the ICRC), the transport the RoCE builder writes,
 * then the VCRC. ICRC and VCRC are left zero: nothing downstream checks them. Returns the
 * frame length, 0 when it does not fit.
 */
static size_t build_ib_frame(uint8_t *buf, size_t cap, const struct sim *s, const struct qp *q,
			     const struct flight *fl, const struct flight_pkt *fp)
{
	struct roce_pkt pkt = fp->pkt;
	size_t n;

	if (cap < IB_LRH_LEN + IB_VCRC_LEN)
		return 0;
	/* IB congestion marking is the BTH FECN bit (IBA annex A10), not an IP ECN codepoint. */
	if (fl->ecn == 3)
		pkt.fecn = 1;
	n = roce_frame_build_transport(buf + IB_LRH_LEN, cap - IB_LRH_LEN - IB_VCRC_LEN, &pkt, NULL);
	if (!n || (IB_LRH_LEN + n) / 4 > 0x7ff)
		return 0;
	buf[0] = 0x00; /* VL 0, LVer 0 */
	buf[1] = 0x02; /* SL 0, LNH 2 */
	put_be16(buf + 2, (uint16_t)addr_lid(s->hosts[q->host[1 - fl->side]].ip));
	put_be16(buf + 4, (uint16_t)((IB_LRH_LEN + n) / 4));
	put_be16(buf + 6, (uint16_t)addr_lid(s->hosts[q->host[fl->side]].ip));
	memset(buf + IB_LRH_LEN + n, 0, IB_VCRC_LEN);
	return IB_LRH_LEN + n + IB_VCRC_LEN;
}

/*
 * When the collector stamps an ERSPAN III copy of a packet the switch stamped at `ts`: after
 * the mirror path's delay, with normal jitter, by a clock drifting against the switch's.
 */
static uint64_t collector_time(const struct synth_opts *o, uint64_t ts)
{
	double u1 = 1.0 - rng_double(&collector_rng), u2 = rng_double(&collector_rng);
	double gauss = sqrt(-2.0 * log(u1)) * cos(2 * M_PI * u2);
	double t = (double)o->collector_delay_ns + (double)o->collector_jitter_ns * gauss +
		   o->collector_drift_ppm * 1e-6 * (double)(ts - o->start_ns);

	return t < 0 && (uint64_t)-t > ts ? 0 : (uint64_t)((double)ts + t);
}

void synth_record(struct sim *s, uint32_t fi, uint32_t host, bool arrival, uint64_t now)
{
	/* The frame at ROCE_FRAME_TUNNEL_MAX, so a mirror session's headers fit in front. */
	static uint8_t buf[ROCE_FRAME_TUNNEL_MAX + ROCE_FRAME_MAX];
	uint8_t *const inner = buf + ROCE_FRAME_TUNNEL_MAX;
	const struct synth_opts *o = s->o;
	const struct flight *fl = &s->flights[fi];
	const struct flight_pkt *fp = &s->flight_pkts[fi];
	const struct qp *q = &s->qps[fl->qp];
	size_t len = 0;
	uint64_t ts = o->start_ns + now;

	for (uint32_t vi = 0; vi < s->n_vantages; vi++) {
		struct vantage *v = &s->vantages[vi];
		if (!vantage_sees(v, fl, host, arrival))
			continue;
		if (!len && o->link_ib) {
			len = build_ib_frame(inner, ROCE_FRAME_MAX, s, q, fl, fp);
			if (!len)
				return;
		}
		if (!len) {
			uint32_t hs = q->host[fl->side], hr = q->host[1 - fl->side];
			struct roce_frame_addr a = {
				.vlan_id = o->vlan,
				.vlan_pcp = 3,
				.ip_version = o->ipv6 ? 6 : 4,
				.dscp = fp->dscp,
				.ecn = fl->ecn,
				.ip_id = fp->ip_id,
				.flow_label = q->flow_label,
				.udp_sport = q->sport,
				.udp_dport = ROCE_V2_UDP_PORT,
			};
			memcpy(a.src_ip, s->hosts[hs].ip, 16);
			memcpy(a.dst_ip, s->hosts[hr].ip, 16);
			if (arrival) {
				leaf_mac(s->hosts[hr].leaf, a.src_mac);
				memcpy(a.dst_mac, s->hosts[hr].mac, 6);
				a.ttl = (uint8_t)(64 - (q->path_len[fl->side] - 1));
			} else {
				memcpy(a.src_mac, s->hosts[hs].mac, 6);
				leaf_mac(s->hosts[hs].leaf, a.dst_mac);
				a.ttl = 64;
			}
			len = roce_frame_build_snap(inner, ROCE_FRAME_MAX, &a, &fp->pkt, NULL, o->snaplen);
			if (!len)
				return;
		}
		const uint8_t *frame = inner;
		size_t frame_len = len;
		uint64_t collected = ts;
		/* --mirror-sessions: every session into the first vantage's trace. */
		struct vantage *w = o->mirror_sessions ? &s->vantages[0] : v;
		if (o->encap) {
			size_t hdr = encap_frame(s, vi, q, inner, len, ts);
			if (!hdr)
				return;
			frame = inner - hdr;
			frame_len = hdr + len;
			if (o->encap == ROCE_ENCAP_ERSPAN3)
				collected = collector_time(o, ts);
		}
		uint32_t caplen = o->snaplen && frame_len > o->snaplen ? o->snaplen : (uint32_t)frame_len;
		int rc;
		if (w->ng) {
			struct pcapng_packet pk = {.if_id = 0, .ts_ns = collected, .data = frame,
						   .caplen = caplen, .origlen = (uint32_t)frame_len};
			if (v->host >= 0) {
				pk.has_flags = true;
				pk.flags = arrival ? PCAPNG_EPB_FLAG_INBOUND : PCAPNG_EPB_FLAG_OUTBOUND;
			}
			rc = pcapng_writer_write_packet(w->ng, &pk);
		} else {
			rc = pcap_writer_write_packet(w->pc, collected, frame, caplen, (uint32_t)frame_len);
		}
		if (rc < 0) {
			pr_err("writing %s: %s\n", v->file, strerror(errno));
			s->write_failed = true;
			return;
		}
		if (!v->packets)
			v->first_ns = ts;
		v->packets++;
		v->last_ns = ts;
		truth_packet(s, v, fl, fp, ts);
		if (++s->packets_written >= o->max_packets && o->max_packets)
			s->stop = true;
	}
}

/* ---- files ---- */

static int mkdir_p(const char *path)
{
	char tmp[1024];
	snprintf(tmp, sizeof(tmp), "%s", path);
	for (char *p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(tmp, 0750) < 0 && errno != EEXIST)
			return -1;
		*p = '/';
	}
	if (mkdir(tmp, 0750) < 0 && errno != EEXIST)
		return -1;
	return 0;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);
	return a >= b && strcmp(s + a - b, suffix) == 0;
}

static void split_output(const struct synth_opts *o)
{
	const char *ext = o->format == FORMAT_PCAP ? ".pcap" : ".pcapng";
	if (ends_with(o->out, ".pcapng") || ends_with(o->out, ".pcap")) {
		const char *slash = strrchr(o->out, '/');
		const char *base = slash ? slash + 1 : o->out;
		if (slash)
			snprintf(out_dir, sizeof(out_dir), "%.*s", (int)(slash - o->out), o->out);
		else
			snprintf(out_dir, sizeof(out_dir), ".");
		if (!out_dir[0])
			snprintf(out_dir, sizeof(out_dir), "/");
		ext = ends_with(base, ".pcapng") ? ".pcapng" : ".pcap";
		snprintf(trace_stem, sizeof(trace_stem), "%.*s", (int)(strlen(base) - strlen(ext)), base);
	} else {
		snprintf(out_dir, sizeof(out_dir), "%s", o->out);
		snprintf(trace_stem, sizeof(trace_stem), "trace");
	}
	trace_ext = ext;
}

static int open_vantage(struct sim *s, struct vantage *v, const char *if_desc)
{
	const struct synth_opts *o = s->o;
	snprintf(v->file, sizeof(v->file), "%s/%s", out_dir, v->file_rel);
	v->flows = calloc((size_t)s->n_qps * 2, sizeof(*v->flows));
	if (!v->flows)
		return -1;
	if (o->mirror_sessions && v != s->vantages)
		return 0; /* written into the first vantage's trace */
	uint32_t snap = o->snaplen ? o->snaplen : 262144;
	if (o->format == FORMAT_PCAP) {
		v->pc = pcap_writer_open(v->file, o->link_ib ? LINKTYPE_INFINIBAND : 1, snap);
		if (!v->pc)
			goto fail;
		return 0;
	}
	struct pcapng_shb_info shb = {.os = "", .application = "agentxdp-synth " AGENTXDP_VERSION,
				      .hardware = "synthetic RoCE v2 fabric"};
	v->ng = pcapng_writer_open(v->file, &shb);
	if (!v->ng)
		goto fail;
	struct pcapng_if_info ifi = {.name = v->name, .description = if_desc,
				     .linktype = o->link_ib ? LINKTYPE_INFINIBAND : 1, .snaplen = snap};
	if (pcapng_writer_add_interface(v->ng, &ifi) < 0)
		goto fail;
	return 0;
fail:
	pr_err("cannot write %s: %s\n", v->file, strerror(errno));
	return -1;
}

static void file_safe(const char *in, char *out, size_t len)
{
	snprintf(out, len, "%s", in);
	for (char *p = out; *p; p++)
		if (*p == ':' || *p == ' ') /* IPv6, "LID 3" */
			*p = '-';
}

int synth_outputs_open(struct sim *s)
{
	const struct synth_opts *o = s->o;
	char desc[256];

	split_output(o);
	if (mkdir_p(out_dir) < 0) {
		pr_err("cannot create output directory %s: %s\n", out_dir, strerror(errno));
		return -1;
	}
	rng_seed(&collector_rng, o->seed ^ 0xc011ec7011ec7ull);
	s->n_vantages = o->vantage == VANTAGE_EACH_HOST ? s->n_hosts : 1;
	s->vantages = calloc(s->n_vantages, sizeof(*s->vantages));
	if (!s->vantages)
		return -1;
	for (uint32_t i = 0; i < s->n_vantages; i++) {
		struct vantage *v = &s->vantages[i];
		if (o->vantage == VANTAGE_MIRROR) {
			v->host = -1;
			snprintf(v->name, sizeof(v->name), "mirror");
			snprintf(desc, sizeof(desc),
				 "agentxdp-synth mirror: requester-side packets as they leave the "
				 "requester NIC, responder-side packets as they reach it");
			snprintf(v->file_rel, sizeof(v->file_rel), "%s%s", trace_stem, trace_ext);
		} else {
			uint32_t h = i;
			if (o->vantage == VANTAGE_HOST)
				for (h = 0; h < s->n_hosts; h++)
					if (memcmp(s->hosts[h].ip, o->vantage_ip, 16) == 0)
						break;
			if (h >= s->n_hosts) {
				pr_err("--vantage host=%s: no such host (hosts are %s .. %s)\n",
				       o->vantage_text, s->hosts[0].name, s->hosts[s->n_hosts - 1].name);
				return -1;
			}
			v->host = (int)h;
			snprintf(v->name, sizeof(v->name), "%s", s->hosts[h].name);
			snprintf(desc, sizeof(desc), "agentxdp-synth capture at host port %s",
				 s->hosts[h].name);
			if (o->vantage == VANTAGE_HOST || o->mirror_sessions) {
				snprintf(v->file_rel, sizeof(v->file_rel), "%s%s", trace_stem, trace_ext);
			} else {
				char safe[48];
				file_safe(s->hosts[h].name, safe, sizeof(safe));
				snprintf(v->file_rel, sizeof(v->file_rel), "%s-%s%s", trace_stem, safe,
					 trace_ext);
			}
		}
		if (open_vantage(s, v, desc) < 0)
			return -1;
	}
	return 0;
}

/* ---- truth.json ---- */

static const struct sim *sort_sim;

static int cmp_flow(const void *pa, const void *pb)
{
	uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
	const struct qp *qa = &sort_sim->qps[a / 2], *qb = &sort_sim->qps[b / 2];
	int sa = (int)(a & 1), sb = (int)(b & 1);
	int c = memcmp(sort_sim->hosts[qa->host[sa]].ip, sort_sim->hosts[qb->host[sb]].ip, 16);
	if (c)
		return c;
	c = memcmp(sort_sim->hosts[qa->host[1 - sa]].ip, sort_sim->hosts[qb->host[1 - sb]].ip, 16);
	if (c)
		return c;
	uint32_t ka = qa->qpn[1 - sa], kb = qb->qpn[1 - sb];
	return ka < kb ? -1 : ka > kb;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static const char *transport_name(enum rc_service svc)
{
	return svc == RC_SVC_UD ? "UD" : svc == RC_SVC_UC ? "UC" : "RC";
}

static const char *op_name(const struct qp *q)
{
	static const char *names[] = {"write", "read", "send", "atomic"};
	return names[q->op];
}

static void json_path(FILE *f, const struct sim *s, const struct qp *q, int side)
{
	fputc('[', f);
	for (uint32_t i = 0; i < q->path_len[side]; i++) {
		if (i)
			fputs(", ", f);
		json_fput_string(f, s->links[q->path[side][i] / 2].name);
	}
	fputc(']', f);
}

static void json_time_or_null(FILE *f, uint64_t start, uint64_t rel, bool present)
{
	if (present)
		fprintf(f, "%llu", (unsigned long long)(start + rel));
	else
		fputs("null", f);
}

static const char *lf_kind_name(enum link_fault_kind k)
{
	static const char *n[] = {"slow", "loss", "ecn", "flap"};
	return n[k];
}

static const char *hf_kind_name(enum host_fault_kind k)
{
	static const char *n[] = {"rnr", "slow-responder", "nic-retransmit"};
	return n[k];
}

static void write_flow(FILE *f, const struct sim *s, uint32_t id, struct vflow *vf, bool first)
{
	const struct qp *q = &s->qps[id / 2];
	int side = (int)(id & 1);
	char src[64], dst[64];
	const char *role = q->svc != RC_SVC_RC ? "datagram" : side == 0 ? "requester" : "responder";

	addr_str(s->hosts[q->host[side]].ip, src, sizeof(src));
	addr_str(s->hosts[q->host[1 - side]].ip, dst, sizeof(dst));
	fprintf(f, "%s\n        {\"src\": \"%s\", \"dst\": \"%s\", \"dst_qpn\": %u, \"qp_id\": %u, "
		   "\"udp_sport\": %u, \"transport\": \"%s\", \"role\": \"%s\",\n",
		first ? "" : ",", src, dst, q->qpn[1 - side], q->id, q->sport, transport_name(q->svc),
		role);
	fprintf(f, "         \"packets\": %llu, \"bytes\": %llu, \"first_ns\": ",
		(unsigned long long)vf->packets, (unsigned long long)vf->bytes);
	json_time_or_null(f, 0, vf->first_ns, vf->packets > 0);
	fputs(", \"last_ns\": ", f);
	json_time_or_null(f, 0, vf->last_ns, vf->packets > 0);
	fprintf(f, ",\n         \"first_transmissions\": %llu, \"retransmitted_packets\": %llu, "
		   "\"naks_psn_seq\": %llu, \"naks_other\": %llu, \"rnr_naks\": %llu, "
		   "\"timeouts\": %llu, \"cnps\": %llu, \"ecn_ce\": %llu,\n",
		(unsigned long long)vf->first_tx, (unsigned long long)vf->retx,
		(unsigned long long)vf->naks_seq, (unsigned long long)vf->naks_other,
		(unsigned long long)vf->rnr_naks, (unsigned long long)vf->timeouts,
		(unsigned long long)vf->cnps, (unsigned long long)vf->ecn_ce);
	fprintf(f, "         \"ack_samples\": %u, ", vf->n_samples);
	if (vf->n_samples) {
		uint32_t n = vf->n_samples;
		qsort(vf->samples, n, sizeof(*vf->samples), cmp_u64);
		uint64_t p50 = vf->samples[(n + 1) / 2 - 1];		/* rank ceil(0.5 n) */
		uint64_t p99 = vf->samples[(99ull * n + 99) / 100 - 1];	/* rank ceil(0.99 n) */
		fprintf(f, "\"ack_latency_p50_ns\": %llu, \"ack_latency_p99_ns\": %llu, "
			   "\"ack_latency_max_ns\": %llu}",
			(unsigned long long)p50, (unsigned long long)p99,
			(unsigned long long)vf->samples[n - 1]);
	} else {
		fputs("\"ack_latency_p50_ns\": null, \"ack_latency_p99_ns\": null, "
		      "\"ack_latency_max_ns\": null}", f);
	}
}

static bool flow_listed(const struct vflow *f)
{
	return f->packets || f->retx || f->naks_seq || f->naks_other || f->rnr_naks || f->timeouts ||
	       f->cnps || f->ecn_ce;
}

/* truth.json, top: the run and the fabric. */
static void write_truth_header(FILE *f, const struct sim *s)
{
	const struct synth_opts *o = s->o;

	fprintf(f, "{\n  \"schema\": \"agentxdp-synth-truth/1\",\n");
	fprintf(f, "  \"generator\": \"agentxdp-synth %s\",\n  \"command\": ", AGENTXDP_VERSION);
	json_fput_string(f, o->command);
	fprintf(f, ",\n  \"seed\": %llu,\n  \"start_ns\": %llu,\n  \"end_ns\": %llu,\n",
		(unsigned long long)o->seed, (unsigned long long)o->start_ns,
		(unsigned long long)(o->start_ns + (s->stop ? s->now : o->duration_ns)));
	fprintf(f, "  \"ip_version\": %d,\n  \"vlan\": %u,\n  \"snaplen\": %u,\n  \"mtu\": %u,\n",
		o->ipv6 ? 6 : 4, o->vlan, o->snaplen, o->mtu);
	fprintf(f, "  \"workload\": \"%s\",\n", synth_workload_name(o->workload));
	if (o->encap)
		fprintf(f, "  \"encap\": \"%s\",\n", roce_encap_name(o->encap));
	if (o->mirror_sessions)
		fprintf(f, "  \"mirror_sessions\": true,\n");
	if (o->encap == ROCE_ENCAP_ERSPAN3)
		fprintf(f, "  \"collector\": {\"delay_ns\": %llu, \"jitter_ns\": %llu, \"drift_ppm\": %g},\n",
			(unsigned long long)o->collector_delay_ns,
			(unsigned long long)o->collector_jitter_ns, o->collector_drift_ppm);
	fprintf(f, "  \"fabric\": {\n    \"hosts\": [");
	for (uint32_t i = 0; i < s->n_hosts; i++)
		fprintf(f, "%s\"%s\"", i ? ", " : "", s->hosts[i].name);
	fprintf(f, "],\n    \"leaves\": %u, \"spines\": %u,\n", o->leaves, o->spines);
	fprintf(f, "    \"host_link_gbps\": %g, \"fabric_link_gbps\": %g,\n", o->host_gbps,
		o->fabric_gbps);
	fprintf(f, "    \"link_latency_ns\": %llu, \"buffer_bytes\": %llu,\n",
		(unsigned long long)o->link_latency_ns, (unsigned long long)o->buffer_bytes);
	fprintf(f, "    \"links\": \"links.csv\", \"paths\": \"paths.csv\"\n  },\n");
}

/* Healthy load shapes (--incast, --ecmp-skew): not faults, but the truth says so. */
static void write_truth_shapes(FILE *f, const struct sim *s)
{
	const struct synth_opts *o = s->o;

	if (o->incast)
		fprintf(f, "  \"incast\": {\"host\": \"%s\", \"factor\": %u},\n", o->incast_text,
			o->incast_factor ? o->incast_factor : SYNTH_INCAST_FACTOR);
	if (o->ecmp_skew > 0)
		fprintf(f, "  \"ecmp_skew\": {\"spine\": \"spine0\", \"share\": %g},\n",
			o->ecmp_skew);
}

/* The link faults, one entry per faulty direction. */
static void write_truth_faults(FILE *f, const struct sim *s)
{
	const struct synth_opts *o = s->o;

	fprintf(f, "  \"faults\": [");
	bool first_fault = true;
	for (int i = 0; i < o->n_faults; i++) {
		const struct link_fault *lf = &s->faults[i];
		const struct link *l = &s->links[lf->link_index];
		for (int d = 0; d < 2; d++) {
			if (!(lf->dir_mask & (1 << d)))
				continue;
			const char *from = d ? l->b : l->a, *to = d ? l->a : l->b;
			fprintf(f, "%s\n    {\"kind\": \"%s\", \"link\": \"%s\", \"dir\": \"%s>%s\", "
				   "\"from\": \"%s\", \"to\": \"%s\", \"size\": ",
				first_fault ? "" : ",",
				lf_kind_name(lf->kind), l->name, from, to, from, to);
			json_fput_string(f, lf->size_text);
			fprintf(f, ", \"extra_latency_ns\": %llu, \"latency_shape\": \"%s\", "
				   "\"loss_rate\": %g, \"ecn_rate\": %g, \"rate_divisor\": %g, "
				   "\"flap_down_ns\": %llu, \"flap_period_ns\": %llu,\n     \"onset_ns\": %llu, "
				   "\"end_ns\": ",
				(unsigned long long)lf->extra_latency_ns,
				lf->queue_like ? "queue" : "constant",
				lf->kind == LF_LOSS ? lf->rate : 0.0, lf->kind == LF_ECN ? lf->rate : 0.0,
				lf->rate_divisor > 1 ? lf->rate_divisor : 1.0,
				(unsigned long long)lf->down_ns, (unsigned long long)lf->period_ns,
				(unsigned long long)(o->start_ns + lf->onset_ns));
			json_time_or_null(f, o->start_ns, lf->end_ns, lf->end_ns != 0);
			fputc('}', f);
			first_fault = false;
		}
	}
	fprintf(f, "%s],\n", o->n_faults ? "\n  " : "");
}

static void write_truth_host_faults(FILE *f, const struct sim *s)
{
	const struct synth_opts *o = s->o;

	fprintf(f, "  \"host_faults\": [");
	for (int i = 0; i < o->n_host_faults; i++) {
		const struct host_fault *hf = &s->host_faults[i];
		fprintf(f, "%s\n    {\"kind\": \"%s\", \"host\": \"%s\", \"size\": ", i ? "," : "",
			hf_kind_name(hf->kind), s->hosts[hf->host_index].name);
		json_fput_string(f, hf->size_text);
		fprintf(f, ", \"size_ns\": %llu, \"onset_ns\": %llu, \"end_ns\": ",
			(unsigned long long)hf->size_ns, (unsigned long long)(o->start_ns + hf->onset_ns));
		json_time_or_null(f, o->start_ns, hf->end_ns, hf->end_ns != 0);
		fputc('}', f);
	}
	fprintf(f, "%s],\n", o->n_host_faults ? "\n  " : "");
}

/* Every QP: its ends, its paths and what the RC model did. */
static void write_truth_qps(FILE *f, const struct sim *s)
{
	fprintf(f, "  \"qps\": [");
	for (uint32_t i = 0; i < s->n_qps; i++) {
		const struct qp *q = &s->qps[i];
		const struct rc_qp_stats *st = rc_qp_get_stats(&s->qpe[i * 2].rc);
		fprintf(f, "%s\n    {\"id\": %u, \"transport\": \"%s\", \"ops\": \"%s\", \"udp_sport\": %u,\n",
			i ? "," : "", q->id, transport_name(q->svc), op_name(q), q->sport);
		fprintf(f, "     \"requester\": \"%s\", \"requester_qpn\": %u, \"requester_first_psn\": %u,\n",
			s->hosts[q->host[0]].name, q->qpn[0], q->psn[0]);
		fprintf(f, "     \"responder\": \"%s\", \"responder_qpn\": %u, \"responder_first_psn\": %u,\n",
			s->hosts[q->host[1]].name, q->qpn[1], q->psn[1]);
		fputs("     \"path\": ", f);
		json_path(f, s, q, 0);
		fputs(",\n     \"reverse_path\": ", f);
		json_path(f, s, q, 1);
		fprintf(f, ",\n     \"messages_posted\": %llu, \"completions\": %llu, "
			   "\"request_packets\": %llu, \"retransmitted_packets\": %llu, \"timeouts\": %llu, "
			   "\"retry_exceeded\": %s, \"dropped_in_fabric\": %llu, \"ce_marked_in_fabric\": %llu}",
			(unsigned long long)q->n_posted, (unsigned long long)st->completions,
			(unsigned long long)st->req_packets, (unsigned long long)st->retransmitted_packets,
			(unsigned long long)st->timeouts, st->retry_exceeded ? "true" : "false",
			(unsigned long long)q->dropped, (unsigned long long)q->ce_marked);
	}
	fprintf(f, "\n  ],\n");
}

/* Link directions that carried, dropped or were faulty. */
static void write_truth_links(FILE *f, const struct sim *s)
{
	fprintf(f, "  \"links\": [");
	bool first = true;
	for (uint32_t d = 0; d < s->n_links * 2; d++) {
		const struct linkdir *ld = &s->ldirs[d];
		const struct link *l = &s->links[d / 2];
		if (!ld->packets && !ld->dropped && !ld->faulty)
			continue;
		fprintf(f, "%s\n    {\"link\": \"%s\", \"dir\": \"%s>%s\", \"packets\": %llu, "
			   "\"bytes\": %llu, \"dropped\": %llu, \"ce_marked\": %llu, \"max_queue_ns\": %llu, "
			   "\"faulty\": %s}",
			first ? "" : ",", l->name, d & 1 ? l->b : l->a, d & 1 ? l->a : l->b,
			(unsigned long long)ld->packets, (unsigned long long)ld->bytes,
			(unsigned long long)ld->dropped, (unsigned long long)ld->ce_marked,
			(unsigned long long)ld->max_queue_ns, ld->faulty ? "true" : "false");
		first = false;
	}
	fprintf(f, "\n  ],\n");
}

/* Per vantage, the flows it saw as the analyzer must report them (sorted like its output). */
static int write_truth_vantages(FILE *f, struct sim *s)
{
	fprintf(f, "  \"vantages\": [");
	uint32_t *ids = malloc((size_t)s->n_qps * 2 * sizeof(*ids));
	if (!ids) {
		errno = ENOMEM;
		return -1;
	}
	for (uint32_t vi = 0; vi < s->n_vantages; vi++) {
		struct vantage *v = &s->vantages[vi];
		uint32_t n = 0;
		for (uint32_t id = 0; id < s->n_qps * 2; id++)
			if (flow_listed(&v->flows[id]))
				ids[n++] = id;
		sort_sim = s;
		qsort(ids, n, sizeof(*ids), cmp_flow);
		/* The trace name comes from --output: escaped like every other string. */
		fprintf(f, "%s\n    {\"name\": ", vi ? "," : "");
		json_fput_string(f, v->name);
		fputs(", \"trace\": ", f);
		json_fput_string(f, v->file_rel);
		fprintf(f, ", \"packets\": %llu, \"flows\": [", (unsigned long long)v->packets);
		for (uint32_t k = 0; k < n; k++)
			write_flow(f, s, ids[k], &v->flows[ids[k]], k == 0);
		fprintf(f, "\n    ]}");
	}
	free(ids);
	return 0;
}

static int write_truth(struct sim *s, const char *path)
{
	FILE *f = fopen(path, "w");
	if (!f)
		return -1;
	write_truth_header(f, s);
	write_truth_shapes(f, s);
	write_truth_faults(f, s);
	write_truth_host_faults(f, s);
	write_truth_qps(f, s);
	write_truth_links(f, s);
	if (write_truth_vantages(f, s) < 0) {
		fclose(f);
		return -1;
	}
	fprintf(f, "\n  ]\n}\n");
	if (ferror(f)) {
		fclose(f);
		errno = EIO;
		return -1;
	}
	return fclose(f);
}

/* ---- links.csv, paths.csv ---- */

static int write_links_csv(const struct sim *s, const char *path)
{
	FILE *f = fopen(path, "w");
	if (!f)
		return -1;
	fprintf(f, "link,a,b\n");
	for (uint32_t i = 0; i < s->n_links; i++)
		fprintf(f, "%s,%s,%s\n", s->links[i].name, s->links[i].a, s->links[i].b);
	return fclose(f);
}

struct path_row {
	const uint8_t *src, *dst;
	uint16_t sport;
	const struct qp *q;
	int side;
};

static int cmp_path_row(const void *pa, const void *pb)
{
	const struct path_row *a = pa, *b = pb;
	int c = memcmp(a->src, b->src, 16);
	if (c)
		return c;
	c = memcmp(a->dst, b->dst, 16);
	if (c)
		return c;
	return a->sport < b->sport ? -1 : a->sport > b->sport;
}

static int write_paths_csv(const struct sim *s, const char *path)
{
	struct path_row *rows = calloc((size_t)s->n_qps * 2 + 1, sizeof(*rows));
	size_t n = 0;
	if (!rows)
		return -1;
	for (uint32_t i = 0; i < s->n_qps; i++) {
		const struct qp *q = &s->qps[i];
		for (int side = 0; side < 2; side++)
			if (q->used_dir[side])
				rows[n++] = (struct path_row){s->hosts[q->host[side]].ip,
							      s->hosts[q->host[1 - side]].ip, q->sport, q,
							      side};
	}
	qsort(rows, n, sizeof(*rows), cmp_path_row);
	FILE *f = fopen(path, "w");
	if (!f) {
		free(rows);
		return -1;
	}
	fprintf(f, "src,dst,udp_sport,links...\n");
	for (size_t k = 0; k < n; k++) {
		if (k && cmp_path_row(&rows[k], &rows[k - 1]) == 0)
			continue;	/* two QPs hashed to one port: same path */
		char a[64], b[64];
		const struct qp *q = rows[k].q;
		fprintf(f, "%s,%s,%u", addr_str(rows[k].src, a, sizeof(a)),
			addr_str(rows[k].dst, b, sizeof(b)), rows[k].sport);
		for (uint32_t i = 0; i < q->path_len[rows[k].side]; i++)
			fprintf(f, ",%s", s->links[q->path[rows[k].side][i] / 2].name);
		fputc('\n', f);
	}
	free(rows);
	return fclose(f);
}

int synth_outputs_close(struct sim *s)
{
	const struct synth_opts *o = s->o;
	char path[1200];
	int rc = 0;

	for (uint32_t vi = 0; vi < s->n_vantages; vi++) {
		struct vantage *v = &s->vantages[vi];
		int r = 0;
		if (v->ng) {
			struct pcapng_if_stats st = {.if_id = 0, .ts_ns = v->packets ? v->last_ns : o->start_ns,
						     .received = o->mirror_sessions ? s->packets_written : v->packets,
						     .dropped = 0,
						     .start_ns = v->first_ns, .end_ns = v->last_ns};
			if (!s->write_failed)
				r = pcapng_writer_write_stats(v->ng, &st);
			if (pcapng_writer_close(v->ng) < 0)
				r = -1;
		} else if (v->pc) {
			r = pcap_writer_close(v->pc);
		}
		if (r < 0 && !s->write_failed) {
			pr_err("writing %s: %s\n", v->file, strerror(errno));
			rc = -1;
		}
	}
	snprintf(path, sizeof(path), "%s/truth.json", out_dir);
	if (write_truth(s, path) < 0) {
		pr_err("writing %s: %s\n", path, strerror(errno));
		rc = -1;
	}
	snprintf(path, sizeof(path), "%s/links.csv", out_dir);
	if (write_links_csv(s, path) < 0) {
		pr_err("writing %s: %s\n", path, strerror(errno));
		rc = -1;
	}
	snprintf(path, sizeof(path), "%s/paths.csv", out_dir);
	if (write_paths_csv(s, path) < 0) {
		pr_err("writing %s: %s\n", path, strerror(errno));
		rc = -1;
	}
	snprintf(path, sizeof(path), "%s/command.txt", out_dir);
	FILE *f = fopen(path, "w");
	if (!f || fprintf(f, "%s\n", o->command) < 0 || fclose(f) != 0) {
		pr_err("writing %s: %s\n", path, strerror(errno));
		rc = -1;
	}
	for (uint32_t vi = 0; vi < s->n_vantages; vi++) {
		struct vantage *v = &s->vantages[vi];
		for (uint32_t id = 0; v->flows && id < s->n_qps * 2; id++) {
			free(v->flows[id].samples);
			free(v->flows[id].ring);
		}
		free(v->flows);
	}
	free(s->vantages);
	s->vantages = NULL;
	pr_info("wrote %llu packets in %u trace file(s), truth.json, links.csv, paths.csv into %s\n",
		(unsigned long long)(s->n_vantages ? s->packets_written : 0), s->n_vantages, out_dir);
	return rc;
}

int synth_run(const struct synth_opts *o)
{
	struct sim s;
	int rc = 1;

	if (synth_sim_init(&s, o) < 0)
		goto out;
	if (synth_outputs_open(&s) < 0)
		goto out;
	if (synth_sim_run(&s) < 0 && s.oom)
		pr_err("out of memory while simulating\n");
	if (synth_outputs_close(&s) == 0 && !s.write_failed && !s.oom)
		rc = 0;
out:
	if (s.vantages) {
		for (uint32_t vi = 0; vi < s.n_vantages; vi++) {
			if (s.vantages[vi].ng)
				pcapng_writer_close(s.vantages[vi].ng);
			if (s.vantages[vi].pc)
				pcap_writer_close(s.vantages[vi].pc);
			free(s.vantages[vi].flows);
		}
		free(s.vantages);
	}
	synth_sim_free(&s);
	return rc;
}
