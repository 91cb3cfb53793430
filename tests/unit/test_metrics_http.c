/* test_metrics_http.c: slow clients cannot starve /metrics (issue #22 item 4); only 127.0.0.1, bounded in time and count. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "lib/agent/metrics_http.h"
#include "lib/util/log.h"

#define SLOW_CLIENTS 20 /* more than the old limit of 16 */

static int port;

/* Listen on 127.0.0.1 at the first free port of a small range. */
static struct metrics_http *start(void)
{
	char listen[64], err[256];

	for (int p = 39476 + (getpid() % 200); p < 39476 + 400; p++) {
		struct metrics_http *h;

		snprintf(listen, sizeof(listen), "127.0.0.1:%d", p);
		h = metrics_http_start(listen, err, sizeof(err));
		if (h) {
			port = p;
			assert_int_equal(metrics_http_publish(h, "agentxdp_up 1\n", 14), 0);
			return h;
		}
	}
	fail_msg("no free port: %s", err);
	return NULL;
}

static int connect_local(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	return fd;
}

/* A slow client: the request line, then (later) one header line at a time. */
static int slow_client(void)
{
	int fd = connect_local();
	static const char line[] = "GET /metrics HTTP/1.1\r\nHost: x\r\n";

	assert_int_equal(send(fd, line, sizeof(line) - 1, MSG_NOSIGNAL), (ssize_t)sizeof(line) - 1);
	return fd;
}

static void trickle(int fd)
{
	static const char hdr[] = "X-Slow: 1\r\n";

	send(fd, hdr, sizeof(hdr) - 1, MSG_NOSIGNAL); /* fails once the server cut it: fine */
}

/* One GET /metrics with a 3 s limit: 1 when a 200 with the metric came back. */
static int scrape(void)
{
	static const char req[] = "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
	char buf[1024];
	size_t got = 0;
	int fd = connect_local();
	struct pollfd pfd = { .fd = fd, .events = POLLIN };

	send(fd, req, sizeof(req) - 1, MSG_NOSIGNAL);
	while (got < sizeof(buf) - 1 && poll(&pfd, 1, 3000) == 1) {
		ssize_t n = recv(fd, buf + got, sizeof(buf) - 1 - got, 0);

		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	buf[got] = 0;
	return strstr(buf, " 200 ") && strstr(buf, "agentxdp_up 1");
}

/* The attack: more slow clients than the old connection limit, then a scrape. */
static void test_slow_clients_do_not_starve_scrape(void **state)
{
	struct metrics_http *h = start();
	int fds[SLOW_CLIENTS];

	(void)state;
	for (int i = 0; i < SLOW_CLIENTS; i++)
		fds[i] = slow_client();
	for (int i = 0; i < SLOW_CLIENTS; i++)
		trickle(fds[i]);
	assert_true(scrape());
	for (int i = 0; i < SLOW_CLIENTS; i++)
		close(fds[i]);
	metrics_http_stop(h);
}

/* A client sending a header line every second is cut at the request deadline (5 s), not kept. */
static void test_slow_client_cut_at_request_deadline(void **state)
{
	struct metrics_http *h = start();
	int fd = slow_client(), closed_after_s = -1;
	time_t t0 = time(NULL);

	(void)state;
	for (int s = 0; s < 9 && closed_after_s < 0; s++) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };

		trickle(fd);
		if (poll(&pfd, 1, 1000) == 1) {
			char c;
			ssize_t n = recv(fd, &c, 1, MSG_DONTWAIT);

			if (n == 0 || (n < 0 && errno != EAGAIN))
				closed_after_s = (int)(time(NULL) - t0);
		}
	}
	close(fd);
	assert_true(closed_after_s >= 4 && closed_after_s <= 8);
	assert_true(metrics_http_deadline_cuts(h) >= 1);
	metrics_http_stop(h);
}

/* Refused connections: at most one log line per interval, none with -q (LOG_ERR). */
static void test_refusals_logged_once_not_with_quiet(void **state)
{
	char path[] = "/tmp/agentxdp-test-mhd-log.XXXXXX", line[512];
	int levels[] = { LOG_WARN, LOG_ERR }, saved = dup(2), old_level = agentxdp_log_level;

	(void)state;
	for (size_t l = 0; l < 2; l++) {
		int log_fd = mkstemp(path), fds[64], n = 0, lines = 0;
		struct metrics_http *h;
		FILE *f;

		assert_true(log_fd >= 0);
		agentxdp_log_level = levels[l];
		dup2(log_fd, 2);
		h = start();
		/* Fill this address's share (32), then 20 more that are refused. */
		for (; n < 52; n++)
			fds[n] = connect_local();
		usleep(300 * 1000);
		metrics_http_stop(h);
		for (int i = 0; i < n; i++)
			close(fds[i]);
		dup2(saved, 2);
		f = fdopen(log_fd, "r");
		rewind(f);
		while (fgets(line, sizeof(line), f))
			lines++;
		fclose(f);
		unlink(path);
		strcpy(path, "/tmp/agentxdp-test-mhd-log.XXXXXX");
		if (levels[l] == LOG_ERR)
			assert_int_equal(lines, 0);
		else
			assert_int_equal(lines, 1); /* the refusals were seen, and said once */
	}
	close(saved);
	agentxdp_log_level = old_level;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_slow_clients_do_not_starve_scrape),
		cmocka_unit_test(test_slow_client_cut_at_request_deadline),
		cmocka_unit_test(test_refusals_logged_once_not_with_quiet),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
