/* trace_reader.c: pcap/pcapng files (or stdin) through libpcap, merged by timestamp, with per-file health. */
#include <errno.h>
#include <fcntl.h>
#include <pcap/pcap.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/trace/pcapng_drops.h"
#include "lib/trace/trace_reader.h"

#define INPUT_BUFFER_BYTES (256 * 1024)

struct trace_input {
	char *path;
	pcap_t *pcap;
	int linktype;
	uint64_t frame_number;		/* frames read so far */
	struct trace_health health;
	/* The frame waiting in the merge heap (valid until the next pcap_next_ex on this input). */
	bool pending;
	uint64_t pending_ns;
	struct pcap_pkthdr *pending_hdr;
	const u_char *pending_data;
	bool error_unreported;		/* reading stopped on an error not yet returned by next() */
	int fd;				/* what the stream reads, -1 once closed */
	struct pcapng_drops_walker *drops; /* until the input ended */
};

/* Set by trace_reader_interrupt() from a signal handler: reading ends at the next read. */
static volatile sig_atomic_t interrupted;

struct trace_reader {
	int n;
	struct trace_input *inputs;
	int *heap;			/* input indexes, min-heap on (pending_ns, index) */
	int heap_len;
	int last;			/* input whose frame the caller holds, -1 none */
	char error[640];
};

static bool heap_less(const struct trace_reader *tr, int a, int b)
{
	const struct trace_input *x = &tr->inputs[a], *y = &tr->inputs[b];

	if (x->pending_ns != y->pending_ns)
		return x->pending_ns < y->pending_ns;
	return a < b; /* equal times: the earlier input first, so merging is stable */
}

static void heap_push(struct trace_reader *tr, int input)
{
	int i = tr->heap_len++;

	tr->heap[i] = input;
	while (i > 0) {
		int parent = (i - 1) / 2;
		if (!heap_less(tr, tr->heap[i], tr->heap[parent]))
			break;
		int t = tr->heap[i];
		tr->heap[i] = tr->heap[parent];
		tr->heap[parent] = t;
		i = parent;
	}
}

static int heap_pop(struct trace_reader *tr)
{
	int top = tr->heap[0], i = 0;

	tr->heap[0] = tr->heap[--tr->heap_len];
	for (;;) {
		int l = 2 * i + 1, r = l + 1, m = i;
		if (l < tr->heap_len && heap_less(tr, tr->heap[l], tr->heap[m]))
			m = l;
		if (r < tr->heap_len && heap_less(tr, tr->heap[r], tr->heap[m]))
			m = r;
		if (m == i)
			break;
		int t = tr->heap[i];
		tr->heap[i] = tr->heap[m];
		tr->heap[m] = t;
		i = m;
	}
	return top;
}

/* The drop counters of the bytes read so far (all of them once the input ended). */
static void input_drops_done(struct trace_input *in)
{
	struct pcapng_drops drops;

	if (!in->drops)
		return;
	pcapng_drops_finish(in->drops, &drops);
	in->health.has_drop_counters = pcapng_drops_present(&drops);
	in->health.capture_dropped = pcapng_drops_total(&drops);
	free(in->drops);
	in->drops = NULL;
}

/*
 * A frame's time in ns since the epoch (opened with nanosecond precision: tv_usec holds ns).
 * A pcap record's seconds are an unsigned 32-bit field that libpcap reads as signed: from
 * 2038 on (2^31 s) they arrive negative and are taken modulo 2^32 here. Past INT64_MAX ns
 * (the year 2262, possible in pcapng) a time cannot be stored: -1.
 */
static int frame_time_ns(const struct pcap_pkthdr *hdr, uint64_t *ns)
{
	int64_t sec = hdr->ts.tv_sec;

	if (sec < 0 && sec >= INT32_MIN)
		sec += 1ll << 32;
	if (sec < 0 || (uint64_t)sec > ((uint64_t)INT64_MAX - 999999999u) / 1000000000u)
		return -1;
	*ns = (uint64_t)sec * 1000000000ull + (uint64_t)hdr->ts.tv_usec;
	return 0;
}

/* Read the next frame of one input into its pending slot; record how reading stopped. */
static void input_fetch(struct trace_input *in)
{
	struct pcap_pkthdr *hdr;
	const u_char *data;
	uint64_t ts;
	int rc;

	in->pending = false;
	if (!in->pcap)
		return;
	rc = pcap_next_ex(in->pcap, &hdr, &data);
	if (rc == 1 && frame_time_ns(hdr, &ts)) {
		snprintf(in->health.stop_reason, sizeof(in->health.stop_reason),
			 "timestamp %lld s is past the year 2262", (long long)hdr->ts.tv_sec);
		rc = PCAP_ERROR;
	} else if (rc == 1) {
		struct trace_health *h = &in->health;

		if (h->frames == 0)
			h->first_ns = ts;
		else if (ts < h->last_ns)
			h->ts_backwards++;
		if (h->frames == 0 || ts > h->last_ns)
			h->last_ns = ts;
		h->frames++;
		h->bytes += hdr->caplen;
		in->frame_number++;
		in->pending = true;
		in->pending_ns = ts;
		in->pending_hdr = hdr;
		in->pending_data = data;
		return;
	}
	if (rc == PCAP_ERROR && interrupted) {
		/* Our own read gave up on a signal: the input is not corrupt, it was cut short. */
		snprintf(in->health.stop_reason, sizeof(in->health.stop_reason), "interrupted");
	} else if (rc == PCAP_ERROR) {
		in->health.truncated = 1;
		if (!in->health.stop_reason[0])
			snprintf(in->health.stop_reason, sizeof(in->health.stop_reason), "%s",
				 pcap_geterr(in->pcap));
		in->error_unreported = true;
	}
	/* PCAP_ERROR_BREAK: the end of the file. Either way this input is finished. */
	pcap_close(in->pcap);
	in->pcap = NULL;
	input_drops_done(in);
}

/*
 * libpcap reads the file through this stream: big reads, and the same bytes go through the
 * pcapng drop-counter walker (counters libpcap does not expose) while they are in cache. One
 * pass over the file, and memory does not grow with its size.
 */
static ssize_t input_stream_read(void *cookie, char *buf, size_t size)
{
	struct trace_input *in = cookie;
	ssize_t n;

	do {
		if (interrupted) {
			errno = EINTR;
			return -1;
		}
		n = read(in->fd, buf, size);
	} while (n < 0 && errno == EINTR);
	if (n > 0 && in->drops)
		pcapng_drops_feed(in->drops, (const uint8_t *)buf, (size_t)n);
	return n;
}

static int input_stream_close(void *cookie)
{
	struct trace_input *in = cookie;
	int rc = in->fd > STDERR_FILENO ? close(in->fd) : 0;

	in->fd = -1;
	return rc;
}

/* Open one input, or return -1 with a one-line message. */
static int input_open(struct trace_input *in, const char *path, char *err, size_t errlen)
{
	char pcap_err[PCAP_ERRBUF_SIZE] = "";
	bool is_stdin = !strcmp(path, "-");
	struct stat st;
	FILE *fp;

	in->path = strdup(path);
	if (!in->path) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (!is_stdin) {
		if (stat(path, &st)) {
			snprintf(err, errlen, "%s: %s", path, strerror(errno));
			return -1;
		}
		if (S_ISDIR(st.st_mode)) {
			snprintf(err, errlen, "%s: %s", path, strerror(EISDIR));
			return -1;
		}
		if (S_ISREG(st.st_mode) && st.st_size == 0) {
			snprintf(err, errlen, "%s: empty file (0 bytes), not a pcap or pcapng file", path);
			return -1;
		}
	}
	in->fd = is_stdin ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC);
	if (in->fd < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	in->drops = malloc(sizeof(*in->drops));
	if (!in->drops) {
		snprintf(err, errlen, "%s: %s", path, strerror(ENOMEM));
		return -1;
	}
	pcapng_drops_walker_init(in->drops);
	fp = fopencookie(in, "r", (cookie_io_functions_t){ .read = input_stream_read, .close = input_stream_close });
	if (!fp || setvbuf(fp, NULL, _IOFBF, INPUT_BUFFER_BYTES)) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno ? errno : ENOMEM));
		if (fp)
			fclose(fp);
		return -1;
	}
	__fsetlocking(fp, FSETLOCKING_BYCALLER); /* one thread reads it: no stdio locks */
	if (is_stdin) {
		/* libpcap 1.10 words an empty standard input differently from run to run
		 * ("truncated dump file" or "unknown file format"): look for a first byte. */
		int first = getc(fp);

		if (first == EOF) {
			snprintf(err, errlen, "standard input: %s",
				 ferror(fp) ? strerror(errno) : "empty input, not a pcap or pcapng file");
			fclose(fp);
			return -1;
		}
		ungetc(first, fp);
	}
	in->pcap = pcap_fopen_offline_with_tstamp_precision(fp, PCAP_TSTAMP_PRECISION_NANO, pcap_err);
	if (!in->pcap) {
		fclose(fp);
		const char *name = is_stdin ? "standard input" : path;
		if (strstr(pcap_err, "unknown file format") || strstr(pcap_err, "file header bytes"))
			snprintf(err, errlen, "%s: %s", name,
				 strstr(pcap_err, "only got 0") ? "empty input, not a pcap or pcapng file"
								: "not a pcap or pcapng file");
		else
			snprintf(err, errlen, "%s: %s", name, pcap_err);
		return -1;
	}
	in->linktype = pcap_datalink(in->pcap);
	return 0;
}

int trace_reader_open(struct trace_reader **out, const char *const *paths, int n, char *err,
		      size_t errlen)
{
	struct trace_reader *tr;
	int stdin_count = 0;

	*out = NULL;
	if (n <= 0) {
		snprintf(err, errlen, "no trace given");
		return -1;
	}
	tr = calloc(1, sizeof(*tr));
	if (!tr)
		goto nomem;
	tr->last = -1;
	tr->inputs = calloc((size_t)n, sizeof(*tr->inputs));
	tr->heap = calloc((size_t)n, sizeof(*tr->heap));
	if (!tr->inputs || !tr->heap)
		goto nomem;
	tr->n = n;
	for (int i = 0; i < n; i++) {
		if (!strcmp(paths[i], "-") && ++stdin_count > 1) {
			snprintf(err, errlen, "-: standard input given more than once");
			goto fail;
		}
		if (input_open(&tr->inputs[i], paths[i], err, errlen))
			goto fail;
	}
	for (int i = 0; i < n; i++) {
		input_fetch(&tr->inputs[i]);
		if (tr->inputs[i].pending)
			heap_push(tr, i);
	}
	*out = tr;
	return 0;
nomem:
	snprintf(err, errlen, "trace reader: %s", strerror(ENOMEM));
fail:
	trace_reader_close(tr);
	return -1;
}

void trace_reader_interrupt(void)
{
	interrupted = 1;
}

/* After trace_reader_interrupt(): every input still open stops, and says so. */
static void stop_interrupted(struct trace_reader *tr)
{
	for (int i = 0; i < tr->n; i++) {
		struct trace_input *in = &tr->inputs[i];

		if (!in->pcap)
			continue;
		snprintf(in->health.stop_reason, sizeof(in->health.stop_reason), "interrupted");
		pcap_close(in->pcap);
		in->pcap = NULL;
		input_drops_done(in);
	}
	tr->heap_len = 0;
}

int trace_reader_next(struct trace_reader *tr, struct trace_frame *frame)
{
	if (interrupted) {
		stop_interrupted(tr);
		tr->last = -1;
	}
	if (tr->last >= 0) {
		struct trace_input *in = &tr->inputs[tr->last];
		input_fetch(in);
		if (in->pending)
			heap_push(tr, tr->last);
		tr->last = -1;
	}
	for (int i = 0; i < tr->n; i++) {
		struct trace_input *in = &tr->inputs[i];
		if (!in->error_unreported)
			continue;
		in->error_unreported = false;
		snprintf(tr->error, sizeof(tr->error), "%s: truncated or corrupt after %llu frames: %s",
			 in->path, (unsigned long long)in->health.frames, in->health.stop_reason);
		return -1;
	}
	if (tr->heap_len == 0)
		return 0;

	int idx = heap_pop(tr);
	struct trace_input *in = &tr->inputs[idx];
	frame->ts_ns = in->pending_ns;
	frame->caplen = in->pending_hdr->caplen;
	frame->origlen = in->pending_hdr->len;
	frame->linktype = in->linktype;
	frame->trace_index = idx;
	frame->frame_number = in->frame_number;
	frame->data = in->pending_data;
	tr->last = idx;
	return 1;
}

const char *trace_reader_error(const struct trace_reader *tr)
{
	return tr->error;
}

int trace_reader_count(const struct trace_reader *tr)
{
	return tr->n;
}

const char *trace_reader_path(const struct trace_reader *tr, int index)
{
	return index >= 0 && index < tr->n ? tr->inputs[index].path : NULL;
}

const struct trace_health *trace_reader_health(const struct trace_reader *tr, int index)
{
	return index >= 0 && index < tr->n ? &tr->inputs[index].health : NULL;
}

void trace_reader_close(struct trace_reader *tr)
{
	if (!tr)
		return;
	for (int i = 0; tr->inputs && i < tr->n; i++) {
		if (tr->inputs[i].pcap)
			pcap_close(tr->inputs[i].pcap);
		else if (tr->inputs[i].fd > STDERR_FILENO)
			close(tr->inputs[i].fd);
		free(tr->inputs[i].drops);
		free(tr->inputs[i].path);
	}
	free(tr->inputs);
	free(tr->heap);
	free(tr);
}

const char *trace_linktype_name(int linktype)
{
	const char *name = pcap_datalink_val_to_name(linktype);

	return name ? name : "unknown";
}
