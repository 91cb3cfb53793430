/* capture.c: load roce_capture.bpf.c, attach it to interfaces with bpf_links, drain its per-CPU rings. */
#include "capture/capture.h"

#include <errno.h>
#include <linux/if_link.h>
#include <net/if.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "lib/capture/cpu_ring.h"
#include "lib/util/bpf_util.h"
#include "lib/util/log.h"
#include "lib/util/util.h"
#include "roce_capture.skel.h"

#define CLOCK_RESYNC_NS 1000000000ull /* re-read CLOCK_REALTIME - CLOCK_MONOTONIC every second */

struct capture_iface {
	char name[IF_NAMESIZE];
	uint32_t ifindex;
	struct bpf_link *link;	/* auto mode: bpf_program__attach_xdp() */
	int link_fd;		/* native/generic: bpf_link_create() with the mode flag, or -1 */
	const char *mode_name;	/* "native" or "generic", as the kernel reports it */
};

struct capture_session {
	struct roce_capture_bpf *skel;
	struct cpu_ring rings;		/* the records, one ring per CPU */
	struct ring_buffer *wakeups;	/* the program's notes when a ring fills up: epoll */
	struct capture_iface ifaces[ROCE_CAP_MAX_IFACES];
	unsigned n_ifaces;
	capture_record_fn on_record;
	void *ctx;
	int64_t mono_to_real_ns;	/* CLOCK_REALTIME - CLOCK_MONOTONIC */
	uint64_t last_sync_mono_ns;
	int n_cpus;
	struct roce_cap_counters *per_cpu;
};

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Offset between the BPF timestamps (monotonic) and wall clock: the tightest of 3 brackets. */
static void sync_clock(struct capture_session *s)
{
	uint64_t best_gap = UINT64_MAX;

	for (int i = 0; i < 3; i++) {
		uint64_t r1 = clock_ns(CLOCK_REALTIME);
		uint64_t m = clock_ns(CLOCK_MONOTONIC);
		uint64_t r2 = clock_ns(CLOCK_REALTIME);

		if (r2 - r1 < best_gap) {
			best_gap = r2 - r1;
			s->mono_to_real_ns = (int64_t)(r1 + (r2 - r1) / 2) - (int64_t)m;
			s->last_sync_mono_ns = m;
		}
	}
}

uint64_t capture_session_now_ns(struct capture_session *s)
{
	return (uint64_t)((int64_t)clock_ns(CLOCK_MONOTONIC) + s->mono_to_real_ns);
}

/* CAP_BPF (or CAP_SYS_ADMIN on older kernels) to load, CAP_NET_ADMIN to attach. */
static int check_privileges(void)
{
	static const uint64_t need[] = {
		CAP_MASK(CAP_NET_ADMIN) | CAP_MASK(CAP_BPF),
		CAP_MASK(CAP_NET_ADMIN) | CAP_MASK(CAP_SYS_ADMIN),
	};

	return bpf_util_check_caps(need, ARRAY_SIZE(need),
				   "needs CAP_BPF and CAP_NET_ADMIN to load and attach XDP programs (run as root)");
}

static const char *attach_mode_name(__u8 mode)
{
	switch (mode) {
	case XDP_ATTACHED_DRV:
		return "native";
	case XDP_ATTACHED_SKB:
		return "generic";
	case XDP_ATTACHED_HW:
		return "offload";
	case XDP_ATTACHED_MULTI:
		return "multi";
	default:
		return "none";
	}
}

/* The id of the bpf_link holding XDP on ifindex, 0 when the program was attached without one. */
static uint32_t xdp_link_id(uint32_t ifindex)
{
	uint32_t id = 0;

	while (!bpf_link_get_next_id(id, &id)) {
		struct bpf_link_info info = { 0 };
		uint32_t len = sizeof(info);
		int fd = bpf_link_get_fd_by_id(id);

		if (fd < 0)
			continue;
		if (!bpf_obj_get_info_by_fd(fd, &info, &len) && info.type == BPF_LINK_TYPE_XDP &&
		    info.xdp.ifindex == ifindex) {
			close(fd);
			return id;
		}
		close(fd);
	}
	return 0;
}

/*
 * How to remove it. A bpf_link's attachment cannot be removed with ip link (the kernel
 * refuses to replace an active link): its owner must close it, or bpftool detach it.
 */
static void xdp_removal_hint(const char *ifname, uint32_t ifindex, __u8 attach_mode, char *buf, size_t len)
{
	uint32_t link_id = xdp_link_id(ifindex);

	if (link_id)
		snprintf(buf, len, "it is held by bpf_link id %u: stop the process that owns it "
			 "('bpftool link show id %u' names it) or run 'bpftool link detach id %u'",
			 link_id, link_id, link_id);
	else
		snprintf(buf, len, "remove it first, e.g. ip link set dev %s %s off", ifname,
			 attach_mode == XDP_ATTACHED_SKB ? "xdpgeneric" :
			 attach_mode == XDP_ATTACHED_HW ? "xdpoffload" :
			 attach_mode == XDP_ATTACHED_DRV ? "xdpdrv" : "xdp");
}

/* Refuse an interface that already runs an XDP program: say which, never replace it. */
static int check_no_xdp_program(const char *ifname, uint32_t ifindex)
{
	char hint[256];
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	struct bpf_prog_info info = { 0 };
	uint32_t info_len = sizeof(info);
	uint32_t prog_id;
	int fd, err;

	err = bpf_xdp_query((int)ifindex, 0, &q);
	if (err) {
		pr_err("cannot query XDP programs on %s: %s\n", ifname, strerror(-err));
		return -1;
	}
	prog_id = q.prog_id ? q.prog_id : q.drv_prog_id ? q.drv_prog_id : q.skb_prog_id ? q.skb_prog_id : q.hw_prog_id;
	if (!prog_id)
		return 0;
	fd = bpf_prog_get_fd_by_id(prog_id);
	if (fd >= 0) {
		bpf_obj_get_info_by_fd(fd, &info, &info_len);
		close(fd);
	}
	xdp_removal_hint(ifname, ifindex, q.attach_mode, hint, sizeof(hint));
	pr_err("%s already runs XDP program id %u '%s' (%s mode); not replacing it (%s)\n", ifname, prog_id,
	       info.name[0] ? info.name : "?", attach_mode_name(q.attach_mode), hint);
	return -1;
}

static int attach_iface(struct capture_session *s, struct capture_iface *ifc, enum capture_xdp_mode mode)
{
	int prog_fd = bpf_program__fd(s->skel->progs.roce_capture);
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	int err;

	ifc->link_fd = -1;
	if (mode == CAPTURE_MODE_AUTO) {
		/* No mode flag: the kernel picks native when the driver has XDP, else generic. */
		ifc->link = bpf_program__attach_xdp(s->skel->progs.roce_capture, (int)ifc->ifindex);
		err = ifc->link ? 0 : -errno;
	} else {
		/* libbpf 1.1's attach_xdp takes no mode flag; a raw link fd has the same lifetime. */
		LIBBPF_OPTS(bpf_link_create_opts, lo);
		lo.flags = mode == CAPTURE_MODE_NATIVE ? XDP_FLAGS_DRV_MODE : XDP_FLAGS_SKB_MODE;
		ifc->link_fd = bpf_link_create(prog_fd, (int)ifc->ifindex, BPF_XDP, &lo);
		err = ifc->link_fd >= 0 ? 0 : -errno;
	}
	if (err == -EBUSY || err == -EEXIST) {
		/* Someone attached between our check and now. */
		if (check_no_xdp_program(ifc->name, ifc->ifindex) == 0)
			pr_err("cannot attach to %s: %s\n", ifc->name, strerror(-err));
		return -1;
	}
	if (err) {
		pr_err("cannot attach the XDP program to %s in %s mode: %s%s\n", ifc->name,
		       mode == CAPTURE_MODE_NATIVE ? "native" : mode == CAPTURE_MODE_GENERIC ? "generic" : "auto",
		       strerror(-err),
		       mode == CAPTURE_MODE_NATIVE ? " (the driver may lack native XDP: try --mode generic)" : "");
		return -1;
	}
	ifc->mode_name = "unknown";
	if (!bpf_xdp_query((int)ifc->ifindex, 0, &q))
		ifc->mode_name = attach_mode_name(q.attach_mode);
	return 0;
}

static int ignore_wakeup(void *ctx, void *data, size_t size)
{
	(void)ctx;
	(void)data;
	(void)size;
	return 0;
}

static int handle_record(void *ctx, void *data, size_t size)
{
	struct capture_session *s = ctx;
	const struct roce_cap_rec *rec = data;
	struct capture_record r;

	/* cpu_ring_drain() hands over only records it checked (version, cap_len, size). */
	(void)size;
	if (rec->if_slot >= s->n_ifaces)
		return 0; /* cannot happen: the program only runs where we attached it */
	r.frame = rec->data;
	r.cap_len = rec->cap_len;
	r.orig_len = rec->orig_len;
	r.ts_ns = (uint64_t)((int64_t)rec->ts_ns + s->mono_to_real_ns);
	r.if_id = rec->if_slot;
	r.rx_queue = rec->rx_queue;
	r.lost_before = rec->lost_before;
	r.flags = rec->flags;
	return s->on_record ? s->on_record(s->ctx, &r) : 0;
}

int capture_session_open(const struct capture_config *cfg, struct capture_session **out)
{
	struct capture_session *s;
	uint32_t data_cap, value_size;
	uint64_t region;
	int err;

	*out = NULL;
	bpf_util_set_libbpf_print();
	if (check_privileges())
		return -1;
	s = calloc(1, sizeof(*s));
	if (!s) {
		pr_err("out of memory\n");
		return -1;
	}
	s->on_record = cfg->on_record;
	s->ctx = cfg->ctx;
	for (unsigned i = 0; i < cfg->n_ifaces; i++) {
		struct capture_iface *ifc = &s->ifaces[i];

		ifc->link_fd = -1;
		snprintf(ifc->name, sizeof(ifc->name), "%s", cfg->ifnames[i]);
		ifc->ifindex = if_nametoindex(cfg->ifnames[i]);
		if (!ifc->ifindex) {
			pr_err("no such interface: %s\n", cfg->ifnames[i]);
			goto cleanup;
		}
		s->n_ifaces = i + 1;
		if (check_no_xdp_program(ifc->name, ifc->ifindex))
			goto cleanup;
	}

	s->skel = roce_capture_bpf__open();
	if (!s->skel) {
		pr_err("cannot open the XDP program: %s\n", strerror(errno));
		goto cleanup;
	}
	data_cap = cfg->snaplen ? (cfg->snaplen + 7) & ~7u : ROCE_CAP_HDR_SNAPLEN;
	s->skel->rodata->cfg_data_cap = data_cap;
	s->skel->rodata->cfg_snaplen = cfg->snaplen;
	s->skel->rodata->cfg_n_ifaces = s->n_ifaces;
	for (unsigned i = 0; i < s->n_ifaces; i++)
		s->skel->rodata->cfg_ifindex[i] = s->ifaces[i].ifindex;
	s->skel->rodata->cfg_n_hosts = cfg->filter.n_hosts;
	memcpy((void *)s->skel->rodata->cfg_hosts, cfg->filter.hosts, sizeof(cfg->filter.hosts));
	s->skel->rodata->cfg_has_qpn = cfg->filter.has_qpn;
	s->skel->rodata->cfg_qpn = cfg->filter.qpn;
	s->n_cpus = libbpf_num_possible_cpus();
	if (s->n_cpus < 1) {
		pr_err("cannot count the CPUs: %s\n", strerror(-s->n_cpus));
		goto cleanup;
	}
	if (cpu_ring_layout(cfg->ring_bytes, s->n_cpus, data_cap, &region, &value_size)) {
		pr_err("a %llu KiB ring is too small for %d CPUs and %u-byte records: raise -B\n",
		       (unsigned long long)(cfg->ring_bytes / 1024), s->n_cpus, data_cap);
		goto cleanup;
	}
	s->skel->rodata->cfg_ring_region = region;
	/* Wake up at a quarter full (at most 1 MiB); the poll timeout drains the rest. */
	s->skel->rodata->cfg_wakeup_bytes = region / 4 < (1u << 20) ? region / 4 : 1u << 20;
	err = bpf_map__set_value_size(s->skel->maps.rings, value_size);
	if (!err)
		err = bpf_map__set_max_entries(s->skel->maps.rings, (uint32_t)s->n_cpus);
	if (err) {
		pr_err("cannot size the rings to %d x %llu bytes: %s\n", s->n_cpus,
		       (unsigned long long)region, strerror(-err));
		goto cleanup;
	}
	err = roce_capture_bpf__load(s->skel);
	if (err) {
		pr_err("cannot load the XDP program: %s (run with -v for the verifier log)\n",
		       strerror(-err));
		goto cleanup;
	}
	s->per_cpu = calloc((size_t)s->n_cpus, sizeof(*s->per_cpu));
	err = cpu_ring_map(&s->rings, bpf_map__fd(s->skel->maps.rings), s->n_cpus, region, value_size,
			   data_cap);
	s->wakeups = ring_buffer__new(bpf_map__fd(s->skel->maps.wakeups), ignore_wakeup, NULL, NULL);
	if (err || !s->wakeups || !s->per_cpu) {
		pr_err("cannot set up the ring reader: %s\n", strerror(err ? -err : errno));
		goto cleanup;
	}
	sync_clock(s);
	for (unsigned i = 0; i < s->n_ifaces; i++)
		if (attach_iface(s, &s->ifaces[i], cfg->mode))
			goto cleanup;
	*out = s;
	return 0;

cleanup:
	capture_session_close(s);
	return -1;
}

int capture_session_poll(struct capture_session *s, int timeout_ms)
{
	int n;

	if (clock_ns(CLOCK_MONOTONIC) - s->last_sync_mono_ns >= CLOCK_RESYNC_NS)
		sync_clock(s);
	n = ring_buffer__poll(s->wakeups, timeout_ms);
	if (n == -EINTR)
		n = 0;
	if (n < 0)
		return n;
	/* Woken when a ring fills past the threshold, or timed out: take what is waiting. */
	return capture_session_drain(s);
}

int capture_session_drain(struct capture_session *s)
{
	uint64_t corrupt = s->rings.corrupt;
	int n = cpu_ring_drain(&s->rings, handle_record, s);

	if (s->rings.corrupt != corrupt)
		pr_warn("skipped %llu malformed ring records\n",
			(unsigned long long)(s->rings.corrupt - corrupt));
	return n;
}

int capture_session_counters(struct capture_session *s, unsigned if_id, struct capture_if_counters *out)
{
	uint32_t slot = if_id;

	memset(out, 0, sizeof(*out));
	if (if_id >= s->n_ifaces)
		return -EINVAL;
	if (bpf_map_lookup_elem(bpf_map__fd(s->skel->maps.counters), &slot, s->per_cpu))
		return -errno;
	for (int c = 0; c < s->n_cpus; c++) {
		const struct roce_cap_counters *p = &s->per_cpu[c];

		out->seen_pkts += p->seen_pkts;
		out->roce_pkts += p->roce_pkts;
		out->filtered_pkts += p->filtered_pkts;
		out->captured_pkts += p->captured_pkts;
		out->captured_bytes += p->captured_bytes;
		out->lost_pkts += p->lost_pkts;
		out->malformed_pkts += p->malformed_pkts;
	}
	return 0;
}

const char *capture_session_mode_name(const struct capture_session *s, unsigned if_id)
{
	return if_id < s->n_ifaces && s->ifaces[if_id].mode_name ? s->ifaces[if_id].mode_name : "?";
}

uint32_t capture_session_ifindex(const struct capture_session *s, unsigned if_id)
{
	return if_id < s->n_ifaces ? s->ifaces[if_id].ifindex : 0;
}

void capture_session_close(struct capture_session *s)
{
	if (!s)
		return;
	for (unsigned i = 0; i < s->n_ifaces; i++) {
		bpf_link__destroy(s->ifaces[i].link);
		if (s->ifaces[i].link_fd >= 0)
			close(s->ifaces[i].link_fd);
	}
	ring_buffer__free(s->wakeups);
	cpu_ring_unmap(&s->rings);
	roce_capture_bpf__destroy(s->skel);
	free(s->per_cpu);
	free(s);
}
