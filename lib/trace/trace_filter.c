/* trace_filter.c: pcap-filter expressions over trace frames, compiled by libpcap per link type. */
#include "lib/trace/trace_filter.h"

#include <errno.h>
#include <pcap/pcap.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/trace/trace_reader.h"
#include "lib/util/util.h"

#define FILTER_SNAPLEN 262144 /* libpcap's MAXIMUM_SNAPLEN: no frame is cut short by the program */

/* The program for one link type; `usable` is false when the expression does not apply to it. */
struct filter_prog {
	int linktype;
	bool usable;
	struct bpf_program prog;
};

struct trace_filter {
	char *expr;
	struct filter_prog *progs;	/* one per link type seen, in the order seen */
	size_t n_progs, cap_progs;
	char error[PCAP_ERRBUF_SIZE + 256];
};

/* pcap_compile for LINKTYPE; 0 or -1 with pcap's reason in why. */
static int compile_for(const char *expr, int linktype, struct bpf_program *prog, char *why,
		       size_t why_len)
{
	pcap_t *dead = pcap_open_dead(linktype, FILTER_SNAPLEN);
	int rc;

	if (!dead) {
		snprintf(why, why_len, "%s", strerror(ENOMEM));
		return -1;
	}
	rc = pcap_compile(dead, prog, expr, 1, PCAP_NETMASK_UNKNOWN);
	if (rc)
		snprintf(why, why_len, "%s", pcap_geterr(dead));
	pcap_close(dead);
	return rc ? -1 : 0;
}

int trace_filter_new(struct trace_filter **out, const char *expr, char *err, size_t err_len)
{
	struct trace_filter *f;
	struct bpf_program prog;
	char why[PCAP_ERRBUF_SIZE];

	*out = NULL;
	if (compile_for(expr, DLT_EN10MB, &prog, why, sizeof(why))) {
		snprintf(err, err_len, "filter '%s': %s", expr, why);
		return -1;
	}
	pcap_freecode(&prog); /* compiled again when the first Ethernet frame arrives */
	f = calloc(1, sizeof(*f));
	if (f)
		f->expr = strdup(expr);
	if (!f || !f->expr) {
		free(f);
		snprintf(err, err_len, "filter: %s", strerror(ENOMEM));
		return -1;
	}
	*out = f;
	return 0;
}

static struct filter_prog *prog_for(struct trace_filter *f, int linktype, int *fresh)
{
	struct filter_prog *p;
	char why[PCAP_ERRBUF_SIZE];

	*fresh = 0;
	for (size_t i = 0; i < f->n_progs; i++)
		if (f->progs[i].linktype == linktype)
			return &f->progs[i];
	if (util_ensure_mem((void **)&f->progs, &f->cap_progs, sizeof(*f->progs), f->n_progs + 1)) {
		snprintf(f->error, sizeof(f->error), "filter '%s': %s", f->expr, strerror(ENOMEM));
		return NULL;
	}
	p = &f->progs[f->n_progs++];
	memset(p, 0, sizeof(*p));
	p->linktype = linktype;
	p->usable = !compile_for(f->expr, linktype, &p->prog, why, sizeof(why));
	if (!p->usable)
		snprintf(f->error, sizeof(f->error),
			 "filter '%s' cannot apply to link type %d (%s): %s; its frames are left out",
			 f->expr, linktype, trace_linktype_name(linktype), why);
	*fresh = 1;
	return p;
}

int trace_filter_match(struct trace_filter *f, int linktype, const uint8_t *data, uint32_t caplen,
		       uint32_t origlen)
{
	struct pcap_pkthdr h = { .caplen = caplen, .len = origlen };
	struct filter_prog *p;
	int fresh;

	p = prog_for(f, linktype, &fresh);
	if (!p)
		return -1;
	if (!p->usable)
		return fresh ? -1 : 0;
	return pcap_offline_filter(&p->prog, &h, data) != 0;
}

const char *trace_filter_error(const struct trace_filter *f)
{
	return f->error;
}

const char *trace_filter_expr(const struct trace_filter *f)
{
	return f->expr;
}

void trace_filter_free(struct trace_filter *f)
{
	if (!f)
		return;
	for (size_t i = 0; i < f->n_progs; i++)
		if (f->progs[i].usable)
			pcap_freecode(&f->progs[i].prog);
	free(f->progs);
	free(f->expr);
	free(f);
}
