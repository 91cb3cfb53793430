/* export_file.c: the one way to create output files: no symlink followed, O_EXCL random temporaries, atomic replace. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/export/export_file.h"

#define TMP_TRIES 64

/* Write all of DATA, then fsync (a device or pipe that cannot sync is not an error). 0 or -errno. */
static int write_all_sync(int fd, const void *data, size_t len)
{
	const char *p = data;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
	}
	if (fsync(fd) < 0 && errno != EINVAL && errno != EROFS)
		return -errno;
	return 0;
}

/* Six random characters from [a-zA-Z0-9] into out (7 bytes). */
static void random_suffix(char *out)
{
	static const char set[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	unsigned char r[6];

	if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r)) {
		/* No entropy source: O_EXCL still refuses anything planted, the name is only guessable. */
		unsigned long x = (unsigned long)getpid() ^ (unsigned long)(uintptr_t)out ^ (unsigned long)random();

		for (size_t i = 0; i < sizeof(r); i++, x >>= 5)
			r[i] = (unsigned char)x;
	}
	for (size_t i = 0; i < sizeof(r); i++)
		out[i] = set[r[i] % (sizeof(set) - 1)];
	out[6] = 0;
}

/* Create a new 0640 file "NAME.tmp-XXXXXX" in DIRFD: O_EXCL|O_NOFOLLOW, random name in tmp. fd or -errno. */
static int create_tmp_at(int dirfd, const char *name, char *tmp, size_t tmplen)
{
	for (int i = 0; i < TMP_TRIES; i++) {
		char sfx[7];
		int fd;

		random_suffix(sfx);
		if ((size_t)snprintf(tmp, tmplen, "%s.tmp-%s", name, sfx) >= tmplen)
			return -ENAMETOOLONG;
		fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0640);
		if (fd >= 0) {
			/* 0640 whatever the umask. */
			if (fchmod(fd, 0640) < 0) {
				int err = -errno;

				close(fd);
				unlinkat(dirfd, tmp, 0);
				return err;
			}
			return fd;
		}
		if (errno != EEXIST)
			return -errno;
	}
	return -EEXIST;
}

/* Write NAME in DIRFD through a random temporary and renameat: the entry is replaced, never followed. */
static int replace_at(int dirfd, const char *name, const void *data, size_t len)
{
	char tmp[4096 + 16];
	int fd, err;

	fd = create_tmp_at(dirfd, name, tmp, sizeof(tmp));
	if (fd < 0)
		return fd;
	err = write_all_sync(fd, data, len);
	if (close(fd) < 0 && !err)
		err = -errno;
	if (!err && renameat(dirfd, tmp, dirfd, name) < 0)
		err = -errno;
	if (err)
		unlinkat(dirfd, tmp, 0);
	return err;
}

int write_file_atomic_at(int dirfd, const char *name, const void *data, size_t len)
{
	struct stat st;

	if (!fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) && S_ISDIR(st.st_mode))
		return -EISDIR;
	return replace_at(dirfd, name, data, len);
}

int write_file_atomic(const char *path, const void *data, size_t len)
{
	const char *slash = strrchr(path, '/');
	struct stat st;
	int dirfd, fd, err;

	/* A device, FIFO or socket (/dev/stdout, /dev/null, a pipe) is written in place:
	 * renaming a temporary file over it would replace the device node itself. */
	if (!stat(path, &st) && !S_ISREG(st.st_mode)) {
		if (S_ISDIR(st.st_mode))
			return -EISDIR;
		fd = open(path, O_WRONLY | O_CLOEXEC);
		if (fd < 0)
			return -errno;
		err = write_all_sync(fd, data, len);
		if (close(fd) < 0 && !err)
			err = -errno;
		return err;
	}
	if (!slash)
		return replace_at(AT_FDCWD, path, data, len);
	{
		char *dir = strndup(path, slash == path ? 1 : (size_t)(slash - path));

		if (!dir)
			return -ENOMEM;
		dirfd = open(dir, O_DIRECTORY | O_RDONLY | O_CLOEXEC);
		free(dir);
	}
	if (dirfd < 0)
		return -errno;
	err = replace_at(dirfd, slash + 1, data, len);
	close(dirfd);
	return err;
}

static FILE *fdopen_or_close(int fd)
{
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

FILE *fopen_output(const char *path)
{
	return fdopen_or_close(open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0640));
}

FILE *fopen_output_new_at(int dirfd, const char *name)
{
	return fdopen_or_close(openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0640));
}

/* openat(O_DIRECTORY|O_NOFOLLOW): -ELOOP for a symbolic link (Linux says ENOTDIR for one). */
static int open_dir_nofollow(int dirfd, const char *name)
{
	int fd = openat(dirfd, name, O_DIRECTORY | O_NOFOLLOW | O_RDONLY | O_CLOEXEC);
	struct stat st;

	if (fd >= 0)
		return fd;
	if (errno == ENOTDIR && !fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) && S_ISLNK(st.st_mode))
		return -ELOOP;
	return -errno;
}

int output_dir_open(const char *path)
{
	return open_dir_nofollow(AT_FDCWD, path);
}

int output_subdir_open(int dirfd, const char *name, mode_t mode)
{
	if (mkdirat(dirfd, name, mode) < 0 && errno != EEXIST)
		return -errno;
	return open_dir_nofollow(dirfd, name);
}

int output_private_dir(int dirfd, const char *prefix, char *out, size_t outlen)
{
	for (int i = 0; i < TMP_TRIES; i++) {
		char sfx[7];

		random_suffix(sfx);
		if ((size_t)snprintf(out, outlen, "%s-%s", prefix, sfx) >= outlen)
			return -ENAMETOOLONG;
		if (mkdirat(dirfd, out, 0700) < 0) {
			if (errno == EEXIST)
				continue;
			return -errno;
		}
		return open_dir_nofollow(dirfd, out);
	}
	return -EEXIST;
}

const char *output_strerror(int err)
{
	if (err < 0)
		err = -err;
	/* O_NOFOLLOW answers ELOOP; say what it means here. */
	if (err == ELOOP)
		return "is a symbolic link (refused: output is never written through a link)";
	return strerror(err);
}
