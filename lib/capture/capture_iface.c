/* capture_iface.c: an interface's ARPHRD type from sysfs; InfiniBand ports are refused. */
#include "lib/capture/capture_iface.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int capture_iface_arphrd(const char *sysfs_root, const char *ifname)
{
	char path[512], line[32], *end;
	unsigned long type;
	FILE *f;
	int n;

	/* A name with a slash would walk out of class/net: not an interface name anyway. */
	if (!ifname[0] || strchr(ifname, '/') || !strcmp(ifname, ".") || !strcmp(ifname, ".."))
		return -EINVAL;
	n = snprintf(path, sizeof(path), "%s/class/net/%s/type", sysfs_root ? sysfs_root : "/sys",
		     ifname);
	if (n < 0 || (size_t)n >= sizeof(path))
		return -ENAMETOOLONG;
	f = fopen(path, "re");
	if (!f)
		return -errno;
	if (!fgets(line, sizeof(line), f)) {
		fclose(f);
		return -EIO;
	}
	fclose(f);
	errno = 0;
	type = strtoul(line, &end, 10);
	if (errno || end == line || (*end && *end != '\n') || type > 0xffff)
		return -EINVAL;
	return (int)type;
}

int capture_iface_check(const char *sysfs_root, const char *ifname, char *err, size_t err_len)
{
	if (capture_iface_arphrd(sysfs_root, ifname) != ARPHRD_INFINIBAND_TYPE)
		return 0;
	snprintf(err, err_len,
		 "%s is an InfiniBand port: XDP sees Ethernet frames only; capture it with ibdump "
		 "(ibdump -d DEVICE -i PORT -w ib.pcap) and run agentxdp-analyze on the file",
		 ifname);
	return -EPROTONOSUPPORT;
}
