/* Thin inline wrappers around x86-64 instructions. */
#pragma once
#include "lib/types.h"

static inline void outb(uint16_t port, uint8_t v) { __asm__ volatile("outb %0, %1" :: "a"(v), "Nd"(port)); }
static inline void outw(uint16_t port, uint16_t v) { __asm__ volatile("outw %0, %1" :: "a"(v), "Nd"(port)); }
static inline void outl(uint16_t port, uint32_t v) { __asm__ volatile("outl %0, %1" :: "a"(v), "Nd"(port)); }
static inline uint8_t inb(uint16_t port) { uint8_t v; __asm__ volatile("inb %1, %0" : "=a"(v) : "Nd"(port)); return v; }
static inline uint16_t inw(uint16_t port) { uint16_t v; __asm__ volatile("inw %1, %0" : "=a"(v) : "Nd"(port)); return v; }
static inline uint32_t inl(uint16_t port) { uint32_t v; __asm__ volatile("inl %1, %0" : "=a"(v) : "Nd"(port)); return v; }

static inline uint64_t rdmsr(uint32_t msr)
{
	uint32_t lo, hi;
	__asm__ volatile("rdmsr" : "=a"(lo), "=d"(hi) : "c"(msr));
	return ((uint64_t)hi << 32) | lo;
}
static inline void wrmsr(uint32_t msr, uint64_t v)
{
	__asm__ volatile("wrmsr" :: "c"(msr), "a"((uint32_t)v), "d"((uint32_t)(v >> 32)) : "memory");
}

static inline void cpuid(uint32_t leaf, uint32_t sub, uint32_t *a, uint32_t *b, uint32_t *c, uint32_t *d)
{
	__asm__ volatile("cpuid" : "=a"(*a), "=b"(*b), "=c"(*c), "=d"(*d) : "a"(leaf), "c"(sub));
}

static inline uint64_t rdtsc(void)
{
	uint32_t lo, hi;
	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
}
/* RDTSC after every earlier instruction has completed (LFENCE): a clock read never sees a
 * TSC older than what the program did before it. */
static inline uint64_t rdtsc_ordered(void)
{
	uint32_t lo, hi;
	__asm__ volatile("lfence; rdtsc" : "=a"(lo), "=d"(hi) : : "memory");
	return ((uint64_t)hi << 32) | lo;
}

#define DEFINE_CR(n) \
	static inline uint64_t read_cr##n(void) { uint64_t v; __asm__ volatile("mov %%cr" #n ", %0" : "=r"(v)); return v; } \
	static inline void write_cr##n(uint64_t v) { __asm__ volatile("mov %0, %%cr" #n :: "r"(v) : "memory"); }
DEFINE_CR(0)
DEFINE_CR(2)
DEFINE_CR(3)
DEFINE_CR(4)
#undef DEFINE_CR

static inline void invlpg(uint64_t va) { __asm__ volatile("invlpg (%0)" :: "r"(va) : "memory"); }
/* Past this many pages a TLB flush drops everything instead of one INVLPG per page (a socket
 * buffer is 141 pages, mostly never touched). */
#define TLB_FLUSH_ALL_PAGES 32
static inline void cpu_relax(void) { __asm__ volatile("pause" ::: "memory"); }
static inline void hlt(void) { __asm__ volatile("hlt" ::: "memory"); }
static inline void irq_disable(void) { __asm__ volatile("cli" ::: "memory"); }
static inline void irq_enable(void) { __asm__ volatile("sti" ::: "memory"); }
static inline uint64_t read_rflags(void) { uint64_t f; __asm__ volatile("pushfq; popq %0" : "=r"(f) :: "memory"); return f; }
static inline bool irq_enabled(void) { return read_rflags() & (1u << 9); }
static inline uint64_t irq_save(void) { uint64_t f = read_rflags(); irq_disable(); return f; }
static inline void irq_restore(uint64_t f) { if (f & (1u << 9)) irq_enable(); }
static inline uint64_t read_rbp(void) { uint64_t v; __asm__ volatile("mov %%rbp, %0" : "=r"(v)); return v; }

#define MSR_APIC_BASE 0x1b
#define MSR_EFER 0xc0000080
#define MSR_FS_BASE 0xc0000100
#define MSR_GS_BASE 0xc0000101
#define MSR_KERNEL_GS_BASE 0xc0000102
#define MSR_TSC_AUX 0xc0000103
#define EFER_NXE (1u << 11)

#define CR0_WP (1u << 16)
#define CR4_PGE (1u << 7)
#define CR4_OSFXSR (1u << 9)
#define CR4_PCIDE (1u << 17)
