/* test_sanitize.c: untrusted text made safe to print, one class of hostile byte at a time. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "lib/util/sanitize.h"

static void expect(const char *in, const char *want)
{
	char buf[256];

	assert_string_equal(sanitize_text(in, buf, sizeof(buf)), want);
	/* Sanitized text is already safe: a second pass leaves it as it is. */
	char again[256];
	assert_string_equal(sanitize_text(buf, again, sizeof(again)), want);
}

static void test_plain_names_unchanged(void **state)
{
	(void)state;
	expect("spine1:eth3 -> leaf2:eth1", "spine1:eth3 -> leaf2:eth1");
	expect("/tmp/a b/trace.pcapng", "/tmp/a b/trace.pcapng");
	expect("back\\slash | pipe", "back\\slash | pipe");
	expect("tab\there", "tab\there");
	expect("", "");
	expect(NULL, "");
}

static void test_c0_controls_and_del_escaped(void **state)
{
	(void)state;
	expect("\x1b[31mred\x1b[0m", "\\x1b[31mred\\x1b[0m");
	expect("line\nfake\r", "line\\x0afake\\x0d");
	expect("bell\a del\x7f", "bell\\x07 del\\x7f");
}

static void test_c1_controls_escaped(void **state)
{
	(void)state;
	expect("csi\xc2\x9b" "31m", "csi\\u009b31m");	/* U+009B, the 8-bit CSI */
	expect("\xc2\x80\xc2\x9f", "\\u0080\\u009f");
	expect("nbsp\xc2\xa0ok", "nbsp\xc2\xa0ok");	/* U+00A0 is printable */
}

static void test_bidi_controls_escaped(void **state)
{
	(void)state;
	expect("abc\xe2\x80\xae" "cba", "abc\\u202ecba");	/* U+202E RIGHT-TO-LEFT OVERRIDE */
	expect("\xe2\x80\xaa\xe2\x80\xac", "\\u202a\\u202c");
	expect("\xe2\x81\xa6x\xe2\x81\xa9", "\\u2066x\\u2069");
	expect("\xe2\x80\x8e\xe2\x80\x8f", "\\u200e\\u200f");
	expect("\xe2\x80\x94 dash", "\xe2\x80\x94 dash");	/* U+2014 is printable */
}

static void test_invalid_utf8_escaped(void **state)
{
	(void)state;
	expect("raw\x9b" "csi", "raw\\x9bcsi");			/* a lone continuation byte */
	expect("\xc0\xaf", "\\xc0\\xaf");			/* overlong '/' */
	expect("\xed\xa0\x80", "\\xed\\xa0\\x80");		/* a surrogate */
	expect("cut\xe2\x80", "cut\\xe2\\x80");			/* a sequence cut short */
	expect("\xf5\x80\x80\x80", "\\xf5\\x80\\x80\\x80");	/* past U+10FFFF */
	expect("\xf0\x9f\x98\x80 ok", "\xf0\x9f\x98\x80 ok");	/* U+1F600 is fine */
}

/* A long input is cut between whole characters and escapes, never inside one, always ended. */
static void test_long_input_truncated_safely(void **state)
{
	char in[4096], buf[64];

	(void)state;
	for (size_t i = 0; i + 1 < sizeof(in); i++)
		in[i] = "a\x1b\xe2\x80\xae\x9b"[i % 6];
	in[sizeof(in) - 1] = '\0';
	for (size_t len = 1; len <= sizeof(buf); len++) {
		char again[64];

		memset(buf, 'Z', sizeof(buf));
		sanitize_text(in, buf, len);
		assert_true(strlen(buf) < len);
		/* a whole-escape prefix: sanitizing it again gives it back unchanged */
		assert_string_equal(sanitize_text(buf, again, sizeof(again)), buf);
		for (const char *p = buf; *p; p++)
			assert_true((unsigned char)*p >= 0x20 && (unsigned char)*p < 0x7f);
		size_t n = strlen(buf);
		if (n)	/* never ends inside "\x1b", "\u202e" or "\x9b" */
			assert_true(buf[n - 1] == 'a' || buf[n - 1] == 'b' || buf[n - 1] == 'e');
	}
	buf[0] = 'Z';
	sanitize_text("x", buf, 0);	/* no room at all: nothing written */
	assert_int_equal(buf[0], 'Z');
	/* SANITIZE_BUF_LEN is enough for the worst case: every byte escaped. */
	char worst[SANITIZE_BUF_LEN(8)];
	sanitize_text("\x9b\x9b\x9b\x9b\x9b\x9b\x9b", worst, sizeof(worst));
	assert_string_equal(worst, "\\x9b\\x9b\\x9b\\x9b\\x9b\\x9b\\x9b");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plain_names_unchanged),
		cmocka_unit_test(test_c0_controls_and_del_escaped),
		cmocka_unit_test(test_c1_controls_escaped),
		cmocka_unit_test(test_bidi_controls_escaped),
		cmocka_unit_test(test_invalid_utf8_escaped),
		cmocka_unit_test(test_long_input_truncated_safely),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
