/*
 * fabric_sim.h: a packet-sampled leaf-spine fabric model for the localization evaluation
 * when no synthesized trace is at hand. It draws what a RoCE capture would yield per QP
 * (ACK latency samples, NAK-driven retransmissions, CE marks and CNPs) from per-link,
 * per-direction latency, queueing, loss and marking, and hands the result to localize() as
 * struct flow_stats. Ground truth is the fault it was asked to inject.
 */
#ifndef AGENTXDP_FABRIC_SIM_H
#define AGENTXDP_FABRIC_SIM_H

#include <stdbool.h>
#include <stdint.h>

#include "lib/track/flow.h"
#include "lib/localize/topology.h"

enum sim_fault_kind { SIM_HEALTHY, SIM_SLOW, SIM_LOSSY, SIM_CONGESTED };

struct sim_config {
	uint32_t seed;
	int hosts, leaves, spines;
	int qps_per_host;
	double duration_s;		/* simulated time */
	uint64_t window_ns;
	double link_latency_us;		/* propagation + serialization per link */
	enum sim_fault_kind fault;
	double slow_factor;		/* SIM_SLOW: the faulty direction's latency x this */
	double loss_rate;		/* SIM_LOSSY: per data packet */
	double mark_rate;		/* SIM_CONGESTED: CE marks per packet, plus queueing */
	bool host_links_only;		/* the faulty link is a host's access link */
};

struct sim_result {
	struct topology topo;		/* links and paths (paths.csv equivalent) */
	struct flow_stats *flows;
	size_t n_flows;
	struct flow_window *windows;	/* backing store of flows[].windows */
	char fault_link[64];		/* "" when healthy */
	char fault_host[64];		/* the host end of a host link fault, else "" */
	char fault_dir[160];		/* "a -> b" */
	uint64_t onset_ns;
};

int sim_run(const struct sim_config *cfg, struct sim_result *out);
void sim_free(struct sim_result *r);

#endif
