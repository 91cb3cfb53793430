/* store_spill.c: the spill file of raw rows (store_spill.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/store/store_spill.h"

/* Beside the database, not in a tmpfs /tmp: the rows can outgrow memory. */
int store_sibling_create(const char *base, const char *suffix, char **path)
{
	size_t n = strlen(base) + strlen(suffix) + 1;
	int fd, err;

	*path = malloc(n);
	if (!*path) {
		errno = ENOMEM;
		return -1;
	}
	snprintf(*path, n, "%s%s", base, suffix);
	fd = open(*path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0) {
		err = errno;
		free(*path);
		*path = NULL;
		errno = err;
	}
	return fd;
}

int store_spill_open(struct spill_file *f, const char *base, const char *suffix)
{
	char *p;

	f->len = f->pos = 0;
	f->eof = 0;
	f->fd = store_sibling_create(base, suffix, &p);
	if (f->fd < 0)
		return errno;
	unlink(p);
	free(p);
	return 0;
}

void store_spill_close(struct spill_file *f)
{
	if (f->fd >= 0)
		close(f->fd);
	f->fd = -1;
}

/* All len bytes or an errno (ENOSPC for a short write). */
static int write_all(int fd, const uint8_t *p, size_t len)
{
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

int store_spill_flush(struct spill_file *f)
{
	int err = write_all(f->fd, f->buf, f->len);

	f->len = 0;
	return err;
}

int store_spill_rewind(struct spill_file *f)
{
	int err = store_spill_flush(f);

	f->len = f->pos = 0;
	f->eof = 0;
	if (!err && lseek(f->fd, 0, SEEK_SET) < 0)
		err = errno;
	return err;
}

int store_spill_next(struct spill_file *f, const uint8_t **p, const uint8_t **end)
{
	/* Refill once less than a whole record is left: its tail moves to the front. */
	while (!f->eof && f->len - f->pos < SPILL_REC_MAX) {
		ssize_t got;

		memmove(f->buf, f->buf + f->pos, f->len - f->pos);
		f->len -= f->pos;
		f->pos = 0;
		got = read(f->fd, f->buf + f->len, sizeof(f->buf) - f->len);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			return -errno;
		if (got == 0)
			f->eof = 1;
		f->len += (size_t)got;
	}
	if (f->pos >= f->len)
		return 0;
	*p = f->buf + f->pos;
	*end = f->buf + f->len;
	return 1;
}
