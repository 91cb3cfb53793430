/*
 * test_live_agent.c: the live agent's flow table does not grow for ever: it starts afresh
 * when most of its flows have gone idle, or when it holds --max-flows, and not otherwise.
 * Each mirror session delivering frames is a vantage of its own.
 */
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "lib/agent/live_agent.h"
#include "lib/model/roce_frame.h"

#define SEC 1000000000ull
#define T0 (1700000000ull * SEC)

/*
 * One RC packet between 198.18.0.1 and 198.18.0.2 (from .2 when `back`) at ts, as the capture
 * sees it, or inside mirror session `session` of switch 10.255.0.<sw> (tunnel kind `encap`;
 * ROCE_ENCAP_NONE: not tunnelled).
 */
static void mirrored_frame(struct live_agent *a, uint8_t encap, uint8_t sw, uint32_t session, bool back,
			   uint8_t opcode, uint32_t qpn, uint32_t psn, uint64_t ts)
{
	struct roce_frame_addr addr = { .ip_version = 4, .ttl = 64, .udp_sport = 49152 };
	struct roce_frame_tunnel t = {
		.kind = encap, .src_ip = { 10, 255, 0, sw }, .dst_ip = { 10, 255, 255, 1 }, .session_id = session,
	};
	struct roce_pkt pkt = { 0 };
	uint8_t frame[256 + ROCE_FRAME_TUNNEL_MAX];
	size_t n, hdr = encap == ROCE_ENCAP_NONE ? 0 : roce_frame_tunnel_hdr_len(encap);

	memcpy(addr.src_ip, "\0\0\0\0\0\0\0\0\0\0\xff\xff\xc6\x12\x00\x01", 16);
	memcpy(addr.dst_ip, "\0\0\0\0\0\0\0\0\0\0\xff\xff\xc6\x12\x00\x02", 16);
	if (back) {
		addr.src_ip[15] = 2;
		addr.dst_ip[15] = 1;
	}
	pkt.opcode = opcode;
	pkt.transport = ROCE_TR_RC;
	pkt.pkey = 0xffff;
	pkt.dest_qp = qpn;
	pkt.psn = psn;
	pkt.payload_len = opcode == 0x11 ? 0 : 64;
	n = roce_frame_build(frame + hdr, sizeof(frame) - hdr, &addr, &pkt, NULL, true);
	assert_true(n > 0);
	if (hdr)
		assert_int_equal(roce_frame_tunnel_hdr(frame, hdr, &t, n), hdr);
	n += hdr;
	assert_int_equal(live_agent_frame(a, frame, (uint32_t)n, (uint32_t)n, ts), 0);
}

static void rc_frame(struct live_agent *a, bool back, uint8_t opcode, uint32_t qpn, uint32_t psn, uint64_t ts)
{
	mirrored_frame(a, ROCE_ENCAP_NONE, 0, 0, back, opcode, qpn, psn, ts);
}

/* One RC SEND Only request 198.18.0.1 -> 198.18.0.2 on queue pair qpn at ts. */
static void send_frame(struct live_agent *a, uint32_t qpn, uint32_t psn, uint64_t ts)
{
	rc_frame(a, false, 0x04, qpn, psn, ts);
}

static struct live_agent *new_agent(size_t max_flows)
{
	struct live_agent_opts o = { .max_flows = max_flows };
	char err[256];
	struct live_agent *a = live_agent_new(&o, err, sizeof(err));

	assert_non_null(a);
	return a;
}

static void expect_table(struct live_agent *a, size_t want_flows, uint64_t want_resets)
{
	size_t flows;
	uint64_t resets;

	live_agent_flow_table(a, &flows, &resets);
	assert_int_equal(flows, want_flows);
	assert_int_equal(resets, want_resets);
}

static void test_idle_flows_are_forgotten(void **state)
{
	struct live_agent *a = new_agent(0);

	(void)state;
	for (uint32_t q = 0; q < 300; q++)
		send_frame(a, 0x100 + q, 1, T0 + q * 1000);
	live_agent_tick(a, T0 + SEC, NULL, 0);
	expect_table(a, 300, 0);
	/* Five minutes on, one queue pair still talks: the rest are idle, but not for 10 min. */
	send_frame(a, 0x100, 2, T0 + 300 * SEC);
	live_agent_tick(a, T0 + 300 * SEC, NULL, 0);
	expect_table(a, 300, 0);
	/* Eleven minutes on: 299 of 300 idle for 10 minutes or more: the table starts afresh. */
	send_frame(a, 0x100, 3, T0 + 660 * SEC);
	live_agent_tick(a, T0 + 660 * SEC, NULL, 0);
	expect_table(a, 0, 1);
	/* The active queue pair comes back with its next packet; the others do not. */
	send_frame(a, 0x100, 4, T0 + 661 * SEC);
	live_agent_tick(a, T0 + 662 * SEC, NULL, 0);
	expect_table(a, 1, 1);
	live_agent_free(a);
}

static void test_few_or_busy_flows_are_kept(void **state)
{
	struct live_agent *a = new_agent(0);

	(void)state;
	/* 200 idle flows: fewer than LIVE_AGENT_FORGET_MIN_IDLE, not worth a reset. */
	for (uint32_t q = 0; q < 200; q++)
		send_frame(a, 0x100 + q, 1, T0);
	live_agent_tick(a, T0 + 3600 * SEC, NULL, 0);
	expect_table(a, 200, 0);
	live_agent_free(a);

	/* 300 idle among 400 busy ones: under half, kept. */
	a = new_agent(0);
	for (uint32_t q = 0; q < 700; q++)
		send_frame(a, 0x100 + q, 1, T0);
	for (uint32_t q = 0; q < 400; q++)
		send_frame(a, 0x100 + q, 2, T0 + 3600 * SEC);
	live_agent_tick(a, T0 + 3600 * SEC, NULL, 0);
	expect_table(a, 700, 0);
	live_agent_free(a);
}

static void test_max_flows(void **state)
{
	struct live_agent *a = new_agent(50);

	(void)state;
	for (uint32_t q = 0; q < 49; q++)
		send_frame(a, 0x100 + q, 1, T0);
	live_agent_tick(a, T0 + SEC, NULL, 0);
	expect_table(a, 49, 0);
	send_frame(a, 0x200, 1, T0 + SEC);
	live_agent_tick(a, T0 + 2 * SEC, NULL, 0);
	expect_table(a, 0, 1);
	live_agent_free(a);
}

/*
 * One host pair, two queue pairs: no peers to compare with, so only the latency against
 * the flows' own past can speak. ACK latency 100 us (+-2%) for `switch_s` seconds, then
 * `after_us` until 45 s. Returns the findings of the last interval.
 */
static int own_past_findings(uint64_t switch_s, uint32_t after_us)
{
	struct live_agent *a = new_agent(0);
	uint32_t psn[2] = { 0, 0 };
	int n = 0;

	for (uint64_t s = 0; s < 45; s++) {
		for (uint32_t i = 0; i < 100; i++) {
			uint32_t q = i % 2, lat_us = s < switch_s ? 100 : after_us;
			uint64_t ts = T0 + s * SEC + i * 10000000ull;
			uint64_t lat_ns = (uint64_t)lat_us * 1000 * (98 + (i * 7 + s * 3) % 5) / 100;

			rc_frame(a, false, 0x04, 0x100 + q, psn[q], ts);
			rc_frame(a, true, 0x11, 0x200 + q, psn[q], ts + lat_ns);
			psn[q]++;
		}
		n = live_agent_tick(a, T0 + (s + 1) * SEC, NULL, 0);
	}
	live_agent_free(a);
	return n;
}

static void test_own_past_needs_twice(void **state)
{
	(void)state;
	/* A host's RTT drifting by 30% is not worth a page; tripled, it is. Late in the flows'
	 * life the shift signal judges it; early, the latency against their first windows. */
	assert_int_equal(own_past_findings(30, 100), 0);
	assert_int_equal(own_past_findings(30, 130), 0);
	assert_true(own_past_findings(30, 300) > 0);
	assert_int_equal(own_past_findings(8, 130), 0);
	assert_true(own_past_findings(8, 300) > 0);
}

/*
 * Two switches mirror the same queue pair to the collector (ERSPAN II sessions 1 and 2), and
 * a VXLAN session a third copy: each is a vantage, so the queue pair is three flows, not one
 * flow that sends every packet three times. A session's further packets stay in its flow.
 */
static void test_mirror_sessions_are_vantages(void **state)
{
	struct live_agent *a = new_agent(0);
	uint64_t roce, other, malformed;

	(void)state;
	for (uint32_t psn = 0; psn < 4; psn++) {
		uint64_t ts = T0 + psn * 10000;

		mirrored_frame(a, ROCE_ENCAP_ERSPAN2, 1, 1, false, 0x04, 0x100, psn, ts);
		mirrored_frame(a, ROCE_ENCAP_ERSPAN2, 2, 2, false, 0x04, 0x100, psn, ts + 500);
		mirrored_frame(a, ROCE_ENCAP_VXLAN, 3, 7, false, 0x04, 0x100, psn, ts + 900);
	}
	live_agent_counts(a, &roce, &other, &malformed);
	assert_int_equal(roce, 12);
	live_agent_tick(a, T0 + SEC, NULL, 0);
	expect_table(a, 3, 0);
	/* The same session ID from another switch is another session. */
	mirrored_frame(a, ROCE_ENCAP_ERSPAN2, 4, 1, false, 0x04, 0x100, 4, T0 + SEC);
	/* Untunnelled frames: the capture's own vantage. */
	send_frame(a, 0x100, 4, T0 + SEC);
	live_agent_tick(a, T0 + 2 * SEC, NULL, 0);
	expect_table(a, 5, 0);
	live_agent_free(a);

	/* The control: one session delivering the queue pair is one flow. */
	a = new_agent(0);
	for (uint32_t psn = 0; psn < 4; psn++)
		mirrored_frame(a, ROCE_ENCAP_ERSPAN2, 1, 1, false, 0x04, 0x100, psn, T0 + psn * 10000);
	live_agent_tick(a, T0 + SEC, NULL, 0);
	expect_table(a, 1, 0);
	live_agent_free(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_idle_flows_are_forgotten),
		cmocka_unit_test(test_few_or_busy_flows_are_kept),
		cmocka_unit_test(test_max_flows),
		cmocka_unit_test(test_own_past_needs_twice),
		cmocka_unit_test(test_mirror_sessions_are_vantages),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
