/* roce_emu.c: agentxdp-roce-emu, a RoCE v2 RC traffic emulator over UDP port 4791 (perftest-like). */
#include <assert.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/util/log.h"
#include "lib/util/parse_num.h"
#include "lib/util/util.h"
#include "lib/decode/roce_pkt.h"
#include "testbed/roce_emu.h"

static const char usage_text[] =
	"Usage: agentxdp-roce-emu --server -b ADDR [OPTIONS]\n"
	"       agentxdp-roce-emu -b ADDR -c PEER [OPTIONS]\n"
	"\n"
	"Emulate RoCE v2 Reliable Connection traffic between two hosts with ordinary UDP\n"
	"sockets: the kernel builds Ethernet/IP/UDP, the emulator sends real IB transport\n"
	"headers (BTH, RETH, AETH, ICRC) to UDP port 4791. Requesters post RDMA WRITE, READ or\n"
	"SEND operations; responders check PSNs, coalesce ACKs, NAK a sequence gap once\n"
	"(go-back-N), answer READs, and send a CNP when a packet arrives ECN CE-marked.\n"
	"Requesters retransmit on NAK and on the local ACK timeout, give up after --retry-cnt\n"
	"timeouts (the QP goes to the error state), and slow down on CNPs (DCQCN-like).\n"
	"Every QP sends from its own UDP source port (ECMP entropy). Like perftest, the two\n"
	"sides meet first over TCP (--port) to exchange QP numbers and PSNs; the client's\n"
	"options decide the test. It is not an RDMA stack: no memory is read or written.\n"
	"\n"
	"The short options are perftest's letters on purpose (ib_write_bw and friends), so a\n"
	"perftest command line carries over: -q is queue pairs, -c connects, -t is the\n"
	"operation, -D the duration, unlike the other agentxdp tools (docs/flags.md).\n"
	"Unlike perftest, a duration needs a unit: -D 5s, not -D 5.\n"
	"\n"
	"Options:\n"
	"  -b, --bind ADDR        local IPv4 or IPv6 address (required)\n"
	"      --server           wait for a client; with --once, serve one test and exit\n"
	"      --once             with --server: exit after one test\n"
	"  -c, --connect PEER     run the test against the server at PEER\n"
	"  -p, --port PORT        TCP port of the control connection (default 18515)\n"
	"  -t, --op OP            write, read or send (default write)\n"
	"  -m, --mode MODE        bw (keep --tx-depth operations in flight) or lat (one at\n"
	"                         a time per QP: ping-pong latency); default bw\n"
	"  -D, --duration TIME    post operations for this long (default 5s; e.g. 2s,\n"
	"                         500ms; a bare number is an error)\n"
	"  -n, --iters N          post N operations per QP instead of a duration\n"
	"  -q, --qps N            queue pairs per direction (1-32, default 1)\n"
	"  -s, --size BYTES       message size (1 to 1M, default 65536; 4k, 64k accepted)\n"
	"      --mtu BYTES        IB path MTU: 256, 512, 1024, 2048 or 4096 (default 1024)\n"
	"      --tx-depth N       operations in flight per QP in bw mode (1-64, default 64)\n"
	"      --bidir            both sides run requesters (like perftest -b)\n"
	"      --timeout DURATION local ACK timeout (default 67ms: IB timeout 14)\n"
	"      --retry-cnt N      timeouts before the QP fails (0-7, default 7)\n"
	"      --dscp N           DSCP of every packet (default 26)\n"
	"      --no-ecn           send Not-ECT instead of ECT(0)\n"
	"      --line-rate RATE   DCQCN maximum rate, e.g. 10gbit (default 10gbit)\n"
	"      --quiet            only errors on standard error\n"
	"  -v, --verbose          more detail on standard error\n"
	"  -h, --help             show this help and exit\n"
	"  -V, --version          show the version and exit\n"
	"\n"
	"Output (client, and server with --bidir): perftest's tables, then one line\n"
	"  STATS side=... ops_completed=N bytes_completed=N ... failed_qps=N\n"
	"with every counter (retransmissions, timeouts, NAKs, CNPs, ECN CE seen).\n"
	"Latency is per operation, from posting to the ACK or last READ response: a round\n"
	"trip, not halved. BW is in MB/sec of 2^20 bytes, as perftest reports it.\n"
	"Exit status: 0 when every QP finished, 1 when a QP failed (retry counter exceeded)\n"
	"or the peer went away, 2 on a usage error.\n"
	"\n"
	"Examples:\n"
	"  ip netns exec axtb-b agentxdp-roce-emu --server --once -b 198.18.0.2 &\n"
	"  ip netns exec axtb-a agentxdp-roce-emu -b 198.18.0.1 -c 198.18.0.2 -t write -D 5s -q 2\n"
	"  agentxdp-roce-emu -b 198.18.0.1 -c 198.18.0.2 -m lat -s 64 -n 10000\n"
	"  agentxdp-roce-emu -b fd99::1 -c fd99::2 -t read --bidir -D 2s\n";

volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static void session_close(struct emu_session *s)
{
	for (uint32_t i = 0; i < s->nqps; i++) {
		close(s->qps[i].fd);
		free(s->qps[i].rc);
	}
	s->nqps = 0;
	if (s->ctl_fd >= 0)
		close(s->ctl_fd);
	s->ctl_fd = -1;
	if (s->rx_fd >= 0)
		close(s->rx_fd);
	s->rx_fd = -1;
	free(s->lat.samples_ns);
	s->lat.samples_ns = NULL;
}

static int session_init(struct emu_session *s, const struct emu_config *cfg)
{
	memset(s, 0, sizeof(*s));
	s->cfg = cfg;
	s->ctl_fd = s->rx_fd = -1;
	s->family = parse_addr(cfg->bind_addr, 0, &s->local, &s->addr_len);
	s->qpn_base = 0x100 + (random_u32() % 0xfff0) * 16;
	s->lat.cap = EMU_MAX_LAT_SAMPLES;
	s->lat.samples_ns = malloc(s->lat.cap * sizeof(uint64_t));
	if (!s->lat.samples_ns) {
		pr_err("out of memory\n");
		return -1;
	}
	s->rx_fd = open_rx_socket(s);
	return s->rx_fd < 0 ? -1 : 0;
}

static int run_client(const struct emu_config *cfg)
{
	struct emu_session s;
	struct sockaddr_storage ctl;
	socklen_t ctl_len;
	uint64_t give_up;
	int rc = 1;

	if (session_init(&s, cfg) < 0)
		goto cleanup;
	if (parse_addr(cfg->peer_addr, ROCE_V2_UDP_PORT, &s.peer, &ctl_len) != s.family) {
		pr_err("--connect %s and --bind %s are not the same address family\n", cfg->peer_addr,
		       cfg->bind_addr);
		goto cleanup;
	}
	ctl = s.peer;
	set_port(&ctl, cfg->ctl_port);
	/* The server may still be starting: retry the control connection for 10 s. */
	give_up = mono_ns() + 10000000000ull;
	for (;;) {
		struct sockaddr_storage src = s.local;
		s.ctl_fd = socket(s.family, SOCK_STREAM | SOCK_CLOEXEC, 0);
		set_port(&src, 0);
		if (s.ctl_fd >= 0 && bind(s.ctl_fd, (struct sockaddr *)&src, s.addr_len) == 0 &&
		    connect(s.ctl_fd, (struct sockaddr *)&ctl, ctl_len) == 0)
			break;
		if (mono_ns() > give_up || stop_requested) {
			pr_err("cannot reach the server at %s port %u: %s\n", cfg->peer_addr, cfg->ctl_port,
			       strerror(errno));
			goto cleanup;
		}
		if (s.ctl_fd >= 0)
			close(s.ctl_fd);
		s.ctl_fd = -1;
		usleep(100000);
	}
	if (client_exchange(&s) < 0)
		goto cleanup;
	print_header(&s);
	rc = run_loop(&s) < 0 ? 1 : 0;
	if (s.peer_gone)
		pr_err("the server closed the control connection before the test ended\n");
	if (print_results(&s, "client") < 0)
		rc = 1;
cleanup:
	session_close(&s);
	return rc;
}

static int run_server(const struct emu_config *cfg)
{
	struct sockaddr_storage la;
	socklen_t la_len;
	int lfd, on = 1, rc = 0;

	if (parse_addr(cfg->bind_addr, cfg->ctl_port, &la, &la_len) < 0)
		return 2;
	lfd = socket(la.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (lfd < 0) {
		pr_err("socket(TCP): %s\n", strerror(errno));
		return 1;
	}
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
	if (bind(lfd, (struct sockaddr *)&la, la_len) < 0 || listen(lfd, 4) < 0) {
		pr_err("listen on %s port %u: %s\n", cfg->bind_addr, cfg->ctl_port, strerror(errno));
		close(lfd);
		return 1;
	}
	pr_info("waiting for a client on %s port %u\n", cfg->bind_addr, cfg->ctl_port);
	while (!stop_requested) {
		struct emu_config run_cfg = *cfg;
		struct emu_session s;
		int cfd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);

		if (cfd < 0) {
			if (errno == EINTR)
				continue;
			pr_err("accept: %s\n", strerror(errno));
			rc = 1;
			break;
		}
		if (session_init(&s, &run_cfg) < 0) {
			close(cfd);
			session_close(&s);
			rc = 1;
			break;
		}
		s.ctl_fd = cfd;
		if (parse_addr(cfg->bind_addr, 0, &s.peer, &la_len) >= 0) {
			struct sockaddr_storage pa;
			socklen_t pl = sizeof(pa);
			getpeername(cfd, (struct sockaddr *)&pa, &pl);
			s.peer = pa;
			set_port(&s.peer, ROCE_V2_UDP_PORT);
		}
		rc = 1;
		if (server_exchange(&s, &run_cfg) == 0) {
			if (run_cfg.bidir)
				print_header(&s);
			rc = run_loop(&s) < 0 ? 1 : 0;
			if (print_results(&s, "server") < 0)
				rc = 1;
		}
		session_close(&s);
		if (cfg->once)
			break;
	}
	close(lfd);
	return rc;
}

enum {
	OPT_SERVER = 256,
	OPT_ONCE,
	OPT_MTU,
	OPT_DEPTH,
	OPT_BIDIR,
	OPT_TIMEOUT,
	OPT_RETRY,
	OPT_DSCP,
	OPT_NO_ECN,
	OPT_LINE_RATE,
	OPT_QUIET,
};

/* "10gbit", "100mbit", "1.5gbit", "500kbit" or bits per second. */
static int parse_rate_bps(const char *s, uint64_t *out)
{
	static const struct {
		const char *suffix;
		double scale;
	} units[] = { { "gbit", 1e9 }, { "mbit", 1e6 }, { "kbit", 1e3 }, { "bit", 1 } };
	char num[64];
	size_t n = strlen(s);
	double v;

	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		size_t sl = strlen(units[i].suffix);
		if (n > sl && strcmp(s + n - sl, units[i].suffix) == 0 && n - sl < sizeof(num)) {
			memcpy(num, s, n - sl);
			num[n - sl] = 0;
			if (parse_double(num, 1e-3, 1e6, &v))
				return -EINVAL;
			*out = (uint64_t)(v * units[i].scale);
			return *out >= 1000000 ? 0 : -ERANGE;
		}
	}
	if (parse_double(s, 1e6, 1e13, &v))
		return -EINVAL;
	*out = (uint64_t)v;
	return 0;
}

static int opt_op(struct emu_config *c, const char *arg)
{
	if (!strcmp(arg, "write"))
		c->op = EMU_OP_WRITE;
	else if (!strcmp(arg, "read"))
		c->op = EMU_OP_READ;
	else if (!strcmp(arg, "send"))
		c->op = EMU_OP_SEND;
	else
		return -EINVAL;
	return 0;
}

static int opt_mode(struct emu_config *c, const char *arg)
{
	if (!strcmp(arg, "bw"))
		c->lat_mode = false;
	else if (!strcmp(arg, "lat"))
		c->lat_mode = true;
	else
		return -EINVAL;
	return 0;
}

static int opt_duration(struct emu_config *c, const char *arg)
{
	return parse_duration_ns(arg, DURATION_UNIT_REQUIRED, 1000000ull, 86400000000000ull,
				 &c->duration_ns);
}

static int opt_size(struct emu_config *c, const char *arg)
{
	uint64_t v;
	int rc = parse_size_bytes(arg, 1, 1u << 20, &v);

	if (!rc)
		c->size_bytes = (uint32_t)v;
	return rc;
}

static int opt_mtu(struct emu_config *c, const char *arg)
{
	uint64_t v;

	if (parse_u64(arg, 256, 4096, &v) || (v & (v - 1)))
		return -EINVAL;
	c->mtu = (uint32_t)v;
	return 0;
}

static int opt_timeout(struct emu_config *c, const char *arg)
{
	return parse_duration_ns(arg, DURATION_UNIT_REQUIRED, 100000ull, 60000000000ull,
				 &c->timeout_ns);
}

static int opt_line_rate(struct emu_config *c, const char *arg)
{
	return parse_rate_bps(arg, &c->line_rate_bps);
}

/* What an option does with its argument. */
enum opt_type {
	OT_ACTION,		/* --quiet -v -h -V: parse_options() acts on them */
	OT_STR,			/* the argument itself (addresses: check_config() checks them) */
	OT_TRUE, OT_FALSE,	/* a bool set */
	OT_U8, OT_U16, OT_U32, OT_U64, /* parse_u64() within [min, max] */
	OT_FN,			/* parse(): names, durations, sizes, rates */
};

/* The one option table: getopt's tables are made from it, and it fills struct emu_config. */
struct emu_opt {
	const char *name;
	int has_arg;
	int id;			/* the short option, or OPT_* */
	enum opt_type type;
	size_t off;		/* the struct emu_config field it fills */
	uint64_t min, max;	/* OT_U*: the bounds */
	int (*parse)(struct emu_config *c, const char *arg); /* OT_FN: 0, or < 0 for a bad value */
	const char *hint;	/* "invalid --NAME 'ARG' (HINT)"; NULL: "(MIN to MAX)" */
};

#define FIELD(t, f) t, offsetof(struct emu_config, f)
#define NUM(t, f, lo, hi, hint) FIELD(t, f), lo, hi, NULL, hint
#define VAL(t, f) FIELD(t, f), 0, 0, NULL, NULL
#define FN(fn, hint) OT_FN, 0, 0, 0, fn, hint
#define ACTION OT_ACTION, 0, 0, 0, NULL, NULL

static const struct emu_opt emu_opts[] = {
	{ "bind", 1, 'b', VAL(OT_STR, bind_addr) },
	{ "server", 0, OPT_SERVER, VAL(OT_TRUE, server) },
	{ "once", 0, OPT_ONCE, VAL(OT_TRUE, once) },
	{ "connect", 1, 'c', VAL(OT_STR, peer_addr) },
	{ "port", 1, 'p', NUM(OT_U16, ctl_port, 1, 65535, NULL) },
	{ "op", 1, 't', FN(opt_op, "write, read or send") },
	{ "mode", 1, 'm', FN(opt_mode, "bw or lat") },
	{ "duration", 1, 'D', FN(opt_duration, "1ms to 1 day with a unit, e.g. 5s or 500ms") },
	{ "iters", 1, 'n', NUM(OT_U64, iters, 1, 1000000000000ull, "1 or more") },
	{ "qps", 1, 'q', NUM(OT_U32, qps, 1, EMU_MAX_QPS / 2, NULL) },
	{ "size", 1, 's', FN(opt_size, "1 to 1M bytes") },
	{ "mtu", 1, OPT_MTU, FN(opt_mtu, "256, 512, 1024, 2048 or 4096") },
	{ "tx-depth", 1, OPT_DEPTH, NUM(OT_U32, depth, 1, EMU_MAX_DEPTH, NULL) },
	{ "bidir", 0, OPT_BIDIR, VAL(OT_TRUE, bidir) },
	{ "timeout", 1, OPT_TIMEOUT, FN(opt_timeout, "100us to 60s with a unit, e.g. 16ms") },
	{ "retry-cnt", 1, OPT_RETRY, NUM(OT_U32, retry_cnt, 0, 7, NULL) },
	{ "dscp", 1, OPT_DSCP, NUM(OT_U8, dscp, 0, 63, NULL) },
	{ "no-ecn", 0, OPT_NO_ECN, VAL(OT_FALSE, ecn) },
	{ "line-rate", 1, OPT_LINE_RATE, FN(opt_line_rate, "e.g. 10gbit, 100mbit") },
	{ "quiet", 0, OPT_QUIET, ACTION },
	{ "verbose", 0, 'v', ACTION },
	{ "help", 0, 'h', ACTION },
	{ "version", 0, 'V', ACTION },
};
#undef FIELD
#undef NUM
#undef VAL
#undef FN
#undef ACTION

static const struct emu_config emu_defaults = {
	.ecn = true,
	.ctl_port = EMU_CTL_PORT_DEFAULT,
	.op = EMU_OP_WRITE,
	.duration_ns = 5000000000ull,
	.qps = 1,
	.size_bytes = 65536,
	.mtu = 1024,
	.depth = 64,
	.timeout_ns = 67108864ull, /* 4.096 us * 2^14, as rc_model */
	.retry_cnt = 7,
	.dscp = 26,
	.line_rate_bps = 10000000000ull,
};

/* Option handlers return PARSE_GO_ON, or the exit status (--help, a usage error). */
#define PARSE_GO_ON (-1)

/* Fill the field d names from arg. */
static int opt_apply(struct emu_config *c, const struct emu_opt *d, const char *arg)
{
	void *field = (char *)c + d->off;
	uint64_t v;

	switch (d->type) {
	case OT_ACTION:
		assert(!"actions are handled by parse_options()");
		break;
	case OT_STR:
		*(const char **)field = arg;
		return PARSE_GO_ON;
	case OT_TRUE:
	case OT_FALSE:
		*(bool *)field = d->type == OT_TRUE;
		return PARSE_GO_ON;
	case OT_U8:
	case OT_U16:
	case OT_U32:
	case OT_U64:
		if (parse_u64(arg, d->min, d->max, &v))
			break;
		if (d->type == OT_U8)
			*(uint8_t *)field = (uint8_t)v;
		else if (d->type == OT_U16)
			*(uint16_t *)field = (uint16_t)v;
		else if (d->type == OT_U32)
			*(uint32_t *)field = (uint32_t)v;
		else
			*(uint64_t *)field = v;
		return PARSE_GO_ON;
	case OT_FN:
		if (d->parse(c, arg) == 0)
			return PARSE_GO_ON;
		break;
	}
	if (d->hint)
		return usage_error("invalid --%s '%s' (%s)", d->name, arg, d->hint);
	return usage_error("invalid --%s '%s' (%llu to %llu)", d->name, arg, (unsigned long long)d->min,
			   (unsigned long long)d->max);
}

/* The options that act: --quiet -v -h -V. */
static int opt_action(int id)
{
	switch (id) {
	case OPT_QUIET:
		agentxdp_log_level = LOG_ERR;
		break;
	case 'v':
		agentxdp_log_level++;
		break;
	case 'h':
		fputs(usage_text, stdout);
		return 0;
	case 'V':
		printf("agentxdp-roce-emu %s\n", AGENTXDP_VERSION);
		return 0;
	}
	return PARSE_GO_ON;
}

/* getopt over the table into *c. */
static int parse_options(struct emu_config *c, int argc, char **argv)
{
	static struct option long_options[ARRAY_SIZE(emu_opts) + 1];
	char short_options[2 + 2 * ARRAY_SIZE(emu_opts) + 1] = ":";
	size_t ns = 1;
	int id, rc;

	for (size_t i = 0; i < ARRAY_SIZE(emu_opts); i++) {
		const struct emu_opt *d = &emu_opts[i];

		long_options[i] = (struct option){ d->name, d->has_arg ? required_argument : no_argument,
						    NULL, d->id };
		if (d->id < 256) {
			short_options[ns++] = (char)d->id;
			if (d->has_arg)
				short_options[ns++] = ':';
		}
	}
	short_options[ns] = '\0';
	opterr = 0; /* usage_error_getopt() prints the one line */
	while ((id = getopt_long(argc, argv, short_options, long_options, NULL)) != -1) {
		const struct emu_opt *d = NULL;

		for (size_t i = 0; i < ARRAY_SIZE(emu_opts) && !d; i++)
			if (emu_opts[i].id == id)
				d = &emu_opts[i];
		if (!d)
			return usage_error_getopt(id, argv);
		rc = d->type == OT_ACTION ? opt_action(id) : opt_apply(c, d, optarg);
		if (rc != PARSE_GO_ON)
			return rc;
	}
	if (optind < argc)
		return usage_error("unexpected argument '%s'", argv[optind]);
	return PARSE_GO_ON;
}

/* The checks that span options; 0 or the exit status of a usage error. */
static int check_config(const struct emu_config *c)
{
	struct sockaddr_storage tmp;
	socklen_t tmp_len;

	if (!c->bind_addr)
		return usage_error("%s", "--bind ADDR is required");
	if (parse_addr(c->bind_addr, 0, &tmp, &tmp_len) < 0)
		return usage_error("invalid --bind '%s' (an IPv4 or IPv6 address)", c->bind_addr);
	if (c->server == !!c->peer_addr)
		return usage_error("%s", "give either --server or --connect PEER");
	if (c->peer_addr && parse_addr(c->peer_addr, 0, &tmp, &tmp_len) < 0)
		return usage_error("invalid --connect '%s' (an IPv4 or IPv6 address)", c->peer_addr);
	if (c->once && !c->server)
		return usage_error("%s", "--once goes with --server");
	return 0;
}

int main(int argc, char **argv)
{
	struct emu_config cfg = emu_defaults;
	int rc;

	agentxdp_prog = "agentxdp-roce-emu";
	rc = parse_options(&cfg, argc, argv);
	if (rc != PARSE_GO_ON)
		return rc;
	rc = check_config(&cfg);
	if (rc)
		return rc;

	/* No SA_RESTART: a signal must interrupt accept() and poll(). */
	struct sigaction sa = { .sa_handler = on_signal };
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	return cfg.server ? run_server(&cfg) : run_client(&cfg);
}
