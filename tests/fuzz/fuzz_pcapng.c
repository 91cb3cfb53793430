/* fuzz_pcapng.c: libFuzzer harness for the pcapng reading path: the drop-counter walker and libpcap + decoder. */
#include <pcap/pcap.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "lib/trace/pcapng_drops.h"
#include "lib/decode/roce_decode.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char errbuf[PCAP_ERRBUF_SIZE];
	struct roce_decode_opts opts;
	struct pcapng_drops drops;
	struct pcap_pkthdr *hdr;
	const u_char *pkt_data;
	struct roce_pkt pkt;
	pcap_t *pcap;
	FILE *f;
	int n = 0;

	if (pcapng_walk_drops(data, size, &drops) < 0 && !drops.stop_reason)
		abort();
	if (drops.stop_reason && drops.stop_offset > size)
		abort();
	pcapng_drops_total(&drops);

	/* The same bytes through libpcap, as the trace reader reads them, then the decoder. */
	if (size == 0)
		return 0;
	f = fmemopen((void *)data, size, "rb");
	if (!f)
		return 0;
	pcap = pcap_fopen_offline_with_tstamp_precision(f, PCAP_TSTAMP_PRECISION_NANO, errbuf);
	if (!pcap) {
		fclose(f);
		return 0;
	}
	roce_decode_opts_default(&opts);
	while (n++ < 1000 && pcap_next_ex(pcap, &hdr, &pkt_data) == 1)
		roce_decode_frame(&opts, pcap_datalink(pcap), pkt_data, hdr->caplen, hdr->len, 0, &pkt);
	pcap_close(pcap); /* closes f */
	return 0;
}
