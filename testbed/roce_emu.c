/* roce_emu.c: agentxdp-roce-emu, a RoCE v2 RC traffic emulator over UDP port 4791 (perftest-like). */
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/util/log.h"
#include "lib/util/parse_num.h"
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
	"Options:\n"
	"  -b, --bind ADDR        local IPv4 or IPv6 address (required)\n"
	"      --server           wait for a client; with --once, serve one test and exit\n"
	"      --once             with --server: exit after one test\n"
	"  -c, --connect PEER     run the test against the server at PEER\n"
	"  -p, --port PORT        TCP port of the control connection (default 18515)\n"
	"  -t, --op OP            write, read or send (default write)\n"
	"  -m, --mode MODE        bw (keep --tx-depth operations in flight) or lat (one at\n"
	"                         a time per QP: ping-pong latency); default bw\n"
	"  -D, --duration SECS    post operations for this long (default 5s; e.g. 2s, 500ms)\n"
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
	"  ip netns exec axtb-a agentxdp-roce-emu -b 198.18.0.1 -c 198.18.0.2 -t write -D 5 -q 2\n"
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

static const struct option long_options[] = {
	{ "bind", required_argument, NULL, 'b' },
	{ "server", no_argument, NULL, OPT_SERVER },
	{ "once", no_argument, NULL, OPT_ONCE },
	{ "connect", required_argument, NULL, 'c' },
	{ "port", required_argument, NULL, 'p' },
	{ "op", required_argument, NULL, 't' },
	{ "mode", required_argument, NULL, 'm' },
	{ "duration", required_argument, NULL, 'D' },
	{ "iters", required_argument, NULL, 'n' },
	{ "qps", required_argument, NULL, 'q' },
	{ "size", required_argument, NULL, 's' },
	{ "mtu", required_argument, NULL, OPT_MTU },
	{ "tx-depth", required_argument, NULL, OPT_DEPTH },
	{ "bidir", no_argument, NULL, OPT_BIDIR },
	{ "timeout", required_argument, NULL, OPT_TIMEOUT },
	{ "retry-cnt", required_argument, NULL, OPT_RETRY },
	{ "dscp", required_argument, NULL, OPT_DSCP },
	{ "no-ecn", no_argument, NULL, OPT_NO_ECN },
	{ "line-rate", required_argument, NULL, OPT_LINE_RATE },
	{ "quiet", no_argument, NULL, OPT_QUIET },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 },
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

int main(int argc, char **argv)
{
	struct emu_config cfg = {
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
	struct sockaddr_storage tmp;
	socklen_t tmp_len;
	uint64_t v;
	int c;

	agentxdp_prog = "agentxdp-roce-emu";
	opterr = 0; /* usage_error_getopt() prints the one line */
	while ((c = getopt_long(argc, argv, ":b:c:p:t:m:D:n:q:s:vhV", long_options, NULL)) != -1) {
		switch (c) {
		case 'b':
			cfg.bind_addr = optarg;
			break;
		case OPT_SERVER:
			cfg.server = true;
			break;
		case OPT_ONCE:
			cfg.once = true;
			break;
		case 'c':
			cfg.peer_addr = optarg;
			break;
		case 'p':
			if (parse_u64(optarg, 1, 65535, &v))
				return usage_error("invalid --port '%s' (1 to 65535)", optarg);
			cfg.ctl_port = (uint16_t)v;
			break;
		case 't':
			if (!strcmp(optarg, "write"))
				cfg.op = EMU_OP_WRITE;
			else if (!strcmp(optarg, "read"))
				cfg.op = EMU_OP_READ;
			else if (!strcmp(optarg, "send"))
				cfg.op = EMU_OP_SEND;
			else
				return usage_error("invalid --op '%s' (write, read or send)", optarg);
			break;
		case 'm':
			if (!strcmp(optarg, "bw"))
				cfg.lat_mode = false;
			else if (!strcmp(optarg, "lat"))
				cfg.lat_mode = true;
			else
				return usage_error("invalid --mode '%s' (bw or lat)", optarg);
			break;
		case 'D':
			if (parse_duration_ns(optarg, 1000000000ull, 1000000ull, 86400000000000ull, &v))
				return usage_error("invalid --duration '%s' (1ms to 1 day, e.g. 5 or 500ms)", optarg);
			cfg.duration_ns = v;
			break;
		case 'n':
			if (parse_u64(optarg, 1, 1000000000000ull, &v))
				return usage_error("invalid --iters '%s' (1 or more)", optarg);
			cfg.iters = v;
			break;
		case 'q':
			if (parse_u64(optarg, 1, EMU_MAX_QPS / 2, &v))
				return usage_error("invalid --qps '%s' (1 to %d)", optarg, EMU_MAX_QPS / 2);
			cfg.qps = (uint32_t)v;
			break;
		case 's':
			if (parse_size_bytes(optarg, 1, 1u << 20, &v))
				return usage_error("invalid --size '%s' (1 to 1M bytes)", optarg);
			cfg.size_bytes = (uint32_t)v;
			break;
		case OPT_MTU:
			if (parse_u64(optarg, 256, 4096, &v) || (v & (v - 1)))
				return usage_error("invalid --mtu '%s' (256, 512, 1024, 2048 or 4096)", optarg);
			cfg.mtu = (uint32_t)v;
			break;
		case OPT_DEPTH:
			if (parse_u64(optarg, 1, EMU_MAX_DEPTH, &v))
				return usage_error("invalid --tx-depth '%s' (1 to %d)", optarg, EMU_MAX_DEPTH);
			cfg.depth = (uint32_t)v;
			break;
		case OPT_BIDIR:
			cfg.bidir = true;
			break;
		case OPT_TIMEOUT:
			if (parse_duration_ns(optarg, 1000000ull, 100000ull, 60000000000ull, &v))
				return usage_error("invalid --timeout '%s' (100us to 60s, e.g. 16ms)", optarg);
			cfg.timeout_ns = v;
			break;
		case OPT_RETRY:
			if (parse_u64(optarg, 0, 7, &v))
				return usage_error("invalid --retry-cnt '%s' (0 to 7)", optarg);
			cfg.retry_cnt = (uint32_t)v;
			break;
		case OPT_DSCP:
			if (parse_u64(optarg, 0, 63, &v))
				return usage_error("invalid --dscp '%s' (0 to 63)", optarg);
			cfg.dscp = (uint8_t)v;
			break;
		case OPT_NO_ECN:
			cfg.ecn = false;
			break;
		case OPT_LINE_RATE:
			if (parse_rate_bps(optarg, &cfg.line_rate_bps))
				return usage_error("invalid --line-rate '%s' (e.g. 10gbit, 100mbit)", optarg);
			break;
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
		default:
			return usage_error_getopt(c, argv);
		}
	}
	if (optind < argc)
		return usage_error("unexpected argument '%s'", argv[optind]);
	if (!cfg.bind_addr)
		return usage_error("%s", "--bind ADDR is required");
	if (parse_addr(cfg.bind_addr, 0, &tmp, &tmp_len) < 0)
		return usage_error("invalid --bind '%s' (an IPv4 or IPv6 address)", cfg.bind_addr);
	if (cfg.server == !!cfg.peer_addr)
		return usage_error("%s", "give either --server or --connect PEER");
	if (cfg.peer_addr && parse_addr(cfg.peer_addr, 0, &tmp, &tmp_len) < 0)
		return usage_error("invalid --connect '%s' (an IPv4 or IPv6 address)", cfg.peer_addr);
	if (cfg.once && !cfg.server)
		return usage_error("%s", "--once goes with --server");

	/* No SA_RESTART: a signal must interrupt accept() and poll(). */
	struct sigaction sa = { .sa_handler = on_signal };
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	return cfg.server ? run_server(&cfg) : run_client(&cfg);
}
