/* sort_u32.h: sort an array of uint32_t ascending (latency samples), faster than qsort. Pure. */
#ifndef AGENTXDP_SORT_U32_H
#define AGENTXDP_SORT_U32_H

#include <stddef.h>
#include <stdint.h>

/*
 * The same order qsort with a numeric comparison gives (the values are plain numbers, so any
 * correct sort gives the same array). LSD radix sort, 8 bits a pass, passes whose byte is the
 * same in every value skipped; insertion sort below 64 values. Scratch: n values, on the
 * stack up to 1024, else malloc (qsort when that fails).
 */
void sort_u32(uint32_t *v, size_t n);

#endif
