/*
 * nic_db.h: NIC counter rows in an analysis database (SQLite), so a post-incident report
 * can show the NIC counters of the incident's period beside its packet timelines.
 *
 *   CREATE TABLE IF NOT EXISTS nic_counter (
 *     ts_ns      INTEGER NOT NULL,  -- read time, ns since the epoch
 *     device     TEXT NOT NULL,     -- RDMA device, e.g. mlx5_0
 *     port       INTEGER NOT NULL,  -- RDMA port; 0 = device-wide hw_counters
 *     netdev     TEXT NOT NULL,     -- bound netdev, '' when unknown
 *     source     TEXT NOT NULL,     -- counters | hw_counters | netdev
 *     counter    TEXT NOT NULL,     -- the driver's file name
 *     value      INTEGER NOT NULL,  -- as read (stored as signed 64-bit, see below)
 *     rate_per_s REAL               -- NULL on a counter's first read
 *   );
 *
 * SQLite integers are signed: values >= 2^63 are stored as value - 2^64 (read back with
 * a cast to unsigned). One transaction per interval.
 */
#ifndef AGENTXDP_NIC_DB_H
#define AGENTXDP_NIC_DB_H

#include "lib/nic/sysfs_counters.h"

struct nic_db;

/* Open or create PATH and the table. NULL on failure, the reason logged. */
struct nic_db *nic_db_open(const char *path);
/* Append SNAP's counters. 0 or -EIO (logged). */
int nic_db_write(struct nic_db *db, const struct nic_snapshot *snap);
void nic_db_close(struct nic_db *db);

#endif
