/* The connection table (state.h): a fixed array with hash chains and a free list, so
 * nothing is allocated and a full table is a counted refusal, not a crash. */
#include "state.h"

static uint32_t hash(const struct pf_key *k)
{
	/* The local address is left out: an entry with local address 0 must be found too. */
	uint32_t h = k->raddr * 0x9e3779b1u;
	h ^= ((uint32_t)k->lport << 16 | k->rport) * 0x85ebca6bu;
	h ^= k->proto * 0xc2b2ae35u;
	h ^= h >> 15;
	return h % PF_STATE_BUCKETS;
}

static bool same(const struct pf_key *e, const struct pf_key *k)
{
	return e->proto == k->proto && e->lport == k->lport && e->raddr == k->raddr && e->rport == k->rport &&
	       (e->laddr == k->laddr || e->laddr == 0);
}

void pf_state_init(struct pf_state_table *t)
{
	for (int i = 0; i < PF_STATE_BUCKETS; i++)
		t->bucket[i] = -1;
	for (int i = 0; i < PF_STATES; i++) {
		t->e[i] = (struct pf_state){ .next = (int16_t)(i + 1 < PF_STATES ? i + 1 : -1) };
	}
	t->free_head = 0;
	t->count = 0;
}

/* Unlinks entry i, whose predecessor in its chain is prev (-1: the bucket head). */
static void unlink_entry(struct pf_state_table *t, uint32_t b, int prev, int i)
{
	if (prev < 0)
		t->bucket[b] = t->e[i].next;
	else
		t->e[prev].next = t->e[i].next;
	t->e[i].used = 0;
	t->e[i].next = t->free_head;
	t->free_head = (int16_t)i;
	t->count--;
}

struct pf_state *pf_state_find(struct pf_state_table *t, const struct pf_key *k, uint64_t now)
{
	uint32_t b = hash(k);
	int prev = -1;
	for (int i = t->bucket[b]; i >= 0;) {
		int next = t->e[i].next;
		if (t->e[i].expires <= now) {
			unlink_entry(t, b, prev, i);
		} else {
			if (same(&t->e[i].k, k))
				return &t->e[i];
			prev = i;
		}
		i = next;
	}
	return NULL;
}

struct pf_state *pf_state_insert(struct pf_state_table *t, const struct pf_key *k, uint8_t dir, uint64_t now,
				 uint64_t tmo)
{
	struct pf_state *s = pf_state_find(t, k, now);
	if (s) {
		if (s->expires < now + tmo)
			s->expires = now + tmo;
		return s;
	}
	if (t->free_head < 0 && pf_state_expire(t, now) == 0)
		return NULL;
	int i = t->free_head;
	t->free_head = t->e[i].next;
	uint32_t b = hash(k);
	t->e[i] = (struct pf_state){ .k = *k, .used = 1, .phase = PFS_EST, .dir = dir, .next = t->bucket[b],
				     .expires = now + tmo };
	t->bucket[b] = (int16_t)i;
	t->count++;
	return &t->e[i];
}

uint32_t pf_state_expire(struct pf_state_table *t, uint64_t now)
{
	uint32_t n = 0;
	for (uint32_t b = 0; b < PF_STATE_BUCKETS; b++) {
		int prev = -1;
		for (int i = t->bucket[b]; i >= 0;) {
			int next = t->e[i].next;
			if (t->e[i].expires <= now) {
				unlink_entry(t, b, prev, i);
				n++;
			} else {
				prev = i;
			}
			i = next;
		}
	}
	return n;
}

const struct pf_state *pf_state_nth(const struct pf_state_table *t, uint32_t n)
{
	for (int i = 0; i < PF_STATES; i++)
		if (t->e[i].used && n-- == 0)
			return &t->e[i];
	return NULL;
}
