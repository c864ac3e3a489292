/* Channel library (lib/chan) with two real threads: a producer and a consumer stream
 * messages through a small queue (no loss, duplication or reordering), and a consumer that
 * really sleeps (futex) on the doorbell is never left asleep with a message queued.
 * Built twice: with ASan+UBSan (test_chan_threads) and with TSan (test_chan_threads_tsan). */
#define _GNU_SOURCE
/* 10^7 messages take seconds alone, and timed out at 30 s once on a host loaded 4 times over
 * its cores: a hang is still caught. */
#define UNIT_TIMEOUT 180
#include "unit.h"
#include "lx_abi.h"
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <sys/syscall.h>
#include <time.h>
#include "spsc.h"
#include "doorbell.h"

/* 10^7 messages under both sanitizers; STREAM_MSGS=n in the environment overrides it. */
#define STREAM_MSGS 10000000ull
#define WAKE_ROUNDS 20000
#define DEADLINE_NS 5000000000ull /* a wake-up later than this counts as lost */

static uint64_t now_ns(void)
{
	struct timespec t;
	clock_gettime(LX_CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static void *region(size_t len)
{
	void *p = NULL;
	if (posix_memalign(&p, CHAN_CACHE_LINE, len))
		abort();
	memset(p, 0, len);
	return p;
}

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33, x *= 0xff51afd7ed558ccdull, x ^= x >> 33;
	return x * 0xc4ceb9fe1a85ec53ull;
}

struct stream {
	void *mem;
	size_t len;
	uint64_t n;
	uint64_t fulls, empties, bad, got; /* each written by one thread, read after join */
	uint64_t first_bad_seq, first_bad_want;
};

static void *stream_producer(void *arg)
{
	struct stream *s = arg;
	struct spsc q;
	if (spsc_attach(&q, s->mem, s->len, SPSC_PRODUCER))
		return (void *)1;
	uint64_t msg[2];
	for (uint64_t seq = 0; seq < s->n; seq++) {
		msg[0] = seq, msg[1] = mix(seq);
		for (unsigned tries = 1;; tries++) {
			int r = spsc_push(&q, msg);
			if (r == 0)
				break;
			if (r != CHAN_EAGAIN)
				return (void *)2;
			s->fulls++;
			if (!(tries % 64)) /* two cores, maybe busy: let the consumer run */
				sched_yield();
		}
	}
	return NULL;
}

static void *stream_consumer(void *arg)
{
	struct stream *s = arg;
	struct spsc q;
	if (spsc_attach(&q, s->mem, s->len, SPSC_CONSUMER))
		return (void *)1;
	uint64_t msg[2];
	unsigned tries = 0;
	while (s->got < s->n) {
		int r = spsc_pop(&q, msg);
		if (r == CHAN_EAGAIN) {
			s->empties++;
			if (!(++tries % 64))
				sched_yield();
			continue;
		}
		if (r)
			return (void *)2;
		if ((msg[0] != s->got || msg[1] != mix(msg[0])) && !s->bad++)
			s->first_bad_seq = msg[0], s->first_bad_want = s->got;
		s->got++;
	}
	return NULL;
}

static void stream_no_loss_dup_or_reorder(void)
{
	struct stream s = { 0 };
	const char *env = getenv("STREAM_MSGS");
	s.n = env ? strtoull(env, NULL, 0) : STREAM_MSGS;
	s.len = spsc_size(16, 16); /* small: the producer finds it full often */
	s.mem = region(s.len);
	REQUIRE(spsc_init(s.mem, s.len, 16, 16) > 0);
	pthread_t pt, ct;
	void *pr, *cr;
	uint64_t t0 = now_ns();
	REQUIRE(pthread_create(&ct, NULL, stream_consumer, &s) == 0);
	REQUIRE(pthread_create(&pt, NULL, stream_producer, &s) == 0);
	pthread_join(pt, &pr);
	pthread_join(ct, &cr);
	uint64_t dt = now_ns() - t0;
	CHECK(pr == NULL);
	CHECK(cr == NULL);
	CHECK_EQ_U64(s.got, s.n);
	CHECK_EQ_U64(s.bad, 0);
	if (s.bad)
		printf("first bad message: seq %llu where %llu was due\n",
		       (unsigned long long)s.first_bad_seq, (unsigned long long)s.first_bad_want);
	CHECK(s.fulls > 0);
	printf("stream: %llu messages in %.2f s, producer found the queue full %llu times, "
	       "consumer found it empty %llu times\n", (unsigned long long)s.n, dt / 1e9,
	       (unsigned long long)s.fulls, (unsigned long long)s.empties);
	free(s.mem);
}

/* Platform hooks on a futex over the doorbell's low 32 bits (x86 is little-endian). */
struct sleeper {
	_Atomic uint64_t waits, slept, timeouts;
};
static int futex_wait(const volatile uint64_t *bell, uint64_t seen, void *ctx)
{
	struct sleeper *sl = ctx;
	struct timespec ts = { 10, 0 }; /* belt and braces: the test never hangs for good */
	atomic_fetch_add(&sl->waits, 1);
	long r = syscall(SYS_futex, (const volatile uint32_t *)bell, FUTEX_WAIT_PRIVATE,
			 (uint32_t)seen, &ts, NULL, 0);
	if (r == 0)
		atomic_fetch_add(&sl->slept, 1);
	else if (errno == ETIMEDOUT)
		atomic_fetch_add(&sl->timeouts, 1);
	return 0;
}

struct wake {
	void *mem;
	size_t len;
	struct chan_platform plat;
	struct sleeper sl;
	_Atomic uint64_t acked; /* messages the consumer has seen */
	_Atomic int stop;
	uint64_t bad;
};
static struct wake *the_wake; /* futex_wake's context: the doorbell word */
static void futex_wake(void *ctx)
{
	(void)ctx;
	syscall(SYS_futex, &((struct spsc_shared *)the_wake->mem)->bell, FUTEX_WAKE_PRIVATE, 1,
		NULL, NULL, 0);
}

static void *wake_consumer(void *arg)
{
	struct wake *w = arg;
	struct spsc q;
	if (spsc_attach(&q, w->mem, w->len, SPSC_CONSUMER))
		return (void *)1;
	uint64_t msg[2], want = 0, seed = 5;
	while (!atomic_load(&w->stop)) {
		int r = spsc_pop(&q, msg);
		if (r == CHAN_EAGAIN) {
			/* Sometimes other work between finding the queue empty and going to sleep:
			 * widens the window in which a push races the sleep. */
			uint64_t d = unit_rand(&seed);
			if (d & 1)
				for (volatile unsigned k = (unsigned)(d >> 40) % 4000; k; k--)
					;
			if (chan_sleep(&q, &w->plat) < 0)
				return (void *)2;
			continue;
		}
		if (r)
			return (void *)3;
		if (msg[0] == UINT64_MAX)
			break;
		w->bad += msg[0] != want++;
		atomic_store_explicit(&w->acked, want, memory_order_release);
	}
	return NULL;
}

/* Ping-pong: each message is pushed while the consumer is asleep or falling asleep (the
 * delay before the push varies), and must be seen within DEADLINE_NS. */
static void doorbell_no_lost_wakeup(void)
{
	static struct wake w;
	memset(&w, 0, sizeof(w));
	the_wake = &w;
	w.len = spsc_size(16, 8);
	w.mem = region(w.len);
	REQUIRE(spsc_init(w.mem, w.len, 16, 8) > 0);
	w.plat = (struct chan_platform){ futex_wait, futex_wake, &w.sl };
	struct spsc q;
	REQUIRE(spsc_attach(&q, w.mem, w.len, SPSC_PRODUCER) == 0);
	pthread_t ct;
	REQUIRE(pthread_create(&ct, NULL, wake_consumer, &w) == 0);
	uint64_t seed = 99, msg[2] = { 0, 0 }, lost_at = UINT64_MAX, rings = 0;
	for (uint64_t i = 0; i < WAKE_ROUNDS; i++) {
		uint64_t r = unit_rand(&seed);
		switch (r % 4) { /* race the push against the consumer's way into the wait */
		case 0: break;
		case 1: sched_yield(); break;
		case 2: for (volatile unsigned k = (unsigned)(r >> 40) % 2000; k; k--) ; break;
		case 3: usleep(20); break;
		}
		msg[0] = i;
		REQUIRE(spsc_push(&q, msg) == 0);
		rings += (uint64_t)chan_kick(&q, &w.plat);
		uint64_t deadline = now_ns() + DEADLINE_NS;
		for (unsigned spin = 0; atomic_load_explicit(&w.acked, memory_order_acquire) != i + 1;
		     spin++) {
			if (now_ns() > deadline) {
				lost_at = i;
				break;
			}
			if (spin > 1000) /* spin first: push again right after the ack */
				sched_yield();
		}
		if (lost_at != UINT64_MAX)
			break;
	}
	/* Stop the consumer, ringing unconditionally in case a wake-up was lost. */
	msg[0] = UINT64_MAX;
	while (spsc_push(&q, msg) == CHAN_EAGAIN)
		sched_yield();
	atomic_store(&w.stop, 1);
	atomic_store(&((struct spsc_shared *)w.mem)->bell, atomic_load(&((struct spsc_shared *)w.mem)->bell) + 1);
	futex_wake(NULL);
	void *cr;
	pthread_join(ct, &cr);
	CHECK(cr == NULL);
	CHECK_EQ_U64(lost_at, UINT64_MAX);
	CHECK_EQ_U64(w.bad, 0);
	CHECK_EQ_U64(atomic_load(&w.sl.timeouts), 0);
	/* The consumer really slept, and often. */
	CHECK(atomic_load(&w.sl.slept) > WAKE_ROUNDS / 10);
	printf("doorbell: %d rounds, %llu rings, %llu waits, %llu really slept\n", WAKE_ROUNDS,
	       (unsigned long long)rings, (unsigned long long)atomic_load(&w.sl.waits),
	       (unsigned long long)atomic_load(&w.sl.slept));
	free(w.mem);
}

int main(void)
{
	unit_begin(__FILE__);
	RUN(stream_no_loss_dup_or_reorder);
	RUN(doorbell_no_lost_wakeup);
	return unit_end();
}
