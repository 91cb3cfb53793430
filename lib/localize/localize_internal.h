/*
 * localize_internal.h: what the parts of localization share (not installed, not for
 * callers of localize()): the model's subjects and connections, the candidates of the
 * search, and the functions each part offers the others.
 */
#ifndef AGENTXDP_LOCALIZE_INTERNAL_H
#define AGENTXDP_LOCALIZE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/localize/localize.h"

/* VAR_FABRIC: no topology, flows hurt together that share no host; link = host pairs. */
enum var_kind { VAR_LINK, VAR_HOST_LINK, VAR_PATH, VAR_HOST, VAR_FABRIC };
enum signal {
	SIG_LATENCY,
	SIG_SHIFT,
	SIG_COMPLETION,
	SIG_LOSS,
	SIG_ECN,
	SIG_TURNAROUND,
	N_SIGNALS
};
enum lat_kind { LAT_ACK, LAT_READ, LAT_COMPLETION };

struct var {
	enum var_kind kind;
	uint32_t link;			/* VAR_LINK */
	uint8_t a[16], b[16];		/* HOST_LINK/HOST: a; PATH: a < b */
	double penalty;
};

/* One (connection, subject) coefficient. */
struct incidence {
	uint32_t var;
	float rtt;			/* P(round trip crosses it): latency */
	float fwd;			/* P(data direction crosses it): loss, ECN */
	float fwd_ab;			/* P(data crosses it from a to b) */
	float rev;			/* P(ACK direction crosses it) */
	float rev_ab;			/* P(ACKs cross it from a to b) */
	bool ack_only;			/* the connection's latency covers only the ACKs' way */
	bool loss_rev;			/* its loss is on the ACKs' way (READ requests NAKed, or a
				 * mixed QP's READ responses re-read) */
};

struct conn {
	const struct flow_stats *req;	/* requester direction (data), may be NULL */
	const struct flow_stats *resp;	/* responder direction (ACKs), may be NULL */
	uint8_t src[16], dst[16];	/* requester -> responder */
	uint16_t sport_fwd, sport_rev;
	bool has_lat;
	enum lat_kind lat_kind;
	double lat_p50_us, lat_p99_us;
	double turnaround_us;		/* responder turnaround from a second vantage, or -1 */
	/* Data seen at one vantage and its ACKs at another (an ingress-only capture on each
	 * host): each packet is stamped where it arrives, so the ACK latency is the
	 * responder's turnaround plus the ACKs' way back, and the data's way is not in it. */
	bool ack_only;
	bool data_rev;			/* READ: the data (and their loss, marks) go resp -> req */
	int klass;			/* baseline group: hop count * 4 + latency kind */
	double baseline_us, y[N_SIGNALS], w[N_SIGNALS];
	bool lat_own_past;		/* SIG_LATENCY: too few peers, baseline_us is its first windows */
	double shift_before_us;		/* SIG_SHIFT: window p50 before the flow's change point */
	double floor_us[2];		/* lowest window p50 of its ACK latency per half (-1: none) */
	bool floor_done[2];		/* scratch of signal_floor() */
	double floor_excess_us;		/* ... over its class's median floor, the worse half */
	bool has_floor;
	bool has_comp;			/* message completion times (first packet -> last ACK) */
	double comp_p50_us, comp_p99_us, comp_baseline_us;
	int comp_shape;			/* its messages' length class (localize_model.c) */
	int hops;			/* data path length; without topology the TTL's hops, 0 none */
	bool valid[N_SIGNALS];
	double packets, loss_events, ce_events, rnr_naks;
	double bytes;			/* the data's bytes on the wire, mirror copies left out */
	double naks, timeouts;		/* the loss events' two sources (RNR's share removed) */
	size_t inc_start, inc_len;
	double late_share;		/* share of its data packets in the later half of the trace */
	bool loss_against_data;		/* its loss lies against its data's way: a READ's requests
				 * NAKed, or a mixed QP's READ responses re-read */
	double read_gaps;		/* READ: responses lost (re-read after a later one showed it) */
	double turnaround_first_us;	/* READ: the turnaround to the first response, or -1 */
	/* READ, the turnaround's copy: its waits for the first response summed, and the time
	 * in them its responder's link sent other READs' responses (flow_stats read_wait_*) */
	double turnaround_wait_us, turnaround_busy_us;
	enum lat_kind turnaround_kind;	/* the kind of latency turnaround_us is */
	double turnaround_peer_us;	/* the turnaround measured, 0 included, or -1 */
	double turnaround_p99_us;	/* ... its p99, or -1 */
	double turnaround_waits;	/* READ: how many waits turnaround_wait_us sums */
};

struct ctx {
	const struct localize_config *cfg;
	const struct topology *topo;
	const struct flow_stats *flows;
	size_t n_flows;
	struct conn *conns;
	size_t n_conns;
	struct var *vars;
	size_t n_vars, cap_vars;
	uint32_t *var_slots;		/* hash of vars: index + 1, 0 empty (a million QPs, many paths) */
	size_t var_slots_mask;
	struct incidence *inc;
	size_t n_inc, cap_inc;
	double *scratch, *scratch2;	/* scratch_len doubles each */
	double *step_floor;		/* the completion search: each subject's ACK floor excess */
	size_t scratch_len;		/* max(n_flows, the most windows of a flow) */
	/* ECMP cache: per (src node, dst node) */
	struct ecmp_entry {
		uint32_t s, d;
		struct topo_hop *hops;
		size_t n_paths, len;
		int err;
	} *ecmp;
	size_t n_ecmp, cap_ecmp;
	struct busy_figures *busy;	/* localize_busy.c: every switch link's figures, once */
};

/* A pick of the matching pursuit and the verdict on it. */
struct candidate {
	uint32_t var;
	enum signal signal;
	enum finding_kind kind;
	double effect;			/* fitted excess in the signal's unit: us of RTT (shift:
					   a fraction of the flows' past), or events per packet */
	double effect_us;		/* latency signals: the effect in us */
	double z, strength, specificity, confidence, severity;
	double in_rate, out_rate, in_events, in_packets;
	double baseline_us, sigma_us, hurt_p99_us, peer_p99_us;
	double p99_ratio;		/* latency: hurt flows' p99 / their peers' (median) */
	double peer_ratio;		/* latency: hurt flows' median / healthy peers' (0: none) */
	double hurt_p50_us, peer_p50_us;
	char direction[128];
	uint32_t flows_hurt;
	uint32_t flows_crossing;	/* judged connections crossing it wholly (0: not counted) */
	uint64_t onset_ns;
	bool onset_change_point;
	bool own_past;			/* SIG_LATENCY judged against hurt flows' own first windows */
	char alt_subject[128];
	double alt_score_ratio;
	/* An ambiguous pick: links that explain the evidence as well as var (tie_min_ratio),
	 * var among them. n_set 0: var alone. The confidence is shared among them. */
	uint32_t set[8];
	size_t n_set;
	double set_confidence;		/* that one of the set is the culprit */
	bool one_pair_set;		/* a set of two links of one host pair's path (its loss) */
	double *resid;			/* the pursuit's residuals when picked (evidence) */
	uint32_t *hurt_idx;		/* the connections it hurts (NULL: not tracked) */
	size_t n_hurt_idx;
	double share;			/* this pick's fit gain / the signal's first pick's */
	double n_eff;			/* sum of squared coefficients of the flows fitted */
	int variant;			/* loss/ECN: 0 both directions, 1 a -> b, 2 b -> a */
	enum finding_level level;
	double load_ratio;		/* packets through the subject / median of its kind */
	uint32_t load_peers;		/* peers carrying about its load (load_matched_marks()) */
	double load_peer_marks;		/* its CE rate / the highest of theirs (1e9: theirs 0) */
	bool beyond_load;		/* carrying load_notice_ratio its peers' load, an alert by
					   those marks (load_notice_why()) */
	double peer_ce_rate;		/* CE marks per packet of connections not crossing it */
	double hurt_ce_rate;		/* CE marks per packet of its hurt connections (-1: none) */
	double hurt_ce_z;		/* ... their marks over the peers' rate, Poisson z */
	double hurt_ce_way_z[2];	/* ... split by the way their data cross the subject
				 * (a -> b, b -> a; 0 when none cross it that way) */
	double hurt_ce_way_packets[2];
	double outlier_ratio;		/* its signal per unit crossing / its peers' median (0: none) */
	double outlier_z;		/* (its signal - peers' median) / peers' robust spread */
	double mark_ratio, mark_z;	/* its marks per packet (worse direction) against peers' */
	double lat_ratio, lat_z;	/* its latency excess per round trip against peers' */
	double lat_excess_us;		/* ... that excess, us over the class medians (-1: none) */
	double floor_excess_us;		/* its flows' latency floor over peers' median (us) */
	double floor_z;			/* ... in the peers' robust sigmas */
	bool floor_known;		/* both measured (0 and 0 is a floor tied with the peers') */
	bool floor_step;		/* a completion pick under slow_min_ratio kept by its floor */
	double step_floor_us, step_floor_z; /* ... that floor over the other switch links' */
	const char *notice_why;		/* what ordinary traffic explains, for a notice */
	const char *kind_why;		/* the kind told by the link, not the pick (or NULL) */
	bool queue_marked;		/* a slow headline whose subject also marks (slow_queue()) */
	size_t onset_after;		/* windows of the hurt flows' series from the change point */
	size_t onset_windows;		/* ... of how many windows in all */
	double onset_ratio;		/* mean after the change point / mean before (inf: 0 before) */
	double outlier_lead;		/* its signal / the highest peer's (0: not measured) */
	double mark_lead;		/* its marks (worse direction) / the highest peer's */
	double late_load_ratio;		/* load_ratio in the later half of the trace (0: not taken) */
	double marks_floor;		/* switch link: its marks per packet in its quiet windows */
	double marks_floor_lead;	/* ... over the highest other switch link's */
	bool marks_floor_known;		/* both measured (loc_marks_floor()) */
	double loss_dispersion;		/* lossy: chi-square per window of its loss counts (-1) */
	double loss_clean_expected;	/* lossy (marked): events its rate would give the
					   connections crossing it that lost (were marked) none
					   (-1: none) */
	double stall, stall_lead;	/* loc_link_stall(): latency over payload, lead */
	bool stall_known;
	double queue_share;		/* host turnaround: its waits' share its own link was busy */
	bool queue_share_known;
	/* loc_pooled_host_slow(): its host's flows' round trips pooled, against other hosts' */
	double pooled_ratio;		/* 0: not read so */
	double pooled_excess_us, pooled_z;
	uint32_t pooled_flows;
	int pooled_answers;		/* 1: the flows the host answers, 0: those it starts */
	enum finding_kind pooled_from;	/* ... the kind it had (host: the sender's timer) */
};

static inline double max2(double a, double b)
{
	return a > b ? a : b;
}

/* Completions compared: the same path length and messages of about the same length. */
static inline bool loc_same_comp_class(const struct conn *a, const struct conn *b)
{
	return a->hops == b->hops && a->comp_shape == b->comp_shape;
}

/*
 * A reliable connection seen both ways (RC or XRC requests one way, responses the other):
 * only its loss leaves a trace (a UC or UD connection's does not).
 */
static inline bool loc_conn_reliable(const struct conn *cn)
{
	return cn->valid[SIG_LOSS] && cn->req && cn->resp && cn->req->carries_requests &&
	       cn->resp->carries_responses;
}

/* A reliable connection that lost nothing: no loss event, no READ gap, not ACKs alone. */
static inline bool loc_conn_clean(const struct conn *cn)
{
	return loc_conn_reliable(cn) && !cn->loss_events && !cn->read_gaps && !cn->ack_only;
}

/* Busy: the connections that do not cross the candidate are CE-marked at busy_ce_rate. */
static inline bool loc_fabric_busy(const struct candidate *cand, const struct localize_config *cfg)
{
	return cfg->busy_ce_rate > 0 && cand->peer_ce_rate >= cfg->busy_ce_rate;
}

/* A connection timed by ACK round trips (WRITE, SEND) at its requester, not READs. */
static inline bool loc_conn_ack_timed(const struct conn *cn)
{
	return cn->has_lat && !cn->ack_only && cn->lat_kind == LAT_ACK;
}

/* A pick read from round-trip time: latency, its shift from the past, or completion. */
static inline bool loc_latency_pick(enum signal s)
{
	return s == SIG_LATENCY || s == SIG_COMPLETION || s == SIG_SHIFT;
}

/*
 * A latency excess that the fabric's queueing explains: the fabric is busy and the hurt
 * connections are marked more than their peers, beyond counting noise. A queue delays and
 * marks together; a slow cable or a step of added latency delays without a mark, so its
 * flows are marked like everyone else's (a 5%-load fabric marks about 0.1% with no fault).
 */
static inline bool loc_latency_is_queueing(const struct candidate *cand, const struct localize_config *cfg)
{
	if (!loc_fabric_busy(cand, cfg))
		return false;
	if (cfg->queue_marks_z <= 0 || cand->hurt_ce_rate < 0)
		return true;
	return cand->hurt_ce_z >= cfg->queue_marks_z;
}

/* Set (or clear) the n_conns-sized flags of x's hurt connections. */
static inline void loc_mark_hurt(const struct candidate *x, bool *mark, bool on)
{
	for (size_t k = 0; k < x->n_hurt_idx; k++)
		mark[x->hurt_idx[k]] = on;
}

/* localize_model.c: subjects, connections, and which subjects each connection crosses. */
void loc_var_subject(const struct ctx *c, const struct var *v, char *buf, size_t len);
enum finding_subject_kind loc_var_subject_kind(const struct var *v);
long loc_add_var(struct ctx *c, enum var_kind kind, uint32_t link, const uint8_t *a,
		 const uint8_t *b);
void loc_sender_subject(const struct ctx *c, struct candidate *cand, const uint8_t *src);
int loc_build_conns(struct ctx *c);
/* The median turnaround of each latency kind (-1: too few connections time one). */
void loc_turnaround_medians(const struct ctx *c, double med[LAT_COMPLETION + 1]);
/* What a turnaround's excess is weighed against (its severity's base), in us. */
double loc_turnaround_base(const struct conn *cn);
int loc_build_incidence(struct ctx *c);
/* Is var a link between two switches (a topology's link, no host at either end)? */
bool loc_switch_link(const struct ctx *c, size_t var);
/* Is a candidate a switch link or a set of switch links only? */
bool loc_switch_links_only(const struct ctx *c, const struct candidate *cand);

/* localize_classify.c: alert or notice; do two candidates name the same subject (or set)?
 * Does a connection cross a candidate? */
void loc_classify_level(struct ctx *c, struct candidate *cand, const double *load,
			const double *late_load, const double *marks, double *scratch);
bool loc_same_subject(const struct candidate *x, const struct candidate *y);
int loc_classify_levels(struct ctx *c, struct candidate *cands, size_t n);
bool loc_conn_crosses(const struct ctx *c, const struct conn *cn, const struct candidate *cand);
/* localize.c: does a candidate (or its set) name a variable? Is every subject x names also
 * named by y? */
bool loc_cand_names(const struct candidate *x, uint32_t var);
bool loc_names_within(const struct candidate *x, const struct candidate *y);

/* localize_quiet.c: a quiet fabric's queue or a fault: did the subject's latency floor move? */
bool loc_floor_known(const struct candidate *cand);
bool loc_floor_moved(const struct ctx *c, const struct candidate *cand);
/* Did the floor rise less than QUIET_FLOOR_US per multiple of its peers' load (the standing
 * queue that load keeps)? */
bool loc_floor_under_load(const struct candidate *cand);
bool loc_floor_rose_slow(const struct ctx *c, const struct candidate *cand);
void loc_floor_over_load(const struct ctx *c, struct candidate *best, size_t n);
void loc_busy_floor_step(const struct ctx *c, struct candidate *best, size_t n_best,
			 const struct candidate *cands, size_t n_cands);
bool loc_quiet_queue_drains(struct ctx *c, struct candidate *cand);
/* The same delay on every hurt connection: a fixed step, not a queue. */
bool loc_fixed_step(const struct ctx *c, const struct candidate *cand);

/* localize_signals.c: each connection's value of each signal against its baseline. */
void loc_build_signals(struct ctx *c);

/* localize_search.c: the matching pursuit and the verdict on each pick. */
bool loc_judge(struct ctx *c, struct candidate *cand, const double *resid, bool *hurt);
/* The connections a pick hurts, as indices (NULL when none, or out of memory). */
uint32_t *loc_hurt_list(const struct ctx *c, const bool *hurt, size_t *n);
int loc_pursue(struct ctx *c, enum signal s, struct candidate **cands, size_t *n_cands,
	       size_t *cap_cands);
int loc_rnr_candidates(struct ctx *c, struct candidate **cands, size_t *n_cands,
		       size_t *cap_cands);
/* A pick's strength: 0 at z 0, 1 - 1/e at z_min, towards 1 beyond. */
double loc_strength(double z, double z_min);
/* Poisson z of observing `events` where `expected` were due. */
double loc_poisson_z(double events, double expected);
/* A latency pick's hurt connections' median against healthy peers' (cand->peer_ratio). */
void loc_peer_severity(struct ctx *c, struct candidate *cand, const bool *hurt);

/* localize_fabric.c: no topology; connections hurt together that share no host. */
size_t loc_fabric_hurt(struct ctx *c, bool *hurt);
bool loc_small_fabric_set(const struct ctx *c, const struct candidate *cand);
bool loc_fabric_step(const struct ctx *c, const struct candidate *cand);
void loc_fabric_from_hosts(struct ctx *c, struct candidate *best, size_t n);
int loc_fabric_candidates(struct ctx *c, struct candidate **cands, size_t *n_cands,
			  size_t *cap_cands);

/* localize_busy.c: marks on a switch link that lead every peer link's (busy fabrics). */
bool loc_marks_lead(double z, double lead);
void loc_marks_floor(struct ctx *c, struct candidate *cand);
bool loc_marks_steady(const struct candidate *cand);
bool loc_marks_drain(const struct candidate *cand);
bool loc_queue_drains(const struct candidate *cand);
void loc_link_stall(struct ctx *c, struct candidate *cand);
void loc_busy_free(struct ctx *c);
bool loc_link_stalls(const struct candidate *cand);
/* ... and a set holding every link between one leaf and the spines (an oversubscribed leaf). */
bool loc_leaf_wide_set(const struct ctx *c, const struct candidate *cand);

/* localize_each.c: a host finding on one host pair's connections names both hosts. */
void loc_pair_sets(const struct ctx *c, struct candidate *best, size_t n);
/* A link's loss seen on one host pair names it with its runner-up on that pair's path. */
void loc_link_pair_sets(const struct ctx *c, struct candidate *best, size_t n);
/* ... and a turnaround alert whose responses start on time is a busy responder's link. */
void loc_turnaround_start(const struct ctx *c, struct candidate *best, size_t n, bool *mark);
/* ... and a slow pick on a responder's link whose wait the responder's own copy times is
 * the responder. */
void loc_responder_waits(const struct ctx *c, struct candidate *best, size_t n, bool *mark);

/* localize_responder.c: a slow pick on a host's link (the caller checks it is one) late
 * only where its host responds: why it is the host, or NULL. */
const char *loc_responder_late(const struct ctx *c, const struct candidate *cand);

/* localize.c: the host a subject is about (a host, its access link, a links.csv link with a
 * host at one end), NULL for switch links, host pairs and fabric findings. */
const uint8_t *loc_subject_host(const struct ctx *c, uint32_t var);

/* localize_onset.c: one window's value over a set of connections (num / den). */
struct win_point {
	uint64_t start_ns;
	double num, den;
};
/* Sort pts by start and sum the points of one start into one; returns how many are left. */
size_t loc_sum_windows(struct win_point *pts, size_t n);
/* ... a connection's windows, both directions merged by start time; each
 * step gives the requester's and the responder's window of one start (an empty window for a
 * side that has none). */
struct conn_windows {
	const struct flow_stats *q, *r;
	size_t i, j;
};
bool loc_conn_windows_next(struct conn_windows *it, uint64_t *start,
			   const struct flow_window **a, const struct flow_window **b);
/* A window's loss events as fill_conn_counts() counts the connection's: NAKs, timeouts and
 * a READ's re-reads, each the larger of the two directions' counts. */
double loc_window_loss_events(const struct flow_window *a, const struct flow_window *b);
/* The onset of cand: the change point of its hurt connections' summed per-window series
 * (its first window with evidence when none shows). */
void loc_find_onset(struct ctx *c, struct candidate *cand, const bool *hurt);

/* localize_overflow.c: how clustered in time a lossy subject's loss events are (about 1 or
 * less: at random, as a cable drops; -1: too few to tell). */
double loc_loss_dispersion(const struct ctx *c, const struct candidate *cand);
extern const char loc_why_loss_on_part[];
bool loc_loss_on_part(const struct ctx *c, const struct candidate *cand);
extern const char loc_why_loss_down_on_part[];
bool loc_loss_down_on_part(const struct ctx *c, const struct candidate *cand);
const char *loc_loss_part_why(const struct ctx *c, const struct candidate *cand);
extern const char loc_why_marks_on_part[];
bool loc_marks_on_part(const struct ctx *c, const struct candidate *cand);
/* A marked fabric set whose marks come in bursts, or stand a few times the others', is a
 * queue's (a notice). */
extern const char loc_why_fabric_marks_queue[];
bool loc_fabric_marks_queue(const struct ctx *c, const struct candidate *cand);
bool loc_fabric_marks_stand(const struct ctx *c, const struct candidate *cand);
/* A host's link, host or pair whose marks come in bursts is a path's queue (a notice). */
extern const char loc_why_host_marks_burst[];
bool loc_host_marks_burst(const struct ctx *c, const struct candidate *cand);
/* A switch link's drops short of loss_min_ratio pass when spread at random in time. */
bool loc_loss_random_short_ratio(struct ctx *c, const struct candidate *cand, const bool *hurt);
/* localize_classify.c: the hurt connections marked loss_marks_ratio times per loss or more. */
bool loc_loss_tracks_marks(const struct ctx *c, const struct candidate *cand);
int loc_random_loss_under_marks(struct ctx *c, struct candidate *best, size_t n_best,
				const struct candidate *cands, size_t n_cands);

/* localize_pooled.c: a host link's marks or timer read slow by its host's round trips,
 * pooled over connections too short to judge alone. */
int loc_pooled_host_slow(const struct ctx *c, struct candidate *best, size_t n);

/* localize_timer.c: a slow pick on the flows of a sender's timer is a notice. */
void loc_timer_explains(const struct ctx *c, struct candidate *best, size_t n, bool *mark);

/* localize_evidence.c: a candidate as a finding, its text and its evidence JSON. */
const char *loc_signal_name(enum signal s);
int loc_make_finding(struct ctx *c, const struct candidate *cand,
		     const struct candidate *merged, size_t n_merged, struct finding *f);

/* localize_marks.c: marks a switch link direction sets at random, not by its queue. */
bool loc_random_marks_top(const struct ctx *c, size_t *col, double *level, double *lead);
int loc_marks_first(struct ctx *c, struct candidate *best, size_t n_best);
void loc_hurt_marks_by_way(const struct ctx *c, struct candidate *cand);

/* localize_floor.c: a switch link's lowest round trip over the base, alone above the rest
 * (a step of added latency). The completion search keeps the floors after its step_floor. */
/* Lowest window median of a flow's ACK latency in its later half (the completion search's
 * step floor and the lowest floors), or -1. */
double loc_later_floor_us(const struct flow_stats *f);
void loc_lowest_floors(const struct ctx *c, double *out, double *fl);
bool loc_floor_leads(const struct ctx *c, struct candidate *cand, const double *low);
bool loc_floor_breaks_tie(const struct ctx *c, struct candidate *cand, const double *low,
			  bool *picked);
/* A switch link's marks alert whose floor stands microseconds over its peers' is `slow`,
 * whatever its marks or load. */
void loc_floor_far_slow(const struct ctx *c, struct candidate *best, size_t n);
/* The notice of a loaded switch link's queue (loaded_queue()). */
extern const char loc_why_loaded_queue[];
/* load_notice_ratio times the peers' load or more (loc_classify_level()) */
extern const char loc_why_far_more[];
extern const char loc_why_fabric_queueing[];
int loc_classify_with_floor(struct ctx *c, struct candidate *best, size_t n_best,
			    const struct candidate *cands, size_t n_cands);

/* A responder turnaround notice whose READs idle far longer than the peers' is an alert. */
void loc_turnaround_idle(const struct ctx *c, struct candidate *x);

#endif

/* localize_marks.c: loc_random_loss_under_marks(), then a finding added on a link that marks
 * at random which the search never picked alone (best grows by one). */
int loc_busy_marks(struct ctx *c, struct candidate **best, size_t *n_best,
		   const struct candidate *cands, size_t n_cands);
