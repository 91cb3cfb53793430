/* sanitize.h: untrusted text made safe to print on a terminal or in a report. */
#ifndef AGENTXDP_SANITIZE_H
#define AGENTXDP_SANITIZE_H

#include <stddef.h>

/*
 * The buffer that holds any string of n bytes (NUL included) sanitized without truncation:
 * the worst case is every byte becoming "\xNN".
 */
#define SANITIZE_BUF_LEN(n) (4 * (n) + 1)

/*
 * Copy in (NULL reads as "") into buf as text a terminal shows and cannot obey: C0 controls
 * but tab, and DEL, become "\x1b"; C1 controls (U+0080-U+009F) and the bidi marks, embeddings,
 * overrides and isolates (U+200E, U+200F, U+202A-U+202E, U+2066-U+2069) become "\u202e";
 * each byte of invalid UTF-8 becomes "\xNN". Printable ASCII and valid UTF-8 are copied as
 * they are, so a plain name comes out byte-identical, and sanitizing twice changes nothing.
 * The output is always NUL-terminated (when len > 0) and cut only between whole characters
 * or escapes. Returns buf.
 */
const char *sanitize_text(const char *in, char *buf, size_t len);

#endif
