/* The data store's message protocol (servers/ds): one 64-byte kernel message per request,
 * the reply in the same message. Names are NUL-padded: a label up to 15 characters (the
 * owner's service name) and a key up to 15; a value is up to 24 bytes. */
#pragma once
#include <stdint.h>

#define DS_NAME_LEN 16
#define DS_VAL_LEN 24

/* Requests (kmsg.type); results come back in w[6] (0 or -errno). */
#define DS_REGISTER 0x6401  /* w[0] = endpoint, w[1..2] = label: only ds's parent may call */
#define DS_PUT 0x6402       /* w[0..1] = key, w[2..4] = value, w[5] = length: under the caller's label */
#define DS_GET 0x6403       /* w[0..1] = label, w[2..3] = key -> w[2..4] value, w[5] length */
#define DS_SUBSCRIBE 0x6404 /* w[0..1] = label, w[2..3] = key or "*": notify on every change */
#define DS_CHECK 0x6405     /* -> the oldest change the caller has not seen: w[0..1] label,
                               w[2..3] key (value by DS_GET); w[6] = -EAGAIN when none */

/* Notification bit ds sets in a subscriber's pending word when something it watches changed. */
#define DS_NOTIFY_BIT (1ull << 62)
