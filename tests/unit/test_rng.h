/*
 * test_rng.h: the unit tests' pseudo-random numbers (Marsaglia's xorshift64), one fixed
 * seed per test binary so that every run draws the same cases.
 */
#ifndef AGENTXDP_TEST_RNG_H
#define AGENTXDP_TEST_RNG_H

#include <stdint.h>

static uint64_t rng_state = 88172645463325252ull;

static inline uint64_t rng64(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

/* 32 bits from the middle of the state. */
static inline uint32_t rng32(void)
{
	return (uint32_t)(rng64() >> 16);
}

#endif
