/*
 * localize.h: slow-link localization. From per-flow statistics (and optionally the fabric's
 * links and per-flow paths) name the link, host link, path or host that hurts the traffic,
 * how badly, since when, and how sure we are. Pure: no I/O (docs/localization.md).
 */
#ifndef AGENTXDP_LOCALIZE_H
#define AGENTXDP_LOCALIZE_H

#include <stddef.h>
#include <stdint.h>

#include "lib/localize/finding.h"
#include "lib/track/flow.h"
#include "lib/localize/topology.h"

/* Every threshold, with its default in localize_config_default() and docs/localization.md. */
struct localize_config {
	/* Evidence a flow must carry to count. */
	uint32_t min_latency_samples;	/* ACK/READ/completion samples for latency evidence (20) */
	uint64_t min_packets;		/* packets for loss/ECN evidence (8) */
	uint32_t min_completion_samples; /* message completions for completion evidence (10) */
	uint32_t min_class_flows;	/* flows sharing hop count and latency kind for a
					   population baseline; smaller classes fall back to each
					   flow's own early windows (4) */
	uint32_t baseline_windows;	/* early windows forming a flow's own baseline (3) */

	/* slow: latency excess explained by one subject. */
	double slow_min_ratio;		/* against peers: (baseline + excess) / baseline at least
					   this (1.20; ECMP imbalance alone queues ~17% in a
					   loaded healthy fabric) */
	double shift_min_ratio;		/* against the flows' own past windows (1.05) */
	double slow_min_z;		/* excess / robust sigma of unaffected flows (5) */
	double shift_min_z;		/* likewise for the shift against the flows' past (4.5) */
	double noise_floor_frac;	/* sigma is at least this fraction of the baseline (0.01) */

	/* lossy: loss events (NAK sequence errors, timeouts; else retransmissions). */
	double loss_min_rate;		/* events per data packet through the subject (0.0002) */
	uint32_t loss_min_events;	/* (3) */
	double loss_min_ratio;		/* rate through the subject / rate elsewhere (5) */
	double loss_min_z;		/* Poisson z against the rate elsewhere (3) */

	/* congested: ECN CE marks (or CNPs when no CE is visible). */
	double ecn_min_rate;		/* marks per data packet through the subject (0.005) */
	uint32_t ecn_min_events;	/* (10) */
	double ecn_min_ratio;		/* (4) */
	double ecn_min_z;		/* (3) */

	/* host: receiver-not-ready NAKs at a responder. */
	uint32_t rnr_min_naks;		/* (3) */

	/* Preference between explanations that fit equally well (score = fit gain / penalty). */
	double penalty_path;		/* a host pair instead of a link (1.5) */
	double penalty_host;		/* responder turnaround instead of a link (1.2) */
	double tie_min_ratio;		/* links scoring at least this fraction of the best pick's
					   score are named with it as a set, "a | b" (0.95) */

	/* Alert or notice (enum finding_level): what ordinary traffic does not explain. */
	double load_notice_ratio;	/* slow or congested: a notice when the subject carries
					   this many times its peers' median load (2) */
	double busy_ce_rate;		/* slow or congested: a notice when the packets of the
					   connections that do not cross the subject are
					   CE-marked at this rate or more (0.001) */
	double queue_marks_z;		/* slow or host latency in a busy fabric: a notice only
					   when its hurt connections carry more CE marks than
					   the peers' rate gives their packets, by this Poisson
					   z: queueing marks, a slow cable or a latency step
					   does not (3, as ecn_min_z; 0 off) */
	double quiet_marks_ratio;	/* slow or congested in a fabric that is not busy: a
					   notice when its hurt connections are CE-marked
					   between this (3; 0 off) and quiet_marks_max (10)
					   times the peers' rate (z queue_marks_z), carrying
					   their load, a latency pick under quiet_max_ratio
					   (2x) its peers': ordinary queueing. A fabric set
					   (no topology) under quiet_fabric_max_ratio (1.4x)
					   its peers' latency is a notice, marked or not */
	double quiet_marks_max;
	double quiet_max_ratio;
	double quiet_fabric_max_ratio;
	double fabric_step_min_ratio;	/* busy fabric, no topology: a fabric set at this many
					   times its peers' latency (3; 0 off), its connections
					   CE-marked under fabric_step_max_marks (2.5) times the
					   peers' rate, stays an alert: queueing that deep
					   marks; a slow cable or added latency does not */
	double fabric_step_max_marks;
	double fabric_weak_max_ratio;	/* no topology: a fabric set under this many times its
					   peers' latency (2) at under fabric_weak_max_z (11.5)
					   robust sigmas is a notice: ECMP collisions (0 off) */
	double fabric_weak_max_z;
	double loss_part_min_events;	/* no topology: a lossy host link or host is a notice
					   when its reliable connections that lost nothing
					   would have lost this many events at its rate (10;
					   0 off): a link further on drops */
	double outlier_min_ratio;	/* busy fabric, marks on a switch link: still an alert
					   at this many times its peers' median rate (2; 0 off) */
	double outlier_min_z;		/* ... and this many robust sigmas above them (5) */
	double outlier_max_load;	/* ... carrying under this multiple of their load (0.9) */
	double floor_min_z;		/* a switch link whose round trips' quickest moments are
					   this many robust sigmas slower than its peer links'
					   (4; 0 off): with load shed, a slow link (congested ->
					   slow); with the median moved as much, a latency step */
	double step_floor_share;	/* ... a step: floor excess / median excess (0.75) */
	double loss_marks_ratio;	/* lossy in a busy fabric: a notice when the hurt flows
					   are CE-marked this many times as often as they lose
					   packets: a queue's overflow (3; 0 off) */
	double loss_random_max;		/* ... unless its loss events are spread at random in
					   time: their chi-square per window under this (3; 0 off) */
	double loss_random_min_events;	/* ... counted on at least this many events (50) */
	double loss_random_min_ratio;	/* a switch link's drops so spread pass at this rate
					   through / rate elsewhere, short of loss_min_ratio
					   (2; 0 off) ... */
	double loss_random_short_events;	/* ... on this many events or more (150) */
	uint32_t timer_min_timeouts;	/* lossy with only timeouts, no PSN sequence NAK, from
					   one sender: this many make it the sender's timer,
					   kind host (10; 0 off) */
	double host_alert_min_ratio;	/* responder turnaround over peers for an alert (2) */
	double host_few_min_ratio;	/* ... when it rests on one or two connections (4) */

	uint32_t max_ecmp_paths;	/* shortest paths enumerated per host pair (64) */
	uint32_t max_findings;		/* (5) */
	double min_confidence;		/* findings below are dropped (0.2) */
	double onset_min_shift;		/* change point: shift / within-segment sigma (3) */
};

void localize_config_default(struct localize_config *cfg);

/* How much of a trace localize() can judge by its latency. */
struct localize_coverage {
	size_t flows;		/* flows that carry requests (not responses, not datagrams) */
	size_t judged;		/* ... with enough ACK, READ or completion samples for latency */
	uint32_t min_samples;	/* that bar: min_latency_samples */
};

/* The coverage of localize(flows, n_flows, ..., cfg) (cfg NULL: the defaults); no I/O. An
 * all-clear over flows whose latency was not judged must say so. */
void localize_coverage(const struct flow_stats *flows, size_t n_flows,
		       const struct localize_config *cfg, struct localize_coverage *out);
/* Latency judged on under half the flows (cov may be NULL: not known, false)? Then an
 * all-clear says what it did not judge. */
bool localize_coverage_partial(const struct localize_coverage *cov);

/*
 * Localize. topo may be NULL (each host's access link and each host pair are the
 * candidates); with a topology, its paths (paths.csv) are used when they match a flow's
 * (src, dst, udp_sport), otherwise the evidence is spread over the ECMP shortest paths.
 * On success *out holds *n_out findings ranked by confidence (free with findings_free);
 * a healthy trace yields none. Returns 0, -EINVAL or -ENOMEM.
 */
int localize(const struct flow_stats *flows, size_t n_flows, const struct topology *topo,
	     const struct localize_config *cfg, struct finding **out, size_t *n_out);

#endif
