/* The vDSO: user code the kernel maps into every Linux process (kernel/linux/vdso.c) so that
 * the C library reads the clocks without a system call. musl and glibc find these functions
 * through AT_SYSINFO_EHDR by name and version (LINUX_2.6, vdso.map), as on Linux.
 *
 * The wall and monotonic clocks are the TSC scaled with the numbers in the vvar page, the
 * page just below this image (vdso.lds), with the kernel's own arithmetic (vvar.h); the
 * CPU-time clocks, unknown clock ids, and everything when the page says the TSC is not to be
 * used, are the real system call. Results are Linux's: 0 or -errno. A bad pointer faults in
 * the caller (SIGSEGV), as with Linux's vDSO, instead of giving EFAULT.
 *
 * Built freestanding and position-independent (-fPIC -shared -nostdlib), integer only, with
 * everything hidden but the exported functions, so the image needs no relocation: the
 * kernel maps the file as it is (kernel/vdso/check.sh proves it at build time). */
#include <axolotl/vvar.h>
#include "lx_abi.h"

#define EXPORT __attribute__((visibility("default")))

struct vts {
	int64_t sec, nsec;
};
struct vtv {
	int64_t sec, usec;
};
struct vtz {
	int32_t minuteswest, dsttime;
};

/* The kernel's page; the linker script puts the symbol one page below the image. */
extern const struct vvar vvar_page __attribute__((visibility("hidden")));

/* The page never changes once a process can see it (vvar.h): plain reads, no sequence. */
static inline const struct vvar *vvar(void) { return &vvar_page; }

static inline uint64_t tsc_ordered(void)
{
	uint32_t lo, hi;
	__asm__ volatile("lfence; rdtsc" : "=a"(lo), "=d"(hi) : : "memory");
	return ((uint64_t)hi << 32) | lo;
}

static inline long sys3(long nr, long a, long b, long c)
{
	long r;
	__asm__ volatile("syscall" : "=a"(r) : "a"(nr), "D"(a), "S"(b), "d"(c) : "rcx", "r11", "memory");
	return r;
}

static void split_ns(uint64_t ns, struct vts *ts)
{
	ts->sec = (int64_t)(ns / VNS_PER_S);
	ts->nsec = (int64_t)(ns % VNS_PER_S);
}

static int do_clock_gettime(int clk, struct vts *ts)
{
	uint64_t ns;
	if (!vvar_clock_ns(vvar(), clk, tsc_ordered(), &ns))
		return (int)sys3(LX_SYS_clock_gettime, clk, (long)ts, 0);
	split_ns(ns, ts);
	return 0;
}

static int do_clock_getres(int clk, struct vts *res)
{
	uint64_t ns;
	if (!vvar_clock_res(vvar(), clk, &ns))
		return (int)sys3(LX_SYS_clock_getres, clk, (long)res, 0);
	if (res)
		split_ns(ns, res);
	return 0;
}

static int do_gettimeofday(struct vtv *tv, struct vtz *tz)
{
	uint64_t ns;
	if (!vvar_clock_ns(vvar(), VCLOCK_REALTIME, tsc_ordered(), &ns))
		return (int)sys3(LX_SYS_gettimeofday, (long)tv, (long)tz, 0);
	if (tv) {
		tv->sec = (int64_t)(ns / VNS_PER_S);
		tv->usec = (int64_t)(ns % VNS_PER_S / 1000);
	}
	if (tz) /* the kernel keeps no time zone: zero, as its gettimeofday says */
		tz->minuteswest = tz->dsttime = 0;
	return 0;
}

static int64_t do_time(int64_t *tloc)
{
	uint64_t ns;
	if (!vvar_clock_ns(vvar(), VCLOCK_REALTIME, tsc_ordered(), &ns))
		return sys3(LX_SYS_time, (long)tloc, 0, 0);
	int64_t s = (int64_t)(ns / VNS_PER_S);
	if (tloc)
		*tloc = s;
	return s;
}

static int do_getcpu(unsigned *cpu, unsigned *node, void *cache)
{
	if (!(vvar()->flags & VVAR_GETCPU_RDTSCP))
		return (int)sys3(LX_SYS_getcpu, (long)cpu, (long)node, (long)cache);
	uint32_t lo, hi, aux;
	__asm__ volatile("rdtscp" : "=a"(lo), "=d"(hi), "=c"(aux));
	if (cpu)
		*cpu = aux & 0xfff;
	if (node)
		*node = aux >> 12;
	return 0;
}

/* The exported names: __vdso_* as musl and glibc look them up, and the plain names as weak
 * aliases (Linux exports both). */
EXPORT int __vdso_clock_gettime(int clk, struct vts *ts) { return do_clock_gettime(clk, ts); }
EXPORT int __vdso_clock_getres(int clk, struct vts *res) { return do_clock_getres(clk, res); }
EXPORT int __vdso_gettimeofday(struct vtv *tv, struct vtz *tz) { return do_gettimeofday(tv, tz); }
EXPORT int64_t __vdso_time(int64_t *tloc) { return do_time(tloc); }
EXPORT int __vdso_getcpu(unsigned *cpu, unsigned *node, void *cache) { return do_getcpu(cpu, node, cache); }

EXPORT int clock_gettime(int, struct vts *) __attribute__((weak, alias("__vdso_clock_gettime")));
EXPORT int clock_getres(int, struct vts *) __attribute__((weak, alias("__vdso_clock_getres")));
EXPORT int gettimeofday(struct vtv *, struct vtz *) __attribute__((weak, alias("__vdso_gettimeofday")));
EXPORT int64_t time(int64_t *) __attribute__((weak, alias("__vdso_time")));
EXPORT int getcpu(unsigned *, unsigned *, void *) __attribute__((weak, alias("__vdso_getcpu")));
