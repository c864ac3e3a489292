/* pf's state in ds (README.md, "State"): the rules as 24-byte values under pf's label, and
 * the connection table rebuilt from the socket engines' tables after a restart. */
#include "pf.h"
#include "ds_client.h"
#include "heartbeat.h"
#include "sock_proto.h"

#define PF_DS_MAGIC 0x31524650u /* "PFR1" */

/* "nrules": how many "r.N" keys are the rule list, and a check over them, so a list half
 * written when pf died is not taken for a whole one. */
struct pf_ds_count {
	uint32_t magic, count;
	uint64_t sum;
	uint64_t pad;
};
_Static_assert(sizeof(struct pf_ds_count) <= DS_VAL_LEN, "one ds value");

static uint64_t checksum(const struct pf_rule *rules, int n)
{
	uint64_t h = 0xcbf29ce484222325ull;
	const uint8_t *p = (const uint8_t *)rules;
	for (size_t i = 0; i < (size_t)n * sizeof(*rules); i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return h;
}

static void rule_key(char key[DS_NAME_LEN], int i) { ksnprintf(key, DS_NAME_LEN, "r.%d", i); }

void pf_store_save(void)
{
	int failed = 0;
	for (int i = 0; i < pf_f.nrules; i++) {
		char key[DS_NAME_LEN];
		rule_key(key, i);
		ax_heartbeat(); /* up to 257 calls to ds */
		failed += dsc_put(key, &pf_f.rules[i], sizeof(pf_f.rules[i])) < 0;
	}
	struct pf_ds_count c = { PF_DS_MAGIC, (uint32_t)pf_f.nrules, checksum(pf_f.rules, pf_f.nrules), 0 };
	failed += dsc_put("nrules", &c, sizeof(c)) < 0;
	if (failed)
		ax_printf("pf: %d puts to ds failed: rules not saved\n", failed);
}

int pf_store_load(struct pf_rule *rules, int max)
{
	struct pf_ds_count c;
	uint32_t len = 0;
	if (dsc_get(PF_LABEL, "nrules", &c, &len) < 0 || len != sizeof(c) || c.magic != PF_DS_MAGIC ||
	    c.count > (uint32_t)max)
		return -1;
	for (uint32_t i = 0; i < c.count; i++) {
		char key[DS_NAME_LEN];
		rule_key(key, (int)i);
		if (dsc_get(PF_LABEL, key, &rules[i], &len) < 0 || len != sizeof(rules[i]) || !pf_rule_valid(&rules[i]))
			return -1;
	}
	return checksum(rules, (int)c.count) == c.sum ? (int)c.count : -1;
}

static uint32_t ntoh32(uint32_t v) { return __builtin_bswap32(v); }
static uint16_t ntoh16(uint16_t v) { return __builtin_bswap16(v); }

/* The decimal string under label/"nslots" (the table's high-water mark), or 0. */
static uint32_t nslots(const char *label)
{
	char v[DS_VAL_LEN + 1];
	uint32_t len = 0;
	if (dsc_get(label, "nslots", v, &len) < 0 || len > DS_VAL_LEN)
		return 0;
	v[len] = 0;
	uint64_t n = ax_atou(v);
	return n > 4096 ? 4096 : (uint32_t)n;
}

int pf_store_rebuild_states(struct pf_filter *f, uint64_t now)
{
	static const struct {
		const char *label;
		uint8_t proto;
		uint64_t tmo;
	} engines[] = { { "udp", PF_PROTO_UDP, PF_TMO_UDP }, { "tcp", PF_PROTO_TCP, PF_TMO_TCP_EST } };
	int made = 0;
	for (size_t e = 0; e < sizeof(engines) / sizeof(engines[0]); e++) {
		uint32_t n = nslots(engines[e].label);
		for (uint32_t i = 0; i < n; i++) {
			ax_heartbeat();
			char key[DS_NAME_LEN];
			struct sk_dsrec r;
			uint32_t len = 0;
			ksnprintf(key, sizeof(key), "s.%u", i);
			if (dsc_get(engines[e].label, key, &r, &len) < 0 || len != sizeof(r))
				continue;
			if (!r.sock || !r.rport || !r.raddr || !r.lport)
				continue; /* free, or not connected: nothing to let back in */
			struct pf_key k = { engines[e].proto, ntoh32(r.laddr), ntoh32(r.raddr), ntoh16(r.lport),
					    ntoh16(r.rport) };
			if (pf_state_insert(&f->states, &k, PF_OUT, now, engines[e].tmo))
				made++;
		}
	}
	return made;
}
