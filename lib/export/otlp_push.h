/*
 * otlp_push.h: send OTLP/HTTP JSON bodies (otlp_json.h) to a collector from a sender
 * thread, so a slow or absent collector never stalls the caller's measurement loop.
 *
 * The caller enqueues finished bodies; a bounded queue holds them; when it is full the
 * OLDEST body is dropped (cumulative metrics make the newest the most useful) and counted.
 * The thread POSTs each body to URL/v1/metrics with Content-Type application/json and
 * retries what the OTLP/HTTP specification calls retryable (429, 502, 503, 504, and
 * connection errors) with exponential backoff (or the server's Retry-After), up to
 * max_attempts. Other answers (e.g. 400) drop the body as failed.
 */
#ifndef AGENTXDP_OTLP_PUSH_H
#define AGENTXDP_OTLP_PUSH_H

#include <stddef.h>
#include <stdint.h>

struct otlp_push_opts {
	const char *url;		/* collector base URL; "/v1/metrics" is appended unless present */
	unsigned int queue_len;		/* bodies waiting at most (default 16) */
	unsigned int max_attempts;	/* tries per body including the first (default 5) */
	uint64_t initial_backoff_ms;	/* first retry delay, doubled each retry (default 500) */
	uint64_t max_backoff_ms;	/* cap of one delay and of Retry-After (default 10000) */
	uint64_t timeout_ms;		/* one HTTP request, connect included (default 10000) */
};

struct otlp_push_stats {
	uint64_t sent;			/* bodies the collector accepted (2xx) */
	uint64_t failed;		/* bodies given up on (non-retryable answer or attempts spent) */
	uint64_t dropped;		/* bodies dropped because the queue was full */
	uint64_t retries;		/* retry attempts made */
	long last_http_status;		/* 0 when the last attempt got no HTTP answer */
};

struct otlp_pusher;

/* Start the sender thread. NULL with errno set (EINVAL for a URL that is not http(s)://). */
struct otlp_pusher *otlp_push_start(const struct otlp_push_opts *opts);
/* Queue a copy of BODY. 0, or -ENOMEM. Never blocks on the network. */
int otlp_push_enqueue(struct otlp_pusher *p, const char *body, size_t len);
void otlp_push_get_stats(struct otlp_pusher *p, struct otlp_push_stats *stats);
/*
 * Keep sending what is queued for up to drain_ms, then stop the thread and free P.
 * final (may be NULL) gets the last counts; bodies still queued count as failed.
 */
void otlp_push_stop(struct otlp_pusher *p, uint64_t drain_ms, struct otlp_push_stats *final);

#endif
