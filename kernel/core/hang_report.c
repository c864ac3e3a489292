/* An NMI that is not a panic's (QEMU's monitor command `nmi`, which the test harness sends
 * when a guest stops answering) makes every CPU print what it runs and where, and one of
 * them list every thread, while the others wait inside their NMI so nothing changes under
 * the list. Then all go on as before: the report only reads. Every wait is bounded (a CPU
 * that never comes is news in itself), and output takes the console lock only briefly
 * because a CPU may have been stopped while holding it. */
#include "core/hang_report.h"
#include "console/log.h"
#include "arch/time.h"
#include "arch/x86.h"
#include "proc/dump.h"
#include "smp/percpu.h"

static volatile uint32_t arrived, started, printed, released, left, turn;

static bool wait_for_count(volatile uint32_t *v, uint32_t want, uint64_t us)
{
	for (uint64_t t0 = time_us_since_boot(); __atomic_load_n(v, __ATOMIC_ACQUIRE) < want;) {
		if (time_us_since_boot() - t0 > us)
			return false;
		cpu_relax();
	}
	return true;
}

void hang_report(struct trap_frame *f)
{
	uint32_t me = __atomic_fetch_add(&arrived, 1, __ATOMIC_SEQ_CST);
	if (me == 0) {
		console_break_locks();
		kprintf("\nhang-report: NMI\n"); /* (a prompt may have left the line open) */
		__atomic_store_n(&started, 1, __ATOMIC_RELEASE);
	} else {
		wait_for_count(&started, 1, 1000000);
	}
	wait_for_count(&arrived, ncpus_online, 1000000);
	for (uint64_t t0 = time_us_since_boot();
	     __atomic_exchange_n(&turn, 1, __ATOMIC_ACQUIRE) && time_us_since_boot() - t0 < 500000;)
		cpu_relax();
	dump_this_cpu(f);
	__atomic_store_n(&turn, 0, __ATOMIC_RELEASE);
	__atomic_fetch_add(&printed, 1, __ATOMIC_SEQ_CST);
	if (me != 0) {
		wait_for_count(&released, 1, 5000000);
		__atomic_fetch_add(&left, 1, __ATOMIC_SEQ_CST);
		return;
	}
	wait_for_count(&printed, ncpus_online, 1000000);
	kprintf("hang-report: %u of %u CPUs answered; threads:\n", printed, ncpus_online);
	dump_threads();
	kprintf("hang-report: end\n");
	uint32_t others = __atomic_load_n(&arrived, __ATOMIC_SEQ_CST) - 1;
	__atomic_store_n(&released, 1, __ATOMIC_RELEASE);
	wait_for_count(&left, others, 1000000);
	arrived = started = printed = left = 0;
	__atomic_store_n(&released, 0, __ATOMIC_RELEASE);
	console_mend_locks();
}
