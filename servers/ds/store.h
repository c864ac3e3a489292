/* The data store's state, independent of IPC (host unit tests): entries in per-owner
 * namespaces, owners registered by the launcher, subscriptions with change tracking. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "ds_proto.h"

#define DS_MAX_ENTRIES 256
#define DS_MAX_OWNERS 64
#define DS_MAX_SUBS 128

struct ds_entry {
	char label[DS_NAME_LEN], key[DS_NAME_LEN];
	uint8_t val[DS_VAL_LEN];
	uint32_t len;
	uint64_t version; /* 0: free slot */
};

struct ds_owner {
	uint32_t ep; /* 0: free */
	char label[DS_NAME_LEN];
};

struct ds_sub {
	uint32_t ep; /* 0: free */
	char label[DS_NAME_LEN], key[DS_NAME_LEN]; /* key "*": any key of the label */
	uint64_t seen; /* highest entry version reported to it */
};

struct ds_store {
	struct ds_entry e[DS_MAX_ENTRIES];
	struct ds_owner o[DS_MAX_OWNERS];
	struct ds_sub s[DS_MAX_SUBS];
	uint64_t version;
};

/* Names: 1-15 printable characters without '/' and '*' (a key may be "*" in subscriptions
 * only); copied NUL-padded from a possibly unterminated 16-byte field. */
bool ds_name_ok(const char in[DS_NAME_LEN], bool wildcard);

/* All return 0 or a negative errno value (Linux numbering). */
/* A label already held by another endpoint passes to ep (the service was restarted). */
int ds_register(struct ds_store *st, uint32_t ep, const char label[DS_NAME_LEN]);
/* Writes key under ep's label; *notify gets up to max subscriber endpoints to wake, *nnotify
 * their number. */
int ds_put(struct ds_store *st, uint32_t ep, const char key[DS_NAME_LEN], const void *val, uint32_t len,
	   uint32_t *notify, int max, int *nnotify);
int ds_get(const struct ds_store *st, const char label[DS_NAME_LEN], const char key[DS_NAME_LEN],
	   void *val, uint32_t *len);
int ds_subscribe(struct ds_store *st, uint32_t ep, const char label[DS_NAME_LEN], const char key[DS_NAME_LEN]);
/* The oldest change ep's subscriptions match that it has not been told of (-EAGAIN: none). */
int ds_check(struct ds_store *st, uint32_t ep, char label[DS_NAME_LEN], char key[DS_NAME_LEN]);
/* ep is gone: its registration and subscriptions go; its entries stay (saved state for the
 * restarted server, which is registered again under the same label). */
void ds_forget(struct ds_store *st, uint32_t ep);
