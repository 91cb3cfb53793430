/*
 * test_otlp_push.c: the OTLP sender against an in-process libmicrohttpd collector on
 * 127.0.0.1: path, Content-Type and body arrive intact; 503 is retried; 400 is not;
 * a full queue drops and counts instead of blocking.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "lib/export/otlp_push.h"

struct collector {
	struct MHD_Daemon *daemon;
	uint16_t port;
	pthread_mutex_t lock;
	unsigned int requests;		/* POSTs completed */
	unsigned int fail_first;	/* answer fail_status to this many first */
	unsigned int fail_status;
	unsigned int delay_ms;		/* sleep before answering */
	char path[64];
	char content_type[64];
	char body[4096];
	size_t body_len;
};

struct upload {
	char data[4096];
	size_t len;
};

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
				  const char *method, const char *version, const char *upload_data,
				  size_t *upload_data_size, void **con_cls)
{
	struct collector *c = cls;
	struct upload *u = *con_cls;
	struct MHD_Response *resp;
	const char *ct;
	unsigned int status;
	enum MHD_Result ret;

	if (!u) {
		u = calloc(1, sizeof(*u));
		*con_cls = u;
		return MHD_YES;
	}
	if (*upload_data_size) {
		size_t n = *upload_data_size;

		if (u->len + n < sizeof(u->data)) {
			memcpy(u->data + u->len, upload_data, n);
			u->len += n;
		}
		*upload_data_size = 0;
		return MHD_YES;
	}
	if (c->delay_ms)
		usleep(c->delay_ms * 1000);
	ct = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Type");
	pthread_mutex_lock(&c->lock);
	c->requests++;
	status = c->requests <= c->fail_first ? c->fail_status : 200;
	snprintf(c->path, sizeof(c->path), "%s", url);
	snprintf(c->content_type, sizeof(c->content_type), "%s", ct ? ct : "");
	memcpy(c->body, u->data, u->len);
	c->body_len = u->len;
	pthread_mutex_unlock(&c->lock);
	resp = MHD_create_response_from_buffer(2, (void *)"{}", MHD_RESPMEM_PERSISTENT);
	ret = MHD_queue_response(conn, status, resp);
	MHD_destroy_response(resp);
	return ret;
}

static void on_done(void *cls, struct MHD_Connection *conn, void **con_cls,
		    enum MHD_RequestTerminationCode toe)
{
	free(*con_cls);
	*con_cls = NULL;
}

static void collector_start(struct collector *c)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = 0 };
	const union MHD_DaemonInfo *info;

	pthread_mutex_init(&c->lock, NULL);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	c->daemon = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION,
				     0, NULL, NULL, on_request, c, MHD_OPTION_SOCK_ADDR, &sa,
				     MHD_OPTION_NOTIFY_COMPLETED, on_done, c, MHD_OPTION_END);
	assert_non_null(c->daemon);
	info = MHD_get_daemon_info(c->daemon, MHD_DAEMON_INFO_BIND_PORT);
	assert_non_null(info);
	c->port = info->port;
}

static void collector_stop(struct collector *c)
{
	MHD_stop_daemon(c->daemon);
	pthread_mutex_destroy(&c->lock);
}

static const char body[] = "{\"resourceMetrics\":[]}";

static void test_retry_after_503(void **state)
{
	struct collector c = { .fail_first = 1, .fail_status = 503 };
	struct otlp_push_opts o = { .initial_backoff_ms = 20, .max_attempts = 4 };
	struct otlp_push_stats st;
	struct otlp_pusher *p;
	char url[64];

	collector_start(&c);
	snprintf(url, sizeof(url), "http://127.0.0.1:%u/", c.port);
	o.url = url;
	p = otlp_push_start(&o);
	assert_non_null(p);
	assert_int_equal(otlp_push_enqueue(p, body, strlen(body)), 0);
	otlp_push_stop(p, 10000, &st);
	assert_int_equal(c.requests, 2);
	assert_int_equal(st.retries, 1);
	assert_int_equal(st.sent, 1);
	assert_int_equal(st.failed, 0);
	assert_int_equal(st.last_http_status, 200);
	assert_string_equal(c.path, "/v1/metrics");
	assert_string_equal(c.content_type, "application/json");
	assert_int_equal(c.body_len, strlen(body));
	assert_memory_equal(c.body, body, c.body_len);
	collector_stop(&c);
}

static void test_no_retry_on_400(void **state)
{
	struct collector c = { .fail_first = 100, .fail_status = 400 };
	struct otlp_push_opts o = { .initial_backoff_ms = 20 };
	struct otlp_push_stats st;
	struct otlp_pusher *p;
	char url[64];

	collector_start(&c);
	snprintf(url, sizeof(url), "http://127.0.0.1:%u/v1/metrics", c.port);
	o.url = url;
	p = otlp_push_start(&o);
	assert_non_null(p);
	assert_int_equal(otlp_push_enqueue(p, body, strlen(body)), 0);
	otlp_push_stop(p, 10000, &st);
	assert_int_equal(c.requests, 1);
	assert_int_equal(st.retries, 0);
	assert_int_equal(st.failed, 1);
	assert_string_equal(c.path, "/v1/metrics");
	collector_stop(&c);
}

/* Retries stop after max_attempts when the collector keeps answering 503. */
static void test_attempts_bounded(void **state)
{
	struct collector c = { .fail_first = 100, .fail_status = 503 };
	struct otlp_push_opts o = { .initial_backoff_ms = 5, .max_attempts = 3 };
	struct otlp_push_stats st;
	struct otlp_pusher *p;
	char url[64];

	collector_start(&c);
	snprintf(url, sizeof(url), "http://127.0.0.1:%u", c.port);
	o.url = url;
	p = otlp_push_start(&o);
	assert_non_null(p);
	assert_int_equal(otlp_push_enqueue(p, body, strlen(body)), 0);
	otlp_push_stop(p, 10000, &st);
	assert_int_equal(c.requests, 3);
	assert_int_equal(st.retries, 2);
	assert_int_equal(st.failed, 1);
	assert_int_equal(st.last_http_status, 503);
	collector_stop(&c);
}

/* A slow collector: enqueue never waits for it; what does not fit is dropped and counted. */
static void test_queue_full_drops(void **state)
{
	struct collector c = { .delay_ms = 300 };
	struct otlp_push_opts o = { .queue_len = 2 };
	struct otlp_push_stats st;
	struct otlp_pusher *p;
	char url[64];
	int i;

	collector_start(&c);
	snprintf(url, sizeof(url), "http://127.0.0.1:%u", c.port);
	o.url = url;
	p = otlp_push_start(&o);
	assert_non_null(p);
	for (i = 0; i < 10; i++)
		assert_int_equal(otlp_push_enqueue(p, body, strlen(body)), 0);
	otlp_push_get_stats(p, &st);
	/* At most one body left the queue for the wire; the ring holds two. */
	assert_true(st.dropped >= 7);
	otlp_push_stop(p, 10000, &st);
	assert_int_equal(st.sent + st.dropped + st.failed, 10);
	assert_int_equal(c.requests, st.sent);
	collector_stop(&c);
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* A collector that takes the request and does not answer: stop() ends at the drain
 * deadline, not at the 10 s request timeout (the request in flight is aborted). */
static void test_hanging_collector_does_not_hold_stop(void **state)
{
	struct collector c = { .delay_ms = 3000 };
	struct otlp_push_opts o = { .timeout_ms = 10000 };
	struct otlp_push_stats st;
	struct otlp_pusher *p;
	uint64_t t0;
	char url[64];

	collector_start(&c);
	snprintf(url, sizeof(url), "http://127.0.0.1:%u", c.port);
	o.url = url;
	p = otlp_push_start(&o);
	assert_non_null(p);
	assert_int_equal(otlp_push_enqueue(p, body, strlen(body)), 0);
	usleep(200 * 1000); /* the POST is in flight, the collector sleeping on it */
	t0 = now_ms();
	otlp_push_stop(p, 200, &st);
	assert_true(now_ms() - t0 < 2000);
	assert_int_equal(st.sent, 0);
	assert_int_equal(st.failed, 1);
	collector_stop(&c);
}

static void test_bad_url(void **state)
{
	struct otlp_push_opts o = { .url = "ftp://x" };

	assert_null(otlp_push_start(&o));
	assert_int_equal(errno, EINVAL);
	o.url = NULL;
	assert_null(otlp_push_start(&o));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_retry_after_503),
		cmocka_unit_test(test_no_retry_on_400),
		cmocka_unit_test(test_attempts_bounded),
		cmocka_unit_test(test_queue_full_drops),
		cmocka_unit_test(test_hanging_collector_does_not_hold_stop),
		cmocka_unit_test(test_bad_url),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
