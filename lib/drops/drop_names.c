/* drop_names.c: kernel address and drop-reason naming for agentxdp-drops (no libbpf here). */
#include "lib/drops/drop_names.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/util/util.h"

/* A call site further than this past the nearest symbol is not inside it. */
#define KSYM_MAX_OFFSET (1u << 20)

int ksyms_add_line(struct ksyms *ks, const char *line)
{
	const char *p = line, *name, *end;
	uint64_t addr = 0;
	size_t digits = 0, len;
	char type, *copy;
	int err;

	for (; isxdigit((unsigned char)*p); p++, digits++) {
		int c = tolower((unsigned char)*p);

		if (digits == 16)
			return -EINVAL;
		addr = addr << 4 | (uint64_t)(isdigit(c) ? c - '0' : c - 'a' + 10);
	}
	if (!digits || *p != ' ' || !p[1] || p[2] != ' ')
		return -EINVAL;
	type = p[1];
	name = p + 3;
	for (end = name; *end && *end != '\n'; end++)
		;
	/* Modules' symbols end in "\t[module]": keep the module, with a space. */
	len = (size_t)(end - name);
	if (!len)
		return -EINVAL;
	if (type != 't' && type != 'T')
		return 0;
	if (!addr) {
		ks->zero_addrs++;
		return 0;
	}
	err = util_ensure_mem((void **)&ks->syms, &ks->cap, sizeof(*ks->syms), ks->n + 1);
	if (err)
		return err;
	copy = strndup(name, len);
	if (!copy)
		return -ENOMEM;
	for (char *c = copy; *c; c++)
		if (*c == '\t')
			*c = ' ';
	ks->syms[ks->n].addr = addr;
	ks->syms[ks->n].name = copy;
	ks->n++;
	return 0;
}

static int ksym_cmp(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return strcmp(x->name, y->name);
}

void ksyms_finish(struct ksyms *ks)
{
	if (ks->n)
		qsort(ks->syms, ks->n, sizeof(*ks->syms), ksym_cmp);
}

int ksyms_load(struct ksyms *ks, const char *path)
{
	char line[512];
	FILE *f;
	int err = 0;

	f = fopen(path, "r");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		err = ksyms_add_line(ks, line);
		if (err == -EINVAL) /* one odd line does not spoil the table */
			err = 0;
		if (err)
			break;
	}
	if (!err && ferror(f))
		err = -EIO;
	fclose(f);
	if (err)
		return err;
	ksyms_finish(ks);
	if (!ks->n && ks->zero_addrs)
		return -EPERM;
	return 0;
}

const struct ksym *ksyms_lookup(const struct ksyms *ks, uint64_t addr)
{
	size_t lo = 0, hi = ks->n;

	/* Find the first symbol above addr; the one before it contains addr. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ks->syms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	if (addr - ks->syms[lo - 1].addr > KSYM_MAX_OFFSET)
		return NULL;
	return &ks->syms[lo - 1];
}

const char *ksyms_format(const struct ksyms *ks, uint64_t addr, char *buf, size_t size)
{
	const struct ksym *sym = ksyms_lookup(ks, addr);

	if (!sym) {
		snprintf(buf, size, "0x%" PRIx64, addr);
		return buf;
	}
	/* "func+0x10 [mod]": the offset belongs to the function, before the module. */
	const char *mod = strchr(sym->name, ' ');
	int name_len = mod ? (int)(mod - sym->name) : (int)strlen(sym->name);

	snprintf(buf, size, "%.*s+0x%" PRIx64 "%s", name_len, sym->name, addr - sym->addr,
		 mod ? mod : "");
	return buf;
}

void ksyms_free(struct ksyms *ks)
{
	for (size_t i = 0; i < ks->n; i++)
		free(ks->syms[i].name);
	free(ks->syms);
	memset(ks, 0, sizeof(*ks));
}

/* Enum names to the tracepoint's own names: "SKB_DROP_REASON_NO_SOCKET" -> "NO_SOCKET",
 * "SKB_CONSUMED" -> "CONSUMED"; "SKB_CSUM" is a reason's whole name and stays. */
static const char *strip_reason_prefix(const char *name)
{
	static const char *const prefixes[] = { "SKB_DROP_REASON_SUBSYS_", "SKB_DROP_REASON_" };

	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
		size_t len = strlen(prefixes[i]);

		if (!strncmp(name, prefixes[i], len) && name[len])
			return name + len;
	}
	if (!strcmp(name, "SKB_NOT_DROPPED_YET") || !strcmp(name, "SKB_CONSUMED"))
		return name + strlen("SKB_");
	return name;
}

static int names_add(struct drop_reason_name **arr, size_t *n, size_t *cap, uint32_t value,
		     const char *name)
{
	char *copy;
	int err;

	for (size_t i = 0; i < *n; i++)
		if ((*arr)[i].value == value)
			return 0;
	err = util_ensure_mem((void **)arr, cap, sizeof(**arr), *n + 1);
	if (err)
		return err;
	copy = strdup(strip_reason_prefix(name));
	if (!copy)
		return -ENOMEM;
	(*arr)[*n].value = value;
	(*arr)[*n].name = copy;
	(*n)++;
	return 0;
}

int drop_reasons_add(struct drop_reasons *dr, uint32_t value, const char *name)
{
	return names_add(&dr->reasons, &dr->n, &dr->cap, value, name);
}

int drop_reasons_add_subsys(struct drop_reasons *dr, uint32_t subsys, const char *name)
{
	return names_add(&dr->subsystems, &dr->n_subsys, &dr->cap_subsys, subsys, name);
}

static const char *skip_space(const char *p)
{
	while (isspace((unsigned char)*p))
		p++;
	return p;
}

int drop_reasons_parse_format(struct drop_reasons *dr, const char *format_text)
{
	const char *p = strstr(format_text, "__print_symbolic(REC->reason");
	int added = 0;

	if (!p)
		return 0;
	p += strlen("__print_symbolic(REC->reason");
	/* Entries: { 2, "NOT_SPECIFIED" }, ... up to the closing parenthesis. */
	for (;;) {
		char name[128];
		unsigned long long value;
		const char *q;
		char *end;
		size_t len;
		int err;

		p = skip_space(p);
		if (*p == ',')
			p = skip_space(p + 1);
		if (*p != '{')
			break;
		p = skip_space(p + 1);
		errno = 0;
		value = strtoull(p, &end, 0);
		q = skip_space(end);
		if (end == p || errno || value > UINT32_MAX || *q != ',') {
			/* An entry the kernel left as an enum name: skip it. */
			p = strchr(p, '}');
			if (!p)
				break;
			p++;
			continue;
		}
		q = skip_space(q + 1);
		if (*q != '"')
			break;
		q++;
		end = strchr(q, '"');
		if (!end)
			break;
		len = (size_t)(end - q);
		/* "MAX" closes the table; it is no reason. */
		if (len && len < sizeof(name) && strncmp(q, "MAX", len)) {
			memcpy(name, q, len);
			name[len] = '\0';
			err = drop_reasons_add(dr, (uint32_t)value, name);
			if (err)
				return err;
			added++;
		}
		p = strchr(end, '}');
		if (!p)
			break;
		p++;
	}
	return added;
}

const char *drop_reasons_lookup(const struct drop_reasons *dr, uint32_t reason)
{
	for (size_t i = 0; i < dr->n; i++)
		if (dr->reasons[i].value == reason)
			return dr->reasons[i].name;
	return NULL;
}

const char *drop_reason_format(const struct drop_reasons *dr, uint32_t reason, char *buf,
			       size_t size)
{
	const char *name = drop_reasons_lookup(dr, reason);
	uint32_t subsys = reason >> DROP_REASON_SUBSYS_SHIFT;

	if (name) {
		snprintf(buf, size, "%s", name);
		return buf;
	}
	if (subsys) {
		const char *subsys_name = NULL;

		for (size_t i = 0; i < dr->n_subsys; i++)
			if (dr->subsystems[i].value == subsys)
				subsys_name = dr->subsystems[i].name;
		if (subsys_name)
			snprintf(buf, size, "subsys %s reason %u", subsys_name,
				 reason & ~DROP_REASON_SUBSYS_MASK);
		else
			snprintf(buf, size, "subsys %u reason %u", subsys,
				 reason & ~DROP_REASON_SUBSYS_MASK);
		return buf;
	}
	snprintf(buf, size, "reason %u", reason);
	return buf;
}

void drop_reasons_free(struct drop_reasons *dr)
{
	for (size_t i = 0; i < dr->n; i++)
		free(dr->reasons[i].name);
	for (size_t i = 0; i < dr->n_subsys; i++)
		free(dr->subsystems[i].name);
	free(dr->reasons);
	free(dr->subsystems);
	memset(dr, 0, sizeof(*dr));
}
