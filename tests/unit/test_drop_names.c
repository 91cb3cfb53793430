/* test_drop_names.c: kallsyms lookup and drop-reason naming of agentxdp-drops. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "lib/drops/drop_names.h"

static void add_lines(struct ksyms *ks, const char *const *lines, size_t n)
{
	for (size_t i = 0; i < n; i++)
		assert_int_equal(ksyms_add_line(ks, lines[i]), 0);
	ksyms_finish(ks);
}

static void test_ksyms_lookup(void **state)
{
	/* Out of order, with data symbols and a module, as /proc/kallsyms has them. */
	static const char *const lines[] = {
		"ffffffff81f81c50 T nf_hook_slow\n",
		"ffffffff81000000 T _stext\n",
		"ffffffff82a00000 D some_data\n",
		"ffffffff81e94f20 T sk_skb_reason_drop\n",
		"ffffffffc0a01000 t ovs_vport_receive\t[openvswitch]\n",
		"ffffffff81f81d80 t nf_hook_slow_list\n",
	};
	struct ksyms ks = {};
	char buf[128];

	add_lines(&ks, lines, sizeof(lines) / sizeof(lines[0]));
	assert_int_equal(ks.n, 5); /* the data symbol is not text */
	assert_string_equal(ksyms_format(&ks, 0xffffffff81f81c50ull, buf, sizeof(buf)),
			    "nf_hook_slow+0x0");
	assert_string_equal(ksyms_format(&ks, 0xffffffff81f81cecull, buf, sizeof(buf)),
			    "nf_hook_slow+0x9c");
	assert_string_equal(ksyms_format(&ks, 0xffffffff81f81d7full, buf, sizeof(buf)),
			    "nf_hook_slow+0x12f");
	assert_string_equal(ksyms_format(&ks, 0xffffffff81f81d80ull, buf, sizeof(buf)),
			    "nf_hook_slow_list+0x0");
	assert_string_equal(ksyms_format(&ks, 0xffffffffc0a01010ull, buf, sizeof(buf)),
			    "ovs_vport_receive+0x10 [openvswitch]");
	/* Below the first symbol, and far past the last: no name, the address. */
	assert_string_equal(ksyms_format(&ks, 0xffffffff80000000ull, buf, sizeof(buf)),
			    "0xffffffff80000000");
	assert_null(ksyms_lookup(&ks, 0xffffffffc0f00000ull));
	ksyms_free(&ks);
}

static void test_ksyms_bad_lines(void **state)
{
	struct ksyms ks = {};

	assert_int_equal(ksyms_add_line(&ks, ""), -EINVAL);
	assert_int_equal(ksyms_add_line(&ks, "zzzz T foo"), -EINVAL);
	assert_int_equal(ksyms_add_line(&ks, "ffffffff81000000 T"), -EINVAL);
	assert_int_equal(ksyms_add_line(&ks, "ffffffff81000000 T \n"), -EINVAL);
	assert_int_equal(ksyms_add_line(&ks, "1ffffffff81000000 T foo"), -EINVAL);
	assert_int_equal(ksyms_add_line(&ks, "ffffffff81000000TT foo"), -EINVAL);
	/* kptr_restrict shows zeros: counted, not stored. */
	assert_int_equal(ksyms_add_line(&ks, "0000000000000000 T foo"), 0);
	assert_int_equal(ks.n, 0);
	assert_int_equal(ks.zero_addrs, 1);
	ksyms_finish(&ks);
	assert_null(ksyms_lookup(&ks, 0x1000));
	ksyms_free(&ks);
}

static void test_ksyms_load_hidden(void **state)
{
	char path[] = "/tmp/test_drop_names.XXXXXX";
	int fd = mkstemp(path);
	struct ksyms ks = {};
	FILE *f;

	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	assert_non_null(f);
	fputs("0000000000000000 T _stext\n0000000000000000 t foo\n", f);
	fclose(f);
	assert_int_equal(ksyms_load(&ks, path), -EPERM);
	ksyms_free(&ks);
	unlink(path);
	assert_int_equal(ksyms_load(&ks, "/nonexistent/kallsyms"), -ENOENT);
}

static void test_reason_names(void **state)
{
	struct drop_reasons dr = {};
	char buf[64];

	/* As in BTF: enum skb_drop_reason and enum skb_drop_reason_subsys. */
	assert_int_equal(drop_reasons_add(&dr, 1, "SKB_CONSUMED"), 0);
	assert_int_equal(drop_reasons_add(&dr, 12, "SKB_DROP_REASON_NETFILTER_DROP"), 0);
	assert_int_equal(drop_reasons_add(&dr, 75, "SKB_DROP_REASON_SKB_CSUM"), 0);
	assert_int_equal(drop_reasons_add(&dr, 12, "SKB_DROP_REASON_SOMETHING_ELSE"), 0);
	assert_int_equal(drop_reasons_add_subsys(&dr, 2, "SKB_DROP_REASON_SUBSYS_OPENVSWITCH"), 0);
	/* A module's subsystem reason named in its own BTF. */
	assert_int_equal(drop_reasons_add(&dr, (2u << 16) | 1, "OVS_DROP_LAST_ACTION"), 0);

	assert_string_equal(drop_reason_format(&dr, 12, buf, sizeof(buf)), "NETFILTER_DROP");
	assert_string_equal(drop_reason_format(&dr, 1, buf, sizeof(buf)), "CONSUMED");
	assert_string_equal(drop_reason_format(&dr, 75, buf, sizeof(buf)), "SKB_CSUM");
	assert_string_equal(drop_reason_format(&dr, 200, buf, sizeof(buf)), "reason 200");
	assert_string_equal(drop_reason_format(&dr, (2u << 16) | 1, buf, sizeof(buf)),
			    "OVS_DROP_LAST_ACTION");
	assert_string_equal(drop_reason_format(&dr, (2u << 16) | 7, buf, sizeof(buf)),
			    "subsys OPENVSWITCH reason 7");
	assert_string_equal(drop_reason_format(&dr, (9u << 16) | 3, buf, sizeof(buf)),
			    "subsys 9 reason 3");
	drop_reasons_free(&dr);
}

/* The print format of 6.18's events/skb/kfree_skb/format, shortened. */
static const char kfree_skb_format[] =
	"name: kfree_skb\nID: 2310\nformat:\n"
	"\tfield:void * location;\toffset:16;\tsize:8;\tsigned:0;\n"
	"\tfield:enum skb_drop_reason reason;\toffset:36;\tsize:4;\tsigned:0;\n\n"
	"print fmt: \"skbaddr=%p rx_sk=%p protocol=%u location=%pS reason: %s\", REC->skbaddr, "
	"REC->rx_sk, REC->protocol, REC->location, __print_symbolic(REC->reason, "
	"{ 2, \"NOT_SPECIFIED\" }, { 3, \"NO_SOCKET\" }, { 12, \"NETFILTER_DROP\" }, "
	"{ SKB_DROP_REASON_FOO, \"FOO\" }, { 0x40, \"QDISC_DROP\" }, { 75, \"SKB_CSUM\" }, "
	"{ 128, \"MAX\" })\n";

static void test_reason_format_file(void **state)
{
	struct drop_reasons dr = {};
	char buf[64];

	assert_int_equal(drop_reasons_parse_format(&dr, kfree_skb_format), 5);
	assert_string_equal(drop_reasons_lookup(&dr, 12), "NETFILTER_DROP");
	assert_string_equal(drop_reasons_lookup(&dr, 64), "QDISC_DROP");
	assert_string_equal(drop_reasons_lookup(&dr, 75), "SKB_CSUM");
	assert_null(drop_reasons_lookup(&dr, 128)); /* MAX is no reason */
	assert_string_equal(drop_reason_format(&dr, 3, buf, sizeof(buf)), "NO_SOCKET");
	drop_reasons_free(&dr);

	/* Formats without a reason table (kernels before 5.17), or cut short. */
	assert_int_equal(drop_reasons_parse_format(&dr, "print fmt: \"skbaddr=%p\", REC->skbaddr"),
			 0);
	assert_int_equal(drop_reasons_parse_format(&dr, "__print_symbolic(REC->reason, { 2, \"NOT"),
			 0);
	assert_int_equal(drop_reasons_parse_format(&dr, "__print_symbolic(REC->reason, { 2,"), 0);
	assert_int_equal(drop_reasons_parse_format(&dr, "__print_symbolic(REC->reason, { 99999999999, \"X\" }"), 0);
	assert_int_equal(dr.n, 0);
	drop_reasons_free(&dr);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ksyms_lookup),	    cmocka_unit_test(test_ksyms_bad_lines),
		cmocka_unit_test(test_ksyms_load_hidden),   cmocka_unit_test(test_reason_names),
		cmocka_unit_test(test_reason_format_file),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
