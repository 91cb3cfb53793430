/* export_file.h: the one way to create output files: no symlink followed, O_EXCL random temporaries, atomic replace. */
#ifndef AGENTXDP_EXPORT_FILE_H
#define AGENTXDP_EXPORT_FILE_H

#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

/*
 * Output folders may hold entries planted by someone else (a shared /tmp, a report folder
 * reused by another user). Nothing here follows a symbolic link where it creates or
 * truncates a file, and every temporary name is random and created with O_EXCL, so a
 * planted link cannot redirect a write (issue #22).
 */

/*
 * Write DATA to PATH so that a reader (node_exporter's textfile collector, a scraper)
 * sees either the old or the new file, never half of one: write a random O_EXCL temporary
 * PATH.tmp-XXXXXX, fsync, rename (which replaces a symbolic link at PATH, never its
 * target). A device or FIFO at PATH (/dev/stdout, a pipe) is written in place.
 * Returns 0 or -errno (the old file stays as it was on failure).
 */
int write_file_atomic(const char *path, const void *data, size_t len);

/* The same for NAME inside the folder DIRFD (from output_dir_open()). */
int write_file_atomic_at(int dirfd, const char *name, const void *data, size_t len);

/*
 * fopen(path, "w") for an output file, created 0640 whatever the umask (traces and counters
 * can be sensitive); a symbolic link at PATH is refused (ELOOP). NULL with errno set.
 */
FILE *fopen_output(const char *path);

/*
 * Open the output folder PATH for the *_at() calls: O_DIRECTORY|O_NOFOLLOW, so a symbolic
 * link there is refused (ELOOP) and later names resolve in the folder that was checked.
 * The fd, or -errno.
 */
int output_dir_open(const char *path);

/* Create (MODE, if missing) and open the sub-folder NAME of DIRFD, never through a link. fd or -errno. */
int output_subdir_open(int dirfd, const char *name, mode_t mode);

/* Create a new private folder DIRFD/PREFIX-XXXXXX (0700, random name); its name in out. fd or -errno. */
int output_private_dir(int dirfd, const char *prefix, char *out, size_t outlen);

/* Create NAME in DIRFD as a new file, 0640: O_CREAT|O_EXCL|O_NOFOLLOW. NULL with errno set. */
FILE *fopen_output_new_at(int dirfd, const char *name);

/* Short words for the errors these return: "is a symbolic link (refused)" for ELOOP. */
const char *output_strerror(int err);

#endif
