/*
 * track_mem.c: the tracker's per-flow arrays from 2 MB blocks on huge pages (no I/O).
 *
 * Every packet reads a ring slot, and every ACK writes the tail of a latency array and a window
 * array, each on a page of its own flow: with 4 KB pages most of those accesses began with a
 * TLB miss (the same build with glibc's heap on 2 MB pages ran about 9% faster). Sizes are
 * powers of two, freed blocks wait in a list per size for the next flow; a block goes back to
 * the system only with the tracker. Under AddressSanitizer it is plain malloc, so the tests
 * still see every overflow, unless the allocator asks for the pool (its own unit test).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "lib/track/track_mem.h"
#include "lib/util/util.h"

#define BLOCK_BYTES (2u << 20)
#define MIN_SHIFT 6
#define MAX_BYTES ((SIZE_MAX >> 1) + 1) /* the largest power of two */

#if defined(__SANITIZE_ADDRESS__)
#define TRACK_MEM_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TRACK_MEM_ASAN 1
#endif
#endif

/* Plain malloc: under ASan, unless this allocator's test asked for the pool. */
static int plain(const struct track_mem *m)
{
#ifdef TRACK_MEM_ASAN
	return !m->pool_under_asan;
#else
	(void)m;
	return 0;
#endif
}

static unsigned size_class(size_t n)
{
	unsigned shift = n <= (1u << MIN_SHIFT) ? MIN_SHIFT : 64 - (unsigned)__builtin_clzll(n - 1);

	return shift - MIN_SHIFT;
}

/* A new block; what is left of the old one goes to the free lists, largest pieces first. */
static int new_block(struct track_mem *m)
{
	void *b;

	if (m->max_blocks && m->n_blocks >= m->max_blocks)
		return -1;
	if (util_ensure_mem((void **)&m->blocks, &m->cap_blocks, sizeof(*m->blocks), m->n_blocks + 1))
		return -1;
	b = aligned_alloc(BLOCK_BYTES, BLOCK_BYTES);
	if (!b)
		return -1;
	madvise(b, BLOCK_BYTES, MADV_HUGEPAGE); /* a hint: without it, 4 KB pages */
	m->blocks[m->n_blocks++] = b;
	while (m->left >= (1u << MIN_SHIFT)) {
		unsigned c = size_class(m->left + 1) - 1; /* the largest class that fits */
		size_t sz = (size_t)1 << (c + MIN_SHIFT);

		track_mem_free(m, m->cur, sz);
		m->cur += sz;
		m->left -= sz;
	}
	m->cur = b;
	m->left = BLOCK_BYTES;
	return 0;
}

void *track_mem_alloc(struct track_mem *m, size_t n)
{
	unsigned c;
	size_t sz;
	void *p;

	if (n > MAX_BYTES)
		return NULL; /* no power of two holds it (and 1 << 64 is undefined) */
	c = size_class(n);
	sz = (size_t)1 << (c + MIN_SHIFT);
	if (plain(m))
		return malloc(n ? n : 1);
	/* Beyond a block, the system's: of the rounded size, since realloc within the class
	 * keeps the piece, and 64-byte aligned as every piece (malloc gives 16). */
	if (c >= TRACK_MEM_CLASSES)
		return aligned_alloc(1u << MIN_SHIFT, sz);
	if (m->free_list[c]) {
		p = m->free_list[c];
		m->free_list[c] = *(void **)p;
		return p;
	}
	/* A freed larger piece before a new one: split, its halves to the lists below it. */
	for (unsigned j = c + 1; j < TRACK_MEM_CLASSES; j++) {
		if (!m->free_list[j])
			continue;
		p = m->free_list[j];
		m->free_list[j] = *(void **)p;
		while (j-- > c)
			track_mem_free(m, (unsigned char *)p + ((size_t)1 << (j + MIN_SHIFT)),
				       (size_t)1 << (j + MIN_SHIFT));
		return p;
	}
	if (m->left < sz && new_block(m))
		return NULL;
	p = m->cur; /* every size is a multiple of 64 bytes: pieces stay 64-byte aligned */
	m->cur += sz;
	m->left -= sz;
	return p;
}

void track_mem_free(struct track_mem *m, void *p, size_t n)
{
	unsigned c = size_class(n);

	if (!p)
		return;
	if (plain(m) || c >= TRACK_MEM_CLASSES) {
		free(p);
		return;
	}
	*(void **)p = m->free_list[c];
	m->free_list[c] = p;
}

void *track_mem_realloc(struct track_mem *m, void *p, size_t old_n, size_t new_n)
{
	void *q;

	if (plain(m))
		return realloc(p, new_n ? new_n : 1);
	if (p && size_class(old_n) == size_class(new_n))
		return p;
	q = track_mem_alloc(m, new_n);
	if (!q)
		return NULL;
	if (p)
		memcpy(q, p, old_n < new_n ? old_n : new_n);
	track_mem_free(m, p, old_n);
	return q;
}

/*
 * A snapshot writes every flow's statistics once into a fresh array: on 4 KB pages that was a
 * page fault per 9 flows (~20 us each on this guest, a quarter of a -j 2 run's faults).
 */
int track_mem_ensure_big(void **p, size_t *cap, size_t elem, size_t need)
{
	size_t bytes;
	void *q;

	if (need <= *cap)
		return 0;
	if (!elem || need > (SIZE_MAX - BLOCK_BYTES) / elem)
		return -ENOMEM;
	bytes = need * elem;
	if (bytes < BLOCK_BYTES / 2)
		return util_ensure_mem(p, cap, elem, need);
	bytes = (bytes + BLOCK_BYTES - 1) & ~(size_t)(BLOCK_BYTES - 1);
	q = aligned_alloc(BLOCK_BYTES, bytes);
	if (!q)
		return -ENOMEM;
	madvise(q, bytes, MADV_HUGEPAGE);
	if (*p)
		memcpy(q, *p, *cap * elem);
	free(*p);
	*p = q;
	*cap = bytes / elem;
	return 0;
}

void track_mem_release(struct track_mem *m)
{
	size_t max_blocks = m->max_blocks;
	unsigned char pool = m->pool_under_asan;

	for (size_t i = 0; i < m->n_blocks; i++)
		free(m->blocks[i]);
	free(m->blocks);
	memset(m, 0, sizeof(*m));
	m->max_blocks = max_blocks; /* the settings outlive the blocks */
	m->pool_under_asan = pool;
}
