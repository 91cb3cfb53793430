/* export_file.h: replace a file atomically (temp file in the same folder + rename). */
#ifndef AGENTXDP_EXPORT_FILE_H
#define AGENTXDP_EXPORT_FILE_H

#include <stddef.h>

/*
 * Write DATA to PATH so that a reader (node_exporter's textfile collector, a scraper)
 * sees either the old or the new file, never half of one: write PATH.tmp.PID, fsync,
 * rename. Returns 0 or -errno (the old file stays as it was on failure).
 */
int write_file_atomic(const char *path, const void *data, size_t len);

#endif
