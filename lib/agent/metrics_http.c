/* metrics_http.c: libmicrohttpd serves /metrics from a buffer the agent swaps every interval. */
#include "lib/agent/metrics_http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "lib/util/log.h"
#include "lib/util/parse_num.h"

#if MHD_VERSION < 0x00097002
typedef int mhd_result;
#else
typedef enum MHD_Result mhd_result;
#endif

struct metrics_http {
	struct MHD_Daemon *daemon;
	pthread_mutex_t lock;
	char *text;
	size_t len;
	unsigned long requests;
};

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

struct metrics_http *metrics_http_start(const char *listen, char *err, size_t errlen)
{
	struct sockaddr_storage ss;
	struct metrics_http *h;
	unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG;

	if (parse_listen(listen, &ss, err, errlen))
		return NULL;
	h = calloc(1, sizeof(*h));
	if (!h) {
		snprintf(err, errlen, "%s", strerror(ENOMEM));
		return NULL;
	}
	pthread_mutex_init(&h->lock, NULL);
	if (ss.ss_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	h->daemon = MHD_start_daemon(flags, 0, NULL, NULL, answer, h, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
				     MHD_OPTION_CONNECTION_LIMIT, (unsigned int)16, MHD_OPTION_CONNECTION_TIMEOUT,
				     (unsigned int)10, MHD_OPTION_END);
	if (!h->daemon) {
		snprintf(err, errlen, "cannot listen on %s: %s", listen,
			 errno ? strerror(errno) : "address in use or not available");
		pthread_mutex_destroy(&h->lock);
		free(h);
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

void metrics_http_stop(struct metrics_http *h)
{
	if (!h)
		return;
	MHD_stop_daemon(h->daemon);
	pthread_mutex_destroy(&h->lock);
	free(h->text);
	free(h);
}
