/* udp: lwIP's UDP engine in a process of its own (README.md). Sockets come from syscall
 * (syscall/udp.req, answers and events on syscall/udp.ev); packets from and to ip (ip/udp.in,
 * udp/out) as rich pointers into ip's pools and our DMA send pool; data to and from
 * applications through each socket's buffer object. The ip and syscall side and the event
 * loop are lib/lwip/xport.c (shared with tcp).
 *   udp [drv=DRIVER]... [restarted=N] [hb=H]   (drivers to export the send pool to; e1000) */
#include "udp.h"
#include "lwipopts.h"
#include "service.h"
#include "netdev_proto.h"
#include "sock_ax.h"

struct us_state us;

static const struct xport_ops ops = {
	.name = "udp", .poolid_kind = POOLID_UDP, .heap_bytes = MEM_SIZE,
	.rx = us_rx, .icmp = us_icmp, .sys_poll = us_sys_poll, .tx_poll = us_tx_poll,
	.flush_events = us_flush_events, .gc = us_sock_gc, .counters = us_counters, .sock_line = us_sock_line,
	.act_eng = AXE_UDP, .lib_work = us_lib_work, .restartable = true,
};

int main(int argc, char **argv)
{
	ax_svc_init(argc, argv);
	if (xport_start(argc, argv, &ops, false) < 0)
		return 1;
	if (ax_svc.restarts)
		us_sock_restore();
	return xport_run();
}
