/* replay_main.c: run a libFuzzer harness over corpus files under gcc (no libFuzzer needed). */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	long len;
	int err = -1;

	if (!f) {
		fprintf(stderr, "replay: %s: cannot open\n", path);
		return -1;
	}
	if (fseek(f, 0, SEEK_END) || (len = ftell(f)) < 0 || fseek(f, 0, SEEK_SET))
		goto cleanup;
	/* Copy into an exact-size heap buffer so ASan sees any overread. */
	buf = malloc(len ? (size_t)len : 1);
	if (!buf || (len && fread(buf, 1, (size_t)len, f) != (size_t)len))
		goto cleanup;
	LLVMFuzzerTestOneInput(buf, (size_t)len);
	err = 0;
cleanup:
	free(buf);
	fclose(f);
	return err;
}

int main(int argc, char **argv)
{
	unsigned long files = 0;

	for (int i = 1; i < argc; i++) {
		struct stat st;
		if (stat(argv[i], &st)) {
			fprintf(stderr, "replay: %s: no such file or directory\n", argv[i]);
			return 1;
		}
		if (!S_ISDIR(st.st_mode)) {
			if (replay_file(argv[i]))
				return 1;
			files++;
			continue;
		}
		DIR *dir = opendir(argv[i]);
		struct dirent *de;
		while (dir && (de = readdir(dir))) {
			char path[4096];
			if (de->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "%s/%s", argv[i], de->d_name);
			if (replay_file(path)) {
				closedir(dir);
				return 1;
			}
			files++;
		}
		if (dir)
			closedir(dir);
	}
	printf("replayed %lu inputs\n", files);
	return 0;
}
