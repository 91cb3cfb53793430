/* parse_num.c: checked number parsing with bounds (curl STRPARSE habits: no silent wrap). */
#include "lib/util/parse_num.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

int parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long long v;
	int base;

	if (!s || !*s || !isdigit((unsigned char)s[0]))
		return -EINVAL;
	/* Hex with 0x, else decimal: a QPN typed as 0011a8's decimal twin "004520" is 4520,
	 * not octal (strtoull's base 0 would read a leading zero as octal). */
	base = (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) ? 16 : 10;
	errno = 0;
	v = strtoull(s, &end, base);
	if (*end || end == s)
		return -EINVAL;
	if (errno == ERANGE || v < min || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

int parse_double(const char *s, double min, double max, double *out)
{
	char *end;
	double v;

	if (!s || !*s || isspace((unsigned char)s[0]))
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (*end || end == s || isnan(v))
		return -EINVAL;
	if (errno == ERANGE || v < min || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

/* Split "12.5ms" into the number and its suffix; the suffix must be one of units[]. */
struct unit {
	const char *suffix;
	double scale;
};

static int parse_with_unit(const char *s, const struct unit *units, double default_scale,
			   double *out)
{
	char *end;
	double v;

	if (!s || !*s || !(isdigit((unsigned char)s[0]) || s[0] == '.'))
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (end == s || errno == ERANGE || isnan(v) || isinf(v))
		return -EINVAL;
	if (!*end) {
		if (default_scale == 0 && v != 0)
			return -EINVAL; /* a unit is required: "10" is not 10 of anything */
		*out = v * default_scale;
		return 0;
	}
	for (const struct unit *u = units; u->suffix; u++) {
		if (!strcmp(end, u->suffix)) {
			*out = v * u->scale;
			return 0;
		}
	}
	return -EINVAL;
}

int parse_duration_ns(const char *s, uint64_t default_unit_ns, uint64_t min_ns, uint64_t max_ns,
		      uint64_t *out)
{
	static const struct unit units[] = {
		{ "ns", 1 },	   { "us", 1e3 },  { "ms", 1e6 },    { "s", 1e9 },
		{ "m", 60e9 },	   { "min", 60e9 }, { "h", 3600e9 }, { NULL, 0 },
	};
	double ns;
	uint64_t v;
	int err = parse_with_unit(s, units, (double)default_unit_ns, &ns);

	if (err)
		return err;
	/* 2^64 and up do not fit; llround() would overflow past 2^63. Bounds are checked
	 * on the integer, as (double)max can round up past max. */
	if (ns + 0.5 >= 18446744073709551616.0)
		return -ERANGE;
	v = (uint64_t)(ns + 0.5);
	if (v < min_ns || v > max_ns)
		return -ERANGE;
	*out = v;
	return 0;
}

int parse_size_bytes(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	static const struct unit units[] = {
		{ "k", 1024.0 }, { "K", 1024.0 }, { "KiB", 1024.0 }, { "M", 1048576.0 },
		{ "MiB", 1048576.0 }, { "G", 1073741824.0 }, { "GiB", 1073741824.0 },
		{ "B", 1 }, { NULL, 0 },
	};
	double bytes;
	int err = parse_with_unit(s, units, 1, &bytes);

	if (err)
		return err;
	if (bytes != floor(bytes))
		return -EINVAL;
	/* Bounds on the integer: (double)max can round up past max. */
	if (bytes >= 18446744073709551616.0 || (uint64_t)bytes < min || (uint64_t)bytes > max)
		return -ERANGE;
	*out = (uint64_t)bytes;
	return 0;
}

int parse_fraction(const char *s, double *out)
{
	size_t n = s ? strlen(s) : 0;
	double v;
	int err;

	if (n > 1 && s[n - 1] == '%') {
		char buf[64];
		if (n >= sizeof(buf))
			return -EINVAL;
		memcpy(buf, s, n - 1);
		buf[n - 1] = 0;
		err = parse_double(buf, 0, 100, &v);
		if (err)
			return err;
		*out = v / 100;
		return 0;
	}
	err = parse_double(s, 0, 1, &v);
	if (err)
		return err;
	*out = v;
	return 0;
}
