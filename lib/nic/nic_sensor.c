/* nic_sensor.c: the NIC-counter sensor polled every interval (read, rate, judge). */
#include <errno.h>
#include <string.h>

#include "lib/nic/nic_sensor.h"

void nic_sensor_init(struct nic_sensor *s, const char *sysfs_root, const struct nic_detector_opts *opts)
{
	memset(s, 0, sizeof(*s));
	s->sysfs_root = sysfs_root ? sysfs_root : "/sys";
	nic_detector_init(&s->detector, opts);
}

int nic_sensor_poll(struct nic_sensor *s, uint64_t ts_ns, struct finding **findings, size_t *n_findings)
{
	struct nic_snapshot next;
	int err;

	err = nic_snapshot_read(s->sysfs_root, ts_ns, &next);
	if (err)
		return err;
	s->reads++;
	s->read_errors_total += next.read_errors;
	nic_rates_compute(s->have_cur ? &s->cur : NULL, &next);
	if (s->have_prev)
		nic_snapshot_free(&s->prev);
	s->prev = s->cur;
	s->have_prev = s->have_cur;
	s->cur = next;
	s->have_cur = true;
	err = nic_detect(&s->detector, &s->cur, findings, n_findings);
	return err < 0 ? err : 0;
}

void nic_sensor_free(struct nic_sensor *s)
{
	if (s->have_cur)
		nic_snapshot_free(&s->cur);
	if (s->have_prev)
		nic_snapshot_free(&s->prev);
	nic_detector_free(&s->detector);
	memset(s, 0, sizeof(*s));
}
