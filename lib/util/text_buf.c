/* text_buf.c: a growable text buffer the exporters write into (no I/O). */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/util/text_buf.h"

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

/* Length of the valid UTF-8 sequence at p (1..4), or 0 if it is not valid UTF-8. */
static size_t utf8_seq_len(const unsigned char *p)
{
	size_t n, i;
	uint32_t cp;

	if (p[0] < 0x80)
		return 1;
	if ((p[0] & 0xe0) == 0xc0) {
		n = 2;
		cp = p[0] & 0x1f;
	} else if ((p[0] & 0xf0) == 0xe0) {
		n = 3;
		cp = p[0] & 0x0f;
	} else if ((p[0] & 0xf8) == 0xf0) {
		n = 4;
		cp = p[0] & 0x07;
	} else {
		return 0;
	}
	for (i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)	/* also stops at the NUL */
			return 0;
		cp = (cp << 6) | (p[i] & 0x3f);
	}
	/* Reject overlong forms, surrogates and code points past U+10FFFF. */
	if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return 0;
	return n;
}

int text_buf_json_string(struct text_buf *b, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n;

	text_buf_putc(b, '"');
	while (*p) {
		switch (*p) {
		case '"':
			text_buf_append(b, "\\\"", 2);
			break;
		case '\\':
			text_buf_append(b, "\\\\", 2);
			break;
		case '\n':
			text_buf_append(b, "\\n", 2);
			break;
		case '\r':
			text_buf_append(b, "\\r", 2);
			break;
		case '\t':
			text_buf_append(b, "\\t", 2);
			break;
		default:
			if (*p < 0x20) {
				text_buf_printf(b, "\\u%04x", *p);
				break;
			}
			n = utf8_seq_len(p);
			if (!n) {
				text_buf_puts(b, "\xef\xbf\xbd");
				break;
			}
			text_buf_append(b, (const char *)p, n);
			p += n;
			continue;
		}
		p++;
	}
	text_buf_putc(b, '"');
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
