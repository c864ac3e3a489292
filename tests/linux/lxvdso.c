/* The vDSO (docs/kernel-api.md section 8c): a Linux program built with musl-gcc -static, run
 * under pm, printing one "LXTEST PASS|FAIL name" line per check.
 *   lxvdso              every check below; exits with the number of failures
 *   lxvdso exec-child   what an execve'd program sees: AT_SYSINFO_EHDR and a working vDSO
 *                       (exit 0), run by the exec check from /bin/lxvdso
 * It finds the vDSO as musl does (AT_SYSINFO_EHDR, DT_HASH, the LINUX_2.6 version) and also
 * through DT_GNU_HASH (glibc's way), compares every clock with the system call, and counts
 * its own Linux system calls with KC_INFO(KI_LINUX_CALLS) to prove the C library's clock
 * reads make none. Timings are printed ("LXTEST INFO"), never asserted. */
#include <elf.h>
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define KC_BASE 0x0a000000L
#define KC_INFO 16
#define KI_LINUX_CALLS 9
#define NS 1000000000LL

static int failures;

static void check(const char *name, int ok)
{
	printf("LXTEST %s %s\n", ok ? "PASS" : "FAIL", name);
	fflush(stdout);
	failures += !ok;
}

/* The Linux system calls this process made so far (a native call: not itself counted). */
static long linux_calls(void) { return syscall(KC_BASE | KC_INFO, KI_LINUX_CALLS, 0); }

typedef int (*cgt_fn)(clockid_t, struct timespec *);
typedef int (*gtod_fn)(struct timeval *, void *);
typedef time_t (*time_fn)(time_t *);
typedef int (*getcpu_fn)(unsigned *, unsigned *, void *);

static const char *const names[] = { "__vdso_clock_gettime", "__vdso_gettimeofday", "__vdso_time",
				     "__vdso_clock_getres", "__vdso_getcpu" };
#define NSYMS 5

/* The parts of the vDSO a lookup needs. */
struct dso {
	const Elf64_Ehdr *eh;
	uintptr_t base;
	const Elf64_Sym *syms;
	const char *strings;
	const uint32_t *hash, *gnu_hash;
	const uint16_t *versym;
	const Elf64_Verdef *verdef;
	size_t load_size; /* the PT_LOAD's bytes */
};

static int open_dso(struct dso *d, uintptr_t at)
{
	memset(d, 0, sizeof(*d));
	const Elf64_Ehdr *eh = (const void *)at;
	if (!at || memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_type != ET_DYN || eh->e_machine != EM_X86_64)
		return 0;
	d->eh = eh;
	d->base = (uintptr_t)-1;
	const Elf64_Dyn *dyn = NULL;
	for (int i = 0; i < eh->e_phnum; i++) {
		const Elf64_Phdr *ph = (const void *)(at + eh->e_phoff + (size_t)i * eh->e_phentsize);
		if (ph->p_type == PT_LOAD) {
			d->base = at + ph->p_offset - ph->p_vaddr;
			d->load_size = ph->p_filesz;
		} else if (ph->p_type == PT_DYNAMIC) {
			dyn = (const void *)(at + ph->p_offset);
		}
	}
	if (!dyn || d->base == (uintptr_t)-1)
		return 0;
	for (; dyn->d_tag != DT_NULL; dyn++) {
		const void *p = (const void *)(d->base + dyn->d_un.d_ptr);
		switch (dyn->d_tag) {
		case DT_SYMTAB: d->syms = p; break;
		case DT_STRTAB: d->strings = p; break;
		case DT_HASH: d->hash = p; break;
		case DT_GNU_HASH: d->gnu_hash = p; break;
		case DT_VERSYM: d->versym = p; break;
		case DT_VERDEF: d->verdef = p; break;
		}
	}
	return d->syms && d->strings;
}

/* Whether symbol i has version `want` (by DT_VERSYM and DT_VERDEF). */
static int has_version(const struct dso *d, size_t i, const char *want)
{
	if (!d->versym || !d->verdef)
		return 0;
	uint16_t v = d->versym[i] & 0x7fff;
	for (const Elf64_Verdef *vd = d->verdef;; vd = (const void *)((const char *)vd + vd->vd_next)) {
		if (!(vd->vd_flags & VER_FLG_BASE) && (vd->vd_ndx & 0x7fff) == v) {
			const Elf64_Verdaux *aux = (const void *)((const char *)vd + vd->vd_aux);
			return !strcmp(d->strings + aux->vda_name, want);
		}
		if (!vd->vd_next)
			return 0;
	}
}

static int sym_ok(const struct dso *d, size_t i, const char *name)
{
	const Elf64_Sym *s = &d->syms[i];
	return s->st_shndx != SHN_UNDEF && ELF64_ST_TYPE(s->st_info) == STT_FUNC &&
	       (ELF64_ST_BIND(s->st_info) == STB_GLOBAL || ELF64_ST_BIND(s->st_info) == STB_WEAK) &&
	       !strcmp(d->strings + s->st_name, name) && has_version(d, i, "LINUX_2.6");
}

/* musl's way: walk the DT_HASH chain count. */
static void *lookup_hash(const struct dso *d, const char *name)
{
	if (!d->hash)
		return NULL;
	for (size_t i = 0; i < d->hash[1]; i++)
		if (sym_ok(d, i, name))
			return (void *)(d->base + d->syms[i].st_value);
	return NULL;
}

/* glibc's way: the DT_GNU_HASH bloom filter, bucket and chain. */
static void *lookup_gnu_hash(const struct dso *d, const char *name)
{
	const uint32_t *g = d->gnu_hash;
	if (!g)
		return NULL;
	uint32_t h = 5381;
	for (const unsigned char *c = (const void *)name; *c; c++)
		h = h * 33 + *c;
	uint32_t nbuckets = g[0], symoffset = g[1], bloom_size = g[2], shift = g[3];
	const uint64_t *bloom = (const void *)(g + 4);
	const uint32_t *buckets = (const void *)(bloom + bloom_size), *chain = buckets + nbuckets;
	uint64_t word = bloom[(h / 64) % bloom_size];
	if (!((word >> (h % 64)) & (word >> ((h >> shift) % 64)) & 1))
		return NULL;
	uint32_t i = buckets[h % nbuckets];
	if (i < symoffset)
		return NULL;
	for (;; i++) {
		uint32_t ch = chain[i - symoffset];
		if ((ch | 1) == (h | 1) && sym_ok(d, i, name))
			return (void *)(d->base + d->syms[i].st_value);
		if (ch & 1)
			return NULL;
	}
}

static uint64_t ns_of(const struct timespec *t) { return (uint64_t)t->tv_sec * NS + (uint64_t)t->tv_nsec; }

static uint32_t checksum(const void *p, size_t n)
{
	uint32_t h = 2166136261u;
	for (size_t i = 0; i < n; i++)
		h = (h ^ ((const unsigned char *)p)[i]) * 16777619u;
	return h;
}

static cgt_fn v_cgt, v_getres;
static gtod_fn v_gtod;
static time_fn v_time;
static getcpu_fn v_getcpu;

/* A child that runs fn and exits with its result; the wait status, or -1. */
static int in_child(int (*fn)(void))
{
	pid_t pid = fork();
	if (pid == 0)
		_exit(fn());
	int st;
	return pid > 0 && waitpid(pid, &st, 0) == pid ? st : -1;
}

static int vdso_agrees(void)
{
	struct timespec a, b;
	return v_cgt(CLOCK_MONOTONIC, &a) == 0 && syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &b) == 0 &&
	       ns_of(&b) >= ns_of(&a) && ns_of(&b) - ns_of(&a) < 100000000;
}

static uintptr_t vdso_at;
static struct dso dso;

static int write_vvar(void)
{
	*(volatile uint64_t *)(vdso_at - 4096) = 1; /* must fault: SIGSEGV ends us */
	return 0;
}

static int write_text(void)
{
	*(volatile uint8_t *)(vdso_at + 0x10) = 1;
	return 0;
}

/* In a child: make our vDSO and vvar writable (refused), drop them with madvise and munmap,
 * put our own memory where they were; none of it may reach the parent. */
static int vandalise(void)
{
	size_t len = 4096 + ((dso.load_size + 4095) & ~(size_t)4095);
	void *lo = (void *)(vdso_at - 4096);
	int bad = 0;
	errno = 0;
	bad |= !(mprotect(lo, 4096, PROT_READ | PROT_WRITE) == -1 && errno == EACCES) << 0;
	errno = 0;
	bad |= !(mprotect((void *)vdso_at, 4096, PROT_READ | PROT_WRITE | PROT_EXEC) == -1 && errno == EACCES) << 1;
	bad |= (madvise(lo, len, MADV_DONTNEED) != 0) << 2;
	bad |= !vdso_agrees() << 3;
	bad |= (munmap(lo, len) != 0) << 4;
	void *p = mmap(lo, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	bad |= (p != lo) << 5;
	if (p == lo)
		memset(p, 0xcc, len);
	struct timespec t;
	bad |= (syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &t) != 0) << 6;
	return bad;
}

static int exec_child(void)
{
	struct dso d;
	if (!open_dso(&d, getauxval(AT_SYSINFO_EHDR)))
		return 1;
	v_cgt = (cgt_fn)lookup_hash(&d, "__vdso_clock_gettime");
	if (!v_cgt || !vdso_agrees())
		return 2;
	long before = linux_calls();
	struct timespec t;
	for (int i = 0; i < 100; i++)
		clock_gettime(CLOCK_MONOTONIC, &t);
	return linux_calls() == before ? 0 : 3;
}

static int clock_pair_ok(clockid_t clk, int rounds)
{
	/* Interleaved: syscall, vDSO, syscall, ... never goes back, and each step is small. */
	uint64_t last = 0;
	for (int i = 0; i < rounds; i++) {
		struct timespec t;
		int r = i & 1 ? v_cgt(clk, &t) : (int)syscall(SYS_clock_gettime, clk, &t);
		if (r != 0 || t.tv_nsec < 0 || t.tv_nsec >= NS || ns_of(&t) < last)
			return 0;
		if (last && ns_of(&t) - last > 50000000) /* 50 ms: a vCPU can be descheduled */
			return 0;
		last = ns_of(&t);
	}
	return 1;
}

static double now_ns(void)
{
	struct timespec t;
	syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &t);
	return (double)ns_of(&t);
}

static int run_all(void)
{
	vdso_at = getauxval(AT_SYSINFO_EHDR);
	check("auxv_sysinfo_ehdr", vdso_at != 0 && (vdso_at & 4095) == 0);
	check("vdso_is_elf", open_dso(&dso, vdso_at));
	void *by_hash[NSYMS], *by_gnu[NSYMS];
	int found = 1, same = 1;
	for (int i = 0; i < NSYMS; i++) {
		by_hash[i] = dso.eh ? lookup_hash(&dso, names[i]) : NULL;
		by_gnu[i] = dso.eh ? lookup_gnu_hash(&dso, names[i]) : NULL;
		found &= by_hash[i] != NULL;
		same &= by_gnu[i] == by_hash[i];
	}
	check("symbols_dt_hash_linux_2_6", found);
	check("symbols_dt_gnu_hash", same);
	check("unknown_symbol_absent", dso.eh && !lookup_hash(&dso, "__vdso_nothing") && !lookup_gnu_hash(&dso, "__vdso_nothing"));
	if (!found) {
		printf("LXTEST DONE %d failures\n", failures);
		return failures;
	}
	v_cgt = (cgt_fn)by_hash[0];
	v_gtod = (gtod_fn)by_hash[1];
	v_time = (time_fn)by_hash[2];
	v_getres = (cgt_fn)by_hash[3];
	v_getcpu = (getcpu_fn)by_hash[4];

	/* The counter is honest: raw system calls are counted one each. */
	struct timespec t, u;
	long c0 = linux_calls();
	for (int i = 0; i < 100; i++)
		syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &t);
	long c1 = linux_calls();
	check("counter_counts_syscalls", c0 >= 0 && c1 - c0 == 100);

	check("monotonic_interleaved", clock_pair_ok(CLOCK_MONOTONIC, 2000));
	check("monotonic_raw_interleaved", clock_pair_ok(CLOCK_MONOTONIC_RAW, 200));
	check("monotonic_coarse_interleaved", clock_pair_ok(CLOCK_MONOTONIC_COARSE, 200));
	check("boottime_interleaved", clock_pair_ok(CLOCK_BOOTTIME, 200));
	check("realtime_interleaved", clock_pair_ok(CLOCK_REALTIME, 200));
	check("realtime_coarse_interleaved", clock_pair_ok(CLOCK_REALTIME_COARSE, 200));
	/* The wall clock is the monotonic one plus the boot epoch, in both. */
	struct timespec rv, mv, rs, ms;
	v_cgt(CLOCK_REALTIME, &rv), v_cgt(CLOCK_MONOTONIC, &mv);
	syscall(SYS_clock_gettime, CLOCK_REALTIME, &rs), syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &ms);
	int64_t off_v = (int64_t)(ns_of(&rv) - ns_of(&mv)), off_s = (int64_t)(ns_of(&rs) - ns_of(&ms));
	check("realtime_offset_agrees", llabs(off_v - off_s) < 5000000 && rv.tv_sec > 1600000000);

	/* gettimeofday and time against the system calls and the realtime clock. */
	struct timeval tv1, tv2;
	struct { int minuteswest, dsttime; } tz = { 77, 77 };
	syscall(SYS_clock_gettime, CLOCK_REALTIME, &t);
	int r = v_gtod(&tv1, &tz);
	syscall(SYS_gettimeofday, &tv2, NULL);
	uint64_t us_t = ns_of(&t) / 1000, us1 = (uint64_t)tv1.tv_sec * 1000000 + (uint64_t)tv1.tv_usec,
		 us2 = (uint64_t)tv2.tv_sec * 1000000 + (uint64_t)tv2.tv_usec;
	check("gettimeofday_agrees", r == 0 && us_t <= us1 && us1 <= us2 && us2 - us_t < 50000 &&
					     tv1.tv_usec >= 0 && tv1.tv_usec < 1000000 && tz.minuteswest == 0 &&
					     tz.dsttime == 0 && v_gtod(NULL, NULL) == 0);
	time_t tloc = 0, s0 = syscall(SYS_time, NULL), s1 = v_time(&tloc), s2 = v_time(NULL), s3 = syscall(SYS_time, NULL);
	check("time_agrees", s1 == tloc && s0 <= s1 && s1 <= s2 && s2 <= s3 && s3 - s0 <= 1);
	check("libc_gettimeofday_time", gettimeofday(&tv1, NULL) == 0 && time(NULL) >= s3 &&
						tv1.tv_sec >= s3);

	/* clock_getres: the same answers, and NULL is fine. */
	int res_same = 1;
	for (clockid_t c = 0; c <= CLOCK_BOOTTIME; c++) {
		struct timespec a = { -1, -1 }, b = { -2, -2 };
		res_same &= v_getres(c, &a) == 0 && syscall(SYS_clock_getres, c, &b) == 0 && a.tv_sec == b.tv_sec &&
			    a.tv_nsec == b.tv_nsec && a.tv_nsec > 0 && v_getres(c, NULL) == 0;
	}
	check("getres_agrees", res_same);

	/* CPU time is the kernel's: the vDSO makes the system call (one each). */
	struct timespec p1, p2, th;
	c0 = linux_calls();
	int rp1 = v_cgt(CLOCK_PROCESS_CPUTIME_ID, &p1), rth = v_cgt(CLOCK_THREAD_CPUTIME_ID, &th);
	for (volatile int i = 0; i < 200000; i++)
		;
	int rp2 = v_cgt(CLOCK_PROCESS_CPUTIME_ID, &p2);
	c1 = linux_calls();
	check("cputime_falls_back", rp1 == 0 && rth == 0 && rp2 == 0 && c1 - c0 == 3 && ns_of(&p2) >= ns_of(&p1) &&
					    ns_of(&p1) > 0);
	check("libc_cputime", clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t) == 0 && ns_of(&t) >= ns_of(&p2));

	/* Unknown clocks: EINVAL from the kernel, through the vDSO and through musl. */
	errno = 0;
	check("invalid_clock_einval", v_cgt(99, &t) == -EINVAL && v_cgt(-7, &t) == -EINVAL &&
					      v_getres(99, &t) == -EINVAL &&
					      clock_gettime(99, &t) == -1 && errno == EINVAL);

	/* The C library's clock reads make no system call at all. */
	clock_gettime(CLOCK_MONOTONIC, &t); /* musl resolves the vDSO on its first call */
	c0 = linux_calls();
	uint64_t prev = 0;
	int mono = 1;
	for (int i = 0; i < 10000; i++) {
		clock_gettime(CLOCK_MONOTONIC, &t);
		mono &= ns_of(&t) >= prev;
		prev = ns_of(&t);
	}
	for (int i = 0; i < 1000; i++) {
		clock_gettime(CLOCK_REALTIME, &t);
		gettimeofday(&tv1, NULL);
		time(NULL);
	}
	c1 = linux_calls();
	check("libc_10000_clock_gettime_no_syscalls", c1 == c0 && mono);
	printf("LXTEST INFO 13000 libc clock reads made %ld system calls\n", c1 - c0);

	/* getcpu: the same CPU as the system call says (retrying if we move in between). */
	int cpu_ok = 0;
	for (int i = 0; i < 20 && !cpu_ok; i++) {
		unsigned a = 999, b = 999, na = 9, nb = 9;
		cpu_ok = v_getcpu(&a, &na, NULL) == 0 && syscall(SYS_getcpu, &b, &nb, NULL) == 0 && a == b && na == 0 &&
			 nb == 0 && v_getcpu(NULL, NULL, NULL) == 0;
	}
	check("getcpu_agrees", cpu_ok);
	c0 = linux_calls();
	int sc = sched_getcpu();
	c1 = linux_calls();
	check("libc_sched_getcpu", sc >= 0 && sc < 64);
	printf("LXTEST INFO getcpu: %s\n", c1 == c0 ? "no system call (RDTSCP)" : "system call");

	/* What one process does to its vDSO stays with it. */
	uint32_t sum = checksum((const void *)vdso_at, dso.load_size);
	int st = in_child(write_vvar);
	check("vvar_write_faults", st >= 0 && WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV);
	st = in_child(write_text);
	check("vdso_write_faults", st >= 0 && WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV);
	st = in_child(vdso_agrees);
	check("fork_child_vdso", st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 1);
	st = in_child(vandalise);
	check("child_mprotect_madvise_munmap", st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0);
	if (st >= 0 && WIFEXITED(st) && WEXITSTATUS(st))
		printf("LXTEST INFO vandalise failed steps %#x\n", WEXITSTATUS(st));
	check("parent_vdso_intact", checksum((const void *)vdso_at, dso.load_size) == sum && vdso_agrees());
	/* Our own madvise leaves it alone too (the pages are every process's). */
	check("madvise_leaves_vdso", madvise((void *)(vdso_at - 4096), 8192, MADV_DONTNEED) == 0 &&
					     checksum((const void *)vdso_at, dso.load_size) == sum && vdso_agrees());

	/* An execve'd program gets its vDSO too. */
	pid_t pid = fork();
	if (pid == 0) {
		char *argv[] = { "lxvdso", "exec-child", NULL }, *envp[] = { NULL };
		execve("/bin/lxvdso", argv, envp);
		_exit(100);
	}
	check("execve_gets_vdso", pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0);
	if (pid > 0 && WIFEXITED(st) && WEXITSTATUS(st))
		printf("LXTEST INFO exec-child exited %d\n", WEXITSTATUS(st));

	/* Cost per call (printed, not asserted: this may well be TCG). */
	enum { N = 10000 };
	double t0 = now_ns();
	for (int i = 0; i < N; i++)
		v_cgt(CLOCK_MONOTONIC, &u);
	double t1 = now_ns();
	for (int i = 0; i < N; i++)
		syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &u);
	double t2 = now_ns();
	for (int i = 0; i < N / 20; i++)
		syscall(SYS_getppid);
	double t3 = now_ns();
	printf("LXTEST INFO clock_gettime: vDSO %.0f ns/call, system call %.0f ns/call (getppid, forwarded to pm: %.0f ns/call)\n",
	       (t1 - t0) / N, (t2 - t1) / N, (t3 - t2) / (N / 20));

	printf("LXTEST DONE %d failures\n", failures);
	return failures;
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "exec-child"))
		return exec_child();
	return run_all();
}
