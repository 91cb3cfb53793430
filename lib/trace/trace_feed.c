/*
 * trace_feed.c: one reader's frames to N consumers in batches they all see (trace_feed.h).
 *
 * A broadcast ring: the reader publishes batch h in slot h % DEPTH (head = h + 1); consumer j
 * releases it (tail[j] = h + 1). The slot is filled again once every consumer still there
 * released it, and only then are the chunks its frames held released. The counters are
 * atomics, read without a lock; a side that must wait sleeps on a condition variable under
 * the one mutex, and the other side takes the mutex only when it sees a sleeper (both store
 * their counter, then load the other's flag, sequentially consistent: no wake-up is lost).
 * The reader, finding the ring full, waits until half of it is free: it sleeps once per
 * several batches, not once per batch.
 */
#include <errno.h>
#include <pthread.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "lib/trace/trace_chunk.h"
#include "lib/trace/trace_feed.h"
#include "lib/util/util.h"

#define COPY_BYTES (256 * 1024)	/* a batch's room for frames copied */

struct feed_consumer {
	alignas(UTIL_LINE_BYTES) _Atomic uint64_t tail;	/* batches released */
	_Atomic bool gone;
};

struct trace_feed {
	unsigned n;
	struct trace_feed_batch *slots;		/* TRACE_FEED_DEPTH */
	struct feed_consumer *c;		/* n, each on its own line */
	struct trace_feed_batch *fill;		/* the reader's, NULL: none */
	alignas(UTIL_LINE_BYTES) _Atomic uint64_t head;	/* batches published */
	_Atomic unsigned waiting;		/* consumers asleep */
	_Atomic bool reader_waits;
	_Atomic uint64_t reader_target;		/* the reader sleeps until every tail reaches it */
	pthread_mutex_t lock;
	pthread_cond_t avail, room;
};

struct trace_feed *trace_feed_new(unsigned n)
{
	struct trace_feed *f = util_line_calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	f->n = n;
	f->slots = util_line_calloc(TRACE_FEED_DEPTH, sizeof(*f->slots));
	f->c = util_line_calloc(n ? n : 1, sizeof(*f->c));
	if (!f->slots || !f->c) {
		free(f->slots);
		free(f->c);
		free(f);
		errno = ENOMEM;
		return NULL;
	}
	pthread_mutex_init(&f->lock, NULL);
	pthread_cond_init(&f->avail, NULL);
	pthread_cond_init(&f->room, NULL);
	return f;
}

/* The lowest tail of the consumers still there; UINT64_MAX: none is. */
static uint64_t min_tail(struct trace_feed *f)
{
	uint64_t m = UINT64_MAX;

	for (unsigned j = 0; j < f->n; j++) {
		uint64_t t = atomic_load(&f->c[j].tail);

		if (!atomic_load(&f->c[j].gone) && t < m)
			m = t;
	}
	return m;
}

/* What a slot's last batch held, let go: its chunks and frames. */
static void batch_clear(struct trace_feed_batch *b)
{
	for (size_t i = 0; i < b->n_held; i++) {
		b->by_trace[b->held[i].trace] = NULL;
		trace_chunk_release(b->held[i].chunk);
	}
	b->n_held = 0;
	b->n = 0;
	b->last = false;
	b->copy_len = 0;
}

/* The slot of the next batch, once every consumer released it; NULL: every consumer left. */
static struct trace_feed_batch *feed_slot(struct trace_feed *f)
{
	uint64_t h = atomic_load_explicit(&f->head, memory_order_relaxed), m = min_tail(f);

	if (m == UINT64_MAX)
		return NULL;
	if (h - m >= TRACE_FEED_DEPTH) {
		pthread_mutex_lock(&f->lock);
		atomic_store(&f->reader_target, h - TRACE_FEED_DEPTH / 2);
		atomic_store(&f->reader_waits, true);
		while ((m = min_tail(f)) != UINT64_MAX && m < h - TRACE_FEED_DEPTH / 2)
			pthread_cond_wait(&f->room, &f->lock);
		atomic_store(&f->reader_waits, false);
		pthread_mutex_unlock(&f->lock);
		if (m == UINT64_MAX)
			return NULL;
	}
	f->fill = &f->slots[h % TRACE_FEED_DEPTH];
	batch_clear(f->fill);
	return f->fill;
}

static void feed_publish(struct trace_feed *f)
{
	f->fill = NULL;
	atomic_fetch_add(&f->head, 1);
	if (atomic_load(&f->waiting)) {
		pthread_mutex_lock(&f->lock);
		pthread_cond_broadcast(&f->avail);
		pthread_mutex_unlock(&f->lock);
	}
}

/*
 * The batch holds the frame's chunk (once per batch): 0, or -ENOMEM. An input reads into one
 * chunk after another and never back, so its last one held is the only one to look at.
 */
static int batch_hold(struct trace_feed_batch *b, const struct trace_frame *fr)
{
	size_t t = (size_t)fr->trace_index, had = b->by_trace_cap;

	if (t >= had) {
		if (util_ensure_mem((void **)&b->by_trace, &b->by_trace_cap, sizeof(*b->by_trace), t + 1))
			return -ENOMEM;
		memset(b->by_trace + had, 0, (b->by_trace_cap - had) * sizeof(*b->by_trace));
	}
	if (b->by_trace[t] == fr->chunk)
		return 0;
	if (util_ensure_mem((void **)&b->held, &b->held_cap, sizeof(*b->held), b->n_held + 1))
		return -ENOMEM;
	trace_chunk_hold(fr->chunk);
	b->held[b->n_held++] = (struct trace_feed_held){ .chunk = fr->chunk, .trace = fr->trace_index };
	b->by_trace[t] = fr->chunk;
	return 0;
}

/* A frame of no chunk, copied into the batch: its copy, or NULL when the batch is full. */
static const uint8_t *batch_copy(struct trace_feed_batch *b, const struct trace_frame *fr, int *err)
{
	uint8_t *at;

	if (b->copy_cap - b->copy_len < fr->caplen) {
		size_t want = fr->caplen > COPY_BYTES ? fr->caplen : COPY_BYTES;

		if (b->n)
			return NULL; /* frames point into this copy: publish first */
		if (util_ensure_mem((void **)&b->copy, &b->copy_cap, 1, want)) {
			*err = -ENOMEM;
			return NULL;
		}
	}
	at = b->copy + b->copy_len;
	memcpy(at, fr->data, fr->caplen);
	b->copy_len += fr->caplen;
	return at;
}

int trace_feed_add(struct trace_feed *f, const struct trace_frame *fr, int key)
{
	for (;;) {
		struct trace_feed_batch *b = f->fill ? f->fill : feed_slot(f);
		struct trace_feed_frame *x;
		const uint8_t *data = fr->data;
		int err = 0;

		if (!b)
			return 1;
		if (fr->chunk && (err = batch_hold(b, fr)) != 0)
			return err;
		if (!fr->chunk && !(data = batch_copy(b, fr, &err))) {
			if (err)
				return err;
			feed_publish(f); /* its copies fill it: the frame goes in the next one */
			continue;
		}
		x = &b->fr[b->n++];
		x->f = *fr;
		x->f.data = data;
		x->key = key;
		if (b->n == TRACE_FEED_BATCH)
			feed_publish(f);
		return 0;
	}
}

void trace_feed_end(struct trace_feed *f)
{
	struct trace_feed_batch *b = f->fill ? f->fill : feed_slot(f);

	if (!b)
		return;
	b->last = true;
	feed_publish(f);
}

const struct trace_feed_batch *trace_feed_next(struct trace_feed *f, unsigned j, bool block)
{
	uint64_t t = atomic_load_explicit(&f->c[j].tail, memory_order_relaxed);

	if (atomic_load_explicit(&f->head, memory_order_acquire) <= t) {
		if (!block)
			return NULL;
		pthread_mutex_lock(&f->lock);
		atomic_fetch_add(&f->waiting, 1);
		while (atomic_load(&f->head) <= t)
			pthread_cond_wait(&f->avail, &f->lock);
		atomic_fetch_sub(&f->waiting, 1);
		pthread_mutex_unlock(&f->lock);
	}
	return &f->slots[t % TRACE_FEED_DEPTH];
}

/* The reader may be asleep for this consumer: wake it when its target may be reached. */
static void wake_reader(struct trace_feed *f, uint64_t tail)
{
	if (atomic_load(&f->reader_waits) && tail >= atomic_load(&f->reader_target)) {
		pthread_mutex_lock(&f->lock);
		pthread_cond_signal(&f->room);
		pthread_mutex_unlock(&f->lock);
	}
}

void trace_feed_done(struct trace_feed *f, unsigned j)
{
	uint64_t t = atomic_fetch_add(&f->c[j].tail, 1) + 1;

	wake_reader(f, t);
}

void trace_feed_leave(struct trace_feed *f, unsigned j)
{
	atomic_store(&f->c[j].gone, true);
	wake_reader(f, UINT64_MAX);
}

void trace_feed_free(struct trace_feed *f)
{
	if (!f)
		return;
	for (unsigned i = 0; i < TRACE_FEED_DEPTH; i++) {
		batch_clear(&f->slots[i]);
		free(f->slots[i].copy);
		free(f->slots[i].held);
		free(f->slots[i].by_trace);
	}
	pthread_cond_destroy(&f->avail);
	pthread_cond_destroy(&f->room);
	pthread_mutex_destroy(&f->lock);
	free(f->slots);
	free(f->c);
	free(f);
}
