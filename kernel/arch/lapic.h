/* Local APIC in x2APIC mode (MSRs) when the CPU has it, else xAPIC (MMIO). */
#pragma once
#include "lib/types.h"

#define ICR_FIXED (0u << 8)
#define ICR_NMI (4u << 8)
#define ICR_INIT (5u << 8)
#define ICR_STARTUP (6u << 8)
#define ICR_ASSERT (1u << 14)
#define ICR_LEVEL (1u << 15)
#define ICR_ALL_BUT_SELF (3u << 18)

/* Picks the mode on the boot CPU; mmio_phys is the MADT's LAPIC address. */
void lapic_setup(uint64_t mmio_phys, bool allow_x2apic);
void lapic_init_cpu(void);      /* enables the LAPIC on the calling CPU */
bool lapic_ready(void);
bool lapic_x2apic_mode(void);
uint32_t lapic_id(void);
void lapic_eoi(void);
void lapic_send_ipi(uint32_t apic_id, uint32_t icr_low, uint32_t *dest);
void lapic_send_nmi_all_others(void);
/* Measures the timer rate against the PIT (boot CPU only). */
void lapic_timer_calibrate(void);
uint64_t lapic_timer_hz(void);
/* Periodic tick at hz on the calling CPU, vector VEC_TIMER; hz = 0 stops it. */
void lapic_timer_start(uint32_t hz);
