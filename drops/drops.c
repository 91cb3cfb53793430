/* drops.c: agentxdp-drops, ask the kernel which function dropped the packets, and why. */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <sqlite3.h>

#include "lib/drops/drop_names.h"
#include "lib/util/util.h"
#include "bpf/drops.h"
#include "drops.skel.h"
#include "lib/util/bpf_util.h"
#include "lib/util/log.h"
#include "lib/util/parse_num.h"

#define ETH_P_IP_ 0x0800
#define ETH_P_IPV6_ 0x86DD
#define NS_PER_S UINT64_C(1000000000)
#define BTF_VMLINUX_PATH "/sys/kernel/btf/vmlinux"
#define FLOWS_IN_TABLE 3 /* protocol/port kinds shown per table row */

static const char usage_text[] =
	"Usage: agentxdp-drops [OPTIONS]\n"
	"\n"
	"Ask the kernel who dropped the packets. Every packet the kernel drops goes through\n"
	"the skb:kfree_skb tracepoint, which names the function that freed it and the drop\n"
	"reason (enum skb_drop_reason). agentxdp-drops counts those drops in the kernel by\n"
	"(function, reason) for RoCE v2 traffic (UDP destination port 4791) unless told\n"
	"otherwise, and prints a table sorted by count when it stops: at the end of\n"
	"--duration, on Ctrl-C (SIGINT) or SIGTERM, and every --interval if given.\n"
	"Packets freed as consumed (SKB_CONSUMED) are not drops and are never counted.\n"
	"\n"
	"Filter (default: RoCE v2, UDP destination port 4791; applied in the kernel):\n"
	"  -a, --all              count every drop, not only RoCE; still narrowed by\n"
	"                         --proto, --port and --addr when given\n"
	"  -p, --proto PROTO      udp, tcp or icmp (ICMP and ICMPv6), any port\n"
	"  -P, --port PORT        UDP or TCP destination port (UDP or TCP unless --proto)\n"
	"  -A, --addr IP          IPv4 or IPv6 address, as source or destination (with no\n"
	"                         --proto, --port or --all: RoCE packets to or from IP)\n"
	"\n"
	"Run and output:\n"
	"      --duration TIME    count for TIME, print the table and exit (one-shot mode)\n"
	"      --interval TIME    also print the table every TIME (counts since the start)\n"
	"      --json             JSON lines instead of the table: one object per\n"
	"                         (function, reason) per print; no line means no drop\n"
	"      --db FILE          also add the counts to the SQLite database FILE (tables\n"
	"                         kernel_drop and kernel_drop_run, created if missing)\n"
	"      --list-reasons     print the drop reasons this kernel names, and exit\n"
	"  -q, --quiet            only errors on standard error\n"
	"  -v, --verbose          more detail on standard error (repeat for libbpf's)\n"
	"  -h, --help             show this help and exit\n"
	"  -V, --version          show the version and exit\n"
	"\n"
	"TIME needs a unit: 500ms, 3s, 2m (a bare number is an error). -t and -d are no\n"
	"longer the duration and the interval: use --duration and --interval. Without --duration\n"
	"the count runs until Ctrl-C. Needs root (CAP_BPF and CAP_PERFMON, or\n"
	"CAP_SYS_ADMIN) and a kernel with BTF (/sys/kernel/btf/vmlinux).\n"
	"Exit status: 0 on success, 1 when the kernel side could not be set up or the\n"
	"database not written, 2 on a usage error.\n"
	"\n"
	"Examples:\n"
	"  agentxdp-drops --duration 3s\n"
	"  agentxdp-drops --duration 3s --json\n"
	"  agentxdp-drops --interval 1s\n"
	"  agentxdp-drops --addr 198.18.0.2 --duration 10s --db incident.db\n"
	"  agentxdp-drops --all --proto tcp --port 22 --duration 5s\n"
	"  agentxdp-drops --all --duration 2s\n";

struct drops_opts {
	bool all;
	int l4_proto; /* IPPROTO_*, or -1 when not given */
	uint16_t dport;	  /* 0: not given */
	bool addr_set;
	uint8_t addr[16]; /* IPv6, or IPv4 as ::ffff:a.b.c.d */
	uint64_t duration_ns; /* 0: until a signal */
	uint64_t interval_ns; /* 0: print only at the end */
	bool json;
	const char *db_path;
	bool list_reasons;
	char filter_text[128]; /* the filter, for people and for the database */
};

/* One map row read from the kernel. */
struct drop_row {
	struct drop_key key;
	struct drop_value value;
	uint64_t interval_packets; /* packets since the previous print */
	uint64_t interval_bytes;
};

/* Rows sharing (location, reason): one line of the table, one JSON object. */
struct drop_group {
	size_t first, n; /* rows[first .. first + n), sorted by packets, descending */
	uint64_t packets, bytes, interval_packets;
	uint64_t rx_sk_packets; /* ... of which the tracepoint named the receiving socket */
};

struct snapshot {
	struct drop_row *rows;
	size_t n, cap;
	struct drop_group *groups;
	size_t n_groups;
	uint64_t stats[DROPS_STAT_NR];
};

struct drops_ctx {
	struct drops_opts *opts;
	struct drops_bpf *skel;
	struct ksyms ksyms;
	struct drop_reasons reasons;
	bool tp_has_reason;
	bool tp_has_rx_sk;
	int n_cpus;
	struct snapshot prev; /* the previous print's rows, for interval counts */
	uint64_t start_mono_ns, start_real_ns, last_real_ns;
	sqlite3 *db;
	sqlite3_stmt *insert_drop, *update_run;
	int64_t run_id;
	char host[256];
};

static volatile sig_atomic_t stop_requested;

static void on_stop_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static uint64_t now_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * NS_PER_S + (uint64_t)ts.tv_nsec;
}

static const char *l4_name(uint8_t l4_proto, uint16_t l3_proto)
{
	switch (l4_proto) {
	case IPPROTO_UDP:
		return l3_proto == ETH_P_IPV6_ ? "udp6" : "udp";
	case IPPROTO_TCP:
		return l3_proto == ETH_P_IPV6_ ? "tcp6" : "tcp";
	case IPPROTO_ICMP:
		return "icmp";
	case IPPROTO_ICMPV6:
		return "icmp6";
	default:
		return NULL;
	}
}

/* The protocol as JSON and the database give it: "udp", "tcp", "icmp", "icmpv6", or NULL. */
static const char *l4_base_name(uint8_t l4_proto)
{
	switch (l4_proto) {
	case IPPROTO_UDP:
		return "udp";
	case IPPROTO_TCP:
		return "tcp";
	case IPPROTO_ICMP:
		return "icmp";
	case IPPROTO_ICMPV6:
		return "icmpv6";
	default:
		return NULL;
	}
}

/* "udp/4791", "icmp6", "ipv4 proto 47", "non-ip". */
static void flow_kind_format(const struct drop_key *k, char *buf, size_t size)
{
	const char *name = l4_name(k->l4_proto, k->l3_proto);

	if (!k->l3_proto)
		snprintf(buf, size, "non-ip");
	else if (name && (k->l4_proto == IPPROTO_UDP || k->l4_proto == IPPROTO_TCP))
		snprintf(buf, size, "%s/%u", name, k->dport);
	else if (name)
		snprintf(buf, size, "%s", name);
	else
		snprintf(buf, size, "%s proto %u", k->l3_proto == ETH_P_IPV6_ ? "ipv6" : "ipv4",
			 k->l4_proto);
}

static void describe_filter(struct drops_opts *o)
{
	char addr[INET6_ADDRSTRLEN] = "";
	char *p = o->filter_text;
	size_t left = sizeof(o->filter_text);
	int n;

	if (o->addr_set)
		addr_str(o->addr, addr, sizeof(addr));
	if (o->l4_proto < 0 && !o->dport && !o->addr_set) {
		snprintf(p, left, "all");
		return;
	}
	n = snprintf(p, left, "%s",
		     o->l4_proto == IPPROTO_UDP	   ? "udp"
		     : o->l4_proto == IPPROTO_TCP  ? "tcp"
		     : o->l4_proto == IPPROTO_ICMP ? "icmp"
		     : o->dport			   ? "udp/tcp"
						   : "ip");
	p += n;
	left -= (size_t)n;
	if (o->dport) {
		n = snprintf(p, left, " dport %u", o->dport);
		p += n;
		left -= (size_t)n;
	}
	if (o->addr_set)
		snprintf(p, left, " addr %s", addr);
}

static int parse_addr(const char *s, uint8_t out[16])
{
	struct in_addr v4;

	if (inet_pton(AF_INET, s, &v4) == 1) {
		memset(out, 0, 10);
		out[10] = 0xff;
		out[11] = 0xff;
		memcpy(out + 12, &v4, 4);
		return 0;
	}
	return inet_pton(AF_INET6, s, out) == 1 ? 0 : -EINVAL;
}

enum { OPT_DB = 256, OPT_LIST_REASONS, OPT_DURATION, OPT_INTERVAL, OPT_JSON };

static const struct option long_options[] = {
	{ "all", no_argument, NULL, 'a' },
	{ "proto", required_argument, NULL, 'p' },
	{ "port", required_argument, NULL, 'P' },
	{ "addr", required_argument, NULL, 'A' },
	{ "duration", required_argument, NULL, OPT_DURATION },
	{ "interval", required_argument, NULL, OPT_INTERVAL },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "db", required_argument, NULL, OPT_DB },
	{ "list-reasons", no_argument, NULL, OPT_LIST_REASONS },
	{ "quiet", no_argument, NULL, 'q' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 },
};

/* Fills opts from argv. Returns -1 to go on, or the exit status (0 for --help). */
static int parse_args(int argc, char **argv, struct drops_opts *o)
{
	uint64_t v;
	int c;

	opterr = 0; /* our own one-line messages, not getopt's */
	while ((c = getopt_long(argc, argv, ":ap:P:A:t:d:jqvhV", long_options, NULL)) != -1) {
		switch (c) {
		case 'a':
			o->all = true;
			break;
		case 'p':
			if (!strcmp(optarg, "udp"))
				o->l4_proto = IPPROTO_UDP;
			else if (!strcmp(optarg, "tcp"))
				o->l4_proto = IPPROTO_TCP;
			else if (!strcmp(optarg, "icmp"))
				o->l4_proto = IPPROTO_ICMP;
			else
				return usage_error("invalid --proto '%s' (udp, tcp or icmp)", optarg);
			break;
		case 'P':
			if (parse_u64(optarg, 1, 65535, &v))
				return usage_error("invalid --port '%s' (1 to 65535)", optarg);
			o->dport = (uint16_t)v;
			break;
		case 'A':
			if (parse_addr(optarg, o->addr))
				return usage_error("invalid --addr '%s' (an IPv4 or IPv6 address)",
						   optarg);
			o->addr_set = true;
			break;
		case 't': /* one meaning per letter: -t is a time format (docs/flags.md) */
			return usage_error("-t is no longer the duration: use --duration %s", optarg);
		case 'd':
			return usage_error("-d is no longer the interval: use --interval %s", optarg);
		case OPT_DURATION:
			if (parse_duration_ns(optarg, DURATION_UNIT_REQUIRED, 1000000ull,
					      366 * 86400 * NS_PER_S, &o->duration_ns))
				return usage_error_duration("--duration", optarg,
							    "1ms to 366 days, e.g. 3s or 500ms");
			break;
		case OPT_INTERVAL:
			if (parse_duration_ns(optarg, DURATION_UNIT_REQUIRED, 10000000ull,
					      86400 * NS_PER_S, &o->interval_ns))
				return usage_error_duration("--interval", optarg,
							    "10ms to 1 day, e.g. 1s or 500ms");
			break;
		case 'j':
			/* -j is agentxdp-analyze's thread count: one meaning per letter. */
			return usage_error("-j is no longer JSON lines: use --json");
		case OPT_JSON:
			o->json = true;
			break;
		case OPT_DB:
			o->db_path = optarg;
			break;
		case OPT_LIST_REASONS:
			o->list_reasons = true;
			break;
		case 'q':
			agentxdp_log_level = LOG_ERR;
			break;
		case 'v':
			agentxdp_log_level++;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		case 'V':
			printf("agentxdp-drops %s\n", AGENTXDP_VERSION);
			return 0;
		default:
			return usage_error_getopt(c, argv);
		}
	}
	if (optind < argc)
		return usage_error("unexpected argument '%s'", argv[optind]);
	if (o->l4_proto == IPPROTO_ICMP && o->dport)
		return usage_error("%s", "--port does not apply to --proto icmp");
	/* The RoCE default holds unless the user picked a protocol, a port, or --all. */
	if (!o->all && o->l4_proto < 0 && !o->dport) {
		o->l4_proto = IPPROTO_UDP;
		o->dport = DROPS_ROCE_V2_PORT;
	}
	describe_filter(o);
	return -1;
}

/* The one-line answers to "why can this not run here", before libbpf's longer ones. */
static int check_privileges(void)
{
	static const uint64_t need[] = {
		CAP_MASK(CAP_SYS_ADMIN),
		CAP_MASK(CAP_BPF) | CAP_MASK(CAP_PERFMON),
	};

	return bpf_util_check_caps(need, ARRAY_SIZE(need),
				   "needs CAP_BPF and CAP_PERFMON (or CAP_SYS_ADMIN) to trace kfree_skb: run as root");
}

/* Arguments of the tracepoint, from its BTF prototype btf_trace_kfree_skb(ctx, skb, ...). */
static int tracepoint_args(const struct btf *btf, int *n_args)
{
	const struct btf_type *t;
	int id = btf__find_by_name_kind(btf, "btf_trace_kfree_skb", BTF_KIND_TYPEDEF);

	if (id < 0)
		return -ENOENT;
	t = btf__type_by_id(btf, id);
	while (t && (btf_is_typedef(t) || btf_is_ptr(t)))
		t = btf__type_by_id(btf, t->type);
	if (!t || !btf_is_func_proto(t))
		return -ENOENT;
	*n_args = btf_vlen(t) - 1; /* without the tracepoint's own void *data */
	return 0;
}

/* Adds every value of enum type_name in btf; prefix_filter keeps only matching names. */
static int add_enum_names(struct drop_reasons *dr, const struct btf *btf, int type_id,
			  bool subsystems)
{
	const struct btf_type *t = btf__type_by_id(btf, type_id);
	int err = 0;

	if (!t || !btf_is_enum(t))
		return 0;
	for (int i = 0; i < btf_vlen(t) && !err; i++) {
		const struct btf_enum *e = btf_enum(t) + i;
		const char *name = btf__name_by_offset(btf, e->name_off);
		uint32_t value = (uint32_t)e->val;

		if (!name)
			continue;
		if (subsystems) {
			if (strstr(name, "SUBSYS_NUM"))
				continue;
			err = drop_reasons_add_subsys(dr, value, name);
		} else {
			/* Markers, not reasons. */
			if (strstr(name, "SUBSYS_MASK") || !strcmp(name, "SKB_DROP_REASON_MAX"))
				continue;
			err = drop_reasons_add(dr, value, name);
		}
	}
	return err;
}

/*
 * Module drop reasons (openvswitch, mac80211) carry their subsystem in the high bits and
 * are named in the module's BTF: "enum ovs_drop_reason". Best effort, quietly.
 */
static void add_module_reasons(struct drop_reasons *dr, struct btf *vmlinux_btf)
{
	DIR *dir = opendir("/sys/kernel/btf");
	struct dirent *de;

	if (!dir)
		return;
	while ((de = readdir(dir))) {
		char path[512];
		struct btf *btf;

		if (de->d_name[0] == '.' || !strcmp(de->d_name, "vmlinux"))
			continue;
		snprintf(path, sizeof(path), "/sys/kernel/btf/%s", de->d_name);
		btf = btf__parse_split(path, vmlinux_btf);
		if (!btf)
			continue;
		for (uint32_t id = btf__type_cnt(vmlinux_btf); id < btf__type_cnt(btf); id++) {
			const struct btf_type *t = btf__type_by_id(btf, id);
			const char *name = t ? btf__name_by_offset(btf, t->name_off) : NULL;

			if (t && btf_is_enum(t) && name && strstr(name, "drop_reason") &&
			    strcmp(name, "skb_drop_reason"))
				add_enum_names(dr, btf, (int)id, false);
		}
		btf__free(btf);
	}
	closedir(dir);
}

/* Reads a whole small text file; NULL on error (errno set). */
static char *read_text_file(const char *path)
{
	char *text = NULL, buf[4096];
	size_t len = 0, got;
	FILE *f = fopen(path, "r"), *mem;

	if (!f)
		return NULL;
	mem = open_memstream(&text, &len);
	if (!mem) {
		fclose(f);
		return NULL;
	}
	while ((got = fread(buf, 1, sizeof(buf), f)) > 0)
		fwrite(buf, 1, got, mem);
	fclose(f);
	if (fclose(mem)) {
		free(text);
		return NULL;
	}
	return text;
}

/*
 * Fallback when BTF has no enum skb_drop_reason: the tracepoint's print format, whose
 * __print_symbolic table names every reason. AGENTXDP_DROPS_TRACEFS names another tracefs
 * mount (tests use it to compare both sources).
 */
static int load_reasons_from_tracefs(struct drop_reasons *dr)
{
	const char *dirs[] = { getenv("AGENTXDP_DROPS_TRACEFS"), "/sys/kernel/tracing",
			       "/sys/kernel/debug/tracing" };

	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		char path[512], *text;
		int added;

		if (!dirs[i] || !*dirs[i])
			continue;
		snprintf(path, sizeof(path), "%s/events/skb/kfree_skb/format", dirs[i]);
		text = read_text_file(path);
		if (!text) {
			pr_debug("no tracepoint format at %s: %s\n", path, strerror(errno));
			continue;
		}
		added = drop_reasons_parse_format(dr, text);
		free(text);
		if (added < 0)
			return added;
		if (added > 0) {
			dr->source = "tracefs";
			return 0;
		}
	}
	return -ENOENT;
}

/* Checks the kernel can run the program and learns the names of reasons and functions. */
static int inspect_kernel(struct drops_ctx *ctx)
{
	struct btf *btf = NULL;
	int n_args = 0, err, id;

	if (access(BTF_VMLINUX_PATH, R_OK)) {
		pr_err("kernel BTF %s is missing (%s): needs a kernel built with "
		       "CONFIG_DEBUG_INFO_BTF\n",
		       BTF_VMLINUX_PATH, strerror(errno));
		return -ENOENT;
	}
	btf = btf__load_vmlinux_btf();
	if (!btf) {
		err = -errno;
		pr_err("cannot load kernel BTF from %s: %s\n", BTF_VMLINUX_PATH, strerror(-err));
		return err;
	}
	err = tracepoint_args(btf, &n_args);
	if (err) {
		pr_err("this kernel has no skb:kfree_skb tracepoint (no btf_trace_kfree_skb in its "
		       "BTF)\n");
		goto cleanup;
	}
	ctx->tp_has_reason = n_args >= 3;
	ctx->tp_has_rx_sk = n_args >= 4;
	pr_debug("kfree_skb tracepoint has %d arguments (reason: %s, rx_sk: %s)\n", n_args,
		 ctx->tp_has_reason ? "yes" : "no", ctx->tp_has_rx_sk ? "yes" : "no");

	/* AGENTXDP_DROPS_NO_BTF_NAMES=1: take the names from tracefs, as a kernel without them. */
	id = getenv("AGENTXDP_DROPS_NO_BTF_NAMES") ? -ENOENT
						   : btf__find_by_name_kind(btf, "skb_drop_reason",
									    BTF_KIND_ENUM);
	if (id > 0) {
		err = add_enum_names(&ctx->reasons, btf, id, false);
		if (err)
			goto cleanup;
		ctx->reasons.source = "BTF";
	}
	id = btf__find_by_name_kind(btf, "skb_drop_reason_subsys", BTF_KIND_ENUM);
	if (id > 0) {
		err = add_enum_names(&ctx->reasons, btf, id, true);
		if (err)
			goto cleanup;
	}
	if (id > 0)
		add_module_reasons(&ctx->reasons, btf);
	if (!ctx->reasons.n && ctx->tp_has_reason && load_reasons_from_tracefs(&ctx->reasons))
		pr_warn("no names for drop reasons (neither BTF enum skb_drop_reason nor the "
			"tracefs format): showing numbers\n");
	pr_debug("%zu drop reason names from %s\n", ctx->reasons.n,
		 ctx->reasons.source ? ctx->reasons.source : "nowhere");

cleanup:
	btf__free(btf);
	return err;
}

/* Function names, read once the program counts (the file is big: counting starts sooner). */
static void load_kernel_symbols(struct drops_ctx *ctx)
{
	int err = ksyms_load(&ctx->ksyms, "/proc/kallsyms");

	if (err) /* numbers are still true without names: go on */
		pr_warn("cannot read kernel symbols from /proc/kallsyms: %s; functions shown as "
			"addresses\n",
			err == -EPERM ? "addresses hidden (kernel.kptr_restrict)" : strerror(-err));
	pr_debug("%zu kernel text symbols\n", ctx->ksyms.n);
}

static int reason_value_cmp(const void *a, const void *b)
{
	const struct drop_reason_name *x = a, *y = b;

	return x->value < y->value ? -1 : x->value > y->value;
}

/* --list-reasons: "12 NETFILTER_DROP", one per line, by value; subsystems after. */
static int list_reasons(struct drops_ctx *ctx)
{
	struct drop_reasons *dr = &ctx->reasons;

	if (!dr->n) {
		pr_err("this kernel names no drop reasons (no BTF enum skb_drop_reason, no "
		       "tracefs format)\n");
		return -ENOENT;
	}
	pr_info("%zu drop reasons named by %s\n", dr->n, dr->source);
	qsort(dr->reasons, dr->n, sizeof(*dr->reasons), reason_value_cmp);
	for (size_t i = 0; i < dr->n; i++)
		printf("%u %s\n", dr->reasons[i].value, dr->reasons[i].name);
	for (size_t i = 0; i < dr->n_subsys; i++)
		printf("subsys %u %s\n", dr->subsystems[i].value, dr->subsystems[i].name);
	return 0;
}

static int open_and_attach(struct drops_ctx *ctx)
{
	const struct drops_opts *o = ctx->opts;
	struct drops_bpf *skel;
	int err;

	skel = drops_bpf__open();
	if (!skel) {
		err = -errno;
		pr_err("cannot open the kfree_skb BPF program: %s\n", strerror(-err));
		return err;
	}
	ctx->skel = skel;
	if (skel->rodata->drops_abi_version != DROPS_ABI_VERSION) {
		pr_err("BPF object has record version %u, this program %u: rebuild\n",
		       skel->rodata->drops_abi_version, DROPS_ABI_VERSION);
		return -EINVAL;
	}
	skel->rodata->filter_ip_only = o->l4_proto >= 0 || o->dport || o->addr_set;
	skel->rodata->filter_l4_proto = o->l4_proto >= 0 ? (uint8_t)o->l4_proto
					: o->dport	 ? DROPS_PROTO_WITH_PORTS
							 : DROPS_PROTO_ANY;
	skel->rodata->filter_dport = o->dport;
	skel->rodata->filter_addr_set = o->addr_set;
	memcpy((void *)skel->rodata->filter_addr, o->addr, sizeof(o->addr));

	err = drops_bpf__load(skel);
	if (err) {
		pr_err("cannot load the kfree_skb BPF program: %s (run with -vv for the "
		       "verifier's log)\n",
		       strerror(-err));
		return err;
	}
	err = drops_bpf__attach(skel);
	if (err) {
		pr_err("cannot attach to tracepoint skb:kfree_skb (tp_btf): %s\n", strerror(-err));
		return err;
	}
	/* The id lets bpftool show this program's run time (tests/bench/bench_drops.sh). */
	struct bpf_prog_info info = {};
	__u32 info_len = sizeof(info);

	if (!bpf_obj_get_info_by_fd(bpf_program__fd(skel->progs.handle_kfree_skb), &info,
				    &info_len))
		pr_debug("BPF program id %u attached to skb:kfree_skb\n", info.id);
	return 0;
}

static int row_key_cmp(const void *a, const void *b)
{
	return memcmp(&((const struct drop_row *)a)->key, &((const struct drop_row *)b)->key,
		      sizeof(struct drop_key));
}

/* Order rows by (location, reason), then by packets, descending, inside each group. */
static int row_group_cmp(const void *a, const void *b)
{
	const struct drop_row *x = a, *y = b;

	if (x->key.location != y->key.location)
		return x->key.location < y->key.location ? -1 : 1;
	if (x->key.reason != y->key.reason)
		return x->key.reason < y->key.reason ? -1 : 1;
	if (x->value.packets != y->value.packets)
		return x->value.packets > y->value.packets ? -1 : 1;
	return memcmp(&x->key, &y->key, sizeof(x->key));
}

static const struct drop_row *rows_sorted;

static int group_count_cmp(const void *a, const void *b)
{
	const struct drop_group *x = a, *y = b;
	const struct drop_key *kx = &rows_sorted[x->first].key, *ky = &rows_sorted[y->first].key;

	if (x->packets != y->packets)
		return x->packets > y->packets ? -1 : 1;
	if (kx->location != ky->location)
		return kx->location < ky->location ? -1 : 1;
	return kx->reason < ky->reason ? -1 : kx->reason > ky->reason;
}

static void snapshot_free(struct snapshot *s)
{
	free(s->rows);
	free(s->groups);
	memset(s, 0, sizeof(*s));
}

/* Reads every counter from the kernel and groups the rows for printing. */
static int take_snapshot(struct drops_ctx *ctx, struct snapshot *s)
{
	const struct bpf_map *map = ctx->skel->maps.drop_counts;
	struct drop_key key, next;
	struct drop_key *prev_key = NULL;
	uint64_t *percpu;
	int err = 0;

	while (bpf_map__get_next_key(map, prev_key, &next, sizeof(next)) == 0) {
		struct drop_row *row;

		key = next;
		prev_key = &key;
		err = util_ensure_mem((void **)&s->rows, &s->cap, sizeof(*s->rows), s->n + 1);
		if (err) {
			pr_err("cannot grow the drop table to %zu rows: %s\n", s->n + 1,
			       strerror(-err));
			return err;
		}
		row = &s->rows[s->n];
		memset(row, 0, sizeof(*row));
		row->key = key;
		if (bpf_map__lookup_elem(map, &key, sizeof(key), &row->value, sizeof(row->value),
					 0))
			continue; /* cannot vanish (nothing deletes), but do not count it */
		s->n++;
	}

	/* Interval counts: this row minus the same key at the previous print. */
	for (size_t i = 0; i < s->n; i++) {
		const struct drop_row *old = ctx->prev.n ? bsearch(&s->rows[i], ctx->prev.rows,
								   ctx->prev.n,
								   sizeof(*old), row_key_cmp)
							 : NULL;

		s->rows[i].interval_packets = s->rows[i].value.packets - (old ? old->value.packets : 0);
		s->rows[i].interval_bytes = s->rows[i].value.bytes - (old ? old->value.bytes : 0);
	}

	percpu = calloc((size_t)ctx->n_cpus, sizeof(*percpu));
	if (!percpu)
		return -ENOMEM;
	for (uint32_t i = 0; i < DROPS_STAT_NR; i++) {
		if (bpf_map__lookup_elem(ctx->skel->maps.drop_stats, &i, sizeof(i), percpu,
					 sizeof(*percpu) * (size_t)ctx->n_cpus, 0)) {
			err = -errno;
			pr_err("cannot read the drop_stats map: %s\n", strerror(errno));
			break;
		}
		for (int cpu = 0; cpu < ctx->n_cpus; cpu++)
			s->stats[i] += percpu[cpu];
	}
	free(percpu);
	if (err)
		return err;

	if (s->n) {
		qsort(s->rows, s->n, sizeof(*s->rows), row_group_cmp);
		s->groups = calloc(s->n, sizeof(*s->groups));
		if (!s->groups)
			return -ENOMEM;
	}
	for (size_t i = 0; i < s->n; i++) {
		struct drop_group *g = s->n_groups ? &s->groups[s->n_groups - 1] : NULL;
		const struct drop_row *r = &s->rows[i];

		if (!g || s->rows[g->first].key.location != r->key.location ||
		    s->rows[g->first].key.reason != r->key.reason) {
			g = &s->groups[s->n_groups++];
			g->first = i;
		}
		g->n++;
		g->packets += r->value.packets;
		g->bytes += r->value.bytes;
		g->interval_packets += r->interval_packets;
		g->rx_sk_packets += r->value.rx_sk_pkts;
	}
	rows_sorted = s->rows;
	if (s->n_groups)
		qsort(s->groups, s->n_groups, sizeof(*s->groups), group_count_cmp);
	return 0;
}

static void reason_text(const struct drops_ctx *ctx, uint32_t reason, char *buf, size_t size)
{
	if (!ctx->tp_has_reason)
		snprintf(buf, size, "-");
	else
		drop_reason_format(&ctx->reasons, reason, buf, size);
}

static void print_table(const struct drops_ctx *ctx, const struct snapshot *s, uint64_t elapsed_ns,
			bool final)
{
	char when[32] = "", reason[64], func[192], flow[48];
	time_t t = (time_t)(ctx->last_real_ns / NS_PER_S);
	struct tm tm;

	if (localtime_r(&t, &tm))
		strftime(when, sizeof(when), "%H:%M:%S", &tm);
	printf("%s kfree_skb drops, filter: %s, %.1f s%s: %" PRIu64 " counted, %" PRIu64
	       " drops of any kind seen\n",
	       when, ctx->opts->filter_text, (double)elapsed_ns / 1e9, final ? " (final)" : "",
	       s->stats[DROPS_STAT_MATCHED], s->stats[DROPS_STAT_SEEN]);
	if (!s->n_groups) {
		printf("  no drop matched the filter\n");
	} else {
		printf("%10s  %-24s %-40s %s\n", "COUNT", "REASON", "FUNCTION", "PACKETS BY PROTOCOL");
		for (size_t g = 0; g < s->n_groups; g++) {
			const struct drop_group *grp = &s->groups[g];
			const struct drop_key *k = &s->rows[grp->first].key;

			reason_text(ctx, k->reason, reason, sizeof(reason));
			ksyms_format(&ctx->ksyms, k->location, func, sizeof(func));
			printf("%10" PRIu64 "  %-24s %-40s", grp->packets, reason, func);
			for (size_t i = 0; i < grp->n && i < FLOWS_IN_TABLE; i++) {
				const struct drop_row *r = &s->rows[grp->first + i];

				flow_kind_format(&r->key, flow, sizeof(flow));
				printf("%s%s %" PRIu64, i ? ", " : " ", flow, (uint64_t)r->value.packets);
			}
			if (grp->n > FLOWS_IN_TABLE)
				printf(", +%zu more", grp->n - FLOWS_IN_TABLE);
			printf("\n");
		}
	}
	if (s->stats[DROPS_STAT_LOST])
		printf("  warning: %" PRIu64 " matching drops not counted: the kernel table of "
		       "%d rows is full\n",
		       s->stats[DROPS_STAT_LOST], DROPS_MAX_KEYS);
	fflush(stdout);
}

static void format_utc(uint64_t real_ns, char *buf, size_t size)
{
	time_t t = (time_t)(real_ns / NS_PER_S);
	struct tm tm;
	char base[32] = "";

	if (gmtime_r(&t, &tm))
		strftime(base, sizeof(base), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, size, "%s.%06" PRIu64 "Z", base, (real_ns % NS_PER_S) / 1000);
}

static void print_json(const struct drops_ctx *ctx, const struct snapshot *s, uint64_t elapsed_ns,
		       bool final)
{
	char ts[48], reason[64], func[192];

	format_utc(ctx->last_real_ns, ts, sizeof(ts));
	for (size_t g = 0; g < s->n_groups; g++) {
		const struct drop_group *grp = &s->groups[g];
		const struct drop_key *k = &s->rows[grp->first].key;
		const struct ksym *sym = ksyms_lookup(&ctx->ksyms, k->location);
		const char *mod;

		reason_text(ctx, k->reason, reason, sizeof(reason));
		printf("{\"ts\":\"%s\",\"elapsed_s\":%.3f,\"function\":", ts, (double)elapsed_ns / 1e9);
		if (sym) {
			/* The name without its " [module]". */
			mod = strchr(sym->name, ' ');
			snprintf(func, sizeof(func), "%.*s",
				 mod ? (int)(mod - sym->name) : (int)strlen(sym->name), sym->name);
			json_fput_string(stdout, func);
			printf(",\"offset\":%" PRIu64, (uint64_t)(k->location - sym->addr));
		} else {
			printf("null,\"offset\":null");
		}
		ksyms_format(&ctx->ksyms, k->location, func, sizeof(func));
		printf(",\"symbol\":");
		json_fput_string(stdout, func);
		printf(",\"location\":\"0x%" PRIx64 "\",\"reason\":", (uint64_t)k->location);
		json_fput_string(stdout, reason);
		printf(",\"reason_code\":%u,\"count\":%" PRIu64 ",\"interval_count\":%" PRIu64
		       ",\"bytes\":%" PRIu64,
		       k->reason, grp->packets, grp->interval_packets, grp->bytes);
		/* rx_sk exists from 6.12: drops the kernel charged to a receiving socket. */
		if (ctx->tp_has_rx_sk)
			printf(",\"socket_count\":%" PRIu64, grp->rx_sk_packets);
		else
			printf(",\"socket_count\":null");
		printf(",\"flows\":[");
		for (size_t i = 0; i < grp->n; i++) {
			const struct drop_row *r = &s->rows[grp->first + i];
			const char *l4 = l4_base_name(r->key.l4_proto);

			printf("%s{\"l3\":\"%s\",\"proto\":", i ? "," : "",
			       !r->key.l3_proto			  ? "none"
			       : r->key.l3_proto == ETH_P_IPV6_ ? "ipv6"
								  : "ipv4");
			if (l4)
				printf("\"%s\"", l4);
			else
				printf("%u", r->key.l4_proto);
			printf(",\"dport\":%u,\"count\":%" PRIu64 "}", r->key.dport,
			       (uint64_t)r->value.packets);
		}
		printf("],\"filter\":");
		json_fput_string(stdout, ctx->opts->filter_text);
		printf(",\"final\":%s}\n", final ? "true" : "false");
	}
	fflush(stdout);
}

static const char kernel_drop_schema[] =
	"CREATE TABLE IF NOT EXISTS kernel_drop_run ("
	" run_id INTEGER PRIMARY KEY,"
	" start_ns INTEGER NOT NULL,"
	" end_ns INTEGER NOT NULL,"
	" filter TEXT NOT NULL,"
	" host TEXT,"
	" kernel TEXT,"
	" drops_seen INTEGER NOT NULL DEFAULT 0,"
	" drops_counted INTEGER NOT NULL DEFAULT 0,"
	" drops_not_ip INTEGER NOT NULL DEFAULT 0,"
	" drops_lost INTEGER NOT NULL DEFAULT 0);"
	"CREATE TABLE IF NOT EXISTS kernel_drop ("
	" run_id INTEGER NOT NULL REFERENCES kernel_drop_run(run_id),"
	" ts_ns INTEGER NOT NULL,"
	" interval_ns INTEGER NOT NULL,"
	" function TEXT,"
	" offset INTEGER,"
	" location TEXT NOT NULL,"
	" reason TEXT NOT NULL,"
	" reason_code INTEGER NOT NULL,"
	" l3_proto TEXT NOT NULL,"
	" protocol TEXT NOT NULL,"
	" dport INTEGER NOT NULL,"
	" count INTEGER NOT NULL,"
	" bytes INTEGER NOT NULL,"
	" filter TEXT NOT NULL);"
	"CREATE INDEX IF NOT EXISTS kernel_drop_ts ON kernel_drop(ts_ns);";

static int db_fail(struct drops_ctx *ctx, const char *what)
{
	pr_err("database %s: %s: %s\n", ctx->opts->db_path, what,
	       ctx->db ? sqlite3_errmsg(ctx->db) : "out of memory");
	return -EIO;
}

static int db_open(struct drops_ctx *ctx)
{
	struct utsname uts;
	sqlite3_stmt *insert_run = NULL;
	char *errmsg = NULL;
	int err = 0;

	if (sqlite3_open_v2(ctx->opts->db_path, &ctx->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE,
			    NULL) != SQLITE_OK)
		return db_fail(ctx, "cannot open");
	sqlite3_busy_timeout(ctx->db, 5000); /* the analyzer may be writing the same file */
	if (sqlite3_exec(ctx->db, kernel_drop_schema, NULL, NULL, &errmsg) != SQLITE_OK) {
		pr_err("database %s: cannot create tables kernel_drop, kernel_drop_run: %s\n",
		       ctx->opts->db_path, errmsg ? errmsg : "?");
		sqlite3_free(errmsg);
		return -EIO;
	}
	if (sqlite3_prepare_v2(ctx->db,
			       "INSERT INTO kernel_drop_run (start_ns, end_ns, filter, host, kernel)"
			       " VALUES (?, ?, ?, ?, ?)",
			       -1, &insert_run, NULL) != SQLITE_OK)
		return db_fail(ctx, "cannot prepare the run insert");
	if (uname(&uts))
		memset(&uts, 0, sizeof(uts));
	sqlite3_bind_int64(insert_run, 1, (sqlite3_int64)ctx->start_real_ns);
	sqlite3_bind_int64(insert_run, 2, (sqlite3_int64)ctx->start_real_ns);
	sqlite3_bind_text(insert_run, 3, ctx->opts->filter_text, -1, SQLITE_STATIC);
	sqlite3_bind_text(insert_run, 4, ctx->host, -1, SQLITE_STATIC);
	sqlite3_bind_text(insert_run, 5, uts.release, -1, SQLITE_TRANSIENT);
	if (sqlite3_step(insert_run) != SQLITE_DONE) {
		err = db_fail(ctx, "cannot insert into kernel_drop_run");
		goto cleanup;
	}
	ctx->run_id = sqlite3_last_insert_rowid(ctx->db);
	if (sqlite3_prepare_v2(ctx->db,
			       "INSERT INTO kernel_drop (run_id, ts_ns, interval_ns, function, offset,"
			       " location, reason, reason_code, l3_proto, protocol, dport, count,"
			       " bytes, filter) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
			       -1, &ctx->insert_drop, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(ctx->db,
			       "UPDATE kernel_drop_run SET end_ns = ?, drops_seen = ?,"
			       " drops_counted = ?, drops_not_ip = ?, drops_lost = ?"
			       " WHERE run_id = ?",
			       -1, &ctx->update_run, NULL) != SQLITE_OK)
		err = db_fail(ctx, "cannot prepare statements");
cleanup:
	sqlite3_finalize(insert_run);
	return err;
}

/* Adds this interval's counts (rows with new drops) in one transaction. */
static int db_write(struct drops_ctx *ctx, const struct snapshot *s, uint64_t interval_ns)
{
	sqlite3_stmt *ins = ctx->insert_drop, *upd = ctx->update_run;
	char reason[64], func[192], flow[48];

	if (sqlite3_exec(ctx->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
		return db_fail(ctx, "cannot begin a transaction");
	for (size_t i = 0; i < s->n; i++) {
		const struct drop_row *r = &s->rows[i];
		const struct ksym *sym = ksyms_lookup(&ctx->ksyms, r->key.location);
		const char *l4 = l4_base_name(r->key.l4_proto);
		char location[24];

		if (!r->interval_packets)
			continue;
		reason_text(ctx, r->key.reason, reason, sizeof(reason));
		snprintf(location, sizeof(location), "0x%" PRIx64, (uint64_t)r->key.location);
		sqlite3_reset(ins);
		sqlite3_bind_int64(ins, 1, ctx->run_id);
		sqlite3_bind_int64(ins, 2, (sqlite3_int64)ctx->last_real_ns);
		sqlite3_bind_int64(ins, 3, (sqlite3_int64)interval_ns);
		if (sym) {
			const char *mod = strchr(sym->name, ' ');

			snprintf(func, sizeof(func), "%.*s",
				 mod ? (int)(mod - sym->name) : (int)strlen(sym->name), sym->name);
			sqlite3_bind_text(ins, 4, func, -1, SQLITE_TRANSIENT);
			sqlite3_bind_int64(ins, 5, (sqlite3_int64)(r->key.location - sym->addr));
		} else {
			sqlite3_bind_null(ins, 4);
			sqlite3_bind_null(ins, 5);
		}
		sqlite3_bind_text(ins, 6, location, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(ins, 7, reason, -1, SQLITE_TRANSIENT);
		sqlite3_bind_int64(ins, 8, r->key.reason);
		sqlite3_bind_text(ins, 9,
				  !r->key.l3_proto		   ? "none"
				  : r->key.l3_proto == ETH_P_IPV6_ ? "ipv6"
								   : "ipv4",
				  -1, SQLITE_STATIC);
		if (l4)
			snprintf(flow, sizeof(flow), "%s", l4);
		else
			snprintf(flow, sizeof(flow), "%u", r->key.l4_proto);
		sqlite3_bind_text(ins, 10, flow, -1, SQLITE_TRANSIENT);
		sqlite3_bind_int(ins, 11, r->key.dport);
		sqlite3_bind_int64(ins, 12, (sqlite3_int64)r->interval_packets);
		sqlite3_bind_int64(ins, 13, (sqlite3_int64)r->interval_bytes);
		sqlite3_bind_text(ins, 14, ctx->opts->filter_text, -1, SQLITE_STATIC);
		if (sqlite3_step(ins) != SQLITE_DONE)
			goto fail;
	}
	sqlite3_reset(upd);
	sqlite3_bind_int64(upd, 1, (sqlite3_int64)ctx->last_real_ns);
	sqlite3_bind_int64(upd, 2, (sqlite3_int64)s->stats[DROPS_STAT_SEEN]);
	sqlite3_bind_int64(upd, 3, (sqlite3_int64)s->stats[DROPS_STAT_MATCHED]);
	sqlite3_bind_int64(upd, 4, (sqlite3_int64)s->stats[DROPS_STAT_NOT_IP]);
	sqlite3_bind_int64(upd, 5, (sqlite3_int64)s->stats[DROPS_STAT_LOST]);
	sqlite3_bind_int64(upd, 6, ctx->run_id);
	if (sqlite3_step(upd) != SQLITE_DONE)
		goto fail;
	if (sqlite3_exec(ctx->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
		goto fail;
	return 0;
fail:
	db_fail(ctx, "cannot write kernel_drop rows");
	sqlite3_exec(ctx->db, "ROLLBACK", NULL, NULL, NULL);
	return -EIO;
}

/* One print: read the kernel's counters, show them, store them. */
static int report(struct drops_ctx *ctx, bool final)
{
	struct snapshot s = {};
	uint64_t prev_real_ns = ctx->last_real_ns;
	uint64_t elapsed_ns;
	int err;

	err = take_snapshot(ctx, &s);
	if (err) {
		snapshot_free(&s);
		return err;
	}
	ctx->last_real_ns = now_ns(CLOCK_REALTIME);
	elapsed_ns = now_ns(CLOCK_MONOTONIC) - ctx->start_mono_ns;
	if (ctx->opts->json)
		print_json(ctx, &s, elapsed_ns, final);
	else
		print_table(ctx, &s, elapsed_ns, final);
	if (ctx->db)
		err = db_write(ctx, &s, ctx->last_real_ns - prev_real_ns);
	if (final && s.stats[DROPS_STAT_LOST])
		pr_warn("%" PRIu64 " matching drops were not counted: the kernel table is full\n",
			s.stats[DROPS_STAT_LOST]);

	/* Keep this print's rows, in key order, for the next interval counts. */
	free(s.groups);
	s.groups = NULL;
	s.n_groups = 0;
	if (s.n)
		qsort(s.rows, s.n, sizeof(*s.rows), row_key_cmp);
	snapshot_free(&ctx->prev);
	ctx->prev = s;
	return err;
}

static int count_drops(struct drops_ctx *ctx)
{
	const struct drops_opts *o = ctx->opts;
	uint64_t next_print_ns, end_ns, now;
	int err = 0;

	pr_info("counting kfree_skb drops (filter: %s)%s\n", o->filter_text,
		o->duration_ns ? "" : "; Ctrl-C prints the table and exits");
	load_kernel_symbols(ctx);
	next_print_ns = o->interval_ns ? ctx->start_mono_ns + o->interval_ns : UINT64_MAX;
	end_ns = o->duration_ns ? ctx->start_mono_ns + o->duration_ns : UINT64_MAX;
	while (!stop_requested) {
		struct timespec nap = { 0, 100 * 1000 * 1000 };
		uint64_t wake;

		now = now_ns(CLOCK_MONOTONIC);
		if (now >= end_ns)
			break;
		if (now >= next_print_ns) {
			err = report(ctx, false);
			if (err)
				return err;
			next_print_ns += o->interval_ns;
			continue;
		}
		/* Sleep to the next event, at most 100 ms so a signal is seen soon. */
		wake = next_print_ns < end_ns ? next_print_ns : end_ns;
		if (wake - now < (uint64_t)nap.tv_nsec)
			nap.tv_nsec = (long)(wake - now);
		nanosleep(&nap, NULL);
	}
	return report(ctx, true);
}

int main(int argc, char **argv)
{
	struct drops_opts opts = { .l4_proto = -1 };
	struct drops_ctx ctx = { .opts = &opts };
	struct sigaction sa = { .sa_handler = on_stop_signal };
	int rc, err;

	agentxdp_prog = "agentxdp-drops";
	umask(027); /* outputs 0640, folders 0750: traces and counters can be sensitive */
	rc = parse_args(argc, argv, &opts);
	if (rc >= 0)
		return rc;
	bpf_util_set_libbpf_print();

	if (!opts.list_reasons && check_privileges())
		return 1;
	err = inspect_kernel(&ctx);
	if (err)
		goto cleanup;
	if (opts.list_reasons) {
		err = list_reasons(&ctx);
		goto cleanup;
	}
	ctx.n_cpus = libbpf_num_possible_cpus();
	if (ctx.n_cpus <= 0) {
		pr_err("cannot count the possible CPUs: %s\n", strerror(-ctx.n_cpus));
		err = ctx.n_cpus ? ctx.n_cpus : -EINVAL;
		goto cleanup;
	}
	if (gethostname(ctx.host, sizeof(ctx.host) - 1))
		ctx.host[0] = '\0';

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	err = open_and_attach(&ctx);
	if (err)
		goto cleanup;
	ctx.start_mono_ns = now_ns(CLOCK_MONOTONIC);
	ctx.start_real_ns = now_ns(CLOCK_REALTIME);
	ctx.last_real_ns = ctx.start_real_ns;
	if (opts.db_path) {
		err = db_open(&ctx);
		if (err)
			goto cleanup;
	}
	err = count_drops(&ctx);
cleanup:
	sqlite3_finalize(ctx.insert_drop);
	sqlite3_finalize(ctx.update_run);
	if (ctx.db && sqlite3_close(ctx.db) != SQLITE_OK)
		pr_err("database %s: cannot close: %s\n", opts.db_path, sqlite3_errmsg(ctx.db));
	drops_bpf__destroy(ctx.skel);
	snapshot_free(&ctx.prev);
	ksyms_free(&ctx.ksyms);
	drop_reasons_free(&ctx.reasons);
	return err ? 1 : 0;
}
