/* synth_main.c: agentxdp-synth command line: one option table, checked numbers, --help with examples. */
#include <arpa/inet.h>
#include <assert.h>
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "lib/util/log.h"
#include "lib/util/parse_num.h"
#include "lib/util/util.h"
#include "samples/synth.h"


#define NS_PER_S 1000000000ull

enum {
	OPT_HOSTS = 256, OPT_LEAVES, OPT_SPINES, OPT_QPS, OPT_PEERS, OPT_DURATION, OPT_WORKLOAD,
	OPT_LOAD, OPT_MSG, OPT_OUTSTANDING, OPT_MTU, OPT_FAULT, OPT_HOST_FAULT, OPT_SEED, OPT_IPV6,
	OPT_VLAN, OPT_SNAPLEN, OPT_VANTAGE, OPT_FORMAT, OPT_PSN_WRAP, OPT_HOST_GBPS,
	OPT_FABRIC_GBPS, OPT_LATENCY, OPT_BUFFER, OPT_KMIN, OPT_KMAX, OPT_PMAX, OPT_ACK_TIMEOUT,
	OPT_PAUSE, OPT_START, OPT_MAX_PACKETS, OPT_ENCAP, OPT_LINK, OPT_ACK_EVERY,
	OPT_MIRROR_SESSIONS, OPT_COLLECTOR_DELAY, OPT_COLLECTOR_JITTER, OPT_COLLECTOR_DRIFT,
};

static const char help_head[] =
	"Usage: agentxdp-synth -o DIR [OPTIONS]\n"
	"\n"
	"Synthesize RoCE v2 traffic on a leaf-spine fabric with known faults, and write\n"
	"what a capture would see plus the ground truth: the trace (pcapng or pcap),\n"
	"truth.json (per-flow counts, ACK latency, QP paths, faults), links.csv and\n"
	"paths.csv. RC queue pairs run the InfiniBand requester/responder state machines\n"
	"(PSN/MSN, ACK coalescing, NAK and go-back-N, timeouts, RNR, READ, atomics); UC and\n"
	"UD too; ECN marks make CNPs and DCQCN slows the sender. Output is a function of the\n"
	"options and --seed only. Schema: docs/ground-truth.md.\n"
	"\n"
	"Options:\n";

static const char help_tail[] =
	"\n"
	"FAULTS\n"
	"  --fault link=NAME[,dir=A>B],kind=KIND,size=SIZE[,onset=TIME][,end=TIME][,...]\n"
	"    NAME as in links.csv (198.18.0.10-leaf0, leaf0-spine1); dir A>B is one direction\n"
	"    (default both). onset/end are times from the trace start (default: whole run).\n"
	"    kind=slow  size=20us   20 us extra latency (shape=queue: exponential, mean 20 us)\n"
	"               size=4x     link serializes 4 times slower (it queues under load)\n"
	"    kind=loss  size=1%     drop 1% of packets\n"
	"    kind=ecn   size=30%    mark 30% of ECN-capable packets CE (receivers send CNPs)\n"
	"    kind=flap  size=200us  link down 200 us every period (period=2ms, default 10x)\n"
	"  --host-fault host=IP,kind=KIND[,size=TIME][,onset=TIME][,end=TIME]\n"
	"    kind=rnr             its responders have no receive buffers; one is posted every\n"
	"                         size (default 100us): SENDs meet RNR NAKs\n"
	"    kind=slow-responder  its responses leave size late (default 50us)\n"
	"    kind=nic-retransmit  its requesters' ACK timeout drops to size (default 2us):\n"
	"                         spurious timeouts and go-back-N\n"
	"\n"
	"VANTAGE\n"
	"  mirror: one trace; packets the requester side sends are stamped when they leave\n"
	"  its NIC, packets the responder side sends when they reach the requester's NIC, so\n"
	"  ACK latency is the full round trip (lost responses are absent). host=IP: that\n"
	"  host's port, both directions. each-host: one file per host, trace-IP.pcapng.\n"
	"\n"
	"Times need a unit (100ns, 20us, 1.5ms, 2s; a bare number is an error, 0 is 0);\n"
	"--start-time is epoch seconds, not a duration. Sizes k/M/G (1024-based); fractions\n"
	"1% or 0.01. Exit status: 0 success, 1 failure (message on stderr), 2 usage error.\n"
	"\n"
	"EXAMPLES\n"
	"  agentxdp-synth -o out/healthy --hosts 8 --duration 5ms\n"
	"  agentxdp-synth -o out/slow --fault 'link=leaf0-spine1,dir=leaf0>spine1,kind=slow,size=20us,onset=2ms'\n"
	"  agentxdp-synth -o out/lossy --workload mixed --fault link=leaf1-spine0,kind=loss,size=1%\n"
	"  agentxdp-synth -o out/cnp --fault 'link=leaf0-spine0,dir=spine0>leaf0,kind=ecn,size=30%'\n"
	"  agentxdp-synth -o out/read --workload read --psn-wrap --vantage each-host\n"
	"  agentxdp-synth -o out/v6.pcap --ipv6 --vlan 100 --snaplen 128 --format pcap\n"
	"  agentxdp-synth -o out/span --encap erspan2 --fault link=leaf0-spine0,kind=loss,size=2%\n"
	"  agentxdp-synth -o out/ib --link ib --fault link=leaf0-spine0,kind=loss,size=2%\n"
	"  agentxdp-synth -o out/rnr --workload rpc --host-fault host=198.18.0.12,kind=rnr,onset=1ms\n"
	"  agentxdp-synth -o /tmp/big --hosts 16 --leaves 4 --spines 2 --load 80% --duration 1s \\\n"
	"      --snaplen 128 --max-packets 10000000\n";

void synth_opts_default(struct synth_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->hosts = 8;
	o->leaves = 2;
	o->spines = 2;
	o->qps_per_pair = 2;
	o->peers = 2;
	o->duration_ns = 10000000;
	o->start_ns = 1767225600ull * NS_PER_S;
	o->workload = WL_WRITE;
	o->seed = 1;
	o->vantage = VANTAGE_MIRROR;
	o->format = FORMAT_PCAPNG;
	o->mtu = 1024;
	o->outstanding = 4;
	o->load = 0.2;
	o->host_gbps = 100;
	o->fabric_gbps = 100;
	o->link_latency_ns = 1000;
	o->buffer_bytes = 1 << 20;
	o->ecn_kmin_bytes = 100 * 1024;
	o->ecn_kmax_bytes = 400 * 1024;
	o->ecn_pmax = 0.2;
	o->ack_timeout_ns = 1000000;
	o->pause_ns = 100000;
	o->collector_delay_ns = 20000;
	o->collector_jitter_ns = 1000;
	o->collector_drift_ppm = 50;
}

const char *synth_workload_name(enum synth_workload w)
{
	static const char *n[] = {"write", "read", "rpc", "collective", "mixed", "atomic"};
	return n[w];
}

static int parse_ip(const char *s, uint8_t out[16])
{
	struct in_addr a4;
	memset(out, 0, 16);
	if (inet_pton(AF_INET, s, &a4) == 1) {
		out[10] = out[11] = 0xff;
		memcpy(out + 12, &a4, 4);
		return 0;
	}
	if (inet_pton(AF_INET6, s, out) == 1)
		return 0;
	return addr_parse_lid(s, out); /* --link ib hosts: "LID 3" */
}

static int parse_time(const char *what, const char *s, uint64_t *out)
{
	double bare;
	int rc = parse_duration_ns(s, DURATION_UNIT_REQUIRED, 0, 3600 * NS_PER_S, out);
	if (rc && !parse_double(s, 0, 1e300, &bare))
		return usage_error("%s: '%s': a time needs a unit (like 500us, 2ms, 1.5s)", what, s);
	if (rc)
		return usage_error("%s: '%s' is not a time (like 500us, 2ms, 1.5s)", what, s);
	return 0;
}

/* "k1=v1,k2=v2": calls fn(key, value) for each pair. */
static int parse_kv(char *spec, const char *what, int (*fn)(void *, const char *, const char *),
		    void *arg)
{
	char *save = NULL;
	for (char *tok = strtok_r(spec, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '=');
		if (!eq)
			return usage_error("%s: '%s' is not key=value", what, tok);
		*eq = 0;
		int rc = fn(arg, tok, eq + 1);
		if (rc)
			return rc;
	}
	return 0;
}

struct fault_parse {
	struct link_fault *f;
	bool have_kind, have_size;
	char size[64], period[64];
};

static int fault_kv(void *arg, const char *k, const char *v)
{
	struct fault_parse *fp = arg;
	struct link_fault *f = fp->f;
	if (strcmp(k, "link") == 0) {
		snprintf(f->link, sizeof(f->link), "%s", v);
	} else if (strcmp(k, "dir") == 0) {
		const char *gt = strchr(v, '>');
		if (!gt || gt == v || !gt[1])
			return usage_error("--fault: dir='%s' must be FROM>TO, like leaf0>spine1", v);
		snprintf(f->from, sizeof(f->from), "%.*s", (int)(gt - v), v);
		snprintf(f->to, sizeof(f->to), "%s", gt + 1);
	} else if (strcmp(k, "kind") == 0) {
		if (strcmp(v, "slow") == 0)
			f->kind = LF_SLOW;
		else if (strcmp(v, "loss") == 0)
			f->kind = LF_LOSS;
		else if (strcmp(v, "ecn") == 0)
			f->kind = LF_ECN;
		else if (strcmp(v, "flap") == 0)
			f->kind = LF_FLAP;
		else
			return usage_error("--fault: kind='%s': use slow, loss, ecn or flap", v);
		fp->have_kind = true;
	} else if (strcmp(k, "size") == 0) {
		snprintf(fp->size, sizeof(fp->size), "%s", v);
		fp->have_size = true;
	} else if (strcmp(k, "onset") == 0) {
		return parse_time("--fault onset", v, &f->onset_ns);
	} else if (strcmp(k, "end") == 0) {
		return parse_time("--fault end", v, &f->end_ns);
	} else if (strcmp(k, "shape") == 0) {
		if (strcmp(v, "queue") == 0)
			f->queue_like = true;
		else if (strcmp(v, "const") != 0 && strcmp(v, "constant") != 0)
			return usage_error("--fault: shape='%s': use const or queue", v);
	} else if (strcmp(k, "period") == 0) {
		snprintf(fp->period, sizeof(fp->period), "%s", v);
	} else {
		return usage_error("--fault: unknown key '%s' (link, dir, kind, size, onset, end, "
				   "shape, period)", k);
	}
	return 0;
}

static int parse_fault(struct synth_opts *o, const char *arg)
{
	char spec[512];
	struct fault_parse fp = {0};
	int rc;

	if (o->n_faults >= SYNTH_MAX_FAULTS)
		return usage_error("--fault: at most %d faults", SYNTH_MAX_FAULTS);
	fp.f = &o->faults[o->n_faults];
	memset(fp.f, 0, sizeof(*fp.f));
	snprintf(spec, sizeof(spec), "%s", arg);
	rc = parse_kv(spec, "--fault", fault_kv, &fp);
	if (rc)
		return rc;
	struct link_fault *f = fp.f;
	if (!f->link[0] || !fp.have_kind || !fp.have_size)
		return usage_error("--fault '%s': link=, kind= and size= are required", arg);
	snprintf(f->size_text, sizeof(f->size_text), "%s", fp.size);
	size_t sl = strlen(fp.size);
	switch (f->kind) {
	case LF_SLOW:
		if (sl > 1 && fp.size[sl - 1] == 'x') {
			char num[64];
			snprintf(num, sizeof(num), "%.*s", (int)(sl - 1), fp.size);
			if (parse_double(num, 1.0, 1000000.0, &f->rate_divisor))
				return usage_error("--fault: size='%s': a slowdown is 1x..1000000x", fp.size);
		} else if (parse_duration_ns(fp.size, DURATION_UNIT_REQUIRED, 1, 10 * NS_PER_S,
					     &f->extra_latency_ns)) {
			return usage_error("--fault: size='%s': slow takes a latency (20us) or a "
					   "slowdown (4x)", fp.size);
		}
		break;
	case LF_LOSS:
	case LF_ECN:
		if (parse_fraction(fp.size, &f->rate) || f->rate <= 0)
			return usage_error("--fault: size='%s': give a rate like 1%% or 0.01", fp.size);
		break;
	case LF_FLAP:
		if (parse_duration_ns(fp.size, DURATION_UNIT_REQUIRED, 1, 10 * NS_PER_S, &f->down_ns))
			return usage_error("--fault: size='%s': flap takes the down time, like 200us",
					   fp.size);
		f->period_ns = f->down_ns * 10;
		if (fp.period[0] && (parse_duration_ns(fp.period, DURATION_UNIT_REQUIRED, f->down_ns + 1, 100 * NS_PER_S,
						       &f->period_ns)))
			return usage_error("--fault: period='%s' must be a time longer than size",
					   fp.period);
		break;
	}
	if (f->end_ns && f->end_ns <= f->onset_ns)
		return usage_error("--fault: end must come after onset");
	o->n_faults++;
	return 0;
}

struct host_fault_parse {
	struct host_fault *f;
	bool have_kind, have_host;
	char size[64];
};

static int host_fault_kv(void *arg, const char *k, const char *v)
{
	struct host_fault_parse *hp = arg;
	struct host_fault *f = hp->f;
	if (strcmp(k, "host") == 0) {
		if (parse_ip(v, f->ip))
			return usage_error("--host-fault: host='%s' is not an IP address", v);
		snprintf(f->host_text, sizeof(f->host_text), "%s", v);
		hp->have_host = true;
	} else if (strcmp(k, "kind") == 0) {
		if (strcmp(v, "rnr") == 0)
			f->kind = HF_RNR;
		else if (strcmp(v, "slow-responder") == 0)
			f->kind = HF_SLOW_RESPONDER;
		else if (strcmp(v, "nic-retransmit") == 0)
			f->kind = HF_NIC_RETRANSMIT;
		else
			return usage_error("--host-fault: kind='%s': use rnr, slow-responder or "
					   "nic-retransmit", v);
		hp->have_kind = true;
	} else if (strcmp(k, "size") == 0) {
		snprintf(hp->size, sizeof(hp->size), "%s", v);
	} else if (strcmp(k, "onset") == 0) {
		return parse_time("--host-fault onset", v, &f->onset_ns);
	} else if (strcmp(k, "end") == 0) {
		return parse_time("--host-fault end", v, &f->end_ns);
	} else {
		return usage_error("--host-fault: unknown key '%s' (host, kind, size, onset, end)", k);
	}
	return 0;
}

static int parse_host_fault(struct synth_opts *o, const char *arg)
{
	static const char *defaults[] = {"100us", "50us", "2us"};
	char spec[512];
	struct host_fault_parse hp = {0};
	int rc;

	if (o->n_host_faults >= SYNTH_MAX_FAULTS)
		return usage_error("--host-fault: at most %d faults", SYNTH_MAX_FAULTS);
	hp.f = &o->host_faults[o->n_host_faults];
	memset(hp.f, 0, sizeof(*hp.f));
	snprintf(spec, sizeof(spec), "%s", arg);
	rc = parse_kv(spec, "--host-fault", host_fault_kv, &hp);
	if (rc)
		return rc;
	if (!hp.have_host || !hp.have_kind)
		return usage_error("--host-fault '%s': host= and kind= are required", arg);
	if (!hp.size[0])
		snprintf(hp.size, sizeof(hp.size), "%s", defaults[hp.f->kind]);
	snprintf(hp.f->size_text, sizeof(hp.f->size_text), "%s", hp.size);
	if (parse_duration_ns(hp.size, DURATION_UNIT_REQUIRED, 100, 10 * NS_PER_S, &hp.f->size_ns))
		return usage_error("--host-fault: size='%s' must be a time of at least 100ns", hp.size);
	if (hp.f->end_ns && hp.f->end_ns <= hp.f->onset_ns)
		return usage_error("--host-fault: end must come after onset");
	o->n_host_faults++;
	return 0;
}

static int num(const char *opt, const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	int rc = parse_u64(s, min, max, out);
	if (rc == -ERANGE)
		return usage_error("%s: %s is out of range %llu..%llu", opt, s,
				   (unsigned long long)min, (unsigned long long)max);
	if (rc)
		return usage_error("%s: '%s' is not a number", opt, s);
	return 0;
}

static int size_arg(const char *opt, const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	int rc = parse_size_bytes(s, min, max, out);
	if (rc == -ERANGE)
		return usage_error("%s: %s is out of range %llu..%llu bytes", opt, s,
				   (unsigned long long)min, (unsigned long long)max);
	if (rc)
		return usage_error("%s: '%s' is not a size (like 1500, 64k, 1M)", opt, s);
	return 0;
}

static int frac_arg(const char *opt, const char *s, double *out)
{
	if (parse_fraction(s, out))
		return usage_error("%s: '%s' is not a fraction (like 20%% or 0.2)", opt, s);
	return 0;
}

static int gbps_arg(const char *opt, const char *s, double *out)
{
	if (parse_double(s, 0.1, 10000, out))
		return usage_error("%s: '%s' is not a rate in Gb/s between 0.1 and 10000", opt, s);
	return 0;
}

/* The command line as one shell-quoted string, program name without its directory. */
static void join_command(struct synth_opts *o, int argc, char **argv)
{
	size_t n = (size_t)snprintf(o->command, sizeof(o->command), "agentxdp-synth");
	for (int i = 1; i < argc && n < sizeof(o->command); i++) {
		const char *a = argv[i];
		bool plain = *a != 0;
		for (const char *p = a; *p; p++)
			if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
				    "_./=,:%+-@", *p))
				plain = false;
		n += (size_t)snprintf(o->command + n, sizeof(o->command) - n, plain ? " %s" : " '%s'",
				      a);
	}
}

static int opt_duration(struct synth_opts *o, const char *arg)
{
	int rc = parse_time("--duration", arg, &o->duration_ns);

	if (!rc && o->duration_ns == 0)
		rc = usage_error("--duration must be more than 0");
	return rc;
}

static int opt_workload(struct synth_opts *o, const char *arg)
{
	static const enum synth_workload order[] = {WL_WRITE, WL_READ, WL_RPC, WL_COLLECTIVE,
						     WL_MIXED, WL_ATOMIC};

	for (size_t i = 0; i < ARRAY_SIZE(order); i++)
		if (strcmp(arg, synth_workload_name(order[i])) == 0) {
			o->workload = order[i];
			return 0;
		}
	return usage_error("--workload: '%s': use write, read, rpc, atomic, collective or mixed",
			   arg);
}

static int opt_mtu(struct synth_opts *o, const char *arg)
{
	uint64_t v;
	int rc = num("--mtu", arg, 256, 4096, &v);

	if (rc)
		return rc;
	if (v & (v - 1))
		return usage_error("--mtu: %s: use 256, 512, 1024, 2048 or 4096", arg);
	o->mtu = (uint32_t)v;
	return 0;
}

static int opt_vantage(struct synth_opts *o, const char *arg)
{
	if (strcmp(arg, "mirror") == 0) {
		o->vantage = VANTAGE_MIRROR;
	} else if (strcmp(arg, "each-host") == 0) {
		o->vantage = VANTAGE_EACH_HOST;
	} else if (strncmp(arg, "host=", 5) == 0) {
		o->vantage = VANTAGE_HOST;
		snprintf(o->vantage_text, sizeof(o->vantage_text), "%s", arg + 5);
		if (parse_ip(arg + 5, o->vantage_ip))
			return usage_error("--vantage: '%s' is not an IP address", arg + 5);
	} else {
		return usage_error("--vantage: '%s': use mirror, host=IP or each-host", arg);
	}
	return 0;
}

static int opt_format(struct synth_opts *o, const char *arg)
{
	if (strcmp(arg, "pcapng") == 0)
		o->format = FORMAT_PCAPNG;
	else if (strcmp(arg, "pcap") == 0)
		o->format = FORMAT_PCAP;
	else
		return usage_error("--format: '%s': use pcapng or pcap", arg);
	return 0;
}

static int opt_encap(struct synth_opts *o, const char *arg)
{
	static const struct {
		const char *name;
		uint8_t kind;
	} kinds[] = {
		{ "none", ROCE_ENCAP_NONE },	   { "erspan2", ROCE_ENCAP_ERSPAN2 },
		{ "erspan3", ROCE_ENCAP_ERSPAN3 }, { "gre", ROCE_ENCAP_GRE_TEB },
		{ "vxlan", ROCE_ENCAP_VXLAN },
	};

	for (size_t i = 0; i < ARRAY_SIZE(kinds); i++)
		if (strcmp(arg, kinds[i].name) == 0) {
			o->encap = kinds[i].kind;
			return 0;
		}
	return usage_error("--encap: '%s': use none, erspan2, erspan3, gre or vxlan", arg);
}

/* --link eth | ib: Ethernet RoCE v2 frames, or native InfiniBand (LRH + BTH, hosts by LID). */
static int opt_link(struct synth_opts *o, const char *arg)
{
	if (strcmp(arg, "eth") && strcmp(arg, "ib"))
		return usage_error("--link: '%s': use eth or ib", arg);
	o->link_ib = strcmp(arg, "ib") == 0;
	return 0;
}

static int opt_collector_drift(struct synth_opts *o, const char *arg)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	if (errno || end == arg || (strcmp(end, "ppm") && *end) || v < -1000 || v > 1000)
		return usage_error("--collector-drift: '%s': ppm between -1000 and 1000 (like 50ppm)", arg);
	o->collector_drift_ppm = v;
	return 0;
}

static int opt_ack_timeout(struct synth_opts *o, const char *arg)
{
	int rc = parse_time("--ack-timeout", arg, &o->ack_timeout_ns);

	if (!rc && o->ack_timeout_ns < 100)
		rc = usage_error("--ack-timeout must be at least 100ns");
	return rc;
}

static int opt_start_time(struct synth_opts *o, const char *arg)
{
	uint64_t v;
	int rc = num("--start-time", arg, 0, 4000000000ull, &v);

	if (rc)
		return rc;
	o->start_ns = v * NS_PER_S;
	return 0;
}

/* The healthy load shapes' options, numbered apart from the others. */
enum { OPT_INCAST = 1024, OPT_INCAST_FACTOR, OPT_ECMP_SKEW };

/* --incast IP: a healthy incast toward that host (its senders give it more). */
static int opt_incast(struct synth_opts *o, const char *arg)
{
	if (parse_ip(arg, o->incast_ip))
		return usage_error("--incast: '%s' is not an IP address", arg);
	snprintf(o->incast_text, sizeof(o->incast_text), "%s", arg);
	o->incast = true;
	return 0;
}

/* The one option table: getopt's table and --help are both made from it. */
enum opt_type {
	OT_ACTION,	/* -q -v -h -V: main() acts on them */
	OT_STR,		/* the argument itself */
	OT_TRUE,	/* a bool set to true */
	OT_U16, OT_U32, OT_U64, /* num() within [min, max] */
	OT_TIME,	/* parse_time() */
	OT_SIZE,	/* size_arg() within [min, max] */
	OT_FRAC,	/* frac_arg() */
	OT_GBPS,	/* gbps_arg() */
	OT_FN,		/* parse(): enumerations, faults, checks beyond a range */
};

struct opt_def {
	const char *name;
	int has_arg;
	int id;
	const char *arg;
	const char *help;
	enum opt_type type;
	size_t off;		/* the field of struct synth_opts it fills */
	uint64_t min, max;
	int (*parse)(struct synth_opts *o, const char *arg);
};

#define FIELD(t, f) t, offsetof(struct synth_opts, f)
#define NUM(t, f, lo, hi) FIELD(t, f), lo, hi, NULL
#define VAL(t, f) FIELD(t, f), 0, 0, NULL
#define FN(fn) OT_FN, 0, 0, 0, fn
#define ACTION OT_ACTION, 0, 0, 0, NULL

static const struct opt_def opt_defs[] = {
	{"output", 1, 'o', "DIR", "write trace, truth.json, links.csv, paths.csv into DIR\n"
				   "(or name the trace: -o DIR/x.pcapng; the rest go beside it)",
	 VAL(OT_STR, out)},
	{"hosts", 1, OPT_HOSTS, "N", "hosts (default 8)",
	 NUM(OT_U32, hosts, 2, SYNTH_MAX_HOSTS)},
	{"leaves", 1, OPT_LEAVES, "N", "leaf switches, hosts spread evenly (default 2)",
	 NUM(OT_U32, leaves, 1, SYNTH_MAX_SWITCHES)},
	{"spines", 1, OPT_SPINES, "N", "spine switches, every leaf links every spine (default 2)",
	 NUM(OT_U32, spines, 1, SYNTH_MAX_SWITCHES)},
	{"qps-per-pair", 1, OPT_QPS, "N", "QPs per (requester, responder) host pair (default 2)",
	 NUM(OT_U32, qps_per_pair, 1, 64)},
	{"peers", 1, OPT_PEERS, "N", "responder hosts per requester host (default 2;\n"
				      "collective: all)",
	 NUM(OT_U32, peers, 1, SYNTH_MAX_HOSTS)},
	{"duration", 1, OPT_DURATION, "TIME", "simulated time (default 10ms)",
	 FN(opt_duration)},
	{"workload", 1, OPT_WORKLOAD, "KIND", "write | read | rpc | atomic | collective | mixed\n"
						"                               (default write)",
	 FN(opt_workload)},
	{"load", 1, OPT_LOAD, "FRAC", "offered load per host, of its link rate (default 20%)",
	 VAL(OT_FRAC, load)},
	{"msg-size", 1, OPT_MSG, "BYTES", "message size (default: 64k write/read/collective,\n"
					   "512 rpc)",
	 NUM(OT_SIZE, msg_bytes, 1, 1 << 20)},
	{"outstanding", 1, OPT_OUTSTANDING, "N", "messages in flight per QP (default 4)",
	 NUM(OT_U32, outstanding, 1, RC_SQ_DEPTH)},
	{"mtu", 1, OPT_MTU, "BYTES", "RoCE path MTU: 256..4096 (default 1024)",
	 FN(opt_mtu)},
	{"fault", 1, OPT_FAULT, "SPEC", "link fault, repeatable; see FAULTS",
	 FN(parse_fault)},
	{"host-fault", 1, OPT_HOST_FAULT, "SPEC", "host fault, repeatable; see FAULTS",
	 FN(parse_host_fault)},
	{"incast", 1, OPT_INCAST, "IP", "healthy incast: IP receives --incast-factor times the\n"
					 "traffic of other hosts (no fault)",
	 FN(opt_incast)},
	{"incast-factor", 1, OPT_INCAST_FACTOR, "N", "the incast's multiple (default 3)",
	 NUM(OT_U32, incast_factor, 1, 100)},
	{"ecmp-skew", 1, OPT_ECMP_SKEW, "FRAC", "healthy ECMP imbalance: FRAC of the cross-leaf\n"
						"flows hash to spine0, the rest as usual",
	 VAL(OT_FRAC, ecmp_skew)},
	{"seed", 1, OPT_SEED, "N", "random seed: same seed, same bytes (default 1)",
	 NUM(OT_U64, seed, 0, UINT64_MAX)},
	{"ipv6", 0, OPT_IPV6, NULL, "IPv6 hosts (fd99::10, ...) instead of IPv4 (198.18.0.10, ...)",
	 VAL(OT_TRUE, ipv6)},
	{"vlan", 1, OPT_VLAN, "ID", "tag every frame with 802.1Q VLAN ID (PCP 3)",
	 NUM(OT_U16, vlan, 1, 4094)},
	{"snaplen", 1, OPT_SNAPLEN, "BYTES", "trim frames to BYTES as a capture would (default: whole)",
	 NUM(OT_U32, snaplen, 64, 262144)},
	{"encap", 1, OPT_ENCAP, "KIND", "none | erspan2 | erspan3 | gre | vxlan: deliver every\n"
					 "frame as a remote mirror session does (default none)",
	 FN(opt_encap)},
	{"link", 1, OPT_LINK, "KIND", "eth | ib: RoCE v2 over Ethernet, or native InfiniBand\n"
				       "(LINKTYPE_INFINIBAND: LRH + BTH, hosts LID 1, 2, ...)",
	 FN(opt_link)},
	{"mirror-sessions", 0, OPT_MIRROR_SESSIONS, NULL, "with --encap and --vantage each-host: one\n"
				"trace, each host port a mirror session of its own (session\n"
				"ID host index + 1, from its leaf switch 10.255.LEAF.1)",
	 VAL(OT_TRUE, mirror_sessions)},
	{"collector-delay", 1, OPT_COLLECTOR_DELAY, "TIME", "--encap erspan3: median collector arrival -\n"
				"switch time (default 20us)",
	 VAL(OT_TIME, collector_delay_ns)},
	{"collector-jitter", 1, OPT_COLLECTOR_JITTER, "TIME", "--encap erspan3: its standard deviation,\n"
				"normal (default 1us)",
	 VAL(OT_TIME, collector_jitter_ns)},
	{"collector-drift", 1, OPT_COLLECTOR_DRIFT, "PPM", "--encap erspan3: the collector clock's drift\n"
				"against the switch's (default 50ppm)",
	 FN(opt_collector_drift)},
	{"vantage", 1, OPT_VANTAGE, "WHERE", "mirror | host=IP | each-host (default mirror)",
	 FN(opt_vantage)},
	{"format", 1, OPT_FORMAT, "FMT", "pcapng | pcap (default pcapng)",
	 FN(opt_format)},
	{"psn-wrap", 0, OPT_PSN_WRAP, NULL, "start PSNs just below 2^24 so they wrap",
	 VAL(OT_TRUE, psn_wrap)},
	{"host-gbps", 1, OPT_HOST_GBPS, "G", "host link rate (default 100)",
	 VAL(OT_GBPS, host_gbps)},
	{"fabric-gbps", 1, OPT_FABRIC_GBPS, "G", "leaf-spine link rate (default 100)",
	 VAL(OT_GBPS, fabric_gbps)},
	{"link-latency", 1, OPT_LATENCY, "TIME", "per link: propagation + switching (default 1us)",
	 VAL(OT_TIME, link_latency_ns)},
	{"buffer", 1, OPT_BUFFER, "BYTES", "egress buffer per link direction (default 1M)",
	 NUM(OT_SIZE, buffer_bytes, 4096, 1ull << 32)},
	{"ecn-kmin", 1, OPT_KMIN, "BYTES", "queue where ECN marking starts (default 100k)",
	 NUM(OT_SIZE, ecn_kmin_bytes, 0, 1ull << 32)},
	{"ecn-kmax", 1, OPT_KMAX, "BYTES", "queue where every packet is marked (default 400k;\n"
					    "0 = no queue marking)",
	 NUM(OT_SIZE, ecn_kmax_bytes, 0, 1ull << 32)},
	{"ecn-pmax", 1, OPT_PMAX, "FRAC", "marking probability at kmax (default 20%)",
	 VAL(OT_FRAC, ecn_pmax)},
	{"ack-timeout", 1, OPT_ACK_TIMEOUT, "TIME", "RC local ACK timeout (default 1ms)",
	 FN(opt_ack_timeout)},
	{"ack-every", 1, OPT_ACK_EVERY, "N", "RC responders ACK at least every N request packets\n"
					   "(coalescing; default 16)",
	 NUM(OT_U32, ack_every_pkts, 1, 4096)},
	{"pause", 1, OPT_PAUSE, "TIME", "collective: pause between phases (default 100us)",
	 VAL(OT_TIME, pause_ns)},
	{"start-time", 1, OPT_START, "SECONDS", "epoch of the first timestamp (default 1767225600,\n"
						 "2026-01-01 UTC)",
	 FN(opt_start_time)},
	{"max-packets", 1, OPT_MAX_PACKETS, "N", "stop after writing N packets",
	 NUM(OT_U64, max_packets, 1, UINT64_MAX)},
	{"quiet", 0, 'q', NULL, "only errors on standard error",
	 ACTION},
	{"verbose", 0, 'v', NULL, "more detail on standard error",
	 ACTION},
	{"help", 0, 'h', NULL, "show this help and exit",
	 ACTION},
	{"version", 0, 'V', NULL, "show the version and exit",
	 ACTION},
};
#undef FIELD
#undef NUM
#undef VAL
#undef FN
#undef ACTION
#define N_OPTS (sizeof(opt_defs) / sizeof(opt_defs[0]))


static void print_help(void)
{
	printf("%s", help_head);
	for (size_t i = 0; i < N_OPTS; i++) {
		const struct opt_def *d = &opt_defs[i];
		char left[64];
		char sh[8] = "    ";
		if (d->id < 256)
			snprintf(sh, sizeof(sh), "-%c, ", d->id);
		snprintf(left, sizeof(left), "  %s--%s%s%s", sh, d->name, d->arg ? " " : "",
			 d->arg ? d->arg : "");
		const char *h = d->help;
		printf("%-30s ", left);
		for (; *h; h++) {
			putchar(*h);
			if (*h == '\n')
				printf("%-30s ", "");
		}
		putchar('\n');
	}
	fputs(help_tail, stdout);
}


static const struct opt_def *opt_find(int id)
{
	for (size_t i = 0; i < N_OPTS; i++)
		if (opt_defs[i].id == id)
			return &opt_defs[i];
	return NULL;
}

/* Fill the field an option names, through the checked parser its type calls for. */
static int opt_apply(struct synth_opts *o, const struct opt_def *d, const char *arg)
{
	void *field = (char *)o + d->off;
	char opt[64];
	uint64_t v;
	int rc;

	snprintf(opt, sizeof(opt), "--%s", d->name);
	switch (d->type) {
	case OT_STR:
		*(const char **)field = arg;
		return 0;
	case OT_TRUE:
		*(bool *)field = true;
		return 0;
	case OT_U16:
	case OT_U32:
	case OT_U64:
		rc = num(opt, arg, d->min, d->max, &v);
		if (rc)
			return rc;
		if (d->type == OT_U16)
			*(uint16_t *)field = (uint16_t)v;
		else if (d->type == OT_U32)
			*(uint32_t *)field = (uint32_t)v;
		else
			*(uint64_t *)field = v;
		return 0;
	case OT_TIME:
		return parse_time(opt, arg, (uint64_t *)field);
	case OT_SIZE:
		return size_arg(opt, arg, d->min, d->max, (uint64_t *)field);
	case OT_FRAC:
		return frac_arg(opt, arg, (double *)field);
	case OT_GBPS:
		return gbps_arg(opt, arg, (double *)field);
	case OT_FN:
		return d->parse(o, arg);
	case OT_ACTION:
		break;
	}
	assert(!"main() handles action options");
	return 0;
}

/* What no single option can check: combinations, and -o against --format. */
static int check_opts(struct synth_opts *o, int argc, char **argv)
{
	if (!o->out)
		return usage_error("-o DIR is required (where to write the trace and its truth)");
	if (o->leaves > o->hosts)
		return usage_error("--leaves %u: more leaves than hosts (%u)", o->leaves, o->hosts);
	if (o->ipv6 == false && o->hosts > 240 * 256)
		return usage_error("--hosts: at most %u", 240 * 256);
	if ((uint64_t)o->hosts * (o->peers < o->hosts ? o->peers : o->hosts) * o->qps_per_pair > 200000)
		return usage_error("--hosts x --peers x --qps-per-pair is over 200000 QPs");
	if (o->ecn_kmax_bytes && o->ecn_kmax_bytes <= o->ecn_kmin_bytes)
		return usage_error("--ecn-kmax must be above --ecn-kmin (or 0 to turn marking off)");
	if (o->link_ib && (o->ipv6 || o->vlan || o->encap))
		return usage_error("--link ib: no --ipv6, --vlan or --encap (they are Ethernet's)");
	if (o->mirror_sessions && (!o->encap || o->vantage == VANTAGE_MIRROR))
		return usage_error("--mirror-sessions needs --encap and --vantage each-host or host=IP");
	size_t ol = strlen(o->out);
	bool ext_pcap = ol > 5 && strcmp(o->out + ol - 5, ".pcap") == 0;
	bool ext_pcapng = ol > 7 && strcmp(o->out + ol - 7, ".pcapng") == 0;
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--format") == 0 || strncmp(argv[i], "--format=", 9) == 0)
			if ((ext_pcap && o->format != FORMAT_PCAP) ||
			    (ext_pcapng && o->format != FORMAT_PCAPNG))
				return usage_error("-o %s does not match --format", o->out);
	if (ext_pcap)
		o->format = FORMAT_PCAP;
	return 0;
}

int main(int argc, char **argv)
{
	struct option longopts[N_OPTS + 1];
	struct synth_opts o;
	int c, rc;

	agentxdp_prog = "agentxdp-synth";
	umask(027); /* outputs 0640, folders 0750: traces and counters can be sensitive */
	synth_opts_default(&o);
	for (size_t i = 0; i < N_OPTS; i++)
		longopts[i] = (struct option){opt_defs[i].name, opt_defs[i].has_arg, NULL, opt_defs[i].id};
	longopts[N_OPTS] = (struct option){NULL, 0, NULL, 0};
	join_command(&o, argc, argv);
	opterr = 0;	/* our own one message below, not getopt's as well */

	while ((c = getopt_long(argc, argv, ":o:qvhV", longopts, NULL)) != -1) {
		const struct opt_def *d = opt_find(c);

		switch (c) {
		case 'q':
			agentxdp_log_level = LOG_ERR;
			break;
		case 'v':
			agentxdp_log_level++;
			break;
		case 'h':
			print_help();
			return 0;
		case 'V':
			printf("agentxdp-synth %s\n", AGENTXDP_VERSION);
			return 0;
		default:
			if (!d)
				return usage_error_getopt(c, argv);
			rc = opt_apply(&o, d, optarg);
			if (rc)
				return rc;
		}
	}
	if (optind < argc)
		return usage_error("unexpected argument '%s'", argv[optind]);
	rc = check_opts(&o, argc, argv);
	if (rc)
		return rc;
	return synth_run(&o);
}
