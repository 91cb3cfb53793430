/*
 * finding.h: what localization concludes, the shape every consumer shares (SQLite `finding`
 * table, --json, terminal, report, Prometheus gauge).
 */
#ifndef AGENTXDP_FINDING_H
#define AGENTXDP_FINDING_H

#include <stddef.h>
#include <stdint.h>

enum finding_kind {
	FINDING_SLOW = 0,	/* latency well above comparable flows */
	FINDING_LOSSY = 1,	/* retransmissions / NAK PSN sequence errors / timeouts */
	FINDING_CONGESTED = 2,	/* ECN CE marks and CNPs */
	FINDING_HOST = 3,	/* evidence points at an end host: RNR, slow responder turnaround */
};

enum finding_subject_kind {
	SUBJECT_LINK = 0,	/* a link named in links.csv */
	SUBJECT_HOST_LINK = 1,	/* a host's access link (no topology): subject is the host address */
	SUBJECT_PATH = 2,	/* a host pair: "a.b.c.d -> e.f.g.h" */
	SUBJECT_HOST = 3,	/* an end host */
	SUBJECT_SET = 4,	/* links the evidence cannot split: "a | b", sorted */
	SUBJECT_FABRIC = 5,	/* no topology: flows hurt together that share no host */
};

/*
 * An alert is evidence that fits a fault: a subject worse than peers carrying comparable
 * load (loss, a latency step, marking no load explains). A notice is something worth
 * seeing that ordinary traffic explains (congestion under heavy load, a mild excess):
 * listed below the alerts, never the verdict.
 */
enum finding_level {
	FINDING_ALERT = 0,
	FINDING_NOTICE = 1,
};

struct finding {
	int rank;			/* 1 = most likely culprit; alerts rank before notices */
	enum finding_level level;
	enum finding_kind kind;
	enum finding_subject_kind subject_kind;
	char subject[128];		/* link name, host address, "src -> dst", "a | b" */
	char direction[128];		/* "A -> B" when the evidence is one-directional, else "" */
	double severity;		/* kind-specific: p99 latency / healthy p99, or loss fraction */
	char severity_text[200];	/* human form: "p99 ACK latency 5.1x healthy peers" */
	double confidence;		/* 0..1 */
	uint64_t onset_ns;		/* change point, ns since the epoch; 0 if unknown */
	uint32_t flows_hurt;		/* flows whose numbers support this finding */
	char *evidence;			/* JSON object text (malloc'ed): flows and numbers to check */
};

const char *finding_kind_name(enum finding_kind kind);	/* "slow", "lossy", "congested", "host" */
const char *finding_subject_kind_name(enum finding_subject_kind kind);
const char *finding_level_name(enum finding_level level);	/* "alert", "notice" */
void findings_free(struct finding *findings, size_t n);

#endif
