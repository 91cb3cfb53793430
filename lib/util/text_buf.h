/* text_buf.h: a growable text buffer the exporters write into (no I/O). */
#ifndef AGENTXDP_TEXT_BUF_H
#define AGENTXDP_TEXT_BUF_H

#include <stdbool.h>
#include <stddef.h>

struct text_buf {
	char *data;		/* NUL-terminated when len > 0 or after text_buf_reserve() */
	size_t len;		/* bytes written, without the NUL */
	size_t cap;		/* bytes allocated */
	bool failed;		/* an allocation failed: the text is incomplete */
};

/* All return 0 or -ENOMEM; after a failure every later call fails too (check once at the end). */
int text_buf_reserve(struct text_buf *b, size_t extra);
int text_buf_append(struct text_buf *b, const char *s, size_t n);
int text_buf_puts(struct text_buf *b, const char *s);
int text_buf_putc(struct text_buf *b, char c);
__attribute__((format(printf, 2, 3))) int text_buf_printf(struct text_buf *b, const char *fmt, ...);
/* A JSON string literal with its quotes: escapes " \ and control bytes; invalid UTF-8 -> U+FFFD. */
int text_buf_json_string(struct text_buf *b, const char *s);
/* A JSON number; NaN and infinities (not JSON numbers) as the proto3 JSON strings. */
int text_buf_json_double(struct text_buf *b, double v);
void text_buf_reset(struct text_buf *b);	/* empty, keep the allocation */
void text_buf_free(struct text_buf *b);

#endif
