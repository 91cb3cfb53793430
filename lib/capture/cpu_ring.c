/* cpu_ring.c: read the per-CPU record rings of roce_capture.bpf.c, merged by timestamp. */
#include "lib/capture/cpu_ring.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "bpf/roce_capture.h"

int cpu_ring_layout(uint64_t total_bytes, int n_cpus, uint32_t data_cap, uint64_t *region,
		    uint32_t *value_size)
{
	/* The program's classes go up to ROCE_CAP_CLASS_L_BYTES whatever -s is. */
	uint64_t largest = roce_cap_rec_size(data_cap, data_cap);
	uint64_t per_cpu, r = 4096;

	if (largest < sizeof(struct roce_cap_rec) + ROCE_CAP_CLASS_L_BYTES)
		largest = sizeof(struct roce_cap_rec) + ROCE_CAP_CLASS_L_BYTES;
	if (n_cpus < 1)
		return -EINVAL;
	per_cpu = total_bytes / (uint64_t)n_cpus;
	if (per_cpu < r || per_cpu < 4 * largest)
		return -EINVAL;
	while (r * 2 <= per_cpu && r * 2 <= CPU_RING_MAX_REGION)
		r *= 2;
	*region = r;
	*value_size = (uint32_t)(ROCE_CAP_RING_HEAD_BYTES + r + ((largest + 7) & ~7ull));
	return 0;
}

int cpu_ring_init(struct cpu_ring *r, void *mem, int n_cpus, uint64_t region, uint32_t value_size,
		  uint32_t data_cap)
{
	memset(r, 0, sizeof(*r));
	r->cur = calloc((size_t)n_cpus, sizeof(*r->cur));
	r->active = calloc((size_t)n_cpus, sizeof(*r->active));
	if (!r->cur || !r->active) {
		cpu_ring_unmap(r);
		return -ENOMEM;
	}
	r->mem = mem;
	r->stride = ((size_t)value_size + 7) & ~(size_t)7;
	r->region = region;
	r->data_cap = data_cap;
	r->n_cpus = n_cpus;
	return 0;
}

int cpu_ring_map(struct cpu_ring *r, int map_fd, int n_cpus, uint64_t region, uint32_t value_size,
		 uint32_t data_cap)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t stride = ((size_t)value_size + 7) & ~(size_t)7;
	size_t map_bytes = (stride * (size_t)n_cpus + page - 1) & ~(page - 1);
	/*
	 * Writable: the reader's cons lives in each CPU's head. MAP_POPULATE maps every page
	 * now, so the first drains of a burst take no page fault per page of ring.
	 */
	void *mem = mmap(NULL, map_bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, map_fd, 0);
	int err;

	memset(r, 0, sizeof(*r));
	if (mem == MAP_FAILED)
		return -errno;
	err = cpu_ring_init(r, mem, n_cpus, region, value_size, data_cap);
	if (err) {
		munmap(mem, map_bytes);
		return err;
	}
	r->mapped = 1;
	r->map_bytes = map_bytes;
	return 0;
}

struct roce_cap_ring_head *cpu_ring_head(const struct cpu_ring *r, int cpu)
{
	return (struct roce_cap_ring_head *)(r->mem + r->stride * (size_t)cpu);
}

struct roce_cap_rec *cpu_ring_record(const struct cpu_ring *r, int cpu, uint64_t pos)
{
	return (struct roce_cap_rec *)(r->mem + r->stride * (size_t)cpu + ROCE_CAP_RING_HEAD_BYTES +
				       (pos & (r->region - 8)));
}

/* The record's size, or 0 when it is not one the program could have written. */
static size_t record_size(const struct cpu_ring *r, const struct roce_cap_rec *rec, uint64_t avail)
{
	size_t size;

	if (avail < sizeof(*rec) || rec->version != ROCE_CAP_REC_VERSION || !rec->cap_len ||
	    rec->cap_len > r->data_cap)
		return 0;
	size = roce_cap_rec_size(rec->cap_len, r->data_cap);
	return size <= avail ? size : 0;
}

uint64_t cpu_ring_pending(const struct cpu_ring *r)
{
	uint64_t total = 0;

	for (int c = 0; c < r->n_cpus; c++) {
		const struct roce_cap_ring_head *h = cpu_ring_head(r, c);

		total += __atomic_load_n(&h->prod, __ATOMIC_ACQUIRE) - h->cons;
	}
	return total;
}

int cpu_ring_drain(struct cpu_ring *r, cpu_ring_fn fn, void *ctx)
{
	int n = 0, ret = 0, n_active = 0;
	int *active = r->active;

	/*
	 * Each CPU's records are in time order: take a window of every ring (one snapshot)
	 * and merge them. The merge looks only at the CPUs with records, rarely more than a few.
	 */
	for (int c = 0; c < r->n_cpus; c++) {
		struct roce_cap_ring_head *h = cpu_ring_head(r, c);

		r->cur[c].cons = h->cons;
		r->cur[c].prod = __atomic_load_n(&h->prod, __ATOMIC_ACQUIRE);
		if (r->cur[c].prod != r->cur[c].cons)
			active[n_active++] = c;
	}
	while (n_active) {
		struct roce_cap_rec *best = NULL;
		size_t best_size = 0;
		int best_i = -1;

		for (int i = 0; i < n_active; i++) {
			struct cpu_ring_cursor *cur = &r->cur[active[i]];
			struct roce_cap_rec *rec = cpu_ring_record(r, active[i], cur->cons);
			size_t size = record_size(r, rec, cur->prod - cur->cons);

			if (!size) {
				/* Not a record the program wrote: skip this CPU's window. */
				r->corrupt++;
				cur->cons = cur->prod;
				active[i--] = active[--n_active];
				continue;
			}
			if (!best || rec->ts_ns < best->ts_ns) {
				best = rec;
				best_size = size;
				best_i = i;
			}
		}
		if (!best)
			break;
		ret = fn(ctx, best, best_size);
		if (ret < 0)
			break;
		n++;
		r->cur[active[best_i]].cons += best_size;
		if (r->cur[active[best_i]].cons == r->cur[active[best_i]].prod)
			active[best_i] = active[--n_active];
	}
	/* Give the space back only after fn is done with it. */
	for (int c = 0; c < r->n_cpus; c++) {
		struct roce_cap_ring_head *h = cpu_ring_head(r, c);

		if (r->cur[c].cons != h->cons)
			__atomic_store_n(&h->cons, r->cur[c].cons, __ATOMIC_RELEASE);
	}
	return ret < 0 ? ret : n;
}

void cpu_ring_unmap(struct cpu_ring *r)
{
	if (r->mem && r->mapped)
		munmap(r->mem, r->map_bytes);
	free(r->cur);
	free(r->active);
	memset(r, 0, sizeof(*r));
}
