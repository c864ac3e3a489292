/* Keeping ds told (servers/rs/README.md, "ds"): rs registers each service's label with ds
 * (only ds's parent may) and publishes every service's state under its own label `rs`, so
 * subscribers learn of restarts. rs must never block on a server, so messages go out with
 * KC_SENDNB, which delivers only while ds waits in receive; what ds could not take stays in
 * an outbox and is retried. Everything in the outbox can be rebuilt from rs's own table, so
 * an overflow (ds stuck for long) just rebuilds it. */
#include "rs.h"
#include "ds_proto.h"

#define OUTBOX 128

static struct kmsg outbox[OUTBOX];
static uint32_t ohead, otail;

static endpoint_t ds_endpoint(void)
{
	const struct svc *ds = svc_by_name("ds");
	return ds && ds->up.phase == UP_NONE ? ds->ep : 0;
}

static void resync(void);

static void queue(const struct kmsg *m)
{
	if (ohead - otail == OUTBOX) {
		resync();
		return;
	}
	outbox[ohead++ % OUTBOX] = *m;
}

static void queue_register(endpoint_t ep, const char *label)
{
	struct kmsg m = { .type = DS_REGISTER, .w = { ep } };
	if (ax_strpad(&m.w[1], DS_NAME_LEN, label) == 0)
		queue(&m);
	else
		rs_log("%s has no ds label (names in ds are up to %d characters)", label, DS_NAME_LEN - 1);
}

static void queue_publish(const struct svc *s)
{
	struct kmsg m = { .type = DS_PUT };
	if (ax_strpad(&m.w[0], DS_NAME_LEN, s->c.name) < 0)
		return;
	m.w[2] = s->ep | (uint64_t)s->restarts << 32;
	m.w[3] = svc_state(s);
	m.w[4] = s->started_ns;
	m.w[5] = 24;
	queue(&m);
}

/* Everything ds should know, from scratch. */
static void resync(void)
{
	otail = ohead = 0;
	queue_register(ax_self(), "rs");
	for (int i = 0; i < nsvc; i++)
		if (svcs[i].ep && strcmp(svcs[i].c.name, "ds"))
			queue_register(svcs[i].ep, svcs[i].c.name);
	for (int i = 0; i < nsvc; i++)
		queue_publish(&svcs[i]);
}

/* Set when ds restarted: once the outbox is empty (labels registered in the new ds), every
 * service is told to republish. Telling them earlier would let their puts overtake the
 * registrations (their calls queue at ds; our non-blocking sends only land when it waits). */
static void tell_republish(void);
static bool republish_due;

bool rsds_flush(void)
{
	endpoint_t ds = ds_endpoint();
	if (!ds)
		return false; /* ds is down: its start resyncs */
	while (otail != ohead) {
		if (ax_sendnb(ds, &outbox[otail % OUTBOX]) == -KE_AGAIN)
			return true;
		otail++; /* delivered, or ds died (then its restart resyncs) */
	}
	if (republish_due)
		tell_republish();
	return false;
}

/* Never waits for ds: what it cannot take now the main loop offers again every 2 ms. A wait
 * here spun (our wait returns at once while a call to us is queued, and a service's lookup
 * often is) at our priority, and kept ds, queued behind us on our CPU, from ever taking it:
 * boots where no label landed for 14 s. A service whose first put overtakes its label is
 * refused and asks again (lib/ds/ds_client.c, for up to 10 s). */
void rsds_registered(struct svc *s, endpoint_t ep)
{
	if (!ds_endpoint())
		return;
	queue_register(ep, s->c.name);
	rsds_flush();
}

void rsds_publish(const struct svc *s)
{
	if (ds_endpoint())
		queue_publish(s);
}


void rsds_resync(void)
{
	resync();
	rsds_flush();
}

void rsds_ds_started(struct svc *ds)
{
	resync();
	rsds_flush();
	republish_due = ds->incarnation > 0; /* a restart or a live update: what it kept is gone */
}

/* Tells every running service to republish, once ds has every label. */
static void tell_republish(void)
{
	struct svc *ds = svc_by_name("ds");
	int n = 0;
	republish_due = false;
	for (int i = 0; i < nsvc; i++) {
		struct svc *s = &svcs[i];
		if (s != ds && s->ep) {
			s->ds_for_cmd = ds->ep;
			svc_queue_cmd(s, RS_DO_DS);
			n++;
		}
	}
	rs_log("ds restarted: labels registered again, %d services told to republish", n);
}
