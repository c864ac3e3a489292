/* ds: the data store. Servers keep state that must outlive them under their own label and
 * publish names others look up or subscribe to (servers/ds/README.md). Kernel IPC only: a
 * call per request, the answer in the reply; subscribers are woken by notification. */
#include "axrt.h"
#include "evloop.h"
#include "store.h"
#include "service.h"

static struct ds_store store;
static endpoint_t launcher; /* our parent: the only one who may register labels */

/* Puts from endpoints without a label yet, kept unanswered until the label lands, or
 * refused at the first message after HOLD_NS (rs's heartbeat ping at the latest). rs
 * registers a label without waiting for us, so at boot a service's first put can overtake
 * it. Refused at once, every service asked again and again, we spent all our time refusing,
 * and rs's registrations (non-blocking sends, which land only while we wait in receive)
 * never landed: boots where vfs, ip and syscall were killed as hung. So we keep waiting in
 * receive (no timed wait) while we hold. */
#define HOLD_MAX 32
#define HOLD_NS 1000000000ull
static struct {
	struct kmsg m;
	uint64_t since; /* ax_time_ns(); 0: a free slot */
} held[HOLD_MAX];
static int nheld;

static void wake_subscribers(const uint32_t *eps, int n)
{
	for (int i = 0; i < n; i++)
		if (ax_notify(eps[i], DS_NOTIFY_BIT) == -KE_DEADSRCDST)
			ds_forget(&store, eps[i]); /* gone: its subscriptions with it */
}

static void answer(struct kmsg *m, int64_t r)
{
	m->w[6] = (uint64_t)r;
	ax_reply(m->source, m); /* never blocks: a client that did not call just misses the answer */
}

/* A DS_PUT from m->source; *n subscribers to wake go into notify[16]. */
static int64_t put(const struct kmsg *m, uint32_t *notify, int *n)
{
	const char *w = (const char *)m->w;
	return m->w[5] > DS_VAL_LEN ? -KE_INVAL : ds_put(&store, m->source, w, w + 16, (uint32_t)m->w[5], notify, 16, n);
}

/* Keeps a refused put; a full table refuses its oldest to make room. */
static void hold(const struct kmsg *m)
{
	int slot = 0;
	for (int i = 0; i < HOLD_MAX; i++) {
		if (!held[i].since) {
			slot = i;
			break;
		}
		if (held[i].since < held[slot].since)
			slot = i;
	}
	if (held[slot].since)
		answer(&held[slot].m, -KE_PERM);
	else
		nheld++;
	held[slot].m = *m;
	held[slot].since = ax_time_ns() | 1;
}

static void release(int i, bool labelled)
{
	uint32_t notify[16];
	int n = 0;
	held[i].since = 0;
	nheld--;
	answer(&held[i].m, labelled ? put(&held[i].m, notify, &n) : -KE_PERM);
	wake_subscribers(notify, n);
}

/* Held puts past their time are refused (the client asks again for a while: lib/ds). */
static bool expire_held(struct ax_evloop *l)
{
	(void)l;
	uint64_t now = nheld ? ax_time_ns() : 0;
	for (int i = 0; i < HOLD_MAX && nheld; i++)
		if (held[i].since && now - held[i].since >= HOLD_NS)
			release(i, false);
	return false; /* never busy: the loop waits in receive */
}

static void on_message(struct ax_evloop *l, struct kmsg *m)
{
	(void)l;
	endpoint_t from = m->source;
	const char *w = (const char *)m->w;
	int64_t r;
	uint32_t len = 0, notify[16];
	int n = 0;
	switch (m->type) {
	case DS_REGISTER:
		if (from != launcher) /* (rs restarted: our parent is its successor now) */
			launcher = (endpoint_t)kcall1(KC_INFO, KI_PARENT);
		if (from != launcher)
			r = -KE_PERM;
		else if (m->w[0] > 0xffffffffull)
			r = -KE_INVAL;
		else
			r = ds_register(&store, (uint32_t)m->w[0], w + 8);
		/* its puts that came first are stored before anyone hears of the label */
		for (int i = 0; r == 0 && i < HOLD_MAX && nheld; i++)
			if (held[i].since && held[i].m.source == (endpoint_t)m->w[0])
				release(i, true);
		break;
	case DS_PUT:
		r = put(m, notify, &n);
		if (r == -KE_PERM && from != launcher) {
			hold(m);
			return;
		}
		break;
	case DS_GET: {
		uint8_t val[DS_VAL_LEN];
		r = ds_get(&store, w, w + 16, val, &len);
		memset(&m->w[2], 0, 3 * 8);
		if (r == 0)
			memcpy(&m->w[2], val, DS_VAL_LEN);
		m->w[5] = len;
		break;
	}
	case DS_SUBSCRIBE:
		r = ds_subscribe(&store, from, w, w + 16);
		break;
	case DS_CHECK: {
		char label[DS_NAME_LEN], key[DS_NAME_LEN];
		r = ds_check(&store, from, label, key);
		memset(m->w, 0, 4 * 8);
		if (r == 0) {
			memcpy(&m->w[0], label, DS_NAME_LEN);
			memcpy(&m->w[2], key, DS_NAME_LEN);
		}
		break;
	}
	default:
		r = -KE_NOSYS;
	}
	answer(m, r);
	wake_subscribers(notify, n);
}

int main(int argc, char **argv)
{
	ax_svc_init(argc, argv); /* heartbeats when rs asks for them */
	launcher = (endpoint_t)kcall1(KC_INFO, KI_PARENT);
	/* restartable: every service puts its keys again when ds comes back (lib/ds) */
	struct ax_evloop l = { .on_message = on_message, .poll = expire_held, .restartable = true };
	ax_printf("ds: ready, launcher %#x\n", (unsigned)launcher);
	return (int)ax_evloop_run(&l);
}
