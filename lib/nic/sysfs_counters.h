/*
 * sysfs_counters.h: one read of every RDMA port's counters from sysfs, the sensor of
 * agentxdp-nicstat and of the agent. RoCE is processed inside the NIC and never reaches
 * the host stack, so the NIC's own counters are the first thing to read, every file of:
 *
 *   ROOT/class/infiniband/DEV/ports/N/counters      IB PMA port counters   (source "counters")
 *   ROOT/class/infiniband/DEV/ports/N/hw_counters   driver counters        (source "hw_counters")
 *   ROOT/class/infiniband/DEV/hw_counters           device-wide, as port 0 (source "hw_counters")
 *   ROOT/class/net/NETDEV/statistics                the bound netdev       (source "netdev")
 *
 * The netdev comes from ports/N/gid_attrs/ndevs/I, else the entries of DEV/device/net
 * (the one whose dev_port is N-1),
 * else DEV/parent (rxe). Every counter the driver exposes is kept under its own name,
 * known or not. ROOT is "/sys" normally and a fixture tree in tests.
 */
#ifndef AGENTXDP_SYSFS_COUNTERS_H
#define AGENTXDP_SYSFS_COUNTERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NIC_NAME_MAX 64

enum nic_counter_source {
	NIC_SRC_COUNTERS = 0,	/* ports/N/counters */
	NIC_SRC_HW_COUNTERS = 1,	/* ports/N/hw_counters or DEV/hw_counters */
	NIC_SRC_NETDEV = 2,	/* /sys/class/net/NETDEV/statistics */
};
#define NIC_SRC_COUNT 3

/* Signals a port's counters are summed into (nic_rates.h maps counter names to them). */
enum nic_signal {
	NIC_SIG_RETRANSMISSION = 0,
	NIC_SIG_TIMEOUT,
	NIC_SIG_SEQUENCE_ERROR,
	NIC_SIG_CONGESTION,
	NIC_SIG_RNR,
	NIC_SIG_LINK_ERROR,
	NIC_SIG_COUNT,
	NIC_SIG_NONE = -1,
};

/* How a counter's change over the interval was read (nic_counter_delta()). */
enum nic_delta_kind {
	NIC_DELTA_FIRST = 0,	/* no earlier value: no rate yet */
	NIC_DELTA_NORMAL,
	NIC_DELTA_WRAP32,	/* wrapped past 2^32 */
	NIC_DELTA_WRAP64,	/* wrapped past 2^64 */
	NIC_DELTA_RESET,	/* went down to below half its old value: a device reset,
				 * counted from zero (delta = new value) */
	NIC_DELTA_BACKWARDS,	/* went down a little: not a reset, no rate (delta 0) */
};

struct nic_counter {
	char name[NIC_NAME_MAX];	/* the file name, as the driver names it */
	enum nic_counter_source source;
	enum nic_signal signal;		/* NIC_SIG_NONE when it feeds no signal */
	uint64_t value;			/* as read */
	/* Filled by nic_rates_compute(): */
	enum nic_delta_kind delta_kind;
	uint64_t delta;			/* change since the previous read */
	double rate_per_s;		/* delta / interval; valid unless delta_kind is FIRST */
	uint64_t series_start_ns;	/* first read, or the detected reset (OTLP start time) */
};

struct nic_port {
	char device[NIC_NAME_MAX];	/* "mlx5_0" */
	uint32_t port;			/* 1..N; 0 holds the device-wide hw_counters */
	char netdev[NIC_NAME_MAX];	/* "" when no netdev is bound or found */
	char state[32];			/* ports/N/state, e.g. "4: ACTIVE" */
	char link_layer[16];		/* "Ethernet", "InfiniBand" */
	struct nic_counter *counters;	/* sorted by (source, name) */
	size_t n_counters;
	/* Filled by nic_rates_compute() / nic_detect(): */
	bool has_rates;			/* this port was also in the previous read */
	bool signal_present[NIC_SIG_COUNT];	/* some counter of the signal exists */
	double signal_rate[NIC_SIG_COUNT];	/* per second, summed over its counters */
	double anomaly[NIC_SIG_COUNT];	/* severity when the port stands out, else 0 */
};

struct nic_snapshot {
	uint64_t ts_ns;			/* when read, ns since the epoch */
	struct nic_port *ports;		/* sorted by (device, port) */
	size_t n_ports;
	size_t n_devices;
	unsigned int read_errors;	/* counter files unreadable or not a number */
};

/*
 * Read every RDMA device under ROOT into SNAP (zeroed first). 0 on success, including a
 * host without RDMA devices (n_devices == 0); -ENOENT when ROOT/class does not exist (not
 * a sysfs); -ENOMEM (-EOVERFLOW for an array too large to size). Unreadable counter
 * files are skipped and counted in read_errors.
 */
int nic_snapshot_read(const char *root, uint64_t ts_ns, struct nic_snapshot *snap);
void nic_snapshot_free(struct nic_snapshot *snap);

const struct nic_port *nic_snapshot_find_port(const struct nic_snapshot *snap, const char *device,
					      uint32_t port);
const char *nic_source_name(enum nic_counter_source source);	/* "counters", ... */
const char *nic_signal_name(enum nic_signal signal);		/* "retransmission", ... */
const char *nic_delta_kind_name(enum nic_delta_kind kind);	/* "first", "normal", "wrap32", ... */

#endif
