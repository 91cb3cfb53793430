/* drop_names.h: name kernel addresses (kallsyms) and drop reasons (BTF or tracefs format). */
#ifndef AGENTXDP_DROP_NAMES_H
#define AGENTXDP_DROP_NAMES_H

#include <stddef.h>
#include <stdint.h>

/* One kernel text symbol of /proc/kallsyms. */
struct ksym {
	uint64_t addr;
	char *name; /* "nf_hook_slow", or "ovs_vport_receive [openvswitch]"; owned */
};

/* Every text symbol, sorted by address, for a binary search. */
struct ksyms {
	struct ksym *syms;
	size_t n, cap;
	size_t zero_addrs; /* text symbols read with address 0 (kptr_restrict hides them) */
};

/* Adds one /proc/kallsyms line ("ffffffff81f81c50 T nf_hook_slow [mod]"); non-text symbols
 * are skipped. Returns 0, -EINVAL for a malformed line, -ENOMEM or -EOVERFLOW. */
int ksyms_add_line(struct ksyms *ks, const char *line);
/* Sorts the table; call once after the last ksyms_add_line. */
void ksyms_finish(struct ksyms *ks);
/* Reads a kallsyms file. Returns 0 or a negative errno (-EPERM when every address is 0). */
int ksyms_load(struct ksyms *ks, const char *path);
/* The symbol containing addr (the last one at or below it), or NULL. */
const struct ksym *ksyms_lookup(const struct ksyms *ks, uint64_t addr);
/* "nf_hook_slow+0x9c", or "0xffffffff81f81cec" when unknown; returns buf. */
const char *ksyms_format(const struct ksyms *ks, uint64_t addr, char *buf, size_t size);
void ksyms_free(struct ksyms *ks);

/* Names of enum skb_drop_reason values and of the drop subsystems (enum skb_drop_reason_subsys). */
struct drop_reason_name {
	uint32_t value;
	char *name; /* without the SKB_DROP_REASON_ / SKB_ prefix: "NETFILTER_DROP" */
};

struct drop_reasons {
	struct drop_reason_name *reasons;
	size_t n, cap;
	struct drop_reason_name *subsystems; /* value = subsystem id (reason >> 16) */
	size_t n_subsys, cap_subsys;
	const char *source; /* where the names came from: "BTF", "tracefs" or NULL (none) */
};

#define DROP_REASON_SUBSYS_SHIFT 16
#define DROP_REASON_SUBSYS_MASK 0xffff0000u

/* Adds a reason (or, with subsystem != 0, a subsystem) name; strips the kernel prefixes.
 * A value already named keeps its first name. Returns 0, -ENOMEM or -EOVERFLOW. */
int drop_reasons_add(struct drop_reasons *dr, uint32_t value, const char *name);
int drop_reasons_add_subsys(struct drop_reasons *dr, uint32_t subsys, const char *name);
/*
 * Parses a tracepoint format file's text (events/skb/kfree_skb/format): the
 * __print_symbolic(REC->reason, { 2, "NOT_SPECIFIED" }, ...) table. Returns the number of
 * names added (0 when the format has no reason table), or -ENOMEM or -EOVERFLOW.
 */
int drop_reasons_parse_format(struct drop_reasons *dr, const char *format_text);
/* The name of reason, or NULL. */
const char *drop_reasons_lookup(const struct drop_reasons *dr, uint32_t reason);
/* "NETFILTER_DROP", "subsys OPENVSWITCH reason 3", "subsys 7 reason 3" or "reason 200". */
const char *drop_reason_format(const struct drop_reasons *dr, uint32_t reason, char *buf,
			       size_t size);
void drop_reasons_free(struct drop_reasons *dr);

#endif
