/* boot/system.conf: which services rs starts, where, and with which privileges.
 * Portable C (host unit tests, and rs in Axolotl). Format: see lib/sysconf/README.md. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SVC_MAX_PORTS 8
#define SVC_MAX_PCI 8
#define SVC_MAX_MMIO 4
#define SVC_MAX_PCI_IDS 8
#define SVC_CPU_ANY (-1)

enum svc_restart { SVC_RESTART_ALWAYS, SVC_RESTART_ON_FAILURE, SVC_RESTART_NEVER };

struct svc_conf {
	char name[24];    /* service name, also its name in ds */
	char binary[32];  /* boot module to run (default: the name) */
	char args[128];   /* argument string */
	int32_t cpu;      /* CPU index, or SVC_CPU_ANY */
	bool dedicated;   /* the CPU runs this service alone (needs cpu=) */
	uint8_t priority; /* 0 (highest) .. 7, default 2 */
	uint8_t nports, npci, nmmio;
	struct { uint16_t lo, hi; } ports[SVC_MAX_PORTS]; /* inclusive ranges */
	uint16_t irqs;    /* bit per ISA IRQ line */
	bool pci_all;
	uint32_t pci[SVC_MAX_PCI]; /* bus << 8 | dev << 3 | fn */
	/* pci=VVVV:DDDD[#n],...: the n-th function (from 0) with that id; several ids are
	 * alternatives ("any of"): rs gives the service the first of them present, with its BARs
	 * and interrupt line (servers/rs/README.md). */
	uint8_t npci_ids;
	struct { uint16_t vendor, device; uint8_t index; } pci_ids[SVC_MAX_PCI_IDS];
	/* A bad id in the list: the service is parsed but never started (rs logs this, with the
	 * line); the rest of the file stands. "" when the ids are good. */
	char pci_error[80];
	int pci_error_line;
	struct { uint64_t pa, pages; } mmio[SVC_MAX_MMIO];
	bool dma;
	bool control;     /* may use rs's control calls (the service command) */
	bool keep;        /* its memory-object handles are kept for its next incarnation (KC_LEGACY) */
	bool optional;    /* a device it drives (pci=VVVV:DDDD) may be missing: then it is absent, no error */
	uint64_t kcalls;  /* privileged kernel calls given on top of the defaults (SVC_KC_*) */
	enum svc_restart restart;
	uint32_t heartbeat_ms; /* 0: no heartbeat checks */
	uint32_t backoff_ms;   /* first restart delay, doubled per quick crash */
};

#define SVC_KC_VCOPY 1u
#define SVC_KC_POWEROFF 2u

struct sysconf_error {
	int line;          /* 1-based line of the first error */
	char msg[96];
};

/* Parses text (len bytes, need not be NUL-terminated) into at most max services. Returns the
 * number of services, or -1 with *err describing the first bad line; nothing is half-read. */
int sysconf_parse(const char *text, size_t len, struct svc_conf *out, int max, struct sysconf_error *err);
