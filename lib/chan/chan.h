/* Common definitions of the channel library (lib/chan, see README.md). Freestanding C11:
 * builds for the host (unit tests, benchmark) and for Axolotl user programs. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Results. Operations return 0 on success and one of these otherwise. */
#define CHAN_EAGAIN (-1)   /* queue full (push) or empty (pop); pool exhausted */
#define CHAN_ECORRUPT (-2) /* the peer wrote an impossible value into shared memory */
#define CHAN_EINVAL (-3)   /* bad argument or a header that does not validate */
#define CHAN_EDOUBLE (-4)  /* pool: the buffer is already free */

#define CHAN_CACHE_LINE 64

/* The runtime provides these (libc on the host, kernel/lib/string.c on Axolotl). */
void *memcpy(void *restrict d, const void *restrict s, size_t n);
void *memset(void *d, int c, size_t n);

static inline bool chan_is_pow2(uint64_t x) { return x && !(x & (x - 1)); }
