/* topology.c: links.csv and paths.csv readers (libcsv), with line-numbered errors. */
#include "lib/localize/topology.h"

#include <csv.h>
#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lib/util/parse_num.h"
#include "lib/util/util.h"

#define MAX_FIELDS 64	/* a path of up to 61 links */

struct csv_row {
	char *fields[MAX_FIELDS];
	size_t n_fields;
	bool too_many;
	bool oom;
};

static void row_add_field(void *field, size_t len, void *data)
{
	struct csv_row *row = data;
	char *copy;

	if (row->n_fields >= MAX_FIELDS) {
		row->too_many = true;
		return;
	}
	copy = malloc(len + 1);
	if (!copy) {
		row->oom = true;
		return;
	}
	if (len)
		memcpy(copy, field, len);
	copy[len] = '\0';
	row->fields[row->n_fields++] = copy;
}

static void row_clear(struct csv_row *row)
{
	for (size_t i = 0; i < row->n_fields; i++)
		free(row->fields[i]);
	memset(row, 0, sizeof(*row));
}

/*
 * libcsv grows a field's buffer by a fixed 128 bytes, a realloc each time: quadratic in the
 * field's length wherever realloc moves the block (600k spaces: 8 s under ASan). Growing to
 * the next power of two makes it linear.
 */
static void *csv_grow(void *p, size_t n)
{
	size_t cap = 256;

	if (p && malloc_usable_size(p) >= n)
		return p;
	while (cap < n && cap <= SIZE_MAX / 2)
		cap *= 2;
	return realloc(p, cap < n ? n : cap);
}

/* Strip the spaces and tabs around a field, in one pass (a field may hold megabytes). */
static void trim_field(char *f)
{
	size_t len = strlen(f), lead = 0;

	while (lead < len && (f[lead] == ' ' || f[lead] == '\t'))
		lead++;
	while (len > lead && (f[len - 1] == ' ' || f[len - 1] == '\t'))
		len--;
	memmove(f, f + lead, len - lead);
	f[len - lead] = '\0';
}

/* Length of the line at p: up to its LF, CR or CRLF (all three styles occur), or the end. */
static size_t line_end(const char *p, size_t n)
{
	size_t i = 0;

	while (i < n && p[i] != '\n' && p[i] != '\r')
		i++;
	return i;
}

typedef int (*row_fn)(struct topology *t, struct csv_row *row, char *why, size_t why_len);

/*
 * Split text into lines and each line into fields; call fn for every data row after the
 * header. Lines are parsed one at a time so every error carries its exact line number.
 * need_rows names what a file without data rows lacks (NULL: such a file is fine).
 */
static int parse_rows(struct topology *t, const char *text, size_t len, const char *file,
		      const char *header, size_t header_fields, const char *need_rows, row_fn fn,
		      char *err, size_t err_len)
{
	struct csv_parser parser;
	struct csv_row row = { 0 };
	char why[160];
	size_t line_no = 0, pos = 0, rows = 0;
	bool seen_header = false;
	int ret = 0;

	if (csv_init(&parser, CSV_STRICT | CSV_STRICT_FINI | CSV_APPEND_NULL)) {
		snprintf(err, err_len, "%s: cannot set up the CSV parser", file);
		return -ENOMEM;
	}
	csv_set_realloc_func(&parser, csv_grow);
	if (len >= 3 && !memcmp(text, "\xef\xbb\xbf", 3))
		pos = 3; /* a UTF-8 byte-order mark, as spreadsheet programs write */
	while (pos < len) {
		const char *line = text + pos;
		size_t line_len = line_end(line, len - pos);
		size_t skip = 0;

		pos += line_len;
		if (pos + 1 < len && text[pos] == '\r' && text[pos + 1] == '\n')
			pos += 2;
		else if (pos < len)
			pos++;
		line_no++;
		while (skip < line_len && (line[skip] == ' ' || line[skip] == '\t'))
			skip++;
		if (skip == line_len || line[skip] == '#')
			continue;
		if (memchr(line, '\0', line_len)) {
			snprintf(err, err_len, "%s:%zu: NUL byte in a text file", file, line_no);
			ret = -EINVAL;
			goto cleanup;
		}
		row_clear(&row);
		if (csv_parse(&parser, line, line_len, row_add_field, NULL, &row) != line_len ||
		    csv_fini(&parser, row_add_field, NULL, &row)) {
			snprintf(err, err_len, "%s:%zu: malformed CSV (%s)", file, line_no,
				 csv_strerror(csv_error(&parser)));
			ret = -EINVAL;
			goto cleanup;
		}
		if (row.oom) {
			snprintf(err, err_len, "%s:%zu: out of memory", file, line_no);
			ret = -ENOMEM;
			goto cleanup;
		}
		if (row.too_many) {
			snprintf(err, err_len, "%s:%zu: more than %d fields", file, line_no,
				 MAX_FIELDS);
			ret = -EINVAL;
			goto cleanup;
		}
		for (size_t i = 0; i < row.n_fields; i++)
			trim_field(row.fields[i]); /* tolerate spaces around fields ("a, b") */
		if (!seen_header) {
			/* The header names the columns: compare its first ones. */
			char expect[64], *save = NULL, *name;
			size_t i = 0;
			bool ok = row.n_fields >= header_fields;
			snprintf(expect, sizeof(expect), "%s", header);
			for (name = strtok_r(expect, ",", &save); ok && name && i < header_fields;
			     name = strtok_r(NULL, ",", &save), i++)
				ok = !strcasecmp(row.fields[i], name);
			if (!ok) {
				snprintf(err, err_len, "%s:%zu: expected the header '%s'", file,
					 line_no, header);
				ret = -EINVAL;
				goto cleanup;
			}
			seen_header = true;
			continue;
		}
		why[0] = '\0';
		rows++;
		ret = fn(t, &row, why, sizeof(why));
		if (ret) {
			snprintf(err, err_len, "%s:%zu: %s", file, line_no,
				 why[0] ? why : strerror(-ret));
			goto cleanup;
		}
	}
	if (!seen_header) {
		snprintf(err, err_len, "%s:%zu: empty file, expected the header '%s'", file,
			 line_no, header);
		ret = -EINVAL;
	} else if (need_rows && !rows) {
		/* An empty topology blames nothing: say so rather than run without one. */
		snprintf(err, err_len, "%s: no %s after the header", file, need_rows);
		ret = -EINVAL;
	}
cleanup:
	row_clear(&row);
	csv_free(&parser);
	return ret;
}

static int links_row(struct topology *t, struct csv_row *row, char *why, size_t why_len)
{
	int ret;

	if (row->n_fields < 3) {
		snprintf(why, why_len, "%zu fields, expected 3 (link,a,b)", row->n_fields);
		return -EINVAL;
	}
	ret = topology_add_link(t, row->fields[0], row->fields[1], row->fields[2]);
	if (ret == -EEXIST)
		snprintf(why, why_len, "link '%s' is defined twice", row->fields[0]);
	else if (ret == -EINVAL)
		snprintf(why, why_len,
			 "bad link: names must be 1-%d characters and a must differ from b",
			 TOPO_NAME_MAX - 1);
	return ret;
}

static int paths_row(struct topology *t, struct csv_row *row, char *why, size_t why_len)
{
	uint8_t src[16], dst[16];
	uint32_t links[MAX_FIELDS];
	uint64_t sport;
	size_t n = 0;

	if (row->n_fields < 4) {
		snprintf(why, why_len, "%zu fields, expected src,dst,udp_sport and 1 or more links",
			 row->n_fields);
		return -EINVAL;
	}
	if (topo_parse_addr(row->fields[0], src) || topo_parse_addr(row->fields[1], dst)) {
		snprintf(why, why_len, "'%s' is not an IP address",
			 topo_parse_addr(row->fields[0], src) ? row->fields[0] : row->fields[1]);
		return -EINVAL;
	}
	if (parse_u64(row->fields[2], 0, 65535, &sport)) {
		snprintf(why, why_len, "udp_sport '%s' is not a number in 0-65535",
			 row->fields[2]);
		return -EINVAL;
	}
	/* Links as further columns, or as one field of space-separated names, or both. A
	 * field that is itself a link's name (names may hold spaces or tabs) is that link. */
	for (size_t i = 3; i < row->n_fields; i++) {
		char *save = NULL;
		bool whole = topology_link_by_name(t, row->fields[i]) >= 0;

		for (char *name = whole ? row->fields[i] : strtok_r(row->fields[i], " \t", &save); name;
		     name = whole ? NULL : strtok_r(NULL, " \t", &save)) {
			long idx = topology_link_by_name(t, name);

			if (idx < 0) {
				snprintf(why, why_len, "link '%s' is not in links.csv", name);
				return -EINVAL;
			}
			if (n == ARRAY_SIZE(links)) {
				snprintf(why, why_len, "more than %zu links in one path", ARRAY_SIZE(links));
				return -EINVAL;
			}
			links[n++] = (uint32_t)idx;
		}
	}
	if (topology_find_path(t, src, dst, (uint16_t)sport)) {
		snprintf(why, why_len, "path %s -> %s udp_sport %s is listed twice",
			 row->fields[0], row->fields[1], row->fields[2]);
		return -EEXIST;
	}
	return topology_add_path(t, src, dst, (uint16_t)sport, links, n, why, why_len);
}

int topology_parse_links(struct topology *t, const char *text, size_t len, const char *file,
			 char *err, size_t err_len)
{
	return parse_rows(t, text, len, file, "link,a,b", 3, "links", links_row, err, err_len);
}

int topology_parse_paths(struct topology *t, const char *text, size_t len, const char *file,
			 char *err, size_t err_len)
{
	return parse_rows(t, text, len, file, "src,dst,udp_sport", 3, NULL, paths_row, err, err_len);
}

static int read_file(const char *path, char **text, size_t *len, char *err, size_t err_len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t cap = 0, n = 0;

	if (!f) {
		snprintf(err, err_len, "%s: cannot open: %s", path, strerror(errno));
		return -errno;
	}
	for (;;) {
		if (n == cap) {
			char *bigger = realloc(buf, cap ? cap * 2 : 65536);
			if (!bigger) {
				snprintf(err, err_len, "%s: out of memory", path);
				free(buf);
				fclose(f);
				return -ENOMEM;
			}
			buf = bigger;
			cap = cap ? cap * 2 : 65536;
		}
		size_t got = fread(buf + n, 1, cap - n, f);
		n += got;
		if (got == 0)
			break;
	}
	if (ferror(f)) {
		snprintf(err, err_len, "%s: read error: %s", path, strerror(errno));
		free(buf);
		fclose(f);
		return -EIO;
	}
	fclose(f);
	*text = buf;
	*len = n;
	return 0;
}

int topology_load(struct topology *t, const char *links_csv, const char *paths_csv, char *err,
		  size_t err_len)
{
	char *text = NULL;
	size_t len = 0;
	int ret;

	ret = read_file(links_csv, &text, &len, err, err_len);
	if (ret)
		return ret;
	ret = topology_parse_links(t, text, len, links_csv, err, err_len);
	free(text);
	if (ret || !paths_csv)
		return ret;
	ret = read_file(paths_csv, &text, &len, err, err_len);
	if (ret)
		return ret;
	ret = topology_parse_paths(t, text, len, paths_csv, err, err_len);
	free(text);
	return ret;
}
