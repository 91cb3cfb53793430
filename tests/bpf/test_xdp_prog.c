/*
 * test_xdp_prog.c: run roce_capture.bpf.c on crafted frames with bpf_prog_test_run_opts and
 * check the ring records and counters. Prints PASS/FAIL lines (tests/run.sh counts them).
 * With --bench REPEAT it prints the program's cost in ns per packet instead.
 */
#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>

#include "lib/capture/capture_filter.h"
#include "lib/capture/cpu_ring.h"
#include "lib/decode/bth_opcodes.h"
#include "roce_capture.skel.h"
#include "tests/bpf/roce_frames.h"

#define TEST_IFINDEX 1 /* lo: prog_test_run needs a real device for ingress_ifindex */
#define MAX_RECORDS 64

static int failures;
static uint64_t load_wakeup_bytes; /* nonzero: cfg_wakeup_bytes for the next load() */
static unsigned frames_run, records_expected; /* by expect_record()/expect_none() */
static cpu_set_t start_cpus; /* the CPUs this process may use, before tests pin it to one */

static void result(int ok, const char *name, const char *fmt, ...)
{
	va_list ap;

	if (ok) {
		printf("PASS xdp-prog %s\n", name);
		return;
	}
	failures++;
	printf("FAIL xdp-prog %s: ", name);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

struct collected {
	int n;
	size_t rec_size[MAX_RECORDS];
	struct roce_cap_rec hdr[MAX_RECORDS];
	uint8_t data[MAX_RECORDS][ROCE_CAP_MAX_SNAPLEN];
};

static int on_record(void *ctx, void *data, size_t size)
{
	struct collected *c = ctx;
	const struct roce_cap_rec *rec = data;

	if (c->n == MAX_RECORDS)
		return 0;
	c->rec_size[c->n] = size;
	c->hdr[c->n] = *rec;
	if (rec->cap_len <= ROCE_CAP_MAX_SNAPLEN && size >= sizeof(*rec) + rec->cap_len)
		memcpy(c->data[c->n], rec->data, rec->cap_len);
	c->n++;
	return 0;
}

struct loaded {
	struct roce_capture_bpf *skel;
	struct cpu_ring rings;
	struct collected *got;
	uint32_t data_cap;
	uint64_t pending_before;	/* ring bytes waiting before the last run() */
};

static int silent_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	return level == LIBBPF_WARN ? vfprintf(stderr, fmt, ap) : 0;
}

/*
 * open -> config -> load, as agentxdp-capture does; snaplen 0 = headers only. region_bytes
 * is each CPU's ring (a power of two; 0: 1 MiB).
 */
/* Run this thread on one CPU from now on, so per-CPU rings and counters are that CPU's. */
static void pin_to_cpu(int cpu)
{
	cpu_set_t one;

	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	sched_setaffinity(0, sizeof(one), &one);
}

static int load(struct loaded *l, uint32_t snaplen, const char *filter, uint64_t region_bytes)
{
	struct capture_filter f = { 0 };
	int n_cpus = libbpf_num_possible_cpus();
	uint32_t value_size;
	uint64_t region;
	char err[256];

	memset(l, 0, sizeof(*l));
	if (filter && capture_filter_parse(filter, &f, err, sizeof(err))) {
		fprintf(stderr, "%s\n", err);
		return -1;
	}
	l->skel = roce_capture_bpf__open();
	if (!l->skel)
		return -1;
	l->data_cap = snaplen ? (snaplen + 7) & ~7u : ROCE_CAP_HDR_SNAPLEN;
	l->skel->rodata->cfg_data_cap = l->data_cap;
	l->skel->rodata->cfg_snaplen = snaplen;
	l->skel->rodata->cfg_n_ifaces = 1;
	l->skel->rodata->cfg_ifindex[0] = TEST_IFINDEX;
	l->skel->rodata->cfg_n_hosts = f.n_hosts;
	memcpy((void *)l->skel->rodata->cfg_hosts, f.hosts, sizeof(f.hosts));
	l->skel->rodata->cfg_has_qpn = f.has_qpn;
	l->skel->rodata->cfg_qpn = f.qpn;
	if (load_wakeup_bytes)
		l->skel->rodata->cfg_wakeup_bytes = load_wakeup_bytes;
	if (cpu_ring_layout((region_bytes ? region_bytes : 1 << 20) * (uint64_t)n_cpus, n_cpus,
			    l->data_cap, &region, &value_size))
		return -1;
	l->skel->rodata->cfg_ring_region = region;
	if (bpf_map__set_value_size(l->skel->maps.rings, value_size) ||
	    bpf_map__set_max_entries(l->skel->maps.rings, (uint32_t)n_cpus))
		return -1;
	if (roce_capture_bpf__load(l->skel))
		return -1;
	l->got = calloc(1, sizeof(*l->got));
	if (!l->got || cpu_ring_map(&l->rings, bpf_map__fd(l->skel->maps.rings), n_cpus, region,
				    value_size, l->data_cap))
		return -1;
	return 0;
}

static void unload(struct loaded *l)
{
	cpu_ring_unmap(&l->rings);
	roce_capture_bpf__destroy(l->skel);
	free(l->got);
}

/* Run once on frame; returns the XDP verdict or -1. Records land in l->got after drain(). */
static int run(struct loaded *l, const uint8_t *frame, size_t len, uint32_t repeat, uint32_t *duration_ns)
{
	struct xdp_md ctx_in = { .data_end = (uint32_t)len, .ingress_ifindex = TEST_IFINDEX };
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = frame, .data_size_in = (uint32_t)len,
		    .ctx_in = &ctx_in, .ctx_size_in = sizeof(ctx_in), .repeat = repeat);

	l->pending_before = cpu_ring_pending(&l->rings);
	if (bpf_prog_test_run_opts(bpf_program__fd(l->skel->progs.roce_capture), &opts))
		return -1;
	if (duration_ns)
		*duration_ns = opts.duration;
	return (int)opts.retval;
}

static void drain(struct loaded *l)
{
	l->got->n = 0;
	cpu_ring_drain(&l->rings, on_record, l->got);
}

static struct roce_cap_counters sum_counters(struct loaded *l, uint32_t slot)
{
	int ncpu = libbpf_num_possible_cpus();
	struct roce_cap_counters *per_cpu = calloc((size_t)ncpu, sizeof(*per_cpu));
	struct roce_cap_counters sum = { 0 };

	if (per_cpu && !bpf_map_lookup_elem(bpf_map__fd(l->skel->maps.counters), &slot, per_cpu)) {
		for (int i = 0; i < ncpu; i++) {
			sum.seen_pkts += per_cpu[i].seen_pkts;
			sum.roce_pkts += per_cpu[i].roce_pkts;
			sum.filtered_pkts += per_cpu[i].filtered_pkts;
			sum.captured_pkts += per_cpu[i].captured_pkts;
			sum.captured_bytes += per_cpu[i].captured_bytes;
			sum.lost_pkts += per_cpu[i].lost_pkts;
			sum.malformed_pkts += per_cpu[i].malformed_pkts;
			sum.wakeups += per_cpu[i].wakeups;
		}
	}
	free(per_cpu);
	return sum;
}

/*
 * One frame in, expect exactly one record with cap_len bytes equal to the frame's first
 * bytes, the frame length as orig_len, and the given flags.
 */
static void expect_record(struct loaded *l, const char *name, const uint8_t *frame, size_t len,
			  size_t want_cap, uint8_t want_flags)
{
	const struct roce_cap_rec *r = &l->got->hdr[0];
	int verdict = run(l, frame, len, 1, NULL);
	/* What the program advanced its ring by: the reader finds the next record there. */
	uint64_t took = cpu_ring_pending(&l->rings) - l->pending_before;

	frames_run++;
	records_expected++;
	drain(l);
	if (verdict != XDP_PASS) {
		result(0, name, "verdict %d, want XDP_PASS (%d)", verdict, XDP_PASS);
		return;
	}
	if (l->got->n != 1) {
		result(0, name, "%d records, want 1", l->got->n);
		return;
	}
	if (took != roce_cap_rec_size((uint32_t)want_cap, l->data_cap) || took != l->got->rec_size[0])
		result(0, name, "record took %llu ring bytes, read as %zu, want %zu",
		       (unsigned long long)took, l->got->rec_size[0],
		       roce_cap_rec_size((uint32_t)want_cap, l->data_cap));
	else if (r->version != ROCE_CAP_REC_VERSION)
		result(0, name, "version %u", r->version);
	else if (r->cap_len != want_cap)
		result(0, name, "cap_len %u, want %zu", r->cap_len, want_cap);
	else if (r->orig_len != len)
		result(0, name, "orig_len %u, want %zu", r->orig_len, len);
	else if (r->flags != want_flags)
		result(0, name, "flags 0x%x, want 0x%x", r->flags, want_flags);
	else if (r->if_slot != 0 || r->rx_queue != 0)
		result(0, name, "interface slot %u queue %u, want 0 0", r->if_slot, r->rx_queue);
	else if (r->ts_ns == 0)
		result(0, name, "no timestamp");
	else if (memcmp(l->got->data[0], frame, want_cap))
		result(0, name, "captured bytes differ from the frame");
	else
		result(1, name, NULL);
}

static void expect_none(struct loaded *l, const char *name, const uint8_t *frame, size_t len)
{
	int verdict = run(l, frame, len, 1, NULL);

	frames_run++;
	drain(l);
	if (verdict != XDP_PASS)
		result(0, name, "verdict %d, want XDP_PASS", verdict);
	else
		result(l->got->n == 0, name, "%d records, want none", l->got->n);
}

static size_t build(const struct roce_frame_spec *s, uint8_t *buf, size_t cap)
{
	size_t n = roce_frame_build(s, buf, cap);

	if (!n) {
		fprintf(stderr, "test bug: frame does not fit\n");
		exit(2);
	}
	return n;
}

static void test_parsing(void)
{
	struct roce_frame_spec s;
	struct loaded l;
	uint8_t f[2048];
	struct roce_cap_counters c;
	size_t n;
	int ok;

	if (load(&l, 0, NULL, 0)) {
		result(0, "load", "cannot load roce_capture: %s", strerror(errno));
		return;
	}
	result(1, "load", NULL);

	/* Expected lengths are Ethernet 14, tag 4, IPv4 20, IPv6/GRH 40, UDP 8, BTH 12 + ext. */
	roce_frame_default(&s);
	n = build(&s, f, sizeof(f));
	expect_record(&l, "v2-ipv4-rc-send-only", f, n, 14 + 20 + 8 + 12, 0);

	s.opcode = 0x06; /* RC RDMA WRITE First: RETH */
	n = build(&s, f, sizeof(f));
	expect_record(&l, "v2-ipv4-rc-write-first", f, n, 54 + 16, 0);

	/* An IPv4 ACK: 58 bytes of headers in a 62-byte frame, shorter than its 64-byte
	 * class: seven words and the overlapping last word. Every AETH byte must be there. */
	roce_frame_default(&s);
	s.opcode = 0x11;
	s.payload_bytes = 0;
	n = build(&s, f, sizeof(f));
	if (n != 62)
		result(0, "v2-ipv4-rc-ack-frame", "frame %zu bytes, want 62", n);
	expect_record(&l, "v2-ipv4-rc-ack-short-frame", f, n, 14 + 20 + 8 + 12 + 4, 0);
	f[57] ^= 0xa5; /* the last AETH byte: the one only the overlapping word copies */
	expect_record(&l, "v2-ipv4-rc-ack-last-byte", f, n, 58, 0);
	/* 58 bytes: the headers without the ICRC; 57 bytes: truncated inside the AETH. */
	expect_record(&l, "v2-ipv4-rc-ack-no-icrc", f, 58, 58, 0);
	expect_record(&l, "v2-ipv4-rc-ack-truncated", f, 57, 57, ROCE_CAP_F_TRUNCATED);

	roce_frame_default(&s);
	s.ip_version = 6;
	s.opcode = 0x11; /* RC ACK: AETH */
	s.payload_bytes = 0;
	s.dest_qp = 0xabcdef;
	memcpy(s.src_ip, "\xfd\x99\0\0\0\0\0\0\0\0\0\0\0\0\0\x01", 16);
	memcpy(s.dst_ip, "\xfd\x99\0\0\0\0\0\0\0\0\0\0\0\0\0\x02", 16);
	n = build(&s, f, sizeof(f));
	expect_record(&l, "v2-ipv6-rc-ack", f, n, 14 + 40 + 8 + 12 + 4, ROCE_CAP_F_IPV6);

	roce_frame_default(&s);
	s.n_vlan = 1;
	s.opcode = 0x0c; /* RC RDMA READ Request: RETH */
	s.payload_bytes = 0;
	n = build(&s, f, sizeof(f));
	expect_record(&l, "v2-ipv4-vlan-read-request", f, n, 14 + 4 + 20 + 8 + 12 + 16, ROCE_CAP_F_VLAN);

	roce_frame_default(&s);
	s.n_vlan = 2;
	s.ip_version = 6;
	s.opcode = 0x53; /* RD Compare&Swap: RDETH + DETH + AtomicETH */
	s.payload_bytes = 0;
	n = build(&s, f, sizeof(f));
	expect_record(&l, "v2-ipv6-qinq-rd-cmp-swap", f, n, 14 + 8 + 40 + 8 + 12 + 4 + 8 + 28,
		      ROCE_CAP_F_VLAN | ROCE_CAP_F_IPV6);
	/* Frames without payload are shorter than their size class: bpf_xdp_load_bytes()
	 * copies them. With a payload the 128-byte class is copied word by word. */
	s.payload_bytes = 64;
	n = build(&s, f, sizeof(f));
	expect_record(&l, "v2-ipv6-qinq-rd-cmp-swap-inline-copy", f, n,
		      14 + 8 + 40 + 8 + 12 + 4 + 8 + 28, ROCE_CAP_F_VLAN | ROCE_CAP_F_IPV6);

	roce_frame_default(&s);
	s.ipv4_option_words = 2;
	s.opcode = 0xab; /* XRC RDMA WRITE Only with Immediate: XRCETH + RETH + ImmDt */
	n = build(&s, f, sizeof(f));
	expect_record(&l, "v2-ipv4-options-xrc-write-only-imm", f, n, 14 + 28 + 8 + 12 + 4 + 16 + 4, 0);

	roce_frame_default(&s);
	s.roce_version = 1;
	s.opcode = 0x03; /* RC SEND Last with Immediate */
	n = build(&s, f, sizeof(f));
	expect_record(&l, "v1-rc-send-last-imm", f, n, 14 + 40 + 12 + 4, ROCE_CAP_F_V1);

	s.n_vlan = 1;
	s.opcode = 0x12; /* RC Atomic Acknowledge: AETH + AtomicAckETH */
	n = build(&s, f, sizeof(f));
	expect_record(&l, "v1-vlan-atomic-ack", f, n, 14 + 4 + 40 + 12 + 12,
		      ROCE_CAP_F_V1 | ROCE_CAP_F_VLAN);

	roce_frame_default(&s);
	s.opcode = 0x64; /* UD SEND Only to QP1: a CM MAD, whose first bytes are kept */
	s.dest_qp = 1;
	s.payload_bytes = 256;
	n = build(&s, f, sizeof(f));
	expect_record(&l, "v2-ud-qp1-cm-mad", f, n, 54 + 8 + ROCE_CAP_MAD_BYTES, 0);

	/* The largest plain headers: QinQ, 40 bytes of IPv4 options, UD SEND Only with
	 * Immediate to QP1 (DETH + ImmDt) and the first MAD bytes: 210 bytes, past 192. */
	s.n_vlan = 2;
	s.ipv4_option_words = 10;
	s.opcode = 0x65;
	n = build(&s, f, sizeof(f));
	expect_record(&l, "v2-qinq-ipv4-options-cm-mad-imm", f, n, 14 + 8 + 60 + 8 + 12 + 12 + ROCE_CAP_MAD_BYTES,
		      ROCE_CAP_F_VLAN);
	s.n_vlan = 0;
	s.ipv4_option_words = 0;
	s.opcode = 0x64;

	s.dest_qp = 0x99; /* UD on another QP: DETH only */
	n = build(&s, f, sizeof(f));
	expect_record(&l, "v2-ud-send-only", f, n, 54 + 8, 0);

	roce_frame_default(&s);
	s.opcode = 0x81; /* CNP */
	s.payload_bytes = 0;
	n = build(&s, f, sizeof(f));
	expect_record(&l, "v2-cnp", f, n, 54 + 16, 0);

	/* Truncated: the BTH is whole but the RETH is cut. */
	roce_frame_default(&s);
	s.opcode = 0x0a;
	n = build(&s, f, sizeof(f));
	expect_record(&l, "v2-truncated-reth", f, 60, 60, ROCE_CAP_F_TRUNCATED);

	/* Malformed: UDP 4791 but the BTH is cut; RoCE v1 GRH whose next header is not BTH. */
	roce_frame_default(&s);
	n = build(&s, f, sizeof(f));
	expect_none(&l, "v2-bth-cut", f, 50);
	s.roce_version = 1;
	n = build(&s, f, sizeof(f));
	f[14 + 6] = 17;
	expect_none(&l, "v1-grh-next-header-not-bth", f, n);
	expect_none(&l, "v1-grh-cut", f, 14 + 30);

	/* Not RoCE. */
	roce_frame_default(&s);
	s.udp_dport = 4790;
	n = build(&s, f, sizeof(f));
	expect_none(&l, "udp-other-port", f, n);
	roce_frame_default(&s);
	n = build(&s, f, sizeof(f));
	f[14 + 9] = 6; /* TCP */
	expect_none(&l, "ipv4-tcp", f, n);
	n = build(&s, f, sizeof(f));
	f[14 + 6] = 0x01; /* flags 0, fragment offset 0x100 (x 8 bytes): no UDP header here */
	f[14 + 7] = 0x00;
	expect_none(&l, "ipv4-later-fragment", f, n);
	n = build(&s, f, sizeof(f));
	f[12] = 0x08;
	f[13] = 0x06; /* ARP */
	expect_none(&l, "arp", f, n);
	expect_none(&l, "ethernet-only", f, 14);
	roce_frame_default(&s);
	s.n_vlan = 2;
	n = build(&s, f, sizeof(f));
	expect_none(&l, "qinq-cut-in-tags", f, 20);
	s.n_vlan = 0;
	s.ip_version = 6;
	n = build(&s, f, sizeof(f));
	f[14 + 6] = 6; /* IPv6 next header TCP */
	expect_none(&l, "ipv6-tcp", f, n);
	n = build(&s, f, sizeof(f));
	f[14 + 40 + 3] = 0x12; /* UDP destination 0x12b7 = 4791 -> 0x1212 */
	expect_none(&l, "ipv6-udp-other-port", f, n);

	/* Every frame above was seen; the three malformed ones are bth-cut and the two GRHs. */
	c = sum_counters(&l, 0);
	ok = c.seen_pkts == frames_run && c.roce_pkts == records_expected &&
	     c.captured_pkts == records_expected && c.malformed_pkts == 3 && c.filtered_pkts == 0 &&
	     c.lost_pkts == 0;
	result(ok, "counters",
	       "seen %llu roce %llu captured %llu malformed %llu filtered %llu lost %llu "
	       "(want %u %u %u 3 0 0)",
	       (unsigned long long)c.seen_pkts, (unsigned long long)c.roce_pkts,
	       (unsigned long long)c.captured_pkts, (unsigned long long)c.malformed_pkts,
	       (unsigned long long)c.filtered_pkts, (unsigned long long)c.lost_pkts, frames_run,
	       records_expected, records_expected);
	unload(&l);
}

/*
 * Every opcode 0-255 through the program: a record keeps the BTH and the bytes bth_opcodes.h
 * gives for the opcode (the table the decoder reads; test_bth_opcodes.c holds the decoder to
 * it), and for the defined opcodes the frame builder's own reading of the IBA agrees (it
 * gives reserved RD and XRC opcodes their transport's headers; the table, none).
 */
static void test_opcode_table(void)
{
	static const uint8_t header_bytes[256] = BTH_HEADER_BYTES_INIT;
#define DEFINED(op, name, hdrs) [op] = 1,
	static const uint8_t defined[256] = { BTH_OPCODES(DEFINED) };
#undef DEFINED
	struct roce_frame_spec s;
	struct loaded l;
	uint8_t f[512];
	unsigned n_bad = 0;
	char first_bad[96] = "";

	if (load(&l, 0, NULL, 0)) {
		result(0, "opcode-table", "cannot load roce_capture: %s", strerror(errno));
		return;
	}
	for (unsigned op = 0; op < 256; op++) {
		size_t n, want;

		roce_frame_default(&s);
		s.opcode = (uint8_t)op;
		s.payload_bytes = 64;
		n = build(&s, f, sizeof(f));
		want = roce_frame_bth_end(&s) + header_bytes[op];
		run(&l, f, n, 1, NULL);
		drain(&l);
		if (l.got->n == 1 && l.got->hdr[0].cap_len == want &&
		    (!defined[op] || roce_frame_ext_bytes((uint8_t)op) == header_bytes[op]))
			continue;
		if (!n_bad++)
			snprintf(first_bad, sizeof(first_bad), "opcode 0x%02x: %d records, cap_len %u, want %zu",
				 op, l.got->n, l.got->n ? l.got->hdr[0].cap_len : 0, want);
	}
	result(n_bad == 0, "opcode-table", "%u opcodes differ, first %s", n_bad, first_bad);
	unload(&l);
}

/*
 * Under -s 0 a record takes its frame's length, not the 9216-byte capacity: a 64 KiB ring
 * holds 58 records of 1,102-byte frames (24 + 1,104 bytes each), where 9,240-byte records
 * held 7.
 */
static void test_snaplen_ring_room(void)
{
	struct roce_frame_spec s;
	struct roce_cap_counters c;
	struct loaded l;
	uint8_t f[2048];
	size_t n, fit;

	pin_to_cpu(sched_getcpu());
	if (load(&l, ROCE_CAP_MAX_SNAPLEN, NULL, 64 * 1024)) {
		result(0, "snaplen-ring-room-load", "%s", strerror(errno));
		return;
	}
	roce_frame_default(&s);
	s.opcode = 0x0a;
	s.payload_bytes = 0;
	s.payload_bytes = 1100 - build(&s, f, sizeof(f));
	n = build(&s, f, sizeof(f));
	fit = 64 * 1024 / (24 + ((n + 7) & ~(size_t)7));
	for (size_t i = 0; i < fit + 3; i++)
		run(&l, f, n, 1, NULL);
	c = sum_counters(&l, 0);
	result(n > ROCE_CAP_CLASS_XL_BYTES && c.captured_pkts == fit && c.lost_pkts == 3, "snaplen-9216-ring-holds-frames",
	       "%zu-byte frames: captured %llu lost %llu, want %zu and 3", n,
	       (unsigned long long)c.captured_pkts, (unsigned long long)c.lost_pkts, fit);
	drain(&l);
	result(l.got->n == (int)fit && l.got->hdr[fit - 1].cap_len == n &&
		       !memcmp(l.got->data[fit - 1], f, n),
	       "snaplen-9216-records-intact", "%d records (want %zu), last one differs", l.got->n, fit);
	/* The next one starts 112 bytes before the region's end and runs on into the slack. */
	run(&l, f, n, 1, NULL);
	drain(&l);
	result(l.got->n == 1 && l.got->hdr[0].cap_len == n && !memcmp(l.got->data[0], f, n),
	       "snaplen-9216-record-into-slack-intact", "%d records, or its bytes differ", l.got->n);
	unload(&l);
}

static void test_snaplen(void)
{
	struct roce_frame_spec s;
	struct loaded l;
	uint8_t f[2048];
	size_t n;

	if (load(&l, 1500, NULL, 0)) {
		result(0, "snaplen-load", "%s", strerror(errno));
		return;
	}
	roce_frame_default(&s);
	s.opcode = 0x0a;
	s.payload_bytes = 1024;
	n = build(&s, f, sizeof(f));
	expect_record(&l, "snaplen-1500-whole-frame", f, n, n, 0);
	s.payload_bytes = 1500;
	n = build(&s, f, sizeof(f));
	expect_record(&l, "snaplen-1500-cuts-payload", f, n, 1500, 0);
	unload(&l);

	if (load(&l, 40, NULL, 0)) {
		result(0, "snaplen-load", "%s", strerror(errno));
		return;
	}
	s.payload_bytes = 64;
	n = build(&s, f, sizeof(f));
	expect_record(&l, "snaplen-40-inside-headers", f, n, 40, 0);
	unload(&l);

	/* The largest -s: 9216-byte records (the slack and the verifier's bounds follow). */
	if (load(&l, ROCE_CAP_MAX_SNAPLEN, NULL, 0)) {
		result(0, "snaplen-load-9216", "%s", strerror(errno));
		return;
	}
	s.payload_bytes = 1900;
	n = build(&s, f, sizeof(f));
	expect_record(&l, "snaplen-9216-whole-frame", f, n, n, 0);
	unload(&l);
	test_snaplen_ring_room();
}

static void test_filters(void)
{
	struct roce_frame_spec s;
	struct loaded l;
	uint8_t f[2048];
	size_t n;

	if (load(&l, 0, "host 198.18.0.1 and qpn 0x12", 0)) {
		result(0, "filter-load", "%s", strerror(errno));
		return;
	}
	roce_frame_default(&s); /* 198.18.0.1 -> 198.18.0.2, QP 0x12 */
	n = build(&s, f, sizeof(f));
	expect_record(&l, "filter-host-qpn-match", f, n, 54, 0);
	s.dest_qp = 0x13;
	n = build(&s, f, sizeof(f));
	expect_none(&l, "filter-qpn-mismatch", f, n);
	roce_frame_default(&s);
	roce_frame_set_ipv4(s.src_ip, 198, 18, 0, 3);
	n = build(&s, f, sizeof(f));
	expect_none(&l, "filter-host-mismatch", f, n);
	roce_frame_default(&s);
	s.roce_version = 1; /* GRH GIDs v4-mapped 198.18.0.1 */
	n = build(&s, f, sizeof(f));
	expect_record(&l, "filter-v1-gid-v4-mapped", f, n, 14 + 40 + 12, ROCE_CAP_F_V1);
	struct roce_cap_counters c = sum_counters(&l, 0);
	result(c.filtered_pkts == 2, "filter-counted", "filtered %llu, want 2",
	       (unsigned long long)c.filtered_pkts);
	unload(&l);

	if (load(&l, 0, "dst host 198.18.0.1", 0)) {
		result(0, "filter-load", "%s", strerror(errno));
		return;
	}
	roce_frame_default(&s);
	n = build(&s, f, sizeof(f));
	expect_none(&l, "filter-dst-host-is-source", f, n);
	roce_frame_set_ipv4(s.dst_ip, 198, 18, 0, 1);
	roce_frame_set_ipv4(s.src_ip, 198, 18, 0, 2);
	n = build(&s, f, sizeof(f));
	expect_record(&l, "filter-dst-host-match", f, n, 54, 0);
	unload(&l);

	if (load(&l, 0, "src host fd99::1 and dst host fd99::2", 0)) {
		result(0, "filter-load", "%s", strerror(errno));
		return;
	}
	roce_frame_default(&s);
	s.ip_version = 6;
	memcpy(s.src_ip, "\xfd\x99\0\0\0\0\0\0\0\0\0\0\0\0\0\x01", 16);
	memcpy(s.dst_ip, "\xfd\x99\0\0\0\0\0\0\0\0\0\0\0\0\0\x02", 16);
	n = build(&s, f, sizeof(f));
	expect_record(&l, "filter-ipv6-pair-match", f, n, 74, ROCE_CAP_F_IPV6);
	memcpy(s.dst_ip, "\xfd\x99\0\0\0\0\0\0\0\0\0\0\0\0\0\x03", 16);
	n = build(&s, f, sizeof(f));
	expect_none(&l, "filter-ipv6-pair-mismatch", f, n);
	roce_frame_default(&s); /* IPv4 never matches an IPv6 host */
	n = build(&s, f, sizeof(f));
	expect_none(&l, "filter-ipv6-host-ipv4-frame", f, n);
	unload(&l);
}

/* Wrap an inner frame in a tunnel; exits on a test bug like build(). */
static size_t wrap(const struct roce_tunnel_spec *t, const uint8_t *inner, size_t inner_len,
		   uint8_t *buf, size_t cap)
{
	size_t n = roce_frame_wrap(t, inner, inner_len, buf, cap);

	if (!n) {
		fprintf(stderr, "test bug: tunnel frame does not fit\n");
		exit(2);
	}
	return n;
}

/*
 * RoCE inside a mirror session's tunnel (ERSPAN I/II/III, GRE-TEB, VXLAN): kept with the
 * outer headers + the inner headers the opcode implies, flagged ROCE_CAP_F_ENCAP with the
 * inner frame's flags; tunnels of anything else, broken tunnels and a second tunnel level
 * are not kept.
 */
static void test_tunnels(void)
{
	struct roce_frame_spec s;
	struct roce_tunnel_spec t;
	struct roce_cap_counters c;
	struct loaded l;
	uint8_t in[2048], f[2304], f2[2560];
	size_t n, m, hdr;
	unsigned run_before = frames_run, kept_before = records_expected;
	int ok;

	if (load(&l, 0, NULL, 0)) {
		result(0, "tunnel-load", "cannot load roce_capture: %s", strerror(errno));
		return;
	}
	/* ERSPAN II over IPv4 (what a switch's mirror session sends), RC WRITE First: RETH. */
	roce_frame_default(&s);
	s.opcode = 0x06;
	n = build(&s, in, sizeof(in));
	memset(&t, 0, sizeof(t));
	t.kind = ROCE_TUNNEL_ERSPAN2;
	t.ip_version = 4;
	m = wrap(&t, in, n, f, sizeof(f));
	hdr = roce_tunnel_hdr_bytes(&t);
	expect_record(&l, "erspan2-ipv4-rc-write-first", f, m, hdr + 54 + 16, ROCE_CAP_F_ENCAP);
	/* Cut inside the inner RETH: kept as it is, truncated. */
	expect_record(&l, "erspan2-truncated-reth", f, hdr + 60, hdr + 60,
		      ROCE_CAP_F_ENCAP | ROCE_CAP_F_TRUNCATED);

	/* An inner ACK: a 62-byte frame, 58 bytes of headers. */
	roce_frame_default(&s);
	s.opcode = 0x11;
	s.payload_bytes = 0;
	n = build(&s, in, sizeof(in));
	m = wrap(&t, in, n, f, sizeof(f));
	expect_record(&l, "erspan2-ipv4-rc-ack", f, m, hdr + 58, ROCE_CAP_F_ENCAP);

	/* ERSPAN III with the platform sub-header over IPv6 and QinQ; inner IPv6 + QinQ RD
	 * Compare&Swap (RDETH + DETH + AtomicETH). */
	roce_frame_default(&s);
	s.n_vlan = 2;
	s.ip_version = 6;
	s.opcode = 0x53;
	s.payload_bytes = 0;
	n = build(&s, in, sizeof(in));
	memset(&t, 0, sizeof(t));
	t.kind = ROCE_TUNNEL_ERSPAN3;
	t.ip_version = 6;
	t.n_vlan = 2;
	t.erspan3_platform = 1;
	m = wrap(&t, in, n, f, sizeof(f));
	expect_record(&l, "erspan3-platform-ipv6-qinq-rd-cmp-swap", f, m,
		      roce_tunnel_hdr_bytes(&t) + 14 + 8 + 40 + 8 + 12 + 40,
		      ROCE_CAP_F_ENCAP | ROCE_CAP_F_VLAN | ROCE_CAP_F_IPV6);
	t.erspan3_platform = 0;
	t.n_vlan = 0;
	m = wrap(&t, in, n, f, sizeof(f));
	expect_record(&l, "erspan3-ipv6-rd-cmp-swap", f, m,
		      roce_tunnel_hdr_bytes(&t) + 14 + 8 + 40 + 8 + 12 + 40,
		      ROCE_CAP_F_ENCAP | ROCE_CAP_F_VLAN | ROCE_CAP_F_IPV6);

	/* ERSPAN I (bare GRE) around RoCE v1. */
	roce_frame_default(&s);
	s.roce_version = 1;
	s.opcode = 0x03; /* RC SEND Last with Immediate */
	n = build(&s, in, sizeof(in));
	memset(&t, 0, sizeof(t));
	t.kind = ROCE_TUNNEL_ERSPAN1;
	t.ip_version = 4;
	m = wrap(&t, in, n, f, sizeof(f));
	expect_record(&l, "erspan1-roce-v1", f, m, roce_tunnel_hdr_bytes(&t) + 14 + 40 + 12 + 4,
		      ROCE_CAP_F_ENCAP | ROCE_CAP_F_V1);

	/* GRE-TEB with checksum and key words behind an outer tag; inner 802.1Q READ Request. */
	roce_frame_default(&s);
	s.n_vlan = 1;
	s.opcode = 0x0c;
	s.payload_bytes = 0;
	n = build(&s, in, sizeof(in));
	memset(&t, 0, sizeof(t));
	t.kind = ROCE_TUNNEL_GRE_TEB;
	t.ip_version = 4;
	t.n_vlan = 1;
	t.gre_csum = t.gre_key = 1;
	m = wrap(&t, in, n, f, sizeof(f));
	expect_record(&l, "gre-teb-csum-key-vlan-read-request", f, m,
		      roce_tunnel_hdr_bytes(&t) + 14 + 4 + 20 + 8 + 12 + 16,
		      ROCE_CAP_F_ENCAP | ROCE_CAP_F_VLAN);

	/* VXLAN over IPv4 with options; inner IPv6 ACK. */
	roce_frame_default(&s);
	s.ip_version = 6;
	s.opcode = 0x11;
	s.payload_bytes = 0;
	n = build(&s, in, sizeof(in));
	memset(&t, 0, sizeof(t));
	t.kind = ROCE_TUNNEL_VXLAN;
	t.ip_version = 4;
	t.ipv4_option_words = 3;
	m = wrap(&t, in, n, f, sizeof(f));
	expect_record(&l, "vxlan-ipv4-options-ipv6-rc-ack", f, m,
		      roce_tunnel_hdr_bytes(&t) + 14 + 40 + 8 + 12 + 4,
		      ROCE_CAP_F_ENCAP | ROCE_CAP_F_IPV6);

	/*
	 * The largest headers the program keeps (roce_capture.h): QinQ + IPv4 with 40 bytes of
	 * options + GRE C/K/S + ERSPAN III with platform (118) around a QinQ + IPv4-with-options
	 * UD SEND Only with Immediate to QP1 and the first MAD bytes (210): all of
	 * ROCE_CAP_HDR_SNAPLEN.
	 */
	roce_frame_default(&s);
	s.n_vlan = 2;
	s.ipv4_option_words = 10;
	s.opcode = 0x65;
	s.dest_qp = 1;
	s.payload_bytes = 256;
	n = build(&s, in, sizeof(in));
	memset(&t, 0, sizeof(t));
	t.kind = ROCE_TUNNEL_ERSPAN3;
	t.ip_version = 4;
	t.n_vlan = 2;
	t.ipv4_option_words = 10;
	t.gre_csum = t.gre_key = 1;
	t.erspan3_platform = 1;
	m = wrap(&t, in, n, f, sizeof(f));
	expect_record(&l, "erspan3-largest-headers-cm-mad", f, m, ROCE_CAP_HDR_SNAPLEN,
		      ROCE_CAP_F_ENCAP | ROCE_CAP_F_VLAN);
	result(roce_tunnel_hdr_bytes(&t) == 118 && roce_frame_bth_end(&s) + 12 + ROCE_CAP_MAD_BYTES == 210,
	       "erspan3-largest-headers-sizes", "outer %zu inner %zu, want 118 and 210",
	       roce_tunnel_hdr_bytes(&t), roce_frame_bth_end(&s) + 12 + ROCE_CAP_MAD_BYTES);

	/* Not RoCE inside: UDP to another port, ARP, TCP. */
	memset(&t, 0, sizeof(t));
	t.kind = ROCE_TUNNEL_ERSPAN2;
	t.ip_version = 4;
	roce_frame_default(&s);
	s.udp_dport = 4790;
	n = build(&s, in, sizeof(in));
	expect_none(&l, "erspan2-inner-udp-other-port", f, wrap(&t, in, n, f, sizeof(f)));
	roce_frame_default(&s);
	n = build(&s, in, sizeof(in));
	in[12] = 0x08;
	in[13] = 0x06;
	expect_none(&l, "erspan2-inner-arp", f, wrap(&t, in, n, f, sizeof(f)));
	n = build(&s, in, sizeof(in));
	in[14 + 9] = 6;
	t.kind = ROCE_TUNNEL_VXLAN;
	expect_none(&l, "vxlan-inner-tcp", f, wrap(&t, in, n, f, sizeof(f)));

	/* Broken or foreign tunnels around a RoCE frame. */
	n = build(&s, in, sizeof(in));
	t.vxlan_flags = 0x80; /* I flag clear */
	expect_none(&l, "vxlan-no-i-flag", f, wrap(&t, in, n, f, sizeof(f)));
	t.vxlan_flags = 0;
	t.udp_dport = 4790;
	expect_none(&l, "vxlan-other-port", f, wrap(&t, in, n, f, sizeof(f)));
	memset(&t, 0, sizeof(t));
	t.kind = ROCE_TUNNEL_GRE_TEB;
	t.ip_version = 4;
	t.gre_proto = 0x0800; /* IP in GRE: no Ethernet frame follows */
	expect_none(&l, "gre-other-protocol", f, wrap(&t, in, n, f, sizeof(f)));
	t.gre_proto = 0;
	m = wrap(&t, in, n, f, sizeof(f));
	f[14 + 20 + 1] |= 1; /* GRE version 1 (PPTP) */
	expect_none(&l, "gre-version-1", f, m);
	m = wrap(&t, in, n, f, sizeof(f));
	f[14 + 20] |= 0x40; /* source routing */
	expect_none(&l, "gre-routing", f, m);
	t.kind = ROCE_TUNNEL_ERSPAN2;
	t.erspan_ver = 2;
	expect_none(&l, "erspan2-wrong-version", f, wrap(&t, in, n, f, sizeof(f)));
	t.erspan_ver = 0;
	expect_none(&l, "erspan2-header-cut", f2, wrap(&t, in, n, f2, sizeof(f2)) - n - 4);
	t.kind = ROCE_TUNNEL_ERSPAN3;
	t.erspan_ver = 1;
	expect_none(&l, "erspan3-wrong-version", f, wrap(&t, in, n, f, sizeof(f)));

	/* One tunnel level: ERSPAN II inside VXLAN is not unwrapped. */
	memset(&t, 0, sizeof(t));
	t.kind = ROCE_TUNNEL_ERSPAN2;
	t.ip_version = 4;
	m = wrap(&t, in, n, f, sizeof(f));
	t.kind = ROCE_TUNNEL_VXLAN;
	expect_none(&l, "vxlan-erspan2-two-levels", f2, wrap(&t, f, m, f2, sizeof(f2)));

	/* Inner UDP 4791 with its BTH cut: malformed, like a plain one. */
	t.kind = ROCE_TUNNEL_ERSPAN2;
	m = wrap(&t, in, n, f, sizeof(f));
	expect_none(&l, "erspan2-inner-bth-cut", f, roce_tunnel_hdr_bytes(&t) + 50);

	c = sum_counters(&l, 0);
	ok = c.seen_pkts == frames_run - run_before && c.roce_pkts == records_expected - kept_before &&
	     c.captured_pkts == records_expected - kept_before && c.malformed_pkts == 1;
	result(ok, "tunnel-counters", "seen %llu roce %llu captured %llu malformed %llu (want %u %u %u 1)",
	       (unsigned long long)c.seen_pkts, (unsigned long long)c.roce_pkts,
	       (unsigned long long)c.captured_pkts, (unsigned long long)c.malformed_pkts,
	       frames_run - run_before, records_expected - kept_before, records_expected - kept_before);
	unload(&l);

	/* --filter host ... looks at the inner addresses (the RoCE endpoints), not the tunnel's. */
	if (load(&l, 0, "host 198.18.0.2", 0)) {
		result(0, "tunnel-filter-load", "%s", strerror(errno));
		return;
	}
	roce_frame_default(&s);
	n = build(&s, in, sizeof(in));
	m = wrap(&t, in, n, f, sizeof(f));
	expect_record(&l, "erspan2-filter-inner-host-match", f, m, roce_tunnel_hdr_bytes(&t) + 54,
		      ROCE_CAP_F_ENCAP);
	roce_frame_set_ipv4(s.dst_ip, 198, 18, 0, 3);
	n = build(&s, in, sizeof(in));
	expect_none(&l, "erspan2-filter-inner-host-mismatch", f, wrap(&t, in, n, f, sizeof(f)));
	c = sum_counters(&l, 0);
	result(c.filtered_pkts == 1, "erspan2-filter-counted", "filtered %llu, want 1",
	       (unsigned long long)c.filtered_pkts);
	unload(&l);
}

/* A one-page ring buffer fills up: losses are counted and reported by the next record. */
static void test_loss(void)
{
	struct roce_frame_spec s;
	struct roce_cap_counters c;
	struct loaded l;
	uint8_t f[256];
	size_t n, fit;
	int intact = 0;

	/* One CPU, so per-CPU loss accounting is deterministic. */
	pin_to_cpu(sched_getcpu());

	if (load(&l, 0, NULL, 4096)) {
		result(0, "loss-load", "%s", strerror(errno));
		return;
	}
	roce_frame_default(&s);
	n = build(&s, f, sizeof(f));
	/* Each record: its header + its data size class, in a 4 KiB ring. */
	fit = 4096 / roce_cap_rec_size(54, ROCE_CAP_HDR_SNAPLEN);
	for (size_t i = 0; i < fit + 10; i++)
		run(&l, f, n, 1, NULL);
	c = sum_counters(&l, 0);
	result(c.captured_pkts == fit && c.lost_pkts == 10, "loss-counted",
	       "captured %llu lost %llu, want %zu and 10", (unsigned long long)c.captured_pkts,
	       (unsigned long long)c.lost_pkts, fit);
	drain(&l);
	result(l.got->n == (int)fit && l.got->hdr[0].lost_before == 0, "loss-records-before",
	       "%d records (want %zu), first lost_before %llu", l.got->n, fit,
	       (unsigned long long)l.got->hdr[0].lost_before);
	run(&l, f, n, 1, NULL);
	drain(&l);
	result(l.got->n == 1 && l.got->hdr[0].lost_before == 10, "loss-reported-in-next-record",
	       "%d records, lost_before %llu (want 1, 10)", l.got->n,
	       l.got->n ? (unsigned long long)l.got->hdr[0].lost_before : 0ull);
	/* It started 48 bytes before the region's end and ran on into the slack, whole. */
	result(l.got->n == 1 && l.got->hdr[0].cap_len == 54 && !memcmp(l.got->data[0], f, 54),
	       "record-into-slack-intact", "cap_len %u or bytes differ from the frame",
	       l.got->n ? l.got->hdr[0].cap_len : 0);
	/* The ring has wrapped: the next records reuse the region's start. */
	for (size_t i = 0; i < fit; i++)
		run(&l, f, n, 1, NULL);
	drain(&l);
	for (int i = 0; i < l.got->n; i++)
		intact += l.got->hdr[i].cap_len == 54 && !memcmp(l.got->data[i], f, 54);
	result(l.got->n == (int)fit && intact == (int)fit, "ring-reused-after-wrap",
	       "%d records, %d intact, want %zu", l.got->n, intact, fit);
	unload(&l);
}

/*
 * Records of two CPUs come out in timestamp order: frames run on CPU 0 and CPU 1 in
 * turn, each with its own QPN, are read back in the order they ran.
 */
static void test_cpu_merge(void)
{
	struct roce_frame_spec s;
	struct loaded l;
	uint8_t f[256];
	size_t n;
	int in_order = 0, cpus[2] = { -1, -1 }, n_cpus = 0;

	for (int c = 0; c < CPU_SETSIZE && n_cpus < 2; c++)
		if (CPU_ISSET(c, &start_cpus))
			cpus[n_cpus++] = c;
	if (n_cpus < 2) {
		printf("SKIP xdp-prog cpu-merge: THIS MACHINE LETS THIS PROCESS USE ONLY ONE CPU\n");
		return;
	}
	if (load(&l, 0, NULL, 0)) {
		result(0, "cpu-merge-load", "%s", strerror(errno));
		return;
	}
	roce_frame_default(&s);
	for (int i = 0; i < 12; i++) {
		pin_to_cpu(cpus[i % 2]);
		s.dest_qp = 0x100 + (uint32_t)i;
		n = build(&s, f, sizeof(f));
		run(&l, f, n, 1, NULL);
		/* Apart by more than the vCPUs' clocks may disagree in a VM. */
		usleep(1000);
	}
	drain(&l);
	/* The BTH's destination QP: bytes 46..49 of an untagged IPv4 frame (14 + 20 + 8 + 4). */
	for (int i = 0; i < l.got->n; i++)
		in_order += l.got->data[i][48] == 0x01 && l.got->data[i][49] == i;
	result(l.got->n == 12 && in_order == 12, "cpu-merge-time-order",
	       "%d records, %d in the order they ran on 2 CPUs", l.got->n, in_order);
	if (in_order != 12)
		for (int i = 0; i < l.got->n; i++)
			printf("#   record %d: QPN 0x%02x%02x ts %llu\n", i, l.got->data[i][48],
			       l.got->data[i][49], (unsigned long long)l.got->hdr[i].ts_ns);
	unload(&l);
}

/*
 * The reader is woken once when the ring fills past cfg_wakeup_bytes, and not again until
 * it has drained (a wake-up per 64 records cost 40-50 ns per packet in a VM).
 */
static int count_note(void *ctx, void *data, size_t size)
{
	(void)data;
	(void)size;
	++*(int *)ctx;
	return 0;
}

static void test_wakeup(void)
{
	struct ring_buffer *notes;
	int n_notes = 0;
	struct roce_frame_spec s;
	struct roce_cap_counters c;
	struct loaded l;
	uint8_t f[256];
	size_t n;

	pin_to_cpu(sched_getcpu());
	load_wakeup_bytes = 16384;
	if (load(&l, 0, NULL, 65536)) {
		load_wakeup_bytes = 0;
		result(0, "wakeup-load", "%s", strerror(errno));
		return;
	}
	load_wakeup_bytes = 0;
	roce_frame_default(&s);
	n = build(&s, f, sizeof(f));
	/* 400 records of 88 bytes (34.4 KiB): past 16 KiB at the 187th. */
	run(&l, f, n, 400, NULL);
	c = sum_counters(&l, 0);
	result(c.captured_pkts == 400 && c.wakeups == 1, "wakeup-once-past-threshold",
	       "captured %llu wake-ups %llu, want 400 and 1", (unsigned long long)c.captured_pkts,
	       (unsigned long long)c.wakeups);
	notes = ring_buffer__new(bpf_map__fd(l.skel->maps.wakeups), count_note, &n_notes, NULL);
	result(notes && ring_buffer__poll(notes, 0) == 1 && n_notes == 1, "wakeup-reaches-epoll",
	       "%d wake-up notes, want 1", n_notes);
	ring_buffer__free(notes);
	drain(&l);
	run(&l, f, n, 100, NULL);
	c = sum_counters(&l, 0);
	result(c.wakeups == 1, "wakeup-none-below-threshold", "wake-ups %llu, want 1",
	       (unsigned long long)c.wakeups);
	run(&l, f, n, 300, NULL);
	c = sum_counters(&l, 0);
	result(c.captured_pkts == 800 && c.wakeups == 2, "wakeup-again-after-drain",
	       "captured %llu wake-ups %llu, want 800 and 2", (unsigned long long)c.captured_pkts,
	       (unsigned long long)c.wakeups);
	unload(&l);
}

/* The bench's consumer reads each record as agentxdp-capture does (header, then the frame). */
static int bench_consume(void *ctx, void *data, size_t size)
{
	const struct roce_cap_rec *rec = data;
	uint64_t *sum = ctx;

	if (size >= sizeof(*rec) + rec->cap_len && rec->cap_len)
		*sum += rec->ts_ns + rec->cap_len + rec->data[rec->cap_len - 1];
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/*
 * ns per packet through BPF_PROG_TEST_RUN with repeat, for tests/bench/bench_capture.sh.
 * Each test run is a batch of at most half the ring; a consumer drains the ring between
 * batches (outside the timed region), so no reservation fails: a full ring fails cheaply
 * and would flatter the figure. Prints "ns_per_pkt KIND MEDIAN MIN" over the rounds and
 * the lost count, which must be 0 for the figures to count. The kernel's duration is its
 * own clock around the loop, in whole ns per run rounded down (so the true figure is
 * below the printed one + 1 ns); timing the system call instead would add the ~0.5 ms
 * each BPF_PROG_TEST_RUN of XDP spends swapping the XDP dispatcher's program.
 */
static int bench(uint32_t repeat, uint32_t ring_kib, uint32_t rounds)
{
	enum { N_KINDS = 6, MAX_ROUNDS = 31 };
	static const char *const kind_name[N_KINDS] = {
		"roce-v2-ipv4-write", "roce-v2-ipv4-ack", "roce-v2-ipv6-vlan-write",
		"roce-v1-write", "udp-other-port", "not-ip-arp",
	};
	uint8_t frame[N_KINDS][2048];
	size_t len[N_KINDS];
	struct roce_frame_spec s;
	struct roce_cap_counters c;
	struct loaded l;
	uint64_t sink = 0;
	uint32_t half_ring_recs, batch;
	double ns[N_KINDS][MAX_ROUNDS];

	/* As agentxdp-capture -B RING_KIB: the ring is split over the CPUs. */
	if (rounds < 1 || rounds > MAX_ROUNDS ||
	    load(&l, 0, NULL, (uint64_t)ring_kib * 1024 / (uint64_t)libbpf_num_possible_cpus())) {
		fprintf(stderr, "cannot load roce_capture: %s\n", strerror(errno));
		return 1;
	}
	/* A record takes at most 24 + 128 bytes of the ring for these frames. */
	half_ring_recs = (uint32_t)(l.rings.region / 2 / (24 + ROCE_CAP_CLASS_L_BYTES));
	batch = repeat < half_ring_recs ? repeat : half_ring_recs;
	roce_frame_default(&s);
	s.opcode = 0x06; /* RC RDMA WRITE First: RETH, 1 KiB payload */
	s.payload_bytes = 1024;
	len[0] = build(&s, frame[0], sizeof(frame[0]));
	roce_frame_default(&s);
	s.opcode = 0x11; /* RC ACK: AETH, no payload (a 62-byte frame) */
	s.payload_bytes = 0;
	len[1] = build(&s, frame[1], sizeof(frame[1]));
	roce_frame_default(&s);
	s.opcode = 0x06;
	s.payload_bytes = 1024;
	s.ip_version = 6;
	s.n_vlan = 1;
	len[2] = build(&s, frame[2], sizeof(frame[2]));
	s.ip_version = 4;
	s.n_vlan = 0;
	s.roce_version = 1;
	len[3] = build(&s, frame[3], sizeof(frame[3]));
	roce_frame_default(&s);
	s.payload_bytes = 1024;
	s.udp_dport = 4790;
	len[4] = build(&s, frame[4], sizeof(frame[4]));
	memcpy(frame[5], frame[4], len[4]);
	len[5] = len[4];
	frame[5][12] = 0x08; /* EtherType ARP */
	frame[5][13] = 0x06;

	/*
	 * Rounds go over every kind in turn, so a noisy moment of a shared machine lands on
	 * one round of each kind rather than on every round of one.
	 */
	for (uint32_t r = 0; r < rounds; r++) {
		for (int k = 0; k < N_KINDS; k++) {
			uint64_t total_ns = 0, pkts = 0;

			for (uint32_t done = 0; done < repeat; done += batch) {
				uint32_t ns_per_pkt;

				if (run(&l, frame[k], len[k], batch, &ns_per_pkt) != XDP_PASS)
					return 1;
				total_ns += (uint64_t)ns_per_pkt * batch;
				pkts += batch;
				cpu_ring_drain(&l.rings, bench_consume, &sink);
			}
			ns[k][r] = (double)total_ns / (double)pkts;
		}
	}
	for (int k = 0; k < N_KINDS; k++) {
		qsort(ns[k], rounds, sizeof(ns[k][0]), cmp_double);
		printf("ns_per_pkt %s %.1f %.1f\n", kind_name[k], ns[k][rounds / 2], ns[k][0]);
	}
	c = sum_counters(&l, 0);
	printf("lost %llu\nrecords_read %s\nring_region_bytes %llu\n", (unsigned long long)c.lost_pkts,
	       sink ? "yes" : "no", (unsigned long long)l.rings.region);
	unload(&l);
	return 0;
}

/*
 * The peer for non-RoCE traffic: an XDP program that only returns XDP_PASS
 * (tests/bpf/xdp_dummy.bpf.c), on the same frame, the same way.
 */
static int bench_empty(const char *obj_path, uint32_t repeat, uint32_t rounds)
{
	enum { MAX_ROUNDS = 31 };
	struct roce_frame_spec s;
	struct bpf_object *obj;
	struct bpf_program *prog;
	uint8_t frame[2048];
	size_t len;
	double ns[MAX_ROUNDS];

	if (rounds < 1 || rounds > MAX_ROUNDS)
		return 1;
	obj = bpf_object__open_file(obj_path, NULL);
	if (!obj || bpf_object__load(obj)) {
		fprintf(stderr, "cannot load %s: %s\n", obj_path, strerror(errno));
		return 1;
	}
	prog = bpf_object__next_program(obj, NULL);
	roce_frame_default(&s);
	s.payload_bytes = 1024;
	s.udp_dport = 4790;
	len = build(&s, frame, sizeof(frame));
	for (uint32_t r = 0; r < rounds; r++) {
		struct xdp_md ctx_in = { .data_end = (uint32_t)len, .ingress_ifindex = TEST_IFINDEX };
		LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = frame, .data_size_in = (uint32_t)len,
			    .ctx_in = &ctx_in, .ctx_size_in = sizeof(ctx_in), .repeat = repeat);

		if (!prog || bpf_prog_test_run_opts(bpf_program__fd(prog), &opts))
			return 1;
		ns[r] = opts.duration;
	}
	qsort(ns, rounds, sizeof(ns[0]), cmp_double);
	printf("ns_per_pkt empty-xdp-program %.1f %.1f\n", ns[rounds / 2], ns[0]);
	bpf_object__close(obj);
	return 0;
}

int main(int argc, char **argv)
{
	libbpf_set_print(silent_print);
	sched_getaffinity(0, sizeof(start_cpus), &start_cpus);
	/* --bench REPEAT [RING_KIB [ROUNDS]]: ns per packet; the ring size decides whether
	 * its memory stays in cache. */
	if (argc >= 3 && argc <= 5 && !strcmp(argv[1], "--bench"))
		return bench((uint32_t)strtoul(argv[2], NULL, 10),
			     argc >= 4 ? (uint32_t)strtoul(argv[3], NULL, 10) : 8192,
			     argc == 5 ? (uint32_t)strtoul(argv[4], NULL, 10) : 5);
	/* --bench-empty OBJECT REPEAT ROUNDS: the same measurement for an XDP_PASS-only program. */
	if (argc == 5 && !strcmp(argv[1], "--bench-empty"))
		return bench_empty(argv[2], (uint32_t)strtoul(argv[3], NULL, 10),
				   (uint32_t)strtoul(argv[4], NULL, 10));
	test_parsing();
	test_opcode_table();
	test_snaplen();
	test_filters();
	test_tunnels();
	test_loss();
	test_wakeup();
	test_cpu_merge();
	return failures ? 1 : 0;
}
