/* report_fabric.h: the fabric picture (SVG written here, no dependency) and link colours. */
#ifndef AGENTXDP_REPORT_FABRIC_H
#define AGENTXDP_REPORT_FABRIC_H

#include "lib/report/report_data.h"
#include "lib/util/text_buf.h"

/* The colour an alert's link is drawn in; nothing else in the picture uses it. */
#define FABRIC_ALERT_COLOUR "#d62728"

enum link_state {
	LINK_IDLE,		/* no flow crosses it */
	LINK_HEALTHY,
	LINK_ELEVATED,		/* loss, marks or latency above its peers, no finding */
	LINK_NOTICE,		/* a notice names it */
	LINK_ALERT,		/* the verdict names it */
};

enum link_state report_link_state(const struct report_link *l);
const char *report_link_state_name(enum link_state s);

/*
 * The fabric as an inline <svg>: hosts, leaves and spines in tiers, each link coloured by
 * its evidence, the verdict's links in FABRIC_ALERT_COLOUR and labelled. Without a topology,
 * a sentence saying what would draw it.
 */
void report_fabric_html(struct text_buf *out, const struct report_data *d);

#endif
