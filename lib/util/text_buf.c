/* text_buf.c: a growable text buffer the exporters write into (no I/O). */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/util/text_buf.h"
#include "lib/util/util.h"

int text_buf_reserve(struct text_buf *b, size_t extra)
{
	size_t need, cap;
	char *p;

	if (b->failed)
		return -ENOMEM;
	if (extra > (size_t)-1 - b->len - 1)
		goto fail;
	need = b->len + extra + 1;
	if (need <= b->cap)
		return 0;
	cap = b->cap ? b->cap : 256;
	while (cap < need) {
		if (cap > (size_t)-1 / 2)
			goto fail;
		cap *= 2;
	}
	p = realloc(b->data, cap);
	if (!p)
		goto fail;
	b->data = p;
	b->cap = cap;
	b->data[b->len] = '\0';
	return 0;
fail:
	b->failed = true;
	return -ENOMEM;
}

int text_buf_append(struct text_buf *b, const char *s, size_t n)
{
	if (text_buf_reserve(b, n))
		return -ENOMEM;
	memcpy(b->data + b->len, s, n);
	b->len += n;
	b->data[b->len] = '\0';
	return 0;
}

int text_buf_puts(struct text_buf *b, const char *s)
{
	return text_buf_append(b, s, strlen(s));
}

int text_buf_putc(struct text_buf *b, char c)
{
	return text_buf_append(b, &c, 1);
}

int text_buf_printf(struct text_buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (b->failed)
		return -ENOMEM;
	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || text_buf_reserve(b, (size_t)n))
		return -ENOMEM;
	va_start(ap, fmt);
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
	return 0;
}

void text_buf_reset(struct text_buf *b)
{
	b->len = 0;
	b->failed = false;
	if (b->data)
		b->data[0] = '\0';
}

void text_buf_free(struct text_buf *b)
{
	free(b->data);
	memset(b, 0, sizeof(*b));
}

static int put_text_buf(void *ctx, const char *s, size_t n)
{
	return text_buf_append(ctx, s, n);
}

int text_buf_json_string(struct text_buf *b, const char *s)
{
	json_write_string(put_text_buf, b, s);
	return b->failed ? -ENOMEM : 0;
}

int text_buf_json_double(struct text_buf *b, double v)
{
	char tmp[40];

	if (isnan(v))
		return text_buf_puts(b, "\"NaN\"");
	if (isinf(v))
		return text_buf_puts(b, v > 0 ? "\"Infinity\"" : "\"-Infinity\"");
	snprintf(tmp, sizeof(tmp), "%.15g", v);
	if (strtod(tmp, NULL) != v)
		snprintf(tmp, sizeof(tmp), "%.17g", v);
	return text_buf_puts(b, tmp);
}
