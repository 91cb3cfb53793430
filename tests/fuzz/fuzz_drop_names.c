/*
 * fuzz_drop_names.c: agentxdp-drops' readers of kernel text on any bytes: /proc/kallsyms
 * lines (then look-ups and formatting) and the kfree_skb tracepoint format's reason table.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/drops/drop_names.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ksyms ks = { 0 };
	struct drop_reasons dr = { 0 };
	char *text = malloc(size + 1), *line, *save = NULL, buf[128];
	uint64_t addr = 0;

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';

	/* The same bytes as a tracepoint format file ... */
	if (drop_reasons_parse_format(&dr, text) < 0)
		goto cleanup;
	for (size_t i = 0; i < dr.n; i++)
		if (!dr.reasons[i].name || drop_reasons_lookup(&dr, dr.reasons[i].value) == NULL)
			abort();
	drop_reason_format(&dr, (size > 4 ? (uint32_t)data[1] << 16 : 0) | (size ? data[0] : 0), buf,
			   sizeof(buf));

	/* ... and as kallsyms lines. */
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		int rc = ksyms_add_line(&ks, line);

		if (rc && rc != -22 /* -EINVAL */)
			goto cleanup;
	}
	ksyms_finish(&ks);
	for (size_t i = 1; i < ks.n; i++)
		if (ks.syms[i - 1].addr > ks.syms[i].addr)
			abort();
	for (size_t i = 0; i + 8 <= size && i < 64; i += 8) {
		memcpy(&addr, data + i, 8);
		const struct ksym *s = ksyms_lookup(&ks, addr);

		if (s && s->addr > addr)
			abort();
		ksyms_format(&ks, addr, buf, sizeof(buf));
	}
cleanup:
	ksyms_free(&ks);
	drop_reasons_free(&dr);
	free(text);
	return 0;
}
