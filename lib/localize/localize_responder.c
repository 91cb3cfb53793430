/*
 * localize_responder.c: a slow pick on a host's link that is the host answering late. Every
 * round trip is timed at its requester's NIC and covers the requester's own link both ways,
 * so a slow host link delays its host's own requests as much as those it answers; a slow
 * responder delays only the ones it answers.
 */
#include <string.h>

#include "lib/localize/localize_internal.h"
#include "lib/track/flow.h"
#include "lib/util/robust_stats.h"

/*
 * A host's link whose READs are late only where its host responds, and late from their first
 * response on: a slow responder, not the link. Every round trip is timed at its requester's
 * NIC and covers the requester's own link both ways, so a slow host link delays its host's
 * own READs as much as those it answers; a serializer slowed on the way out of the host (it
 * delays only what the host sends) stretches each READ from its first response to its last,
 * a responder that waits before answering does not. Tuning seeds 3956-3962, 40 us slow
 * responders (ho5-slowresp40-read, mirror): +36 to +41 us where they respond, -2.6 to +2.6
 * where they request, stretched -5.1 to +0.8 us over the median READ's; one of those hosts'
 * links with a 4x serializer out of the host: +16 to +680 us, stretched 0.23-0.98 of that;
 * +5 to +40 us host links late both ways (where they request 0.5-1.5x where they respond).
 * Under WRITEs a serializer slowed toward the host delays its ACKs as a slow responder does
 * (ho3-rate4x-host-1dir: +12 to +14 us, floors and completions alike): WRITEs are judged
 * by acks_late_where_responding(), below.
 * Only where no second vantage times the host's turnaround: there that signal decides (a
 * +10 us host link one way seen from every host, slow10us-host-each, reporting seed 500,
 * read `host` by this rule).
 */
#define RESPONDER_LATE_MIN_CONNS 2
#define RESPONDER_LATE_REQ_SHARE 0.25
#define RESPONDER_LATE_STRETCH_SHARE 0.1
#define WHY_RESPONDER_LATE "its READs late only where its host responds, from the first response on, "\
			   "its own on time: the host answers late (a slow link would delay both)"

/* READ: a connection's wait from its first response to its last (the message's length on
 * the wire), or -1. */
static double read_spread(const struct conn *cn)
{
	const struct flow_stats *f = cn->req;

	if (!f || cn->lat_kind != LAT_READ || !cn->has_lat || cn->ack_only ||
	    f->read_first_samples == 0 || f->read_samples == 0)
		return -1;
	return f->read_latency_p50_us - f->read_first_p50_us;
}

/*
 * The READs whose responder (responder true) or requester is host: the median latency
 * excess over their baselines, and of the responder's, the median stretch (read_spread()
 * over the median READ's). -1e9 when fewer than RESPONDER_LATE_MIN_CONNS tell.
 */
static double role_excess(const struct ctx *c, const uint8_t *host, bool responder, double *vals,
			  double *stretch)
{
	double read_med, excess = -1e9;
	size_t n = 0;

	for (size_t k = 0; k < c->n_conns; k++)
		if (read_spread(&c->conns[k]) >= 0)
			vals[n++] = read_spread(&c->conns[k]);
	read_med = n ? rs_median(vals, n) : 0;
	for (int pass = 0; pass < 2; pass++) {
		n = 0;
		for (size_t k = 0; k < c->n_conns; k++) {
			const struct conn *cn = &c->conns[k];

			if (read_spread(cn) >= 0 && cn->baseline_us > 0 &&
			    !memcmp(responder ? cn->dst : cn->src, host, 16))
				vals[n++] = pass ? read_spread(cn) - read_med
						 : cn->lat_p50_us - cn->baseline_us;
		}
		if (n < RESPONDER_LATE_MIN_CONNS)
			return -1e9;
		if (!pass)
			excess = rs_median(vals, n);
		else
			*stretch = rs_median(vals, n);
	}
	return excess;
}

/*
 * The same under WRITEs and SENDs: a host's link whose ACK round trips are late where its
 * host responds and not where it requests, its connections' floors raised by as much, their
 * spread no wider than everyone's. A responder that waits adds the same time to every ACK;
 * a serializer slowed toward the host (the one thing that delays only what the host
 * answers: a slow link's delay reaches the ACKs of the host's own requests too) delays a
 * message's later packets more than its first, and so stretches the spread. Tuning seeds
 * 3956-3962 and 4120-4129 (docs/evaluation.md, "Forty-first round"): 35-45 us slow
 * responders in WRITE fabrics (ho15-slowresp40-34, ho16-slowresp35-26, ho19-slowresp45-33),
 * `slow` host links in every run, stood +34 to +45 us where they respond and -0.4 to +3.2
 * where they request, floors 0.99-1.04 of that, spread 0.07-1.24x everyone's; serializers
 * 3-6x slower toward the host that passed the role test stood at floors 0.46-1.04, spread
 * 1.03-20x (one, ho3-rate4x-host-1dir 3961, at 0.91 and 1.03x, is read as the host).
 */
#define RESPONDER_LATE_ACK_FLOOR_SHARE 0.8
#define RESPONDER_LATE_ACK_SPREAD_RATIO 1.5
#define WHY_RESPONDER_LATE_ACKS "its round trips late only where its host responds, every one by about as "\
				"much (floor raised alike, spread unchanged), its own on time: the host answers "\
				"late (a slow link would delay both)"

/* An ACK round trip (WRITE, SEND) timed at its requester with a baseline. */
static bool ack_timed(const struct conn *cn)
{
	return loc_conn_ack_timed(cn) && cn->baseline_us > 0;
}

enum ack_figure { ACK_EXCESS, ACK_LATE, ACK_FLOOR, ACK_SPREAD };

/*
 * Over the ACK round trips whose responder (responder true) or requester is host, or every
 * one (host NULL): the median of a figure (its latency over its baseline; the same or its
 * floor over its class's, the larger; its floor; p99 over p50). -1e9 when fewer than
 * RESPONDER_LATE_MIN_CONNS tell. The larger of the two says whether a connection was late
 * at all: one whose round trips slowed late in the trace keeps its median and shows in the
 * floor of its later windows (ho13-slow60us-host, seed 4123: a +60 us host link both ways,
 * onset 600 us; where its host requests, medians -0.5 to +120 us, floors +119 us).
 */
static double ack_role_median(const struct ctx *c, const uint8_t *host, bool responder,
			      enum ack_figure fig)
{
	size_t n = 0;

	for (size_t k = 0; k < c->n_conns; k++) {
		const struct conn *cn = &c->conns[k];

		if (!ack_timed(cn) || (host && memcmp(responder ? cn->dst : cn->src, host, 16)) ||
		    (fig == ACK_FLOOR && !cn->has_floor))
			continue;
		double excess = cn->lat_p50_us - cn->baseline_us;

		if (fig == ACK_LATE && cn->has_floor)
			excess = max2(excess, cn->floor_excess_us);
		c->scratch2[n++] = fig == ACK_EXCESS || fig == ACK_LATE ? excess :
				   fig == ACK_FLOOR ? cn->floor_excess_us :
						      cn->lat_p99_us - cn->lat_p50_us;
	}
	return n < RESPONDER_LATE_MIN_CONNS ? -1e9 : rs_median(c->scratch2, n);
}

static bool acks_late_where_responding(const struct ctx *c, const struct candidate *cand,
				       const uint8_t *host)
{
	double resp, req, floor, spread, everyone;

	if (!loc_latency_pick(cand->signal))
		return false;
	resp = ack_role_median(c, host, true, ACK_EXCESS);
	req = ack_role_median(c, host, false, ACK_LATE);
	floor = ack_role_median(c, host, true, ACK_FLOOR);
	spread = ack_role_median(c, host, true, ACK_SPREAD);
	everyone = ack_role_median(c, NULL, true, ACK_SPREAD);
	return resp >= 0.5 * cand->effect_us && req > -1e8 && req < RESPONDER_LATE_REQ_SHARE * resp &&
	       floor >= RESPONDER_LATE_ACK_FLOOR_SHARE * resp && spread > -1e8 &&
	       spread <= RESPONDER_LATE_ACK_SPREAD_RATIO * everyone;
}

const char *loc_responder_late(const struct ctx *c, const struct candidate *cand)
{
	const uint8_t *host;
	double resp, req, stretch = 0, unused;

	if (cand->n_set || cand->effect_us <= 0)
		return NULL;
	host = loc_subject_host(c, cand->var);
	if (!host)
		return NULL;
	/* A second vantage times the turnaround itself: that signal tells a slow responder. */
	for (size_t k = 0; k < c->n_conns; k++)
		if (c->conns[k].turnaround_us >= 0 && !memcmp(c->conns[k].dst, host, 16))
			return NULL;
	if (acks_late_where_responding(c, cand, host))
		return WHY_RESPONDER_LATE_ACKS;
	if (cand->signal != SIG_LATENCY)
		return NULL;
	resp = role_excess(c, host, true, c->scratch2, &stretch);
	req = role_excess(c, host, false, c->scratch2, &unused);
	if (resp >= 0.5 * cand->effect_us && req > -1e8 && req < RESPONDER_LATE_REQ_SHARE * resp &&
	    stretch < RESPONDER_LATE_STRETCH_SHARE * resp)
		return WHY_RESPONDER_LATE;
	return NULL;
}
