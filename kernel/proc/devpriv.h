/* Device privileges of a process: I/O ports, IRQ lines, MMIO ranges, PCI functions, DMA.
 * Given by the process that starts it (KC_PRIV); the first process holds them all.
 * See docs/devices.md. */
#pragma once
#include "lib/types.h"

#define DEV_MAX_MMIO 16
#define DEV_MAX_PCI 16

struct devpriv {
	uint8_t *io_allowed;  /* 8 KiB bitmap, bit set = port allowed; NULL = no ports */
	uint64_t io_serial;   /* new value whenever io_allowed changes: the per-CPU TSS cache key */
	uint16_t irqs;        /* bit per ISA IRQ line */
	bool all;             /* the first process: every port, IRQ, PCI function, non-RAM range */
	bool dma;
	uint32_t nmmio, npci;
	struct { uint64_t pa, npages; } mmio[DEV_MAX_MMIO];
	uint32_t pci[DEV_MAX_PCI]; /* bus<<8 | dev<<3 | fn, or KPCI_ALL */
};

struct thread;
struct proc;
/* The device kernel calls: KC_PRIV, KC_IRQ_BIND, KC_IRQ_UNMASK, KC_MMIO_MAP, KC_PCI_CFG,
 * KC_MSI_BIND. */
int64_t devpriv_call(struct thread *me, uint32_t n, const uint64_t a[6]);
/* Gives p every privilege (the first process). */
void devpriv_grant_all(struct proc *p);
/* Releases what p holds (IRQ and MSI bindings, the port bitmap); at process exit. */
void devpriv_release(struct proc *p);
/* Loads next's I/O permission bitmap into this CPU's TSS on a context switch (NULL: the
 * idle thread). Called by schedule() with the kernel lock held. */
void devpriv_switch(struct proc *next);

/* IRQ lines (proc/devirq.c). */
int64_t devirq_bind(struct thread *me, uint64_t irq, uint64_t bits, uint64_t flags);
int64_t devirq_unmask(struct thread *me, uint64_t irq);
/* KI_IRQ_MASKED for rs (kcall.h). */
int64_t devirq_masked(uint64_t irq);
void devirq_release(struct proc *p);

/* Message-signalled interrupts (proc/msi.c): KC_MSI_BIND, the release at exit. */
int64_t msi_bind(struct thread *me, uint64_t bdf, uint64_t nvec, uint64_t ubits, uint64_t uout);
void msi_release(struct proc *p);
void msi_install_handlers(void);
uint64_t msi_strays(void); /* messages that found no live binder (self-test) */
/* Does p hold PCI function bdf (KPRIV_PCI, KPCI_ALL or dev.all)? */
bool devpriv_pci_held(const struct proc *p, uint32_t bdf);
