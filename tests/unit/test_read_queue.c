/* test_read_queue.c: a READ's wait against its responder's link (lib/track/read_queue.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "lib/track/read_queue.h"

static const uint8_t host_a[16] = { [10] = 0xff, [11] = 0xff, 198, 18, 0, 10 };
static const uint8_t host_b[16] = { [10] = 0xff, [11] = 0xff, 198, 18, 0, 11 };

static struct read_item item(struct flow_stats *st, const uint8_t *resp, uint64_t arr, uint64_t first,
			     uint64_t last)
{
	return (struct read_item){ .m = { .arr_ns = arr, .first_ns = first, .last_ns = last, .flow_id = st->id },
				   .responder = resp, .st = st };
}

/* Three READs arrive at once; the responder sends them one after the other, 5 us each: the
 * second waits 5 us, the third 10, the link busy all the while. The first waits 1 us idle. */
static void test_fifo_queue_is_busy(void **state)
{
	struct flow_stats st[3] = { { .id = 1 }, { .id = 2 }, { .id = 3 } };
	struct read_item it[3] = {
		item(&st[2], host_a, 0, 11000, 16000),
		item(&st[0], host_a, 0, 1000, 6000),
		item(&st[1], host_a, 0, 6000, 11000),
	};

	(void)state;
	st[0].read_waits = 7; /* zeroed first */
	assert_int_equal(read_queue_fill(it, 3), 0);
	assert_int_equal(st[0].read_waits, 1);
	assert_true(st[0].read_wait_us == 1.0 && st[0].read_wait_busy_us == 0);
	assert_true(st[1].read_wait_us == 6.0 && st[1].read_wait_busy_us == 5.0);
	assert_true(st[2].read_wait_us == 11.0 && st[2].read_wait_busy_us == 10.0);
}

/* A slow responder: each READ waits 50 us with nothing on the link. Another responder's (or
 * another vantage's) messages in the wait are not its link. */
static void test_idle_wait_and_other_links(void **state)
{
	struct flow_stats st[3] = { { .id = 1 }, { .id = 2 }, { .id = 3 } };
	struct read_item it[3] = {
		item(&st[0], host_a, 0, 50000, 55000),
		item(&st[1], host_a, 100000, 150000, 155000),
		item(&st[2], host_b, 0, 10000, 40000),
	};

	(void)state;
	it[2].vantage = 1;
	assert_int_equal(read_queue_fill(it, 3), 0);
	assert_true(st[0].read_wait_us == 50.0 && st[0].read_wait_busy_us == 0);
	assert_true(st[1].read_wait_us == 50.0 && st[1].read_wait_busy_us == 0);
	assert_true(st[2].read_wait_us == 10.0 && st[2].read_wait_busy_us == 0);
}

/* Messages sent interleaved overlap on the link: the busy time stays within the wait. */
static void test_overlap_capped(void **state)
{
	struct flow_stats st[3] = { { .id = 1 }, { .id = 2 }, { .id = 3 } };
	struct read_item it[3] = {
		item(&st[0], host_a, 0, 0, 20000),
		item(&st[1], host_a, 0, 100, 20000),
		item(&st[2], host_a, 1000, 15000, 30000),
	};

	(void)state;
	assert_int_equal(read_queue_fill(it, 3), 0);
	assert_true(st[2].read_wait_us == 14.0 && st[2].read_wait_busy_us == 14.0);
	assert_int_equal(read_queue_fill(it, 0), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fifo_queue_is_busy),
		cmocka_unit_test(test_idle_wait_and_other_links),
		cmocka_unit_test(test_overlap_capped),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
