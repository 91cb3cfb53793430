/*
 * localize_quiet.c: queueing or a fault, on a subject in a fabric that is not busy. A
 * queue delays and marks together and drains in quiet moments, so the quickest round
 * trips through it stay where its peers' are; a slowed serializer or a step of added
 * latency delays every packet, the quickest too (docs/localization.md, "Queueing in a
 * quiet fabric").
 */
#include <math.h>

#include "lib/localize/localize_internal.h"

/*
 * How far a subject's floor (the mean over its round trips of their lowest window median
 * of ACK latency, over their class's median) must stand above its peers' for a fault
 * rather than a queue. Tuning seeds 1081-1120, fabrics not busy: host links queueing
 * under incast or ECMP skew (marked 2-7x their peers) stood 0.0-0.34 us above, the 2x
 * serializers with 1 us each way of slowx2-host 2.1-3.4 us (at 1000-4000 robust sigmas:
 * alike host links' floors are quantized, so the sigmas alone say little).
 */
#define QUIET_FLOOR_US 1.0

/* Was the subject's floor measured against its peers'? A floor tied with theirs reads
 * 0 us and 0 sigmas: measured, and it did not move. */
bool loc_floor_known(const struct candidate *cand)
{
	return cand->floor_known;
}

/* Did the subject's floor move: QUIET_FLOOR_US above its peers' and floor_min_z sigmas? */
bool loc_floor_moved(const struct ctx *c, const struct candidate *cand)
{
	return c->cfg->floor_min_z > 0 && cand->floor_excess_us >= QUIET_FLOOR_US &&
	       cand->floor_z >= c->cfg->floor_min_z;
}

/*
 * Or did it rise QUIET_FLOOR_US under a pick quiet_max_ratio times its peers' or more? Switch
 * links' floors spread more than alike host links': tuning seeds 3506-3545, 5x serializers
 * (slowx5-fab-1dir 3518, 3521, slowx5-fab-each 3531) stood 2.75-4.7 us above their peers at
 * 2.8-3.7 sigmas, under floor_min_z, at 2.4-3.8x their latency or completions; the quiet
 * queues of the same runs 0.01-0.29 us at 1.25-1.6x.
 */
bool loc_floor_rose_slow(const struct ctx *c, const struct candidate *cand)
{
	return c->cfg->floor_min_z > 0 && cand->signal != SIG_ECN &&
	       cand->floor_excess_us >= QUIET_FLOOR_US && cand->severity >= c->cfg->quiet_max_ratio;
}

/*
 * A switch link carrying k times its peers' load keeps a standing queue of its own: its
 * floor must rise QUIET_FLOOR_US per multiple of their load to say a fault. Tuning seeds
 * 3606-3705, healthy-ecmp-skew: spine links at 3.0-4.1x their peers' load stood 1.2-1.35
 * us above them (4.8-15 sigmas), three wrong alerts in 100 runs; the right switch link
 * alerts of this kind (slowx5-fab-each 3511, 3518: 5x serializers at 2.5-2.8x) 5.4-7.3 us.
 * So does a host link: tuning seeds 4036-4045, host links of healthy fabrics at 2.1-4.9x
 * their peers' load stood 1.1-2.6 us above them (0.23-0.78 us per multiple of load), four
 * healthy alerts in 640 runs; 2x serializers on host links at 2.3x and 2.7x (slowx2-host
 * 1095, 3620) 2.8 and 3.1 us, a 3x one at 2.5x (ho5-slowx3-host-1dir 4041) 4.9 us.
 */
bool loc_floor_under_load(const struct candidate *cand)
{
	return cand->floor_excess_us < QUIET_FLOOR_US * cand->load_ratio;
}

static bool floor_moved_over_load(const struct ctx *c, const struct candidate *cand)
{
	return loc_floor_moved(c, cand) && !loc_floor_under_load(cand);
}

/*
 * In a busy fabric too, a switch link's floor that rose LOADED_FLOOR_US and LOADED_FLOOR_Z
 * robust sigmas over its peers' is more than its load lifts it, whatever its kind: a slow
 * link, whose flows it delays and resends drew their load onto it. Tuning seeds 4098-4099
 * and 4110-4115 with a topology: the 187 switch links of healthy runs read "carries far
 * more" (2-7x their peers' load) stood at most 9.2 sigmas (18.7 us at 9.0); right 6x and 7x
 * cables read so 10.9-190 us at 32-340 sigmas; no wrong notice of faulty runs reached both.
 */
#define LOADED_FLOOR_US 10.0
#define LOADED_FLOOR_Z 20.0

static bool floor_stands_over_load(const struct ctx *c, const struct candidate *x)
{
	return (x->notice_why == loc_why_far_more || x->beyond_load) &&
	       loc_switch_link(c, x->var) && !x->n_set &&
	       loc_floor_known(x) && x->floor_excess_us >= LOADED_FLOOR_US &&
	       x->floor_z >= LOADED_FLOOR_Z;
}

/*
 * A subject carrying at least load_notice_ratio times its peers' load is a notice (its
 * load explains its queue), but in a fabric that is not busy a queue from load alone
 * still drains: healthy incast host links at 2.5-4x their peers' load and ECMP-skewed
 * spine links at 2.5-3x kept their floor within 0.34 us of their peers' (tuning seeds
 * 1081-1120), while slowx2-host 1095, a 2x serializer on a host link that happened to
 * carry 2.3x, stood 2.8 us above. Such a notice whose floor moved (floor_moved_over_load())
 * is an alert again, if it reads slow: a congested one (marks its load explains) is a queue,
 * and so is the floor the same load lifts (tuning seeds 3946-3955: ho3-healthy-incast-44
 * 3954, the incast host's link at 4.7x its peers' load, 94% busy, marked and 10.8 us up).
 * A switch link whose floor stands far over its load (floor_stands_over_load()) is an
 * alert again in any fabric, and slow, whatever signal picked it; so is one its marks
 * made an alert at that load (beyond_load: ho16-slowx7-fab-1dir 4160, a 7x cable at 2.1x
 * its peers' load, 51 us up, read congested).
 */
void loc_floor_over_load(const struct ctx *c, struct candidate *best, size_t n)
{
	const struct localize_config *cfg = c->cfg;

	for (size_t i = 0; i < n; i++) {
		struct candidate *x = &best[i];

		if (floor_stands_over_load(c, x)) {
			x->level = FINDING_ALERT;
			x->notice_why = NULL;
			if (x->kind != FINDING_SLOW) {
				x->kind = FINDING_SLOW;
				x->kind_why = "its floor rose far more than its load lifts it: a slow link";
			}
			continue;
		}
		if (x->level != FINDING_NOTICE || cfg->load_notice_ratio <= 0 ||
		    x->kind != FINDING_SLOW || x->load_ratio < cfg->load_notice_ratio ||
		    c->vars[x->var].kind == VAR_FABRIC ||
		    loc_fabric_busy(x, cfg) ||
		    !floor_moved_over_load(c, x))
			continue;
		x->level = FINDING_ALERT;
		x->notice_why = NULL;
	}
}

/*
 * A congested switch link in a fabric that is not busy (its peers' connections marked
 * under busy_ce_rate) whose marks stand under QUIET_QUEUE_MAX_MARKS times its peer links'
 * and come and go over a floor that did not rise (loc_queue_drains()): the top of a spread
 * of queues filling in bursts and draining between them, as the hottest queue of a busy
 * fabric, not a fault. An ECN fault marks its share of every packet whatever the load, so
 * in a quiet fabric it stands far out of its peer links, whose marks are rare; a slowed
 * serializer keeps a standing queue and raises the floor. Tuning seeds 1421-1480:
 * healthy-over-mixed (40% load, yet its peers marked 0.06-0.1%) raised 3 such alerts,
 * marking 3.6-10.2x their peer links with marks floors 0-0.0018 and floors 0.49-0.86 us
 * above their peers'; the 30% ECN links of ecn30-fab-1dir (1421-1436) marked 23-97x, and 6
 * of 16 had marks floors under 0.007 (a quiet link's windows carry few packets), so the
 * marks ratio decides, 1.5x from both sides (docs/evaluation.md, "Eleventh round: alerts
 * on healthy fabrics").
 */
#define QUIET_QUEUE_MAX_MARKS 15

/* Call it on a switch link: only those have a marks floor. The floor stays unknown when
 * the link keeps its alert: link_kind() reads it in busy fabrics only. */
bool loc_quiet_queue_drains(struct ctx *c, struct candidate *cand)
{
	const struct localize_config *cfg = c->cfg;
	bool drains;

	if (cand->kind != FINDING_CONGESTED || cfg->busy_ce_rate <= 0 ||
	    cand->peer_ce_rate >= cfg->busy_ce_rate || cand->mark_ratio >= QUIET_QUEUE_MAX_MARKS ||
	    cand->marks_floor_known)
		return false;
	loc_marks_floor(c, cand);
	drains = loc_queue_drains(cand);
	if (!drains)
		cand->marks_floor_known = false;
	return drains;
}

/*
 * The same delay on every hurt connection: a fixed step (a slow link's added latency), not
 * a queue. A queue's wait depends on when each connection's packets arrive and what else
 * is queued, so the connections it delays differ; a step adds one constant to all of them.
 * Their median excess spreads under CONSTANT_STEP_CV of its mean (its standard deviation
 * over the mean; tuning seeds 1561-1600: a +20 us link 0.0005 over 9 connections; the 18
 * load notices of healthy-ecmp-skew, healthy-incast and healthy-over-mixed on 1561-1580
 * 0.156-1.06, those on host links of slowx5-fab-1dir 0.20 and 0.76). A queue its own load
 * keeps full delays every connection alike too, but a step raises the floor with it: a
 * floor that rose less than the load lifts it (loc_floor_under_load()) is no step (tuning
 * seeds 4046-4055: ho6-healthy-ecmp-32 4054, a host link at 2.83x its peers' load, +152 us
 * on 6 connections spread 0.002 of the mean over a floor 0.05 us up).
 */
#define CONSTANT_STEP_CV 0.05

bool loc_fixed_step(const struct ctx *c, const struct candidate *cand)
{
	double sum = 0, sum2 = 0, mean;
	size_t n = 0;

	if ((cand->signal != SIG_LATENCY && cand->signal != SIG_COMPLETION) ||
	    (loc_floor_known(cand) && loc_floor_under_load(cand)))
		return false;
	for (size_t k = 0; k < cand->n_hurt_idx; k++) {
		const struct conn *cn = &c->conns[cand->hurt_idx[k]];
		double x = cn->lat_p50_us - cn->baseline_us;

		if (!cn->has_lat || cn->baseline_us <= 0)
			continue;
		sum += x;
		sum2 += x * x;
		n++;
	}
	if (n < 3)
		return false;
	mean = sum / (double)n;
	return mean > 0 && sqrt(fmax(sum2 / (double)n - mean * mean, 0)) < CONSTANT_STEP_CV * mean;
}
