/* roce_emu.h: agentxdp-roce-emu internals shared by its command line (roce_emu.c), network
 * side (emu_net.c), event loop (emu_loop.c) and results (emu_results.c). */
#ifndef AGENTXDP_ROCE_EMU_H
#define AGENTXDP_ROCE_EMU_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <time.h>

#include "lib/model/emu_icrc.h"
#include "lib/model/rc_model.h"

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

enum emu_op { EMU_OP_WRITE = 0, EMU_OP_READ = 1, EMU_OP_SEND = 2 };

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

/* Set by SIGINT/SIGTERM (roce_emu.c): the loops stop at their next turn. */
extern volatile sig_atomic_t stop_requested;

static inline uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* emu_net.c: addresses, sockets, the control connection and the exchange. */
int parse_addr(const char *text, uint16_t port, struct sockaddr_storage *ss, socklen_t *len);
void set_port(struct sockaddr_storage *ss, uint16_t port);
const char *addr_text(const struct sockaddr_storage *ss, char *buf, size_t len);
uint32_t random_u32(void);
int open_rx_socket(struct emu_session *s);
__attribute__((format(printf, 2, 3))) int ctl_send(struct emu_session *s, const char *fmt, ...);
void ctl_poll_fin(struct emu_session *s);
int client_exchange(struct emu_session *s);
int server_exchange(struct emu_session *s, struct emu_config *c);

/* emu_loop.c: send, receive and complete until both sides are done. */
int run_loop(struct emu_session *s);

/* emu_results.c: perftest's tables and the STATS line. */
const char *emu_op_name(enum emu_op op);
void print_header(struct emu_session *s);
int print_results(struct emu_session *s, const char *side);

#endif
