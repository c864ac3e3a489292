#include "axrt.h"
#include "lx_abi.h"
#include <axolotl/vvar.h>

__attribute__((noreturn)) void ax_exit(int status)
{
	kcall1(KC_EXIT, (uint64_t)(int64_t)status);
	for (;;)
		__asm__ volatile("ud2");
}

int ax_write(const char *s, size_t n) { return (int)kcall2(KC_DEBUG_WRITE, (uint64_t)s, n); }

int ax_vprintf(const char *fmt, va_list ap)
{
	char buf[512];
	int n = kvsnprintf(buf, sizeof(buf), fmt, ap);
	if (n < 0)
		return n;
	if (n > (int)sizeof(buf) - 1)
		n = sizeof(buf) - 1;
	return ax_write(buf, (size_t)n);
}

int ax_printf(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = ax_vprintf(fmt, ap);
	va_end(ap);
	return n;
}

void ax_out_flush(struct ax_outbuf *o)
{
	if (o->len)
		ax_write(o->buf, o->len);
	o->len = 0;
}

void ax_out_put(struct ax_outbuf *o, const char *s, size_t n)
{
	while (n) {
		if (o->len == o->cap)
			ax_out_flush(o);
		size_t k = n < o->cap - o->len ? n : o->cap - o->len;
		memcpy(o->buf + o->len, s, k);
		o->len += k, s += k, n -= k;
	}
}

uint64_t ax_atou(const char *s)
{
	uint64_t v = 0;
	while (s && *s >= '0' && *s <= '9')
		v = v * 10 + (uint64_t)(*s++ - '0');
	return v;
}

bool ax_can_vcopy(void)
{
	char a = 1, b = 0;
	return ax_vcopy(EP_NONE, &a, EP_NONE, &b, 1) == 1 && b == 1;
}

int ax_strpad(void *field, size_t cap, const char *s)
{
	size_t n = s ? strlen(s) : 0;
	if (!n || n >= cap)
		return -KE_INVAL;
	memset(field, 0, cap);
	memcpy(field, s, n);
	return 0;
}

int ax_find_module(const char *name)
{
	struct kc_module_info mi;
	for (uint32_t i = 0; ax_module_info(i, &mi) == 0; i++) {
		const char *base = mi.name;
		for (const char *p = mi.name; *p && *p != ' '; p++)
			if (*p == '/')
				base = p + 1;
		size_t n = strlen(name);
		if (!strncmp(base, name, n) && (base[n] == ' ' || base[n] == 0))
			return (int)i;
	}
	return -1;
}

int64_t ax_spawn_named(const char *name, const char *args, uint32_t cpu, uint32_t prio)
{
	int idx = ax_find_module(name);
	if (idx < 0)
		return -KE_SRCH;
	struct kc_spawn s = { (uint32_t)idx, cpu, prio, 0, args };
	return ax_spawn(&s);
}

static const struct vvar *vvar_page; /* NULL until the first call maps it */
static bool no_vvar;                  /* the kernel has none to give */
static bool clock_by_kcall;           /* no page, or its clock is not the TSC */

static const struct vvar *vvar(void)
{
	if (!vvar_page && !no_vvar) {
		int64_t va = kcall2(KC_INFO, KI_VVAR, 0);
		if (va > 0 && ((const struct vvar *)va)->flags)
			vvar_page = (const struct vvar *)va;
		else
			no_vvar = true;
		clock_by_kcall = !vvar_page || !(vvar_page->flags & VVAR_CLOCK_TSC);
	}
	return vvar_page;
}

uint64_t ax_thread_deaths(void)
{
	static uint64_t fake;
	const struct vvar *v = vvar();
	return v ? __atomic_load_n(&v->thread_deaths, __ATOMIC_ACQUIRE) : ~fake++; /* never twice the same */
}

uint64_t ax_time_ns(void)
{
	const struct vvar *clock_page = vvar();
	if (clock_by_kcall)
		return (uint64_t)kcall0(KC_TIME);
	uint32_t lo, hi;
	__asm__ volatile("lfence; rdtsc" : "=a"(lo), "=d"(hi) : : "memory");
	return vclock_tsc_to_ns((uint64_t)hi << 32 | lo, clock_page->tsc_boot, clock_page->mult, clock_page->shift);
}

uint64_t ax_wall_ns(void)
{
	const struct vvar *v = vvar();
	if (!clock_by_kcall) /* the vDSO's arithmetic: the wall clock at boot plus the time since */
		return __atomic_load_n(&v->epoch_ns, __ATOMIC_RELAXED) + ax_time_ns();
	int64_t ts[2] = { 0, 0 }, r; /* Linux's clock_gettime(LX_CLOCK_REALTIME) */
	__asm__ volatile("syscall" : "=a"(r) : "a"(228ull), "D"(0ull), "S"(ts) : "rcx", "r11", "memory");
	return r == 0 ? (uint64_t)ts[0] * 1000000000ull + (uint64_t)ts[1] : 0;
}
