/*
 * qp_track_read.c: the tracker's READ records (read_queue.h) handed out and joined into
 * its own snapshot; qp_shards joins every shard's again after -j N.
 */
#include <errno.h>
#include <stdlib.h>

#include "lib/track/qp_track_int.h"

size_t qp_tracker_read_items(const struct qp_tracker *t, struct read_item *out)
{
	for (size_t i = 0; i < t->n_read_msgs; i++) {
		const struct qp_flow *f = flow_at(t, t->id_to_index[t->read_msgs[i].flow_id - 1]);

		out[i] = (struct read_item){ .m = t->read_msgs[i], .responder = f->dst_ip, .vantage = f->vantage };
	}
	return t->n_read_msgs;
}

/* One tracker's READs joined into its own snapshot (qp_shards joins all shards' again). */
int qp_tracker_read_items_fill(struct qp_tracker *t)
{
	size_t n = t->n_read_msgs;
	struct read_item *it = malloc((n ? n : 1) * sizeof(*it));
	int rc;

	if (!it)
		return -ENOMEM;
	qp_tracker_read_items(t, it);
	for (size_t i = 0; i < n; i++)
		it[i].st = &t->snap[it[i].m.flow_id - 1];
	rc = read_queue_fill(it, n);
	free(it);
	return rc;
}

size_t qp_tracker_n_read_msgs(const struct qp_tracker *t)
{
	return t->n_read_msgs;
}
