/* Axolotl native runtime for servers and test programs: kernel-call wrappers, messages,
 * console output. Freestanding: no libc. */
#pragma once
#include <stdarg.h>
#include "lx_abi.h"
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <axolotl/kcall.h>

static inline int64_t kcall6(uint32_t n, uint64_t a0, uint64_t a1, uint64_t a2, uint64_t a3,
			     uint64_t a4, uint64_t a5)
{
	int64_t r;
	register uint64_t r10 __asm__("r10") = a3;
	register uint64_t r8 __asm__("r8") = a4;
	register uint64_t r9 __asm__("r9") = a5;
	__asm__ volatile("syscall"
			 : "=a"(r)
			 : "a"((uint64_t)KC_NR(n)), "D"(a0), "S"(a1), "d"(a2), "r"(r10), "r"(r8), "r"(r9)
			 : "rcx", "r11", "memory");
	return r;
}
/* KC_TEXT: a child's text read, patched, or where it was seen running (KT_*). */
static inline int64_t ax_text(endpoint_t ep, uint64_t op, uint64_t va, void *buf, uint64_t len)
{
	return kcall6(KC_TEXT, ep, op, va, (uint64_t)buf, len, 0);
}
static inline int64_t kcall2(uint32_t n, uint64_t a0, uint64_t a1) { return kcall6(n, a0, a1, 0, 0, 0, 0); }
static inline int64_t kcall1(uint32_t n, uint64_t a0) { return kcall6(n, a0, 0, 0, 0, 0, 0); }
static inline int64_t kcall0(uint32_t n) { return kcall6(n, 0, 0, 0, 0, 0, 0); }
/* KC_LEGACY: a child's handles kept past its end for its next incarnation (LEG_*). */
static inline int64_t ax_legacy(uint32_t op, endpoint_t a, endpoint_t b) { return kcall6(KC_LEGACY, op, a, b, 0, 0, 0); }
/* KC_ALIVE: the root arms its watchdog, and beats, with a timeout (0 disarms). */
static inline int64_t ax_alive(uint32_t timeout_ms) { return kcall1(KC_ALIVE, timeout_ms); }

__attribute__((noreturn)) void ax_exit(int status);
static inline endpoint_t ax_self(void) { return (endpoint_t)kcall0(KC_SELF); }
static inline int64_t ax_yield(void) { return kcall0(KC_YIELD); }
/* Nanoseconds since boot: read from the TSC with the kernel's own numbers (the vvar page,
 * mapped at the first call), so no kernel call; KC_TIME where the clock is not the TSC. */
uint64_t ax_time_ns(void);
/* The wall clock (LX_CLOCK_REALTIME), ns since 1970, the same way: no kernel call where the
 * clock is the TSC (Linux's clock_gettime otherwise; 0 if that fails). */
uint64_t ax_wall_ns(void);
/* Threads ended since boot (the vvar page's thread_deaths): a thread found alive when it was
 * N is alive while it is still N. Without the page, a new number at every call. */
uint64_t ax_thread_deaths(void);
static inline uint32_t ax_cpu(void) { return (uint32_t)kcall0(KC_CPU); }
static inline int64_t ax_send(endpoint_t d, const struct kmsg *m) { return kcall2(KC_SEND, d, (uint64_t)m); }
static inline int64_t ax_sendnb(endpoint_t d, const struct kmsg *m) { return kcall2(KC_SENDNB, d, (uint64_t)m); }
static inline int64_t ax_receive(endpoint_t s, struct kmsg *m) { return kcall2(KC_RECEIVE, s, (uint64_t)m); }
static inline int64_t ax_call(endpoint_t d, struct kmsg *m) { return kcall2(KC_CALL, d, (uint64_t)m); }
static inline int64_t ax_reply(endpoint_t d, const struct kmsg *m) { return kcall2(KC_REPLY, d, (uint64_t)m); }
static inline int64_t ax_notify(endpoint_t d, uint64_t bits) { return kcall2(KC_NOTIFY, d, bits); }
/* Adds add to the wake word of Linux process proc (its kernel id) and wakes its waiters. */
static inline int64_t ax_wake_ring(endpoint_t proc, uint32_t add) { return kcall6(KC_WAKE, WK_RING, proc, add, 0, 0, 0); }
static inline int64_t ax_kill(endpoint_t ep) { return kcall1(KC_KILL, ep); }
static inline int64_t ax_module_info(uint32_t i, struct kc_module_info *o) { return kcall2(KC_MODULE_INFO, i, (uint64_t)o); }
static inline int64_t ax_spawn(const struct kc_spawn *s) { return kcall1(KC_SPAWN, (uint64_t)s); }
/* Memory objects and waiting (docs/kernel-api.md). */
static inline int64_t ax_mo_create(uint64_t npages, uint64_t flags) { return kcall2(KC_MO_CREATE, npages, flags); }
static inline int64_t ax_mo_map(int64_t h, uint64_t va, uint64_t first, uint64_t npages, uint64_t prot)
{
	return kcall6(KC_MO_MAP, (uint64_t)h, va, first, npages, prot, 0);
}
static inline int64_t ax_mo_unmap(uint64_t va) { return kcall1(KC_MO_UNMAP, va); }
static inline int64_t ax_mo_grant(int64_t h, endpoint_t to, uint64_t rights) { return kcall6(KC_MO_GRANT, (uint64_t)h, to, rights, 0, 0, 0); }
static inline int64_t ax_mo_revoke(endpoint_t from, int64_t h) { return kcall2(KC_MO_REVOKE, from, (uint64_t)h); }
static inline int64_t ax_mo_destroy(int64_t h) { return kcall1(KC_MO_DESTROY, (uint64_t)h); }
static inline int64_t ax_vcopy(endpoint_t src, const void *s, endpoint_t dst, void *d, uint64_t len)
{
	return kcall6(KC_VCOPY, src, (uint64_t)s, dst, (uint64_t)d, len, 0);
}
static inline int64_t ax_wait(const volatile uint64_t *doorbell, uint64_t seen) { return kcall2(KC_WAIT, (uint64_t)doorbell, seen); }
/* The same with a timeout (0 = none); returns 0 when it passed. */
static inline int64_t ax_wait_timeout(const volatile uint64_t *doorbell, uint64_t seen, uint64_t ns)
{
	return kcall6(KC_WAIT, (uint64_t)doorbell, seen, ns, 0, 0, 0);
}
static inline int64_t ax_sched(endpoint_t ep, uint32_t cpu, uint64_t flags) { return kcall6(KC_SCHED, ep, cpu, flags, 0, 0, 0); }

__attribute__((noreturn)) static inline void ax_poweroff(uint32_t status)
{
	kcall1(KC_POWEROFF, status);
	for (;;)
		ax_yield();
}

static inline uint64_t ax_rdtsc(void)
{
	uint32_t lo, hi;
	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
}

/* Console output through KC_DEBUG_WRITE; one call per formatted line stays unbroken. */
int ax_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int ax_vprintf(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));
int ax_write(const char *s, size_t n);
/* Console output gathered in a buffer and written in one piece (so it is not interleaved
 * with other output): put appends, writing out first when the buffer is full; flush writes
 * what is gathered. */
struct ax_outbuf {
	char *buf;
	size_t cap, len;
};
void ax_out_put(struct ax_outbuf *o, const char *s, size_t n);
void ax_out_flush(struct ax_outbuf *o);
/* Whether this process may use KC_VCOPY (servers that serve Linux calls need it). */
bool ax_can_vcopy(void);
/* The decimal number at the start of s (0 if none, or s is NULL): argument parsing. */
uint64_t ax_atou(const char *s);
/* Copies s NUL-padded into a fixed field of cap bytes (a name in a message); -KE_INVAL if s
 * is empty or does not fit with its terminating NUL. */
int ax_strpad(void *field, size_t cap, const char *s);
/* Index of the boot module whose name (first word of its command line, path stripped) is
 * name, or -1. */
int ax_find_module(const char *name);
/* Spawns the named boot module with args; returns its endpoint or a negative error. */
int64_t ax_spawn_named(const char *name, const char *args, uint32_t cpu, uint32_t prio);

/* From the kernel's pure library, shared rather than written twice. */
int ksnprintf(char *buf, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int kvsnprintf(char *buf, size_t n, const char *fmt, va_list ap);
void *memcpy(void *dst, const void *src, size_t n);
void *memset(void *dst, int c, size_t n);
void *memmove(void *dst, const void *src, size_t n);
int memcmp(const void *a, const void *b, size_t n);
size_t strlen(const char *s);
int strcmp(const char *a, const char *b);
int strncmp(const char *a, const char *b, size_t n);
