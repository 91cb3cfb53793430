/* fuzz_capture_filter.c: agentxdp-capture's --filter grammar on any text; what parses prints back the same. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/capture/capture_filter.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct capture_filter f = { 0 }, again = { 0 };
	char err[256], printed[1024], reprinted[1024];
	char *text = malloc(size + 1);
	const char *cut;
	int rc;

	if (!text)
		return 0;
	/* A NUL splits the input into two --filter options, as given twice on the command line. */
	memcpy(text, data, size);
	text[size] = '\0';
	cut = memchr(data, '\0', size);
	err[0] = '\0';
	rc = capture_filter_parse(text, &f, err, sizeof(err));
	if (!rc && cut)
		rc = capture_filter_parse(text + (cut - (const char *)data) + 1, &f, err, sizeof(err));
	if (rc) {
		if (rc != -22 /* -EINVAL */ || !err[0] || strchr(err, '\n'))
			abort();
		goto cleanup;
	}
	if (f.n_hosts > ROCE_CAP_MAX_HOSTS || (f.has_qpn && f.qpn > 0xffffff))
		abort();
	/* Round trip: the printed filter parses to the same filter. */
	capture_filter_format(&f, printed, sizeof(printed));
	if (capture_filter_parse(printed, &again, err, sizeof(err)))
		abort();
	capture_filter_format(&again, reprinted, sizeof(reprinted));
	if (strcmp(printed, reprinted))
		abort();
cleanup:
	free(text);
	return 0;
}
