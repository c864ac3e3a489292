/* Demand paging of lazy memory objects (demand.c). */
#pragma once
#include "lib/types.h"

struct proc;
struct trap_frame;

/* The page-table entry of p's page at va, making the page first if it belongs to a lazy
 * object's mapping with access and is not made yet; 0 if there is no page to have there.
 * Under the kernel lock. */
uint64_t demand_page(struct proc *p, uint64_t va);
/* A page fault that a lazy object's page answers: made and mapped, the access is retried
 * (true). Takes the kernel lock unless this CPU holds it. */
bool demand_fault(const struct trap_frame *f);
