/* emu_net.c: agentxdp-roce-emu addresses, sockets, control connection and the client/server exchange. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "lib/util/log.h"
#include "lib/decode/roce_pkt.h"
#include "testbed/roce_emu.h"

/* ---- addresses and sockets ---- */

int parse_addr(const char *text, uint16_t port, struct sockaddr_storage *ss, socklen_t *len)
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

void set_port(struct sockaddr_storage *ss, uint16_t port)
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

const char *addr_text(const struct sockaddr_storage *ss, char *buf, size_t len)
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

int open_rx_socket(struct emu_session *s)
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

int ctl_send(struct emu_session *s, const char *fmt, ...)
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

/*
 * Non-blocking check for FIN (or EOF) from the peer during the test. Lines are parsed
 * before each read: a peer that sends FIN and closes at once delivers both in one pass,
 * and the EOF after its FIN is a clean end, not a lost peer.
 */
void ctl_poll_fin(struct emu_session *s)
{
	char line[256];

	while (!s->peer_fin) {
		if (memchr(s->ctl_buf, '\n', s->ctl_len)) {
			if (ctl_recv_line(s, line, sizeof(line), 0) < 0)
				break;
			if (strncmp(line, "FIN", 3) == 0)
				s->peer_fin = true;
			continue;
		}
		if (s->ctl_len == sizeof(s->ctl_buf))
			s->ctl_len = 0;	/* a line longer than the buffer: not ours, drop it */
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
}

/* ---- QPs ---- */

uint32_t random_u32(void)
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

int client_exchange(struct emu_session *s)
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
int server_exchange(struct emu_session *s, struct emu_config *c)
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
