/* The data store from a service's side (servers/ds/README.md). ds is found through rs; every
 * key a service puts and every subscription it makes is remembered here, so when ds is
 * restarted (rs sends RS_DO_DS) everything is published again without the service's help. */
#pragma once
#include "axrt.h"
#include "ds_proto.h"

/* Under the caller's own label (the service name rs registered for it). 0 or -KE_*. */
int64_t dsc_put(const char *key, const void *val, uint32_t len);
/* Anyone's key; *len gets the value's length. 0, -KE_SRCH (ENOENT in ds) or another error. */
int64_t dsc_get(const char *label, const char *key, void *val, uint32_t *len);
/* Notify us (DS_NOTIFY_BIT) when label/key changes; key "*" for all of the label's keys. */
int64_t dsc_subscribe(const char *label, const char *key);
/* The oldest change we have not seen: 0 with label and key (NUL-terminated, 16 bytes
 * each), or -KE_AGAIN when there is none. */
int64_t dsc_check(char label[DS_NAME_LEN], char key[DS_NAME_LEN]);
/* ds was restarted as `ds`: publish every remembered key and subscription again. */
void dsc_restarted(endpoint_t ds);
