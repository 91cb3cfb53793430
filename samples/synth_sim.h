/* synth_sim.h: the simulator's state (fabric, QPs, events, packets in flight, vantage points). */
#ifndef AGENTXDP_SYNTH_SIM_H
#define AGENTXDP_SYNTH_SIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "samples/synth.h"
#include "lib/model/rc_model.h"

struct rng {
	uint64_t s[4];
};
void rng_seed(struct rng *r, uint64_t seed);
uint64_t rng_next(struct rng *r);
double rng_double(struct rng *r);
uint32_t rng_below(struct rng *r, uint32_t n);

enum ev_type { EV_NIC, EV_HOP, EV_POST, EV_PHASE, EV_HOST_FAULT_ON, EV_HOST_FAULT_OFF, EV_RNR_TICK };

struct event {
	uint64_t t;		/* ns since the trace start */
	uint32_t type;
	uint32_t arg;
};

struct host {
	uint8_t ip[16];
	char name[48];
	uint8_t mac[6];
	uint32_t leaf;
	uint32_t *qpe;		/* QP ends on this host: qp_id * 2 + side */
	uint32_t n_qpe;
	size_t cap_qpe;
	uint32_t rr;		/* round-robin cursor of the NIC scheduler */
	uint32_t n_requester_qps;
	uint64_t nic_wake_ns;	/* pending EV_NIC time, UINT64_MAX none */
	uint16_t ip_id;
};

struct link {
	char name[96];
	char a[48], b[48];
};

struct linkdir {
	double rate_bps;
	uint64_t latency_ns;
	uint64_t busy_until;	/* the egress queue drains at this time */
	uint64_t last_arrival_ns;
	uint64_t packets, bytes, dropped, ce_marked, max_queue_ns;
	uint8_t fault_idx[SYNTH_MAX_FAULTS];
	uint32_t n_faults;
	bool faulty;
};

enum qp_op { OP_WRITE, OP_READ, OP_SEND, OP_ATOMIC };

struct qp {
	uint32_t id;
	enum rc_service svc;
	enum qp_op op;
	uint32_t host[2];	/* [0] requester (UC/UD: sender), [1] responder */
	uint32_t qpn[2];
	uint32_t psn[2];	/* first PSN each side sends */
	uint16_t sport;
	uint32_t flow_label;
	uint32_t path[2][SYNTH_MAX_PATH];	/* link directions; [0] requester -> responder */
	uint8_t path_len[2];
	/* workload */
	uint64_t msg_bytes;
	double interval_ns;
	uint32_t outstanding;
	uint32_t in_flight_msgs;
	bool backlog;
	uint64_t n_posted;
	/* model-side truth */
	uint64_t dropped, ce_marked;
	bool used_dir[2];
};

struct qp_end {
	struct rc_qp rc;
};

/* A packet in flight, split so the per-hop work touches only 16 bytes (the pool is large and
 * cold; the packet itself is read only when it leaves, arrives or is recorded). */
struct flight {
	uint32_t qp;
	uint32_t frame_len;	/* bytes, FCS excluded */
	uint32_t next_free;
	uint8_t side;		/* 0 sent by the requester side, 1 by the responder side */
	uint8_t hop;
	uint8_t kind;		/* enum rc_tx_kind */
	uint8_t ecn;
};

struct flight_pkt {
	struct roce_pkt pkt;
	uint64_t depart_ns;
	uint16_t ip_id;
	uint8_t dscp;
	bool timeout_retx;	/* the retransmission a local ACK timeout caused (truth: timeouts) */
};

struct vantage;

struct sim {
	const struct synth_opts *o;
	struct rng rng;
	uint64_t ecmp_seed;
	uint64_t now, end_ns;
	struct host *hosts;
	uint32_t n_hosts;
	struct link *links;
	uint32_t n_links;
	struct linkdir *ldirs;	/* 2 per link */
	struct link_fault faults[SYNTH_MAX_FAULTS];
	struct host_fault host_faults[SYNTH_MAX_FAULTS];
	struct qp *qps;
	uint32_t n_qps;
	struct qp_end *qpe;	/* 2 per QP */
	struct ev_bucket {
		struct event *v;
		uint32_t n;
		size_t cap;
	} ev_buckets[65];
	uint64_t ev_last;	/* time of the last event popped */
	uint32_t ev_b0_head;	/* bucket 0 is a FIFO: next to pop */
	size_t n_events;
	struct flight *flights;
	struct flight_pkt *flight_pkts;
	size_t cap_flights, cap_flight_pkts; /* flights in the pool: cap_flights */
	uint32_t flight_free;
	uint32_t phase_remaining, phases;
	/* outputs */
	struct vantage *vantages;
	uint32_t n_vantages;
	uint64_t packets_written;
	bool stop, oom, write_failed;
};

int synth_sim_init(struct sim *s, const struct synth_opts *o);
int synth_sim_run(struct sim *s);
void synth_sim_free(struct sim *s);
int ev_push(struct sim *s, uint64_t t, uint32_t type, uint32_t arg);
uint32_t host_link(uint32_t host);
uint32_t fabric_link(const struct sim *s, uint32_t leaf, uint32_t spine);
uint16_t qp_udp_sport(uint32_t lqpn, uint32_t rqpn);
uint32_t qp_flow_label(uint32_t lqpn, uint32_t rqpn);

/* synth_out.c */
uint32_t synth_frame_len(const struct sim *s, const struct roce_pkt *pkt);
/* A packet leaves (arrival=false) or reaches (true) host `host` at `now`: vantages record it. */
void synth_record(struct sim *s, uint32_t flight, uint32_t host, bool arrival, uint64_t now);
int synth_outputs_open(struct sim *s);
int synth_outputs_close(struct sim *s);

#endif
