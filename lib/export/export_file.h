/* export_file.h: replace a file atomically (temp file in the same folder + rename); open a private output file. */
#ifndef AGENTXDP_EXPORT_FILE_H
#define AGENTXDP_EXPORT_FILE_H

#include <stddef.h>
#include <stdio.h>

/*
 * Write DATA to PATH so that a reader (node_exporter's textfile collector, a scraper)
 * sees either the old or the new file, never half of one: write PATH.tmp.PID, fsync,
 * rename. Returns 0 or -errno (the old file stays as it was on failure).
 */
int write_file_atomic(const char *path, const void *data, size_t len);

/*
 * fopen(path, "w") for an output file, created 0640 whatever the umask (traces and counters
 * can be sensitive). NULL with errno set on failure.
 */
FILE *fopen_output(const char *path);

#endif
