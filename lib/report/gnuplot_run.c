/* gnuplot_run.c: run gnuplot with posix_spawnp, no shell, bounded time. */
#include "lib/report/gnuplot_run.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define GNUPLOT_TIMEOUT_S 60

int gnuplot_available(void)
{
	const char *path = getenv("PATH");
	char buf[4096];

	if (!path)
		path = "/usr/bin:/bin";
	while (*path) {
		const char *colon = strchr(path, ':');
		size_t n = colon ? (size_t)(colon - path) : strlen(path);
		snprintf(buf, sizeof(buf), "%.*s/gnuplot", (int)n, path);
		if (access(buf, X_OK) == 0)
			return 1;
		path += n + (colon ? 1 : 0);
	}
	return 0;
}

int gnuplot_run(int dirfd, const char *dir, const char *script, char *err, size_t errlen)
{
	char *argv[] = { "gnuplot", (char *)script, NULL };
	posix_spawn_file_actions_t fa;
	char errlog[4096];
	pid_t pid;
	int status, rc = -1;

	snprintf(errlog, sizeof(errlog), "%s/gnuplot.log", dir);
	if (posix_spawn_file_actions_init(&fa)) {
		snprintf(err, errlen, "gnuplot: %s", strerror(errno));
		return -1;
	}
	/* The child runs in the folder dirfd names (not a path that could be swapped for a
	 * link meanwhile); its stderr goes to a log the report can point at. */
	if (posix_spawn_file_actions_addfchdir_np(&fa, dirfd) ||
	    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0) ||
	    posix_spawn_file_actions_addopen(&fa, 2, "gnuplot.log", O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW,
					     0640) ||
	    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0)) {
		snprintf(err, errlen, "gnuplot: %s", strerror(errno));
		goto cleanup;
	}
	rc = posix_spawnp(&pid, "gnuplot", &fa, NULL, argv, environ);
	if (rc) {
		snprintf(err, errlen, "cannot run gnuplot: %s (install gnuplot-nox)", strerror(rc));
		rc = -1;
		goto cleanup;
	}
	/* Wait with a deadline: a wedged gnuplot must not hang the report. */
	for (int waited_ms = 0;; waited_ms += 20) {
		pid_t w = waitpid(pid, &status, WNOHANG);
		if (w == pid)
			break;
		if (w < 0 && errno != EINTR) {
			snprintf(err, errlen, "gnuplot: waitpid: %s", strerror(errno));
			rc = -1;
			goto cleanup;
		}
		if (waited_ms > GNUPLOT_TIMEOUT_S * 1000) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			snprintf(err, errlen, "gnuplot %s: killed after %d s", script, GNUPLOT_TIMEOUT_S);
			rc = -1;
			goto cleanup;
		}
		struct timespec ts = { 0, 20 * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		snprintf(err, errlen, "gnuplot %s failed (see %s)", script, errlog);
		rc = -1;
		goto cleanup;
	}
	rc = 0;
cleanup:
	posix_spawn_file_actions_destroy(&fa);
	return rc;
}

char *gnuplot_quote(const char *s, char *out, size_t outlen)
{
	size_t o = 0;

	if (!outlen)
		return out;
	for (; s && *s && o + 2 < outlen; s++) {
		unsigned char c = (unsigned char)*s;
		if (c < 0x20 || c == 0x7f)
			continue;
		if (c == '\'') {
			out[o++] = '\'';
			out[o++] = '\'';
			continue;
		}
		out[o++] = (char)c;
	}
	out[o] = 0;
	return out;
}
