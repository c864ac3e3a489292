#include "heartbeat.h"

volatile uint64_t *ax_hb;
int64_t ax_hb_handle;

void ax_heartbeat_init(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (strncmp(argv[i], "hb=", 3))
			continue;
		int64_t h = (int64_t)ax_atou(argv[i] + 3), va = ax_mo_map(h, 0, 0, 1, KP_R | KP_W);
		if (va > 0)
			ax_hb = (volatile uint64_t *)va, ax_hb_handle = h;
	}
}
