/* cpu_ring.h: the reader of roce_capture.bpf.c's per-CPU record rings (layout: bpf/roce_capture.h). */
#ifndef AGENTXDP_CPU_RING_H
#define AGENTXDP_CPU_RING_H

#include <stddef.h>
#include <stdint.h>

/* Called for each record, oldest timestamp first; return < 0 to stop (the record stays). */
typedef int (*cpu_ring_fn)(void *ctx, void *rec, size_t size);

struct cpu_ring_cursor {
	uint64_t cons, prod;	/* this drain's window of one CPU */
};

struct cpu_ring {
	uint8_t *mem;		/* the rings map, mmapped: one element per CPU */
	size_t map_bytes;
	size_t stride;		/* bytes between CPUs' elements (value_size rounded up to 8) */
	uint64_t region;	/* ring bytes per CPU, a power of two */
	uint32_t data_cap;	/* the program's cfg_data_cap */
	int n_cpus;
	struct cpu_ring_cursor *cur;	/* n_cpus */
	int *active;			/* n_cpus: the CPUs with records in this drain */
	int mapped;			/* mem is an mmap (else the caller's memory) */
	uint64_t corrupt;	/* records that failed the checks (the rest of that window is skipped) */
};

/* The largest region: the program's record offset must stay below the verifier's 2^29. */
#define CPU_RING_MAX_REGION (1ull << 28)

/*
 * Per-CPU region and map value size for a ring of about total_bytes split over n_cpus:
 * each region is the largest power of two not above total_bytes / n_cpus (at most
 * CPU_RING_MAX_REGION). Returns 0, or -EINVAL when that region cannot hold four of the
 * largest records.
 */
int cpu_ring_layout(uint64_t total_bytes, int n_cpus, uint32_t data_cap, uint64_t *region,
		    uint32_t *value_size);
/* mmap the loaded rings map (map_fd). Returns 0 or -errno. */
int cpu_ring_map(struct cpu_ring *r, int map_fd, int n_cpus, uint64_t region, uint32_t value_size,
		 uint32_t data_cap);
/* The same over memory the caller owns (n_cpus elements of value_size bytes, rounded to 8). */
int cpu_ring_init(struct cpu_ring *r, void *mem, int n_cpus, uint64_t region, uint32_t value_size,
		  uint32_t data_cap);
/*
 * Hand every published record to fn, merged across CPUs by timestamp, then give their
 * space back to the program. Returns the number handled, or fn's negative value.
 */
int cpu_ring_drain(struct cpu_ring *r, cpu_ring_fn fn, void *ctx);
/* Bytes waiting in all rings now. */
uint64_t cpu_ring_pending(const struct cpu_ring *r);
void cpu_ring_unmap(struct cpu_ring *r);

/* The writer's view, for tests that fill the rings as the XDP program does. */
struct roce_cap_ring_head;
struct roce_cap_rec;
struct roce_cap_ring_head *cpu_ring_head(const struct cpu_ring *r, int cpu);
struct roce_cap_rec *cpu_ring_record(const struct cpu_ring *r, int cpu, uint64_t pos);

#endif
