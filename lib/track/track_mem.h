/*
 * track_mem.h: the tracker's per-flow arrays (PSN rings and their sets, latency samples, the
 * window's samples), carved from 2 MB blocks the kernel is asked to back with huge pages.
 */
#ifndef AGENTXDP_TRACK_MEM_H
#define AGENTXDP_TRACK_MEM_H

#include <stddef.h>

#define TRACK_MEM_CLASSES 16	/* 64 B, 128 B, ... 2 MB */

/* All zero is an empty allocator. */
struct track_mem {
	unsigned char *cur;		/* uncarved rest of the newest block */
	size_t left;
	void *free_list[TRACK_MEM_CLASSES];
	void **blocks;
	size_t n_blocks, cap_blocks;
	size_t max_blocks;		/* 0: no limit; else a block past it fails as ENOMEM */
	/* Under AddressSanitizer the allocator is plain malloc unless this is set before the
	 * first allocation (its own tests do); without ASan it is ignored. */
	unsigned char pool_under_asan;
};

/* n bytes (rounded up to a power of two), 64-byte aligned, not cleared; NULL on ENOMEM.
 * Past 2 MB the piece is the system's (aligned_alloc) and only track_mem_free returns it. */
void *track_mem_alloc(struct track_mem *m, size_t n);
/* p from track_mem_alloc(m, n) with the same n (NULL is ignored). */
void track_mem_free(struct track_mem *m, void *p, size_t n);
/* A block of new_n bytes holding the first min(old_n, new_n) of p; p is freed. NULL on ENOMEM
 * (p is kept). */
void *track_mem_realloc(struct track_mem *m, void *p, size_t old_n, size_t new_n);
/*
 * util_ensure_mem() for one big array (a snapshot of every flow): from 1 MB on, on 2 MB pages
 * of its own (a hint; free() frees it), its capacity rounded up to them. 0, or -ENOMEM.
 */
int track_mem_ensure_big(void **p, size_t *cap, size_t elem, size_t need);
/* Every block back to the system; max_blocks and pool_under_asan stay. */
void track_mem_release(struct track_mem *m);

#endif
