/* KC_TEXT: a parent reads and patches its child's private text, and reads where the child
 * was seen running. It is the mechanism of code-mutating fault injection (rs, lib/swifi):
 * which instruction and how is rs's policy; the kernel only checks that the bytes are the
 * child's own (no other process or the next incarnation maps them: every image is loaded
 * into objects of its own, proc/exec.c) and that CPUs running the child see the new code. */
#include "proc/text.h"
#include "proc/proc.h"
#include "proc/memobj.h"
#include "mm/aspace.h"
#include "mm/vmm.h"
#include "lib/string.h"
#include "smp/ipi.h"
#include <axolotl/kcall.h>

void text_sample(struct proc *p, uint64_t rip)
{
	p->rip_samples[p->rip_seen++ % TEXT_SAMPLES] = rip;
}

/* The executable mapping of p that holds [va, va + n), or NULL. */
static struct mapping *text_map(struct proc *p, uint64_t va, uint64_t n)
{
	for (uint32_t i = 0; i < p->nmaps; i++) {
		struct mapping *m = &p->maps[i];
		if (m->mo && !m->sys && !m->shared && (m->prot & PROT_X) && va >= m->va &&
		    n <= m->npages * PAGE_SIZE && va - m->va <= m->npages * PAGE_SIZE - n)
			return m;
	}
	return NULL;
}

/* Whether every reference to mo is a mapping of p (no handle, no other process). */
static bool private_to(const struct proc *p, const struct memobj *mo)
{
	uint32_t mine = 0;
	for (uint32_t i = 0; i < p->nmaps; i++)
		mine += p->maps[i].mo == mo;
	return mo->refs == mine;
}

/* The kernel's view of the child's byte at va inside m, or NULL if its page was never made. */
static uint8_t *text_byte(const struct mapping *m, uint64_t va)
{
	uint64_t pg = m->first_page + (va - m->va) / PAGE_SIZE;
	uint64_t frame = m->mo->frames[pg];
	return frame ? (uint8_t *)phys_to_virt(frame) + (va & (PAGE_SIZE - 1)) : NULL;
}

/* An interrupt and its IRET: a CPU running the child serializes before its next instruction
 * (the SDM's cross-modifying code rule). */
static void serialize(void *arg) { (void)arg; }

/* Through a small buffer on the stack, a chunk at a time (a write is one chunk: it is
 * copied in whole before any byte of the text changes). */
static int64_t text_rw(struct proc *p, bool write, uint64_t va, uint64_t ubuf, uint64_t len)
{
	if (!len || len > (write ? TEXT_PATCH_MAX : TEXT_READ_MAX))
		return -KE_INVAL;
	struct mapping *m = text_map(p, va, len);
	if (!m)
		return -KE_FAULT;
	if (write && !private_to(p, m->mo))
		return -KE_BUSY;
	uint8_t buf[64];
	_Static_assert(sizeof(buf) >= TEXT_PATCH_MAX, "a patch is one chunk");
	for (uint64_t done = 0; done < len;) {
		uint64_t n = MIN(len - done, (uint64_t)sizeof(buf));
		if (write && copy_from_user(buf, (const void *)(ubuf + done), n))
			return -KE_FAULT;
		for (uint64_t i = 0; i < n; i++) {
			uint8_t *b = text_byte(m, va + done + i);
			if (!b)
				return -KE_FAULT;
			if (write)
				*b = buf[i];
			else
				buf[i] = *b;
		}
		if (!write && copy_to_user((void *)(ubuf + done), buf, n))
			return -KE_FAULT;
		done += n;
	}
	if (write)
		smp_call_loaded(p->as->cr3, serialize, NULL);
	return (int64_t)len;
}

/* The newest samples first, at most len / 8; returns how many were copied. */
static int64_t text_samples(const struct proc *p, uint64_t ubuf, uint64_t len)
{
	uint64_t n = MIN(len / 8, MIN(p->rip_seen, (uint64_t)TEXT_SAMPLES));
	uint64_t out[TEXT_SAMPLES];
	for (uint64_t i = 0; i < n; i++)
		out[i] = p->rip_samples[(p->rip_seen - 1 - i) % TEXT_SAMPLES];
	if (n && copy_to_user((void *)ubuf, out, n * 8))
		return -KE_FAULT;
	return (int64_t)n;
}

int64_t kc_text(struct thread *me, endpoint_t ep, uint64_t op, uint64_t va, uint64_t ubuf, uint64_t len)
{
	struct thread *t = ep_lookup(ep);
	if (!t)
		return -KE_DEADSRCDST;
	struct proc *p = t->proc;
	if (p->parent != thread_ep(me) || p == me->proc)
		return -KE_PERM;
	switch (op) {
	case KT_READ:
		return text_rw(p, false, va, ubuf, len);
	case KT_WRITE:
		return text_rw(p, true, va, ubuf, len);
	case KT_SAMPLES:
		return text_samples(p, ubuf, len);
	}
	return -KE_INVAL;
}
