/* sysfs_counters.c: read every RDMA port's counters (IB, driver, netdev) from sysfs. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/util/log.h"
#include "lib/util/util.h"
#include "lib/nic/nic_rates.h"
#include "lib/nic/sysfs_counters.h"

/* Read a small sysfs file into buf, trailing newline removed. 0 or -errno. */
static int read_small_file(const char *path, char *buf, size_t len)
{
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	do {
		n = read(fd, buf, len - 1);
	} while (n < 0 && errno == EINTR);
	if (n < 0) {
		int err = -errno;

		close(fd);
		return err;
	}
	close(fd);
	buf[n] = '\0';
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	return 0;
}

/* A counter file: one decimal number. */
static int read_counter_file(const char *path, uint64_t *value)
{
	char buf[64], *end;
	unsigned long long v;
	int err;

	err = read_small_file(path, buf, sizeof(buf));
	if (err)
		return err;
	if (buf[0] < '0' || buf[0] > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(buf, &end, 10);
	if (errno || *end)
		return -EINVAL;
	*value = v;
	return 0;
}

/* Format a path into a PATH_MAX buffer; false when it does not fit. */
__attribute__((format(printf, 2, 3))) static bool pathf(char *out, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(out, PATH_MAX, fmt, ap);
	va_end(ap);
	return n >= 0 && n < PATH_MAX;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted names of the entries of DIR (no dot files). *names NULL and 0 when DIR is absent. */
static int list_dir(const char *dir, char ***names, size_t *n)
{
	struct dirent *de;
	char **v = NULL;
	size_t cnt = 0, cap = 0;
	int err;
	DIR *d;

	*names = NULL;
	*n = 0;
	d = opendir(dir);
	if (!d)
		return errno == ENOENT || errno == ENOTDIR ? 0 : -errno;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		err = util_ensure_mem((void **)&v, &cap, sizeof(*v), cnt + 1);
		if (err)
			goto fail;
		v[cnt] = strdup(de->d_name);
		if (!v[cnt]) {
			err = -ENOMEM;
			goto fail;
		}
		cnt++;
	}
	closedir(d);
	qsort(v, cnt, sizeof(*v), cmp_str);
	*names = v;
	*n = cnt;
	return 0;
fail:
	closedir(d);
	while (cnt)
		free(v[--cnt]);
	free(v);
	return err;
}

static void free_names(char **names, size_t n)
{
	while (n)
		free(names[--n]);
	free(names);
}

static int add_counter(struct nic_port *p, size_t *cap, const char *name,
		       enum nic_counter_source source, uint64_t value)
{
	struct nic_counter *c;
	int err = util_ensure_mem((void **)&p->counters, cap, sizeof(*p->counters), p->n_counters + 1);

	if (err)
		return err;
	c = &p->counters[p->n_counters++];
	memset(c, 0, sizeof(*c));
	snprintf(c->name, sizeof(c->name), "%s", name);
	c->source = source;
	c->signal = nic_counter_signal(name);
	c->value = value;
	return 0;
}

/* Every regular file of DIR that holds a number becomes a counter of SOURCE. */
static int read_counter_dir(struct nic_snapshot *snap, struct nic_port *p, size_t *cap,
			    const char *dir, enum nic_counter_source source)
{
	char **names, path[PATH_MAX];
	size_t n, i;
	uint64_t v;
	int err;

	err = list_dir(dir, &names, &n);
	if (err)
		return err;
	for (i = 0; i < n && !err; i++) {
		/* hw_counters/lifespan is the driver's cache time in ms, not a counter. */
		if (source == NIC_SRC_HW_COUNTERS && strcmp(names[i], "lifespan") == 0)
			continue;
		if (strlen(names[i]) >= NIC_NAME_MAX || !pathf(path, "%s/%s", dir, names[i]))
			continue;
		err = read_counter_file(path, &v);
		if (err) {
			pr_debug("skipping %s: %s\n", path, strerror(-err));
			snap->read_errors++;
			err = 0;
			continue;
		}
		err = add_counter(p, cap, names[i], source, v);
	}
	free_names(names, n);
	return err;
}

static bool netdev_exists(const char *root, const char *name)
{
	char path[PATH_MAX];
	struct stat st;

	pathf(path, "%s/class/net/%s", root, name);
	return stat(path, &st) == 0;
}

/* Out of memory: an error to pass on, not a folder to do without. */
static bool out_of_memory(int err)
{
	return err == -ENOMEM || err == -EOVERFLOW;
}

/*
 * The netdev bound to DEV port N, or "" (see the header for the order tried). 0, or
 * -ENOMEM (a folder that cannot be read is only a way that did not find it).
 */
static int find_netdev(const char *root, const char *dev, uint32_t port, char *out, size_t len)
{
	char dir[PATH_MAX], path[PATH_MAX], buf[NIC_NAME_MAX];
	char **names;
	size_t n, i;
	int err;

	out[0] = '\0';
	pathf(dir, "%s/class/infiniband/%s/ports/%u/gid_attrs/ndevs", root, dev, port);
	err = list_dir(dir, &names, &n);
	if (out_of_memory(err))
		return err;
	if (err == 0) {
		/* GID entries without a netdev fail to read; the first one that reads wins. */
		for (i = 0; i < n && i < 64; i++) {
			pathf(path, "%s/%s", dir, names[i]);
			if (read_small_file(path, buf, sizeof(buf)) == 0 && buf[0]) {
				snprintf(out, len, "%s", buf);
				break;
			}
		}
		free_names(names, n);
		if (out[0])
			return 0;
	}
	pathf(dir, "%s/class/infiniband/%s/device/net", root, dev);
	err = list_dir(dir, &names, &n);
	if (out_of_memory(err))
		return err;
	if (err == 0 && n) {
		/* Several netdevs on one PCI function: dev_port is 0-based, RDMA ports 1-based. */
		for (i = 0; i < n; i++) {
			uint64_t dev_port;

			pathf(path, "%s/%s/dev_port", dir, names[i]);
			if (read_counter_file(path, &dev_port) == 0 && dev_port + 1 == port) {
				snprintf(out, len, "%s", names[i]);
				break;
			}
		}
		if (!out[0])
			snprintf(out, len, "%s", names[0]);
		free_names(names, n);
		return 0;
	}
	free_names(names, n);
	pathf(path, "%s/class/infiniband/%s/parent", root, dev);
	if (read_small_file(path, buf, sizeof(buf)) == 0 && buf[0] && netdev_exists(root, buf))
		snprintf(out, len, "%s", buf);
	return 0;
}

static int cmp_counter(const void *a, const void *b)
{
	const struct nic_counter *x = a, *y = b;

	if (x->source != y->source)
		return (int)x->source - (int)y->source;
	return strcmp(x->name, y->name);
}

static int new_port(struct nic_snapshot *snap, size_t *cap, const char *dev, uint32_t port,
		    struct nic_port **out)
{
	struct nic_port *p;
	int err = util_ensure_mem((void **)&snap->ports, cap, sizeof(*snap->ports), snap->n_ports + 1);

	if (err)
		return err;
	p = &snap->ports[snap->n_ports++];
	memset(p, 0, sizeof(*p));
	snprintf(p->device, sizeof(p->device), "%s", dev);
	p->port = port;
	*out = p;
	return 0;
}

static int read_port(const char *root, struct nic_snapshot *snap, size_t *ports_cap,
		     const char *dev, uint32_t port)
{
	char dir[PATH_MAX], path[PATH_MAX];
	struct nic_port *p;
	size_t cap = 0;
	int err;

	err = new_port(snap, ports_cap, dev, port, &p);
	if (err)
		return err;
	pathf(dir, "%s/class/infiniband/%s/ports/%u", root, dev, port);
	pathf(path, "%s/state", dir);
	read_small_file(path, p->state, sizeof(p->state));
	pathf(path, "%s/link_layer", dir);
	read_small_file(path, p->link_layer, sizeof(p->link_layer));
	pathf(path, "%s/counters", dir);
	err = read_counter_dir(snap, p, &cap, path, NIC_SRC_COUNTERS);
	if (!err) {
		pathf(path, "%s/hw_counters", dir);
		err = read_counter_dir(snap, p, &cap, path, NIC_SRC_HW_COUNTERS);
	}
	if (!err)
		err = find_netdev(root, dev, port, p->netdev, sizeof(p->netdev));
	if (!err && p->netdev[0]) {
		pathf(path, "%s/class/net/%s/statistics", root, p->netdev);
		err = read_counter_dir(snap, p, &cap, path, NIC_SRC_NETDEV);
	}
	qsort(p->counters, p->n_counters, sizeof(*p->counters), cmp_counter);
	return err;
}

static bool parse_port_number(const char *s, uint32_t *port)
{
	char *end;
	unsigned long v;

	if (s[0] < '1' || s[0] > '9')
		return false;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v > 65535)
		return false;
	*port = (uint32_t)v;
	return true;
}

static int read_device(const char *root, struct nic_snapshot *snap, size_t *ports_cap,
		       const char *dev)
{
	char dir[PATH_MAX];
	char **names;
	size_t n, i;
	uint32_t port;
	int err;

	pathf(dir, "%s/class/infiniband/%s/ports", root, dev);
	err = list_dir(dir, &names, &n);
	if (err)
		return err;
	for (i = 0; i < n && !err; i++)
		if (parse_port_number(names[i], &port))
			err = read_port(root, snap, ports_cap, dev, port);
	free_names(names, n);
	if (err)
		return err;
	/* Device-wide driver counters (mlx5) as port 0, kept only when there are some. */
	pathf(dir, "%s/class/infiniband/%s/hw_counters", root, dev);
	{
		struct nic_port *p;
		size_t cap = 0;

		err = new_port(snap, ports_cap, dev, 0, &p);
		if (err)
			return err;
		err = read_counter_dir(snap, p, &cap, dir, NIC_SRC_HW_COUNTERS);
		if (!p->n_counters) {
			free(p->counters);
			snap->n_ports--;
		} else {
			qsort(p->counters, p->n_counters, sizeof(*p->counters), cmp_counter);
		}
	}
	return err;
}

static int cmp_port(const void *a, const void *b)
{
	const struct nic_port *x = a, *y = b;
	int c = strcmp(x->device, y->device);

	if (c)
		return c;
	return x->port < y->port ? -1 : x->port > y->port;
}

int nic_snapshot_read(const char *root, uint64_t ts_ns, struct nic_snapshot *snap)
{
	char dir[PATH_MAX];
	struct stat st;
	char **names;
	size_t n, i, ports_cap = 0;
	int err;

	memset(snap, 0, sizeof(*snap));
	snap->ts_ns = ts_ns;
	/* Leave room under PATH_MAX for the deepest path read below the root. */
	if (strlen(root) > PATH_MAX - 3 * NIC_NAME_MAX - 128)
		return -ENAMETOOLONG;
	pathf(dir, "%s/class", root);
	if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
		return -ENOENT;
	pathf(dir, "%s/class/infiniband", root);
	err = list_dir(dir, &names, &n);
	if (err)
		return err;
	for (i = 0; i < n && !err; i++) {
		if (strlen(names[i]) >= NIC_NAME_MAX)
			continue;
		err = read_device(root, snap, &ports_cap, names[i]);
		snap->n_devices++;
	}
	free_names(names, n);
	if (err) {
		nic_snapshot_free(snap);
		return err;
	}
	qsort(snap->ports, snap->n_ports, sizeof(*snap->ports), cmp_port);
	return 0;
}

void nic_snapshot_free(struct nic_snapshot *snap)
{
	size_t i;

	for (i = 0; i < snap->n_ports; i++)
		free(snap->ports[i].counters);
	free(snap->ports);
	memset(snap, 0, sizeof(*snap));
}
