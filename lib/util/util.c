/* util.c: array growth, address text and JSON string escaping, each kept once. */
#include "lib/util/util.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

int util_ensure_mem_max(void **data, size_t *cap, size_t elem_size, size_t need, size_t max_cap)
{
	size_t new_cap;
	void *p;

	if (need <= *cap)
		return 0;
	if (need > max_cap)
		return -E2BIG;
	new_cap = *cap + *cap / 2;
	if (new_cap < 16)
		new_cap = 16;
	if (new_cap < need)
		new_cap = need;
	if (new_cap > max_cap)
		new_cap = max_cap;
	if (elem_size && new_cap > SIZE_MAX / elem_size)
		return -EOVERFLOW;
	p = realloc(*data, new_cap * elem_size);
	if (!p)
		return -ENOMEM;
	*data = p;
	*cap = new_cap;
	return 0;
}

int util_ensure_mem(void **data, size_t *cap, size_t elem_size, size_t need)
{
	return util_ensure_mem_max(data, cap, elem_size, need, SIZE_MAX);
}

/* 0100::/64 is discard-only (RFC 6666): no GID and no packet source uses it. */
static const uint8_t lid_prefix[14] = { 0x01, 0x00 };

void addr_from_lid(uint8_t addr[16], uint16_t lid)
{
	memcpy(addr, lid_prefix, sizeof(lid_prefix));
	addr[14] = (uint8_t)(lid >> 8);
	addr[15] = (uint8_t)lid;
}

int addr_lid(const uint8_t addr[16])
{
	if (addr[0] != 0x01 || memcmp(addr, lid_prefix, sizeof(lid_prefix)))
		return -1;
	return addr[14] << 8 | addr[15];
}

int addr_parse_lid(const char *text, uint8_t addr[16])
{
	unsigned long lid;
	char *end;
	int base = 10;

	if (strncasecmp(text, "lid", 3))
		return -EINVAL;
	text += 3;
	if (*text == ':')
		text++;
	while (*text == ' ')
		text++;
	if (text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
		base = 16;
		text += 2;
	}
	if (!isxdigit((unsigned char)*text))
		return -EINVAL;
	errno = 0;
	lid = strtoul(text, &end, base);
	if (errno || *end || lid > 0xffff)
		return -EINVAL;
	addr_from_lid(addr, (uint16_t)lid);
	return 0;
}

int addr_is_v4mapped(const uint8_t addr[16])
{
	static const uint8_t v4mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	return !memcmp(addr, v4mapped, sizeof(v4mapped));
}

const char *addr_str(const uint8_t addr[16], char *buf, size_t len)
{
	if (!buf || len == 0)
		return "";
	if (addr_lid(addr) >= 0) {
		snprintf(buf, len, "LID %d", addr_lid(addr));
	} else if (addr_is_v4mapped(addr)) {
		if (!inet_ntop(AF_INET, addr + 12, buf, (socklen_t)len))
			buf[0] = '\0';
	} else if (!inet_ntop(AF_INET6, addr, buf, (socklen_t)len)) {
		buf[0] = '\0';
	}
	return buf;
}

/* Length of the valid UTF-8 sequence at p (1-4), or 0 when it is not one. */
static size_t utf8_seq_len(const unsigned char *p)
{
	uint32_t cp;
	size_t n;

	if (p[0] < 0x80)
		return 1;
	if ((p[0] & 0xe0) == 0xc0)
		n = 2, cp = p[0] & 0x1f;
	else if ((p[0] & 0xf0) == 0xe0)
		n = 3, cp = p[0] & 0x0f;
	else if ((p[0] & 0xf8) == 0xf0)
		n = 4, cp = p[0] & 0x07;
	else
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80) /* also stops at the NUL */
			return 0;
		cp = (cp << 6) | (p[i] & 0x3f);
	}
	/* Reject overlong forms, surrogates and code points past U+10FFFF. */
	if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return 0;
	return n;
}

int json_write_string(json_put_fn put, void *ctx, const char *s)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	const unsigned char *run = p;	/* start of bytes that pass through unchanged */
	char esc[8];
	const char *rep;
	size_t n;
	int err;

#define FLUSH_RUN()                                                                    \
	do {                                                                           \
		if (p > run && (err = put(ctx, (const char *)run, (size_t)(p - run))) < 0) \
			return err;                                                    \
	} while (0)

	if ((err = put(ctx, "\"", 1)) < 0)
		return err;
	while (*p) {
		rep = NULL;
		switch (*p) {
		case '"': rep = "\\\""; break;
		case '\\': rep = "\\\\"; break;
		case '\n': rep = "\\n"; break;
		case '\r': rep = "\\r"; break;
		case '\t': rep = "\\t"; break;
		default:
			if (*p < 0x20) {
				snprintf(esc, sizeof(esc), "\\u%04x", *p);
				rep = esc;
				break;
			}
			n = utf8_seq_len(p);
			if (n) {
				p += n;
				continue;
			}
			rep = "\xef\xbf\xbd";
		}
		FLUSH_RUN();
		if ((err = put(ctx, rep, strlen(rep))) < 0)
			return err;
		run = ++p;
	}
	FLUSH_RUN();
#undef FLUSH_RUN
	return put(ctx, "\"", 1);
}

static int put_file(void *ctx, const char *s, size_t n)
{
	return fwrite(s, 1, n, (FILE *)ctx) == n ? 0 : -EIO;
}

int json_fput_string(FILE *f, const char *s)
{
	return json_write_string(put_file, f, s);
}

double util_thread_cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

void *util_line_calloc(size_t n, size_t size)
{
	size_t bytes;
	void *p;

	if (size && n > (SIZE_MAX - UTIL_LINE_BYTES) / size)
		return NULL;
	bytes = (n * size + UTIL_LINE_BYTES - 1) / UTIL_LINE_BYTES * UTIL_LINE_BYTES;
	p = aligned_alloc(UTIL_LINE_BYTES, bytes ? bytes : UTIL_LINE_BYTES);
	if (p)
		memset(p, 0, bytes);
	return p;
}
