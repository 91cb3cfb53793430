/*
 * trace_feed.h: one reader's frames to N consumer threads (agentxdp-analyze -j N lanes), read
 * once. The reader adds each frame with a key it computed (the lanes: the frame's shard, or
 * -1); frames go out in batches that every consumer sees, in order, through a ring of a few
 * batches: one hand-off per batch, no frame copied when its data is in a shared chunk
 * (trace_reader_share_chunks(): the batch holds the chunks, each input's in turn, however many
 * inputs are merged), else copied into the batch. A
 * full ring stops the reader, an empty one a consumer: memory stays bounded whatever the
 * trace's length. A consumer that stops early leaves (trace_feed_leave()); once all left, the
 * reader is told to stop.
 */
#ifndef AGENTXDP_TRACE_FEED_H
#define AGENTXDP_TRACE_FEED_H

#include <stdbool.h>
#include <stdint.h>

#include "lib/trace/trace_reader.h"

#define TRACE_FEED_BATCH 1024	/* frames per batch */
#define TRACE_FEED_DEPTH 8	/* batches in the ring */

struct trace_feed_frame {
	struct trace_frame f;	/* data valid while the batch is held */
	int key;
};

struct trace_feed_batch {
	uint32_t n;
	bool last;		/* the end: no batch after this one */
	struct trace_feed_frame fr[TRACE_FEED_BATCH];
	/* the reader's: the chunks held, and for each input the one it holds last (an input's
	 * chunks follow each other, so one look per frame) */
	struct trace_feed_held {
		struct trace_chunk *chunk;
		int trace;
	} *held;
	size_t n_held, held_cap;
	struct trace_chunk **by_trace;	/* by trace_index, NULL: none yet */
	size_t by_trace_cap;
	uint8_t *copy;		/* frames not in a chunk */
	size_t copy_len, copy_cap;
};

struct trace_feed;

/* A feed to n consumers (numbered 0 to n - 1); NULL with errno set. */
struct trace_feed *trace_feed_new(unsigned n);
/* The reader: one frame (its data is held or copied). 0; 1: every consumer left (stop); -ENOMEM. */
int trace_feed_add(struct trace_feed *f, const struct trace_frame *fr, int key);
/* The reader: no more frames. What is added is published, the last batch marked. */
void trace_feed_end(struct trace_feed *f);
/*
 * Consumer j: its next batch, NULL when none is published yet (block: wait for one). Valid
 * until trace_feed_done(); the one marked last is the end.
 */
const struct trace_feed_batch *trace_feed_next(struct trace_feed *f, unsigned j, bool block);
void trace_feed_done(struct trace_feed *f, unsigned j);
/* Consumer j takes no more batches (it stopped early, or never started). */
void trace_feed_leave(struct trace_feed *f, unsigned j);
/* After the reader and every consumer are done: frees what it holds. */
void trace_feed_free(struct trace_feed *f);

#endif
