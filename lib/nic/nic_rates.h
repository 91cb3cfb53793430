/*
 * nic_rates.h: pure functions over NIC counter snapshots (sysfs_counters.h): the change
 * of each counter between two reads (wrap- and reset-aware), per-signal rates, the
 * detector that names a port whose retransmission, timeout, sequence-error, congestion,
 * RNR or link-error rate stands out, and the metric families both exporters publish.
 * No I/O: agentxdp-nicstat and the agent call these every interval.
 */
#ifndef AGENTXDP_NIC_RATES_H
#define AGENTXDP_NIC_RATES_H

#include <stddef.h>
#include <stdint.h>

#include "lib/localize/finding.h"
#include "lib/export/metrics.h"
#include "lib/nic/sysfs_counters.h"

/* The signal a counter name feeds, or NIC_SIG_NONE (the table is in nic_rates.c). */
enum nic_signal nic_counter_signal(const char *name);
/* The finding kind a signal supports: lossy, congested, host (RNR). */
enum finding_kind nic_signal_finding_kind(enum nic_signal signal);

/*
 * Change from PREV to CUR. A decrease is a 32-bit wrap when PREV was in the upper half of
 * the 32-bit range and CUR in the lower half, a 64-bit wrap likewise for 64 bits, a reset
 * when CUR is below half of PREV (delta = CUR: counted from zero), and otherwise a glitch
 * (NIC_DELTA_BACKWARDS, delta 0). Never returns a huge false delta.
 */
enum nic_delta_kind nic_counter_delta(uint64_t prev, uint64_t cur, uint64_t *delta);

/*
 * Fill CUR's per-counter deltas and rates and per-port signal rates from PREV (may be
 * NULL for the first read). Counters and ports absent from PREV (a device that appeared,
 * a netdev rebound) get NIC_DELTA_FIRST. Returns how many of CUR's ports are new.
 */
size_t nic_rates_compute(const struct nic_snapshot *prev, struct nic_snapshot *cur);

struct nic_detector_opts {
	double factor;			/* stands out at >= factor x the reference (default 4) */
	double min_rate_per_s;		/* and at least this many events/s (default 1) */
	unsigned int warmup;		/* intervals before a port's own baseline counts (3) */
	double baseline_alpha;		/* EWMA weight of a new normal interval (0.2) */
};

struct nic_baseline {
	char device[NIC_NAME_MAX];
	uint32_t port;
	double ewma[NIC_SIG_COUNT];	/* events/s */
	unsigned int n[NIC_SIG_COUNT];	/* normal intervals seen */
};

struct nic_detector {
	struct nic_detector_opts opts;
	struct nic_baseline *baselines;
	size_t n_baselines;
	size_t cap_baselines;
};

void nic_detector_init(struct nic_detector *d, const struct nic_detector_opts *opts);
void nic_detector_free(struct nic_detector *d);

/*
 * Compare each port's signal rates with the host's other ports (median of the others)
 * and with its own baseline; set port->anomaly[] and append one struct finding per port
 * and signal that stands out to *findings (realloc'ed; free with nic_findings_free()).
 * Ports with no rates yet, and port 0 (device-wide counters), are not judged.
 * Returns the number of findings added, or -ENOMEM.
 */
int nic_detect(struct nic_detector *d, struct nic_snapshot *cur, struct finding **findings,
	       size_t *n_findings);
void nic_findings_free(struct finding *findings, size_t n);

/*
 * Add the NIC families of docs/metrics.md for SNAP to SET: the raw counters, their rates,
 * signal rates, anomaly severities and the port count; read_errors_total is cumulative.
 * Returns 0, -EINVAL, -ENOMEM or -EOVERFLOW (an array too large to size).
 */
int nic_metrics_add(struct metric_set *set, const struct nic_snapshot *snap,
		    uint64_t read_errors_total);

#endif
