/* udp: lwIP's UDP engine in a process of its own (README.md). Sockets come from syscall
 * (syscall/udp.req, answers and events on syscall/udp.ev); packets from and to ip (ip/udp.in,
 * udp/out) as rich pointers into ip's pools and our DMA send pool; data to and from
 * applications through each socket's buffer object.
 *   udp [drv=DRIVER]... [restarted=N] [hb=H]   (drivers to export the send pool to; e1000) */
#include "udp.h"
#include "lwipopts.h"
#include "ds_client.h"
#include "ds_proto.h"
#include "service.h"
#include "netq_proto.h"
#include "netdev_proto.h"

struct us_state us;

#define POOL_BYTES (POOL_HDR_SIZE + MEM_SIZE + 4096)
#define ATTACH_RETRY_NS 100000000ull

static uint32_t export_owner(const char *label, const char *key)
{
	uint32_t v[6] = { 0 }, len = sizeof(v);
	return dsc_get(label, key, v, &len) == 0 && len >= 8 ? v[1] : 0;
}

static void ip_detach(void)
{
	chan_unimport(&us.in_imp);
	chan_unimport(&us.rx_imp);
	chan_unimport(&us.heap_imp);
	us.ip_ok = false;
	us.ip_owner = 0;
}

static void sys_detach(void)
{
	chan_unimport(&us.req_imp);
	chan_unimport(&us.ev_imp);
	us.sys_ok = false;
	us.sys_owner = 0;
}

/* ip's channel and pools; then IPX_HELLO (ip answers with IPX_IFACE). */
static void ip_attach(void)
{
	ip_detach();
	if (chan_import("ip", "udp.in", &us.in_imp) < 0 || chan_import("ip", "rx.udp", &us.rx_imp) < 0 ||
	    chan_import("ip", "heap.udp", &us.heap_imp) < 0)
		goto fail;
	if (spsc_attach(&us.in, us.in_imp.va, us.in_imp.bytes, SPSC_CONSUMER) < 0 || us.in.slot_size != IPX_SLOT ||
	    pool_attach(&us.ip_rx, us.rx_imp.va, us.rx_imp.bytes) < 0 ||
	    pool_attach(&us.ip_heap, us.heap_imp.va, us.heap_imp.bytes) < 0) {
		ax_printf("udp: ip's channel or pools are malformed\n");
		goto fail;
	}
	us.ip_ok = true;
	us.ip_owner = us.in_imp.owner;
	if (!us.ip_peer.ep)
		us.ip_peer.ep = us.in_imp.owner;
	struct ipx_msg h = { .type = IPX_HELLO, .arg = (int32_t)ax_svc.restarts };
	spsc_push_part(&us.out, &h, sizeof(h));
	us.out_pushed = true;
	ax_printf("udp: attached to ip (endpoint %#x)\n", us.ip_owner);
	return;
fail:
	ip_detach();
}

/* syscall's two channels; then SK_HELLO (syscall reattaches every socket it has with us). */
static void sys_attach(void)
{
	sys_detach();
	if (chan_import("syscall", "udp.req", &us.req_imp) < 0 || chan_import("syscall", "udp.ev", &us.ev_imp) < 0)
		goto fail;
	if (spsc_attach(&us.req, us.req_imp.va, us.req_imp.bytes, SPSC_CONSUMER) < 0 || us.req.slot_size != SK_SLOT ||
	    spsc_attach(&us.evq, us.ev_imp.va, us.ev_imp.bytes, SPSC_PRODUCER) < 0 || us.evq.slot_size != SK_SLOT) {
		ax_printf("udp: syscall's channels are malformed\n");
		goto fail;
	}
	us.sys_ok = true;
	us.sys_owner = us.req_imp.owner;
	us.sys_peer.ep = us.req_imp.owner;
	struct sk_msg h = { .type = SK_HELLO, .arg = ax_svc.restarts };
	spsc_push_part(&us.evq, &h, sizeof(h));
	us.ev_pushed = true;
	us.hello_at = ax_time_ns();
	ax_printf("udp: attached to syscall (endpoint %#x)\n", us.sys_owner);
	return;
fail:
	sys_detach();
}

static void on_out_attach(struct chan_export *e, endpoint_t importer)
{
	(void)e;
	us.ip_peer.ep = importer;
}

/* The send pool for the driver an IPX_IFACE names (ip announces it as udp/pool.DRV). */
void us_export_pool_for(const char *drv)
{
	char key[16];
	if (!drv[0] || ksnprintf(key, sizeof(key), "pool.%s", drv) >= (int)sizeof(key))
		return;
	for (int i = 0; i < us.ndrv; i++)
		if (!strcmp(us.pool_drv_ex[i].key, key))
			return;
	if (us.ndrv == US_MAX_DRV)
		return;
	struct chan_export *e = &us.pool_drv_ex[us.ndrv++];
	*e = us.pool_ip_ex;
	memset(e->key, 0, sizeof(e->key));
	memcpy(e->key, key, strlen(key));
	e->peer = e->key + 5; /* the driver's service name */
	e->on_attach = NULL, e->importer = 0, e->importer_handle = 0;
	chan_export(e);
}

static int64_t make_pool(void)
{
	uint64_t pages = (POOL_BYTES + 4095) / 4096;
	int64_t h = ax_mo_create(pages, MOF_DMA);
	if (h == -KE_PERM) {
		ax_printf("udp: no DMA privilege: the send pool is ordinary memory (no NIC can send from it)\n");
		h = ax_mo_create(pages, 0);
	}
	int64_t va = h > 0 ? ax_mo_map(h, 0, 0, pages, KP_R | KP_W) : h;
	if (va < 0)
		return va;
	uint32_t id = POOLID(POOLID_UDP, ax_svc.restarts);
	/* One buffer spanning the pool: lwIP's heap allocates inside it, so any packet it
	 * built is one rich pointer. */
	if (pool_init(&us.pool, id, (void *)va, pages * 4096, (uint32_t)(pages * 4096 - POOL_HDR_SIZE), 1,
		      us.pool_priv, sizeof(us.pool_priv)) != 1)
		return -KE_INVAL;
	us.pool_ip_ex = (struct chan_export){ .handle = h, .bytes = pages * 4096, .rights = KP_R, .peer = "ip" };
	ax_strpad(us.pool_ip_ex.key, sizeof(us.pool_ip_ex.key), "pool.ip");
	return chan_export(&us.pool_ip_ex);
}

static void on_notify(struct ax_evloop *l, uint64_t bits)
{
	(void)l;
	if (!(bits & DS_NOTIFY_BIT))
		return;
	char label[DS_NAME_LEN], key[DS_NAME_LEN];
	while (dsc_check(label, key) == 0) {
		if (!strcmp(label, "ip") && us.ip_ok && export_owner("ip", "udp.in") != us.ip_owner) {
			ax_printf("udp: ip changed (restarted): importing its channel and pools again\n");
			ip_detach();
			us.ip_wait_from = ax_time_ns();
			us.next_attach = 0;
		} else if (!strcmp(label, "syscall") && us.sys_ok && export_owner("syscall", "udp.req") != us.sys_owner) {
			ax_printf("udp: syscall changed: importing its channels again\n");
			sys_detach();
			us.next_attach = 0;
		}
	}
}

static void on_message(struct ax_evloop *l, struct kmsg *m)
{
	(void)l;
	if (chan_export_serve(m))
		return;
	if (m->type == NETQ_SHOW) {
		us_netq(m);
		return;
	}
	memset(m->w, 0, sizeof(m->w));
	m->type = (uint32_t)-KE_NOSYS;
	ax_reply(m->source, m);
}

static void set_flags(uint32_t v)
{
	if (us.ip_ok)
		atomic_store_explicit(&us.in.sh->sleeping, v, memory_order_relaxed);
	if (us.sys_ok)
		atomic_store_explicit(&us.req.sh->sleeping, v, memory_order_relaxed);
}

static bool inputs_waiting(void)
{
	return (us.ip_ok && spsc_count(&us.in) > 0) || (us.sys_ok && spsc_count(&us.req) > 0);
}

/* Two input channels, one doorbell to wait on: each channel's "sleeping" flag is raised when
 * a poll found nothing (then both producers ring us by notification), lowered while there
 * is work (lib/chan/README.md, "Going to sleep"; the same fence-then-recheck). */
static bool poll(struct ax_evloop *l)
{
	bool work = false;
	us.retry = false;
	set_flags(0);
	uint64_t now = ax_time_ns();
	if ((!us.ip_ok || !us.sys_ok) && now >= us.next_attach) {
		if (!us.sys_ok)
			sys_attach();
		/* ip imports udp/out when it sees it in ds; we import ip/udp.in after that (or
		 * after 2 s), so the two imports (each a call to the other) never cross. */
		if (!us.ip_ok && ((us.out_ex.importer && us.pool_ip_ex.importer) || now - us.ip_wait_from > 2000000000ull))
			ip_attach();
		us.next_attach = now + ATTACH_RETRY_NS;
	}
	/* ip imports udp/out when ds says it changed. If its import met ours of ip/udp.in (each
	 * calling the other: the kernel fails one call), it may not try again: publish again. */
	if (us.ip_ok && us.out_ex.importer != us.ip_owner && now >= us.next_nudge) {
		if (us.next_nudge) {
			ax_printf("udp: ip has not imported udp/out: publishing it again\n");
			chan_export(&us.out_ex);
		}
		us.next_nudge = now + 500000000;
		us.retry = true;
	}
	us_ip_poll(&work);
	us_sys_poll(&work);
	us_tx_poll(&work);
	us_loop_poll();
	us_flush_events();
	if (us.out_pushed && us.ip_ok)
		chan_kick(&us.out, &us.ip_plat);
	if (us.ev_pushed && us.sys_ok)
		chan_kick(&us.evq, &us.sys_plat);
	us.out_pushed = us.ev_pushed = false;
	us_sock_gc(now);
	l->doorbell = us.ip_ok ? (const volatile uint64_t *)(const void *)&us.in.sh->bell :
		      us.sys_ok ? (const volatile uint64_t *)(const void *)&us.req.sh->bell : NULL;
	l->sleeping = NULL;
	if (!work) {
		set_flags(1);
		atomic_thread_fence(memory_order_seq_cst);
		if (inputs_waiting()) {
			set_flags(0);
			work = true;
		}
	}
	l->wait_ns = us.retry ? 1000000 : (!us.ip_ok || !us.sys_ok) ? ATTACH_RETRY_NS :
		     us.hello_at ? 1000000000 : 0;
	return work;
}

int main(int argc, char **argv)
{
	ax_svc_init(argc, argv);
	us.ip_incarnation = -1;
	us.ip_peer.bits = us.sys_peer.bits = US_WAKE_BIT;
	chan_axolotl_platform(&us.ip_plat, &us.ip_peer);
	chan_axolotl_platform(&us.sys_plat, &us.sys_peer);
	int64_t e = make_pool();
	if (e < 0) {
		ax_printf("udp: cannot make its send pool: %lld\n", (long long)e);
		return 1;
	}
	us_net_init(us.pool.v.bufs);
	us.out_ex = (struct chan_export){ .rights = KP_R | KP_W, .peer = "ip", .on_attach = on_out_attach };
	ax_strpad(us.out_ex.key, sizeof(us.out_ex.key), "out");
	if ((e = chan_create(&us.out_ex, IPX_SLOT, IPX_SLOTS, SPSC_PRODUCER, &us.out)) < 0 ||
	    (e = chan_export(&us.out_ex)) < 0) {
		ax_printf("udp: cannot export udp/out: %lld\n", (long long)e);
		return 1;
	}
	/* The drivers ip will announce our pool to: exported now, before ip tells them (an
	 * IPX_IFACE naming another driver exports for it too). */
	bool named = false;
	for (int i = 1; i < argc; i++)
		if (!strncmp(argv[i], "drv=", 4))
			us_export_pool_for(argv[i] + 4), named = true;
	if (!named)
		us_export_pool_for("e1000");
	if (ax_svc.restarts) {
		us_iface_restore();
		us_sock_restore();
	}
	dsc_subscribe("ip", "udp.in");
	dsc_subscribe("syscall", "udp.req");
	ax_printf("udp: started (restart %u), send pool %#x of %u KiB\n", ax_svc.restarts, us.pool.v.pool_id,
		  us.pool.v.buf_size / 1024);
	us.ip_wait_from = ax_time_ns();
	struct ax_evloop l = { .on_message = on_message, .on_notify = on_notify, .poll = poll };
	return (int)ax_evloop_run(&l);
}
