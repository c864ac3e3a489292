/* Ticket spin lock. The _irqsave variants also disable interrupts on this CPU,
 * which every lock taken from an interrupt handler needs. */
#pragma once
#include "arch/x86.h"

typedef struct {
	volatile uint32_t next;
	volatile uint32_t owner;
} spinlock_t;

#define SPINLOCK_INIT { 0, 0 }

static inline void spin_lock(spinlock_t *l)
{
	uint32_t me = __atomic_fetch_add(&l->next, 1, __ATOMIC_RELAXED);
	while (__atomic_load_n(&l->owner, __ATOMIC_ACQUIRE) != me)
		cpu_relax();
}

static inline bool spin_trylock(spinlock_t *l)
{
	uint32_t owner = __atomic_load_n(&l->owner, __ATOMIC_RELAXED);
	uint32_t expect = owner;
	return __atomic_compare_exchange_n(&l->next, &expect, owner + 1, false,
					   __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
}

static inline void spin_unlock(spinlock_t *l)
{
	__atomic_store_n(&l->owner, l->owner + 1, __ATOMIC_RELEASE);
}

static inline uint64_t spin_lock_irqsave(spinlock_t *l)
{
	uint64_t f = irq_save();
	spin_lock(l);
	return f;
}

static inline void spin_unlock_irqrestore(spinlock_t *l, uint64_t f)
{
	spin_unlock(l);
	irq_restore(f);
}
