/* capture_iface.h: what kind of port an interface is, before any BPF is loaded on it. */
#ifndef AGENTXDP_CAPTURE_IFACE_H
#define AGENTXDP_CAPTURE_IFACE_H

#include <stddef.h>

#define ARPHRD_INFINIBAND_TYPE 32	/* <linux/if_arp.h> ARPHRD_INFINIBAND */

/*
 * The ARPHRD type of interface `ifname` from SYSFS_ROOT/class/net/IFNAME/type (sysfs_root
 * NULL: "/sys"): >= 0, or -errno when the file cannot be read (no such interface).
 */
int capture_iface_arphrd(const char *sysfs_root, const char *ifname);

/*
 * 0 when XDP can capture on `ifname` as far as its type tells, -EPROTONOSUPPORT with a
 * one-line reason in err for an InfiniBand port (XDP sees Ethernet frames only: ibdump
 * captures IB). An unreadable type is left to the loader's own error: 0.
 */
int capture_iface_check(const char *sysfs_root, const char *ifname, char *err, size_t err_len);

#endif
