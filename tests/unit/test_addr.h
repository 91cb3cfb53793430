/* test_addr.h: the unit tests' host addresses, as the decoder stores them. */
#ifndef AGENTXDP_TEST_ADDR_H
#define AGENTXDP_TEST_ADDR_H

#include <stdint.h>
#include <string.h>

/* 198.18.0.last (the tests' own network, RFC 2544), IPv4-mapped as in struct roce_pkt. */
static inline void test_host_addr(uint8_t a[16], int last)
{
	memset(a, 0, 16);
	a[10] = a[11] = 0xff;
	a[12] = 198;
	a[13] = 18;
	a[15] = (uint8_t)last;
}

#endif
