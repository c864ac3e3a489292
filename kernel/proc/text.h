/* KC_TEXT (proc/text.c): a parent's access to its child's text, for fault injection. */
#pragma once
#include <stdint.h>
#include <axolotl/kcall.h>

struct proc;
struct thread;

/* Records that p was seen running at rip (an interrupt or kernel call from user mode). */
void text_sample(struct proc *p, uint64_t rip);
int64_t kc_text(struct thread *me, endpoint_t ep, uint64_t op, uint64_t va, uint64_t ubuf, uint64_t len);
