/* The data store's state machine (servers/ds/store.c): namespaces and rights, subscriptions
 * and change tracking, state surviving an owner's restart, bad names. */
#include "unit.h"
#include "store.h"

static struct ds_store st;
static uint32_t wake[8];
static int nwake;

static const char *nm(const char *s)
{
	static char b[4][DS_NAME_LEN];
	static int i;
	char *d = b[i++ % 4];
	memset(d, 0, DS_NAME_LEN);
	strncpy(d, s, DS_NAME_LEN);
	return d;
}

static int put(uint32_t ep, const char *key, uint64_t v)
{
	return ds_put(&st, ep, nm(key), &v, sizeof(v), wake, 8, &nwake);
}

static uint64_t get(const char *label, const char *key, int *r)
{
	uint64_t v[3] = { 0 };
	uint32_t len = 0;
	*r = ds_get(&st, nm(label), nm(key), v, &len);
	return v[0];
}

static void namespaces_and_rights(void)
{
	memset(&st, 0, sizeof(st));
	int r;
	CHECK_EQ_I64(put(7, "state", 1), -1); /* not registered: EPERM */
	CHECK_EQ_I64(ds_register(&st, 7, nm("tcp")), 0);
	CHECK_EQ_I64(ds_register(&st, 8, nm("udp")), 0);
	CHECK_EQ_I64(ds_register(&st, 7, nm("pf")), -17); /* endpoint has a label */
	CHECK_EQ_I64(put(7, "listeners", 80), 0);
	CHECK_EQ_I64(put(8, "listeners", 53), 0); /* same key, other namespace */
	CHECK_EQ_U64(get("tcp", "listeners", &r), 80);
	CHECK_EQ_U64(get("udp", "listeners", &r), 53);
	CHECK_EQ_I64(put(7, "listeners", 8080), 0); /* overwrite own */
	CHECK_EQ_U64(get("tcp", "listeners", &r), 8080);
	get("tcp", "nothing", &r);
	CHECK_EQ_I64(r, -2);
	uint8_t big[DS_VAL_LEN + 1] = { 0 };
	CHECK_EQ_I64(ds_put(&st, 7, nm("k"), big, sizeof(big), wake, 8, &nwake), -22);
}

static void restart_keeps_state(void)
{
	int r;
	CHECK_EQ_I64(ds_register(&st, 70, nm("tcp")), 0); /* restarted: the new endpoint takes over */
	CHECK_EQ_I64(put(7, "listeners", 1), -1);         /* the old one writes no more */
	CHECK_EQ_U64(get("tcp", "listeners", &r), 8080);  /* its saved state is still there */
	CHECK_EQ_I64(put(70, "listeners", 443), 0);
	CHECK_EQ_U64(get("tcp", "listeners", &r), 443);
}

static void subscriptions(void)
{
	char l[DS_NAME_LEN], k[DS_NAME_LEN];
	CHECK_EQ_I64(ds_subscribe(&st, 100, nm("tcp"), nm("*")), 0);
	CHECK_EQ_I64(ds_subscribe(&st, 101, nm("udp"), nm("listeners")), 0);
	/* Existing entries are reported first. */
	CHECK_EQ_I64(ds_check(&st, 100, l, k), 0);
	CHECK_STR(l, "tcp");
	CHECK_STR(k, "listeners");
	CHECK_EQ_I64(ds_check(&st, 100, l, k), -11);
	CHECK_EQ_I64(put(70, "conns", 5), 0);
	REQUIRE(nwake == 1);
	CHECK_EQ_U64(wake[0], 100);
	CHECK_EQ_I64(put(8, "other", 5), 0);
	CHECK_EQ_I64(nwake, 0); /* 101 watches udp/listeners only */
	CHECK_EQ_I64(put(8, "listeners", 54), 0);
	CHECK(nwake == 1 && wake[0] == 101);
	CHECK_EQ_I64(ds_check(&st, 100, l, k), 0);
	CHECK_STR(k, "conns");
	CHECK_EQ_I64(ds_check(&st, 101, l, k), 0); /* the pre-existing value, now changed */
	CHECK_STR(l, "udp");
	CHECK_EQ_I64(ds_check(&st, 101, l, k), -11);
	ds_forget(&st, 100);
	CHECK_EQ_I64(put(70, "conns", 6), 0);
	CHECK_EQ_I64(nwake, 0);
}

static void bad_names(void)
{
	char raw[DS_NAME_LEN];
	memset(raw, 'a', sizeof(raw)); /* unterminated */
	CHECK(!ds_name_ok(raw, false));
	CHECK(!ds_name_ok(nm(""), false));
	CHECK(!ds_name_ok(nm("a/b"), false));
	CHECK(!ds_name_ok(nm("*"), false));
	CHECK(ds_name_ok(nm("*"), true));
	CHECK(!ds_name_ok(nm("a*"), true));
	CHECK(!ds_name_ok(nm("sp ace"), false));
	memcpy(raw, "ab\0c", 5);
	memset(raw + 5, 0, sizeof(raw) - 5);
	CHECK(!ds_name_ok(raw, false)); /* text hidden after the NUL */
	CHECK(ds_name_ok(nm("net.ip-0_x"), false));
	CHECK_EQ_I64(ds_register(&st, 0, nm("x")), -22);
	CHECK_EQ_I64(ds_subscribe(&st, 5, nm("x"), nm("a*")), -22);
}

static void capacity(void)
{
	memset(&st, 0, sizeof(st));
	REQUIRE(ds_register(&st, 1, nm("big")) == 0);
	char key[16];
	int r = 0;
	for (int i = 0; i < DS_MAX_ENTRIES && !r; i++) {
		snprintf(key, sizeof(key), "k%d", i);
		r = put(1, key, (uint64_t)i);
	}
	CHECK_EQ_I64(r, 0);
	CHECK_EQ_I64(put(1, "onemore", 1), -28);
	CHECK_EQ_I64(put(1, "k7", 77), 0); /* overwriting still works when full */
	CHECK_EQ_U64(get("big", "k7", &r), 77);
}

int main(void)
{
	unit_begin(__FILE__);
	RUN(namespaces_and_rights);
	RUN(restart_keeps_state);
	RUN(subscriptions);
	RUN(bad_names);
	RUN(capacity);
	return unit_end();
}
