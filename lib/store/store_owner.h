/* store_owner.h: which files -o may replace (lib/store only). */
#ifndef AGENTXDP_STORE_OWNER_H
#define AGENTXDP_STORE_OWNER_H

#include <stddef.h>

/*
 * May PATH be replaced by a new analysis? 0: yes (missing, empty, or an AgentXDP analysis
 * database holding only what agentxdp-analyze creates); -2 with one line in err: no. Only
 * the header is read from a file that is not SQLite.
 */
int store_may_replace(const char *path, char *err, size_t errlen);

#endif
