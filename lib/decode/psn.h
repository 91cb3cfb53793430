/* psn.h: Packet Sequence Number arithmetic, modulo 2^24 (IBA 9.7.1). The one place PSNs compare. */
#ifndef AGENTXDP_PSN_H
#define AGENTXDP_PSN_H

#include <stdint.h>
#include <stdbool.h>

#define PSN_MASK 0xffffffu
#define PSN_HALF 0x800000u

static inline uint32_t psn_add(uint32_t psn, uint32_t n)
{
	return (psn + n) & PSN_MASK;
}

/* Signed distance from a to b in the 24-bit circle: >0 when b is after a. */
static inline int32_t psn_diff(uint32_t b, uint32_t a)
{
	uint32_t d = (b - a) & PSN_MASK;
	return d >= PSN_HALF ? (int32_t)d - (int32_t)(1u << 24) : (int32_t)d;
}

static inline bool psn_before(uint32_t a, uint32_t b)
{
	return psn_diff(b, a) > 0;
}

static inline bool psn_after(uint32_t a, uint32_t b)
{
	return psn_diff(a, b) > 0;
}

/* a <= x <= b, going forward from a. */
static inline bool psn_in_range(uint32_t x, uint32_t a, uint32_t b)
{
	return ((x - a) & PSN_MASK) <= ((b - a) & PSN_MASK);
}

#endif
