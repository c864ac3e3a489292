#include "ds_client.h"
#include "lx_abi.h"
#include "service.h"

/* Keys we put, kept to put again should ds restart: ip alone has 38 (its channels and pools
 * per driver and queue, per transport, to pf, and its interfaces' leases). */
#define MAX_KEYS 64
#define MAX_SUBS 8

static endpoint_t ds;
static struct { char key[DS_NAME_LEN]; uint8_t val[DS_VAL_LEN]; uint32_t len; bool used; } keys[MAX_KEYS];
static struct { char label[DS_NAME_LEN], key[DS_NAME_LEN]; bool used; } subs[MAX_SUBS];

/* One request to ds; finds ds through rs first, and again once if ds has been replaced. */
static int64_t ds_call(struct kmsg *m)
{
	struct kmsg saved = *m;
	for (int tries = 0; tries < 2; tries++) {
		if (!ds) {
			int64_t ep = ax_svc_lookup("ds", NULL);
			if (ep < 0)
				return ep;
			ds = (endpoint_t)ep;
		}
		*m = saved;
		int64_t r = ax_call(ds, m);
		if (r == 0)
			return (int64_t)m->w[6] == -LX_ENOENT ? -KE_SRCH : (int64_t)m->w[6];
		if (r != -KE_DEADSRCDST && r != -KE_SRCH)
			return r;
		ds = 0;
	}
	return -KE_DEADSRCDST;
}

/* rs registers a service's label with ds as it starts it, without blocking on ds: on a busy
 * boot (TCG, two QEMUs on one host) the label can land after the service's first put. ds
 * holds such a put until the label lands (up to about a second), then refuses it with EPERM;
 * a refused put is asked again for a while rather than failing the service's start (and its
 * restart into the same race). */
#define LABEL_WAIT_NS 10000000000ull
#define LABEL_RETRY_NS 5000000ull

static int64_t put_raw(const char key[DS_NAME_LEN], const void *val, uint32_t len)
{
	static const uint64_t never_rung = 0;
	for (uint64_t t0 = ax_time_ns();; ax_wait_timeout(&never_rung, 0, LABEL_RETRY_NS)) {
		struct kmsg m = { .type = DS_PUT }; /* (made again each time: the answer overwrites it) */
		memcpy(&m.w[0], key, DS_NAME_LEN);
		memcpy(&m.w[2], val, len);
		m.w[5] = len;
		int64_t r = ds_call(&m);
		if (r != -KE_PERM)
			return r;
		uint64_t waited = ax_time_ns() - t0;
		if (waited >= LABEL_WAIT_NS) {
			ax_printf("%s: ds refused our put of %.16s for %llu ms: is our label registered?\n", ax_svc.name, key,
				  (unsigned long long)(waited / 1000000));
			return r;
		}
	}
}

static int64_t subscribe_raw(const char label[DS_NAME_LEN], const char key[DS_NAME_LEN])
{
	struct kmsg m = { .type = DS_SUBSCRIBE };
	memcpy(&m.w[0], label, DS_NAME_LEN);
	memcpy(&m.w[2], key, DS_NAME_LEN);
	return ds_call(&m);
}

/* Remembers key = val as ours, for a ds restart; false if there is no room. */
static bool remember(const char k[DS_NAME_LEN], const void *val, uint32_t len)
{
	int slot = -1;
	for (int i = 0; i < MAX_KEYS && slot < 0; i++)
		if (keys[i].used && !memcmp(keys[i].key, k, DS_NAME_LEN))
			slot = i;
	for (int i = 0; i < MAX_KEYS && slot < 0; i++)
		if (!keys[i].used)
			slot = i;
	if (slot >= 0) { /* remembered for a ds restart; beyond MAX_KEYS keys only ds has them */
		memcpy(keys[slot].key, k, DS_NAME_LEN);
		memset(keys[slot].val, 0, DS_VAL_LEN);
		memcpy(keys[slot].val, val, len);
		keys[slot].len = len;
		keys[slot].used = true;
	} else {
		static bool said;
		if (!said) /* (a restarted ds would not have it: say so once) */
			ax_printf("%s: more than %d keys in ds: %.16s would be lost should ds restart\n", ax_svc.name,
				  MAX_KEYS, k);
		said = true;
	}
	return slot >= 0;
}

int64_t dsc_put(const char *key, const void *val, uint32_t len)
{
	char k[DS_NAME_LEN];
	if (len > DS_VAL_LEN || ax_strpad(k, DS_NAME_LEN, key) < 0)
		return -KE_INVAL;
	remember(k, val, len);
	return put_raw(k, val, len);
}

int64_t dsc_get(const char *label, const char *key, void *val, uint32_t *len)
{
	struct kmsg m = { .type = DS_GET };
	if (ax_strpad(&m.w[0], DS_NAME_LEN, label) < 0 || ax_strpad(&m.w[2], DS_NAME_LEN, key) < 0)
		return -KE_INVAL;
	int64_t r = ds_call(&m);
	if (r == 0) {
		uint32_t n = m.w[5] > DS_VAL_LEN ? DS_VAL_LEN : (uint32_t)m.w[5];
		memset(val, 0, DS_VAL_LEN);
		memcpy(val, &m.w[2], n);
		if (len)
			*len = n;
		/* Our own state, as a predecessor put it (we restart): ours to put again should
		 * ds restart, as if we had put it ourselves. */
		char k[DS_NAME_LEN];
		if (!strcmp(label, ax_svc.label) && ax_strpad(k, DS_NAME_LEN, key) == 0)
			remember(k, val, n);
	}
	return r;
}

int64_t dsc_subscribe(const char *label, const char *key)
{
	char l[DS_NAME_LEN], k[DS_NAME_LEN];
	if (ax_strpad(l, DS_NAME_LEN, label) < 0 || ax_strpad(k, DS_NAME_LEN, key) < 0)
		return -KE_INVAL;
	for (int i = 0; i < MAX_SUBS; i++)
		if (!subs[i].used) {
			memcpy(subs[i].label, l, DS_NAME_LEN);
			memcpy(subs[i].key, k, DS_NAME_LEN);
			subs[i].used = true;
			break;
		}
	return subscribe_raw(l, k);
}

int64_t dsc_check(char label[DS_NAME_LEN], char key[DS_NAME_LEN])
{
	struct kmsg m = { .type = DS_CHECK };
	int64_t r = ds_call(&m);
	if (r == 0) {
		memcpy(label, &m.w[0], DS_NAME_LEN);
		memcpy(key, &m.w[2], DS_NAME_LEN);
		label[DS_NAME_LEN - 1] = key[DS_NAME_LEN - 1] = 0;
	}
	return r; /* -KE_AGAIN (ds's EAGAIN) when nothing changed */
}

void dsc_restarted(endpoint_t new_ds)
{
	ds = new_ds;
	int nk = 0, ns = 0, bad = 0;
	for (int i = 0; i < MAX_KEYS; i++) {
		if (!keys[i].used)
			continue;
		put_raw(keys[i].key, keys[i].val, keys[i].len) == 0 ? nk++ : bad++;
	}
	for (int i = 0; i < MAX_SUBS; i++)
		if (subs[i].used)
			subscribe_raw(subs[i].label, subs[i].key) == 0 ? ns++ : bad++;
	ax_printf("%s: ds restarted, published %d keys and %d subscriptions again (%d failed)\n",
		  ax_svc.name, nk, ns, bad);
}
