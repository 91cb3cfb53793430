/* report_write.c: the report folder: charts, then index.html, each file written whole, no link followed. */
#include "lib/report/report_write.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/export/export_file.h"
#include "lib/util/log.h"
#include "lib/report/report_charts.h"
#include "lib/report/report_render.h"
#include "lib/util/text_buf.h"

int report_write_dir(const struct report_data *d, const char *dir, const struct report_write_opts *o)
{
	struct report_chart charts[REPORT_MAX_CHARTS];
	struct text_buf html = { 0 };
	char err[512];
	int n_charts, rc = -1, dirfd = -1, werr;
	mode_t old_umask = umask(027); /* charts and page 0640, folders 0750 */

	if (mkdir(dir, 0750) && errno != EEXIST) {
		pr_err("%s: cannot create the report folder: %s\n", dir, strerror(errno));
		goto cleanup;
	}
	/* Every file is created relative to this fd: a link planted in or for the folder is
	 * refused, never followed (the report often runs as root). */
	dirfd = output_dir_open(dir);
	if (dirfd < 0) {
		pr_err("%s: cannot use the report folder: %s\n", dir, output_strerror(dirfd));
		goto cleanup;
	}
	n_charts = report_charts_render(d, dirfd, dir, o->png, charts, err, sizeof(err));
	if (n_charts < 0) {
		pr_warn("%s\n", err);
		n_charts = 0;
	}
	if (report_render_html(&html, d, charts, (size_t)n_charts, o->top_n)) {
		pr_err("out of memory while rendering HTML\n");
		goto cleanup;
	}
	/* Whole, through a random temporary: a reader never sees half a page. */
	werr = write_file_atomic_at(dirfd, "index.html", html.data ? html.data : "", html.len);
	if (werr) {
		pr_err("%s/index.html: %s\n", dir, output_strerror(werr));
		goto cleanup;
	}
	rc = 0;
cleanup:
	if (dirfd >= 0)
		close(dirfd);
	text_buf_free(&html);
	umask(old_umask);
	return rc;
}

int report_write_from_db(const char *db_path, const char *dir, const struct report_write_opts *o)
{
	struct report_data d;
	char err[1024];
	int rc;

	if (report_data_load(db_path, o->top_n, o->query_timeout_s, &d, err, sizeof(err))) {
		pr_err("%s\n", err);
		return -1;
	}
	rc = report_write_dir(&d, dir, o);
	report_data_free(&d);
	return rc;
}
