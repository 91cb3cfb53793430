/*
 * metrics_http.h: a Prometheus /metrics endpoint (libmicrohttpd) serving the latest exposition.
 * 128 connections, 32 per client address, 10 s idle timeout, 5 s per request; refusals are
 * logged (pr_warn, so not with -q) at most once a minute.
 */
#ifndef AGENTXDP_METRICS_HTTP_H
#define AGENTXDP_METRICS_HTTP_H

#include <stddef.h>

struct metrics_http;

/*
 * Listen on LISTEN ("127.0.0.1:9476", "[::1]:9476", "0.0.0.0:9476", or ":9476" which
 * means loopback). Returns NULL with a one-line reason in err (bad address, port in use).
 */
struct metrics_http *metrics_http_start(const char *listen, char *err, size_t errlen);
/* Replace what GET /metrics returns (copied; thread-safe). 0 or -ENOMEM. */
int metrics_http_publish(struct metrics_http *h, const char *text, size_t len);
/* Requests served so far (for tests and the status line). */
unsigned long metrics_http_requests(const struct metrics_http *h);
/*
 * Connections cut because a request took longer than the deadline (5 s from connecting or
 * from the previous answer: a client trickling its headers cannot hold a slot).
 */
unsigned long metrics_http_deadline_cuts(struct metrics_http *h);
void metrics_http_stop(struct metrics_http *h);

#endif
