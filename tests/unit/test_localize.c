/* test_localize.c: localization on flow-level fabric models, and the topology CSV readers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fabric_fixture.h"
#include "lib/localize/finding.h"
#include "lib/localize/localize.h"
#include "lib/util/robust_stats.h"
#include "lib/localize/topology.h"
#include "lib/util/util.h"

static struct fx_fabric fx; /* large: keep off the stack */

static void run(const struct fx_fault *fault, int mode, struct finding **out, size_t *n)
{
	struct localize_config cfg;
	struct topology topo;

	/* mode 0: no topology, 1: links only (ECMP spread), 2: links and paths */
	fx_build(&fx, 16, 4, 2, 96, 7, fault);
	localize_config_default(&cfg);
	if (mode) {
		assert_int_equal(fx_topology(&fx, &topo, mode == 2), 0);
		assert_int_equal(localize(fx.flows, fx.n_flows, &topo, &cfg, out, n), 0);
		topology_free(&topo);
	} else {
		assert_int_equal(localize(fx.flows, fx.n_flows, NULL, &cfg, out, n), 0);
	}
	for (size_t i = 0; i < *n; i++)
		print_message("  #%d %s %s '%s' dir '%s' sev %.3g (%s) conf %.2f onset +%.1f ms hurt %u\n",
			      (*out)[i].rank, finding_kind_name((*out)[i].kind),
			      finding_subject_kind_name((*out)[i].subject_kind), (*out)[i].subject,
			      (*out)[i].direction, (*out)[i].severity, (*out)[i].severity_text,
			      (*out)[i].confidence,
			      (*out)[i].onset_ns ? ((*out)[i].onset_ns - FX_T0_NS) / 1e6 : -1.0,
			      (*out)[i].flows_hurt);
}

/* Does the path of flow fl (by its ECMP entropy) cross link? */
static bool flow_crosses(const struct topology *topo, const struct flow_stats *fl, long link)
{
	const struct topo_path *p = topology_find_path(topo, fl->key.src_ip, fl->key.dst_ip,
						       fl->udp_sport);

	for (size_t h = 0; p && h < p->n_hops; h++)
		if (p->hops[h].link == (uint32_t)link)
			return true;
	return false;
}

static void test_healthy_no_finding(void **state)
{
	struct finding *f;
	size_t n;

	for (int mode = 0; mode < 3; mode++) {
		run(NULL, mode, &f, &n);
		assert_int_equal(n, 0);
		findings_free(f, n);
	}
}

static void test_slow_fabric_link_with_paths(void **state)
{
	struct fx_fault fault = { .kind = FX_SLOW, .extra_us = 5, .both_dirs = true };
	struct finding *f;
	size_t n;

	snprintf(fault.link, sizeof(fault.link), "leaf1-spine0");
	run(&fault, 2, &f, &n);
	assert_true(n >= 1);
	assert_int_equal(f[0].kind, FINDING_SLOW);
	assert_int_equal(f[0].subject_kind, SUBJECT_LINK);
	assert_string_equal(f[0].subject, "leaf1-spine0");
	assert_true(f[0].severity > 1.3); /* +5..10 us on a ~10 us round trip */
	assert_true(f[0].confidence > 0.5 && f[0].confidence <= 1);
	assert_non_null(strstr(f[0].evidence, "\"flows\":[{"));
	findings_free(f, n);
}

static void test_slow_link_ecmp_spread(void **state)
{
	struct fx_fault fault = { .kind = FX_SLOW, .extra_us = 10, .both_dirs = true };
	struct finding *f;
	size_t n;

	/* Without paths.csv the evidence is spread over both spines; a host link still
	 * stands out because every path of that host crosses it. */
	snprintf(fault.link, sizeof(fault.link), "198.18.0.15-leaf1");
	run(&fault, 1, &f, &n);
	assert_true(n >= 1);
	assert_string_equal(f[0].subject, "198.18.0.15-leaf1");
	findings_free(f, n);
}

static void test_ecmp_separation(void **state)
{
	struct fx_fault fault = { .kind = FX_SLOW, .extra_us = 5, .both_dirs = true };
	struct finding *f;
	size_t n;
	int via_spine0 = 0, via_spine1 = 0;

	/* Flows between the same leaves split over the two spines: only those crossing
	 * leaf2-spine1 are slow, and with paths.csv the blame goes there, not to spine0. */
	snprintf(fault.link, sizeof(fault.link), "leaf2-spine1");
	run(&fault, 2, &f, &n);
	for (size_t i = 0; i < fx.n_flows; i += 2) {
		char names[4][64];
		int src = fx.flows[i].key.src_ip[15] - 10, dst = fx.flows[i].key.dst_ip[15] - 10;
		if (fx_leaf(&fx, src) != 2 || fx_leaf(&fx, dst) == 2)
			continue;
		fx_path(&fx, src, dst, fx.flows[i].udp_sport, names);
		if (!strcmp(names[1], "leaf2-spine0"))
			via_spine0++;
		else
			via_spine1++;
	}
	assert_true(via_spine0 > 0 && via_spine1 > 0); /* the fixture really splits */
	assert_true(n >= 1);
	assert_string_equal(f[0].subject, "leaf2-spine1");
	findings_free(f, n);
}

/*
 * Without paths.csv every flow from leaf2 to another leaf is spread half and half over
 * leaf2-spine0 and leaf2-spine1: the two links fit the slow flows exactly as well. The
 * finding names both as a set, shares the confidence, and says what would split them.
 */
static void test_ecmp_tie_names_set(void **state)
{
	struct fx_fault fault = { .kind = FX_SLOW, .extra_us = 10, .both_dirs = true };
	struct finding *f;
	size_t n;

	snprintf(fault.link, sizeof(fault.link), "leaf2-spine1");
	run(&fault, 1, &f, &n);
	assert_true(n >= 1);
	assert_string_equal(finding_subject_kind_name(f[0].subject_kind), "set");
	assert_string_equal(f[0].subject, "leaf2-spine0 | leaf2-spine1");
	assert_non_null(strstr(f[0].severity_text, "--paths"));
	assert_non_null(strstr(f[0].evidence, "\"subjects\":[\"leaf2-spine0\",\"leaf2-spine1\"]"));
	assert_true(f[0].confidence > 0 && f[0].confidence <= 0.5); /* shared by two */
	findings_free(f, n);

	/* With paths the flows that really cross leaf2-spine1 are known: no set. */
	run(&fault, 2, &f, &n);
	assert_true(n >= 1);
	assert_string_equal(f[0].subject, "leaf2-spine1");
	findings_free(f, n);
}

/*
 * No topology, a slow spine cable: the slow flows belong to every host of leaf1 and many
 * remote hosts, and each of those hosts has healthy flows too (the other spine). No host
 * subject explains them: a `fabric` finding names the hurt host pairs (issue #17, item 4).
 */
static void test_fabric_fault_without_topology(void **state)
{
	struct fx_fault fault = { .kind = FX_SLOW, .extra_us = 10, .both_dirs = true };
	struct finding *f;
	size_t n;
	bool found = false;

	snprintf(fault.link, sizeof(fault.link), "leaf1-spine0");
	run(&fault, 0, &f, &n);
	for (size_t i = 0; i < n; i++) {
		if (strcmp(finding_subject_kind_name(f[i].subject_kind), "fabric"))
			continue;
		found = true;
		assert_int_equal(f[i].level, FINDING_ALERT);
		assert_non_null(strstr(f[i].subject, "host pairs"));
		assert_non_null(strstr(f[i].evidence, "\"host_pairs\":[\""));
		assert_non_null(strstr(f[i].severity_text, "topology"));
		assert_true(f[i].flows_hurt >= 4);
	}
	assert_true(found);
	findings_free(f, n);
}

static void test_lossy_link_direction(void **state)
{
	struct fx_fault fault = { .kind = FX_LOSSY, .rate = 0.01 };
	struct finding *f;
	size_t n;

	snprintf(fault.link, sizeof(fault.link), "leaf0-spine1");
	run(&fault, 2, &f, &n);
	assert_true(n >= 1);
	assert_int_equal(f[0].kind, FINDING_LOSSY);
	assert_string_equal(f[0].subject, "leaf0-spine1");
	assert_string_equal(f[0].direction, "leaf0 -> spine1");
	/* Severity is the loss per packet crossing the link: 1% by construction. */
	assert_true(fabs(f[0].severity - 0.01) < 0.004);
	findings_free(f, n);
}

static void test_congested_link(void **state)
{
	struct fx_fault fault = { .kind = FX_CONGESTED, .rate = 0.05, .both_dirs = true };
	struct finding *f;
	size_t n;

	snprintf(fault.link, sizeof(fault.link), "leaf3-spine0");
	run(&fault, 2, &f, &n);
	assert_true(n >= 1);
	assert_int_equal(f[0].kind, FINDING_CONGESTED);
	assert_string_equal(f[0].subject, "leaf3-spine0");
	findings_free(f, n);
}

static void test_host_link_without_topology(void **state)
{
	struct fx_fault fault = { .kind = FX_SLOW, .extra_us = 4, .both_dirs = true };
	struct finding *f;
	size_t n;

	snprintf(fault.link, sizeof(fault.link), "198.18.0.17-leaf1");
	run(&fault, 0, &f, &n);
	assert_true(n >= 1);
	assert_int_equal(f[0].kind, FINDING_SLOW);
	assert_int_equal(f[0].subject_kind, SUBJECT_HOST_LINK);
	assert_string_equal(f[0].subject, "198.18.0.17");
	findings_free(f, n);
}

static void test_path_only(void **state)
{
	/* A pair slower than the rest is normal without a topology (same leaf or not): it
	 * takes a change over time to blame the pair, so the fault starts at window 4. */
	struct fx_fault fault = { .kind = FX_PAIR, .extra_us = 5, .host = 3, .peer = -1,
				  .onset_window = 4 };
	struct finding *f;
	size_t n;

	/* Pick a pair that the fixture's traffic actually uses. */
	fx_build(&fx, 16, 4, 2, 96, 7, NULL);
	fault.host = fx.flows[0].key.src_ip[15] - 10;
	fault.peer = fx.flows[0].key.dst_ip[15] - 10;
	run(&fault, 0, &f, &n);
	assert_true(n >= 1);
	assert_int_equal(f[0].subject_kind, SUBJECT_PATH);
	char want[64];
	int lo = fault.host < fault.peer ? fault.host : fault.peer;
	snprintf(want, sizeof(want), "198.18.0.%d -> 198.18.0.%d", 10 + lo,
		 10 + (lo == fault.host ? fault.peer : fault.host));
	assert_string_equal(f[0].subject, want);
	findings_free(f, n);
}

static void test_host_rnr(void **state)
{
	struct fx_fault fault = { .kind = FX_RNR, .host = 5 };
	struct finding *f;
	size_t n;

	run(&fault, 2, &f, &n);
	assert_true(n >= 1);
	assert_int_equal(f[0].kind, FINDING_HOST);
	assert_int_equal(f[0].subject_kind, SUBJECT_HOST);
	assert_string_equal(f[0].subject, "198.18.0.15");
	findings_free(f, n);
}

/*
 * Marking on a link that carries far more than its peers is congestion its load explains:
 * a notice. The same marking on a link carrying what its peers carry is an alert.
 */
static void localize_fx(int mode, struct finding **out, size_t *n)
{
	struct localize_config cfg;
	struct topology topo;

	localize_config_default(&cfg);
	assert_int_equal(fx_topology(&fx, &topo, mode == 2), 0);
	assert_int_equal(localize(fx.flows, fx.n_flows, &topo, &cfg, out, n), 0);
	topology_free(&topo);
}

static void test_congested_level(void **state)
{
	struct fx_fault fault = { .kind = FX_CONGESTED, .rate = 0.10, .both_dirs = true };
	struct finding *f;
	size_t n;
	int found;

	snprintf(fault.link, sizeof(fault.link), "leaf3-spine0");
	run(&fault, 2, &f, &n);
	assert_true(n >= 1);
	assert_int_equal(f[0].kind, FINDING_CONGESTED);
	assert_string_equal(f[0].subject, "leaf3-spine0");
	assert_int_equal(f[0].level, FINDING_ALERT);
	assert_non_null(strstr(f[0].evidence, "\"level\":\"alert\""));
	findings_free(f, n);

	/* The flows through the link now send eight times as much (and mark as often). */
	fx_build(&fx, 16, 4, 2, 96, 7, &fault);
	{
		struct topology topo;
		long link;

		assert_int_equal(fx_topology(&fx, &topo, true), 0);
		link = topology_link_by_name(&topo, "leaf3-spine0");
		assert_true(link >= 0);
		for (size_t i = 0; i < fx.n_flows; i++) {
			if (!flow_crosses(&topo, &fx.flows[i], link))
				continue;
			fx.flows[i].packets *= 8;
			fx.flows[i].cnps *= 8;
			fx.flows[i].bytes *= 8;
		}
		topology_free(&topo);
	}
	localize_fx(2, &f, &n);
	found = 0;
	for (size_t i = 0; i < n; i++)
		if (!strcmp(f[i].subject, "leaf3-spine0")) {
			found++;
			assert_int_equal(f[i].kind, FINDING_CONGESTED);
			assert_int_equal(f[i].level, FINDING_NOTICE);
			assert_non_null(strstr(f[i].evidence, "load explains"));
		}
	assert_int_equal(found, 1);
	/* Alerts rank before notices, whatever their confidence. */
	for (size_t i = 1; i < n; i++)
		assert_true(f[i - 1].level <= f[i].level);
	findings_free(f, n);
}

/*
 * A congested switch link whose round trips' floor stands above its peers' while it sheds
 * load is read slow by its floor (link_kind()). Beside a stronger alert it must stay an
 * alert: its severity is a mark rate, not a latency ratio, so the 1.5x bar for a second
 * latency alert does not apply to it. Host 5 refuses messages (the first alert); the
 * flows through leaf3-spine0 are marked 10%, carry half their packets and wait +2 us at
 * every moment (a standing queue).
 */
static void test_floor_slow_second_alert(void **state)
{
	struct fx_fault fault = { .kind = FX_RNR, .host = 5 };
	struct localize_config cfg;
	struct topology topo;
	struct finding *f;
	size_t n;
	long link;
	int found = 0;

	fx_build(&fx, 16, 4, 2, 96, 7, &fault);
	assert_int_equal(fx_topology(&fx, &topo, true), 0);
	link = topology_link_by_name(&topo, "leaf3-spine0");
	assert_true(link >= 0);
	for (size_t i = 0; i < fx.n_flows; i++) {
		struct flow_stats *fl = &fx.flows[i];
		bool crosses = flow_crosses(&topo, fl, link);

		if (!crosses || fl->role != FLOW_ROLE_REQUESTER)
			continue;
		fl->packets = fl->bytes = fl->ack_samples = fl->cnps = 0;
		for (size_t w = 0; w < fl->n_windows; w++) {
			struct flow_window *fw = &fx.windows[i][w];

			fw->packets /= 2;
			fw->bytes /= 2;
			fw->cnps = fw->packets / 10;
			fw->ack_latency_p50_ns += 2000;
			fw->ack_latency_p99_ns += 2000;
			fw->ack_latency_sum_ns += 2000ull * fw->ack_samples;
			fl->packets += fw->packets;
			fl->bytes += fw->bytes;
			fl->cnps += fw->cnps;
			fl->ack_samples += fw->ack_samples;
		}
		fl->ack_latency_p50_us += 2;
		fl->ack_latency_p99_us += 2;
		fl->ack_latency_max_us += 2;
	}
	/* Each of these flows crosses a second switch link, which shares its floor: in this
	 * small fabric the link stands 3.6 sigmas out, under the default floor_min_z. */
	localize_config_default(&cfg);
	cfg.floor_min_z = 3;
	assert_int_equal(localize(fx.flows, fx.n_flows, &topo, &cfg, &f, &n), 0);
	topology_free(&topo);
	for (size_t i = 0; i < n; i++) {
		print_message("  #%d %s %s %s '%s'\n", f[i].rank, finding_level_name(f[i].level),
			      finding_kind_name(f[i].kind), f[i].subject, f[i].severity_text);
		if (strcmp(f[i].subject, "leaf3-spine0"))
			continue;
		found++;
		assert_int_equal(f[i].kind, FINDING_SLOW);
		assert_non_null(strstr(f[i].evidence, "\"kind_why\":\"its floor"));
		assert_int_equal(f[i].level, FINDING_ALERT);
	}
	assert_int_equal(found, 1);
	assert_int_equal(f[0].kind, FINDING_HOST);
	findings_free(f, n);
}

/*
 * A congested link whose floor is its peers' exactly: every round trip waits 10 us at its
 * quickest (a histogram's quantized medians make such ties). The peers' spread is zero,
 * and a floor that does not stand out must not read as standing 1e9 sigmas out: the link
 * stays congested, with no floor_z in its evidence. It carries half its peers' load, so
 * a floor above theirs would make it slow.
 */
static void test_floor_tie_stays_congested(void **state)
{
	struct fx_fault fault = { .kind = FX_CONGESTED, .rate = 0.10, .both_dirs = true };
	struct topology topo;
	struct finding *f;
	size_t n;
	long link;
	int found = 0;

	snprintf(fault.link, sizeof(fault.link), "leaf3-spine0");
	fx_build(&fx, 16, 4, 2, 96, 7, &fault);
	assert_int_equal(fx_topology(&fx, &topo, true), 0);
	link = topology_link_by_name(&topo, "leaf3-spine0");
	assert_true(link >= 0);
	for (size_t i = 0; i < fx.n_flows; i++) {
		struct flow_stats *fl = &fx.flows[i];
		bool crosses = flow_crosses(&topo, fl, link);

		for (size_t w = 0; w < fl->n_windows; w++) {
			fx.windows[i][w].ack_latency_p50_ns = 10000;
			if (crosses && fl->role == FLOW_ROLE_REQUESTER)
				fx.windows[i][w].packets /= 2;
		}
		if (crosses && fl->role == FLOW_ROLE_REQUESTER)
			fl->packets /= 2;
	}
	topology_free(&topo);
	localize_fx(2, &f, &n);
	for (size_t i = 0; i < n; i++) {
		print_message("  #%d %s %s %s '%s'\n", f[i].rank, finding_level_name(f[i].level),
			      finding_kind_name(f[i].kind), f[i].subject, f[i].severity_text);
		if (strcmp(f[i].subject, "leaf3-spine0"))
			continue;
		found++;
		assert_int_equal(f[i].kind, FINDING_CONGESTED);
		assert_null(strstr(f[i].evidence, "\"floor_z\""));
		assert_null(strstr(f[i].evidence, "kind_why"));
	}
	assert_int_equal(found, 1);
	findings_free(f, n);
}

/*
 * Loss in a fabric that marks everywhere: a lossy link whose flows carry about as many
 * marks as losses stays an alert; drops that come with five times as many marks are a
 * queue overflowing, a notice, when they come in bursts (burst: each flow's losses moved
 * into every third window); the same drops spread evenly over the windows are a lossy
 * cable's, whatever the marks (loss_at_random()), on a switch link only. Every flow is
 * marked at ce_rate, the link loses 1%. The level of the lossy finding on link, -1 when
 * there is none.
 */
static int lossy_level(const char *link, double ce_rate, bool burst)
{
	struct fx_fault fault = { .kind = FX_LOSSY, .rate = 0.01 };
	struct finding *f;
	size_t n;
	int level = -1;

	snprintf(fault.link, sizeof(fault.link), "%s", link);
	fx_build(&fx, 16, 4, 2, 96, 7, &fault);
	for (size_t i = 0; i < fx.n_flows; i++) {
		fx.flows[i].ecn_ce = (uint64_t)(ce_rate * (double)fx.flows[i].packets);
		for (size_t w = 0; burst && w < fx.flows[i].n_windows; w++) {
			struct flow_window *fw = &fx.windows[i][w];

			if (w % 3) {
				fx.windows[i][w - w % 3].naks += fw->naks;
				fw->naks = 0;
			}
		}
	}
	localize_fx(2, &f, &n);
	for (size_t i = 0; i < n; i++) {
		print_message("  #%d %s %s %s '%s'\n", f[i].rank, finding_level_name(f[i].level),
			      finding_kind_name(f[i].kind), f[i].subject, f[i].severity_text);
		if (!strcmp(f[i].subject, link) && f[i].kind == FINDING_LOSSY) {
			level = (int)f[i].level;
			if (f[i].level == FINDING_NOTICE)
				assert_non_null(strstr(f[i].evidence, "drops of a queue"));
		}
	}
	findings_free(f, n);
	return level;
}

static void test_lossy_level(void **state)
{
	assert_int_equal(lossy_level("leaf0-spine1", 0.01, true), FINDING_ALERT);
	assert_int_equal(lossy_level("leaf0-spine1", 0.05, true), FINDING_NOTICE);
	assert_int_equal(lossy_level("leaf0-spine1", 0.05, false), FINDING_ALERT);
	/* A host's access link: the queue toward a host can stay full and drop steadily. */
	assert_int_equal(lossy_level("198.18.0.15-leaf1", 0.05, false), FINDING_NOTICE);
}

/*
 * The same drops on one host's outbound link, seen as timeouts with no PSN sequence NAK:
 * what a NIC retransmitting early looks like. Kind host, on the same subject; with NAKs
 * it stays a lossy link.
 */
static void test_sender_timer(void **state)
{
	struct fx_fault fault = { .kind = FX_LOSSY, .rate = 0.01 };
	struct finding *f;
	size_t n;

	for (int timer = 0; timer < 2; timer++) {
		snprintf(fault.link, sizeof(fault.link), "198.18.0.15-leaf1");
		fx_build(&fx, 16, 4, 2, 96, 7, &fault);
		for (size_t i = 0; i < fx.n_flows && timer; i++) {
			fx.flows[i].timeouts = fx.flows[i].naks_psn_seq;
			fx.flows[i].naks_psn_seq = 0;
		}
		localize_fx(2, &f, &n);
		assert_true(n >= 1);
		print_message("  #1 %s %s '%s'\n", finding_kind_name(f[0].kind), f[0].subject,
			      f[0].severity_text);
		assert_string_equal(f[0].subject, "198.18.0.15-leaf1");
		assert_int_equal(f[0].kind, timer ? FINDING_HOST : FINDING_LOSSY);
		if (timer)
			assert_non_null(strstr(f[0].severity_text, "retransmit timer"));
		findings_free(f, n);
	}
}

static void test_host_turnaround(void **state)
{
	struct fx_fault fault = { .kind = FX_TURNAROUND, .host = 6, .extra_us = 8 };
	struct finding *f;
	size_t n;

	/* Slow only when the host answers, not when it asks. From one vantage that is either
	 * its turnaround or its inbound link (both delay exactly the flows it answers): the
	 * finding names the host's inbound direction and the runner-up is the host itself.
	 * test_two_vantages_split_host shows how a second vantage settles it. */
	run(&fault, 0, &f, &n);
	assert_true(n >= 1);
	assert_int_equal(f[0].subject_kind, SUBJECT_HOST_LINK);
	assert_string_equal(f[0].subject, "198.18.0.16");
	assert_string_equal(f[0].direction, "fabric -> 198.18.0.16");
	assert_non_null(strstr(f[0].evidence, "\"runner_up\":{\"subject\":\"198.18.0.16\""));
	findings_free(f, n);
}

/*
 * Message completions on a healthy fabric whose requesters send messages of unlike lengths:
 * every flow's ACK latency is its path's, one-packet SENDs complete with their ACK, and the
 * 64-packet WRITEs of the hosts whose index is a multiple of writer_mod complete 5.8 us
 * later (their data arrive over 64 serializations). slow_host >= 0, a writer, completes its
 * messages 3x slower than the other writers'.
 */
static void message_lengths(int writer_mod, int slow_host, struct finding **out, size_t *n)
{
	struct localize_config cfg;
	char ip[32];

	fx_build(&fx, 16, 4, 2, 96, 7, NULL);
	for (size_t i = 0; i < fx.n_flows; i++) {
		struct flow_stats *f = &fx.flows[i];
		int host;

		if (f->role != FLOW_ROLE_REQUESTER)
			continue;
		for (host = 0; host < 16; host++) {
			uint8_t a[16];

			fx_host_ip(host, ip, sizeof(ip));
			topo_parse_addr(ip, a);
			if (!memcmp(a, f->key.src_ip, 16))
				break;
		}
		f->first_transmissions = f->packets;
		f->completion_samples = f->packets;
		f->completion_p50_us = f->ack_latency_p50_us;
		if (host % writer_mod == 0) {
			f->completion_samples = f->packets / 64;
			f->completion_p50_us += host == slow_host ? 3 * 5.8 : 5.8;
		}
		f->completion_p99_us = f->completion_max_us = f->completion_p50_us * 1.2;
	}
	localize_config_default(&cfg);
	assert_int_equal(localize(fx.flows, fx.n_flows, NULL, &cfg, out, n), 0);
}

/* Longer messages take longer: not a slow host (a mixed each-host fabric, tuning seed 3429). */
static void test_completion_message_lengths(void **state)
{
	struct finding *f;
	size_t n;

	message_lengths(7, -1, &f, &n); /* hosts 0, 7, 14 write */
	for (size_t i = 0; i < n; i++)
		print_message("  #%zu %s %s\n", i + 1, f[i].subject, f[i].severity_text);
	assert_int_equal(n, 0);
	findings_free(f, n);
	/* ... and among writers, one three times slower than the others is still found. */
	message_lengths(2, 6, &f, &n);
	assert_true(n >= 1);
	assert_int_equal(f[0].kind, FINDING_SLOW);
	assert_string_equal(f[0].subject, "198.18.0.16");
	findings_free(f, n);
}

static void test_onset(void **state)
{
	struct fx_fault fault = { .kind = FX_SLOW, .extra_us = 5, .both_dirs = true,
				  .onset_window = 4 };
	struct finding *f;
	size_t n;

	snprintf(fault.link, sizeof(fault.link), "leaf1-spine1");
	run(&fault, 2, &f, &n);
	assert_true(n >= 1);
	assert_string_equal(f[0].subject, "leaf1-spine1");
	assert_int_equal(f[0].onset_ns, FX_T0_NS + 4 * FX_WINDOW_NS);
	assert_non_null(strstr(f[0].evidence, "\"onset\":\"change_point\""));
	findings_free(f, n);

	fault.kind = FX_LOSSY;
	fault.rate = 0.02;
	fault.onset_window = 6;
	run(&fault, 2, &f, &n);
	assert_true(n >= 1);
	assert_int_equal(f[0].kind, FINDING_LOSSY);
	assert_int_equal(f[0].onset_ns, FX_T0_NS + 6 * FX_WINDOW_NS);
	findings_free(f, n);
}

/*
 * 12 QPs, each seen at the requester (RTT) and at the responder (turnaround); responder
 * 198.18.0.20 takes 30 us to answer, the network is the same for all. one_pair: only QP 4
 * goes to it, from 198.18.0.19, which asks nobody else. Returns the flows written.
 */
static size_t turnaround_flows(struct flow_stats flows[2 * 2 * 12], bool one_pair)
{
	size_t nf = 0;

	memset(flows, 0, 2 * 2 * 12 * sizeof(*flows));
	for (int q = 0; q < 12; q++) {
		int src = q % 6, dst = 6 + q % 5;
		if (one_pair) {
			src = q == 4 ? 9 : q % 6;
			dst = q == 4 ? 10 : 6 + q % 3;
		}
		double turn = dst == 10 ? 30 : 2, net = 8;
		for (int v = 0; v < 2; v++) {
			struct flow_stats *rq = &flows[nf], *rp = &flows[nf + 1];
			char ip[32];
			rq->id = nf + 1;
			rp->id = nf + 2;
			rq->peer_id = rp->id;
			rp->peer_id = rq->id;
			snprintf(ip, sizeof(ip), "198.18.0.%d", 10 + src);
			topo_parse_addr(ip, rq->key.src_ip);
			topo_parse_addr(ip, rp->key.dst_ip);
			snprintf(ip, sizeof(ip), "198.18.0.%d", 10 + dst);
			topo_parse_addr(ip, rq->key.dst_ip);
			topo_parse_addr(ip, rp->key.src_ip);
			rq->key.dst_qpn = 0x200 + (uint32_t)q;
			rp->key.dst_qpn = 0x300 + (uint32_t)q;
			rq->role = FLOW_ROLE_REQUESTER;
			rp->role = FLOW_ROLE_RESPONDER;
			rq->vantage = rp->vantage = (uint32_t)v;
			rq->packets = 1000;
			rp->packets = 500;
			rq->ack_samples = 500;
			rq->ack_latency_p50_us = (v == 0 ? net + turn : turn) + 0.01 * q;
			rq->ack_latency_p99_us = rq->ack_latency_p50_us * 1.2;
			nf += 2;
		}
	}
	return nf;
}

static void test_two_vantages_split_host(void **state)
{
	struct flow_stats flows[2 * 2 * 12];
	size_t nf = turnaround_flows(flows, false);
	struct finding *f;
	size_t n;

	assert_int_equal(localize(flows, nf, NULL, NULL, &f, &n), 0);
	assert_true(n >= 1);
	assert_int_equal(f[0].kind, FINDING_HOST);
	assert_string_equal(f[0].subject, "198.18.0.20");
	assert_non_null(strstr(f[0].evidence, "\"signal\":\"turnaround\""));
	findings_free(f, n);
}

static void test_turnaround_pair_not_set(void **state)
{
	struct flow_stats flows[2 * 2 * 12];
	size_t nf = turnaround_flows(flows, true);
	struct finding *f;
	size_t n;

	/* Every hurt connection joins the same two hosts, and both ends explain it. The
	 * turnaround is timed at the responder alone, so it is no coin flip between the two
	 * ends: the finding names the responder, not the pair as a set (loc_pair_sets()). */
	assert_int_equal(localize(flows, nf, NULL, NULL, &f, &n), 0);
	assert_true(n >= 1);
	assert_int_equal(f[0].kind, FINDING_HOST);
	assert_int_equal(f[0].subject_kind, SUBJECT_HOST);
	assert_string_equal(f[0].subject, "198.18.0.20");
	findings_free(f, n);
}

static void test_ingress_vantages_direction(void **state)
{
	struct flow_stats flows[2 * 15];
	size_t nf = 0;
	struct finding *f;
	size_t n;

	/* Ingress-only captures on each host (XDP): a request is seen where it arrives (the
	 * responder's trace) and its ACK where that arrives (the requester's trace). The ACK
	 * latency is then the responder's turnaround plus the ACKs' way back. Host
	 * 198.18.0.20's egress is 6 us slow: the QPs it answers see it, the QPs it asks do not
	 * (their data's delay is before the stamp). The finding is its egress. */
	memset(flows, 0, sizeof(flows));
	for (int q = 0; q < 15; q++) {
		int src = q < 12 ? q % 6 : 10, dst = q < 12 ? 6 + q % 5 : q - 12;
		struct flow_stats *rq = &flows[nf], *rp = &flows[nf + 1];
		char ip[32];
		rq->id = nf + 1;
		rp->id = nf + 2;
		rq->peer_id = rp->id;
		rp->peer_id = rq->id;
		snprintf(ip, sizeof(ip), "198.18.0.%d", 10 + src);
		topo_parse_addr(ip, rq->key.src_ip);
		topo_parse_addr(ip, rp->key.dst_ip);
		snprintf(ip, sizeof(ip), "198.18.0.%d", 10 + dst);
		topo_parse_addr(ip, rq->key.dst_ip);
		topo_parse_addr(ip, rp->key.src_ip);
		rq->key.dst_qpn = 0x200 + (uint32_t)q;
		rp->key.dst_qpn = 0x300 + (uint32_t)q;
		rq->role = FLOW_ROLE_REQUESTER;
		rp->role = FLOW_ROLE_RESPONDER;
		rq->vantage = (uint32_t)dst;	/* the data, at the responder's ingress */
		rp->vantage = (uint32_t)src;	/* the ACKs, at the requester's ingress */
		rq->packets = 1000;
		rp->packets = 500;
		rq->ack_samples = 500;
		rq->ack_latency_p50_us = 6 + (dst == 10 ? 6 : 0) + 0.05 * q;
		rq->ack_latency_p99_us = rq->ack_latency_p50_us * 1.3;
		nf += 2;
	}
	assert_int_equal(localize(flows, nf, NULL, NULL, &f, &n), 0);
	assert_true(n >= 1);
	assert_int_equal(f[0].kind, FINDING_SLOW);
	assert_int_equal(f[0].subject_kind, SUBJECT_HOST_LINK);
	assert_string_equal(f[0].subject, "198.18.0.20");
	assert_string_equal(f[0].direction, "198.18.0.20 -> fabric");
	findings_free(f, n);
}

static void test_empty_and_bad_args(void **state)
{
	struct finding *f = (void *)1;
	size_t n = 7;

	assert_int_equal(localize(NULL, 0, NULL, NULL, &f, &n), 0);
	assert_int_equal(n, 0);
	findings_free(f, n);
	assert_int_equal(localize(NULL, 3, NULL, NULL, &f, &n), -EINVAL);
}

/* --- topology --- */

static int parse_links(struct topology *t, const char *text, char *err, size_t len)
{
	memset(t, 0, sizeof(*t));
	return topology_parse_links(t, text, strlen(text), "links.csv", err, len);
}

static void test_topology_parse_and_ecmp(void **state)
{
	struct topology t;
	char err[256];
	struct topo_hop *hops;
	size_t n_paths, len;

	fx_build(&fx, 16, 4, 2, 8, 3, NULL);
	assert_int_equal(fx_topology(&fx, &t, true), 0);
	assert_int_equal(t.n_links, 16 + 8);
	assert_int_equal(t.n_nodes, 16 + 4 + 2);
	assert_int_equal(t.n_paths, 16);
	/* 198.18.0.10 (leaf0) to 198.18.0.25 (leaf3): one path per spine, 4 hops. */
	uint8_t a[16], b[16];
	topo_parse_addr("198.18.0.10", a);
	topo_parse_addr("198.18.0.25", b);
	assert_int_equal(topology_shortest_paths(&t, (uint32_t)topology_host(&t, a),
						 (uint32_t)topology_host(&t, b), 64, &hops,
						 &n_paths, &len),
			 0);
	assert_int_equal(n_paths, 2);
	assert_int_equal(len, 4);
	assert_string_equal(t.links[hops[0].link].name, "198.18.0.10-leaf0");
	assert_true(hops[0].a_to_b);
	assert_false(hops[3].a_to_b);
	free(hops);
	/* Same leaf: one path, 2 hops, never through another host. */
	topo_parse_addr("198.18.0.11", b);
	assert_int_equal(topology_shortest_paths(&t, (uint32_t)topology_host(&t, a),
						 (uint32_t)topology_host(&t, b), 64, &hops,
						 &n_paths, &len),
			 0);
	assert_int_equal(n_paths, 1);
	assert_int_equal(len, 2);
	free(hops);
	topology_free(&t);

	/* Comments, blank lines, CRLF, spaces around fields, IPv6 hosts. */
	assert_int_equal(parse_links(&t,
				     "# fabric\r\nlink,a,b\r\n\r\nh1-leaf0, fd99::10 ,leaf0\r\n"
				     "leaf0-spine0,leaf0,spine0\n",
				     err, sizeof(err)),
			 0);
	assert_int_equal(t.n_links, 2);
	assert_true(t.nodes[t.links[0].a].is_host);
	assert_false(t.nodes[t.links[1].b].is_host);
	topology_free(&t);
}

static void expect_links_error(const char *text, const char *want)
{
	struct topology t;
	char err[256] = "";

	assert_int_not_equal(parse_links(&t, text, err, sizeof(err)), 0);
	print_message("  error: %s\n", err);
	if (!strstr(err, want))
		fail_msg("error '%s' does not contain '%s'", err, want);
	assert_null(strchr(err, '\n'));
	topology_free(&t);
}

static void test_topology_errors(void **state)
{
	struct topology t;
	char err[256] = "";

	expect_links_error("", "links.csv:0: empty file");
	expect_links_error("name,x,y\n", "links.csv:1: expected the header 'link,a,b'");
	expect_links_error("link,a,b\nl1,h,s\nl2,s\n", "links.csv:3: 2 fields, expected 3");
	expect_links_error("link,a,b\n#c\nl1,h,s\nl1,s,t\n", "links.csv:4: link 'l1' is defined twice");
	expect_links_error("link,a,b\nl1,s,s\n", "links.csv:2: bad link");
	expect_links_error("link,a,b\nl1,\"s,t\n", "links.csv:2: malformed CSV");

	const char *links = "link,a,b\nh1,198.18.0.10,leaf0\nh2,198.18.0.11,leaf0\n"
			    "up,leaf0,spine0\n";
	struct {
		const char *paths, *want;
	} cases[] = {
		{ "src,dst,udp_sport,links...\n198.18.0.10,198.18.0.11,5,h1,h2\n"
		  "198.18.0.10,198.18.0.11,x,h1,h2\n",
		  "paths.csv:3: udp_sport 'x' is not a number" },
		{ "src,dst,udp_sport,links...\n198.18.0.10,198.18.0.11,5,h1,h9\n",
		  "paths.csv:2: link 'h9' is not in links.csv" },
		{ "src,dst,udp_sport,links...\n198.18.0.10,198.18.0.11,5,h2,h1\n",
		  "paths.csv:2: link 'h2' does not touch '198.18.0.10'" },
		{ "src,dst,udp_sport,links...\n198.18.0.10,198.18.0.11,5,h1,up\n",
		  "paths.csv:2: path ends at 'spine0'" },
		{ "src,dst,udp_sport,links...\nnope,198.18.0.11,5,h1\n",
		  "paths.csv:2: 'nope' is not an IP address" },
		{ "src,dst,udp_sport,links...\n198.18.0.10,198.18.0.11,5,h1,h2\n"
		  "198.18.0.10,198.18.0.11,5,h1,h2\n",
		  "paths.csv:3: path 198.18.0.10 -> 198.18.0.11 udp_sport 5 is listed twice" },
		{ "src,dst,udp_sport,links...\n198.18.0.10,198.18.0.11,5\n",
		  "paths.csv:2: 3 fields" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(parse_links(&t, links, err, sizeof(err)), 0);
		assert_int_not_equal(topology_parse_paths(&t, cases[i].paths, strlen(cases[i].paths),
							  "paths.csv", err, sizeof(err)),
				     0);
		print_message("  error: %s\n", err);
		if (!strstr(err, cases[i].want))
			fail_msg("error '%s' does not contain '%s'", err, cases[i].want);
		topology_free(&t);
	}
	memset(&t, 0, sizeof(t));
	assert_int_not_equal(topology_load(&t, "/nonexistent/links.csv", NULL, err, sizeof(err)), 0);
	assert_non_null(strstr(err, "/nonexistent/links.csv: cannot open: No such file"));
	topology_free(&t);
}

/* Issue #22: the same links.csv with LF, CRLF or CR-only line endings, with or without a
 * UTF-8 byte-order mark, is the same topology (CR-only was an empty one, a BOM an error). */
static void test_topology_line_endings_and_bom(void **state)
{
	static const char *const eols[] = { "\n", "\r\n", "\r" };
	static const char *const boms[] = { "", "\xef\xbb\xbf" };
	const char *rows[] = { "link,a,b", "# comment", "h1,198.18.0.10,leaf0", "",
			       "h2,198.18.0.11,leaf0", "up,leaf0,spine0" };
	const char *paths[] = { "src,dst,udp_sport,links", "198.18.0.10,198.18.0.11,5,h1,h2" };
	char text[512], ptext[256], err[256];
	struct topology t;

	for (size_t e = 0; e < ARRAY_SIZE(eols); e++) {
		for (size_t b = 0; b < ARRAY_SIZE(boms); b++) {
			snprintf(text, sizeof(text), "%s", boms[b]);
			for (size_t i = 0; i < ARRAY_SIZE(rows); i++)
				snprintf(text + strlen(text), sizeof(text) - strlen(text), "%s%s",
					 rows[i], eols[e]);
			snprintf(ptext, sizeof(ptext), "%s%s%s%s%s", boms[b], paths[0], eols[e],
				 paths[1], eols[e]);
			err[0] = '\0';
			if (parse_links(&t, text, err, sizeof(err)))
				fail_msg("eol %zu bom %zu: %s", e, b, err);
			assert_int_equal(t.n_links, 3);
			assert_int_equal(t.n_nodes, 4);
			assert_string_equal(t.links[2].name, "up");
			assert_string_equal(t.nodes[t.links[2].b].name, "spine0");
			if (topology_parse_paths(&t, ptext, strlen(ptext), "paths.csv", err,
						 sizeof(err)))
				fail_msg("eol %zu bom %zu: %s", e, b, err);
			assert_int_equal(t.n_paths, 1);
			assert_int_equal(t.paths[0].n_hops, 2);
			topology_free(&t);
		}
	}
	/* An error names the right line whatever the line endings. */
	expect_links_error("link,a,b\rl1,h,s\rl2,s\r", "links.csv:3: 2 fields, expected 3");
	expect_links_error("\xef\xbb\xbflink,a,b\r\n\r\nl1,s,s\r\n", "links.csv:3: bad link");
	/* A header and nothing else is a topology of no links: said, not taken silently. */
	expect_links_error("link,a,b\r# nothing\r", "links.csv: no links after the header");
}

/* CPU time of this thread: other processes' load does not count. */
static double thread_cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

enum quadratic_case { QUAD_LINKS, QUAD_PATHS, QUAD_SPACES };

/* One parse of an input of size n for the case; returns its CPU seconds, checks the result. */
static double parse_input_cpu(enum quadratic_case which, size_t n)
{
	size_t cap = (which == QUAD_SPACES ? 2 * n : 64 * n) + 128, len = 0;
	char *text = malloc(cap), err[256] = "";
	const char *few = "link,a,b\nh1,198.18.0.10,leaf0\nh2,198.18.0.11,leaf0\n";
	struct topology t;
	double t0, spent;

	assert_non_null(text);
	memset(&t, 0, sizeof(t));
	if (which == QUAD_LINKS) {
		len = (size_t)snprintf(text, cap, "link,a,b\n");
		for (size_t i = 0; i < n; i++)
			len += (size_t)snprintf(text + len, cap - len, "l%zu,10.%zu.%zu.%zu,sw%zu\n", i,
						i >> 16, (i >> 8) & 255, i & 255, i);
	} else if (which == QUAD_PATHS) {
		/* Paths need their links: a small links.csv, many paths over one host link pair. */
		assert_int_equal(topology_parse_links(&t, few, strlen(few), "links.csv", err, sizeof(err)), 0);
		len = (size_t)snprintf(text, cap, "src,dst,udp_sport,links\n");
		for (size_t i = 0; i < n; i++)
			len += (size_t)snprintf(text + len, cap - len, "198.18.0.10,198.18.0.11,%zu,h1,h2\n", i);
	} else {
		/* One quoted field behind n spaces, and one holding them. */
		len = (size_t)snprintf(text, 64, "link,a,b\nl1,");
		memset(text + len, ' ', n);
		len += n;
		len += (size_t)snprintf(text + len, 64, "\"s1\",\"");
		memset(text + len, ' ', n);
		len += n;
		len += (size_t)snprintf(text + len, 64, "s2\"\n");
	}
	t0 = thread_cpu_s();
	if (which == QUAD_PATHS ? topology_parse_paths(&t, text, len, "paths.csv", err, sizeof(err)) :
				  topology_parse_links(&t, text, len, "links.csv", err, sizeof(err)))
		fail_msg("%s", err);
	spent = thread_cpu_s() - t0;
	if (which == QUAD_LINKS)
		assert_int_equal(t.n_links, n);
	else if (which == QUAD_PATHS)
		assert_int_equal(t.n_paths, n);
	else {
		assert_int_equal(t.n_links, 1);
		assert_string_equal(t.nodes[t.links[0].b].name, "s2");
	}
	topology_free(&t);
	free(text);
	return spent;
}

/* Issue #22: input handling is linear. 60k links and 60k paths took minutes (every row
 * searched every name before it); a quoted field behind 600k spaces took seconds (the
 * spaces were trimmed one memmove at a time). Checked by growth, not by a clock bound: 8x
 * the input costs ~8x the CPU in a linear reader and 64x in a quadratic one; the bar is 24x,
 * each size's best of three runs. */
static void test_topology_quadratic_input(void **state)
{
	static const struct {
		enum quadratic_case which;
		size_t n;
		const char *what;
	} cases[] = {
		{ QUAD_LINKS, 60000, "links" },
		{ QUAD_PATHS, 65536, "paths" },
		{ QUAD_SPACES, 4800000, "spaces" },
	};

	for (size_t c = 0; c < ARRAY_SIZE(cases); c++) {
		double small = 1e9, big = 1e9;

		for (int round = 0; round < 3; round++) {
			double s = parse_input_cpu(cases[c].which, cases[c].n / 8);
			double b = parse_input_cpu(cases[c].which, cases[c].n);

			small = s < small ? s : small;
			big = b < big ? b : big;
		}
		print_message("  %s: %zu in %.4f s CPU, %zu in %.4f s (%.1fx for 8x)\n", cases[c].what,
			      cases[c].n / 8, small, cases[c].n, big, big / (small > 1e-6 ? small : 1e-6));
		assert_true(big < 24 * (small > 1e-3 ? small : 1e-3));
	}
}

static void test_robust_stats(void **state)
{
	double v[] = { 5, 1, 3, 100, 2 }, s[5];
	struct change_point cp;
	double series[] = { 1, 1.1, 0.9, 1, 5, 5.2, 4.9 };

	assert_true(fabs(rs_median(v, 5) - 3) < 1e-9);
	double w[] = { 5, 1, 3, 100, 2 };
	assert_true(fabs(rs_mad(w, 5, 3, s) - 2) < 1e-9); /* |x-3| = 2,2,0,97,1 -> 2 */
	assert_int_equal(rs_change_point(series, 7, 1, &cp), 0);
	assert_int_equal(cp.split, 4);
	assert_true(fabs(cp.mean_before - 1) < 1e-9);
	assert_int_equal(rs_change_point(series, 1, 1, &cp), -1);
	/* The q-quantile is the sorted v[floor(q * n)]: 1 2 3 5 100. */
	double q[] = { 5, 1, 3, 100, 2 };
	assert_true(fabs(rs_quantile(q, 5, 0.25) - 2) < 1e-9);
	assert_true(fabs(rs_quantile(q, 5, 0.0) - 1) < 1e-9);
	assert_true(fabs(rs_quantile(q, 5, 0.99) - 100) < 1e-9);
	assert_true(rs_quantile(q, 0, 0.5) == 0);
}

static int cmp_double_test(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* The selection-based median and quantile give what sorting gives, on every size from 1
 * to 64 and on values with many ties (quantized latencies), sorted, reversed and random. */
static void test_robust_stats_selection(void **state)
{
	double v[64], sorted[64], q[64];
	unsigned seed = 12345;

	for (int shape = 0; shape < 4; shape++) {
		for (size_t n = 1; n <= 64; n++) {
			for (int trial = 0; trial < 20; trial++) {
				for (size_t i = 0; i < n; i++) {
					seed = seed * 1103515245u + 12345u;
					double r = (double)(seed >> 16 & 0x7fff);
					v[i] = shape == 0 ? r : shape == 1 ? (double)((int)r % 4)
						: shape == 2 ? (double)i : (double)(n - i);
				}
				memcpy(sorted, v, n * sizeof(*v));
				qsort(sorted, n, sizeof(*sorted), cmp_double_test);
				double want = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
				memcpy(q, v, n * sizeof(*v));
				assert_true(rs_median(q, n) == want);
				for (double f = 0; f < 1; f += 0.05) {
					size_t i = (size_t)(f * (double)n);
					memcpy(q, v, n * sizeof(*v));
					assert_true(rs_quantile(q, n, f) == sorted[i < n ? i : n - 1]);
				}
				memcpy(q, v, n * sizeof(*v));
				rs_sort(q, n);
				assert_memory_equal(q, sorted, n * sizeof(*q));
			}
		}
	}
}

static void test_names(void **state)
{
	assert_string_equal(finding_kind_name(FINDING_CONGESTED), "congested");
	assert_string_equal(finding_kind_name((enum finding_kind)42), "unknown");
	assert_string_equal(finding_subject_kind_name(SUBJECT_HOST_LINK), "host_link");
}

/*
 * A slow link in a quiet fabric whose flows are CE-marked a few times their peers': with
 * its round trips' floor measured at its peers' (their quickest windows 1 us, the link's
 * 1 us + extra_ns), the floor did not move and the level must not depend on whether the
 * link's floor ties its peers' exactly or stands a hair above (quiet_queueing()). The
 * level of the slow or congested finding on the link, -1 when there is none.
 */
static int quiet_floor_level(uint32_t extra_ns, double floor_min_z)
{
	struct fx_fault fault = { .kind = FX_SLOW, .extra_us = 20 };
	struct localize_config cfg;
	struct topology topo;
	struct finding *f;
	size_t n;
	long link;
	int level = -1, k = 0;

	snprintf(fault.link, sizeof(fault.link), "leaf3-spine0");
	fx_build(&fx, 16, 4, 2, 96, 7, &fault);
	assert_int_equal(fx_topology(&fx, &topo, true), 0);
	link = topology_link_by_name(&topo, "leaf3-spine0");
	assert_true(link >= 0);
	for (size_t i = 0; i < fx.n_flows; i++) {
		struct flow_stats *fl = &fx.flows[i];
		bool crosses;

		if (fl->role != FLOW_ROLE_REQUESTER)
			continue;
		crosses = flow_crosses(&topo, fl, link);
		/* the quickest window of each half: every class's floor 1 us */
		fx.windows[i][0].ack_latency_p50_ns = 1000 + (crosses ? extra_ns : 0);
		fx.windows[i][FX_WINDOWS - 1].ack_latency_p50_ns = 1000 + (crosses ? extra_ns : 0);
		/* peers marked 0.05% (not busy), the link's flows 0.3% */
		fl->ecn_ce = crosses ? 3 * fl->packets / 1000 : (k++ % 2) * fl->packets / 1000;
	}
	localize_config_default(&cfg);
	cfg.floor_min_z = floor_min_z;
	assert_int_equal(localize(fx.flows, fx.n_flows, &topo, &cfg, &f, &n), 0);
	topology_free(&topo);
	for (size_t i = 0; i < n; i++) {
		print_message("  #%d %s %s %s '%s'\n", f[i].rank, finding_level_name(f[i].level),
			      finding_kind_name(f[i].kind), f[i].subject, f[i].severity_text);
		if (!strcmp(f[i].subject, "leaf3-spine0") &&
		    (f[i].kind == FINDING_SLOW || f[i].kind == FINDING_CONGESTED)) {
			level = (int)f[i].level;
			print_message("    %s\n", f[i].evidence);
		}
	}
	findings_free(f, n);
	return level;
}

static void test_quiet_floor_tie(void **state)
{
	int tie = quiet_floor_level(0, 4), above = quiet_floor_level(100, 4);

	assert_int_equal(above, FINDING_NOTICE);
	assert_int_equal(tie, above);
}

/*
 * floor_min_z 0 turns the floor rules off: a marked slow link in a quiet fabric is then
 * judged by its latency ratio alone (3x, over quiet_max_ratio: an alert), not called a
 * queue because a floor that cannot move did not.
 */
static void test_quiet_floor_off(void **state)
{
	assert_int_equal(quiet_floor_level(100, 0), FINDING_ALERT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_healthy_no_finding),
		cmocka_unit_test(test_slow_fabric_link_with_paths),
		cmocka_unit_test(test_slow_link_ecmp_spread),
		cmocka_unit_test(test_ecmp_separation),
		cmocka_unit_test(test_ecmp_tie_names_set),
		cmocka_unit_test(test_fabric_fault_without_topology),
		cmocka_unit_test(test_lossy_link_direction),
		cmocka_unit_test(test_congested_link),
		cmocka_unit_test(test_congested_level),
		cmocka_unit_test(test_host_link_without_topology),
		cmocka_unit_test(test_path_only),
		cmocka_unit_test(test_host_rnr),
		cmocka_unit_test(test_lossy_level),
		cmocka_unit_test(test_floor_slow_second_alert),
		cmocka_unit_test(test_floor_tie_stays_congested),
		cmocka_unit_test(test_quiet_floor_tie),
		cmocka_unit_test(test_quiet_floor_off),
		cmocka_unit_test(test_sender_timer),
		cmocka_unit_test(test_host_turnaround),
		cmocka_unit_test(test_completion_message_lengths),
		cmocka_unit_test(test_turnaround_pair_not_set),
		cmocka_unit_test(test_onset),
		cmocka_unit_test(test_two_vantages_split_host),
		cmocka_unit_test(test_ingress_vantages_direction),
		cmocka_unit_test(test_empty_and_bad_args),
		cmocka_unit_test(test_topology_parse_and_ecmp),
		cmocka_unit_test(test_topology_errors),
		cmocka_unit_test(test_topology_line_endings_and_bom),
		cmocka_unit_test(test_topology_quadratic_input),
		cmocka_unit_test(test_robust_stats),
		cmocka_unit_test(test_robust_stats_selection),
		cmocka_unit_test(test_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
