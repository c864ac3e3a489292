/* Channel library (lib/chan), single-threaded: queue geometry and header validation,
 * full/empty, wrap-around, a malicious peer's header and indices, the doorbell protocol's
 * decisions, pools and rich pointers, the request database. Every shared region is a heap
 * block of exactly the channel's size, so ASan catches any access outside it. */
#include "unit.h"
#include "spsc.h"
#include "doorbell.h"
#include "pool.h"
#include "reqdb.h"
#include "watch.h"

static void *region(size_t len)
{
	void *p = NULL;
	if (posix_memalign(&p, CHAN_CACHE_LINE, len))
		abort();
	memset(p, 0xa5, len);
	return p;
}

/* A formatted channel of exactly spsc_size() bytes with a producer and a consumer. */
static struct spsc_shared *chan_new(uint32_t slot, uint32_t n, struct spsc *p, struct spsc *c)
{
	size_t len = spsc_size(slot, n);
	void *m = region(len);
	if (spsc_init(m, len, slot, n) != (long)len || spsc_attach(p, m, len, SPSC_PRODUCER) ||
	    spsc_attach(c, m, len, SPSC_CONSUMER))
		abort();
	return m;
}

static void init_rejects_bad_geometry(void)
{
	void *m = region(4096);
	CHECK_EQ_U64(SPSC_HDR_SIZE, 4 * CHAN_CACHE_LINE);
	CHECK_EQ_U64(POOL_HDR_SIZE, CHAN_CACHE_LINE);
	CHECK_EQ_U64(spsc_size(64, 16), SPSC_HDR_SIZE + 1024);
	CHECK_EQ_U64(spsc_size(48, 16), 0);
	CHECK_EQ_U64(spsc_size(4, 16), 0);
	CHECK_EQ_U64(spsc_size(8192, 16), 0);
	CHECK_EQ_U64(spsc_size(64, 0), 0);
	CHECK_EQ_U64(spsc_size(64, 3), 0);
	CHECK_EQ_U64(spsc_size(64, SPSC_MAX_SLOTS * 2), 0);
	CHECK_EQ_I64(spsc_init(m, 4096, 48, 16), CHAN_EINVAL);
	CHECK_EQ_I64(spsc_init(m, 4096, 64, 3), CHAN_EINVAL);
	CHECK_EQ_I64(spsc_init(m, SPSC_HDR_SIZE + 1023, 64, 16), CHAN_EINVAL);
	CHECK_EQ_I64(spsc_init((char *)m + 8, 4000, 64, 16), CHAN_EINVAL);
	CHECK_EQ_I64(spsc_init(NULL, 4096, 64, 16), CHAN_EINVAL);
	CHECK_EQ_I64(spsc_init(m, 4096, 64, 16), (long)SPSC_HDR_SIZE + 1024);
	free(m);
}

static void attach_validates_header(void)
{
	size_t len = spsc_size(64, 16);
	struct spsc_shared *sh = region(len);
	struct spsc q;
	REQUIRE(spsc_init(sh, len, 64, 16) > 0);
	CHECK_EQ_I64(spsc_attach(&q, sh, len, 0), CHAN_EINVAL);
	CHECK_EQ_I64(spsc_attach(&q, sh, len - 1, SPSC_CONSUMER), CHAN_EINVAL);
	CHECK_EQ_I64(spsc_attach(&q, sh, SPSC_HDR_SIZE - 1, SPSC_CONSUMER), CHAN_EINVAL);
	CHECK_EQ_I64(spsc_attach(&q, sh, len, SPSC_CONSUMER), 0);
	/* Each field a peer might corrupt. */
	struct spsc_shared good = *sh;
	sh->magic ^= 1;
	CHECK_EQ_I64(spsc_attach(&q, sh, len, SPSC_CONSUMER), CHAN_EINVAL);
	*sh = good, sh->version = 2;
	CHECK_EQ_I64(spsc_attach(&q, sh, len, SPSC_CONSUMER), CHAN_EINVAL);
	*sh = good, sh->slot_size = 128; /* would need twice the region */
	CHECK_EQ_I64(spsc_attach(&q, sh, len, SPSC_CONSUMER), CHAN_EINVAL);
	*sh = good, sh->slot_size = 0;
	CHECK_EQ_I64(spsc_attach(&q, sh, len, SPSC_CONSUMER), CHAN_EINVAL);
	*sh = good, sh->nslots = 17;
	CHECK_EQ_I64(spsc_attach(&q, sh, len, SPSC_CONSUMER), CHAN_EINVAL);
	*sh = good, sh->nslots = 1u << 31;
	CHECK_EQ_I64(spsc_attach(&q, sh, len, SPSC_PRODUCER), CHAN_EINVAL);
	*sh = good, sh->slot_size = 1u << 31, sh->nslots = 2; /* product overflows 32 bits */
	CHECK_EQ_I64(spsc_attach(&q, sh, len, SPSC_PRODUCER), CHAN_EINVAL);
	/* Indices further apart than the queue holds. */
	*sh = good;
	atomic_store(&sh->head, 17);
	CHECK_EQ_I64(spsc_attach(&q, sh, len, SPSC_CONSUMER), CHAN_ECORRUPT);
	atomic_store(&sh->head, 5), atomic_store(&sh->tail, 6);
	CHECK_EQ_I64(spsc_attach(&q, sh, len, SPSC_PRODUCER), CHAN_ECORRUPT);
	/* A channel in use can be attached again (a restarted side picks up its index). */
	atomic_store(&sh->head, 1000016), atomic_store(&sh->tail, 1000000);
	CHECK_EQ_I64(spsc_attach(&q, sh, len, SPSC_PRODUCER), 0);
	CHECK_EQ_I64(spsc_count(&q), 16);
	free(sh);
}

static void full_and_empty(void)
{
	struct spsc p, c;
	struct spsc_shared *sh = chan_new(16, 4, &p, &c);
	uint64_t m[2] = { 0, 0 }, out[2];
	CHECK_EQ_I64(spsc_pop(&c, out), CHAN_EAGAIN);
	CHECK_EQ_I64(spsc_peek(&c, out), CHAN_EAGAIN);
	for (m[0] = 1; m[0] <= 4; m[0]++)
		CHECK_EQ_I64(spsc_push(&p, m), 0);
	CHECK_EQ_I64(spsc_push(&p, m), CHAN_EAGAIN);
	CHECK_EQ_I64(spsc_count(&p), 4);
	CHECK_EQ_I64(spsc_count(&c), 4);
	CHECK_EQ_I64(spsc_peek(&c, out), 0);
	CHECK_EQ_U64(out[0], 1);
	CHECK_EQ_I64(spsc_pop(&c, out), 0);
	CHECK_EQ_U64(out[0], 1);
	CHECK_EQ_I64(spsc_push(&p, m), 0); /* 5 */
	CHECK_EQ_I64(spsc_push(&p, m), CHAN_EAGAIN);
	for (uint64_t want = 2; want <= 5; want++) {
		CHECK_EQ_I64(spsc_pop(&c, out), 0);
		CHECK_EQ_U64(out[0], want);
	}
	CHECK_EQ_I64(spsc_pop(&c, out), CHAN_EAGAIN);
	/* Wrong side, too long a part. */
	CHECK_EQ_I64(spsc_pop(&p, out), CHAN_EINVAL);
	CHECK_EQ_I64(spsc_push(&c, m), CHAN_EINVAL);
	CHECK_EQ_I64(spsc_push_part(&p, m, 17), CHAN_EINVAL);
	CHECK_EQ_I64(spsc_pop_part(&c, out, 17), CHAN_EINVAL);
	/* A part is zero-filled to the slot. */
	uint32_t small = 0xdeadbeef;
	CHECK_EQ_I64(spsc_push_part(&p, &small, sizeof(small)), 0);
	CHECK_EQ_I64(spsc_pop(&c, out), 0);
	CHECK_EQ_U64(out[0], 0xdeadbeef);
	CHECK_EQ_U64(out[1], 0);
	free(sh);
}

/* Free-running indices across 2^64 and many laps of a small ring. */
static void wrap_around(void)
{
	size_t len = spsc_size(32, 8);
	struct spsc_shared *sh = region(len);
	struct spsc p, c;
	REQUIRE(spsc_init(sh, len, 32, 8) > 0);
	atomic_store(&sh->head, UINT64_MAX - 20), atomic_store(&sh->tail, UINT64_MAX - 20);
	REQUIRE(spsc_attach(&p, sh, len, SPSC_PRODUCER) == 0);
	REQUIRE(spsc_attach(&c, sh, len, SPSC_CONSUMER) == 0);
	uint64_t seed = 7, next_in = 0, next_out = 0, m[4] = { 0 }, out[4];
	for (int round = 0; round < 2000 && !UNIT_FAILED(); round++) {
		int n = (int)(unit_rand(&seed) % 10);
		for (int i = 0; i < n; i++) {
			m[0] = next_in, m[3] = ~next_in;
			int r = spsc_push(&p, m);
			CHECK(r == 0 || r == CHAN_EAGAIN);
			CHECK(r == 0 || next_in - next_out == 8);
			next_in += r == 0;
		}
		n = (int)(unit_rand(&seed) % 10);
		for (int i = 0; i < n; i++) {
			int r = spsc_pop(&c, out);
			CHECK(r == 0 || (r == CHAN_EAGAIN && next_in == next_out));
			if (r == 0) {
				CHECK_EQ_U64(out[0], next_out);
				CHECK_EQ_U64(out[3], ~next_out);
				next_out++;
			}
		}
	}
	CHECK(next_out > 5000);
	CHECK(atomic_load(&sh->head) < 100000); /* it did wrap */
	free(sh);
}

static void corrupt_indices_from_peer(void)
{
	struct spsc p, c;
	struct spsc_shared *sh = chan_new(16, 8, &p, &c);
	uint64_t m[2] = { 1, 2 }, out[2];
	/* The producer claims more messages than the queue holds, or moves backwards. */
	atomic_store(&sh->head, 9);
	CHECK_EQ_I64(spsc_pop(&c, out), CHAN_ECORRUPT);
	CHECK_EQ_I64(spsc_count(&c), CHAN_ECORRUPT);
	atomic_store(&sh->head, UINT64_MAX);
	CHECK_EQ_I64(spsc_pop(&c, out), CHAN_ECORRUPT);
	CHECK_EQ_I64(spsc_peek(&c, out), CHAN_ECORRUPT);
	atomic_store(&sh->head, 8);
	CHECK_EQ_I64(spsc_pop(&c, out), 0); /* a full queue of garbage is still in bounds */
	/* The consumer claims to have read what was never written, or moves backwards. */
	struct spsc p2, c2;
	struct spsc_shared *sh2 = chan_new(16, 8, &p2, &c2);
	for (int i = 0; i < 8; i++)
		CHECK_EQ_I64(spsc_push(&p2, m), 0);
	atomic_store(&sh2->tail, 9);
	CHECK_EQ_I64(spsc_push(&p2, m), CHAN_ECORRUPT);
	CHECK_EQ_I64(spsc_count(&p2), CHAN_ECORRUPT);
	atomic_store(&sh2->tail, 3);
	CHECK_EQ_I64(spsc_push(&p2, m), 0);
	atomic_store(&sh2->tail, 2); /* backwards past what we already saw */
	for (int i = 0; i < 2; i++) /* the cached tail (3) still says there is room */
		CHECK_EQ_I64(spsc_push(&p2, m), 0);
	CHECK_EQ_I64(spsc_push(&p2, m), CHAN_ECORRUPT);
	/* Geometry rewritten after attach is ignored: we use our private copy. */
	sh2->slot_size = 4096, sh2->nslots = 1u << 20;
	c2.mine = 3, c2.theirs = 3;
	atomic_store(&sh2->head, 11);
	for (int i = 0; i < 8; i++)
		CHECK_EQ_I64(spsc_pop(&c2, out), 0);
	CHECK_EQ_I64(spsc_pop(&c2, out), CHAN_EAGAIN);
	free(sh);
	free(sh2);
}

/* A peer writing random values into the header and indices while we push and pop:
 * results are only ever 0, EAGAIN, ECORRUPT or EINVAL, and ASan sees no stray access. */
static void fuzz_malicious_peer(void)
{
	uint64_t seed = 0x1234567;
	unsigned attached = 0, corrupt = 0;
	for (int iter = 0; iter < 3000 && !UNIT_FAILED(); iter++) {
		uint32_t slot = 8u << (unit_rand(&seed) % 4), n = 1u << (unit_rand(&seed) % 5);
		size_t len = spsc_size(slot, n);
		struct spsc_shared *sh = region(len);
		REQUIRE(spsc_init(sh, len, slot, n) > 0);
		uint32_t *w = (uint32_t *)sh;
		if (unit_rand(&seed) % 2) /* scribble on the header before attach */
			w[unit_rand(&seed) % (SPSC_HDR_SIZE / 4)] ^= (uint32_t)unit_rand(&seed);
		struct spsc p, c;
		int rp = spsc_attach(&p, sh, len, SPSC_PRODUCER);
		int rc = spsc_attach(&c, sh, len, SPSC_CONSUMER);
		CHECK(rp == 0 || rp == CHAN_EINVAL || rp == CHAN_ECORRUPT);
		if (rp == 0 && rc == 0) {
			attached++;
			unsigned char msg[64] = { 0 }, out[64];
			for (int op = 0; op < 64; op++) {
				uint64_t r = unit_rand(&seed);
				int res = 0;
				if (r % 5 == 0)
					atomic_store(r & 8 ? &sh->head : &sh->tail,
						     r & 16 ? unit_rand(&seed) : atomic_load(&sh->head) + (r >> 60));
				else if (r % 5 <= 2)
					res = spsc_push(&p, msg);
				else
					res = spsc_pop(&c, out);
				CHECK(res == 0 || res == CHAN_EAGAIN || res == CHAN_ECORRUPT);
				corrupt += res == CHAN_ECORRUPT;
			}
		}
		free(sh);
	}
	CHECK(attached > 1000);
	CHECK(corrupt > 100);
}

/* Platform hooks that record instead of sleeping. */
static int wait_calls, wake_calls;
static uint64_t wait_seen;
static int fake_wait(const volatile uint64_t *bell, uint64_t seen, void *ctx)
{
	(void)ctx;
	wait_calls++, wait_seen = seen;
	return *bell != seen;
}
static void fake_wake(void *ctx) { (void)ctx, wake_calls++; }

static void doorbell_decisions(void)
{
	struct spsc p, c;
	struct spsc_shared *sh = chan_new(16, 4, &p, &c);
	struct chan_platform plat = { fake_wait, fake_wake, NULL };
	uint64_t m[2] = { 0 }, out[2];
	/* Empty: the consumer waits with the bell's current value, and the flag is down after. */
	atomic_store(&sh->bell, 41);
	CHECK_EQ_I64(chan_sleep(&c, &plat), 1);
	CHECK_EQ_I64(wait_calls, 1);
	CHECK_EQ_U64(wait_seen, 41);
	CHECK_EQ_U64(atomic_load(&sh->sleeping), 0);
	/* Nobody sleeping: the producer does not ring. */
	CHECK_EQ_I64(spsc_push(&p, m), 0);
	CHECK_EQ_I64(chan_kick(&p, &plat), 0);
	CHECK_EQ_I64(wake_calls, 0);
	/* Not empty: no wait. */
	CHECK_EQ_I64(chan_sleep(&c, &plat), 0);
	CHECK_EQ_I64(wait_calls, 1);
	/* Consumer going to sleep: the producer rings once and takes the flag down, so more
	 * pushes before the consumer runs do not ring again; once it sleeps again, they do. */
	atomic_store(&sh->sleeping, 1);
	CHECK_EQ_I64(chan_kick(&p, &plat), 1);
	CHECK_EQ_I64(wake_calls, 1);
	CHECK_EQ_U64(atomic_load(&sh->bell), 42);
	CHECK_EQ_U64(atomic_load(&sh->sleeping), 0);
	CHECK_EQ_I64(spsc_push(&p, m), 0);
	CHECK_EQ_I64(chan_kick(&p, &plat), 0);
	CHECK_EQ_I64(wake_calls, 1);
	CHECK_EQ_I64(spsc_pop(&c, out), 0);
	atomic_store(&sh->sleeping, 1);
	CHECK_EQ_I64(chan_kick(&p, &plat), 1);
	CHECK_EQ_I64(wake_calls, 2);
	CHECK_EQ_U64(atomic_load(&sh->bell), 43);
	CHECK_EQ_I64(spsc_pop(&c, out), 0);
	/* A corrupted head is reported, not slept on. */
	atomic_store(&sh->head, 100);
	CHECK_EQ_I64(chan_sleep(&c, &plat), CHAN_ECORRUPT);
	free(sh);
}

#define PBUF 256
#define PN 8

static void pool_alloc_free_resolve(void)
{
	size_t len = POOL_HDR_SIZE + PBUF * PN;
	void *mem = region(len);
	uint32_t priv[(POOL_PRIV_SIZE(PN) + 3) / 4];
	struct pool_owner o;
	CHECK_EQ_I64(pool_init(&o, 7, mem, len, PBUF, PN, priv, POOL_PRIV_SIZE(PN) - 1), CHAN_EINVAL);
	CHECK_EQ_I64(pool_init(&o, 7, mem, len, 0, PN, priv, sizeof(priv)), CHAN_EINVAL);
	/* Asking for more buffers than fit gives as many as fit. */
	REQUIRE(pool_init(&o, 7, mem, len, PBUF, 100, priv, sizeof(priv)) == PN);
	struct pool_view v;
	REQUIRE(pool_attach(&v, mem, len) == 0);
	CHECK_EQ_U64(v.nbufs, PN);
	struct chan_ptr ptr[PN], x;
	CHECK_EQ_I64(pool_alloc(&o, PBUF + 1, &x), CHAN_EINVAL);
	for (int i = 0; i < PN; i++) {
		CHECK_EQ_I64(pool_alloc(&o, 100, &ptr[i]), 0);
		CHECK_EQ_U64(ptr[i].pool_id, 7);
		CHECK_EQ_U64(ptr[i].len, 100);
		unsigned char *b = pool_resolve(&o.v, ptr[i]);
		REQUIRE(b);
		memset(b, i, PBUF); /* the whole buffer is ours: ASan checks */
		CHECK(pool_resolve(&v, ptr[i]) == b);
	}
	CHECK_EQ_I64(pool_alloc(&o, 1, &x), CHAN_EAGAIN);
	/* Bad rich pointers from a reader's point of view. */
	x = ptr[3];
	x.pool_id = 8;
	CHECK(pool_resolve(&v, x) == NULL);
	x = (struct chan_ptr){ 7, PBUF * PN, 1 };
	CHECK(pool_resolve(&v, x) == NULL);
	x = (struct chan_ptr){ 7, PBUF * 2 + 200, 57 }; /* crosses into the next buffer */
	CHECK(pool_resolve(&v, x) == NULL);
	x = (struct chan_ptr){ 7, PBUF * 2 + 200, 56 }; /* the last 56 bytes: fine */
	CHECK(pool_resolve(&v, x) != NULL);
	x = (struct chan_ptr){ 7, PBUF, UINT32_MAX }; /* offset + len wraps 32 bits */
	CHECK(pool_resolve(&v, x) == NULL);
	x = (struct chan_ptr){ 7, UINT32_MAX, 1 };
	CHECK(pool_resolve(&v, x) == NULL);
	/* Frees: good, double, foreign, not the start of a buffer, beyond the pool. */
	CHECK_EQ_I64(pool_free(&o, ptr[2]), 0);
	CHECK_EQ_I64(pool_free(&o, ptr[2]), CHAN_EDOUBLE);
	x = ptr[3], x.pool_id = 8;
	CHECK_EQ_I64(pool_free(&o, x), CHAN_EINVAL);
	x = ptr[3], x.offset += 1;
	CHECK_EQ_I64(pool_free(&o, x), CHAN_EINVAL);
	x = (struct chan_ptr){ 7, PBUF * PN, 0 };
	CHECK_EQ_I64(pool_free(&o, x), CHAN_EINVAL);
	CHECK_EQ_I64(pool_alloc(&o, 10, &x), 0);
	CHECK_EQ_U64(x.offset, ptr[2].offset);
	CHECK_EQ_U64(o.nfree, 0);
	free(mem);
}

static void pool_return_queue(void)
{
	size_t len = POOL_HDR_SIZE + PBUF * PN;
	void *mem = region(len);
	uint32_t priv[(POOL_PRIV_SIZE(PN) + 3) / 4];
	struct pool_owner o;
	REQUIRE(pool_init(&o, 3, mem, len, PBUF, PN, priv, sizeof(priv)) == PN);
	struct spsc rp, rc; /* the reader produces into the return queue, the owner consumes */
	struct spsc_shared *rq = chan_new(16, 16, &rp, &rc);
	struct chan_ptr ptr[PN];
	for (int i = 0; i < PN; i++)
		REQUIRE(pool_alloc(&o, 1, &ptr[i]) == 0);
	for (int i = 0; i < 5; i++)
		CHECK_EQ_I64(pool_return(&rp, ptr[i]), 0);
	CHECK_EQ_I64(pool_return(&rp, ptr[0]), 0);                           /* twice */
	CHECK_EQ_I64(pool_return(&rp, (struct chan_ptr){ 9, 0, 0 }), 0);    /* foreign */
	uint32_t rejected = 0;
	CHECK_EQ_I64(pool_reclaim(&o, &rc, &rejected), 5);
	CHECK_EQ_U64(rejected, 2);
	CHECK_EQ_U64(o.nfree, 5);
	/* A broken return queue is reported. */
	atomic_store(&rq->head, 1000);
	CHECK_EQ_I64(pool_reclaim(&o, &rc, NULL), CHAN_ECORRUPT);
	/* A reader refuses a bad pool header. */
	struct pool_view v;
	struct pool_shared *ph = mem;
	CHECK_EQ_I64(pool_attach(&v, mem, len - 1), CHAN_EINVAL);
	ph->nbufs = PN + 1;
	CHECK_EQ_I64(pool_attach(&v, mem, len), CHAN_EINVAL);
	ph->nbufs = PN, ph->buf_size = 0;
	CHECK_EQ_I64(pool_attach(&v, mem, len), CHAN_EINVAL);
	ph->buf_size = PBUF, ph->magic = 0;
	CHECK_EQ_I64(pool_attach(&v, mem, len), CHAN_EINVAL);
	free(rq);
	free(mem);
}

static uint64_t aborted[16];
static int naborted;
static void on_abort(void *ctx, uint64_t id)
{
	CHECK_EQ_U64((uintptr_t)ctx, 0x77);
	if (naborted < 16)
		aborted[naborted++] = id;
}

static void reqdb_lifecycle(void)
{
	struct reqdb_entry st[4];
	struct reqdb db;
	reqdb_init(&db, st, 4);
	uint64_t a = reqdb_add(&db, 1, on_abort, (void *)0x77);
	uint64_t b = reqdb_add(&db, 2, on_abort, (void *)0x77);
	CHECK(a != REQDB_NONE && b != REQDB_NONE && a != b);
	const struct reqdb_entry *e = reqdb_take(&db, a);
	REQUIRE(e);
	CHECK_EQ_U64(e->peer, 1);
	CHECK((uintptr_t)e->ctx == 0x77);
	CHECK(reqdb_take(&db, a) == NULL); /* already answered */
	/* The slot is reused with a new generation: the old id stays stale. */
	uint64_t c = reqdb_add(&db, 1, on_abort, (void *)0x77);
	CHECK_EQ_U64((uint32_t)c, (uint32_t)a);
	CHECK(c != a);
	CHECK(reqdb_take(&db, a) == NULL);
	/* Forged ids. */
	CHECK(reqdb_take(&db, REQDB_NONE) == NULL);
	CHECK(reqdb_take(&db, (uint64_t)1 << 32 | 99) == NULL);
	CHECK(reqdb_take(&db, (uint64_t)2 << 32 | 3) == NULL); /* a free slot */
	CHECK(reqdb_take(&db, c + ((uint64_t)2 << 32)) == NULL);
	/* Full. */
	CHECK(reqdb_add(&db, 3, NULL, NULL) != REQDB_NONE);
	CHECK(reqdb_add(&db, 3, NULL, NULL) != REQDB_NONE);
	CHECK_EQ_U64(reqdb_add(&db, 3, NULL, NULL), REQDB_NONE);
	CHECK_EQ_U64(db.nused, 4);
	CHECK(reqdb_take(&db, c) != NULL);
	CHECK(reqdb_take(&db, b) != NULL);
	CHECK_EQ_U64(db.nused, 2);
}

static void reqdb_abort_all_of_peer(void)
{
	struct reqdb_entry st[16];
	struct reqdb db;
	reqdb_init(&db, st, 16);
	uint64_t ids[12];
	for (int i = 0; i < 12; i++)
		ids[i] = reqdb_add(&db, (uint32_t)(i % 3), i % 3 == 1 ? on_abort : NULL, (void *)0x77);
	CHECK(reqdb_take(&db, ids[4]) != NULL); /* answered before the restart */
	naborted = 0;
	CHECK_EQ_U64(reqdb_abort_peer(&db, 1), 3);
	CHECK_EQ_I64(naborted, 3);
	for (int i = 0; i < naborted; i++) {
		bool known = false;
		for (int j = 1; j < 12; j += 3)
			known |= aborted[i] == ids[j] && j != 4;
		CHECK(known);
	}
	for (int i = 1; i < 12; i += 3)
		CHECK(reqdb_take(&db, ids[i]) == NULL);
	CHECK_EQ_U64(reqdb_abort_peer(&db, 1), 0);
	CHECK_EQ_U64(reqdb_abort_peer(&db, 2), 4); /* NULL abort actions are just removed */
	CHECK(reqdb_take(&db, ids[0]) != NULL);
	CHECK_EQ_U64(db.nused, 3);
}

/* A peer known by incarnation: everything not addressed to the current one goes, with its
 * abort action; the current one's requests stay and are answered as usual. */
static void reqdb_abort_all_but_current_peer(void)
{
	struct reqdb_entry st[16];
	struct reqdb db;
	reqdb_init(&db, st, 16);
	uint64_t ids[9];
	for (int i = 0; i < 9; i++)
		ids[i] = reqdb_add(&db, 0x10000u * (uint32_t)(i / 3 + 1) | 7, on_abort, (void *)0x77);
	naborted = 0;
	CHECK_EQ_U64(reqdb_abort_other(&db, 0x30007), 6);
	CHECK_EQ_I64(naborted, 6);
	for (int i = 0; i < 6; i++)
		CHECK(reqdb_take(&db, ids[i]) == NULL);
	for (int i = 6; i < 9; i++)
		CHECK(reqdb_take(&db, ids[i]) != NULL);
	CHECK_EQ_U64(db.nused, 0);
	CHECK_EQ_U64(reqdb_abort_other(&db, 0x30007), 0);
}

/* The watch's clock: read only when the tail has not moved. */
static uint64_t fake_now, clock_reads;
static uint64_t fake_clock(void)
{
	clock_reads++;
	return fake_now;
}
static enum chan_watch_verdict look(struct chan_watch *w, struct spsc *q, uint64_t t, uint64_t *stalled)
{
	fake_now = t;
	return chan_watch(w, q, fake_clock, stalled);
}

/* The producer's watch: idle when empty, moving while the consumer reads, a ring after
 * CHAN_STALL_RING_NS standing still, then a complaint every CHAN_STALL_AGAIN_NS from
 * CHAN_STALL_SAY_NS; any read starts the clock afresh; the clock is not read while the
 * channel is empty or the consumer reads. */
static void watch_sees_a_consumer_that_stops(void)
{
	struct spsc p, c;
	struct spsc_shared *m = chan_new(64, 8, &p, &c);
	struct chan_watch w;
	chan_watch_reset(&w);
	unsigned char msg[64] = { 1 };
	uint64_t t = 5000000000ull, stalled = 7;
	const uint64_t ms = 1000000;
	CHECK_EQ_U64(look(&w, &p, t, &stalled), CW_IDLE);
	CHECK_EQ_U64(stalled, 0);
	CHECK_EQ_U64(clock_reads, 0);
	CHECK_EQ_U64(spsc_push(&p, msg), 0);
	CHECK_EQ_U64(spsc_push(&p, msg), 0);
	CHECK_EQ_U64(look(&w, &p, t, &stalled), CW_MOVING); /* the clock starts here */
	CHECK_EQ_U64(look(&w, &p, t + 999 * ms, &stalled), CW_MOVING);
	CHECK_EQ_U64(stalled, 999 * ms);
	CHECK_EQ_U64(look(&w, &p, t + 1000 * ms, NULL), CW_RING);
	CHECK_EQ_U64(look(&w, &p, t + 1500 * ms, NULL), CW_MOVING); /* rung once */
	/* the consumer reads one: the clock starts again */
	CHECK_EQ_U64(spsc_pop(&c, msg), 0);
	uint64_t reads = clock_reads;
	CHECK_EQ_U64(look(&w, &p, t + 2900 * ms, &stalled), CW_MOVING);
	CHECK_EQ_U64(stalled, 0);
	CHECK_EQ_U64(clock_reads, reads); /* it moved: no clock */
	t += 2900 * ms;
	CHECK_EQ_U64(look(&w, &p, t, NULL), CW_MOVING); /* the first look that finds it still starts the clock */
	CHECK_EQ_U64(look(&w, &p, t + 1000 * ms, NULL), CW_RING);
	CHECK_EQ_U64(look(&w, &p, t + 2999 * ms, NULL), CW_MOVING);
	CHECK_EQ_U64(look(&w, &p, t + 3000 * ms, &stalled), CW_STUCK);
	CHECK_EQ_U64(stalled, 3000 * ms);
	CHECK_EQ_U64(look(&w, &p, t + 3999 * ms, NULL), CW_MOVING);
	CHECK_EQ_U64(look(&w, &p, t + 4000 * ms, NULL), CW_STUCK);
	/* pushing more is not reading: still stuck */
	CHECK_EQ_U64(spsc_push(&p, msg), 0);
	CHECK_EQ_U64(look(&w, &p, t + 5000 * ms, &stalled), CW_STUCK);
	CHECK_EQ_U64(stalled, 5000 * ms);
	/* drained: idle, and the history is gone */
	while (spsc_pop(&c, msg) == 0)
		;
	CHECK_EQ_U64(look(&w, &p, t + 5100 * ms, &stalled), CW_IDLE);
	CHECK_EQ_U64(stalled, 0);
	CHECK_EQ_U64(spsc_push(&p, msg), 0);
	CHECK_EQ_U64(look(&w, &p, t + 9000 * ms, NULL), CW_MOVING);
	CHECK_EQ_U64(look(&w, &p, t + 9900 * ms, NULL), CW_MOVING);
	/* a consumer's index the peer corrupted: idle here (the channel's owner reports it) */
	atomic_store(&m->tail, 1000);
	CHECK_EQ_U64(look(&w, &p, t + 20000 * ms, NULL), CW_IDLE);
	/* a consumer-side handle is never watched */
	struct chan_watch wc;
	chan_watch_reset(&wc);
	CHECK_EQ_U64(look(&wc, &c, t, NULL), CW_IDLE);
	free(m);
}

int main(void)
{
	unit_begin(__FILE__);
	RUN(init_rejects_bad_geometry);
	RUN(attach_validates_header);
	RUN(full_and_empty);
	RUN(wrap_around);
	RUN(corrupt_indices_from_peer);
	RUN(fuzz_malicious_peer);
	RUN(doorbell_decisions);
	RUN(watch_sees_a_consumer_that_stops);
	RUN(pool_alloc_free_resolve);
	RUN(pool_return_queue);
	RUN(reqdb_lifecycle);
	RUN(reqdb_abort_all_but_current_peer);
	RUN(reqdb_abort_all_of_peer);
	return unit_end();
}
