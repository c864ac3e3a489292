/* tcp: lwIP's TCP engine in a process of its own (README.md). Sockets come from syscall
 * (syscall/tcp.req, answers and events on syscall/tcp.ev); segments from and to ip
 * (ip/tcp.in, tcp/out) as rich pointers into ip's pools and our DMA send pool; the byte
 * streams to and from applications through each socket's buffer object. The ip and syscall
 * side and the event loop are lib/lwip/xport.c (shared with udp).
 *   tcp [drv=DRIVER]... [restarted=N] [hb=H]   (drivers to export the send pool to; e1000) */
#include "tcp.h"
#include "lwipopts.h"
#include "service.h"
#include "netdev_proto.h"
#include "sock_ax.h"

struct ts_state ts;

static const struct xport_ops ops = {
	.name = "tcp", .poolid_kind = POOLID_TCP, .heap_bytes = MEM_SIZE,
	.rx = ts_rx, .icmp = ts_icmp, .sys_poll = ts_sys_poll, .tx_poll = ts_tx_poll,
	.flush_events = ts_flush_events, .gc = ts_gc, .netq = ts_netq,
	.act_eng = AXE_TCP, .lib_work = ts_lib_work, .ip_restarted = ts_ip_restarted,
};

int main(int argc, char **argv)
{
	ax_svc_init(argc, argv);
	if (xport_start(argc, argv, &ops) < 0)
		return 1;
	/* Listeners listen again before syscall hears SK_HELLO: SYNs are accepted at once. */
	if (ax_svc.restarts)
		ts_restore();
	return xport_run();
}
