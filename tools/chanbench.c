/* Channel microbenchmark (`make chanbench`): cycles (TSC) per enqueue, per enqueue+dequeue
 * pair on one core, and messages per second between two cores (threads pinned with
 * pthread_setaffinity_np). Host only, -O2, no sanitizers.
 * Usage: chanbench [slot_size=64] [nslots=1024] [messages=20000000] [cpu_a=0] [cpu_b=1] */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <x86intrin.h>
#include "spsc.h"

static uint32_t slot_size = 64, nslots = 1024;
static uint64_t nmsgs = 20000000;
static int cpu_a = 0, cpu_b = 1;
static size_t len;
static void *mem;

static uint64_t now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static void pin(int cpu)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (pthread_setaffinity_np(pthread_self(), sizeof(set), &set))
		fprintf(stderr, "chanbench: cannot pin to CPU %d\n", cpu);
}

static void fresh(struct spsc *p, struct spsc *c)
{
	if (spsc_init(mem, len, slot_size, nslots) < 0 ||
	    spsc_attach(p, mem, len, SPSC_PRODUCER) || spsc_attach(c, mem, len, SPSC_CONSUMER)) {
		fprintf(stderr, "chanbench: bad geometry\n");
		exit(1);
	}
}

/* One core: fill the queue (timed pushes), drain it (timed pops). */
static void one_core(void)
{
	struct spsc p, c;
	fresh(&p, &c);
	unsigned char msg[SPSC_MAX_SLOT] = { 1 }, out[SPSC_MAX_SLOT];
	uint64_t push = 0, pop = 0, n = 0;
	for (int round = 0; round < 2000; round++) {
		uint64_t t0 = __rdtsc();
		for (uint32_t i = 0; i < nslots; i++)
			spsc_push(&p, msg);
		uint64_t t1 = __rdtsc();
		for (uint32_t i = 0; i < nslots; i++)
			spsc_pop(&c, out);
		uint64_t t2 = __rdtsc();
		if (round >= 100) /* warm-up */
			push += t1 - t0, pop += t2 - t1, n += nslots;
	}
	printf("one core:  %6.1f cycles per enqueue, %6.1f per dequeue (queue filled, then drained)\n",
	       (double)push / n, (double)pop / n);
	uint64_t pairs = 10000000, t0 = __rdtsc();
	for (uint64_t i = 0; i < pairs; i++) {
		memcpy(msg, &i, sizeof(i));
		spsc_push(&p, msg);
		spsc_pop(&c, out);
	}
	uint64_t t1 = __rdtsc();
	printf("one core:  %6.1f cycles per enqueue+dequeue pair\n", (double)(t1 - t0) / pairs);
}

static _Atomic int go;
static uint64_t cons_bad;

static void *consumer(void *arg)
{
	(void)arg;
	pin(cpu_b);
	struct spsc c;
	if (spsc_attach(&c, mem, len, SPSC_CONSUMER))
		exit(1);
	unsigned char out[SPSC_MAX_SLOT];
	atomic_store(&go, 1);
	for (uint64_t want = 0; want < nmsgs;) {
		if (spsc_pop(&c, out))
			continue;
		uint64_t seq;
		memcpy(&seq, out, sizeof(seq));
		cons_bad += seq != want++;
	}
	return NULL;
}

/* Two cores: the producer on cpu_a, the consumer on cpu_b. */
static void two_cores(void)
{
	struct spsc p, c;
	fresh(&p, &c);
	pin(cpu_a);
	pthread_t t;
	atomic_store(&go, 0);
	pthread_create(&t, NULL, consumer, NULL);
	while (!atomic_load(&go))
		;
	unsigned char msg[SPSC_MAX_SLOT] = { 0 };
	uint64_t fulls = 0, ns0 = now_ns(), t0 = __rdtsc();
	for (uint64_t i = 0; i < nmsgs; i++) {
		memcpy(msg, &i, sizeof(i));
		while (spsc_push(&p, msg))
			fulls++;
	}
	pthread_join(t, NULL);
	uint64_t t1 = __rdtsc(), ns1 = now_ns();
	double secs = (ns1 - ns0) / 1e9;
	printf("two cores: %6.1f cycles per message, %.1f M messages/s (%.2f GB/s of slots), "
	       "CPU %d -> CPU %d, producer found the queue full %llu times%s\n",
	       (double)(t1 - t0) / nmsgs, nmsgs / secs / 1e6, nmsgs * (double)slot_size / secs / 1e9,
	       cpu_a, cpu_b, (unsigned long long)fulls, cons_bad ? ", MESSAGES OUT OF ORDER" : "");
	printf("           TSC %.2f GHz\n", (double)(t1 - t0) / (ns1 - ns0));
}

int main(int argc, char **argv)
{
	if (argc > 1) slot_size = (uint32_t)strtoul(argv[1], NULL, 0);
	if (argc > 2) nslots = (uint32_t)strtoul(argv[2], NULL, 0);
	if (argc > 3) nmsgs = strtoull(argv[3], NULL, 0);
	if (argc > 4) cpu_a = atoi(argv[4]);
	if (argc > 5) cpu_b = atoi(argv[5]);
	len = spsc_size(slot_size, nslots);
	if (!len || slot_size < sizeof(uint64_t) || posix_memalign(&mem, CHAN_CACHE_LINE, len)) {
		fprintf(stderr, "chanbench: slot size must be a power of two in [8, %d], slot count a "
			"power of two up to %u\n", SPSC_MAX_SLOT, SPSC_MAX_SLOTS);
		return 1;
	}
	printf("chanbench: %u-byte slots, %u slots, %llu messages\n", slot_size, nslots,
	       (unsigned long long)nmsgs);
	one_core();
	two_cores();
	free(mem);
	return cons_bad != 0;
}
