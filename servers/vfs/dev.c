/* The character devices beyond null, zero and the console: /dev/full, /dev/random and
 * /dev/urandom. The random bytes come from xoshiro256**, a fast generator seeded from RDRAND
 * where the CPU has it, else from the TSC and the clock: NOT cryptographically strong (an
 * entropy pool is to come); /dev/random never blocks, as on Linux since 5.6. */
#include "vfs.h"
#include "lx_abi.h"

static uint64_t s[4];
static char buf[4096];

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

static uint64_t next(void)
{
	uint64_t r = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
	s[2] ^= s[0], s[3] ^= s[1], s[1] ^= s[2], s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return r;
}

static bool has_rdrand(void)
{
	uint32_t a = 1, b, c = 0, d;
	__asm__ volatile("cpuid" : "+a"(a), "=b"(b), "+c"(c), "=d"(d));
	return c & (1u << 30);
}

/* One RDRAND value, or 0 after repeated failures (the CPU's generator is busy). */
static uint64_t rdrand(void)
{
	for (int i = 0; i < 10; i++) {
		uint64_t v;
		uint8_t ok;
		__asm__ volatile("rdrand %0; setc %1" : "=r"(v), "=qm"(ok));
		if (ok)
			return v;
	}
	return 0;
}

/* splitmix64: spreads a seed word over the state, as xoshiro's authors advise. */
static uint64_t mix(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

void dev_init(void)
{
	bool hw = has_rdrand();
	uint64_t seed = ax_rdtsc() ^ vfs_now() ^ ((uint64_t)ax_self() << 32);
	for (int i = 0; i < 4; i++)
		s[i] = mix(&seed) ^ (hw ? rdrand() : ax_rdtsc());
	if (!(s[0] | s[1] | s[2] | s[3]))
		s[0] = 1; /* the one state xoshiro cannot leave */
}

int64_t dev_transfer(struct client *c, const struct rnode *n, uint64_t ubuf, uint64_t len, bool write)
{
	if (write) /* full is always full; random takes what is written and ignores it */
		return n->dev == DEV_FULL ? -LX_ENOSPC : (int64_t)len;
	uint64_t done = 0;
	while (done < len) {
		uint64_t k = len - done < sizeof(buf) ? len - done : sizeof(buf);
		if (n->dev == DEV_FULL) {
			memset(buf, 0, k);
		} else {
			for (uint64_t i = 0; i < k; i += 8) {
				uint64_t v = next();
				memcpy(buf + i, &v, k - i < 8 ? k - i : 8);
			}
		}
		if (ax_vcopy(EP_NONE, buf, c->ep, (void *)(ubuf + done), k) < 0)
			return done ? (int64_t)done : -LX_EFAULT;
		done += k;
	}
	return (int64_t)done;
}
