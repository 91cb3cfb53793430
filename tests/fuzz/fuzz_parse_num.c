/* fuzz_parse_num.c: every parse_num.h parser on any text, with several bounds; results obey them. */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/util/parse_num.h"

struct u64_bounds {
	uint64_t min, max;
};

static const struct u64_bounds u64_bounds[] = {
	{ 0, UINT64_MAX },
	{ 1, 100 },
	{ 1, 65535 },
	{ 0, (1ull << 53) + 1 },
	{ 0, (1ull << 60) - 1 },	/* not a double: bounds must hold in integers */
	{ 1000, 1000 },
	{ 1ull << 63, UINT64_MAX },
};

static void check_rc(int rc)
{
	if (rc != 0 && rc != -EINVAL && rc != -ERANGE)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);
	double d, plain_value = 0;
	int rc, plain;

	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = 0;	/* parsers see the text up to the first NUL, as argv would give it */
	plain = s[0] >= '0' && s[0] <= '9';
	if (plain) {
		char *end;

		plain_value = strtod(s, &end);
		plain = !*end && isfinite(plain_value);
	}

	for (size_t i = 0; i < sizeof(u64_bounds) / sizeof(u64_bounds[0]); i++) {
		const struct u64_bounds *b = &u64_bounds[i];
		uint64_t v = 0xdeadbeef;

		rc = parse_u64(s, b->min, b->max, &v);
		check_rc(rc);
		if (!rc && (v < b->min || v > b->max))
			abort();
		if (rc && v != 0xdeadbeef)	/* no output on failure */
			abort();

		v = 0xdeadbeef;
		rc = parse_size_bytes(s, b->min, b->max, &v);
		check_rc(rc);
		if (!rc && (v < b->min || v > b->max))
			abort();
		if (rc && v != 0xdeadbeef)
			abort();

		for (uint64_t unit = 1; unit <= 1000000000ull; unit *= 1000) {
			v = 0xdeadbeef;
			rc = parse_duration_ns(s, unit, b->min, b->max, &v);
			check_rc(rc);
			if (!rc && (v < b->min || v > b->max))
				abort();
			/* A bare number in nanoseconds comes back as itself, rounded. */
			if (!rc && unit == 1 && plain && fabs((double)v - plain_value) > plain_value * 1e-15 + 0.5)
				abort();
			if (rc && v != 0xdeadbeef)
				abort();
		}
	}

	static const double dbounds[][2] = { { 0, 1 }, { -1e9, 1e9 }, { 0.5, 0.5 }, { -INFINITY, INFINITY } };
	for (size_t i = 0; i < sizeof(dbounds) / sizeof(dbounds[0]); i++) {
		d = 42;
		rc = parse_double(s, dbounds[i][0], dbounds[i][1], &d);
		check_rc(rc);
		if (!rc && (isnan(d) || d < dbounds[i][0] || d > dbounds[i][1]))
			abort();
	}

	d = 42;
	rc = parse_fraction(s, &d);
	check_rc(rc);
	if (!rc && !(d >= 0 && d <= 1))
		abort();
	free(s);
	return 0;
}
