/* store_spill.c: the spill file of raw rows (store_spill.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/store/store_spill.h"

/* Beside the database, not in a tmpfs /tmp: the rows can outgrow memory. */
int store_spill_open(const char *base, const char *suffix, int *fd)
{
	size_t n = strlen(base) + strlen(suffix) + 1;
	char *p = malloc(n);
	int err;

	*fd = -1;
	if (!p)
		return ENOMEM;
	snprintf(p, n, "%s%s", base, suffix);
	*fd = open(p, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	err = errno;
	if (*fd >= 0)
		unlink(p);
	free(p);
	return *fd >= 0 ? 0 : err;
}

int store_spill_write(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t w = write(fd, p, len);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? errno : ENOSPC;
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

int store_spill_rewind(int fd)
{
	return lseek(fd, 0, SEEK_SET) < 0 ? errno : 0;
}

ssize_t store_spill_read(int fd, void *buf, size_t cap)
{
	for (;;) {
		ssize_t got = read(fd, buf, cap);

		if (got >= 0)
			return got;
		if (errno != EINTR)
			return -errno;
	}
}
