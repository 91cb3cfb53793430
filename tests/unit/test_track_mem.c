/*
 * test_track_mem.c: the tracker's block allocator itself (under ASan it asks for the pool, not
 * malloc): 64-byte alignment, no two live pieces overlap over random alloc/free cycles, freed
 * pieces come back, 0 bytes, 2 MB and beyond, a refused block gives NULL, release frees every
 * block, a failing madvise is harmless; big arrays on 2 MB pages (track_mem_ensure_big).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <cmocka.h>
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#endif

#include "lib/track/track_mem.h"
#include "test_rng.h"

#define BLOCK ((size_t)2 << 20)

/*
 * The test's madvise wins over libc's for the library linked into this binary: it fails as a
 * kernel without transparent huge pages does (EINVAL), so every test runs on that path.
 */
static unsigned madvise_calls;

int madvise(void *addr, size_t len, int advice)
{
	(void)addr;
	(void)len;
	(void)advice;
	madvise_calls++;
	errno = EINVAL;
	return -1;
}

static size_t rounded(size_t n)
{
	size_t sz = 64;

	while (sz < n)
		sz <<= 1;
	return sz;
}

static void pool(struct track_mem *m)
{
	memset(m, 0, sizeof(*m));
	m->pool_under_asan = 1;
}

static void assert_aligned(const void *p)
{
	assert_non_null(p);
	assert_int_equal((uintptr_t)p % 64, 0);
}

#define SLOTS 512

struct slot {
	unsigned char *p;
	size_t n;
	unsigned char tag;
};

static void fill(struct slot *s)
{
	memset(s->p, s->tag, rounded(s->n));
}

static void check(const struct slot *s)
{
	size_t sz = rounded(s->n);

	for (size_t i = 0; i < sz; i++)
		if (s->p[i] != s->tag)
			fail_msg("piece %p (%zu bytes) byte %zu is %u, not %u", (void *)s->p, s->n, i,
				 s->p[i], s->tag);
}

static int by_addr(const void *a, const void *b)
{
	const struct slot *x = a, *y = b;

	return x->p < y->p ? -1 : x->p > y->p;
}

/* Live pieces sorted by address: each ends (rounded up) before the next begins. */
static void assert_disjoint(const struct slot *slots)
{
	struct slot live[SLOTS];
	size_t n = 0;

	for (size_t i = 0; i < SLOTS; i++)
		if (slots[i].p)
			live[n++] = slots[i];
	qsort(live, n, sizeof(*live), by_addr);
	for (size_t i = 1; i < n; i++)
		assert_true(live[i - 1].p + rounded(live[i - 1].n) <= live[i].p);
}

static size_t random_size(void)
{
	static const size_t sizes[] = { 0, 1, 8, 63, 64, 65, 100, 128, 1000, 4096, 5000, 65536,
					200000 };
	uint32_t r = rng32();

	if (r % 64 == 0)
		return r % 2 ? BLOCK : BLOCK / 2 + 1;
	return sizes[r % (sizeof(sizes) / sizeof(sizes[0]))];
}

/* Random alloc, realloc and free with a fixed seed; every live piece keeps its pattern. */
static void test_random_cycles(void **state)
{
	struct track_mem m;
	struct slot slots[SLOTS] = { 0 };
	unsigned char tag = 0;

	(void)state;
	pool(&m);
	for (int op = 0; op < 40000; op++) {
		struct slot *s = &slots[rng32() % SLOTS];

		if (!s->p) {
			s->n = random_size();
			s->p = track_mem_alloc(&m, s->n);
			assert_aligned(s->p);
			s->tag = ++tag ? tag : ++tag;
			fill(s);
		} else if (rng32() % 4 == 0) {
			size_t nn = random_size();
			unsigned char *q;

			check(s);
			q = track_mem_realloc(&m, s->p, s->n, nn);
			assert_aligned(q);
			for (size_t i = 0; i < (s->n < nn ? s->n : nn); i++)
				assert_int_equal(q[i], s->tag);
			s->p = q;
			s->n = nn;
			fill(s);
		} else {
			check(s);
			track_mem_free(&m, s->p, s->n);
			s->p = NULL;
		}
		if (op % 1000 == 0)
			assert_disjoint(slots);
	}
	assert_disjoint(slots);
	for (size_t i = 0; i < SLOTS; i++) {
		if (!slots[i].p)
			continue;
		check(&slots[i]);
		track_mem_free(&m, slots[i].p, slots[i].n);
	}
	assert_true(m.n_blocks > 0);
	assert_true(madvise_calls > 0); /* the pool really ran, on the failing madvise */
	track_mem_release(&m);
	assert_int_equal(m.n_blocks, 0);
	assert_null(m.blocks);
}

/* A freed piece is the next one of its size class; a larger one is split before a new block. */
static void test_reuse(void **state)
{
	struct track_mem m;
	void *a, *b, *c;

	(void)state;
	pool(&m);
	a = track_mem_alloc(&m, 100);
	assert_aligned(a);
	track_mem_free(&m, a, 100);
	b = track_mem_alloc(&m, 128); /* the same class as 100 */
	assert_ptr_equal(a, b);
	track_mem_free(&m, b, 128);
	track_mem_release(&m);

	pool(&m);
	a = track_mem_alloc(&m, 4096);
	track_mem_free(&m, a, 4096);
	c = track_mem_alloc(&m, 64);
	assert_ptr_equal(a, c); /* the low half of the split 4096 */
	b = track_mem_alloc(&m, 2048);
	assert_ptr_equal((unsigned char *)a + 2048, b); /* its upper half, from the list */
	assert_int_equal(m.n_blocks, 1);
	track_mem_release(&m);
}

/* 0 bytes is a 64-byte piece of its own. */
static void test_zero(void **state)
{
	struct track_mem m;
	unsigned char *a, *b;

	(void)state;
	pool(&m);
	a = track_mem_alloc(&m, 0);
	b = track_mem_alloc(&m, 0);
	assert_aligned(a);
	assert_aligned(b);
	assert_true(a + 64 <= b || b + 64 <= a);
	memset(a, 1, 64);
	memset(b, 2, 64);
	assert_int_equal(a[63], 1);
	track_mem_free(&m, a, 0);
	track_mem_free(&m, b, 0);
	track_mem_release(&m);
}

/* A block holds exactly 2 MB of pieces; the rest of an old block is not lost to a new one. */
static void test_block_size(void **state)
{
	struct track_mem m;
	unsigned char *small, *whole, *half;

	(void)state;
	pool(&m);
	for (size_t i = 0; i < BLOCK / 64; i++)
		assert_non_null(track_mem_alloc(&m, 64));
	assert_int_equal(m.n_blocks, 1);
	assert_non_null(track_mem_alloc(&m, 64));
	assert_int_equal(m.n_blocks, 2);
	track_mem_release(&m);

	small = track_mem_alloc(&m, 64);
	whole = track_mem_alloc(&m, BLOCK); /* does not fit the rest: a second block */
	assert_aligned(whole);
	assert_int_equal(m.n_blocks, 2);
	memset(whole, 0x5a, BLOCK);
	half = track_mem_alloc(&m, BLOCK / 2); /* from the first block's rest */
	assert_aligned(half);
	assert_int_equal(m.n_blocks, 2);
	assert_true(half > small && half + BLOCK / 2 <= small + BLOCK);
	track_mem_free(&m, whole, BLOCK);
	track_mem_release(&m);
}

/* Beyond 2 MB a piece is the system's, but still 64-byte aligned and of the rounded size. */
static void test_beyond_block(void **state)
{
	struct track_mem m;
	unsigned char *p, *q;

	(void)state;
	pool(&m);
	p = track_mem_alloc(&m, BLOCK + 1);
	assert_aligned(p);
	memset(p, 7, BLOCK + 1);
	/* The same class (4 MB): the piece is kept, so it must hold 3 MB. */
	q = track_mem_realloc(&m, p, BLOCK + 1, 3 * (BLOCK / 2));
	assert_aligned(q);
	assert_int_equal(q[BLOCK], 7);
	memset(q, 8, 3 * (BLOCK / 2));
	p = track_mem_realloc(&m, q, 3 * (BLOCK / 2), 64); /* back into the pool */
	assert_aligned(p);
	assert_int_equal(p[63], 8);
	track_mem_free(&m, p, 64);
	assert_int_equal(m.n_blocks, 1);
	track_mem_release(&m);
}

/* A size that cannot be rounded up is ENOMEM, not a crash. */
static void test_huge(void **state)
{
	struct track_mem m;

	(void)state;
	pool(&m);
	assert_null(track_mem_alloc(&m, SIZE_MAX));
	assert_null(track_mem_alloc(&m, SIZE_MAX / 2 + 2));
	track_mem_release(&m);
}

/* No block: NULL to the caller, realloc keeps its piece, the allocator stays usable. */
static void test_block_failure(void **state)
{
	struct track_mem m;
	unsigned char *a, *b;

	(void)state;
	pool(&m);
	m.max_blocks = 1;
	a = track_mem_alloc(&m, BLOCK / 2);
	assert_aligned(a);
	memset(a, 3, BLOCK / 2);
	b = track_mem_alloc(&m, BLOCK / 2);
	assert_aligned(b);
	assert_null(track_mem_alloc(&m, BLOCK / 2));
	assert_null(track_mem_alloc(&m, 64));
	assert_null(track_mem_realloc(&m, a, BLOCK / 2, BLOCK));
	assert_int_equal(a[BLOCK / 2 - 1], 3);
	assert_int_equal(m.n_blocks, 1);
	track_mem_free(&m, b, BLOCK / 2);
	assert_ptr_equal(track_mem_alloc(&m, 64), b); /* a freed piece still serves */
	track_mem_release(&m);
	assert_int_equal(m.max_blocks, 1); /* release keeps the settings */
	assert_int_equal(m.pool_under_asan, 1);
	assert_non_null(track_mem_alloc(&m, 64));
	track_mem_release(&m);
}

/*
 * Release gives back every block: it clears the only pointers to them, so LeakSanitizer (its
 * blocks come from aligned_alloc, which it tracks) would report any it kept.
 */
static void test_release_no_leak(void **state)
{
	struct track_mem m;

	(void)state;
	pool(&m);
	for (int i = 0; i < 5; i++)
		assert_non_null(track_mem_alloc(&m, BLOCK));
	track_mem_free(&m, track_mem_alloc(&m, 3 * BLOCK), 3 * BLOCK);
	assert_int_equal(m.n_blocks, 5);
	track_mem_release(&m);
	assert_int_equal(m.n_blocks, 0);
	assert_null(m.blocks);
	assert_null(m.cur);
#if defined(__SANITIZE_ADDRESS__)
	assert_int_equal(__lsan_do_recoverable_leak_check(), 0);
#endif
}

/* Without the request, an ASan build is plain malloc: no blocks at all. */
static void test_plain_under_asan(void **state)
{
	struct track_mem m = { 0 };
	void *p;

	(void)state;
	p = track_mem_alloc(&m, 100);
	assert_non_null(p);
#if defined(__SANITIZE_ADDRESS__)
	assert_int_equal(m.n_blocks, 0);
#endif
	track_mem_free(&m, p, 100);
	track_mem_release(&m);
}

/*
 * track_mem_ensure_big(): small arrays grow as util_ensure_mem's; from 1 MB on, on 2 MB
 * pages of their own (aligned, capacity a whole number of them), contents kept across growth,
 * an impossible size refused with the array untouched.
 */
static void test_ensure_big(void **state)
{
	uint64_t *v = NULL;
	size_t cap = 0, need;
	unsigned calls = madvise_calls;

	(void)state;
	assert_int_equal(track_mem_ensure_big((void **)&v, &cap, sizeof(*v), 1000), 0);
	assert_true(cap >= 1000);
	assert_int_equal(madvise_calls, calls); /* 8 KB: malloc's */
	for (size_t i = 0; i < 1000; i++)
		v[i] = i * 7;
	assert_int_equal(track_mem_ensure_big((void **)&v, &cap, sizeof(*v), 10), 0);
	assert_true(cap >= 1000); /* never shrinks */
	need = BLOCK / sizeof(*v) + 1; /* just past one 2 MB page */
	assert_int_equal(track_mem_ensure_big((void **)&v, &cap, sizeof(*v), need), 0);
	assert_int_equal(cap, 2 * BLOCK / sizeof(*v));
	assert_int_equal((uintptr_t)v % BLOCK, 0);
	assert_int_equal(madvise_calls, calls + 1);
	for (size_t i = 0; i < 1000; i++)
		assert_int_equal(v[i], i * 7);
	v[cap - 1] = 1; /* the whole capacity is there (ASan would see an overflow) */
	assert_int_equal(track_mem_ensure_big((void **)&v, &cap, sizeof(*v), SIZE_MAX / 4), -ENOMEM);
	assert_int_equal(cap, 2 * BLOCK / sizeof(*v));
	assert_int_equal(v[999], 999 * 7);
	free(v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_random_cycles),
		cmocka_unit_test(test_reuse),
		cmocka_unit_test(test_zero),
		cmocka_unit_test(test_block_size),
		cmocka_unit_test(test_beyond_block),
		cmocka_unit_test(test_huge),
		cmocka_unit_test(test_block_failure),
		cmocka_unit_test(test_release_no_leak),
		cmocka_unit_test(test_plain_under_asan),
		cmocka_unit_test(test_ensure_big),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
