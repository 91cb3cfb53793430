/* trace_reader.h: read one or more pcap/pcapng files (or stdin) through libpcap, merged by time. */
#ifndef AGENTXDP_TRACE_READER_H
#define AGENTXDP_TRACE_READER_H

#include <stddef.h>
#include <stdint.h>

struct trace_reader;

/* One captured frame. `data` is valid until the next trace_reader_next(). */
struct trace_frame {
	uint64_t ts_ns;		/* nanoseconds since the epoch (files opened with ns precision) */
	uint32_t caplen;
	uint32_t origlen;
	int linktype;		/* DLT_* of the file it came from */
	int trace_index;	/* which input (0-based): the vantage point */
	uint64_t frame_number;	/* 1-based, within its own file (matches tshark's frame.number) */
	const uint8_t *data;
};

/* Per-input capture health, as far as the file tells. */
struct trace_health {
	uint64_t frames;		/* frames read */
	uint64_t bytes;
	uint64_t first_ns, last_ns;
	uint64_t capture_dropped;	/* pcapng ISB ifdrop / EPB dropcount sums, when present */
	int has_drop_counters;		/* the file carries drop counters at all */
	uint64_t ts_backwards;		/* frames whose timestamp went back in time */
	int truncated;			/* reading stopped at a truncated or corrupt record */
	char stop_reason[256];		/* why reading stopped early, "" when it reached the end */
};

/*
 * Open n paths ("-" is stdin). Returns 0, or -1 with a one-line message in err
 * ("trace.pcap: not a pcap or pcapng file", "x.pcap: No such file or directory").
 */
int trace_reader_open(struct trace_reader **out, const char *const *paths, int n, char *err,
		      size_t errlen);
/*
 * Next frame in timestamp order across all inputs: 1 a frame, 0 all inputs ended cleanly,
 * -1 an input ended with an error (message via trace_reader_error(); the other inputs
 * still deliver their frames on the next calls, so callers may keep reading until 0).
 */
int trace_reader_next(struct trace_reader *tr, struct trace_frame *frame);
/*
 * Async-signal-safe: stop reading (a read blocked on a pipe returns, provided the signal
 * handler was installed without SA_RESTART). trace_reader_next() then returns 0 and every
 * input not yet at its end gets stop_reason "interrupted" (truncated stays 0). Process-wide.
 */
void trace_reader_interrupt(void);
const char *trace_reader_error(const struct trace_reader *tr);
int trace_reader_count(const struct trace_reader *tr);
const char *trace_reader_path(const struct trace_reader *tr, int index);
const struct trace_health *trace_reader_health(const struct trace_reader *tr, int index);
/*
 * Readers of the same traces stopped by a signal at different frames (-j lanes): each input
 * of dst takes the counts src read past it (frames, bytes, last time, times going back, drop
 * counters), so the run says it read as far as its farthest reader. Why it stopped stays
 * dst's.
 */
void trace_reader_take_farther(struct trace_reader *dst, const struct trace_reader *src);
void trace_reader_close(struct trace_reader *tr);
/* "EN10MB", "LINUX_SLL", ... for a DLT_* value; "unknown" when libpcap has no name. */
const char *trace_linktype_name(int linktype);

#endif
