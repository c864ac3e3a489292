/* drivers/e1000/stat.h: the new events of a statistics register that clears on read (the
 * 8254x manual) and of one that keeps a running total (QEMU's MPC and RNBC). */
#include "unit.h"
#include "e1k_stat.h"

/* A device register: counts events; reading it returns the count and clears it if clears. */
struct reg {
	uint32_t v;
	bool clears;
};

static uint32_t rd(struct reg *r)
{
	uint32_t v = r->v;
	if (r->clears)
		r->v = 0;
	return v;
}

/* events[i] happen before look i, between[i] between its two reads; the driver's sum must
 * equal every event that happened. */
static uint64_t looks(bool clears, const uint32_t *events, const uint32_t *between, int n, uint64_t *truth)
{
	struct reg r = { 0, clears };
	struct e1k_stat s = { 0 };
	uint64_t sum = 0;
	*truth = 0;
	for (int i = 0; i < n; i++) {
		r.v += events[i];
		*truth += events[i];
		uint32_t first = rd(&r);
		r.v += between[i];
		*truth += between[i];
		sum += e1k_stat_new(&s, first, rd(&r));
	}
	return sum;
}

static void both_kinds_count_each_event_once(void)
{
	const uint32_t events[] = { 0, 23, 0, 0, 5, 0, 100, 0 };
	const uint32_t between[] = { 0, 0, 0, 1, 0, 0, 2, 0 };
	uint64_t truth;
	CHECK_EQ_I64((int64_t)looks(true, events, between, 8, &truth), (int64_t)truth);
	CHECK_EQ_I64((int64_t)looks(false, events, between, 8, &truth), (int64_t)truth);
	CHECK_EQ_I64((int64_t)truth, 131);
}

static void quiet_looks_add_nothing(void)
{
	/* the bug this replaces: a running total of 23 was added again at every netstat */
	const uint32_t events[] = { 23, 0, 0, 0, 0 };
	const uint32_t none[] = { 0, 0, 0, 0, 0 };
	uint64_t truth;
	CHECK_EQ_I64((int64_t)looks(false, events, none, 5, &truth), 23);
	CHECK_EQ_I64((int64_t)looks(true, events, none, 5, &truth), 23);
}

static void a_clearing_register_with_a_few_events_between_reads_stays_clearing(void)
{
	/* 2 events between the reads of a look that saw 3: not enough to decide */
	const uint32_t events[] = { 3, 10, 7 };
	const uint32_t between[] = { 2, 0, 1 };
	uint64_t truth;
	CHECK_EQ_I64((int64_t)looks(true, events, between, 3, &truth), (int64_t)truth);
}

static void a_running_total_wraps(void)
{
	struct e1k_stat s = { 0 };
	CHECK_EQ_I64(e1k_stat_new(&s, 0xfffffff0u, 0xfffffff0u), 0xfffffff0u);
	CHECK_EQ_I64(e1k_stat_new(&s, 0x10, 0x10), 0x20);
}

int main(void)
{
	unit_begin(__FILE__);
	RUN(both_kinds_count_each_event_once);
	RUN(quiet_looks_add_nothing);
	RUN(a_clearing_register_with_a_few_events_between_reads_stays_clearing);
	RUN(a_running_total_wraps);
	return unit_end();
}
