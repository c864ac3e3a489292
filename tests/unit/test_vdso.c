/* The vDSO's clock arithmetic (kernel/abi/axolotl/vvar.h, shared by the kernel's clock and the
 * vDSO), and the built vDSO itself (build/vdso/vdso.so) run on the host: loaded the way the
 * kernel maps it, with a vvar page of our own below it, its functions found by name and
 * called, the system-call fallbacks answered by the host's Linux kernel. */
#define _GNU_SOURCE
#include "unit.h"
#include "lx_abi.h"
#include <axolotl/vvar.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>

/* ---- the arithmetic ---- */

static uint64_t exact_ns(uint64_t ticks, uint64_t hz)
{
	return (uint64_t)((unsigned __int128)ticks * VNS_PER_S / hz);
}

static const uint64_t rates[] = { 1000000, 1000001, 14318180, 999999999, 1000000000, 2445000000ull,
				  3000000007ull, 5200000000ull, 100000000000ull };

static void one_second_is_one_second(void)
{
	for (size_t i = 0; i < sizeof(rates) / sizeof(rates[0]); i++) {
		uint64_t hz = rates[i], mult = vclock_mult(hz);
		uint64_t ns = vclock_tsc_to_ns(1000 + hz, 1000, mult, VCLOCK_SHIFT);
		CHECK(ns + 2 >= VNS_PER_S && ns <= VNS_PER_S + 2);
	}
}

/* The error stays below hz / (2^33 * 10^9) of the time (plus the last nanosecond) out to
 * 100 years (vvar.h). */
static void long_uptimes_stay_accurate(void)
{
	for (size_t i = 0; i < sizeof(rates) / sizeof(rates[0]); i++) {
		uint64_t hz = rates[i], mult = vclock_mult(hz);
		const uint64_t secs[] = { 1, 60, 86400, 86400ull * 365, 86400ull * 365 * 100 };
		for (size_t k = 0; k < sizeof(secs) / sizeof(secs[0]); k++) {
			uint64_t ticks = secs[k] * hz + hz / 3;
			uint64_t want = exact_ns(ticks, hz), got = vclock_tsc_to_ns(ticks + 77, 77, mult, VCLOCK_SHIFT);
			uint64_t err = got > want ? got - want : want - got;
			uint64_t bound = (uint64_t)((unsigned __int128)want * hz / ((unsigned __int128)VNS_PER_S << 33)) + 1;
			if (err > bound)
				unit_fail(__FILE__, __LINE__, "hz %llu, %llu s: %llu ns, want %llu",
					  (unsigned long long)hz, (unsigned long long)secs[k], (unsigned long long)got,
					  (unsigned long long)want);
		}
	}
}

static void monotonic_and_clamped(void)
{
	uint64_t mult = vclock_mult(2445000000ull), boot = 1ull << 40, last = 0;
	uint64_t x = 88172645463325252ull, tsc = boot;
	for (int i = 0; i < 100000; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		tsc += x % 5000; /* steps of 0..4999 ticks, sometimes none */
		uint64_t ns = vclock_tsc_to_ns(tsc, boot, mult, VCLOCK_SHIFT);
		CHECK(ns >= last);
		last = ns;
	}
	CHECK_EQ_U64(vclock_tsc_to_ns(boot - 1, boot, mult, VCLOCK_SHIFT), 0); /* a lagging CPU */
	CHECK_EQ_U64(vclock_tsc_to_ns(boot, boot, mult, VCLOCK_SHIFT), 0);
	CHECK_EQ_U64(vclock_mult(0), vclock_mult(1000000)); /* no division by zero */
}

static void clocks_from_the_page(void)
{
	struct vvar v = { VVAR_CLOCK_TSC, VCLOCK_SHIFT, 1ull << VCLOCK_SHIFT, 1000, 1700000000ull * VNS_PER_S, 1, 10000000, 0 };
	uint64_t ns = 0;
	CHECK(vvar_clock_ns(&v, VCLOCK_MONOTONIC, 1500, &ns) && ns == 500);
	CHECK(vvar_clock_ns(&v, VCLOCK_MONOTONIC_RAW, 1500, &ns) && ns == 500);
	CHECK(vvar_clock_ns(&v, VCLOCK_MONOTONIC_COARSE, 1500, &ns) && ns == 500);
	CHECK(vvar_clock_ns(&v, VCLOCK_BOOTTIME, 1500, &ns) && ns == 500);
	CHECK(vvar_clock_ns(&v, VCLOCK_REALTIME, 1500, &ns) && ns == v.epoch_ns + 500);
	CHECK(vvar_clock_ns(&v, VCLOCK_REALTIME_COARSE, 1500, &ns) && ns == v.epoch_ns + 500);
	const int64_t kernel_only[] = { VCLOCK_PROCESS_CPUTIME_ID, VCLOCK_THREAD_CPUTIME_ID, 8, 11, 99, -1, -6,
					INT64_MIN, (int64_t)1 << 32 };
	for (size_t i = 0; i < sizeof(kernel_only) / sizeof(kernel_only[0]); i++) {
		CHECK(!vvar_clock_ns(&v, kernel_only[i], 1500, &ns));
		CHECK(!vvar_clock_res(&v, kernel_only[i], &ns));
	}
	CHECK(vvar_clock_res(&v, VCLOCK_MONOTONIC, &ns) && ns == 1);
	CHECK(vvar_clock_res(&v, VCLOCK_REALTIME_COARSE, &ns) && ns == 10000000);
	v.flags = 0; /* not filled, or no TSC: everything is the system call */
	for (int64_t c = 0; c < 8; c++)
		CHECK(!vvar_clock_ns(&v, c, 1500, &ns) && !vvar_clock_res(&v, c, &ns));
}

/* ---- the built vDSO, run on the host ---- */

struct lxts {
	int64_t sec, nsec;
};
static int (*v_cgt)(int, struct lxts *), (*v_getres)(int, struct lxts *);
static int (*v_gtod)(struct lxts *, int32_t *);
static int64_t (*v_time)(int64_t *);
static int (*v_getcpu)(unsigned *, unsigned *, void *);
static struct vvar *page;

static uint64_t tsc(void)
{
	uint32_t lo, hi;
	__asm__ volatile("lfence; rdtsc" : "=a"(lo), "=d"(hi) : : "memory");
	return ((uint64_t)hi << 32) | lo;
}

/* The symbol `name` of version LINUX_2.6 in the image at base, through DT_HASH. */
static void *lookup(uint8_t *base, const char *name)
{
	const Elf64_Ehdr *eh = (const void *)base;
	const Elf64_Dyn *dyn = NULL;
	for (int i = 0; i < eh->e_phnum; i++) {
		const Elf64_Phdr *ph = (const void *)(base + eh->e_phoff + (size_t)i * eh->e_phentsize);
		if (ph->p_type == PT_DYNAMIC)
			dyn = (const void *)(base + ph->p_offset);
	}
	const Elf64_Sym *syms = NULL;
	const char *str = NULL;
	const uint32_t *hash = NULL;
	const uint16_t *versym = NULL;
	const Elf64_Verdef *vd = NULL;
	for (; dyn && dyn->d_tag != DT_NULL; dyn++) {
		void *p = base + dyn->d_un.d_ptr;
		if (dyn->d_tag == DT_SYMTAB)
			syms = p;
		else if (dyn->d_tag == DT_STRTAB)
			str = p;
		else if (dyn->d_tag == DT_HASH)
			hash = p;
		else if (dyn->d_tag == DT_VERSYM)
			versym = p;
		else if (dyn->d_tag == DT_VERDEF)
			vd = p;
	}
	if (!syms || !str || !hash || !versym || !vd)
		return NULL;
	uint16_t want = 0; /* the index of version LINUX_2.6 */
	for (const Elf64_Verdef *d = vd;; d = (const void *)((const char *)d + d->vd_next)) {
		const Elf64_Verdaux *a = (const void *)((const char *)d + d->vd_aux);
		if (!strcmp(str + a->vda_name, "LINUX_2.6"))
			want = d->vd_ndx;
		if (!d->vd_next)
			break;
	}
	for (uint32_t i = 0; i < hash[1]; i++)
		if (syms[i].st_shndx && !strcmp(str + syms[i].st_name, name) && want && (versym[i] & 0x7fff) == want)
			return base + syms[i].st_value;
	return NULL;
}

/* Maps the vvar page and the image below/at the addresses' relative layout the kernel uses
 * (kernel/linux/vdso.c): [vvar][image...], the image read+execute, copied as it is. */
static int load_vdso(void)
{
	char exe[4096], path[4200];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return 0;
	exe[n] = 0;
	*strrchr(exe, '/') = 0;
	snprintf(path, sizeof(path), "%s/../vdso/vdso.so", exe);
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return 0;
	static uint8_t buf[4 * 4096];
	ssize_t len = read(fd, buf, sizeof(buf));
	close(fd);
	if (len <= 0)
		return 0;
	size_t pages = ((size_t)len + 4095) / 4096;
	uint8_t *m = mmap(NULL, (pages + 1) * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return 0;
	memcpy(m + 4096, buf, (size_t)len);
	if (mprotect(m + 4096, pages * 4096, PROT_READ | PROT_EXEC))
		return 0;
	page = (struct vvar *)m;
	v_cgt = (int (*)(int, struct lxts *))lookup(m + 4096, "__vdso_clock_gettime");
	v_getres = (int (*)(int, struct lxts *))lookup(m + 4096, "__vdso_clock_getres");
	v_gtod = (int (*)(struct lxts *, int32_t *))lookup(m + 4096, "__vdso_gettimeofday");
	v_time = (int64_t (*)(int64_t *))lookup(m + 4096, "__vdso_time");
	v_getcpu = (int (*)(unsigned *, unsigned *, void *))lookup(m + 4096, "__vdso_getcpu");
	return v_cgt && v_getres && v_gtod && v_time && v_getcpu;
}

static uint64_t ns_of(const struct lxts *t) { return (uint64_t)t->sec * VNS_PER_S + (uint64_t)t->nsec; }

static void built_vdso_reads_the_page(void)
{
	REQUIRE(page);
	/* One TSC tick per nanosecond from TSC 0: the clock is the TSC itself. */
	*page = (struct vvar){ VVAR_CLOCK_TSC, 32, 1ull << 32, 0, 5 * VNS_PER_S + 7, 1, 4000000, 0 };
	struct lxts t = { -1, -1 };
	uint64_t a = tsc();
	CHECK_EQ_I64(v_cgt(VCLOCK_MONOTONIC, &t), 0);
	uint64_t b = tsc();
	CHECK(a <= ns_of(&t) && ns_of(&t) <= b && t.nsec >= 0 && t.nsec < (int64_t)VNS_PER_S);
	a = tsc();
	CHECK_EQ_I64(v_cgt(VCLOCK_REALTIME_COARSE, &t), 0);
	b = tsc();
	CHECK(a + page->epoch_ns <= ns_of(&t) && ns_of(&t) <= b + page->epoch_ns);
	/* gettimeofday: microseconds of the realtime clock, a zero time zone. */
	struct lxts tv;
	int32_t tz[2] = { 5, 5 };
	a = tsc();
	CHECK_EQ_I64(v_gtod(&tv, tz), 0);
	b = tsc();
	uint64_t us = (uint64_t)tv.sec * 1000000 + (uint64_t)tv.nsec;
	CHECK(us >= (a + page->epoch_ns) / 1000 && us <= (b + page->epoch_ns) / 1000 && tv.nsec < 1000000);
	CHECK(tz[0] == 0 && tz[1] == 0 && v_gtod(NULL, NULL) == 0);
	int64_t s = -1;
	a = tsc();
	int64_t r = v_time(&s);
	b = tsc();
	CHECK(r == s && (uint64_t)r >= (a + page->epoch_ns) / VNS_PER_S && (uint64_t)r <= (b + page->epoch_ns) / VNS_PER_S);
	CHECK(v_getres(VCLOCK_MONOTONIC, &t) == 0 && t.sec == 0 && t.nsec == 1);
	CHECK(v_getres(VCLOCK_MONOTONIC_COARSE, &t) == 0 && t.sec == 0 && t.nsec == 4000000);
	CHECK(v_getres(VCLOCK_REALTIME, NULL) == 0);
	/* Scaled: 2 ticks per ns, from a boot TSC in the past. */
	uint64_t boot = tsc() - 1000000;
	*page = (struct vvar){ VVAR_CLOCK_TSC, 33, 1ull << 32, boot, 0, 1, 1, 0 };
	a = tsc();
	CHECK_EQ_I64(v_cgt(VCLOCK_BOOTTIME, &t), 0);
	b = tsc();
	CHECK(ns_of(&t) >= (a - boot) / 2 && ns_of(&t) <= (b - boot) / 2);
}

/* What the page cannot give goes to the system call: here the host's. */
static void built_vdso_falls_back_to_the_system_call(void)
{
	REQUIRE(page);
	*page = (struct vvar){ VVAR_CLOCK_TSC, 32, 1ull << 32, 0, 0, 1, 1, 0 };
	struct lxts t = { -1, -1 };
	struct timespec h;
	CHECK_EQ_I64(v_cgt(VCLOCK_PROCESS_CPUTIME_ID, &t), 0);
	clock_gettime(LX_CLOCK_PROCESS_CPUTIME_ID, &h);
	CHECK(t.sec >= 0 && ns_of(&t) > 0 && ns_of(&t) <= (uint64_t)h.tv_sec * VNS_PER_S + (uint64_t)h.tv_nsec);
	CHECK_EQ_I64(v_cgt(VCLOCK_THREAD_CPUTIME_ID, &t), 0);
	CHECK_EQ_I64(v_cgt(99, &t), -EINVAL);
	CHECK_EQ_I64(v_getres(99, &t), -EINVAL);
	CHECK_EQ_I64(v_getres(VCLOCK_PROCESS_CPUTIME_ID, &t), 0);
	/* An empty page: the host's own monotonic clock, through the vDSO's `syscall`. */
	memset(page, 0, sizeof(*page));
	struct timespec before, after;
	clock_gettime(LX_CLOCK_MONOTONIC, &before);
	CHECK_EQ_I64(v_cgt(VCLOCK_MONOTONIC, &t), 0);
	clock_gettime(LX_CLOCK_MONOTONIC, &after);
	CHECK(t.sec > before.tv_sec || (t.sec == before.tv_sec && t.nsec >= before.tv_nsec));
	CHECK(t.sec < after.tv_sec || (t.sec == after.tv_sec && t.nsec <= after.tv_nsec));
	struct lxts tv;
	CHECK_EQ_I64(v_gtod(&tv, NULL), 0);
	CHECK(tv.sec > 1600000000 && tv.nsec < 1000000);
	int64_t s = 0;
	CHECK(v_time(&s) == s && s > 1600000000);
	unsigned cpu = 9999, node = 9999;
	CHECK(v_getcpu(&cpu, &node, NULL) == 0 && cpu < 4096 && node < 4096);
}

/* With RDTSCP (if the host has it: its kernel keeps TSC_AUX = node << 12 | cpu, as ours). */
static void built_vdso_getcpu_by_rdtscp(void)
{
	REQUIRE(page);
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[4096];
	int has = 0;
	while (f && !has && fgets(line, sizeof(line), f))
		has = !strncmp(line, "flags", 5) && strstr(line, " rdtscp");
	if (f)
		fclose(f);
	if (!has)
		return; /* nothing to run it on */
	*page = (struct vvar){ VVAR_CLOCK_TSC | VVAR_GETCPU_RDTSCP, 32, 1ull << 32, 0, 0, 1, 1, 0 };
	int same = 0;
	for (int i = 0; i < 50 && !same; i++) { /* the host may move us in between */
		unsigned a = 9999, na = 9999, b = 8888, nb = 8888;
		same = v_getcpu(&a, &na, NULL) == 0 && syscall(SYS_getcpu, &b, &nb, NULL) == 0 && a == b && na == nb;
	}
	CHECK(same);
	CHECK(v_getcpu(NULL, NULL, NULL) == 0);
}

int main(void)
{
	unit_begin(__FILE__);
	RUN(one_second_is_one_second);
	RUN(long_uptimes_stay_accurate);
	RUN(monotonic_and_clamped);
	RUN(clocks_from_the_page);
	if (!load_vdso())
		printf("note: build/vdso/vdso.so not loaded\n");
	RUN(built_vdso_reads_the_page);
	RUN(built_vdso_falls_back_to_the_system_call);
	RUN(built_vdso_getcpu_by_rdtscp);
	return unit_end();
}
