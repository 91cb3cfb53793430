/* capture_filter.c: parse agentxdp-capture's small --filter grammar (see capture_filter.h). */
#include "lib/capture/capture_filter.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "lib/util/parse_num.h"
#include "lib/util/util.h"

#define MAX_FILTER_WORDS 32

__attribute__((format(printf, 3, 4))) static int set_err(char *err, size_t err_len, const char *fmt,
							   ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, err_len, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* ADDRESS -> 16 bytes, IPv4 stored v4-mapped. */
static int parse_address(const char *text, struct roce_cap_host_filter *h)
{
	struct in_addr v4;

	memset(h->addr, 0, sizeof(h->addr));
	if (inet_pton(AF_INET, text, &v4) == 1) {
		h->addr[10] = h->addr[11] = 0xff;
		memcpy(&h->addr[12], &v4, 4);
		h->ipv4 = 1;
		return 0;
	}
	if (inet_pton(AF_INET6, text, h->addr) == 1) {
		h->ipv4 = addr_is_v4mapped(h->addr);
		return 0;
	}
	return -EINVAL;
}

int capture_filter_parse(const char *text, struct capture_filter *f, char *err, size_t err_len)
{
	char buf[512], *words[MAX_FILTER_WORDS], *save = NULL;
	size_t n = 0, i = 0;

	if (strlen(text) >= sizeof(buf))
		return set_err(err, err_len, "filter too long (%s)", "max 511 characters");
	strcpy(buf, text);
	for (char *w = strtok_r(buf, " \t\n", &save); w; w = strtok_r(NULL, " \t\n", &save)) {
		if (n == MAX_FILTER_WORDS)
			return set_err(err, err_len, "filter has too many words (%s)", "max 32");
		words[n++] = w;
	}
	if (n == 0)
		return set_err(err, err_len, "empty filter%s", "");

	while (i < n) {
		if (!strcmp(words[i], "qpn")) {
			uint64_t qpn;

			if (i + 1 >= n)
				return set_err(err, err_len, "filter: 'qpn' needs a number%s", "");
			if (parse_u64(words[i + 1], 0, 0xffffff, &qpn))
				return set_err(err, err_len,
					       "filter: bad QPN '%s' (a number 0..0xffffff)", words[i + 1]);
			if (f->has_qpn)
				return set_err(err, err_len, "filter: at most one 'qpn'%s", "");
			f->has_qpn = true;
			f->qpn = (uint32_t)qpn;
			i += 2;
		} else {
			struct roce_cap_host_filter h = { .dir = ROCE_CAP_DIR_ANY };

			if (!strcmp(words[i], "src") || !strcmp(words[i], "dst")) {
				h.dir = words[i][0] == 's' ? ROCE_CAP_DIR_SRC : ROCE_CAP_DIR_DST;
				i++;
			}
			if (i >= n || strcmp(words[i], "host"))
				return set_err(err, err_len,
					       "filter: unexpected '%s' (expected [src|dst] host ADDRESS, "
					       "qpn NUMBER, joined by 'and')",
					       i < n ? words[i] : "end of filter");
			if (i + 1 >= n)
				return set_err(err, err_len, "filter: 'host' needs an address%s", "");
			if (parse_address(words[i + 1], &h))
				return set_err(err, err_len, "filter: bad address '%s' (IPv4 or IPv6)",
					       words[i + 1]);
			if (f->n_hosts == ROCE_CAP_MAX_HOSTS)
				return set_err(err, err_len, "filter: at most two 'host' primitives%s", "");
			f->hosts[f->n_hosts++] = h;
			i += 2;
		}
		if (i < n) {
			if (strcmp(words[i], "and"))
				return set_err(err, err_len,
					       "filter: expected 'and' before '%s' (only 'and' is supported)",
					       words[i]);
			if (++i >= n)
				return set_err(err, err_len, "filter: nothing after 'and'%s", "");
		}
	}
	return 0;
}

void capture_filter_format(const struct capture_filter *f, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = 0;
	for (unsigned i = 0; i < f->n_hosts && off < len; i++) {
		char addr[ADDR_STR_LEN];
		const struct roce_cap_host_filter *h = &f->hosts[i];
		const char *dir = h->dir == ROCE_CAP_DIR_SRC ? "src " : h->dir == ROCE_CAP_DIR_DST ? "dst " : "";

		/* h->ipv4 is set exactly when addr is v4-mapped (parse_address()). */
		off += (size_t)snprintf(buf + off, len - off, "%s%shost %s", off ? " and " : "", dir,
					addr_str(h->addr, addr, sizeof(addr)));
	}
	if (f->has_qpn && off < len)
		snprintf(buf + off, len - off, "%sqpn 0x%x", off ? " and " : "", f->qpn);
}
