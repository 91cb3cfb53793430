/* store_spill.h: raw rows waiting for the end of a run in an unlinked file beside the
 * database (--samples findings keeps them only for the flows the findings name). */
#ifndef AGENTXDP_STORE_SPILL_H
#define AGENTXDP_STORE_SPILL_H

#include <stddef.h>
#include <sys/types.h>

/* Creates base + suffix, unlinked at once: nothing to clean up. 0 and *fd, or an errno. */
int store_spill_open(const char *base, const char *suffix, int *fd);

/* All len bytes or an errno (ENOSPC for a short write). */
int store_spill_write(int fd, const void *buf, size_t len);

/* Back to the start, for reading: 0 or an errno. */
int store_spill_rewind(int fd);

/* Up to cap bytes: how many, 0 at the end, or -errno. */
ssize_t store_spill_read(int fd, void *buf, size_t cap);

#endif
