/* Attaching to ip (netdev_proto.h): the device reset first (no DMA of ours in flight), ip's
 * two channels and RX pool imported, what ip queued for a previous instance dropped unread,
 * ND_RESET with the MAC, the link and what the device offloads. Again whenever ip exports
 * new channels (it restarted) or a channel or the device turned out broken. */
#include "netdrv_int.h"
#include "heartbeat.h"

struct netdrv_link ndl;

void nd_key(char key[16], const char *fmt) { ksnprintf(key, 16, fmt, nd.ifname); }

void nd_reset(void)
{
	nd.ops->reset();
	for (unsigned q = 0; q < NETDEV_MAXQ; q++)
		ndl.q[q].nspare = 0; /* ip takes every buffer back on ND_RESET */
	nd.c.resets++;
}

bool netdrv_up_push(unsigned q, const struct netdev_msg *m)
{
	if (!nd.attached || q >= nd.nq)
		return false;
	int e = spsc_push_part(&ndl.q[q].up, m, sizeof(*m));
	if (e == CHAN_ECORRUPT) {
		netdrv_reattach("ip's up channel is corrupt");
		return false;
	}
	if (e == 0)
		ndl.q[q].kick_ip = true;
	return e == 0;
}

/* Queue q's two channels let go (none imported is fine). */
static void unimport_queue(unsigned q)
{
	struct netdrv_qlink *l = &ndl.q[q];
	chan_unimport(&l->down_mem);
	chan_unimport(&l->up_mem);
	memset(&l->down_mem, 0, sizeof(l->down_mem));
	memset(&l->up_mem, 0, sizeof(l->up_mem));
}

static void detach(void)
{
	for (int i = 0; i < NETDRV_MAX_POOLS; i++)
		nd_pool_drop(i);
	nd.rx_pool = -1;
	for (unsigned q = 0; q < NETDEV_MAXQ; q++) {
		unimport_queue(q);
		ndl.q[q].kick_ip = false;
	}
	nd.attached = false;
	nd.nq = 0;
	nd_loop.doorbell = NULL;
	nd_loop.sleeping = NULL;
}

static uint32_t attach_failures;

/* Queue q's two channels (keys down/up); 0 or an error. */
static int64_t import_queue(unsigned q, const char *kd, const char *ku)
{
	struct netdrv_qlink *l = &ndl.q[q];
	int64_t r = chan_import("ip", kd, &l->down_mem);
	if (r == 0)
		r = chan_import("ip", ku, &l->up_mem);
	if (r == 0 && (spsc_attach(&l->down, l->down_mem.va, l->down_mem.bytes, SPSC_CONSUMER) < 0 ||
		       spsc_attach(&l->up, l->up_mem.va, l->up_mem.bytes, SPSC_PRODUCER) < 0 ||
		       l->down.slot_size != NETDEV_SLOT || l->up.slot_size != NETDEV_SLOT))
		r = -KE_INVAL;
	if (r < 0)
		unimport_queue(q);
	return r;
}

/* What ip queued on queue q before our ND_RESET was for a previous instance: ip takes it
 * all back on ND_RESET, so it is dropped unread. */
static uint64_t drop_stale(unsigned q)
{
	struct netdev_msg stale;
	uint64_t dropped = 0;
	while (spsc_pop_part(&ndl.q[q].down, &stale, 0) == 0)
		dropped++;
	return dropped;
}

/* Resets the device, lets go of everything of the previous ip, imports ip's channels and
 * RX pool, and says ND_RESET. 0 or an error (then retried in 100 ms). */
int64_t nd_attach(void)
{
	char kd[16], ku[16], kr[16];
	nd_key(kd, "%s.down");
	nd_key(ku, "%s.up");
	nd_key(kr, "rx.%s");
	nd_reset();
	detach(); /* after the reset: the device never writes memory we let go of */
	ax_heartbeat(); /* resetting and waiting for ip is not hanging */
	ndl.ip_seen_len = 0;
	int64_t r = dsc_get("ip", kd, ndl.ip_seen, &ndl.ip_seen_len);
	if (r == 0)
		r = import_queue(0, kd, ku);
	if (r == 0) {
		struct pool_shared hdr;
		struct chan_import tmp = { 0 };
		/* The RX pool's id is in its header: import it once to learn it. */
		r = chan_import("ip", kr, &tmp);
		if (r == 0) {
			memcpy(&hdr, tmp.va, sizeof(hdr));
			chan_unimport(&tmp);
			r = hdr.magic == POOL_MAGIC ? nd_pool_import(0, hdr.pool_id, "ip", kr) : -KE_INVAL;
		}
	}
	if (r < 0) {
		if (attach_failures++ % 50 == 0)
			ax_printf("%s: ip's channels not there yet (%lld), retrying\n", nd.ops->name, (long long)r);
		detach();
		ndl.next_attach_ns = ax_time_ns() + WAIT_DETACHED_NS;
		nd_loop.wait_ns = WAIT_DETACHED_NS;
		return r;
	}
	/* As many more queue pairs as ip offers and the device runs. */
	unsigned nq = 1, maxq = nd.ops->set_queues && nd.max_queues > 1 ? nd.max_queues : 1;
	for (; nq < maxq && nq < NETDEV_MAXQ; nq++) {
		char kdq[16], kuq[16];
		ksnprintf(kdq, sizeof(kdq), "%s.d%u", nd.ifname, nq);
		ksnprintf(kuq, sizeof(kuq), "%s.u%u", nd.ifname, nq);
		if (import_queue(nq, kdq, kuq) < 0)
			break;
	}
	uint64_t dropped = 0;
	for (unsigned q = 0; q < nq; q++)
		dropped += drop_stale(q);
	if (dropped)
		ax_printf("%s: dropped %llu messages queued for a previous instance\n", nd.ops->name,
			  (unsigned long long)dropped);
	if (nd.ops->set_queues) { /* (a device may take fewer than ip offers) */
		unsigned took = nd.ops->set_queues(nq);
		nq = took >= 1 && took <= nq ? took : 1;
	}
	attach_failures = 0;
	nd.rx_pool = 0;
	nd.attached = true;
	nd.nq = nq;
	ndl.ipwake.ep = ndl.q[0].up_mem.owner;
	for (unsigned q = 0; q < nq; q++) {
		chan_watch_reset(&ndl.q[q].up_w);
		ksnprintf(ndl.q[q].up_w.name, sizeof(ndl.q[q].up_w.name), q ? "%s.u%u" : "%s.up", nd.ops->name, q);
	}
	ndl.ipwake.bits = NETDEV_WAKE_BIT;
	/* The loop sleeps on queue 0's doorbell; the others keep their sleeping flag raised, so
	 * ip notifies us for them (poll in loop.c). */
	nd_loop.doorbell = (const volatile uint64_t *)(const void *)&ndl.q[0].down.sh->bell;
	nd_loop.sleeping = &ndl.q[0].down.sh->sleeping;
	nd_loop.wait_ns = nd.poll_mode ? WAIT_POLL_NS : WAIT_IRQ_NS;
	struct netdev_msg m = { .type = ND_RESET, .arg = nd.link ? NDL_UP : 0, .flags = nd.caps, .queues = nq };
	memcpy(&m.id, nd.mac, 6);
	netdrv_up_push(0, &m);
	chan_kick(&ndl.q[0].up, &ndl.plat);
	ndl.q[0].kick_ip = false;
	ax_printf("%s: attached to ip %#x: RX pool %#x, link %s, %u queue pair%s\n", nd.ops->name,
		  (unsigned)ndl.q[0].up_mem.owner, nd.pools[0].id, nd.link ? "up" : "down", nq, nq == 1 ? "" : "s");
	return 0;
}

void netdrv_reattach(const char *why)
{
	ax_printf("%s: %s: resetting and attaching again\n", nd.ops->name, why);
	nd_reset();
	detach();
	ndl.next_attach_ns = ax_time_ns();
	nd_loop.wait_ns = WAIT_DETACHED_NS;
}

/* ip restarted: its names in ds changed. */
void nd_ds_changed(void)
{
	char label[DS_NAME_LEN], key[DS_NAME_LEN];
	bool ours = false;
	while (dsc_check(label, key) == 0)
		ours |= !strcmp(label, "ip");
	if (!ours)
		return;
	char kd[16];
	nd_key(kd, "%s.down");
	uint8_t v[DS_VAL_LEN];
	uint32_t len = 0;
	if (dsc_get("ip", kd, v, &len) < 0)
		return;
	if (nd.attached && len == ndl.ip_seen_len && !memcmp(v, ndl.ip_seen, len))
		return;
	ax_printf("%s: ip exported new channels: resetting and attaching again\n", nd.ops->name);
	nd_attach();
}
