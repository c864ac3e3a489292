/* ip: the IPv4 server (README.md).
 *   ip [if=DRV[,DRV]] [queues=N] [dhcp | addr=A.B.C.D/N [gw=A.B.C.D]] [route=NET/N,GW]... [pf=pf|none]
 *      [restarted=N] [hb=H]
 * Defaults: if=e1000, queues=4 (a driver runs as many queue pairs as its NIC has, up to N),
 *   DHCP unless addr= is given, pf on (packets wait for pf's verdicts).
 * One lwIP instance (lwipopts.h) in a single-threaded event loop: the drivers' channels,
 * pf's answers and the transports' channels are polled; lwIP's timers run from the loop. */
#include "ip.h"
#include "ds_client.h"
#include "service.h"
#include "netq_proto.h"
#include "lwip/init.h"
#include "lwip/timeouts.h"

int ip_static_route(const char *arg);
uint64_t ip_ping_poll(void);

static bool poll(struct ax_evloop *l)
{
	ip.retry = false;
	bool work = ip_drv_poll();
	work |= ip_pf_poll();
	work |= ip_ipx_poll();
	sys_check_timeouts();
	uint64_t ping = ip_ping_poll();
	uint64_t ns = (uint64_t)sys_timeouts_sleeptime() * 1000000u;
	if (ns > 100000000u)
		ns = 100000000u;
	if (ping && ping < ns)
		ns = ping;
	if (ip.retry)
		ns = 1000000u;
	l->wait_ns = ns ? ns : 1000000u;
	return work;
}

static void on_message(struct ax_evloop *l, struct kmsg *m)
{
	(void)l;
	if (chan_export_serve(m))
		return;
	if (m->type == NETQ_SHOW || m->type == NETQ_PING || m->type == NETQ_PING_STATUS) {
		ip_netq(m);
		return;
	}
	memset(m->w, 0, sizeof(m->w));
	m->type = (uint32_t)-38; /* ENOSYS */
	m->w[6] = (uint64_t)-KE_INVAL;
	ax_reply(m->source, m);
}

/* `service inject ip deaf`: ip runs on, heartbeats included, but no longer reads what the
 * transports send it (a fault only its peers notice; tests of what a new ip finds in
 * T/out). */
static void inject(struct ax_evloop *l, const char *word)
{
	(void)l;
	if (!strcmp(word, "deaf")) {
		ip.deaf = true;
		ax_printf("ip: injected fault: the transports' channels are no longer read\n");
	} else {
		ax_printf("ip: no injectable fault named %s\n", word);
	}
}

static void on_notify(struct ax_evloop *l, uint64_t bits)
{
	(void)l;
	if (!(bits & DS_NOTIFY_BIT))
		return;
	char label[DS_NAME_LEN], key[DS_NAME_LEN];
	while (dsc_check(label, key) == 0)
		ip_ipx_ds_changed(label);
}

static const char *arg(int argc, char **argv, const char *key)
{
	size_t n = strlen(key);
	for (int i = 1; i < argc; i++)
		if (!strncmp(argv[i], key, n) && (argv[i][n] == '=' || argv[i][n] == 0))
			return argv[i][n] == '=' ? argv[i] + n + 1 : "";
	return NULL;
}

/* Configures the interfaces from the arguments (and ds after a restart). */
static int configure(int argc, char **argv)
{
	const char *a;
	/* No address given: DHCP (QEMU's user networking works out of the box). */
	bool dhcp = arg(argc, argv, "dhcp") != NULL || !arg(argc, argv, "addr");
	uint32_t addr = 0, mask = 0, gw = 0;
	if ((a = arg(argc, argv, "addr"))) {
		const char *p;
		int plen = 0;
		if (iph_parse(a, &addr, &p) < 0 || *p++ != '/')
			return -1;
		while (*p >= '0' && *p <= '9')
			plen = plen * 10 + (*p++ - '0');
		if (*p || iph_mask(plen, &mask) < 0)
			return -1;
	}
	if ((a = arg(argc, argv, "gw")) && iph_parse(a, &gw, NULL) < 0)
		return -1;
	for (int i = 1; i < argc; i++)
		if (!strncmp(argv[i], "route=", 6) && ip_static_route(argv[i] + 6) < 0)
			ax_printf("ip: bad route %s: ignored\n", argv[i] + 6);
	for (int i = 0; i < ip.nifs; i++) {
		struct ip_if *f = &ip.ifs[i];
		f->dhcp = dhcp;
		if (!dhcp && i == 0)
			f->cfg_addr = addr, f->cfg_mask = mask, f->cfg_gw = gw;
		if (ax_svc.restarts && ip_state_load(f)) {
			char s1[16], s2[16];
			ax_printf("ip: %s: restored %s/%d gw %s from ds\n", f->name, iph_str(f->cfg_addr, s1),
				  iph_plen(f->cfg_mask), iph_str(f->cfg_gw, s2));
		}
		if (f->cfg_addr)
			ip_if_configured(f);
	}
	return 0;
}

int main(int argc, char **argv)
{
	ax_svc_init(argc, argv);
	const char *ifs = arg(argc, argv, "if");
	if (!ifs)
		ifs = "e1000";
	const char *pfarg = arg(argc, argv, "pf");
	int64_t e = ip_mem_init();
	if (e < 0) {
		ax_printf("ip: cannot make its DMA memory (%lld): needs the dma privilege\n", (long long)e);
		return 1;
	}
	lwip_init();
	/* Queue pairs offered to each driver (netdev_proto.h): a multi-queue NIC spreads flows
	 * over as many as it has, up to this. */
	const char *qarg = arg(argc, argv, "queues");
	unsigned queues = IP_DEF_Q;
	if (qarg) {
		/* digits only, and at most two: a longer number would wrap in ax_atou */
		size_t len = 0;
		while (qarg[len] >= '0' && qarg[len] <= '9')
			len++;
		uint64_t n = !qarg[len] && len <= 2 ? ax_atou(qarg) : 0;
		queues = (unsigned)n;
		if (n < 1 || n > IP_MAX_Q) {
			ax_printf("ip: queues=%s: want 1..%d, using %d\n", qarg, IP_MAX_Q, IP_DEF_Q);
			queues = IP_DEF_Q;
		}
	}
	char name[16];
	for (const char *p = ifs; p && *p;) {
		size_t n = 0;
		while (p[n] && p[n] != ',')
			n++;
		if (n && n < sizeof(name)) {
			memcpy(name, p, n);
			name[n] = 0;
			if ((e = ip_if_add(name, queues)) < 0)
				ax_printf("ip: interface %s: %lld\n", name, (long long)e);
		}
		p += n + (p[n] == ',');
	}
	if (!ip.nifs)
		ax_printf("ip: no interfaces (if=DRIVER)\n");
	if (configure(argc, argv) < 0) {
		ax_printf("ip: bad addr= or gw= argument\n");
		return 1;
	}
	bool pf_on = !pfarg || strcmp(pfarg, "none");
	if ((e = ip_pf_init(pf_on)) < 0 || (e = ip_ipx_init()) < 0 || (e = ip_ping_init()) < 0) {
		ax_printf("ip: cannot export its channels (%lld)\n", (long long)e);
		return 1;
	}
	ax_printf("ip: up, restart %u, %d interface%s, pf %s\n", ax_svc.restarts, ip.nifs, ip.nifs == 1 ? "" : "s",
		  pf_on ? "on (every packet waits for pf's verdict; pf=none passes all)" : "none");
	/* restartable: the lease is in ds, the pools' users re-import, lost packets are resent */
	struct ax_evloop l = { .on_message = on_message, .on_notify = on_notify, .poll = poll, .wait_ns = 1000000,
			       .inject = inject, .restartable = true };
	return (int)ax_evloop_run(&l);
}
