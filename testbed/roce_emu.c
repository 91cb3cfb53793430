/* roce_emu.c: agentxdp-roce-emu, a RoCE v2 RC traffic emulator over UDP port 4791 (perftest-like). */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "lib/model/emu_icrc.h"
#include "lib/util/log.h"
#include "lib/util/parse_num.h"
#include "lib/decode/roce_pkt.h"
#include "lib/model/rc_model.h"
#include "lib/model/roce_frame.h"


/* BTH + RETH + AETH + MTU + pad + ICRC, with room to spare. */
#define EMU_MAX_PKT (64 + 4096 + 4)
#define EMU_MAX_MTU 4096
#define EMU_MAX_DEPTH RC_SQ_DEPTH
#define EMU_RKEY 0x00a0c0de
#define EMU_VA_BASE 0x7f0000000000ull
#define EMU_MAX_QPS 64
#define EMU_CTL_PORT_DEFAULT 18515
#define EMU_TX_BURST 32
#define EMU_RX_BURST 256
#define EMU_MAX_LAT_SAMPLES (8u << 20)
#define EMU_BIN_NS 100000000ull /* BW peak is measured over 100 ms bins */
#define EMU_MAX_BINS 36000

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

enum emu_op { EMU_OP_WRITE = 0, EMU_OP_READ = 1, EMU_OP_SEND = 2 };

static const char *emu_op_name(enum emu_op op)
{
	static const char *const names[] = { "RDMA_Write", "RDMA_Read", "Send" };
	return (unsigned)op < 3 ? names[op] : "?";
}

struct emu_config {
	const char *bind_addr;
	const char *peer_addr;
	bool server, once, bidir, ecn;
	uint16_t ctl_port;
	enum emu_op op;
	bool lat_mode;
	uint64_t duration_ns;
	uint64_t iters;
	uint32_t qps;
	uint32_t size_bytes;
	uint32_t mtu;
	uint32_t depth;
	uint64_t timeout_ns;
	uint32_t retry_cnt;
	uint8_t dscp;
	uint64_t line_rate_bps;
};

/*
 * One QP end: the synthesizer's RC model (lib/model/rc_model.h) does the transport; this
 * program owns the socket, the clock and the work requests. Each QP here is used in one
 * role, requester or responder, so every captured flow carries one kind of packet.
 */
struct emu_qp {
	bool is_requester;
	int fd;			/* this QP's own UDP socket: its own source port */
	uint32_t qpn;
	uint32_t dest_qpn;
	uint32_t start_psn;	/* requester: first PSN */
	struct emu_path path;	/* 5-tuple, for the ICRC */
	struct rc_qp *rc;
	/* requester work */
	bool posting;
	uint64_t ops_left;	/* UINT64_MAX: until the duration ends */
	uint64_t ops_posted, ops_completed, bytes_completed, ops_failed;
	uint64_t read_resp_received;
	/* responder view */
	uint32_t last_msn;	/* AETH MSN of the last ACK/READ response sent: messages received */
	uint64_t ce_received;
	uint8_t pending[EMU_MAX_PKT]; /* built but not yet accepted by the socket (EAGAIN) */
	size_t pending_len;
	bool blocked;
	bool warned;		/* one warning per QP for send errors */
};

struct emu_lat {
	uint64_t *samples_ns;
	size_t n, cap;
	uint64_t dropped;	/* samples beyond the cap (counted, not stored) */
	double sum_ns, sum_sq_ns;
	uint64_t bin_bytes[EMU_MAX_BINS];
	uint64_t start_ns;
	uint64_t last_ns;
};

struct emu_session {
	const struct emu_config *cfg;
	int family;
	struct sockaddr_storage local, peer; /* peer: UDP 4791 */
	socklen_t addr_len;
	int rx_fd;
	int ctl_fd;
	uint32_t qpn_base;
	struct emu_qp qps[EMU_MAX_QPS];
	uint32_t nqps;
	struct emu_lat lat;
	uint64_t start_ns, post_end_ns;
	bool peer_fin, sent_fin, peer_gone;
	char ctl_buf[4096];
	size_t ctl_len;
	uint64_t malformed, unknown_qpn;
	uint64_t local_drops;	/* sends a local firewall rule refused (EPERM): lost, like on a wire */
	uint64_t send_errors;
};

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- addresses and sockets ---- */

static int parse_addr(const char *text, uint16_t port, struct sockaddr_storage *ss, socklen_t *len)
{
	struct sockaddr_in *s4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, text, &s4->sin_addr) == 1) {
		s4->sin_family = AF_INET;
		s4->sin_port = htons(port);
		*len = sizeof(*s4);
		return AF_INET;
	}
	if (inet_pton(AF_INET6, text, &s6->sin6_addr) == 1) {
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(port);
		*len = sizeof(*s6);
		return AF_INET6;
	}
	return -1;
}

static void set_port(struct sockaddr_storage *ss, uint16_t port)
{
	if (ss->ss_family == AF_INET)
		((struct sockaddr_in *)ss)->sin_port = htons(port);
	else
		((struct sockaddr_in6 *)ss)->sin6_port = htons(port);
}

static void addr_bytes(const struct sockaddr_storage *ss, uint8_t out[16])
{
	memset(out, 0, 16);
	if (ss->ss_family == AF_INET)
		memcpy(out, &((const struct sockaddr_in *)ss)->sin_addr, 4);
	else
		memcpy(out, &((const struct sockaddr_in6 *)ss)->sin6_addr, 16);
}

static const char *addr_text(const struct sockaddr_storage *ss, char *buf, size_t len)
{
	if (ss->ss_family == AF_INET)
		return inet_ntop(AF_INET, &((const struct sockaddr_in *)ss)->sin_addr, buf, len);
	return inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)ss)->sin6_addr, buf, (socklen_t)len);
}

static int set_tos(int fd, int family, int tos)
{
	if (family == AF_INET)
		return setsockopt(fd, IPPROTO_IP, IP_TOS, &tos, sizeof(tos));
	return setsockopt(fd, IPPROTO_IPV6, IPV6_TCLASS, &tos, sizeof(tos));
}

/* A QP's send socket: bound to the local address and a port of its own, DF set, TOS set. */
static int open_qp_socket(struct emu_session *s, uint16_t *sport)
{
	struct sockaddr_storage a = s->local;
	socklen_t alen = s->addr_len;
	int tos = (s->cfg->dscp << 2) | (s->cfg->ecn ? 2 : 0); /* ECT(0) */
	int pmtu = IP_PMTUDISC_DO, sndbuf = 1 << 20;
	int fd;

	fd = socket(s->family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_UDP);
	if (fd < 0) {
		pr_err("socket(UDP): %s\n", strerror(errno));
		return -1;
	}
	set_port(&a, 0);
	if (bind(fd, (struct sockaddr *)&a, alen) < 0) {
		pr_err("bind(%s): %s\n", s->cfg->bind_addr, strerror(errno));
		goto fail;
	}
	if (set_tos(fd, s->family, tos) < 0) {
		pr_err("setsockopt(TOS): %s\n", strerror(errno));
		goto fail;
	}
	/* DF set, so the kernel sends IP ID 0 on this unconnected socket: the ICRC stays right. */
	if (s->family == AF_INET)
		setsockopt(fd, IPPROTO_IP, IP_MTU_DISCOVER, &pmtu, sizeof(pmtu));
	else
		setsockopt(fd, IPPROTO_IPV6, IPV6_MTU_DISCOVER, &pmtu, sizeof(pmtu));
	setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf));
	alen = sizeof(a);
	if (getsockname(fd, (struct sockaddr *)&a, &alen) < 0) {
		pr_err("getsockname: %s\n", strerror(errno));
		goto fail;
	}
	*sport = ntohs(a.ss_family == AF_INET ? ((struct sockaddr_in *)&a)->sin_port
					      : ((struct sockaddr_in6 *)&a)->sin6_port);
	return fd;
fail:
	close(fd);
	return -1;
}

static int open_rx_socket(struct emu_session *s)
{
	struct sockaddr_storage a = s->local;
	int on = 1, rcvbuf = 4 << 20;
	int fd;

	fd = socket(s->family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_UDP);
	if (fd < 0) {
		pr_err("socket(UDP): %s\n", strerror(errno));
		return -1;
	}
	set_port(&a, ROCE_V2_UDP_PORT);
	if (bind(fd, (struct sockaddr *)&a, s->addr_len) < 0) {
		pr_err("bind(%s port %d): %s\n", s->cfg->bind_addr, ROCE_V2_UDP_PORT, strerror(errno));
		close(fd);
		return -1;
	}
	/* The ECN bits of each received packet come with it (IP_RECVTOS / IPV6_RECVTCLASS). */
	if (s->family == AF_INET)
		setsockopt(fd, IPPROTO_IP, IP_RECVTOS, &on, sizeof(on));
	else
		setsockopt(fd, IPPROTO_IPV6, IPV6_RECVTCLASS, &on, sizeof(on));
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	return fd;
}

/* ---- control connection (text lines, perftest's out-of-band exchange) ---- */

static int ctl_send(struct emu_session *s, const char *fmt, ...)
{
	char line[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(line))
		return -1;
	for (int off = 0; off < n;) {
		ssize_t w = send(s->ctl_fd, line + off, (size_t)(n - off), MSG_NOSIGNAL);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN) {
				struct pollfd p = { .fd = s->ctl_fd, .events = POLLOUT };
				poll(&p, 1, 1000);
				continue;
			}
			pr_err("control connection: send: %s\n", strerror(errno));
			return -1;
		}
		off += (int)w;
	}
	return 0;
}

/* Read one line (without '\n') within timeout_ms; returns 0, or -1 on EOF/timeout/error. */
static int ctl_recv_line(struct emu_session *s, char *out, size_t outlen, int timeout_ms)
{
	uint64_t deadline = mono_ns() + (uint64_t)timeout_ms * 1000000ull;

	for (;;) {
		char *nl = memchr(s->ctl_buf, '\n', s->ctl_len);
		if (nl) {
			size_t n = (size_t)(nl - s->ctl_buf);
			if (n >= outlen)
				n = outlen - 1;
			memcpy(out, s->ctl_buf, n);
			out[n] = 0;
			s->ctl_len -= (size_t)(nl - s->ctl_buf) + 1;
			memmove(s->ctl_buf, nl + 1, s->ctl_len);
			return 0;
		}
		if (s->ctl_len == sizeof(s->ctl_buf))
			return -1;
		uint64_t now = mono_ns();
		if (timeout_ms >= 0 && now >= deadline)
			return -1;
		struct pollfd p = { .fd = s->ctl_fd, .events = POLLIN };
		int left_ms = timeout_ms < 0 ? -1 : (int)((deadline - now) / 1000000ull) + 1;
		int r = poll(&p, 1, left_ms);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		ssize_t got = recv(s->ctl_fd, s->ctl_buf + s->ctl_len, sizeof(s->ctl_buf) - s->ctl_len, 0);
		if (got <= 0) {
			if (got < 0 && (errno == EINTR || errno == EAGAIN))
				continue;
			return -1;
		}
		s->ctl_len += (size_t)got;
	}
}

/* Non-blocking check for FIN (or EOF) from the peer during the test. */
static void ctl_poll_fin(struct emu_session *s)
{
	char line[256];

	while (!s->peer_fin) {
		ssize_t got = recv(s->ctl_fd, s->ctl_buf + s->ctl_len, sizeof(s->ctl_buf) - s->ctl_len,
				   MSG_DONTWAIT);
		if (got == 0) {
			s->peer_fin = s->peer_gone = true;
			break;
		}
		if (got < 0)
			break;
		s->ctl_len += (size_t)got;
	}
	while (!s->peer_fin && memchr(s->ctl_buf, '\n', s->ctl_len)) {
		if (ctl_recv_line(s, line, sizeof(line), 0) < 0)
			break;
		if (strncmp(line, "FIN", 3) == 0)
			s->peer_fin = true;
	}
}

/* ---- QPs ---- */

static void lat_record(struct emu_lat *lat, uint64_t latency_ns, uint32_t bytes, uint64_t now_ns)
{
	uint64_t bin;

	if (lat->n < lat->cap)
		lat->samples_ns[lat->n++] = latency_ns;
	else
		lat->dropped++;
	lat->sum_ns += (double)latency_ns;
	lat->sum_sq_ns += (double)latency_ns * (double)latency_ns;
	bin = (now_ns - lat->start_ns) / EMU_BIN_NS;
	if (bin < EMU_MAX_BINS)
		lat->bin_bytes[bin] += bytes;
	lat->last_ns = now_ns;
}

static uint32_t random_u32(void)
{
	uint32_t v = 0;
	if (getrandom(&v, sizeof(v), 0) != sizeof(v))
		v = (uint32_t)mono_ns() ^ (uint32_t)getpid();
	return v;
}

static struct emu_qp *add_qp(struct emu_session *s, bool requester, uint16_t *sport)
{
	struct emu_qp *qp;

	if (s->nqps == EMU_MAX_QPS) {
		pr_err("too many QPs (at most %d)\n", EMU_MAX_QPS);
		return NULL;
	}
	qp = &s->qps[s->nqps];
	memset(qp, 0, sizeof(*qp));
	qp->fd = open_qp_socket(s, sport);
	if (qp->fd < 0)
		return NULL;
	qp->is_requester = requester;
	qp->qpn = s->qpn_base + s->nqps;
	qp->start_psn = random_u32() & 0xffffff;
	qp->rc = calloc(1, sizeof(*qp->rc)); /* ~30 KB */
	if (!qp->rc) {
		pr_err("out of memory\n");
		close(qp->fd);
		return NULL;
	}
	s->nqps++;
	return qp;
}

static void fill_path(struct emu_session *s, struct emu_path *path, uint16_t sport)
{
	path->family = s->family;
	addr_bytes(&s->local, path->src);
	addr_bytes(&s->peer, path->dst);
	path->sport = sport;
	path->dport = ROCE_V2_UDP_PORT;
}

/* rc_model configuration shared by both roles. */
static int init_rc(struct emu_session *s, struct emu_qp *qp, uint16_t sport, uint32_t dest_qpn,
		   uint32_t peer_psn)
{
	const struct emu_config *c = s->cfg;
	struct rc_qp_config cfg;

	qp->dest_qpn = dest_qpn;
	fill_path(s, &qp->path, sport);
	rc_qp_config_default(&cfg);
	cfg.service = RC_SVC_RC;
	cfg.local_qpn = qp->qpn;
	cfg.remote_qpn = dest_qpn;
	cfg.sq_psn = qp->start_psn;
	cfg.rq_psn = peer_psn;
	cfg.mtu_bytes = c->mtu;
	cfg.line_rate_bps = c->line_rate_bps;
	cfg.ack_timeout_ns = c->timeout_ns;
	cfg.retry_cnt = (uint8_t)c->retry_cnt;
	cfg.cnp_interval_ns = 50000; /* 50 us, the usual NIC default */
	if (cfg.min_rate_bps > cfg.line_rate_bps / 10)
		cfg.min_rate_bps = cfg.line_rate_bps / 10;
	if (rc_qp_init(qp->rc, &cfg) < 0) {
		pr_err("rc_qp_init failed for QP %#x (bad configuration)\n", qp->qpn);
		return -1;
	}
	return 0;
}

static int setup_requester(struct emu_session *s, struct emu_qp *qp, uint16_t sport, uint32_t dest_qpn)
{
	return init_rc(s, qp, sport, dest_qpn, 0);
}

static int setup_responder(struct emu_session *s, struct emu_qp *qp, uint16_t sport, uint32_t dest_qpn,
			   uint32_t epsn)
{
	return init_rc(s, qp, sport, dest_qpn, epsn);
}

/* ---- the exchange: client announces, server answers ---- */

static int client_exchange(struct emu_session *s)
{
	const struct emu_config *c = s->cfg;
	uint16_t req_sport[EMU_MAX_QPS], rsp_sport[EMU_MAX_QPS];
	struct emu_qp *reqs[EMU_MAX_QPS], *rsps[EMU_MAX_QPS];
	char line[256];
	uint32_t i, nreq = 0, nrsp = 0;

	for (i = 0; i < c->qps; i++) {
		if (!(reqs[i] = add_qp(s, true, &req_sport[i])))
			return -1;
	}
	if (c->bidir) {
		for (i = 0; i < c->qps; i++)
			if (!(rsps[i] = add_qp(s, false, &rsp_sport[i])))
				return -1;
	}
	if (ctl_send(s, "AXTBEMU 1 op=%d lat=%d size=%u qps=%u mtu=%u depth=%u bidir=%d dur_ns=%llu iters=%llu timeout_ns=%llu retry=%u\n",
		     (int)c->op, c->lat_mode, c->size_bytes, c->qps, c->mtu, c->depth, c->bidir,
		     (unsigned long long)c->duration_ns, (unsigned long long)c->iters,
		     (unsigned long long)c->timeout_ns, c->retry_cnt) < 0)
		return -1;
	for (i = 0; i < c->qps; i++)
		ctl_send(s, "REQ %u %u\n", reqs[i]->qpn, reqs[i]->start_psn);
	if (c->bidir)
		for (i = 0; i < c->qps; i++)
			ctl_send(s, "RSP %u\n", rsps[i]->qpn);
	if (ctl_send(s, "END\n") < 0)
		return -1;
	if (ctl_recv_line(s, line, sizeof(line), 10000) < 0 || strcmp(line, "OK") != 0) {
		pr_err("server at %s did not accept the test (%s)\n", c->peer_addr,
		       line[0] ? line : "no answer");
		return -1;
	}
	for (;;) {
		unsigned qpn, psn;
		if (ctl_recv_line(s, line, sizeof(line), 10000) < 0) {
			pr_err("control connection closed during the exchange\n");
			return -1;
		}
		if (strcmp(line, "END") == 0)
			break;
		if (sscanf(line, "RSP %u", &qpn) == 1 && nreq < c->qps) {
			if (setup_requester(s, reqs[nreq], req_sport[nreq], qpn) < 0)
				return -1;
			nreq++;
		} else if (sscanf(line, "REQ %u %u", &qpn, &psn) == 2 && c->bidir && nrsp < c->qps) {
			if (setup_responder(s, rsps[nrsp], rsp_sport[nrsp], qpn, psn) < 0)
				return -1;
			nrsp++;
		} else {
			pr_err("unexpected line from the server: '%s'\n", line);
			return -1;
		}
	}
	if (nreq != c->qps || (c->bidir && nrsp != c->qps)) {
		pr_err("server answered for %u of %u QPs\n", nreq, c->qps);
		return -1;
	}
	return ctl_send(s, "GO\n");
}

static int hello_u64(const char *line, const char *key, uint64_t *out)
{
	char pat[32];
	const char *p;
	char *end;

	snprintf(pat, sizeof(pat), " %s=", key);
	p = strstr(line, pat);
	if (!p)
		return -1;
	errno = 0;
	*out = strtoull(p + strlen(pat), &end, 10);
	return errno || (*end && *end != ' ') ? -1 : 0;
}

/* The server takes the test parameters from the client's hello line. */
static int server_exchange(struct emu_session *s, struct emu_config *c)
{
	char line[512];
	uint64_t v[11];
	static const char *const keys[] = { "op",	 "lat",	  "size",	"qps",	      "mtu", "depth",
					    "bidir",	 "dur_ns", "iters",	"timeout_ns", "retry" };
	uint32_t peer_req_qpn[EMU_MAX_QPS], peer_req_psn[EMU_MAX_QPS], peer_rsp_qpn[EMU_MAX_QPS];
	uint32_t nreq = 0, nrsp = 0, i;

	if (ctl_recv_line(s, line, sizeof(line), 10000) < 0 || strncmp(line, "AXTBEMU 1 ", 10) != 0) {
		pr_err("client sent no valid hello\n");
		return -1;
	}
	for (i = 0; i < 11; i++) {
		if (hello_u64(line, keys[i], &v[i]) < 0) {
			pr_err("client hello lacks %s\n", keys[i]);
			return -1;
		}
	}
	if (v[0] > EMU_OP_SEND || v[3] < 1 || v[3] > EMU_MAX_QPS / 2 || v[2] < 1 || v[2] > (1u << 20) ||
	    v[4] < 256 || v[4] > EMU_MAX_MTU || v[5] < 1 || v[5] > EMU_MAX_DEPTH || v[10] > 7) {
		ctl_send(s, "ERR bad parameters\n");
		pr_err("client asked for parameters out of range\n");
		return -1;
	}
	c->op = (enum emu_op)v[0];
	c->lat_mode = v[1];
	c->size_bytes = (uint32_t)v[2];
	c->qps = (uint32_t)v[3];
	c->mtu = (uint32_t)v[4];
	c->depth = (uint32_t)v[5];
	c->bidir = v[6];
	c->duration_ns = v[7];
	c->iters = v[8];
	c->timeout_ns = v[9];
	c->retry_cnt = (uint32_t)v[10];
	for (;;) {
		unsigned qpn, psn;
		if (ctl_recv_line(s, line, sizeof(line), 10000) < 0) {
			pr_err("control connection closed during the exchange\n");
			return -1;
		}
		if (strcmp(line, "END") == 0)
			break;
		if (sscanf(line, "REQ %u %u", &qpn, &psn) == 2 && nreq < c->qps) {
			peer_req_qpn[nreq] = qpn;
			peer_req_psn[nreq++] = psn;
		} else if (sscanf(line, "RSP %u", &qpn) == 1 && nrsp < c->qps) {
			peer_rsp_qpn[nrsp++] = qpn;
		} else {
			pr_err("unexpected line from the client: '%s'\n", line);
			return -1;
		}
	}
	if (nreq != c->qps || (c->bidir && nrsp != c->qps)) {
		pr_err("client announced %u requesters for %u QPs\n", nreq, c->qps);
		return -1;
	}
	ctl_send(s, "OK\n");
	for (i = 0; i < c->qps; i++) {
		uint16_t sport;
		struct emu_qp *qp = add_qp(s, false, &sport);
		if (!qp)
			return -1;
		if (setup_responder(s, qp, sport, peer_req_qpn[i], peer_req_psn[i]) < 0)
			return -1;
		ctl_send(s, "RSP %u\n", qp->qpn);
	}
	if (c->bidir) {
		for (i = 0; i < c->qps; i++) {
			uint16_t sport;
			struct emu_qp *qp = add_qp(s, true, &sport);
			if (!qp)
				return -1;
			if (setup_requester(s, qp, sport, peer_rsp_qpn[i]) < 0)
				return -1;
			ctl_send(s, "REQ %u %u\n", qp->qpn, qp->start_psn);
		}
	}
	ctl_send(s, "END\n");
	if (ctl_recv_line(s, line, sizeof(line), 10000) < 0 || strcmp(line, "GO") != 0) {
		pr_err("client did not start the test\n");
		return -1;
	}
	return 0;
}

/* ---- the event loop ---- */

static void dispatch(struct emu_session *s, const uint8_t *p, size_t len, uint8_t ecn, uint64_t now)
{
	struct roce_pkt pkt;
	struct emu_qp *qp;
	uint32_t idx;

	if (roce_frame_parse_transport(p, len, &pkt) < 0) {
		s->malformed++;
		return;
	}
	pkt.ecn = ecn;
	idx = pkt.dest_qp - s->qpn_base;
	if (idx >= s->nqps) {
		s->unknown_qpn++;
		return;
	}
	qp = &s->qps[idx];
	pr_debug("rx opcode %#x qpn %#x psn %u ecn %u\n", pkt.opcode, pkt.dest_qp, pkt.psn, ecn);
	if (qp->is_requester) {
		uint8_t op = pkt.opcode & 0x1f;
		if (pkt.opcode != ROCE_OPCODE_CNP && op >= ROCE_OP_READ_RESP_FIRST && op <= ROCE_OP_READ_RESP_ONLY)
			qp->read_resp_received++;
	} else if (ecn == 3) {
		qp->ce_received++;
	}
	if (rc_receive(qp->rc, now, &pkt) < 0)
		s->unknown_qpn++;
}

static void rx_drain(struct emu_session *s)
{
	uint8_t buf[EMU_MAX_PKT + 64];
	char cbuf[CMSG_SPACE(sizeof(int)) * 2];

	for (int i = 0; i < EMU_RX_BURST; i++) {
		struct iovec iov = { .iov_base = buf, .iov_len = sizeof(buf) };
		struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
				      .msg_controllen = sizeof(cbuf) };
		struct cmsghdr *cm;
		uint8_t ecn = 0;
		ssize_t n = recvmsg(s->rx_fd, &msg, MSG_DONTWAIT);

		if (n < 0) {
			if (errno != EAGAIN && errno != EINTR)
				pr_warn("recvmsg: %s\n", strerror(errno));
			return;
		}
		for (cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm)) {
			if (cm->cmsg_level == IPPROTO_IP && cm->cmsg_type == IP_TOS)
				ecn = *(uint8_t *)CMSG_DATA(cm) & 3;
			else if (cm->cmsg_level == IPPROTO_IPV6 && cm->cmsg_type == IPV6_TCLASS) {
				int tclass;
				memcpy(&tclass, CMSG_DATA(cm), sizeof(tclass));
				ecn = (uint8_t)(tclass & 3);
			}
		}
		dispatch(s, buf, (size_t)n, ecn, mono_ns());
	}
}

/* Returns 1 when the packet is gone (sent, or lost), 0 when the socket is full (kept pending). */
static int qp_send(struct emu_session *s, struct emu_qp *qp, const uint8_t *p, size_t len)
{
	ssize_t w = sendto(qp->fd, p, len, 0, (struct sockaddr *)&s->peer, s->addr_len);

	if (w >= 0)
		return 1;
	if (errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS || errno == EINTR) {
		if (p != qp->pending)
			memcpy(qp->pending, p, len);
		qp->pending_len = len;
		qp->blocked = true;
		return 0;
	}
	if (errno == EPERM) {
		/*
		 * A local netfilter rule dropped it (testbed loss impairment). A RoCE NIC never
		 * sees the host firewall: count it as lost on the wire and carry on.
		 */
		s->local_drops++;
		return 1;
	}
	if (!qp->warned)
		pr_warn("sendto (QP %#x): %s\n", qp->qpn, strerror(errno));
	qp->warned = true;
	s->send_errors++;
	return 1;
}

/* Queue new work requests while the requester's send queue has room. */
static void post_work(struct emu_session *s, struct emu_qp *qp, uint64_t now)
{
	const struct emu_config *c = s->cfg;
	uint32_t depth = c->lat_mode ? 1 : c->depth;
	static const enum rc_wr_opcode wr_op[] = { RC_WR_WRITE, RC_WR_READ, RC_WR_SEND };

	while (qp->posting && qp->ops_left > 0 && rc_sq_pending(qp->rc) < depth) {
		struct rc_wr wr = {
			.wr_id = qp->ops_posted + 1,
			.opcode = wr_op[c->op],
			.length_bytes = c->size_bytes,
			.remote_va = EMU_VA_BASE,
			.rkey = EMU_RKEY,
		};
		if (rc_post_send(qp->rc, now, &wr) < 0)
			break;
		qp->ops_posted++;
		if (qp->ops_left != UINT64_MAX)
			qp->ops_left--;
	}
}

static void poll_completions(struct emu_session *s, struct emu_qp *qp)
{
	struct rc_completion wc;

	while (rc_poll_completion(qp->rc, &wc) == 1) {
		if (wc.is_recv)
			continue;
		if (wc.status == RC_WC_SUCCESS) {
			qp->ops_completed++;
			qp->bytes_completed += wc.length_bytes;
			lat_record(&s->lat, wc.completed_ns - wc.posted_ns, wc.length_bytes, wc.completed_ns);
		} else {
			qp->ops_failed++;
		}
	}
}

/* The model's packet as UDP payload: BTH .. payload, then the ICRC we compute. */
static size_t frame_packet(struct emu_qp *qp, const struct roce_pkt *out, uint8_t *buf, size_t cap)
{
	size_t len = roce_frame_build_transport(buf, cap, out, NULL);
	uint32_t icrc;

	if (len < EMU_ICRC_BYTES + 12)
		return 0;
	icrc = emu_icrc(&qp->path, buf, len - EMU_ICRC_BYTES);
	/* Stored as rdma_rxe stores it: the CRC word in little-endian byte order. */
	buf[len - 4] = icrc & 0xff;
	buf[len - 3] = (icrc >> 8) & 0xff;
	buf[len - 2] = (icrc >> 16) & 0xff;
	buf[len - 1] = (icrc >> 24) & 0xff;
	return len;
}

/* Send what the QPs have; returns true when some QP stopped at its burst limit (more to send). */
static bool tx_round(struct emu_session *s, uint64_t now, uint64_t *wake)
{
	uint8_t buf[EMU_MAX_PKT];
	bool more = false;

	for (uint32_t i = 0; i < s->nqps; i++) {
		struct emu_qp *qp = &s->qps[i];
		int sent = 0;

		if (qp->pending_len) {
			if (qp_send(s, qp, qp->pending, qp->pending_len) <= 0)
				continue;
			qp->pending_len = 0;
			qp->blocked = false;
		}
		if (qp->is_requester)
			post_work(s, qp, now);
		while (sent < EMU_TX_BURST) {
			struct roce_pkt out;
			size_t len;

			if (rc_next_packet(qp->rc, now, &out, NULL) != 1)
				break;
			len = frame_packet(qp, &out, buf, sizeof(buf));
			if (len == 0) {
				s->send_errors++;
				continue;
			}
			if (!qp->is_requester && (out.headers & ROCE_H_AETH))
				qp->last_msn = out.aeth_msn;
			sent++;
			if (qp_send(s, qp, buf, len) <= 0)
				break;
		}
		if (qp->is_requester)
			poll_completions(s, qp);
		if (sent == EMU_TX_BURST && !qp->blocked)
			more = true;
		uint64_t w = rc_next_event_ns(qp->rc);
		if (w < *wake)
			*wake = w;
	}
	return more;
}

static bool requester_idle(const struct emu_qp *qp)
{
	if (rc_qp_get_stats(qp->rc)->retry_exceeded)
		return true;
	return (!qp->posting || qp->ops_left == 0) && rc_sq_pending(qp->rc) == 0;
}

static bool requesters_idle(struct emu_session *s)
{
	for (uint32_t i = 0; i < s->nqps; i++)
		if (s->qps[i].is_requester && !requester_idle(&s->qps[i]))
			return false;
	return true;
}

static int run_loop(struct emu_session *s)
{
	const struct emu_config *c = s->cfg;
	uint64_t now = mono_ns();
	/* Never hang: posting time plus enough for every retry of every QP. */
	uint64_t hard_end;
	bool posting = true;

	s->start_ns = now;
	s->lat.start_ns = now;
	s->post_end_ns = c->iters ? UINT64_MAX : now + c->duration_ns;
	hard_end = (c->iters ? now + 3600ull * 1000000000ull : s->post_end_ns) +
		   (uint64_t)(c->retry_cnt + 2) * c->timeout_ns + 5000000000ull;
	for (uint32_t i = 0; i < s->nqps; i++) {
		struct emu_qp *qp = &s->qps[i];
		if (qp->is_requester) {
			qp->posting = true;
			qp->ops_left = c->iters ? c->iters : UINT64_MAX;
		}
	}
	for (;;) {
		uint64_t wake = UINT64_MAX;
		struct pollfd pfd[2 + EMU_MAX_QPS];
		int npfd = 0, timeout_ms;
		bool more;

		now = mono_ns();
		if (stop_requested) {
			pr_warn("interrupted\n");
			return -1;
		}
		if (posting && now >= s->post_end_ns) {
			posting = false;
			for (uint32_t i = 0; i < s->nqps; i++)
				s->qps[i].posting = false;
		}
		rx_drain(s);
		/* Timers (ACK timeout, DCQCN pacing) fire inside rc_next_packet(). */
		more = tx_round(s, mono_ns(), &wake);
		if (!s->sent_fin && requesters_idle(s)) {
			ctl_send(s, "FIN\n");
			s->sent_fin = true;
		}
		ctl_poll_fin(s);
		if (s->sent_fin && s->peer_fin)
			break;
		if (now >= hard_end) {
			pr_err("the test did not finish in time (peer requesters still busy?)\n");
			return -1;
		}
		pfd[npfd++] = (struct pollfd){ .fd = s->rx_fd, .events = POLLIN };
		pfd[npfd++] = (struct pollfd){ .fd = s->ctl_fd, .events = POLLIN };
		for (uint32_t i = 0; i < s->nqps; i++)
			if (s->qps[i].blocked)
				pfd[npfd++] = (struct pollfd){ .fd = s->qps[i].fd, .events = POLLOUT };
		if (more) {
			timeout_ms = 0;
		} else {
			uint64_t until = wake;
			if (posting && s->post_end_ns < until)
				until = s->post_end_ns;
			if (until == UINT64_MAX || until > now + 50000000ull)
				until = now + 50000000ull;
			timeout_ms = until <= now ? 0 : (int)((until - now + 999999) / 1000000);
			/* Sub-millisecond timers (DCQCN pacing): poll briefly instead of sleeping 1 ms. */
			if (until > now && until - now < 1000000)
				timeout_ms = 0;
		}
		if (poll(pfd, (nfds_t)npfd, timeout_ms) < 0 && errno != EINTR) {
			pr_err("poll: %s\n", strerror(errno));
			return -1;
		}
		for (int i = 2; i < npfd; i++)
			if (pfd[i].revents & POLLOUT)
				for (uint32_t q = 0; q < s->nqps; q++)
					if (s->qps[q].fd == pfd[i].fd)
						s->qps[q].blocked = false;
	}
	return s->peer_gone ? -1 : 0;
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

static void print_header(struct emu_session *s)
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

static int print_results(struct emu_session *s, const char *side)
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
