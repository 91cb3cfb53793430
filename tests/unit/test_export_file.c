/* test_export_file.c: output files are 0640 whatever the caller's umask; atomic replace keeps no temporary; no link is followed. */
#include <dirent.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "lib/export/export_file.h"

static char dir[64];

static int setup(void **state)
{
	(void)state;
	strcpy(dir, "/tmp/agentxdp-test-export.XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	char path[512];
	DIR *d = opendir(dir);
	struct dirent *e;

	(void)state;
	while (d && (e = readdir(d)))
		if (e->d_name[0] != '.') {
			snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
			unlink(path);
		}
	if (d)
		closedir(d);
	return rmdir(dir);
}

static unsigned mode_of(const char *path)
{
	struct stat st;

	assert_int_equal(stat(path, &st), 0);
	return st.st_mode & 07777;
}

static void test_fopen_output_0640_under_any_umask(void **state)
{
	static const mode_t umasks[] = { 0, 022, 002 };
	char path[128];

	(void)state;
	for (size_t i = 0; i < sizeof(umasks) / sizeof(umasks[0]); i++) {
		mode_t old = umask(umasks[i]);
		FILE *f;

		snprintf(path, sizeof(path), "%s/out%zu.csv", dir, i);
		f = fopen_output(path);
		umask(old);
		assert_non_null(f);
		assert_true(fputs("a,b\n", f) >= 0);
		assert_int_equal(fclose(f), 0);
		assert_int_equal(mode_of(path), 0640);
	}
	/* A folder that does not exist: NULL, errno says why. */
	snprintf(path, sizeof(path), "%s/missing/x.csv", dir);
	assert_null(fopen_output(path));
}

static void test_write_file_atomic_0640_no_temporary(void **state)
{
	char path[128];
	DIR *d;
	struct dirent *e;
	int entries = 0;
	mode_t old = umask(0);

	(void)state;
	snprintf(path, sizeof(path), "%s/m.prom", dir);
	assert_int_equal(write_file_atomic(path, "a 1\n", 4), 0);
	assert_int_equal(write_file_atomic(path, "a 2\n", 4), 0);
	umask(old);
	assert_int_equal(mode_of(path), 0640);
	d = opendir(dir);
	assert_non_null(d);
	while ((e = readdir(d)))
		entries += e->d_name[0] != '.';
	closedir(d);
	assert_int_equal(entries, 1);
}

/* A link planted at the output name: fopen_output() refuses it, the target keeps its bytes. */
static void test_fopen_output_refuses_planted_symlink(void **state)
{
	char link[128], target[128], buf[16] = { 0 };
	FILE *f;

	(void)state;
	snprintf(target, sizeof(target), "%s/target", dir);
	snprintf(link, sizeof(link), "%s/qp.csv", dir);
	f = fopen(target, "w");
	assert_non_null(f);
	fputs("victim", f);
	fclose(f);
	assert_int_equal(symlink(target, link), 0);
	assert_null(fopen_output(link));
	assert_int_equal(errno, ELOOP);
	f = fopen(target, "r");
	assert_non_null(f);
	assert_non_null(fgets(buf, sizeof(buf), f));
	fclose(f);
	assert_string_equal(buf, "victim");
}

/* In a folder opened with output_dir_open(): new files are O_EXCL, the page replaces a link. */
static void test_output_dir_at_never_follows(void **state)
{
	char target[128], path[128], buf[16] = { 0 };
	struct stat st;
	int dfd;
	FILE *f;

	(void)state;
	snprintf(target, sizeof(target), "%s/target", dir);
	f = fopen(target, "w");
	assert_non_null(f);
	fputs("victim", f);
	fclose(f);
	dfd = output_dir_open(dir);
	assert_true(dfd >= 0);
	snprintf(path, sizeof(path), "%s/chart.gp", dir);
	assert_int_equal(symlink(target, path), 0);
	assert_null(fopen_output_new_at(dfd, "chart.gp"));
	snprintf(path, sizeof(path), "%s/index.html", dir);
	assert_int_equal(symlink(target, path), 0);
	assert_int_equal(write_file_atomic_at(dfd, "index.html", "<p>", 3), 0);
	assert_int_equal(lstat(path, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	close(dfd);
	f = fopen(target, "r");
	assert_non_null(f);
	assert_non_null(fgets(buf, sizeof(buf), f));
	fclose(f);
	assert_string_equal(buf, "victim");
	/* The folder itself a link: refused. */
	snprintf(path, sizeof(path), "%s/dirlink", dir);
	assert_int_equal(symlink("/tmp", path), 0);
	assert_int_equal(output_dir_open(path), -ELOOP);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_fopen_output_0640_under_any_umask, setup, teardown),
		cmocka_unit_test_setup_teardown(test_write_file_atomic_0640_no_temporary, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fopen_output_refuses_planted_symlink, setup, teardown),
		cmocka_unit_test_setup_teardown(test_output_dir_at_never_follows, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
