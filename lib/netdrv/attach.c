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
	nd.nspare = 0; /* ip takes every buffer back on ND_RESET */
	nd.c.resets++;
}

bool netdrv_up_push(const struct netdev_msg *m)
{
	if (!nd.attached)
		return false;
	int e = spsc_push_part(&ndl.up, m, sizeof(*m));
	if (e == CHAN_ECORRUPT) {
		netdrv_reattach("ip's up channel is corrupt");
		return false;
	}
	if (e == 0)
		ndl.kick_ip = true;
	return e == 0;
}

static void detach(void)
{
	for (int i = 0; i < NETDRV_MAX_POOLS; i++)
		nd_pool_drop(i);
	nd.rx_pool = -1;
	chan_unimport(&ndl.down_mem);
	chan_unimport(&ndl.up_mem);
	memset(&ndl.down_mem, 0, sizeof(ndl.down_mem));
	memset(&ndl.up_mem, 0, sizeof(ndl.up_mem));
	nd.attached = false;
	nd_loop.doorbell = NULL;
	nd_loop.sleeping = NULL;
}

static uint32_t attach_failures;

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
		r = chan_import("ip", kd, &ndl.down_mem);
	if (r == 0)
		r = chan_import("ip", ku, &ndl.up_mem);
	if (r == 0 && (spsc_attach(&ndl.down, ndl.down_mem.va, ndl.down_mem.bytes, SPSC_CONSUMER) < 0 ||
		       spsc_attach(&ndl.up, ndl.up_mem.va, ndl.up_mem.bytes, SPSC_PRODUCER) < 0 ||
		       ndl.down.slot_size != NETDEV_SLOT || ndl.up.slot_size != NETDEV_SLOT))
		r = -KE_INVAL;
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
	/* What ip queued before our ND_RESET was for a previous instance: ip takes it all back
	 * on ND_RESET, so it is dropped unread. */
	struct netdev_msg stale;
	uint64_t dropped = 0;
	while (spsc_pop_part(&ndl.down, &stale, 0) == 0)
		dropped++;
	if (dropped)
		ax_printf("%s: dropped %llu messages queued for a previous instance\n", nd.ops->name,
			  (unsigned long long)dropped);
	attach_failures = 0;
	nd.rx_pool = 0;
	nd.attached = true;
	ndl.ipwake.ep = ndl.up_mem.owner;
	chan_watch_reset(&ndl.up_w);
	ndl.ipwake.bits = NETDEV_WAKE_BIT;
	nd_loop.doorbell = (const volatile uint64_t *)(const void *)&ndl.down.sh->bell;
	nd_loop.sleeping = &ndl.down.sh->sleeping;
	nd_loop.wait_ns = nd.poll_mode ? WAIT_POLL_NS : WAIT_IRQ_NS;
	struct netdev_msg m = { .type = ND_RESET, .arg = nd.link ? NDL_UP : 0, .flags = nd.caps };
	memcpy(&m.id, nd.mac, 6);
	netdrv_up_push(&m);
	chan_kick(&ndl.up, &ndl.plat);
	ndl.kick_ip = false;
	ax_printf("%s: attached to ip %#x: RX pool %#x, link %s\n", nd.ops->name, (unsigned)ndl.up_mem.owner,
		  nd.pools[0].id, nd.link ? "up" : "down");
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
