/* bpf_util.c: the capability check and libbpf's log callback of the BPF tools, kept once. */
#include "lib/util/bpf_util.h"

#include <errno.h>
#include <stdarg.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "lib/util/log.h"

int bpf_util_check_caps(const uint64_t *sets, size_t n_sets, const char *need_msg)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2] = {};
	uint64_t eff;

	if (syscall(SYS_capget, &hdr, data)) {
		int err = -errno;

		pr_err("cannot read this process's capabilities: %s\n", strerror(-err));
		return err;
	}
	eff = (uint64_t)data[1].effective << 32 | data[0].effective;
	for (size_t i = 0; i < n_sets; i++)
		if ((eff & sets[i]) == sets[i])
			return 0;
	pr_err("%s\n", need_msg);
	return -EPERM;
}

/* libbpf's warnings are our info, its info our debug, its debug below our debug. */
static int libbpf_print_demoted(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	int ours = level == LIBBPF_WARN ? LOG_INFO : level == LIBBPF_INFO ? LOG_DEBUG : LOG_DEBUG + 1;

	if (ours > agentxdp_log_level)
		return 0;
	fprintf(stderr, "%s: libbpf: ", agentxdp_prog);
	return vfprintf(stderr, fmt, ap);
}

void bpf_util_set_libbpf_print(void)
{
	libbpf_set_print(libbpf_print_demoted);
}
