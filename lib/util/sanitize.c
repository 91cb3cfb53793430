/* sanitize.c: the one sanitizer for untrusted text printed on terminals and in reports. */
#include "lib/util/sanitize.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/*
 * The code point of the UTF-8 sequence at s (n bytes left), its length in *seq_len; -1 when
 * the sequence is invalid (bad lead, missing or bad continuation, overlong, surrogate,
 * past U+10FFFF). RFC 3629 section 4 gives the valid byte ranges.
 */
static int32_t utf8_decode(const unsigned char *s, size_t n, size_t *seq_len)
{
	int32_t cp, min;
	size_t len;

	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2, cp = s[0] & 0x1f, min = 0x80;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3, cp = s[0] & 0x0f, min = 0x800;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4, cp = s[0] & 0x07, min = 0x10000;
	else
		return -1;
	if (n < len)
		return -1;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return -1;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return -1;
	*seq_len = len;
	return cp;
}

/* Code points a terminal or a text viewer obeys instead of showing: C1 controls, bidi. */
static bool cp_is_hidden_control(int32_t cp)
{
	return (cp >= 0x80 && cp <= 0x9f) || cp == 0x200e || cp == 0x200f ||
	       (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069);
}

const char *sanitize_text(const char *in, char *buf, size_t len)
{
	const unsigned char *s = (const unsigned char *)(in ? in : "");
	size_t n = strlen((const char *)s), o = 0;

	if (!len)
		return buf;
	while (n) {
		char piece[8];
		const char *src = piece;
		size_t piece_len, seq_len = 1;

		if ((s[0] >= 0x20 && s[0] < 0x7f) || s[0] == '\t') {
			src = (const char *)s;
			piece_len = 1;
		} else if (s[0] < 0x80) {
			piece_len = (size_t)snprintf(piece, sizeof(piece), "\\x%02x", s[0]);
		} else {
			int32_t cp = utf8_decode(s, n, &seq_len);

			if (cp < 0) {
				seq_len = 1;
				piece_len = (size_t)snprintf(piece, sizeof(piece), "\\x%02x", s[0]);
			} else if (cp_is_hidden_control(cp)) {
				piece_len = (size_t)snprintf(piece, sizeof(piece), "\\u%04x", (unsigned int)cp);
			} else {
				src = (const char *)s;
				piece_len = seq_len;
			}
		}
		if (o + piece_len >= len)
			break;
		memcpy(buf + o, src, piece_len);
		o += piece_len;
		s += seq_len;
		n -= seq_len;
	}
	buf[o] = '\0';
	return buf;
}
