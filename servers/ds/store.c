#include "store.h"
#include "lx_abi.h"

bool ds_name_ok(const char in[DS_NAME_LEN], bool wildcard)
{
	size_t n = 0;
	while (n < DS_NAME_LEN && in[n])
		n++;
	if (n == 0 || n == DS_NAME_LEN)
		return false;
	for (size_t i = n; i < DS_NAME_LEN; i++)
		if (in[i])
			return false; /* NUL-padded, nothing hidden after the end */
	if (wildcard && n == 1 && in[0] == '*')
		return true;
	for (size_t i = 0; i < n; i++)
		if (in[i] < 0x21 || in[i] > 0x7e || in[i] == '/' || in[i] == '*')
			return false;
	return true;
}

static bool name_eq(const char a[DS_NAME_LEN], const char b[DS_NAME_LEN])
{
	for (size_t i = 0; i < DS_NAME_LEN; i++)
		if (a[i] != b[i])
			return false;
	return true;
}

static void name_cpy(char d[DS_NAME_LEN], const char s[DS_NAME_LEN])
{
	for (size_t i = 0; i < DS_NAME_LEN; i++)
		d[i] = s[i];
}

static struct ds_owner *owner_of(struct ds_store *st, uint32_t ep)
{
	for (int i = 0; i < DS_MAX_OWNERS; i++)
		if (ep && st->o[i].ep == ep)
			return &st->o[i];
	return NULL;
}

int ds_register(struct ds_store *st, uint32_t ep, const char label[DS_NAME_LEN])
{
	if (!ep || !ds_name_ok(label, false))
		return -LX_EINVAL;
	struct ds_owner *free_slot = NULL;
	for (int i = 0; i < DS_MAX_OWNERS; i++) {
		struct ds_owner *o = &st->o[i];
		if (o->ep == ep)
			return -LX_EEXIST; /* an endpoint has one label */
		if (o->ep && name_eq(o->label, label)) {
			/* The launcher restarted the service: the new endpoint takes the label over. */
			ds_forget(st, o->ep);
			free_slot = o;
			break;
		}
		if (!o->ep && !free_slot)
			free_slot = o;
	}
	if (!free_slot)
		return -LX_ENOSPC;
	free_slot->ep = ep;
	name_cpy(free_slot->label, label);
	return 0;
}

static bool sub_matches(const struct ds_sub *s, const struct ds_entry *e)
{
	return s->ep && name_eq(s->label, e->label) && ((s->key[0] == '*' && !s->key[1]) || name_eq(s->key, e->key));
}

int ds_put(struct ds_store *st, uint32_t ep, const char key[DS_NAME_LEN], const void *val, uint32_t len,
	   uint32_t *notify, int max, int *nnotify)
{
	*nnotify = 0;
	const struct ds_owner *o = owner_of(st, ep);
	if (!o)
		return -LX_EPERM; /* only registered owners write, and only their own namespace */
	if (!ds_name_ok(key, false) || len > DS_VAL_LEN)
		return -LX_EINVAL;
	struct ds_entry *e = NULL, *free_slot = NULL;
	for (int i = 0; i < DS_MAX_ENTRIES; i++) {
		struct ds_entry *x = &st->e[i];
		if (x->version && name_eq(x->label, o->label) && name_eq(x->key, key))
			e = x;
		else if (!x->version && !free_slot)
			free_slot = x;
	}
	if (!e && !(e = free_slot))
		return -LX_ENOSPC;
	name_cpy(e->label, o->label);
	name_cpy(e->key, key);
	for (uint32_t i = 0; i < DS_VAL_LEN; i++)
		e->val[i] = i < len ? ((const uint8_t *)val)[i] : 0;
	e->len = len;
	e->version = ++st->version;
	for (int i = 0; i < DS_MAX_SUBS; i++) {
		if (!sub_matches(&st->s[i], e))
			continue;
		bool dup = false;
		for (int k = 0; k < *nnotify; k++)
			dup |= notify[k] == st->s[i].ep;
		if (!dup && *nnotify < max)
			notify[(*nnotify)++] = st->s[i].ep;
	}
	return 0;
}

int ds_get(const struct ds_store *st, const char label[DS_NAME_LEN], const char key[DS_NAME_LEN], void *val,
	   uint32_t *len)
{
	if (!ds_name_ok(label, false) || !ds_name_ok(key, false))
		return -LX_EINVAL;
	for (int i = 0; i < DS_MAX_ENTRIES; i++) {
		const struct ds_entry *e = &st->e[i];
		if (e->version && name_eq(e->label, label) && name_eq(e->key, key)) {
			for (uint32_t k = 0; k < DS_VAL_LEN; k++)
				((uint8_t *)val)[k] = e->val[k];
			*len = e->len;
			return 0;
		}
	}
	return -LX_ENOENT;
}

int ds_subscribe(struct ds_store *st, uint32_t ep, const char label[DS_NAME_LEN], const char key[DS_NAME_LEN])
{
	if (!ep || !ds_name_ok(label, false) || !ds_name_ok(key, true))
		return -LX_EINVAL;
	struct ds_sub *free_slot = NULL;
	for (int i = 0; i < DS_MAX_SUBS; i++) {
		struct ds_sub *s = &st->s[i];
		if (s->ep == ep && name_eq(s->label, label) && name_eq(s->key, key))
			return 0;
		if (!s->ep && !free_slot)
			free_slot = s;
	}
	if (!free_slot)
		return -LX_ENOSPC;
	free_slot->ep = ep;
	name_cpy(free_slot->label, label);
	name_cpy(free_slot->key, key);
	/* What exists already counts as a change: a subscriber learns the current state. */
	free_slot->seen = 0;
	return 0;
}

int ds_check(struct ds_store *st, uint32_t ep, char label[DS_NAME_LEN], char key[DS_NAME_LEN])
{
	struct ds_entry *best = NULL;
	for (int i = 0; i < DS_MAX_SUBS; i++) {
		struct ds_sub *s = &st->s[i];
		if (!s->ep || s->ep != ep)
			continue;
		for (int k = 0; k < DS_MAX_ENTRIES; k++) {
			struct ds_entry *e = &st->e[k];
			if (e->version > s->seen && sub_matches(s, e) && (!best || e->version < best->version))
				best = e;
		}
	}
	if (!best)
		return -LX_EAGAIN;
	/* Every subscription of ep that matches has now been told of this version. */
	for (int i = 0; i < DS_MAX_SUBS; i++) {
		struct ds_sub *s = &st->s[i];
		if (s->ep == ep && sub_matches(s, best) && s->seen < best->version)
			s->seen = best->version;
	}
	name_cpy(label, best->label);
	name_cpy(key, best->key);
	return 0;
}

void ds_forget(struct ds_store *st, uint32_t ep)
{
	for (int i = 0; i < DS_MAX_OWNERS; i++)
		if (st->o[i].ep == ep)
			st->o[i].ep = 0;
	for (int i = 0; i < DS_MAX_SUBS; i++)
		if (st->s[i].ep == ep)
			st->s[i].ep = 0;
}
