/*
 * localize_busy.c: faults on a switch link of a busy fabric, told apart from its ordinary
 * queueing by the link's place among its peers (docs/localization.md, "Unless it stands
 * out of the queueing").
 */
#include "lib/localize/localize_internal.h"

/*
 * Marks that lead every peer link: a link whose marks per packet stand at least
 * BUSY_LEAD_MIN_Z robust sigmas above its peers' median and LEAD_MIN_RATIO times the
 * highest peer's. One faulty link marks alone; the queueing of a busy fabric builds on
 * several links at once, so its hottest link has peers close behind. Tuning seeds
 * 1081-1100, switch link findings at 4-5 sigmas and 2x: the injected ECN links led the
 * next link by 1.33-2.27x, the hottest links of healthy busy fabrics at 4 sigmas or more
 * by at most 1.13x (healthy-over-mixed 1097).
 */
#define BUSY_LEAD_MIN_Z 4.0
#define LEAD_MIN_RATIO 1.25

bool loc_marks_lead(double z, double lead)
{
	return z >= BUSY_LEAD_MIN_Z && lead >= LEAD_MIN_RATIO;
}
