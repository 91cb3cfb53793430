/* parse_num.h: the one checked parser for numbers given on command lines and in files. */
#ifndef AGENTXDP_PARSE_NUM_H
#define AGENTXDP_PARSE_NUM_H

#include <stdint.h>

/*
 * Each returns 0 on success, -EINVAL for text that is not a number of that kind,
 * -ERANGE when outside [min, max]. Leading/trailing spaces are errors; "" is an error.
 */
int parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out);
int parse_double(const char *s, double min, double max, double *out);
/*
 * "250us", "1.5ms", "2s", "1m", "100ns"; a bare number uses default_unit_ns, or is -EINVAL
 * when that is DURATION_UNIT_REQUIRED (a bare 0 is the same in every unit and is accepted).
 */
#define DURATION_UNIT_REQUIRED 0
int parse_duration_ns(const char *s, uint64_t default_unit_ns, uint64_t min_ns, uint64_t max_ns,
		      uint64_t *out);
/* "128", "64k", "10M", "1G" (powers of 1024 when the suffix is k/M/G/KiB/MiB/GiB). */
int parse_size_bytes(const char *s, uint64_t min, uint64_t max, uint64_t *out);
/* "1%", "0.1%", or a fraction "0.001": returns a fraction in [0,1]. */
int parse_fraction(const char *s, double *out);

#endif
