/* bpf_util.h: what every BPF tool does before it loads: check its capabilities, quiet libbpf. */
#ifndef AGENTXDP_BPF_UTIL_H
#define AGENTXDP_BPF_UTIL_H

#include <linux/capability.h>
#include <stddef.h>
#include <stdint.h>

/* Older headers lack the capabilities split out of CAP_SYS_ADMIN in Linux 5.8. */
#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif

#define CAP_MASK(cap) (1ull << (cap))

/*
 * Passes when the process's effective capabilities hold every capability of one of the
 * n_sets masks (CAP_MASK(a) | CAP_MASK(b)). Otherwise prints "<need_msg>" as the one-line
 * answer to "why can this not run here", before libbpf's longer ones. Returns 0, -EPERM,
 * or -errno when the capabilities cannot be read (also printed).
 */
int bpf_util_check_caps(const uint64_t *sets, size_t n_sets, const char *need_msg);

/* Route libbpf's own messages through ours, one level down: its warnings are our info. */
void bpf_util_set_libbpf_print(void);

#endif
