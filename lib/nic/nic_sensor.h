/*
 * nic_sensor.h: the NIC-counter sensor as one object a loop polls every interval
 * (agentxdp-nicstat's, and the agent's): read sysfs, compute rates against the previous
 * read, judge the ports, and add the NIC metric families (docs/metrics.md) to a set.
 *
 *   struct nic_sensor s;
 *   nic_sensor_init(&s, "/sys", NULL);
 *   every interval:
 *       nic_sensor_poll(&s, now_ns, &findings, &n);   // s.cur is this read, s.prev the last
 *       nic_metrics_add(&set, &s.cur, s.read_errors_total);
 *   nic_sensor_free(&s);
 */
#ifndef AGENTXDP_NIC_SENSOR_H
#define AGENTXDP_NIC_SENSOR_H

#include <stdbool.h>

#include "lib/nic/nic_rates.h"
#include "lib/nic/sysfs_counters.h"

struct nic_sensor {
	const char *sysfs_root;		/* "/sys" */
	struct nic_snapshot cur;	/* the last read (valid after a successful poll) */
	struct nic_snapshot prev;	/* the read before it (n_ports 0 when none) */
	bool have_cur, have_prev;
	struct nic_detector detector;
	uint64_t reads;
	uint64_t read_errors_total;	/* unreadable counter files, cumulative */
};

void nic_sensor_init(struct nic_sensor *s, const char *sysfs_root, const struct nic_detector_opts *opts);
/*
 * Read at ts_ns, rate against the previous read, append findings (free with
 * nic_findings_free()). 0, -ENOENT (no sysfs at the root), or another -errno; on
 * failure the previous reads are kept.
 */
int nic_sensor_poll(struct nic_sensor *s, uint64_t ts_ns, struct finding **findings, size_t *n_findings);
void nic_sensor_free(struct nic_sensor *s);

#endif
