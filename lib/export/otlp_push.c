/* otlp_push.c: OTLP/HTTP JSON sender thread with a bounded queue, retries and backoff. */
#include <curl/curl.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "lib/util/log.h"
#include "lib/export/otlp_push.h"

struct otlp_body {
	char *data;
	size_t len;
};

struct otlp_pusher {
	struct otlp_push_opts opts;
	char *url;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;		/* queue changed or stop requested */
	struct otlp_body *queue;	/* ring of opts.queue_len */
	size_t head, count;
	bool stopping;
	uint64_t drain_deadline_ns;	/* CLOCK_MONOTONIC; meaningful once stopping */
	struct otlp_push_stats stats;
	CURL *curl;
	long retry_after_s;		/* from the last answer, -1 when absent */
	bool failing;			/* warned once; quiet until a body gets through again */
};

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static CURLcode curl_init_result;

static void curl_init_once(void)
{
	curl_init_result = curl_global_init(CURL_GLOBAL_DEFAULT);
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static bool past_deadline(const struct otlp_pusher *p)
{
	return p->stopping && mono_ns() >= p->drain_deadline_ns;
}

/* Wait on the condition until mono deadline_ns or a stop; called with the lock held. */
static void wait_until(struct otlp_pusher *p, uint64_t deadline_ns)
{
	struct timespec ts;

	while (!past_deadline(p) && mono_ns() < deadline_ns) {
		uint64_t until = deadline_ns;

		if (p->stopping && p->drain_deadline_ns < until)
			until = p->drain_deadline_ns;
		ts.tv_sec = (time_t)(until / 1000000000ull);
		ts.tv_nsec = (long)(until % 1000000000ull);
		if (pthread_cond_timedwait(&p->cond, &p->lock, &ts) == ETIMEDOUT)
			break;
	}
}

static size_t discard_body(char *ptr, size_t size, size_t nmemb, void *user)
{
	return size * nmemb;
}

static size_t read_header(char *buf, size_t size, size_t nitems, void *user)
{
	struct otlp_pusher *p = user;
	size_t n = size * nitems;
	char line[128];

	if (n >= sizeof(line) || n < 12 || strncasecmp(buf, "Retry-After:", 12) != 0)
		return n;
	memcpy(line, buf + 12, n - 12);
	line[n - 12] = '\0';
	/* Only the delay-seconds form; an HTTP date falls back to our own backoff. */
	p->retry_after_s = strtol(line, NULL, 10);
	if (p->retry_after_s <= 0)
		p->retry_after_s = -1;
	return n;
}

/*
 * libcurl's progress callback: a request in flight when the drain deadline passes is
 * aborted, so a collector that accepts and never answers cannot hold up the exit for
 * the whole request timeout.
 */
static int abort_past_deadline(void *user, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
			       curl_off_t ulnow)
{
	struct otlp_pusher *p = user;
	bool past;

	pthread_mutex_lock(&p->lock);
	past = past_deadline(p);
	pthread_mutex_unlock(&p->lock);
	return past ? 1 : 0;
}

/* One POST. Returns the HTTP status, or 0 when no answer came (connection error). */
static long post_once(struct otlp_pusher *p, const struct otlp_body *body)
{
	struct curl_slist *headers = NULL;
	uint64_t timeout_ms = p->opts.timeout_ms, now;
	long status = 0;
	CURLcode rc;

	/* While draining at exit, no request may outlive the drain deadline. */
	pthread_mutex_lock(&p->lock);
	now = mono_ns();
	if (p->stopping)
		timeout_ms = p->drain_deadline_ns > now ? (p->drain_deadline_ns - now) / 1000000ull : 1;
	if (timeout_ms > p->opts.timeout_ms)
		timeout_ms = p->opts.timeout_ms;
	if (!timeout_ms)
		timeout_ms = 1;
	pthread_mutex_unlock(&p->lock);
	p->retry_after_s = -1;
	headers = curl_slist_append(headers, "Content-Type: application/json");
	curl_easy_setopt(p->curl, CURLOPT_URL, p->url);
	curl_easy_setopt(p->curl, CURLOPT_HTTPHEADER, headers);
	curl_easy_setopt(p->curl, CURLOPT_POSTFIELDS, body->data);
	curl_easy_setopt(p->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)body->len);
	curl_easy_setopt(p->curl, CURLOPT_TIMEOUT_MS, (long)timeout_ms);
	curl_easy_setopt(p->curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(p->curl, CURLOPT_WRITEFUNCTION, discard_body);
	curl_easy_setopt(p->curl, CURLOPT_HEADERFUNCTION, read_header);
	curl_easy_setopt(p->curl, CURLOPT_HEADERDATA, p);
	curl_easy_setopt(p->curl, CURLOPT_XFERINFOFUNCTION, abort_past_deadline);
	curl_easy_setopt(p->curl, CURLOPT_XFERINFODATA, p);
	curl_easy_setopt(p->curl, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(p->curl, CURLOPT_USERAGENT, "agentxdp-otlp/" "0.1");
	rc = curl_easy_perform(p->curl);
	if (rc == CURLE_OK)
		curl_easy_getinfo(p->curl, CURLINFO_RESPONSE_CODE, &status);
	else
		pr_debug("otlp: POST %s: %s\n", p->url, curl_easy_strerror(rc));
	curl_slist_free_all(headers);
	return status;
}

static bool retryable(long status)
{
	return status == 0 || status == 429 || status == 502 || status == 503 || status == 504;
}

/* Send one body with retries; called without the lock. Returns true when accepted. */
static bool send_with_retries(struct otlp_pusher *p, const struct otlp_body *body)
{
	uint64_t backoff_ms = p->opts.initial_backoff_ms;
	unsigned int attempt;
	long status = 0;

	for (attempt = 1;; attempt++) {
		status = post_once(p, body);
		pthread_mutex_lock(&p->lock);
		p->stats.last_http_status = status;
		if (status >= 200 && status < 300) {
			p->stats.sent++;
			pthread_mutex_unlock(&p->lock);
			if (p->failing)
				pr_info("otlp: collector %s accepts metrics again\n", p->url);
			p->failing = false;
			return true;
		}
		if (!retryable(status) || attempt >= p->opts.max_attempts || past_deadline(p)) {
			bool quiet = p->failing;

			p->stats.failed++;
			p->failing = true;
			pthread_mutex_unlock(&p->lock);
			/* One warning per outage, not one per interval. */
			if (quiet)
				pr_debug("otlp: collector %s: still failing (HTTP %ld)\n", p->url, status);
			else if (status)
				pr_warn("otlp: collector %s answered HTTP %ld; %u attempt(s), body dropped\n",
					p->url, status, attempt);
			else
				pr_warn("otlp: collector %s unreachable; %u attempt(s), body dropped\n",
					p->url, attempt);
			return false;
		}
		p->stats.retries++;
		{
			uint64_t delay_ms = backoff_ms;

			if (p->retry_after_s > 0)
				delay_ms = (uint64_t)p->retry_after_s * 1000;
			if (delay_ms > p->opts.max_backoff_ms)
				delay_ms = p->opts.max_backoff_ms;
			wait_until(p, mono_ns() + delay_ms * 1000000ull);
		}
		pthread_mutex_unlock(&p->lock);
		if (backoff_ms < p->opts.max_backoff_ms)
			backoff_ms *= 2;
	}
}

static void *sender_main(void *arg)
{
	struct otlp_pusher *p = arg;
	struct otlp_body body;

	pthread_mutex_lock(&p->lock);
	for (;;) {
		while (!p->count && !p->stopping)
			pthread_cond_wait(&p->cond, &p->lock);
		if (!p->count || past_deadline(p))
			break;
		body = p->queue[p->head];
		p->head = (p->head + 1) % p->opts.queue_len;
		p->count--;
		pthread_mutex_unlock(&p->lock);
		send_with_retries(p, &body);
		free(body.data);
		pthread_mutex_lock(&p->lock);
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

static char *build_url(const char *base)
{
	const char *suffix = "/v1/metrics";
	size_t n = strlen(base), m = strlen(suffix);
	char *url;

	if (n >= m && strcmp(base + n - m, suffix) == 0)
		return strdup(base);
	while (n && base[n - 1] == '/')
		n--;
	url = malloc(n + m + 1);
	if (!url)
		return NULL;
	memcpy(url, base, n);
	memcpy(url + n, suffix, m + 1);
	return url;
}

struct otlp_pusher *otlp_push_start(const struct otlp_push_opts *opts)
{
	struct otlp_pusher *p;
	int err;

	if (!opts || !opts->url ||
	    (strncmp(opts->url, "http://", 7) != 0 && strncmp(opts->url, "https://", 8) != 0)) {
		errno = EINVAL;
		return NULL;
	}
	pthread_once(&curl_once, curl_init_once);
	if (curl_init_result != CURLE_OK) {
		errno = EIO;
		return NULL;
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->opts = *opts;
	if (!p->opts.queue_len)
		p->opts.queue_len = 16;
	if (!p->opts.max_attempts)
		p->opts.max_attempts = 5;
	if (!p->opts.initial_backoff_ms)
		p->opts.initial_backoff_ms = 500;
	if (!p->opts.max_backoff_ms)
		p->opts.max_backoff_ms = 10000;
	if (!p->opts.timeout_ms)
		p->opts.timeout_ms = 10000;
	p->url = build_url(opts->url);
	p->queue = calloc(p->opts.queue_len, sizeof(*p->queue));
	p->curl = curl_easy_init();
	if (!p->url || !p->queue || !p->curl) {
		err = ENOMEM;
		goto fail;
	}
	pthread_mutex_init(&p->lock, NULL);
	{
		pthread_condattr_t attr;

		pthread_condattr_init(&attr);
		pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
		pthread_cond_init(&p->cond, &attr);
		pthread_condattr_destroy(&attr);
	}
	err = pthread_create(&p->thread, NULL, sender_main, p);
	if (err) {
		pthread_cond_destroy(&p->cond);
		pthread_mutex_destroy(&p->lock);
		goto fail;
	}
	return p;
fail:
	if (p->curl)
		curl_easy_cleanup(p->curl);
	free(p->queue);
	free(p->url);
	free(p);
	errno = err;
	return NULL;
}

int otlp_push_enqueue(struct otlp_pusher *p, const char *body, size_t len)
{
	char *copy = malloc(len + 1);
	size_t tail;

	if (!copy)
		return -ENOMEM;
	memcpy(copy, body, len);
	copy[len] = '\0';
	pthread_mutex_lock(&p->lock);
	if (p->count == p->opts.queue_len) {
		free(p->queue[p->head].data);
		p->head = (p->head + 1) % p->opts.queue_len;
		p->count--;
		p->stats.dropped++;
	}
	tail = (p->head + p->count) % p->opts.queue_len;
	p->queue[tail].data = copy;
	p->queue[tail].len = len;
	p->count++;
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
	return 0;
}

void otlp_push_get_stats(struct otlp_pusher *p, struct otlp_push_stats *stats)
{
	pthread_mutex_lock(&p->lock);
	*stats = p->stats;
	pthread_mutex_unlock(&p->lock);
}

void otlp_push_stop(struct otlp_pusher *p, uint64_t drain_ms, struct otlp_push_stats *final)
{
	size_t i;

	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	p->stopping = true;
	p->drain_deadline_ns = mono_ns() + drain_ms * 1000000ull;
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
	/* A request in flight is aborted at the drain deadline (abort_past_deadline). */
	pthread_join(p->thread, NULL);
	for (i = 0; i < p->count; i++) {
		free(p->queue[(p->head + i) % p->opts.queue_len].data);
		p->stats.failed++;
	}
	if (final)
		*final = p->stats;
	curl_easy_cleanup(p->curl);
	pthread_cond_destroy(&p->cond);
	pthread_mutex_destroy(&p->lock);
	free(p->queue);
	free(p->url);
	free(p);
}
