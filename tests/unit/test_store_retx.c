/* test_store_retx.c: go-back-N runs as retransmission_burst rows (tracker -> store -> SQLite). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "lib/store/store_sqlite.h"
#include "lib/track/qp_track.h"
#include "test_addr.h"

#define RC(op) ROCE_OPCODE(ROCE_TR_RC, op)
#define SYN_ACK 0x1f
#define SYN_NAK_SEQ 0x60

/* Two QPs: host 1 -> host 2 (requests to QPN 0x100, ACKs back to 0x200) and 3 -> 4. */
struct qp_pair {
	int req_host, resp_host;
	uint32_t req_qpn, resp_qpn;
};
static const struct qp_pair AB = { 1, 2, 0x200, 0x100 };
static const struct qp_pair CD = { 3, 4, 0x300, 0x400 };

struct run {
	struct qp_tracker *t;
	struct store *s;
	bool close_early;	/* store_reading_done() after the tracker's finish, as analyze does */
	bool kept_early;	/* and store_findings_known() before the flows, as analyze does */
	char dir[64], path[128];
};

struct burst {
	int64_t qp_id, psn_first, psn_last, packets, ts_first, ts_last, tx_count_max, trigger;
	char cause[16];
};

/* One run's cause, first and last PSN and packets. */
static void expect_run(const struct burst *b, const char *cause, int64_t psn_first, int64_t psn_last,
		       int64_t packets)
{
	assert_string_equal(b->cause, cause);
	assert_int_equal(b->psn_first, psn_first);
	assert_int_equal(b->psn_last, psn_last);
	assert_int_equal(b->packets, packets);
}

static void add(struct run *r, uint64_t ts, int src, int dst, uint32_t qpn, uint8_t op, uint32_t psn,
		uint8_t syndrome)
{
	struct roce_pkt p;

	memset(&p, 0, sizeof(p));
	p.ts_ns = ts;
	p.orig_len = p.cap_len = 100;
	test_host_addr(p.src_ip, src);
	test_host_addr(p.dst_ip, dst);
	p.ip_version = 4;
	p.roce_version = 2;
	p.udp_sport = 49152;
	p.udp_dport = 4791;
	p.opcode = RC(op);
	p.transport = p.opcode >> 5;
	p.dest_qp = qpn;
	p.psn = psn;
	p.headers = ROCE_H_BTH;
	p.payload_len = 64;
	if (op == ROCE_OP_ACK) {
		p.headers |= ROCE_H_AETH;
		p.aeth_syndrome = syndrome;
		p.payload_len = 0;
	}
	assert_int_equal(qp_tracker_add(r->t, &p, 0), 0);
}

static void req(struct run *r, const struct qp_pair *q, uint64_t ts, uint32_t psn)
{
	add(r, ts, q->req_host, q->resp_host, q->resp_qpn, ROCE_OP_SEND_MIDDLE, psn, 0);
}

static void ack(struct run *r, const struct qp_pair *q, uint64_t ts, uint8_t syndrome, uint32_t psn)
{
	add(r, ts, q->resp_host, q->req_host, q->req_qpn, ROCE_OP_ACK, psn, syndrome);
}

static void start(struct run *r, uint8_t samples)
{
	struct store_opts opts = { .samples = samples };
	struct qp_tracker_cfg cfg;
	char err[512];

	r->close_early = r->kept_early = false;
	snprintf(r->dir, sizeof(r->dir), "/tmp/agentxdp-test-retx.XXXXXX");
	assert_non_null(mkdtemp(r->dir));
	snprintf(r->path, sizeof(r->path), "%s/a.db", r->dir);
	assert_int_equal(store_open(&r->s, r->path, &opts, err, sizeof(err)), 0);
	qp_tracker_cfg_default(&cfg);
	cfg.sink = store_sink(r->s);
	r->t = qp_tracker_new(&cfg);
	assert_non_null(r->t);
}

static void finish(struct run *r)
{
	char err[512];

	const struct flow_stats *flows;
	long n;

	qp_tracker_finish(r->t);
	if (r->close_early)
		store_reading_done(r->s);
	n = qp_tracker_snapshot(r->t, &flows);
	assert_true(n > 0);
	if (r->kept_early)
		store_findings_known(r->s, flows, (size_t)n, NULL, 0);
	assert_int_equal(store_flows(r->s, flows, (size_t)n), 0);
	assert_int_equal(store_commit(r->s, err, sizeof(err)), 0);
	qp_tracker_free(r->t);
}

static void cleanup(struct run *r)
{
	unlink(r->path);
	rmdir(r->dir);
}

static int64_t query_int(struct run *r, const char *sql)
{
	sqlite3 *db;
	sqlite3_stmt *st;
	int64_t v;

	assert_int_equal(sqlite3_open_v2(r->path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	sqlite3_close(db);
	return v;
}

/* The burst rows in time order; returns how many (at most max). */
static int bursts(struct run *r, struct burst *b, int max)
{
	sqlite3 *db;
	sqlite3_stmt *st;
	int n = 0;

	assert_int_equal(sqlite3_open_v2(r->path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(db, "SELECT qp_id, cause, psn_first, psn_last, packets, ts_first_ns,"
						" ts_last_ns, tx_count_max, coalesce(trigger_ns, 0)"
						" FROM retransmission_burst ORDER BY ts_first_ns, qp_id",
					    -1, &st, NULL),
			 SQLITE_OK);
	while (sqlite3_step(st) == SQLITE_ROW && n < max) {
		b[n] = (struct burst){
			.qp_id = sqlite3_column_int64(st, 0), .psn_first = sqlite3_column_int64(st, 2),
			.psn_last = sqlite3_column_int64(st, 3), .packets = sqlite3_column_int64(st, 4),
			.ts_first = sqlite3_column_int64(st, 5), .ts_last = sqlite3_column_int64(st, 6),
			.tx_count_max = sqlite3_column_int64(st, 7), .trigger = sqlite3_column_int64(st, 8),
		};
		snprintf(b[n].cause, sizeof(b[n].cause), "%s", (const char *)sqlite3_column_text(st, 1));
		n++;
	}
	sqlite3_finalize(st);
	sqlite3_close(db);
	return n;
}

/*
 * The per-packet rows (--samples all) and the bursts tell the same story: per flow and cause,
 * sum(packets) = count(*), and every packet row falls in exactly one burst of its flow.
 */
static void assert_counts_match_packets(struct run *r)
{
	assert_int_equal(query_int(r, "SELECT count(*) FROM (SELECT qp_id, cause, count(*) FROM retransmission"
				      " GROUP BY 1, 2 EXCEPT SELECT qp_id, cause, sum(packets) FROM retransmission_burst"
				      " GROUP BY 1, 2)"),
			 0);
	assert_int_equal(query_int(r, "SELECT count(*) FROM (SELECT qp_id, cause, sum(packets) FROM retransmission_burst"
				      " GROUP BY 1, 2 EXCEPT SELECT qp_id, cause, count(*) FROM retransmission"
				      " GROUP BY 1, 2)"),
			 0);
	assert_int_equal(query_int(r, "SELECT count(*) FROM retransmission p WHERE (SELECT count(*)"
				      " FROM retransmission_burst b WHERE b.qp_id = p.qp_id AND b.cause = p.cause"
				      " AND p.ts_ns BETWEEN b.ts_first_ns AND b.ts_last_ns) <> 1"),
			 0);
}

/* PSNs 0..9 sent, a NAK names 5: 5..9 resent is one row. */
static void test_nak_go_back_n_one_row(void **state)
{
	struct run r;
	struct burst b[4];

	(void)state;
	start(&r, STORE_SAMPLES_ALL);
	for (uint32_t i = 0; i < 10; i++)
		req(&r, &AB, 1000 + i * 100, i);
	ack(&r, &AB, 3000, SYN_NAK_SEQ, 5);
	for (uint32_t i = 5; i < 10; i++)
		req(&r, &AB, 3500 + i * 100, i);
	ack(&r, &AB, 6000, SYN_ACK, 9);
	finish(&r);
	assert_int_equal(bursts(&r, b, 4), 1);
	assert_int_equal(b[0].qp_id, 1);
	expect_run(&b[0], "nak", 5, 9, 5);
	assert_int_equal(b[0].ts_first, 4000);
	assert_int_equal(b[0].ts_last, 4400);
	assert_int_equal(b[0].tx_count_max, 2);
	assert_int_equal(b[0].trigger, 3000);
	assert_int_equal(query_int(&r, "SELECT count(*) FROM retransmission"), 5);
	assert_counts_match_packets(&r);
	cleanup(&r);
}

/* Two QPs time out together, their resends interleaved packet by packet: one row each. */
static void test_two_flows_interleaved(void **state)
{
	struct run r;
	struct burst b[4];

	(void)state;
	start(&r, STORE_SAMPLES_ALL);
	for (uint32_t i = 0; i < 6; i++) {
		req(&r, &AB, 1000 + i * 100, 100 + i);
		req(&r, &CD, 1050 + i * 100, 7000 + i);
	}
	ack(&r, &AB, 2000, SYN_ACK, 101);
	ack(&r, &CD, 2050, SYN_ACK, 7000);
	/* silence, then both go back to their oldest unacknowledged PSN */
	for (uint32_t i = 0; i < 5; i++) {
		if (i < 4)
			req(&r, &AB, 1000000 + i * 100, 102 + i);
		req(&r, &CD, 1000050 + i * 100, 7001 + i);
	}
	ack(&r, &AB, 1010000, SYN_ACK, 105);
	ack(&r, &CD, 1010050, SYN_ACK, 7005);
	finish(&r);
	assert_int_equal(bursts(&r, b, 4), 2);
	assert_int_equal(b[0].qp_id, 1); /* A->B: the first flow seen */
	expect_run(&b[0], "timeout", 102, 105, 4);
	assert_int_equal(b[0].ts_last, 1000300);
	assert_int_equal(b[1].qp_id, 2); /* C->D */
	expect_run(&b[1], "timeout", 7001, 7005, 5);
	assert_int_equal(b[1].ts_first, 1000050);
	assert_int_equal(b[1].ts_last, 1000450);
	/* one timeout each: as many timeout runs as qp.timeouts counts */
	assert_int_equal(query_int(&r, "SELECT sum(timeouts) FROM qp"), 2);
	assert_int_equal(query_int(&r, "SELECT count(*) FROM retransmission"), 9);
	assert_counts_match_packets(&r);
	cleanup(&r);
}

/* A run across the PSN wrap (2^24 - 2 .. 2) is one row. */
static void test_psn_wrap(void **state)
{
	struct run r;
	struct burst b[4];

	(void)state;
	start(&r, STORE_SAMPLES_ALL);
	for (uint32_t i = 0; i < 6; i++)
		req(&r, &AB, 1000 + i * 100, (0xfffffd + i) & 0xffffff);
	ack(&r, &AB, 2000, SYN_NAK_SEQ, 0xfffffe);
	for (uint32_t i = 0; i < 5; i++)
		req(&r, &AB, 2500 + i * 100, (0xfffffe + i) & 0xffffff);
	ack(&r, &AB, 4000, SYN_ACK, 2);
	finish(&r);
	assert_int_equal(bursts(&r, b, 4), 1);
	expect_run(&b[0], "nak", 0xfffffe, 2, 5);
	assert_counts_match_packets(&r);
	cleanup(&r);
}

/*
 * Runs of one flow stay apart: the same PSN timing out twice; a NAK run, then a second NAK
 * whose first resend this capture never saw the original of (its next PSNs continue that
 * run, not the first one).
 */
static void test_runs_of_one_flow(void **state)
{
	struct run r;
	struct burst b[8];

	(void)state;
	start(&r, STORE_SAMPLES_ALL);
	for (uint32_t i = 0; i < 4; i++)
		req(&r, &AB, 1000 + i * 100, 20 + i);
	ack(&r, &AB, 2000, SYN_ACK, 21);
	req(&r, &AB, 1002000, 22); /* timeout: 22, 23 */
	req(&r, &AB, 1002100, 23);
	req(&r, &AB, 3002000, 22); /* and again */
	req(&r, &AB, 3002100, 23);
	ack(&r, &AB, 3003000, SYN_ACK, 23);
	/* 24..27 sent, a NAK names 25: 25..27 resent */
	for (uint32_t i = 24; i < 28; i++)
		req(&r, &AB, 3004000 + i * 10, i);
	ack(&r, &AB, 3005000, SYN_NAK_SEQ, 25);
	for (uint32_t i = 25; i < 28; i++)
		req(&r, &AB, 3006000 + i * 10, i);
	/* 28, 30, 31 (29 lost before the capture), a NAK names 29: 29 is new here, 30, 31 resent */
	req(&r, &AB, 3007000, 28);
	req(&r, &AB, 3007100, 30);
	req(&r, &AB, 3007200, 31);
	ack(&r, &AB, 3008000, SYN_NAK_SEQ, 29);
	req(&r, &AB, 3009000, 29);
	req(&r, &AB, 3009100, 30);
	req(&r, &AB, 3009200, 31);
	ack(&r, &AB, 3010000, SYN_ACK, 31);
	finish(&r);
	assert_int_equal(bursts(&r, b, 8), 4);
	expect_run(&b[0], "timeout", 22, 23, 2);
	assert_int_equal(b[0].tx_count_max, 2);
	expect_run(&b[1], "timeout", 22, 23, 2);
	assert_int_equal(b[1].tx_count_max, 3);
	expect_run(&b[2], "nak", 25, 27, 3);
	expect_run(&b[3], "nak", 30, 31, 2);
	/* qp.timeouts counts timeout runs: one row each */
	assert_int_equal(query_int(&r, "SELECT sum(timeouts) FROM qp"), 2);
	assert_int_equal(query_int(&r, "SELECT count(*) FROM retransmission_burst WHERE cause = 'timeout'"), 2);
	assert_counts_match_packets(&r);
	cleanup(&r);
}

/* --samples none: no per-packet row, the same bursts. */
static void test_samples_none_keeps_bursts(void **state)
{
	struct run r;
	struct burst b[4];

	(void)state;
	start(&r, STORE_SAMPLES_NONE);
	for (uint32_t i = 0; i < 10; i++)
		req(&r, &AB, 1000 + i * 100, i);
	ack(&r, &AB, 3000, SYN_NAK_SEQ, 5);
	for (uint32_t i = 5; i < 10; i++)
		req(&r, &AB, 3500 + i * 100, i);
	finish(&r);
	assert_int_equal(query_int(&r, "SELECT count(*) FROM retransmission"), 0);
	assert_int_equal(bursts(&r, b, 4), 1);
	assert_int_equal(b[0].packets, 5);
	assert_int_equal(query_int(&r, "PRAGMA user_version"), STORE_SCHEMA_VERSION);
	cleanup(&r);
}

/* Two flows; AB loses PSN 5 (a NAK) and sends 5-9 again, CD loses nothing. */
static void two_flows_one_lossy(struct run *r)
{
	for (uint32_t i = 0; i < 10; i++) {
		req(r, &AB, 1000 + i * 100, i);
		req(r, &CD, 1050 + i * 100, 500 + i);
	}
	ack(r, &CD, 2000, SYN_ACK, 509);
	ack(r, &AB, 3000, SYN_NAK_SEQ, 5);
	for (uint32_t i = 5; i < 10; i++)
		req(r, &AB, 3500 + i * 100, i);
	ack(r, &AB, 6000, SYN_ACK, 9);
	finish(r);
}

/*
 * --samples findings: the resend rows wait in the spill file; the flow with the most loss
 * events is kept, so its rows come back, in order, as all writes them.
 */
static void test_samples_findings_keeps_lossy_flow(void **state)
{
	struct run r;
	struct burst b[4];

	(void)state;
	start(&r, STORE_SAMPLES_FINDINGS);
	two_flows_one_lossy(&r);
	assert_int_equal(bursts(&r, b, 4), 1);
	assert_int_equal(b[0].packets, 5);
	assert_int_equal(query_int(&r, "SELECT count(*) FROM retransmission WHERE qp_id = 1"), 5);
	assert_int_equal(query_int(&r, "SELECT group_concat(psn) = '5,6,7,8,9' FROM (SELECT psn FROM retransmission"
				      " ORDER BY rowid)"),
			 1);
	assert_counts_match_packets(&r);
	cleanup(&r);
}

/*
 * The same run with the event tables closed on the store's thread once the tracking ends:
 * the same rows, every index built, and the indexes built before the kept rows and the qp
 * rows arrived agree with them.
 */
static void test_closed_early_same_rows(void **state)
{
	struct run r;

	(void)state;
	start(&r, STORE_SAMPLES_FINDINGS);
	r.close_early = true;
	two_flows_one_lossy(&r);
	assert_int_equal(query_int(&r, "SELECT group_concat(psn) = '5,6,7,8,9' FROM (SELECT psn FROM retransmission"
				      " ORDER BY rowid)"),
			 1);
	assert_int_equal(query_int(&r, "SELECT count(*) FROM retransmission_burst"), 1);
	assert_int_equal(query_int(&r, "SELECT count(*) FROM sqlite_master WHERE type = 'index'"
				      " AND name NOT LIKE 'sqlite_autoindex%'"),
			 9);
	assert_int_equal(query_int(&r, "SELECT count(*) FROM retransmission INDEXED BY retransmission_qp"
				      " WHERE qp_id = 1"),
			 5);
	assert_int_equal(query_int(&r, "SELECT count(*) FROM qp INDEXED BY qp_key WHERE src_ip > ''"),
			 query_int(&r, "SELECT count(*) FROM qp"));
	assert_int_equal(query_int(&r, "SELECT count(*) FROM pragma_integrity_check WHERE integrity_check <> 'ok'"),
			 0);
	assert_counts_match_packets(&r);
	cleanup(&r);
}

/* Per mille of an index's leaf pages in use: a transfer appends its entries in key order,
 * so its pages are full; row by row, entries inserted before others leave them less so. */
static int64_t leaf_fill(struct run *r, const char *index)
{
	char sql[160];

	snprintf(sql, sizeof(sql), "SELECT sum(pgsize - unused) * 1000 / sum(pgsize) FROM dbstat"
		 " WHERE name = '%s' AND pagetype = 'leaf'", index);
	return query_int(r, sql);
}

/* The kept rows' order and contents, summed by rowid, and how many there are; the same
 * through each table's index, and the file's integrity. */
static void kept_digest(struct run *r, int64_t d[7])
{
	d[0] = query_int(r, "SELECT count(*) FROM retransmission");
	d[1] = query_int(r, "SELECT sum(rowid * (psn + 1)) + sum(rowid * (ts_ns % 1000003)) FROM retransmission");
	d[2] = query_int(r, "SELECT count(*) FROM latency_sample");
	d[3] = query_int(r, "SELECT sum(rowid * (psn + 1)) + sum(rowid * (latency_ns % 1000003)) FROM latency_sample");
	d[4] = query_int(r, "SELECT sum(rowid * (psn + 1)) FROM retransmission INDEXED BY retransmission_qp"
			    " WHERE qp_id > 0");
	d[5] = query_int(r, "SELECT sum(rowid * (psn + 1)) FROM latency_sample INDEXED BY latency_sample_qp"
			    " WHERE qp_id > 0");
	d[6] = query_int(r, "SELECT count(*) FROM pragma_integrity_check WHERE integrity_check <> 'ok'");
}

/* CD loses one packet and sends it and the next again, at ts. */
static void cd_resends(struct run *r, uint64_t ts)
{
	for (uint32_t i = 0; i < 10; i++)
		req(r, &CD, ts + i * 100, 100 + i);
	ack(r, &CD, ts + 1000, SYN_NAK_SEQ, 105);
	for (uint32_t i = 5; i < 10; i++)
		req(r, &CD, ts + 1500 + i * 100, 100 + i);
	ack(r, &CD, ts + 3000, SYN_ACK, 109);
}

/*
 * The kept flows' rows read back early (store_findings_known()) are the rows the commit
 * reads itself, in the same order: the resends also past the 2^17 held in memory (the
 * commit reads on from there); the samples, 2^18 and more, through a database of their own
 * copied in by a transfer with their index, which then finds the same rows. The transfer's
 * index pages are full, where AB's entries kept row by row, each before CD's, would leave
 * them less so. Nothing is left beside the database.
 */
static void test_kept_rows_read_early(void **state)
{
	int64_t want[7], got[7], fill_sample = 0, cd_rows = 0;

	(void)state;
	for (int early = 0; early < 2; early++) {
		struct run r;

		start(&r, STORE_SAMPLES_FINDINGS);
		r.close_early = r.kept_early = early;
		for (uint32_t round = 0; round < 270; round++) {
			uint32_t base = round * 2000;
			uint64_t ts = 1000000 + (uint64_t)round * 100000;

			for (uint32_t i = 0; i < 1000; i++)
				req(&r, &AB, ts + i * 10, base + i);
			ack(&r, &AB, ts + 10000, SYN_NAK_SEQ, base);
			for (uint32_t i = 0; i < 1000; i++)
				req(&r, &AB, ts + 11000 + i * 10, base + i);
			ack(&r, &AB, ts + 22000, SYN_ACK, base + 999);
			for (uint32_t i = 1000; i < 2000; i++) {
				req(&r, &AB, ts + 23000 + i * 30, base + i);
				ack(&r, &AB, ts + 23010 + i * 30, SYN_ACK, base + i);
			}
			if (round == 0)
				cd_resends(&r, ts + 85000); /* a flow after AB's: a higher qp_id */
		}
		req(&r, &CD, 2000000000, 110);
		finish(&r);
		kept_digest(&r, early ? got : want);
		if (early) {
			/* CD's resends kept too, after AB's in the index */
			cd_rows = query_int(&r, "SELECT count(*) FROM retransmission WHERE qp_id >"
					    " (SELECT min(qp_id) FROM retransmission)");
			fill_sample = leaf_fill(&r, "latency_sample_qp");
		}
		cleanup(&r);
		assert_int_equal(access(r.dir, F_OK), -1);
	}
	assert_true(want[0] > (1 << 17) && want[2] > (1 << 18));
	assert_true(want[6] == 0);
	for (int i = 0; i < 7; i++)
		assert_true(got[i] == want[i]);
	assert_in_range(cd_rows, 5, 6);
	assert_in_range(fill_sample, 950, 1000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nak_go_back_n_one_row),
		cmocka_unit_test(test_two_flows_interleaved),
		cmocka_unit_test(test_psn_wrap),
		cmocka_unit_test(test_runs_of_one_flow),
		cmocka_unit_test(test_samples_none_keeps_bursts),
		cmocka_unit_test(test_samples_findings_keeps_lossy_flow),
		cmocka_unit_test(test_closed_early_same_rows),
		cmocka_unit_test(test_kept_rows_read_early),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
