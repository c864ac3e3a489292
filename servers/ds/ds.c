/* ds: the data store. Servers keep state that must outlive them under their own label and
 * publish names others look up or subscribe to (servers/ds/README.md). Kernel IPC only: a
 * call per request, the answer in the reply; subscribers are woken by notification. */
#include "axrt.h"
#include "evloop.h"
#include "store.h"
#include "service.h"

static struct ds_store store;
static endpoint_t launcher; /* our parent: the only one who may register labels */

static void wake_subscribers(const uint32_t *eps, int n)
{
	for (int i = 0; i < n; i++)
		if (ax_notify(eps[i], DS_NOTIFY_BIT) == -KE_DEADSRCDST)
			ds_forget(&store, eps[i]); /* gone: its subscriptions with it */
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
		break;
	case DS_PUT:
		r = m->w[5] > DS_VAL_LEN ? -KE_INVAL
					 : ds_put(&store, from, w, w + 16, (uint32_t)m->w[5], notify, 16, &n);
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
	m->w[6] = (uint64_t)r;
	ax_reply(from, m); /* never blocks: a client that did not call just misses the answer */
	wake_subscribers(notify, n);
}

int main(int argc, char **argv)
{
	ax_svc_init(argc, argv); /* heartbeats when rs asks for them */
	launcher = (endpoint_t)kcall1(KC_INFO, KI_PARENT);
	/* restartable: every service puts its keys again when ds comes back (lib/ds) */
	struct ax_evloop l = { .on_message = on_message, .restartable = true };
	ax_printf("ds: ready, launcher %#x\n", (unsigned)launcher);
	return (int)ax_evloop_run(&l);
}
