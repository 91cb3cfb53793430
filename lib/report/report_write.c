/* report_write.c: the report folder: charts, then index.html, each file written whole. */
#include "lib/report/report_write.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/util/log.h"
#include "lib/report/report_charts.h"
#include "lib/report/report_render.h"
#include "lib/util/text_buf.h"

/* Write a file whole, 0640, through a temporary name: a reader never sees half a page. */
static int write_whole_file(const char *dir, const char *name, const struct text_buf *b)
{
	char path[4200], tmp[4300];
	int fd, err = 0;
	size_t off = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, (int)getpid());
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0640);
	if (fd < 0) {
		pr_err("%s: %s\n", tmp, strerror(errno));
		return -1;
	}
	while (off < b->len) {
		ssize_t n = write(fd, b->data + off, b->len - off);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			err = errno;
			break;
		}
		off += (size_t)n;
	}
	if (!err && fsync(fd))
		err = errno;
	if (close(fd) && !err)
		err = errno;
	if (!err && rename(tmp, path))
		err = errno;
	if (err) {
		unlink(tmp);
		pr_err("%s: %s\n", path, strerror(err));
		return -1;
	}
	return 0;
}

int report_write_dir(const struct report_data *d, const char *dir, const struct report_write_opts *o)
{
	struct report_chart charts[REPORT_MAX_CHARTS];
	struct text_buf html = { 0 };
	char err[512];
	int n_charts, rc = -1;
	mode_t old_umask = umask(027); /* charts and page 0640, folders 0750 */

	if (mkdir(dir, 0750) && errno != EEXIST) {
		pr_err("%s: cannot create the report folder: %s\n", dir, strerror(errno));
		goto cleanup;
	}
	n_charts = report_charts_render(d, dir, o->png, charts, err, sizeof(err));
	if (n_charts < 0) {
		pr_warn("%s\n", err);
		n_charts = 0;
	}
	if (report_render_html(&html, d, charts, (size_t)n_charts, o->top_n)) {
		pr_err("out of memory while rendering HTML\n");
		goto cleanup;
	}
	if (write_whole_file(dir, "index.html", &html))
		goto cleanup;
	rc = 0;
cleanup:
	text_buf_free(&html);
	umask(old_umask);
	return rc;
}

int report_write_from_db(const char *db_path, const char *dir, const struct report_write_opts *o)
{
	struct report_data d;
	char err[1024];
	int rc;

	if (report_data_load(db_path, o->top_n, &d, err, sizeof(err))) {
		pr_err("%s\n", err);
		return -1;
	}
	rc = report_write_dir(&d, dir, o);
	report_data_free(&d);
	return rc;
}
