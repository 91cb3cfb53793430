/*
 * trace_chunk.h: reference-counted read buffers. A trace_reader that shares its chunks
 * (trace_reader_share_chunks()) reads into them and never moves bytes it parsed, so a frame
 * it handed out stays valid, on any thread, for as long as someone holds its chunk.
 */
#ifndef AGENTXDP_TRACE_CHUNK_H
#define AGENTXDP_TRACE_CHUNK_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

struct trace_chunk_pool;

struct trace_chunk {
	_Atomic unsigned refs;
	struct trace_chunk_pool *pool;
	struct trace_chunk *next_free;	/* in the pool's free list */
	size_t cap;			/* bytes at data */
	uint8_t *data;
};

/* A pool of chunks of size bytes; NULL with errno set. Freed once it and its chunks are released. */
struct trace_chunk_pool *trace_chunk_pool_new(size_t size);
void trace_chunk_pool_release(struct trace_chunk_pool *p);
/* A chunk of at least min bytes (a free one of the pool's size when it fits), held once; NULL. */
struct trace_chunk *trace_chunk_new(struct trace_chunk_pool *p, size_t min);

static inline void trace_chunk_hold(struct trace_chunk *c)
{
	atomic_fetch_add_explicit(&c->refs, 1, memory_order_relaxed);
}

/* The last release gives the chunk back to its pool (or frees one of another size). */
void trace_chunk_release(struct trace_chunk *c);

#endif
