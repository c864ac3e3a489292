/* e1000: the driver of Intel's 82540EM (QEMU's default NIC) and 82574, a native server run
 * by rs with `pci=8086:100e`. It serves ip over the two channels and the pools of
 * lib/net/netdev_proto.h: frames go between the device and pool memory without a copy.
 * README.md has the protocol, the state and the recovery story.
 *   e1000 pci=BB:DD.F [dedicated=1] [poll=1] [itr=USECS] [name=IF] [restarted=N] [hb=H] */
#include "e1000.h"
#include "service.h"
#include "heartbeat.h"
#include "netq_proto.h"
#include "pci.h"

struct e1k e1k = { .rx_pool = -1 };

#define WAIT_IRQ_NS 50000000ull    /* interrupt mode: the safety-net poll */
#define WAIT_POLL_NS 50000ull      /* polling mode */
#define WAIT_DETACHED_NS 100000000ull
#define TICK_NS 100000000ull       /* link and statistics */

static struct ax_evloop loop;

static void key_of(char key[16], const char *fmt)
{
	ksnprintf(key, 16, fmt, e1k.ifname);
}

/* ---- the up channel ---- */

static void reattach_later(const char *why);

bool up_push(const struct netdev_msg *m)
{
	if (!e1k.attached)
		return false;
	int e = spsc_push_part(&e1k.up, m, sizeof(*m));
	if (e == CHAN_ECORRUPT) {
		reattach_later("ip's up channel is corrupt");
		return false;
	}
	if (e == 0)
		e1k.kick_ip = true;
	return e == 0;
}

/* ---- pools ---- */

static int pool_find(uint32_t id)
{
	for (int i = 0; i < MAX_POOLS; i++)
		if (e1k.pools[i].used && e1k.pools[i].id == id)
			return i;
	return -1;
}

uint64_t pool_bus(int idx, struct chan_ptr p) { return e1k.pools[idx].bus + p.offset; }

static void pool_drop(int i)
{
	struct e1k_pool *p = &e1k.pools[i];
	if (!p->used)
		return;
	chan_unimport(&p->imp); /* closes our handle: the owner's memory can go */
	memset(p, 0, sizeof(*p));
}

/* Imports label/key as pool id into slot i; 0 or an error. The bus address is that of a
 * MOF_DMA object, physically contiguous: page 0's address plus the header. */
static int64_t pool_import(int i, uint32_t id, const char *label, const char *key)
{
	struct e1k_pool *p = &e1k.pools[i];
	pool_drop(i);
	int64_t r = chan_import(label, key, &p->imp);
	if (r < 0)
		return r;
	p->used = true;
	int64_t pa = kcall2(KC_MO_PHYS, (uint64_t)p->imp.handle, 0);
	int64_t last = pa > 0 ? kcall2(KC_MO_PHYS, (uint64_t)p->imp.handle, p->imp.bytes / 4096 - 1) : pa;
	if (pa <= 0 || last != pa + (int64_t)(p->imp.bytes - 4096))
		r = pa < 0 ? pa : -KE_INVAL;
	else if (pool_attach(&p->v, p->imp.va, p->imp.bytes) < 0 || p->v.pool_id != id)
		r = -KE_INVAL;
	if (r < 0) {
		pool_drop(i);
		return r;
	}
	p->id = id;
	ax_strpad(p->label, sizeof(p->label), label); /* ds names: 1..15 characters, checked */
	ax_strpad(p->key, sizeof(p->key), key);
	p->bus = (uint64_t)pa + POOL_HDR_SIZE;
	return 0;
}

/* ---- attaching to ip ---- */

static void detach(void)
{
	for (int i = 0; i < MAX_POOLS; i++)
		pool_drop(i);
	e1k.rx_pool = -1;
	chan_unimport(&e1k.down_mem);
	chan_unimport(&e1k.up_mem);
	memset(&e1k.down_mem, 0, sizeof(e1k.down_mem));
	memset(&e1k.up_mem, 0, sizeof(e1k.up_mem));
	e1k.attached = false;
	loop.doorbell = NULL;
	loop.sleeping = NULL;
}

static uint32_t attach_failures;

/* Resets the device (no DMA of ours is in flight after it), lets go of everything of the
 * previous ip, imports ip's channels and RX pool, and says ND_RESET. 0 or an error. */
static int64_t attach(void)
{
	char kd[16], ku[16], kr[16];
	key_of(kd, "%s.down");
	key_of(ku, "%s.up");
	key_of(kr, "rx.%s");
	hw_reset();
	detach();
	ax_heartbeat(); /* resetting and waiting for ip is not hanging */
	e1k.ip_seen_len = 0;
	int64_t r = dsc_get("ip", kd, e1k.ip_seen, &e1k.ip_seen_len);
	if (r == 0)
		r = chan_import("ip", kd, &e1k.down_mem);
	if (r == 0)
		r = chan_import("ip", ku, &e1k.up_mem);
	if (r == 0 && (spsc_attach(&e1k.down, e1k.down_mem.va, e1k.down_mem.bytes, SPSC_CONSUMER) < 0 ||
		       spsc_attach(&e1k.up, e1k.up_mem.va, e1k.up_mem.bytes, SPSC_PRODUCER) < 0 ||
		       e1k.down.slot_size != NETDEV_SLOT || e1k.up.slot_size != NETDEV_SLOT))
		r = -KE_INVAL;
	if (r == 0) {
		struct pool_shared hdr;
		struct chan_import tmp = { 0 };
		/* The RX pool's id is in its header: import it once to learn it. */
		r = chan_import("ip", kr, &tmp);
		if (r == 0) {
			memcpy(&hdr, tmp.va, sizeof(hdr));
			chan_unimport(&tmp);
			r = hdr.magic == POOL_MAGIC ? pool_import(0, hdr.pool_id, "ip", kr) : -KE_INVAL;
		}
	}
	if (r < 0) {
		if (attach_failures++ % 50 == 0)
			ax_printf("e1000: ip's channels not there yet (%lld), retrying\n", (long long)r);
		detach();
		e1k.next_attach_ns = ax_time_ns() + WAIT_DETACHED_NS;
		loop.wait_ns = WAIT_DETACHED_NS;
		return r;
	}
	/* What ip queued before our ND_RESET was for a previous instance: ip takes it all back
	 * on ND_RESET, so it is dropped unread. */
	struct netdev_msg stale;
	uint64_t dropped = 0;
	while (spsc_pop_part(&e1k.down, &stale, 0) == 0)
		dropped++;
	if (dropped)
		ax_printf("e1000: dropped %llu messages queued for a previous instance\n", (unsigned long long)dropped);
	attach_failures = 0;
	e1k.rx_pool = 0;
	e1k.attached = true;
	e1k.ipwake.ep = e1k.up_mem.owner;
	chan_watch_reset(&e1k.up_w);
	e1k.ipwake.bits = NETDEV_WAKE_BIT;
	loop.doorbell = (const volatile uint64_t *)(const void *)&e1k.down.sh->bell;
	loop.sleeping = &e1k.down.sh->sleeping;
	loop.wait_ns = e1k.poll_mode ? WAIT_POLL_NS : WAIT_IRQ_NS;
	struct netdev_msg m = { .type = ND_RESET, .arg = e1k.link ? NDL_UP : 0 };
	memcpy(&m.id, e1k.mac, 6);
	up_push(&m);
	chan_kick(&e1k.up, &e1k.plat);
	e1k.kick_ip = false;
	ax_printf("e1000: attached to ip %#x: RX pool %#x, link %s\n", (unsigned)e1k.up_mem.owner,
		  e1k.pools[0].id, e1k.link ? "up" : "down");
	return 0;
}

static void reattach_later(const char *why)
{
	ax_printf("e1000: %s: resetting and attaching again\n", why);
	hw_reset();
	detach();
	e1k.next_attach_ns = ax_time_ns();
	loop.wait_ns = WAIT_DETACHED_NS;
}

/* ---- messages from ip ---- */

static void bad(const char *what, const struct netdev_msg *m)
{
	if (e1k.c.bad_msgs++ < 5)
		ax_printf("e1000: bad message from ip (%s): type %u nseg %u\n", what, m->type, m->nseg);
}

/* Byte `off` of the frame the segments describe (segments already validated). */
static int frame_byte(const struct netdev_msg *m, const int *pidx, uint32_t off)
{
	for (uint32_t s = 0; s < m->nseg; s++) {
		if (off < m->seg[s].len) {
			const uint8_t *b = pool_resolve(&e1k.pools[pidx[s]].v, m->seg[s]);
			return b ? b[off] : -1;
		}
		off -= m->seg[s].len;
	}
	return -1;
}

enum verdict { V_DONE, V_WAIT };

/* A TX that cannot go: ND_TX_DONE with an error (or wait for room on the up channel). */
/* A frame not sent: ip hears err for it (why: a bad message, logged; NULL: none of ip's
 * doing). V_WAIT while there is no room to say so. */
static enum verdict tx_fail(const struct netdev_msg *m, int64_t err, const char *why)
{
	struct netdev_msg d = { .type = ND_TX_DONE, .id = m->id, .arg = (uint32_t)(int32_t)err };
	if (!up_push(&d))
		return e1k.attached ? V_WAIT : V_DONE;
	if (why)
		bad(why, m);
	e1k.c.tx_failed++;
	return V_DONE;
}

static enum verdict on_tx(const struct netdev_msg *m)
{
	int pidx[NETDEV_MAXSEG];
	uint64_t bus[NETDEV_MAXSEG];
	uint32_t len[NETDEV_MAXSEG], total = 0;
	if (m->nseg < 1 || m->nseg > NETDEV_MAXSEG || e1k.refuse)
		return tx_fail(m, -KE_INVAL, "segment count");
	for (uint32_t s = 0; s < m->nseg; s++) {
		pidx[s] = pool_find(m->seg[s].pool_id);
		if (pidx[s] < 0)
			return tx_fail(m, -KE_SRCH, "unknown pool");
		if (!m->seg[s].len || !pool_resolve(&e1k.pools[pidx[s]].v, m->seg[s]))
			return tx_fail(m, -KE_INVAL, "segment out of its pool");
		bus[s] = pool_bus(pidx[s], m->seg[s]);
		len[s] = m->seg[s].len;
		total += len[s];
	}
	if (total < 14 || total > NETDEV_FRAME_MAX)
		return tx_fail(m, -KE_INVAL, "frame length");
	struct e1k_ctx ctx = { 0 }, *csum = NULL;
	uint32_t popts = 0;
	if (m->flags & (NDF_TX_CSUM_IP4 | NDF_TX_CSUM_L4)) {
		int vihl = frame_byte(m, pidx, 14);
		uint32_t ihl = vihl >= 0 ? (uint32_t)(vihl & 0xf) * 4 : 0;
		if (vihl < 0 || (vihl >> 4) != 4 || ihl < 20 || 14 + ihl > total)
			return tx_fail(m, -KE_INVAL, "checksum offload of a non-IPv4 frame");
		uint64_t ipcss = 14, ipcso = 14 + 10, ipcse = 14 + ihl - 1, tucss = 0, tucso = 0;
		if (m->flags & NDF_TX_CSUM_L4) {
			tucss = m->arg & 0xffff;
			tucso = (m->arg >> 16) & 0xffff;
			if (tucss < 14 + ihl || tucso < tucss || tucso + 2 > total || tucso > 255 || tucss > 255)
				return tx_fail(m, -KE_INVAL, "checksum offsets");
			popts |= TXD_POPTS_TXSM;
		}
		if (m->flags & NDF_TX_CSUM_IP4)
			popts |= TXD_POPTS_IXSM;
		ctx.addr = ipcss | ipcso << 8 | ipcse << 16 | tucss << 32 | tucso << 40;
		ctx.lower = TXD_CMD_DEXT | TXD_DTYP_C | TXD_CTX_IP;
		csum = &ctx;
	}
	if (tx_space() < m->nseg + 1u)
		/* The ring is full: the message waits in the channel, unless there is no link (the
		 * device sends nothing and frees no descriptor): then it is refused, so ip's channel
		 * keeps moving (a stalled one is a broken driver). */
		return e1k.link ? V_WAIT : tx_fail(m, -KE_AGAIN, NULL);
	tx_queue(m->id, m->nseg, bus, len, csum, popts);
	return V_DONE;
}

static enum verdict on_rxbuf(const struct netdev_msg *m)
{
	struct chan_ptr p = m->seg[0];
	struct chan_ptr whole = { p.pool_id, p.offset, NETDEV_RXBUF };
	if (m->nseg != 1 || e1k.rx_pool < 0 || p.pool_id != e1k.pools[e1k.rx_pool].id || p.len < NETDEV_RXBUF ||
	    !pool_resolve(&e1k.pools[e1k.rx_pool].v, whole)) {
		bad("RX buffer", m);
		return V_DONE;
	}
	if (!rx_give(whole, pool_bus(e1k.rx_pool, whole)))
		bad("more RX buffers than the driver holds", m);
	return V_DONE;
}

static enum verdict on_pool(const struct netdev_msg *m)
{
	struct netdev_pool np;
	memcpy(&np, m, sizeof(np));
	if (!np.pool_id || !np.label[0] || !np.key[0] || np.label[15] || np.key[15]) {
		bad("pool announcement", m);
		return V_DONE;
	}
	int i = pool_find(np.pool_id);
	if (i >= 0 && !memcmp(e1k.pools[i].label, np.label, 16) && !memcmp(e1k.pools[i].key, np.key, 16))
		return V_DONE; /* known already (e.g. the RX pool) */
	if (i == 0 && e1k.rx_pool == 0) {
		bad("pool id of the RX pool", m);
		return V_DONE;
	}
	for (int j = 1; i < 0 && j < MAX_POOLS; j++)
		if (!e1k.pools[j].used)
			i = j;
	int64_t r = i < 0 ? -KE_NOMEM : pool_import(i, np.pool_id, np.label, np.key);
	if (r < 0) {
		struct netdev_msg err = { .type = ND_POOL_ERR, .arg = np.pool_id };
		if (!up_push(&err))
			return e1k.attached ? V_WAIT : V_DONE;
		e1k.c.pool_errors++;
		ax_printf("e1000: cannot use pool %#x (%s/%s): %lld\n", np.pool_id, np.label, np.key, (long long)r);
	}
	return V_DONE;
}

static void bind_irq(void);

static enum verdict on_conf(const struct netdev_msg *m)
{
	bool poll = (m->arg & NDC_POLL) || e1k.dedicated || !e1k.irq;
	if (m->id >= 1 && m->id <= 10000)
		hw_set_itr((uint32_t)m->id);
	if (poll != e1k.poll_mode) {
		hw_set_poll(poll);
		if (!poll)
			bind_irq();
		loop.wait_ns = poll ? WAIT_POLL_NS : WAIT_IRQ_NS;
		ax_printf("e1000: %s mode\n", poll ? "polling" : "interrupt");
	}
	return V_DONE;
}

/* Serves up to a batch of ip's messages; returns how many. */
static int serve_down(void)
{
	int n = 0;
	for (; n < 64 && e1k.attached; n++) {
		struct netdev_msg m;
		int e = spsc_peek(&e1k.down, &m); /* a private copy: ip cannot change it under us */
		if (e == CHAN_EAGAIN)
			break;
		if (e < 0) {
			reattach_later("ip's down channel is corrupt");
			break;
		}
		enum verdict v;
		switch (m.type) {
		case ND_TX: v = on_tx(&m); break;
		case ND_RXBUF: v = on_rxbuf(&m); break;
		case ND_POOL: v = on_pool(&m); break;
		case ND_CONF: v = on_conf(&m); break;
		default: bad("unknown type", &m); v = V_DONE; break;
		}
		if (v == V_WAIT || !e1k.attached)
			break;
		spsc_pop_part(&e1k.down, &m, 0);
	}
	return n;
}

/* ---- the device's events ---- */

static void link_check(void)
{
	bool up = hw_link();
	if (up == e1k.link)
		return;
	e1k.link = up;
	e1k.c.link_changes++;
	ax_printf("e1000: link %s\n", up ? "up" : "down");
	struct netdev_msg m = { .type = ND_LINK, .arg = up ? NDL_UP : 0 };
	up_push(&m); /* a lost link message is repaired by the next change or ND_RESET */
}

/* Interrupts, NAPI-style. The kernel masks the line at each interrupt; we acknowledge ICR
 * and leave the line masked while the loop finds work, polling the rings, so a busy device
 * costs no interrupt per batch (each costs a mask, an unmask, an EOI and two ICR reads, all
 * register accesses). With nothing left to do, irq_rearm unmasks the line and reads ICR
 * again: the I/O APIC may take the line as edge-triggered and ignore it while masked, and
 * the device keeps it high until ICR is read; so either ICR reads 0 (the line is low, the
 * next event makes a new edge) or an event came meanwhile and the loop polls once more. */
static bool irq_masked;

/* Reads (so clears) ICR, following a link change; the causes that were pending. */
static uint32_t irq_ack(void)
{
	uint32_t icr = hw_irq_ack();
	if (icr & ICR_LSC)
		link_check();
	return icr;
}

static void irq_taken(void)
{
	irq_masked = true;
	irq_ack();
}

static bool irq_rearm(void)
{
	if (!irq_masked)
		return false;
	irq_masked = false;
	kcall1(KC_IRQ_UNMASK, e1k.irq);
	return irq_ack() != 0;
}

static bool irq_bound;

static void bind_irq(void)
{
	if (irq_bound || !e1k.irq)
		return;
	int64_t r = kcall2(KC_IRQ_BIND, e1k.irq, IRQ_BIT);
	if (r < 0) {
		ax_printf("e1000: cannot bind IRQ %u (%lld): polling\n", e1k.irq, (long long)r);
		hw_set_poll(true);
		return;
	}
	irq_bound = true;
}

static bool poll(struct ax_evloop *l)
{
	uint64_t now = ax_time_ns();
	if (now >= e1k.next_tick_ns) {
		e1k.next_tick_ns = now + TICK_NS;
		link_check();
		if (!e1k.poll_mode && irq_bound)
			irq_taken(); /* the safety net: a lost edge cannot stall us (rearmed below) */
	}
	if (!e1k.attached) {
		if (now >= e1k.next_attach_ns)
			attach();
		return false;
	}
	if (e1k.deaf)
		return false;
	int work = rx_harvest() + tx_harvest() + serve_down();
	rings_publish();
	if (e1k.kick_ip && e1k.attached) {
		e1k.kick_ip = false;
		chan_kick(&e1k.up, &e1k.plat);
	}
	if (e1k.attached)
		chan_ax_watch(&e1k.up_w, &e1k.up, &e1k.plat); /* (we look every 50 ms) */
	(void)l;
	return work > 0 || (irq_bound && !e1k.poll_mode && irq_rearm());
}

/* ip restarted: its names in ds changed. */
static void ds_changed(void)
{
	char label[DS_NAME_LEN], key[DS_NAME_LEN];
	bool ours = false;
	while (dsc_check(label, key) == 0)
		ours |= !strcmp(label, "ip");
	if (!ours)
		return;
	char kd[16];
	key_of(kd, "%s.down");
	uint8_t v[DS_VAL_LEN];
	uint32_t len = 0;
	if (dsc_get("ip", kd, v, &len) < 0)
		return;
	if (e1k.attached && len == e1k.ip_seen_len && !memcmp(v, e1k.ip_seen, len))
		return;
	ax_printf("e1000: ip exported new channels: resetting and attaching again\n");
	attach();
}

static void on_notify(struct ax_evloop *l, uint64_t bits)
{
	(void)l;
	if (bits & IRQ_BIT) {
		e1k.c.irqs++;
		irq_taken();
	}
	if (bits & DS_NOTIFY_BIT)
		ds_changed();
}

/* ---- counters (NETQ_SHOW NQ_COUNTERS) ---- */

static bool counter_line(uint64_t i, char *out, size_t cap)
{
	const struct e1k_counters *c = &e1k.c;
	static const char *const names[] = { "rx_packets", "rx_bytes", "tx_packets", "tx_bytes", "rx_drops",
		"rx_no_buffer", "crc_errors", "rx_errors", "rx_frames_to_ip", "tx_frames_queued", "tx_failed",
		"bad_messages", "pool_errors", "interrupts", "resets", "link_up" };
	const uint64_t vals[] = { c->rx_packets, c->rx_bytes, c->tx_packets, c->tx_bytes, c->rx_missed + c->rx_dropped,
		c->rx_no_buf, c->crc_errors, c->rx_errors, c->rx_frames, c->tx_frames, c->tx_failed, c->bad_msgs,
		c->pool_errors, c->irqs, c->resets, e1k.link };
	if (i >= sizeof(vals) / sizeof(vals[0]))
		return false;
	ksnprintf(out, cap, "%s %llu", names[i], (unsigned long long)vals[i]);
	return true;
}

static void on_message(struct ax_evloop *l, struct kmsg *m)
{
	(void)l;
	endpoint_t from = m->source;
	if (m->type == NETQ_SHOW) {
		uint64_t topic = m->w[0], line = m->w[1];
		memset(m->w, 0, sizeof(m->w));
		if (topic != NQ_COUNTERS) {
			m->type = (uint32_t)-2; /* -ENOENT: not served here */
		} else {
			if (line == 0)
				hw_stats();
			char text[NETQ_TEXT + 1];
			m->type = counter_line(line, text, sizeof(text)) ? NETQ_LINE : NETQ_END;
			if (m->type == NETQ_LINE)
				memcpy(m->w, text, strlen(text));
		}
	} else {
		memset(m->w, 0, sizeof(m->w));
		m->type = (uint32_t)-KE_INVAL;
	}
	ax_reply(from, m);
}

static void inject(struct ax_evloop *l, const char *word)
{
	(void)l;
	if (!strcmp(word, "reset")) {
		reattach_later("reset injected");
	} else if (!strcmp(word, "refuse")) {
		/* what a branch fault in the segment check did in the fault campaign: every frame
		 * ip gives is answered as bad, ip's channel moving on */
		e1k.refuse = true;
		ax_printf("e1000: injected fault: every frame from ip is refused\n");
	} else if (!strcmp(word, "deaf")) {
		/* what code faults in poll did in the fault campaign: the loop and its heartbeat
		 * run on, ip's channel and the device are no longer served */
		e1k.deaf = true;
		ax_printf("e1000: injected fault: ip's channel and the device are no longer served\n");
	} else {
		ax_printf("e1000: no injectable fault named %s\n", word);
	}
}

int main(int argc, char **argv)
{
	ax_svc_init(argc, argv);
	ksnprintf(e1k.ifname, sizeof(e1k.ifname), "%s", ax_svc.label); /* its service name: a live update may run another binary */
	int64_t r = hw_init(argc, argv);
	if (r < 0)
		return 1;
	if (!e1k.irq)
		e1k.poll_mode = true;
	if (!e1k.poll_mode)
		bind_irq();
	chan_axolotl_platform(&e1k.plat, &e1k.ipwake);
	ksnprintf(e1k.up_w.name, sizeof(e1k.up_w.name), "e1000.up");
	/* restartable: the device is reset, ip's buffers and channels are ip's, ip resends */
	loop = (struct ax_evloop){ .on_message = on_message, .on_notify = on_notify, .poll = poll,
				   .inject = inject, .wait_ns = WAIT_DETACHED_NS, .restartable = true };
	hw_reset();
	char k[16];
	key_of(k, "%s.down");
	dsc_subscribe("ip", k);
	key_of(k, "%s.up");
	dsc_subscribe("ip", k);
	key_of(k, "rx.%s");
	dsc_subscribe("ip", k);
	ax_printf("e1000: %s at %02x:%02x.%x, MAC %02x:%02x:%02x:%02x:%02x:%02x, IRQ %u, %s mode, link %s, restart %u\n",
		  e1k.devid == E1K_DEV_82574 ? "82574" : "82540EM", PCI_BUS(e1k.bdf), PCI_DEV(e1k.bdf), PCI_FN(e1k.bdf),
		  e1k.mac[0], e1k.mac[1], e1k.mac[2], e1k.mac[3], e1k.mac[4], e1k.mac[5], e1k.irq,
		  e1k.poll_mode ? "polling" : "interrupt", e1k.link ? "up" : "down", ax_svc.restarts);
	attach();
	return (int)ax_evloop_run(&loop);
}
