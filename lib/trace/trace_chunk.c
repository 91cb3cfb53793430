/* trace_chunk.c: reference-counted read buffers from a small pool (see trace_chunk.h). */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "lib/trace/trace_chunk.h"
#include "lib/util/util.h"

#define POOL_KEEP 32		/* free chunks kept for reuse; more are freed */

struct trace_chunk_pool {
	_Atomic unsigned refs;		/* the owner's, and one per chunk alive */
	size_t size;
	pthread_mutex_t lock;		/* the free list: taken once per chunk, not per frame */
	struct trace_chunk *free;	/* they hold no reference */
	unsigned n_free;
};

struct trace_chunk_pool *trace_chunk_pool_new(size_t size)
{
	struct trace_chunk_pool *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	atomic_init(&p->refs, 1);
	p->size = size;
	pthread_mutex_init(&p->lock, NULL);
	return p;
}

void trace_chunk_pool_release(struct trace_chunk_pool *p)
{
	if (!p || atomic_fetch_sub_explicit(&p->refs, 1, memory_order_acq_rel) != 1)
		return;
	while (p->free) {
		struct trace_chunk *c = p->free;

		p->free = c->next_free;
		free(c);
	}
	pthread_mutex_destroy(&p->lock);
	free(p);
}

struct trace_chunk *trace_chunk_new(struct trace_chunk_pool *p, size_t min)
{
	struct trace_chunk *c = NULL;
	size_t cap = min > p->size ? min : p->size;

	if (cap == p->size) {
		pthread_mutex_lock(&p->lock);
		c = p->free;
		if (c) {
			p->free = c->next_free;
			p->n_free--;
			atomic_fetch_add_explicit(&p->refs, 1, memory_order_relaxed);
		}
		pthread_mutex_unlock(&p->lock);
	}
	if (!c) {
		/* The header on a line of its own: the data starts on the next. */
		c = aligned_alloc(UTIL_LINE_BYTES, UTIL_LINE_BYTES + ((cap + UTIL_LINE_BYTES - 1) & ~(size_t)(UTIL_LINE_BYTES - 1)));
		if (!c) {
			errno = ENOMEM;
			return NULL;
		}
		c->pool = p;
		c->cap = cap;
		c->data = (uint8_t *)c + UTIL_LINE_BYTES;
		atomic_fetch_add_explicit(&p->refs, 1, memory_order_relaxed);
	}
	_Static_assert(sizeof(*c) <= UTIL_LINE_BYTES, "the header fits its line");
	atomic_init(&c->refs, 1);
	c->next_free = NULL;
	return c;
}

void trace_chunk_release(struct trace_chunk *c)
{
	struct trace_chunk_pool *p;

	if (!c || atomic_fetch_sub_explicit(&c->refs, 1, memory_order_acq_rel) != 1)
		return;
	p = c->pool;
	pthread_mutex_lock(&p->lock);
	if (c->cap == p->size && p->n_free < POOL_KEEP) {
		c->next_free = p->free;
		p->free = c;
		p->n_free++;
		c = NULL;
	}
	pthread_mutex_unlock(&p->lock);
	free(c);
	trace_chunk_pool_release(p); /* the last one frees the free list with the pool */
}
