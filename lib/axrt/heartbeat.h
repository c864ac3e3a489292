/* Heartbeats for rs: a service started with `hb=HANDLE` bumps a counter in a page rs gave it
 * each time its event loop turns; rs pings idle services with AX_PING_BIT (a notification,
 * which wakes the loop) and declares a service hung when the counter stops moving. */
#pragma once
#include "axrt.h"

#define AX_PING_BIT (1ull << 63)

extern volatile uint64_t *ax_hb;
extern int64_t ax_hb_handle; /* its handle (hb=), 0 without */

/* Maps the heartbeat page named by an `hb=HANDLE` argument, if there is one. */
void ax_heartbeat_init(int argc, char **argv);
static inline void ax_heartbeat(void)
{
	if (ax_hb)
		(*ax_hb)++;
}
