/* localize_evidence.c: a candidate as a finding: its subject, its text, its evidence JSON. */
#include "lib/localize/localize_internal.h"

#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/localize/hop_groups.h"
#include "lib/util/text_buf.h"
#include "lib/util/util.h"

/* JSON numbers: finite, compact. */
static double jnum(double x)
{
	return isfinite(x) ? x : 0;
}

/* ------------------------------------------------------------------ findings */

const char *loc_signal_name(enum signal s)
{
	static const char *const names[] = { "latency",	     "latency_shift", "completion",
					      "loss",	     "ecn",	      "turnaround" };
	return s < N_SIGNALS ? names[s] : "rnr";
}

static void severity_text(const struct candidate *cand, char *buf, size_t len)
{
	switch (cand->signal) {
	case SIG_LATENCY:
		if (cand->own_past)
			snprintf(buf, len, "latency %.2fx its first windows (+%.1f us median RTT; too few peers)",
				 cand->severity, cand->effect_us);
		else if (cand->kind == FINDING_HOST) /* responder_late() */
			snprintf(buf, len, "answers +%.1f us late (%.3gx healthy peers' latency; p99 %.1fx)",
				 cand->effect_us, cand->severity, cand->p99_ratio);
		else
			snprintf(buf, len, "%.3gx healthy peers' latency (+%.1f us median RTT; p99 %.1fx)",
				 cand->severity, cand->effect_us, cand->p99_ratio);
		break;
	case SIG_COMPLETION:
		snprintf(buf, len,
			 "%.3gx healthy peers' message completion time (+%.1f us median; p99 %.1fx)",
			 cand->severity, cand->effect_us, cand->p99_ratio);
		break;
	case SIG_SHIFT:
		snprintf(buf, len, "latency %.2fx its own past (+%.1f us RTT from onset)",
			 cand->severity, cand->effect_us);
		break;
	case SIG_TURNAROUND:
		snprintf(buf, len, "responder turnaround +%.1f us (%.2fx; p99 %.1fx healthy peers)",
			 cand->effect_us, cand->severity, cand->p99_ratio);
		break;
	case SIG_LOSS:
		if (cand->kind == FINDING_HOST)
			snprintf(buf, len, "%.0f timeouts and no packet missing at the responder: "
				 "the sender's retransmit timer (%.3g%% of packets)",
				 cand->in_events, 100 * cand->severity);
		else
			snprintf(buf, len, "%.3g%% of packets lost (%.0f loss events)",
				 100 * cand->severity, cand->in_events);
		break;
	case SIG_ECN:
		snprintf(buf, len, "%.3g%% of packets ECN-marked or answered by CNP",
			 100 * cand->severity);
		break;
	default:
		snprintf(buf, len, "%.0f RNR NAKs (receiver not ready), %.3g per packet",
			 cand->in_events, cand->in_rate);
		break;
	}
}

/*
 * A subject with more than one kind of evidence says all of it in one line: "slow and
 * lossy: 40x healthy peers' latency (+242 us median RTT), 0.99% of packets lost".
 */
static void headline_all(const struct candidate *cand, const struct candidate *merged,
			 size_t n_merged, char *buf, size_t len)
{
	static const enum finding_kind order[] = { FINDING_SLOW, FINDING_LOSSY, FINDING_CONGESTED };
	const struct candidate *pick[ARRAY_SIZE(order)] = { 0 };
	char text[ARRAY_SIZE(order)][96], kinds[64] = "", rest[192] = "";
	size_t n = 0;

	if (cand->kind == FINDING_HOST)
		return;
	for (size_t k = 0; k < ARRAY_SIZE(order); k++)
		for (size_t i = 0; i < n_merged && !pick[k]; i++)
			if (merged[i].kind == order[k] && merged[i].signal != SIG_SHIFT)
				pick[k] = &merged[i];
	for (size_t k = 0; k < ARRAY_SIZE(order); k++) {
		char *aside;

		if (!pick[k])
			continue;
		severity_text(pick[k], text[n], sizeof(text[n]));
		aside = strstr(text[n], "; p99"); /* one line: the p99 aside stays in the evidence */
		if (aside)
			strcpy(aside, ")");
		n++;
	}
	if (n < 2)
		return;
	/* "slow and lossy", "slow, lossy and congested" */
	for (size_t k = 0, shown = 0; k < ARRAY_SIZE(order); k++) {
		if (!pick[k])
			continue;
		snprintf(kinds + strlen(kinds), sizeof(kinds) - strlen(kinds), "%s%s",
			 !shown ? "" : shown + 1 == n ? " and " : ", ", finding_kind_name(order[k]));
		shown++;
	}
	for (size_t i = 0; i < n; i++)
		snprintf(rest + strlen(rest), sizeof(rest) - strlen(rest), "%s%s", i ? ", " : "", text[i]);
	snprintf(buf, len, "%s: %s", kinds, rest);
}

/*
 * A pick read slow by its host's pooled round trips (loc_pooled_host_slow()) leads with
 * them; the marks or timeouts it was picked by follow.
 */
static void pooled_text(const struct candidate *cand, char *buf, size_t len)
{
	char lead[120], own[100];
	size_t at;
	int w;

	if (cand->pooled_ratio <= 0)
		return;
	snprintf(lead, sizeof(lead), "round trips of the %u connections it %s %.3gx other hosts' "
		 "(+%.1f us median; each too short to judge alone)", cand->pooled_flows,
		 cand->pooled_answers ? "answers" : "starts", cand->pooled_ratio,
		 cand->pooled_excess_us);
	if (cand->signal == SIG_LOSS && cand->pooled_from == FINDING_HOST) /* the timer's */
		snprintf(own, sizeof(own), "%.0f timeouts with no packet missing: its link's queue",
			 cand->in_events);
	else
		severity_text(cand, own, sizeof(own)); /* the marks it was picked by */
	w = snprintf(buf, len, "%s; %s", lead, own);
	at = strlen(lead);
	/* Too long: the pick's own evidence is cut at a clause, never the lead. */
	if (w < 0 || (size_t)w >= len) {
		char *cut = strrchr(buf + at, ',');

		if (cut)
			*cut = 0;
	}
}

static void evidence_flow(struct text_buf *ev, const struct conn *cn, bool first)
{
	char s[INET6_ADDRSTRLEN], d[INET6_ADDRSTRLEN];
	const struct flow_stats *f = cn->req ? cn->req : cn->resp;

	addr_str(cn->src, s, sizeof(s));
	addr_str(cn->dst, d, sizeof(d));
	text_buf_printf(ev,
			"%s{\"id\":%llu,\"src\":\"%s\",\"dst\":\"%s\",\"dst_qpn\":%u,"
			"\"udp_sport\":%u,\"p50_us\":%.2f,\"p99_us\":%.2f,\"baseline_us\":%.2f,"
			"\"packets\":%.0f,\"loss_events\":%.0f,\"ecn_events\":%.0f,\"rnr_naks\":%.0f}",
			first ? "" : ",", (unsigned long long)f->id, s, d, f->key.dst_qpn,
			cn->sport_fwd, jnum(cn->lat_p50_us), jnum(cn->lat_p99_us),
			jnum(cn->baseline_us), cn->packets, cn->loss_events, cn->ce_events,
			cn->rnr_naks);
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* A set's members' names, sorted, in names[] (pointers into the topology, or into bufs
 * for hosts: loc_pair_sets()). */
static size_t set_names(const struct ctx *c, const struct candidate *cand, const char **names,
			char (*bufs)[TOPO_NAME_MAX])
{
	for (size_t i = 0; i < cand->n_set; i++) {
		loc_var_subject(c, &c->vars[cand->set[i]], bufs[i], sizeof(bufs[i]));
		names[i] = bufs[i];
	}
	qsort(names, cand->n_set, sizeof(*names), cmp_name);
	return cand->n_set;
}

/* "leaf0-spine0 | leaf0-spine1": as many members as fit, the rest counted. */
static void set_subject(const struct ctx *c, const struct candidate *cand, char *buf, size_t len)
{
	const char *names[ARRAY_SIZE(cand->set)];
	char bufs[ARRAY_SIZE(cand->set)][TOPO_NAME_MAX];
	size_t n = set_names(c, cand, names, bufs), used = 0;

	buf[0] = 0;
	for (size_t i = 0; i < n; i++) {
		size_t need = strlen(names[i]) + (i ? 3 : 0);

		if (used + need + 16 >= len && i + 1 < n) {
			snprintf(buf + used, len - used, " | %zu more", n - i);
			return;
		}
		used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? " | " : "", names[i]);
		if (used >= len)
			return;
	}
}

/* What would tell the members of a set apart. */
static const char *set_split_by(const struct ctx *c, const struct candidate *cand)
{
	if (c->vars[cand->var].kind != VAR_LINK)
		return "a mirror vantage or more of their connections";
	if (cand->one_pair_set)
		return "other host pairs' connections across them or another vantage";
	return c->topo->n_paths ? "another vantage" : "--paths or another vantage";
}

/* The headline of a set says it is one of them and what would tell: cut at a clause. */
static void set_text(const struct ctx *c, const struct candidate *cand, char *buf, size_t len)
{
	char tail[128];
	size_t room;

	if (cand->one_pair_set)
		snprintf(tail, sizeof(tail), "; one host pair's loss, on the path of both, %s would "
			 "split them", set_split_by(c, cand));
	else
		snprintf(tail, sizeof(tail), "; %zu %s fit equally, %s would split them", cand->n_set,
			 c->vars[cand->var].kind == VAR_LINK ? "links" : "hosts", set_split_by(c, cand));
	room = len - 1 - strlen(tail);
	if (strlen(buf) > room) {
		buf[room] = 0;
		char *cut = strrchr(buf, ',');
		if (cut)
			*cut = 0;
	}
	snprintf(buf + strlen(buf), len - strlen(buf), "%s", tail);
}

static void evidence_set(const struct ctx *c, const struct candidate *cand, struct text_buf *ev)
{
	const char *names[ARRAY_SIZE(cand->set)];
	char bufs[ARRAY_SIZE(cand->set)][TOPO_NAME_MAX];
	size_t n = set_names(c, cand, names, bufs);

	text_buf_puts(ev, ",\"subjects\":[");
	for (size_t i = 0; i < n; i++) {
		if (i)
			text_buf_puts(ev, ",");
		text_buf_json_string(ev, names[i]);
	}
	text_buf_printf(ev, "],\"set_confidence\":%.3f,\"split_by\":", jnum(cand->set_confidence));
	text_buf_json_string(ev, set_split_by(c, cand));
}

#define FABRIC_HINT "a topology (--topology links.csv) or --paths would name the link"

/*
 * The leaf groups, by hop count (hop_groups.h), of the hosts in the flows' TTLs, and the
 * side of the hurt connections one leaf can hold: *sides (n_groups, malloc'ed) and the
 * mask hop_groups_sides() returns (0: no side, 3: either). g->status says why hosts could
 * not be grouped. Returns 0 or -ENOMEM; free g and *sides either way.
 */
static int fabric_leaves(const struct ctx *c, const bool *hurt, struct hop_groups *g,
			 uint8_t **sides, int *mask)
{
	struct hop_pair *p = malloc((c->n_flows ? c->n_flows : 1) * sizeof(*p));
	size_t n = 0;
	int err;

	memset(g, 0, sizeof(*g));
	*sides = NULL;
	*mask = 0;
	if (!p)
		return -ENOMEM;
	for (size_t i = 0; i < c->n_flows; i++) {
		if (!c->flows[i].ttl_min)
			continue;
		memcpy(p[n].a, c->flows[i].key.src_ip, 16);
		memcpy(p[n].b, c->flows[i].key.dst_ip, 16);
		p[n++].ttl = c->flows[i].ttl_min; /* the most hops this flow's packets showed */
	}
	err = hop_groups_build(p, n, g);
	if (err || g->status != HOP_GROUPS_OK)
		goto out;
	n = 0;
	for (size_t k = 0; k < c->n_conns && n < c->n_flows; k++) {
		if (!hurt[k])
			continue;
		memcpy(p[n].a, c->conns[k].src, 16);
		memcpy(p[n++].b, c->conns[k].dst, 16);
	}
	*sides = calloc(g->n_groups, 1);
	if (!*sides) {
		err = -ENOMEM;
		goto out;
	}
	*mask = hop_groups_sides(g, p, n, *sides);
	err = *mask < 0 ? *mask : 0;
out:
	free(p);
	return err;
}

/* A fabric finding's connections: the latency set as loc_fabric_hurt() finds it, the
 * loss set as its candidate kept it. */
static void fabric_hurt(struct ctx *c, const struct candidate *cand, bool *hurt)
{
	if (cand->signal == SIG_LATENCY) {
		loc_fabric_hurt(c, hurt);
		return;
	}
	memset(hurt, 0, c->n_conns * sizeof(*hurt));
	loc_mark_hurt(cand, hurt, true);
}

/* The fabric finding's text: the leaf the hurt pairs leave when hop counts tell. */
static void fabric_text(struct ctx *c, const struct candidate *cand, bool *hurt, char *buf,
			size_t len)
{
	struct text_buf t = { 0 };
	struct hop_groups g;
	uint8_t *sides;
	int mask;
	char a[48];

	fabric_hurt(c, cand, hurt);
	if (cand->signal == SIG_LOSS)
		text_buf_printf(&t, "%.3g%% of packets lost (%.0f loss events; other flows %.3g%%)",
				100 * cand->severity, cand->in_events, 100 * cand->out_rate);
	else if (cand->signal == SIG_ECN)
		text_buf_printf(&t, "%.3g%% of packets ECN-marked or answered by CNP (other flows %.3g%%)",
				100 * cand->severity, 100 * cand->out_rate);
	else
		text_buf_printf(&t, "latency %.3gx healthy peers (+%.1f us median RTT)",
				cand->severity, cand->effect_us);
	if (fabric_leaves(c, hurt, &g, &sides, &mask) || mask <= 0) {
		text_buf_puts(&t, " on flows that share no host; " FABRIC_HINT);
	} else if (mask == 3) {
		/* Either side may be the one leaf: evidence.leaf_groups lists both. */
		text_buf_puts(&t, "; hurt pairs leave one of two host sets (evidence.leaf_groups), "
				  "by hop count; --topology or --paths would name the link");
	} else {
		/* The other side spans leaves: a single cable's leaf is this side. */
		hop_groups_side_members(&g, sides, (uint8_t)mask, a, sizeof(a));
		text_buf_printf(&t, "; hurt pairs leave leaf {%s} (by hop count): one of its "
				    "uplinks; --topology or --paths names it", a);
	}
	hop_groups_free(&g);
	free(sides);
	/* Cut short if long: the evidence lists the groups in full. */
	buf[0] = 0;
	if (!t.failed && t.data && len) {
		size_t n = t.len < len ? t.len : len - 1;

		memcpy(buf, t.data, n);
		buf[n] = 0;
	}
	text_buf_free(&t);
}

/* The leaf groups of a fabric finding's hurt connections (hop counts), and which they leave. */
static void evidence_leaves(const struct ctx *c, const bool *hurt, struct text_buf *ev)
{
	struct hop_groups g;
	uint8_t *sides;
	int mask;
	char members[512];
	size_t shown = 0;

	if (fabric_leaves(c, hurt, &g, &sides, &mask))
		goto out;
	text_buf_puts(ev, ",\"leaf_groups\":{\"by\":\"hop count\",\"status\":");
	text_buf_json_string(ev, hop_groups_status_text(g.status));
	text_buf_printf(ev, ",\"hops\":[%u,%u],\"groups\":[", g.min_hops, g.max_hops);
	for (uint32_t grp = 0; grp < g.n_groups && shown < 32; grp++) {
		size_t n_hurt = 0;

		for (size_t k = 0; k < c->n_conns; k++)
			n_hurt += hurt[k] && (hop_groups_find(&g, c->conns[k].src) == (long)grp ||
					      hop_groups_find(&g, c->conns[k].dst) == (long)grp);
		if (!n_hurt)
			continue;
		hop_groups_members(&g, grp, members, sizeof(members));
		text_buf_puts(ev, shown++ ? ",{\"hosts\":" : "{\"hosts\":");
		text_buf_json_string(ev, members);
		text_buf_printf(ev, ",\"n_hosts\":%u,\"hurt_qps\":%zu,\"side\":%u}",
				hop_groups_size(&g, grp), n_hurt, sides ? sides[grp] : 0);
	}
	/* The side(s) one leaf can hold: every hurt pair leaves it. */
	text_buf_puts(ev, "],\"hurt_pairs_leave\":[");
	for (int e = 1; e <= 2 && mask > 0; e++) {
		if (!(mask & e))
			continue;
		hop_groups_side_members(&g, sides, (uint8_t)e, members, sizeof(members));
		if (e == 2 && (mask & 1))
			text_buf_puts(ev, ",");
		text_buf_json_string(ev, members);
	}
	text_buf_puts(ev, "]}");
out:
	hop_groups_free(&g);
	free(sides);
}

/* A fabric finding: every hurt host pair ("a -> b", requester first, up to 32), the leaf
 * groups they run between when hop counts tell, and what would name the link. */
static void evidence_fabric(const struct ctx *c, const bool *hurt, struct text_buf *ev)
{
	size_t shown = 0;

	text_buf_puts(ev, ",\"host_pairs\":[");
	for (size_t k = 0; k < c->n_conns && shown < 32; k++) {
		const struct conn *cn = &c->conns[k];
		char s[INET6_ADDRSTRLEN], d[INET6_ADDRSTRLEN], pair[2 * INET6_ADDRSTRLEN + 8];
		bool seen = false;

		if (!hurt[k])
			continue;
		for (size_t j = 0; j < k && !seen; j++)
			seen = hurt[j] && !memcmp(c->conns[j].src, cn->src, 16) &&
			       !memcmp(c->conns[j].dst, cn->dst, 16);
		if (seen)
			continue;
		addr_str(cn->src, s, sizeof(s));
		addr_str(cn->dst, d, sizeof(d));
		snprintf(pair, sizeof(pair), "%s -> %s", s, d);
		if (shown++)
			text_buf_puts(ev, ",");
		text_buf_json_string(ev, pair);
	}
	text_buf_puts(ev, "]");
	evidence_leaves(c, hurt, ev);
	text_buf_puts(ev, ",\"name_it_with\":");
	text_buf_json_string(ev, FABRIC_HINT);
}

/*
 * The evidence of a finding as one JSON object: the numbers behind the verdict and the
 * connections it hurts. Names (the runner-up's) go through the one JSON string escaper.
 */
static void evidence_json(struct ctx *c, const struct candidate *cand,
			  const struct candidate *merged, size_t n_merged, bool *hurt,
			  struct text_buf *ev)
{
	const struct var *v = &c->vars[cand->var];
	struct candidate tmp = *cand;
	size_t shown = 0;

	text_buf_printf(ev, "{\"signal\":\"%s\",\"model\":\"%s\",\"effect\":%.6g,\"z\":%.3g,"
			    "\"strength\":%.3f,\"specificity\":%.3f",
			loc_signal_name(cand->signal),
			!c->topo ? "hosts" : c->topo->n_paths ? "paths+ecmp" : "ecmp",
			jnum(cand->signal == SIG_LOSS || cand->signal == SIG_ECN || cand->signal >= N_SIGNALS ?
				     cand->effect :
				     cand->effect_us),
			jnum(cand->z), cand->strength, cand->specificity);
	if (cand->signal == SIG_LATENCY || cand->signal == SIG_SHIFT ||
	    cand->signal == SIG_COMPLETION || cand->signal == SIG_TURNAROUND)
		text_buf_printf(ev, ",\"baseline_us\":%.3f,\"noise_sigma_us\":%.3f,"
				    "\"hurt_p99_us\":%.3f,\"peer_p99_us\":%.3f",
				jnum(cand->baseline_us), jnum(cand->sigma_us), jnum(cand->hurt_p99_us),
				jnum(cand->peer_p99_us));
	else
		text_buf_printf(ev, ",\"events\":%.0f,\"packets\":%.0f,\"rate\":%.6g,"
				    "\"rate_elsewhere\":%.6g",
				cand->in_events, cand->in_packets, jnum(cand->in_rate),
				jnum(cand->out_rate));
	text_buf_printf(ev, ",\"level\":\"%s\",\"load_ratio\":%.3f,\"peer_ce_rate\":%.4g",
			finding_level_name(cand->level), jnum(cand->load_ratio),
			jnum(cand->peer_ce_rate));
	if (cand->late_load_ratio > 0)
		text_buf_printf(ev, ",\"late_load_ratio\":%.3f", jnum(cand->late_load_ratio));
	if (cand->load_peers)
		text_buf_printf(ev, ",\"load_peers\":%u,\"load_peer_marks\":%.3f", cand->load_peers,
				jnum(cand->load_peer_marks));
	if (cand->flows_crossing)
		text_buf_printf(ev, ",\"flows_crossing\":%u", cand->flows_crossing);
	if (cand->hurt_ce_rate >= 0)
		text_buf_printf(ev, ",\"hurt_ce_rate\":%.4g,\"hurt_ce_z\":%.2f",
				jnum(cand->hurt_ce_rate), jnum(cand->hurt_ce_z));
	if (cand->hurt_ce_rate >= 0 && cand->signal == SIG_ECN)
		text_buf_printf(ev, ",\"hurt_ce_way_z\":[%.2f,%.2f],\"hurt_ce_way_packets\":[%.0f,%.0f]",
				jnum(cand->hurt_ce_way_z[0]), jnum(cand->hurt_ce_way_z[1]),
				cand->hurt_ce_way_packets[0], cand->hurt_ce_way_packets[1]);
	if (cand->loss_dispersion >= 0)
		text_buf_printf(ev, ",\"%s_dispersion\":%.3g", cand->signal == SIG_ECN ? "marks" : "loss",
				jnum(cand->loss_dispersion));
	if ((cand->signal == SIG_LOSS || cand->signal == SIG_ECN) && cand->loss_clean_expected >= 0)
		text_buf_printf(ev, ",\"clean_expected_events\":%.3g", jnum(cand->loss_clean_expected));
	if (cand->outlier_ratio > 0)
		text_buf_printf(ev, ",\"peer_outlier_ratio\":%.3f,\"peer_outlier_z\":%.3f,"
				"\"peer_outlier_lead\":%.3f", jnum(cand->outlier_ratio),
				jnum(cand->outlier_z), jnum(cand->outlier_lead));
	if (cand->mark_ratio > 0)
		text_buf_printf(ev, ",\"mark_outlier_ratio\":%.3f,\"mark_outlier_z\":%.3f,"
				"\"mark_lead\":%.3f", jnum(cand->mark_ratio), jnum(cand->mark_z),
				jnum(cand->mark_lead));
	if (cand->marks_floor_known)
		text_buf_printf(ev, ",\"marks_floor\":%.4f,\"marks_floor_lead\":%.3f",
				jnum(cand->marks_floor), jnum(cand->marks_floor_lead));
	if (cand->stall_known)
		text_buf_printf(ev, ",\"stall\":%.3f,\"stall_lead\":%.3f", jnum(cand->stall),
				jnum(cand->stall_lead));
	if (cand->lat_ratio > 0)
		text_buf_printf(ev, ",\"latency_outlier_ratio\":%.3f,\"latency_outlier_z\":%.3f,"
				"\"latency_excess_us\":%.2f", jnum(cand->lat_ratio), jnum(cand->lat_z),
				jnum(cand->lat_excess_us));
	if (cand->floor_z != 0)
		text_buf_printf(ev, ",\"floor_excess_us\":%.2f,\"floor_z\":%.3f",
				jnum(cand->floor_excess_us), jnum(cand->floor_z));
	/* A completion pick under slow_min_ratio stood by its floor: say so, with the figures. */
	if (cand->floor_step)
		text_buf_printf(ev, ",\"step_floor_us\":%.2f,\"step_floor_z\":%.3f",
				jnum(cand->step_floor_us), jnum(cand->step_floor_z));
	if (cand->queue_share_known)
		text_buf_printf(ev, ",\"wait_queue_share\":%.3f", jnum(cand->queue_share));
	if (cand->pooled_ratio > 0)
		text_buf_printf(ev, ",\"pooled_latency\":{\"flows\":\"%s\",\"connections\":%u,"
				    "\"ratio\":%.3f,\"excess_us\":%.2f,\"z\":%.3g}",
				cand->pooled_answers ? "answered" : "started", cand->pooled_flows,
				jnum(cand->pooled_ratio), jnum(cand->pooled_excess_us),
				jnum(cand->pooled_z));
	if (cand->kind_why) {
		text_buf_puts(ev, ",\"kind_why\":");
		text_buf_json_string(ev, cand->kind_why);
	}
	if (cand->notice_why) {
		text_buf_puts(ev, ",\"notice_why\":");
		text_buf_json_string(ev, cand->notice_why);
	}
	text_buf_printf(ev, ",\"onset\":\"%s\"",
			cand->onset_change_point ? "change_point" : "first_evidence");
	if (cand->n_set)
		evidence_set(c, cand, ev);
	if (cand->alt_subject[0]) {
		text_buf_puts(ev, ",\"runner_up\":{\"subject\":");
		text_buf_json_string(ev, cand->alt_subject);
		text_buf_printf(ev, ",\"score_ratio\":%.3f}", cand->alt_score_ratio);
	}
	text_buf_puts(ev, ",\"also\":[");
	for (size_t i = 0; i < n_merged; i++)
		text_buf_printf(ev, "%s{\"signal\":\"%s\",\"kind\":\"%s\",\"confidence\":%.3f}",
				i ? "," : "", loc_signal_name(merged[i].signal),
				finding_kind_name(merged[i].kind), merged[i].confidence);
	text_buf_puts(ev, "],\"flows\":[");
	/* Recompute which connections this pick hurts, to list them. */
	if (v->kind == VAR_FABRIC) {
		fabric_hurt(c, cand, hurt);
	} else if (cand->signal < N_SIGNALS) {
		loc_judge(c, &tmp, cand->resid, hurt);
	} else {
		for (size_t k = 0; k < c->n_conns; k++)
			hurt[k] = c->conns[k].rnr_naks > 0 && !memcmp(c->conns[k].dst, v->a, 16);
	}
	for (size_t k = 0; k < c->n_conns && shown < 16; k++)
		if (hurt[k])
			evidence_flow(ev, &c->conns[k], shown++ == 0);
	text_buf_puts(ev, "]");
	if (v->kind == VAR_FABRIC)
		evidence_fabric(c, hurt, ev);
	text_buf_puts(ev, "}");
}

int loc_make_finding(struct ctx *c, const struct candidate *cand,
		     const struct candidate *merged, size_t n_merged, struct finding *f)
{
	const struct var *v = &c->vars[cand->var];
	struct text_buf ev = { 0 };
	bool *hurt = calloc(c->n_conns ? c->n_conns : 1, sizeof(*hurt));

	if (!hurt)
		return -ENOMEM;
	memset(f, 0, sizeof(*f));
	f->kind = cand->kind;
	f->level = cand->level;
	f->subject_kind = loc_var_subject_kind(v);
	loc_var_subject(c, v, f->subject, sizeof(f->subject));
	if (cand->n_set) {
		f->subject_kind = SUBJECT_SET;
		set_subject(c, cand, f->subject, sizeof(f->subject));
	}
	snprintf(f->direction, sizeof(f->direction), "%s", cand->direction);
	/* A pick read slow by its host's pooled round trips: their multiple, not its rate. */
	f->severity = cand->pooled_ratio > 0 ? cand->pooled_ratio : cand->severity;
	severity_text(cand, f->severity_text, sizeof(f->severity_text));
	headline_all(cand, merged, n_merged, f->severity_text, sizeof(f->severity_text));
	pooled_text(cand, f->severity_text, sizeof(f->severity_text));
	if (cand->n_set)
		set_text(c, cand, f->severity_text, sizeof(f->severity_text));
	if (v->kind == VAR_FABRIC)
		fabric_text(c, cand, hurt, f->severity_text, sizeof(f->severity_text));
	f->confidence = cand->confidence;
	f->onset_ns = cand->onset_ns;
	f->flows_hurt = cand->flows_hurt;

	evidence_json(c, cand, merged, n_merged, hurt, &ev);
	free(hurt);
	if (ev.failed) {
		text_buf_free(&ev);
		return -ENOMEM;
	}
	f->evidence = ev.data;
	return 0;
}
