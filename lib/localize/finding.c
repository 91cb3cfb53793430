/* finding.c: names and cleanup for struct finding. */
#include "lib/localize/finding.h"

#include <stdlib.h>

const char *finding_kind_name(enum finding_kind kind)
{
	static const char *const names[] = {
		[FINDING_SLOW] = "slow",
		[FINDING_LOSSY] = "lossy",
		[FINDING_CONGESTED] = "congested",
		[FINDING_HOST] = "host",
	};
	if ((unsigned)kind < sizeof(names) / sizeof(names[0]) && names[kind])
		return names[kind];
	return "unknown";
}

const char *finding_subject_kind_name(enum finding_subject_kind kind)
{
	static const char *const names[] = {
		[SUBJECT_LINK] = "link",
		[SUBJECT_HOST_LINK] = "host_link",
		[SUBJECT_PATH] = "path",
		[SUBJECT_HOST] = "host",
		[SUBJECT_SET] = "set",
		[SUBJECT_FABRIC] = "fabric",
	};
	if ((unsigned)kind < sizeof(names) / sizeof(names[0]) && names[kind])
		return names[kind];
	return "unknown";
}

void findings_free(struct finding *findings, size_t n)
{
	if (!findings)
		return;
	for (size_t i = 0; i < n; i++)
		free(findings[i].evidence);
	free(findings);
}

const char *finding_level_name(enum finding_level level)
{
	return level == FINDING_NOTICE ? "notice" : "alert";
}
