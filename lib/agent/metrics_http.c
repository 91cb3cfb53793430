/* metrics_http.c: libmicrohttpd serves /metrics from a buffer the agent swaps every interval. */
#include "lib/agent/metrics_http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdarg.h>
#include <stdint.h>
#include <sys/socket.h>
#include <time.h>

#include "lib/util/log.h"
#include "lib/util/parse_num.h"

#if MHD_VERSION < 0x00097002
typedef int mhd_result;
#else
typedef enum MHD_Result mhd_result;
#endif

/*
 * Slow clients (issue #22): libmicrohttpd's timeout counts idle time only, so a client
 * sending one header byte every few seconds held a connection forever, and 16 of them held
 * every slot. Now: many slots, a share per address, and a deadline on each request
 * enforced by a watchdog that shuts the socket down; refusals are logged at most once
 * per interval, through pr_warn (so not with -q).
 */
#define HTTP_MAX_CONNECTIONS 128
#define HTTP_MAX_PER_IP 32
#define HTTP_IDLE_TIMEOUT_S 10
#define HTTP_REQUEST_DEADLINE_MS 5000 /* from connect, or from the previous answer */
#define HTTP_LOG_INTERVAL_S 60

struct http_conn {
	struct MHD_Connection *conn;
	int fd;
	uint64_t since_ms;	/* connected, or last answered */
	bool cut;		/* shut down by the watchdog */
};

struct metrics_http {
	struct MHD_Daemon *daemon;
	pthread_mutex_t lock;
	char *text;
	size_t len;
	unsigned long requests;
	/* the request deadline */
	struct http_conn conns[HTTP_MAX_CONNECTIONS];
	size_t n_conns;
	pthread_t watchdog;
	bool watchdog_running;
	bool stopping;
	pthread_cond_t wake;
	/* the rate-limited log */
	pthread_mutex_t log_lock;
	uint64_t last_log_ms;
	unsigned long log_suppressed;
	unsigned long deadline_cuts;
};

static uint64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* libmicrohttpd's messages ("reached connection limit"): one line per interval at most. */
static void http_log(void *cls, const char *fmt, va_list ap)
{
	struct metrics_http *h = cls;
	char msg[256];
	uint64_t now = mono_ms();
	unsigned long suppressed;
	size_t n;

	pthread_mutex_lock(&h->log_lock);
	if (h->last_log_ms && now - h->last_log_ms < HTTP_LOG_INTERVAL_S * 1000ull) {
		h->log_suppressed++;
		pthread_mutex_unlock(&h->log_lock);
		return;
	}
	h->last_log_ms = now;
	suppressed = h->log_suppressed;
	h->log_suppressed = 0;
	pthread_mutex_unlock(&h->log_lock);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	n = strlen(msg);
	while (n && (msg[n - 1] == '\n' || msg[n - 1] == ' '))
		msg[--n] = 0;
	pr_warn("/metrics: %s (%lu more messages in the last %d s not shown)\n", msg, suppressed,
		HTTP_LOG_INTERVAL_S);
}

static struct http_conn *find_conn(struct metrics_http *h, struct MHD_Connection *conn)
{
	for (size_t i = 0; i < h->n_conns; i++)
		if (h->conns[i].conn == conn)
			return &h->conns[i];
	return NULL;
}

/* Track each connection's socket and age, for the watchdog. */
static void notify_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
			      enum MHD_ConnectionNotificationCode toe)
{
	struct metrics_http *h = cls;
	const union MHD_ConnectionInfo *ci;
	struct http_conn *c;

	(void)socket_context;
	pthread_mutex_lock(&h->lock);
	if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
		ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
		if (ci && h->n_conns < HTTP_MAX_CONNECTIONS)
			h->conns[h->n_conns++] = (struct http_conn){ .conn = conn, .fd = ci->connect_fd,
								     .since_ms = mono_ms() };
	} else if ((c = find_conn(h, conn))) {
		/* Closed: forget it before libmicrohttpd closes the fd (no shutdown of a reused fd). */
		*c = h->conns[--h->n_conns];
	}
	pthread_mutex_unlock(&h->lock);
}

/* Every 200 ms: shut down the socket of any request older than the deadline. */
static void *watchdog_main(void *arg)
{
	struct metrics_http *h = arg;

	pthread_mutex_lock(&h->lock);
	while (!h->stopping) {
		struct timespec until;
		uint64_t now = mono_ms();

		for (size_t i = 0; i < h->n_conns; i++) {
			struct http_conn *c = &h->conns[i];

			if (!c->cut && now - c->since_ms > HTTP_REQUEST_DEADLINE_MS) {
				shutdown(c->fd, SHUT_RDWR); /* libmicrohttpd sees the end and closes it */
				c->cut = true;
				h->deadline_cuts++;
			}
		}
		clock_gettime(CLOCK_MONOTONIC, &until);
		until.tv_nsec += 200 * 1000000L;
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&h->wake, &h->lock, &until);
	}
	pthread_mutex_unlock(&h->lock);
	return NULL;
}

static const char not_found[] = "agentxdp: only /metrics here\n";
static const char no_memory[] = "agentxdp: out of memory copying the metrics\n";

static mhd_result answer(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
			 const char *version, const char *upload, size_t *upload_len, void **con_cls)
{
	struct metrics_http *h = cls;
	struct MHD_Response *resp;
	unsigned int status = MHD_HTTP_OK;
	mhd_result ret;
	char *copy;
	size_t len;

	if (strcmp(method, "GET") && strcmp(method, "HEAD")) {
		resp = MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
		ret = MHD_queue_response(conn, MHD_HTTP_METHOD_NOT_ALLOWED, resp);
		MHD_destroy_response(resp);
		return ret;
	}
	if (strcmp(url, "/metrics")) {
		resp = MHD_create_response_from_buffer(sizeof(not_found) - 1, (void *)not_found,
						       MHD_RESPMEM_PERSISTENT);
		ret = MHD_queue_response(conn, MHD_HTTP_NOT_FOUND, resp);
		MHD_destroy_response(resp);
		return ret;
	}
	pthread_mutex_lock(&h->lock);
	h->requests++;
	{
		/* Answered: the next request on this connection gets its own deadline. */
		struct http_conn *c = find_conn(h, conn);

		if (c)
			c->since_ms = mono_ms();
	}
	len = h->len;
	copy = malloc(len ? len : 1);
	if (copy)
		memcpy(copy, h->text ? h->text : "", len);
	pthread_mutex_unlock(&h->lock);
	if (!copy) {
		/* Say so to the scraper and in the log rather than drop the connection. */
		pr_warn("/metrics: cannot copy %zu bytes for a scrape: %s\n", len, strerror(ENOMEM));
		resp = MHD_create_response_from_buffer(sizeof(no_memory) - 1, (void *)no_memory,
						       MHD_RESPMEM_PERSISTENT);
		ret = MHD_queue_response(conn, MHD_HTTP_SERVICE_UNAVAILABLE, resp);
		MHD_destroy_response(resp);
		return ret;
	}
	resp = MHD_create_response_from_buffer(len, copy, MHD_RESPMEM_MUST_FREE);
	MHD_add_response_header(resp, "Content-Type", "text/plain; version=0.0.4; charset=utf-8");
	ret = MHD_queue_response(conn, status, resp);
	MHD_destroy_response(resp);
	return ret;
}

/* "host:port", "[v6]:port", ":port" (loopback). */
static int parse_listen(const char *listen, struct sockaddr_storage *ss, char *err, size_t errlen)
{
	char host[128];
	const char *colon, *port_s;
	uint64_t port;

	memset(ss, 0, sizeof(*ss));
	if (listen[0] == '[') {
		const char *end = strchr(listen, ']');
		if (!end || end[1] != ':' || (size_t)(end - listen - 1) >= sizeof(host))
			goto bad;
		memcpy(host, listen + 1, (size_t)(end - listen - 1));
		host[end - listen - 1] = 0;
		port_s = end + 2;
	} else {
		colon = strrchr(listen, ':');
		if (!colon || (size_t)(colon - listen) >= sizeof(host))
			goto bad;
		memcpy(host, listen, (size_t)(colon - listen));
		host[colon - listen] = 0;
		port_s = colon + 1;
	}
	if (parse_u64(port_s, 1, 65535, &port))
		goto bad;
	if (!host[0])
		snprintf(host, sizeof(host), "127.0.0.1");
	struct sockaddr_in *v4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)ss;
	if (inet_pton(AF_INET, host, &v4->sin_addr) == 1) {
		v4->sin_family = AF_INET;
		v4->sin_port = htons((uint16_t)port);
		return 0;
	}
	if (inet_pton(AF_INET6, host, &v6->sin6_addr) == 1) {
		v6->sin6_family = AF_INET6;
		v6->sin6_port = htons((uint16_t)port);
		return 0;
	}
bad:
	snprintf(err, errlen, "invalid listen address '%s' (use ADDRESS:PORT, e.g. 127.0.0.1:9476 or [::1]:9476)",
		 listen);
	return -1;
}

static void metrics_http_free(struct metrics_http *h)
{
	if (h->watchdog_running) {
		pthread_mutex_lock(&h->lock);
		h->stopping = true;
		pthread_cond_signal(&h->wake);
		pthread_mutex_unlock(&h->lock);
		pthread_join(h->watchdog, NULL);
	}
	pthread_cond_destroy(&h->wake);
	pthread_mutex_destroy(&h->log_lock);
	pthread_mutex_destroy(&h->lock);
	free(h->text);
	free(h);
}

struct metrics_http *metrics_http_start(const char *listen, char *err, size_t errlen)
{
	struct sockaddr_storage ss;
	struct metrics_http *h;
	unsigned int flags = MHD_USE_AUTO_INTERNAL_THREAD | MHD_USE_ERROR_LOG;
	pthread_condattr_t ca;

	if (parse_listen(listen, &ss, err, errlen))
		return NULL;
	h = calloc(1, sizeof(*h));
	if (!h) {
		snprintf(err, errlen, "%s", strerror(ENOMEM));
		return NULL;
	}
	pthread_mutex_init(&h->lock, NULL);
	pthread_mutex_init(&h->log_lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&h->wake, &ca);
	pthread_condattr_destroy(&ca);
	if (pthread_create(&h->watchdog, NULL, watchdog_main, h)) {
		snprintf(err, errlen, "cannot start the /metrics watchdog thread: %s", strerror(errno));
		metrics_http_free(h);
		return NULL;
	}
	h->watchdog_running = true;
	if (ss.ss_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	/* The logger first: libmicrohttpd warns (through its own logger) when it is not. */
	h->daemon = MHD_start_daemon(flags, 0, NULL, NULL, answer, h, MHD_OPTION_EXTERNAL_LOGGER, http_log, h,
				     MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
				     MHD_OPTION_CONNECTION_LIMIT, (unsigned int)HTTP_MAX_CONNECTIONS,
				     MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned int)HTTP_MAX_PER_IP,
				     MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)HTTP_IDLE_TIMEOUT_S,
				     MHD_OPTION_NOTIFY_CONNECTION, notify_connection, h, MHD_OPTION_END);
	if (!h->daemon) {
		snprintf(err, errlen, "cannot listen on %s: %s", listen,
			 errno ? strerror(errno) : "address in use or not available");
		metrics_http_free(h);
		return NULL;
	}
	return h;
}

int metrics_http_publish(struct metrics_http *h, const char *text, size_t len)
{
	char *copy = malloc(len ? len : 1);

	if (!copy)
		return -ENOMEM;
	memcpy(copy, text, len);
	pthread_mutex_lock(&h->lock);
	free(h->text);
	h->text = copy;
	h->len = len;
	pthread_mutex_unlock(&h->lock);
	return 0;
}

unsigned long metrics_http_requests(const struct metrics_http *h)
{
	return h->requests;
}

unsigned long metrics_http_deadline_cuts(struct metrics_http *h)
{
	unsigned long n;

	pthread_mutex_lock(&h->lock);
	n = h->deadline_cuts;
	pthread_mutex_unlock(&h->lock);
	return n;
}

void metrics_http_stop(struct metrics_http *h)
{
	if (!h)
		return;
	MHD_stop_daemon(h->daemon);
	metrics_http_free(h);
}
