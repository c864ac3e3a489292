/* The root's watchdog verdict (kernel/proc/rootwatch.h, KC_ALIVE): a root that has not beaten
 * for its timeout is hung if it waits in IPC or used half the timeout in CPU time since its
 * beat; otherwise it was starved (ready, or asleep in timed waits) and is looked at again. */
#include "unit.h"
#include "proc/rootwatch.h"

#define S 1000000ull /* a second in microseconds */

static void before_the_timeout_nothing_happens(void)
{
	CHECK_EQ_U64(watch_verdict(0, 5 * S, 0, false), WATCH_EARLY);
	CHECK_EQ_U64(watch_verdict(5 * S - 1, 5 * S, 5 * S, true), WATCH_EARLY); /* even spinning, or in IPC */
}

static void a_spinner_is_hung(void)
{
	CHECK_EQ_U64(watch_verdict(5 * S, 5 * S, 5 * S, false), WATCH_HUNG);
	CHECK_EQ_U64(watch_verdict(5 * S, 5 * S, 5 * S / 2, false), WATCH_HUNG); /* half is enough */
	CHECK_EQ_U64(watch_verdict(9 * S, 5 * S, 3 * S, false), WATCH_HUNG);     /* a spinner among others */
}

static void little_cpu_is_starvation(void)
{
	CHECK_EQ_U64(watch_verdict(5 * S, 5 * S, 5 * S / 2 - 1, false), WATCH_STARVED);
	CHECK_EQ_U64(watch_verdict(60 * S, 5 * S, 0, false), WATCH_STARVED); /* never ran: never killed */
}

static void waiting_in_ipc_is_hung_whatever_the_cpu(void)
{
	CHECK_EQ_U64(watch_verdict(5 * S, 5 * S, 0, true), WATCH_HUNG);
}

static void ticks_cover_the_time(void)
{
	CHECK_EQ_U64(watch_ticks(5000, 100), 500);
	CHECK_EQ_U64(watch_ticks(1001, 100), 101); /* rounded up: never early */
	CHECK_EQ_U64(watch_ticks(1, 100), 1);
	CHECK_EQ_U64(watch_ticks(0, 100), 1); /* at least the next tick */
	CHECK_EQ_U64(watch_ticks(3600000, 10000), 36000000ull); /* the longest timeout, the fastest tick */
}

int main(void)
{
	unit_begin(__FILE__);
	RUN(before_the_timeout_nothing_happens);
	RUN(a_spinner_is_hung);
	RUN(little_cpu_is_starvation);
	RUN(waiting_in_ipc_is_hung_whatever_the_cpu);
	RUN(ticks_cover_the_time);
	return unit_end();
}
