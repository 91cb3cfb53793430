/* synth.h: agentxdp-synth internals shared by its CLI (synth_main.c), simulator (synth_sim.c) and outputs (synth_out.c). */
#ifndef AGENTXDP_SYNTH_H
#define AGENTXDP_SYNTH_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "lib/model/rc_model.h"
#include "lib/util/util.h"

#define SYNTH_MAX_HOSTS 1024
#define SYNTH_MAX_SWITCHES 256
#define SYNTH_MAX_FAULTS 16
#define SYNTH_MAX_PATH 4
#define SYNTH_INCAST_FACTOR 3	/* --incast-factor's default */

enum synth_workload { WL_WRITE, WL_READ, WL_RPC, WL_COLLECTIVE, WL_MIXED, WL_ATOMIC };
enum synth_vantage { VANTAGE_MIRROR, VANTAGE_HOST, VANTAGE_EACH_HOST };
enum synth_format { FORMAT_PCAPNG, FORMAT_PCAP };
enum link_fault_kind { LF_SLOW, LF_LOSS, LF_ECN, LF_FLAP };
enum host_fault_kind { HF_RNR, HF_SLOW_RESPONDER, HF_NIC_RETRANSMIT };

struct link_fault {
	enum link_fault_kind kind;
	char link[96];		/* link name as in links.csv */
	char from[48], to[48];	/* direction; both empty = both directions */
	char size_text[64];	/* as given */
	uint64_t extra_latency_ns;	/* slow: constant (or mean when queue_like) */
	bool queue_like;	/* slow: exponential extra latency, FIFO kept */
	double rate_divisor;	/* slow "Nx": serialization N times slower */
	double rate;		/* loss / ecn probability */
	uint64_t down_ns, period_ns;	/* flap */
	uint64_t onset_ns, end_ns;	/* relative to the trace start; end 0 = never */
	/* resolved by the simulator */
	int link_index;
	int dir_mask;		/* bit 0: a>b, bit 1: b>a */
};

struct host_fault {
	enum host_fault_kind kind;
	uint8_t ip[16];
	char host_text[48];
	char size_text[64];
	uint64_t size_ns;	/* rnr: receive-post interval; slow-responder: delay; nic-retransmit: timeout */
	uint64_t onset_ns, end_ns;
	int host_index;
};

struct synth_opts {
	const char *out;		/* directory, or a .pcapng/.pcap path */
	uint32_t hosts, leaves, spines, qps_per_pair, peers;
	uint64_t duration_ns;
	uint64_t start_ns;		/* epoch of the first timestamp */
	enum synth_workload workload;
	uint64_t seed;
	bool ipv6;
	uint16_t vlan;
	uint32_t snaplen;		/* 0 = whole frames */
	uint8_t encap;			/* enum roce_encap: mirror-session tunnel, 0 = none */
	bool link_ib;			/* --link ib: native InfiniBand frames, hosts are LIDs */
	bool mirror_sessions;		/* every vantage a mirror session of its own, in one trace */
	uint64_t collector_delay_ns;	/* ERSPAN III: collector arrival - switch time, its median */
	uint64_t collector_jitter_ns;	/* ... its standard deviation (normal) */
	double collector_drift_ppm;	/* ... the collector clock's drift against the switch's */
	enum synth_vantage vantage;
	uint8_t vantage_ip[16];
	char vantage_text[48];
	enum synth_format format;
	bool psn_wrap;
	uint32_t mtu;
	uint64_t msg_bytes;		/* 0 = workload default */
	uint32_t outstanding;		/* messages in flight per QP */
	double load;			/* offered load per host, fraction of the host link */
	double host_gbps, fabric_gbps;
	uint64_t link_latency_ns;
	uint64_t buffer_bytes;
	uint64_t ecn_kmin_bytes, ecn_kmax_bytes;
	double ecn_pmax;
	uint64_t ack_timeout_ns;
	uint32_t ack_every_pkts;	/* RC ACK coalescing; 0 = the model's default */
	uint64_t max_packets;		/* stop after this many packets written (0 = no limit) */
	uint64_t pause_ns;		/* collective: pause between phases */
	struct link_fault faults[SYNTH_MAX_FAULTS];
	int n_faults;
	struct host_fault host_faults[SYNTH_MAX_FAULTS];
	int n_host_faults;
	/* Healthy load shapes, no fault (docs/evaluation.md): */
	bool incast;			/* incast_ip receives incast_factor x its share */
	uint8_t incast_ip[16];
	char incast_text[48];
	uint32_t incast_factor;		/* 0: SYNTH_INCAST_FACTOR (3) */
	double ecmp_skew;		/* this share of cross-leaf flows hash to spine 0 */
	char command[4096];		/* the command line, for truth.json and command.txt */
};

void synth_opts_default(struct synth_opts *o);
/* Run the whole synthesis: returns 0, or 1 with a message already printed. */
int synth_run(const struct synth_opts *o);

const char *synth_workload_name(enum synth_workload w);

#endif
