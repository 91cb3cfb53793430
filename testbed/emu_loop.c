/* emu_loop.c: agentxdp-roce-emu's event loop: receive, post, send and complete for every QP. */
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <string.h>

#include "lib/util/log.h"
#include "lib/decode/roce_pkt.h"
#include "lib/model/roce_frame.h"
#include "testbed/roce_emu.h"

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

int run_loop(struct emu_session *s)
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
