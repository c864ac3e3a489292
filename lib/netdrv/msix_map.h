/* Which MSI-X vector carries what, the one rule every NIC driver follows (lib/netdrv binds
 * the vectors, the driver routes its causes): with nvec vectors, queue pair q's RX and TX
 * interrupts on vector q % (nvec - 1) and the device's other causes (link, configuration
 * change, control queue) on the last one, nvec - 1; a single vector takes everything. A
 * driver asks for one vector per queue pair plus one (NETDRV_MSIX_WANT), so normally each
 * pair has its own. Pure C: drivers/ixgbe's chip table includes it on the host too. */
#pragma once
#include <stdint.h>

#define NETDRV_MSIX_WANT(npairs) ((npairs) + 1u)

static inline uint32_t netdrv_msix_qvec(uint32_t nvec, uint32_t q) { return nvec > 1 ? q % (nvec - 1) : 0; }
static inline uint32_t netdrv_msix_other(uint32_t nvec) { return nvec > 1 ? nvec - 1 : 0; }
