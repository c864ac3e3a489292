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
#include "keep.h"

/* The whole table is kept with lwIP's state (adopt.c): bump the version when a kept
 * variable's layout changes (a live update between two layouts is refused). */
#define TCP_KEEP_MAGIC 0x5043545f5841ull /* "AX_TCP" */
#ifndef TCP_STATE_VERSION
#define TCP_STATE_VERSION 3 /* 2: xport_kept.tx_ip; 3: ts_sock.oow_ack_at */
#endif
AX_KEPT struct ts_state ts;

static const struct xport_ops ops = {
	.name = "tcp", .poolid_kind = POOLID_TCP, .heap_bytes = MEM_SIZE,
	.rx = ts_rx, .rx_flush = ts_rx_flush, .icmp = ts_icmp, .sys_poll = ts_sys_poll, .tx_poll = ts_tx_poll,
	.flush_events = ts_flush_events, .gc = ts_gc, .counters = ts_counters, .sock_line = ts_sock_line,
	.act_eng = AXE_TCP, .lib_work = ts_lib_work, .ip_restarted = ts_ip_restarted,
	.quiesce = ts_quiesce,
};

int main(int argc, char **argv)
{
	ax_svc_init(argc, argv);
	/* A live update's new instance (or the old binary after a rollback) takes the state its
	 * predecessor left at rest; after a crash, a kill or a hang we start afresh. */
	bool adopted = ax_keep_image(TCP_KEEP_MAGIC, TCP_STATE_VERSION, AXK_AT_REST);
	if (adopted) {
		xport_claim();
		ts_adopt_claim();
	}
	if (ax_svc.restarts) { /* what the predecessor held and we do not take goes */
		int grants = ax_keep_sweep_grants(), made = ax_keep_sweep();
		ax_printf("tcp: let go of %d of the last instance's objects and %d of its grants\n", made, grants);
	}
	if (xport_start(argc, argv, &ops, adopted) < 0)
		return 1;
	if (adopted && !ts_adopt())
		ax_exit(ax_svc.update ? 3 : 1); /* refused: rs brings the old binary back, which adopts */
	/* Listeners listen again before syscall hears SK_HELLO: SYNs are accepted at once. */
	if (!adopted && ax_svc.restarts)
		ts_restore();
	ts_keep_fns();
	ax_keep_at_rest(false);
	return xport_run();
}
