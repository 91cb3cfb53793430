/* export_file.c: replace a file atomically (temp file in the same folder + rename); open a private output file. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/export/export_file.h"

int write_file_atomic(const char *path, const void *data, size_t len)
{
	const char *p = data;
	char *tmp = NULL;
	int fd = -1, err = 0;

	struct stat st;

	/* A device, FIFO or socket (/dev/stdout, /dev/null, a pipe) is written in place:
	 * renaming a temporary file over it would replace the device node itself. */
	if (!stat(path, &st) && !S_ISREG(st.st_mode)) {
		if (S_ISDIR(st.st_mode))
			return -EISDIR;
		fd = open(path, O_WRONLY | O_CLOEXEC);
		if (fd < 0)
			return -errno;
	} else {
		if (asprintf(&tmp, "%s.tmp.%ld", path, (long)getpid()) < 0)
			return -ENOMEM;
		fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0640);
	}
	if (fd < 0) {
		err = -errno;
		goto cleanup;
	}
	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			err = -errno;
			goto cleanup;
		}
		p += n;
		len -= (size_t)n;
	}
	if (fsync(fd) < 0 && errno != EINVAL && errno != EROFS) {
		err = -errno;
		goto cleanup;
	}
	if (close(fd) < 0) {
		fd = -1;
		err = -errno;
		goto cleanup;
	}
	fd = -1;
	if (tmp && rename(tmp, path) < 0)
		err = -errno;
cleanup:
	if (fd >= 0)
		close(fd);
	if (err && tmp)
		unlink(tmp);
	free(tmp);
	return err;
}

FILE *fopen_output(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0640);
	FILE *f;

	if (fd < 0)
		return NULL;
	f = fdopen(fd, "w");
	if (!f) {
		int err = errno;

		close(fd);
		errno = err;
	}
	return f;
}
