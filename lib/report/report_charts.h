/* report_charts.h: the report's gnuplot charts, from the analysis database. */
#ifndef AGENTXDP_REPORT_CHARTS_H
#define AGENTXDP_REPORT_CHARTS_H

#include <stdbool.h>
#include <stddef.h>

#include "lib/report/report_data.h"
#include "lib/report/report_render.h"

#define REPORT_MAX_CHARTS 12

/*
 * Write charts into DIR/charts/ (data, gnuplot scripts and images); DIRFD is DIR opened with
 * output_dir_open(), DIR names it in messages. Files are made in a private folder and
 * renamed into charts/, so no link planted there is followed. Fill charts[] with the
 * ones that rendered. Returns how many rendered, or -1 with err set when none could be
 * attempted (no gnuplot, unwritable folder). A chart without data is skipped, not an error.
 */
int report_charts_render(const struct report_data *d, int dirfd, const char *dir, bool png,
			 struct report_chart *charts, char *err, size_t errlen);

#endif
