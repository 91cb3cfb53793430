/* test_capture_iface.c: interface types read from a fake sysfs; InfiniBand ports refused. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "lib/capture/capture_iface.h"

static char root[64];

/* SYSFS/class/net/NAME/type holding `text`. */
static void fake_iface(const char *name, const char *text)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/class", root);
	mkdir(path, 0700);
	snprintf(path, sizeof(path), "%s/class/net", root);
	mkdir(path, 0700);
	snprintf(path, sizeof(path), "%s/class/net/%s", root, name);
	assert_int_equal(mkdir(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/class/net/%s/type", root, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static int setup(void **state)
{
	snprintf(root, sizeof(root), "/tmp/agentxdp-iface.XXXXXX");
	return mkdtemp(root) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	return system(cmd) == 0 ? 0 : -1;
}

static void test_types(void **state)
{
	char err[256] = "";

	fake_iface("eth0", "1\n");
	fake_iface("ib0", "32\n");
	fake_iface("odd0", "x\n");
	assert_int_equal(capture_iface_arphrd(root, "eth0"), 1);
	assert_int_equal(capture_iface_arphrd(root, "ib0"), ARPHRD_INFINIBAND_TYPE);
	assert_int_equal(capture_iface_arphrd(root, "odd0"), -EINVAL);
	assert_int_equal(capture_iface_arphrd(root, "nope0"), -ENOENT);
	assert_int_equal(capture_iface_arphrd(root, "../x"), -EINVAL);
	assert_int_equal(capture_iface_arphrd(root, ".."), -EINVAL);

	assert_int_equal(capture_iface_check(root, "eth0", err, sizeof(err)), 0);
	assert_int_equal(capture_iface_check(root, "nope0", err, sizeof(err)), 0);
	assert_int_equal(capture_iface_check(root, "ib0", err, sizeof(err)), -EPROTONOSUPPORT);
	assert_non_null(strstr(err, "ib0 is an InfiniBand port"));
	assert_non_null(strstr(err, "ibdump"));
	assert_null(strchr(err, '\n'));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_types, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
