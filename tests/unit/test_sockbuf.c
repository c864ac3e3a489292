/* Socket buffers (lib/net/sockbuf.c): geometry, round trips through the byte ring with
 * wrap-around skips, flow control, a peer lying in descriptors or in `released`, and
 * re-attaching after an engine restart; then a long random run against a model. Each
 * buffer is a heap block of exactly its size, so ASan catches any access outside it. */
#include "unit.h"
#include "sockbuf.h"

static void *sb_new(uint32_t rs, uint32_t rsize, uint32_t ts, uint32_t tsize, size_t *len)
{
	*len = sockbuf_size(rs, rsize, ts, tsize);
	void *m = NULL;
	if (!*len || posix_memalign(&m, 4096, *len))
		abort();
	memset(m, 0xa5, *len);
	if (sockbuf_init(m, *len, rs, rsize, ts, tsize))
		abort();
	return m;
}

static int put(struct sockbuf_side *s, const void *data, uint32_t len, uint16_t port)
{
	int err = 0;
	void *p = sockbuf_alloc(s, len, &err);
	if (!p)
		return err;
	memcpy(p, data, len);
	struct sockbuf_desc d = { .family = 2, .port = port };
	return sockbuf_commit(s, len, &d);
}

static void geometry(void)
{
	size_t len;
	CHECK(sockbuf_size(3, 4096, 8, 4096) == 0);
	CHECK(sockbuf_size(8, 0, 8, 4096) == 0);
	CHECK(sockbuf_size(8, 4096, 8, 4096) % 4096 == 0);
	void *m = sb_new(8, 5000, 16, 3000, &len);
	struct sockbuf a, e;
	CHECK(sockbuf_attach(&a, m, len, SB_APP) == 0);
	CHECK(sockbuf_attach(&e, m, len, SB_ENGINE) == 0);
	CHECK(sockbuf_attach(&e, m, len - 1, SB_ENGINE) == CHAN_EINVAL);
	CHECK(a.rx.size == 5000 && a.tx.size == 3000 && !a.rx.producer && a.tx.producer);
	/* A header rewritten to point elsewhere is refused. */
	struct sockbuf_hdr *h = m;
	h->rx_data += 64;
	CHECK(sockbuf_attach(&e, m, len, SB_ENGINE) == CHAN_EINVAL);
	free(m);
}

static void round_trip_and_wrap(void)
{
	size_t len;
	void *m = sb_new(8, 1200, 8, 1200, &len);
	struct sockbuf a, e;
	REQUIRE(sockbuf_attach(&a, m, len, SB_APP) == 0 && sockbuf_attach(&e, m, len, SB_ENGINE) == 0);
	unsigned char msg[600], got[600];
	for (int round = 0; round < 50; round++) {
		uint32_t n = (uint32_t)(300 + round * 7 % 300);
		memset(msg, round, n);
		CHECK(put(&a.tx, msg, n, (uint16_t)round) == 0);
		struct sockbuf_desc d;
		int err = 0;
		const void *p = sockbuf_peek(&e.tx, &d, &err);
		REQUIRE(p);
		CHECK(d.len == n && d.port == round && d.off + d.len <= 1200);
		memcpy(got, p, n);
		CHECK(memcmp(got, msg, n) == 0);
		sockbuf_consume(&e.tx, &d);
	}
	CHECK(!sockbuf_ready(&e.tx));
	CHECK(sockbuf_space(&a.tx) == 1200);
	free(m);
}

static void flow_control(void)
{
	size_t len;
	void *m = sb_new(4, 1000, 4, 1000, &len);
	struct sockbuf a, e;
	REQUIRE(sockbuf_attach(&a, m, len, SB_APP) == 0 && sockbuf_attach(&e, m, len, SB_ENGINE) == 0);
	unsigned char b[1001] = { 0 };
	int err = 0;
	CHECK(!sockbuf_alloc(&e.rx, 501, &err) && err == CHAN_EINVAL); /* over half the area */
	CHECK(put(&e.rx, b, 400, 1) == 0);
	CHECK(put(&e.rx, b, 400, 2) == 0);
	CHECK(!sockbuf_alloc(&e.rx, 300, &err) && err == CHAN_EAGAIN); /* 200 left at the end */
	CHECK(put(&e.rx, b, 200, 3) == 0);
	CHECK(sockbuf_space(&e.rx) == 0);
	CHECK(put(&e.rx, b, 0, 4) == 0); /* empty datagrams take a slot, no bytes */
	CHECK(put(&e.rx, b, 0, 5) == CHAN_EAGAIN); /* queue full */
	struct sockbuf_desc d;
	REQUIRE(sockbuf_peek(&a.rx, &d, &err));
	sockbuf_consume(&a.rx, &d);
	CHECK(sockbuf_space(&e.rx) == 400);
	CHECK(put(&e.rx, b, 300, 6) == 0); /* at offset 0, behind the consumer */
	free(m);
}

/* sockbuf_room: the largest piece a stream producer may cut now, wrap included. */
static void stream_room(void)
{
	size_t len;
	void *m = sb_new(4, 1000, 4, 1000, &len);
	struct sockbuf a, e;
	REQUIRE(sockbuf_attach(&a, m, len, SB_APP) == 0 && sockbuf_attach(&e, m, len, SB_ENGINE) == 0);
	unsigned char b[500] = { 0 };
	int err = 0;
	CHECK(sockbuf_room(&e.rx) == 500);  /* half the area at most */
	CHECK(sockbuf_room(&a.rx) == 0);    /* not the producer */
	CHECK(put(&e.rx, b, 450, 1) == 0);
	CHECK(put(&e.rx, b, 450, 2) == 0);
	CHECK(sockbuf_room(&e.rx) == 100);  /* 100 left at the end, nothing behind */
	REQUIRE(sockbuf_alloc(&e.rx, sockbuf_room(&e.rx), &err));
	struct sockbuf_desc d;
	REQUIRE(sockbuf_peek(&a.rx, &d, &err));
	sockbuf_consume(&a.rx, &d);          /* 450 free at the start, 100 at the end */
	uint32_t r = sockbuf_room(&e.rx);
	CHECK(r == 450);                     /* the 450 freed at the start, skipping the 100 at the end */
	CHECK(put(&e.rx, b, r, 3) == 0);
	CHECK(put(&e.rx, b, 0, 4) == 0);     /* the fourth slot */
	CHECK(sockbuf_room(&e.rx) == 0);     /* queue full */
	free(m);
}

/* A stream read across pieces with an offset into the oldest: partial reads, the end of a
 * piece consuming it, the FIN piece, an offset past the piece. */
static void stream_pieces(void)
{
	size_t len;
	void *m = sb_new(8, 1000, 8, 1000, &len);
	struct sockbuf a, e;
	REQUIRE(sockbuf_attach(&a, m, len, SB_APP) == 0 && sockbuf_attach(&e, m, len, SB_ENGINE) == 0);
	CHECK(!sockbuf_stream_fin_queued(&a.rx)); /* empty */
	CHECK(put(&e.rx, "abcdef", 6, 0) == 0);
	CHECK(put(&e.rx, "gh", 2, 0) == 0);
	CHECK(!sockbuf_stream_fin_queued(&a.rx)); /* data only */
	int err = 0;
	REQUIRE(sockbuf_alloc(&e.rx, 0, &err));
	struct sockbuf_desc fin = { .flags = SBD_FIN };
	CHECK(sockbuf_commit(&e.rx, 0, &fin) == 0);
	CHECK(sockbuf_stream_fin_queued(&a.rx)); /* behind the data, seen before it is read */
	uint32_t off = 0;
	uint64_t n = 0;
	struct sockbuf_desc d;
	const unsigned char *p = sockbuf_stream_peek(&a.rx, off, 4, &d, &n, &err);
	REQUIRE(p && n == 4 && !memcmp(p, "abcd", 4));
	CHECK(!sockbuf_stream_advance(&a.rx, &d, &off, n) && off == 4); /* the piece stays */
	p = sockbuf_stream_peek(&a.rx, off, 100, &d, &n, &err);
	REQUIRE(p && n == 2 && !memcmp(p, "ef", 2));
	CHECK(sockbuf_stream_advance(&a.rx, &d, &off, n) && off == 0);  /* read to its end: consumed */
	p = sockbuf_stream_peek(&a.rx, 3, 100, &d, &n, &err);            /* an offset past the piece */
	CHECK(!p && err == SOCKBUF_ECORRUPT);
	p = sockbuf_stream_peek(&a.rx, off, 100, &d, &n, &err);
	REQUIRE(p && n == 2 && !memcmp(p, "gh", 2));
	CHECK(sockbuf_stream_advance(&a.rx, &d, &off, n));
	p = sockbuf_stream_peek(&a.rx, off, 100, &d, &n, &err);
	CHECK(!p && err == SOCKBUF_EFIN);
	CHECK(sockbuf_stream_fin_queued(&a.rx));                          /* the FIN alone */
	CHECK(sockbuf_stream_advance(&a.rx, &d, &off, 0) && off == 0);   /* the FIN piece goes at once */
	CHECK(!sockbuf_stream_fin_queued(&a.rx));
	p = sockbuf_stream_peek(&a.rx, off, 100, &d, &n, &err);
	CHECK(!p && err == CHAN_EAGAIN);
	free(m);
}

/* The shared stream read: pieces in order into the buffer, a peek takes one piece and
 * consumes nothing, MSG_TRUNC consumes without copying, the FIN ends it (consumed unless
 * peeking), a copy's error stops it where it failed. */
struct copied { unsigned char buf[64]; int fail_at; };
static int copy_into(void *ctx, uint64_t at, const unsigned char *p, uint64_t n)
{
	struct copied *c = ctx;
	if (c->fail_at >= 0 && at + n > (uint64_t)c->fail_at)
		return -14; /* EFAULT */
	memcpy(c->buf + at, p, n);
	return 0;
}

static void stream_read(void)
{
	size_t len;
	void *m = sb_new(8, 1000, 8, 1000, &len);
	struct sockbuf a, e;
	REQUIRE(sockbuf_attach(&a, m, len, SB_APP) == 0 && sockbuf_attach(&e, m, len, SB_ENGINE) == 0);
	CHECK(put(&e.rx, "abcdef", 6, 0) == 0);
	CHECK(put(&e.rx, "ghij", 4, 0) == 0);
	uint32_t off = 0;
	struct copied c = { .fail_at = -1 };
	struct sockbuf_read r = { 0 };
	sockbuf_stream_read(&a.rx, &off, 8, SOCKBUF_READ_PEEK, copy_into, &c, &r);
	CHECK(r.got == 6 && !r.fin && !r.freed && !r.err && !memcmp(c.buf, "abcdef", 6)); /* one piece */
	r = (struct sockbuf_read){ 0 };
	sockbuf_stream_read(&a.rx, &off, 8, 0, copy_into, &c, &r);
	CHECK(r.got == 8 && r.freed && !r.fin && !memcmp(c.buf, "abcdefgh", 8) && off == 2);
	r = (struct sockbuf_read){ 0 };
	sockbuf_stream_read(&a.rx, &off, 8, SOCKBUF_READ_TRUNC, copy_into, &c, &r);
	CHECK(r.got == 2 && r.freed && !r.err && !memcmp(c.buf, "abcdefgh", 8)); /* "ij" dropped */
	r = (struct sockbuf_read){ 0 };
	sockbuf_stream_read(&a.rx, &off, 8, 0, copy_into, &c, &r);
	CHECK(r.got == 0 && !r.fin && !r.err); /* empty */
	/* a copy that fails half-way: what came before counts, the rest stays */
	CHECK(put(&e.rx, "klmn", 4, 0) == 0);
	CHECK(put(&e.rx, "op", 2, 0) == 0);
	int err = 0;
	REQUIRE(sockbuf_alloc(&e.rx, 0, &err));
	struct sockbuf_desc fin = { .flags = SBD_FIN };
	CHECK(sockbuf_commit(&e.rx, 0, &fin) == 0);
	c.fail_at = 5;
	r = (struct sockbuf_read){ 0 };
	sockbuf_stream_read(&a.rx, &off, 60, 0, copy_into, &c, &r);
	CHECK(r.got == 4 && r.err == -14 && !r.fin && !memcmp(c.buf, "klmn", 4));
	c.fail_at = -1;
	/* a peek reaching the FIN says so and leaves it */
	r = (struct sockbuf_read){ .got = 0 };
	sockbuf_stream_read(&a.rx, &off, 60, 0, copy_into, &c, &r);
	CHECK(r.got == 2 && r.fin && r.freed && !memcmp(c.buf, "op", 2) && !sockbuf_stream_fin_queued(&a.rx));
	free(m);
	/* the FIN alone, peeked: seen, not consumed */
	m = sb_new(8, 1000, 8, 1000, &len);
	REQUIRE(sockbuf_attach(&a, m, len, SB_APP) == 0 && sockbuf_attach(&e, m, len, SB_ENGINE) == 0);
	REQUIRE(sockbuf_alloc(&e.rx, 0, &err));
	CHECK(sockbuf_commit(&e.rx, 0, &fin) == 0);
	off = 0;
	r = (struct sockbuf_read){ 0 };
	sockbuf_stream_read(&a.rx, &off, 10, SOCKBUF_READ_PEEK, copy_into, &c, &r);
	CHECK(r.got == 0 && r.fin && !r.freed && sockbuf_stream_fin_queued(&a.rx));
	free(m);
	/* an offset past its piece: a corrupt ring, nothing taken */
	m = sb_new(8, 1000, 8, 1000, &len);
	REQUIRE(sockbuf_attach(&a, m, len, SB_APP) == 0 && sockbuf_attach(&e, m, len, SB_ENGINE) == 0);
	CHECK(put(&e.rx, "ab", 2, 0) == 0);
	off = 5;
	r = (struct sockbuf_read){ 0 };
	sockbuf_stream_read(&a.rx, &off, 10, 0, copy_into, &c, &r);
	CHECK(r.err == SOCKBUF_ECORRUPT && r.got == 0 && !r.fin);
	free(m);
}

/* The shared datagram read: the oldest message, cut to the buffer (msg_flags' MSG_TRUNC),
 * its sender in the descriptor, consumed unless peeking; MSG_TRUNC answers the whole length;
 * a copy that fails still consumes it. */
static void dgram_read(void)
{
	size_t len;
	void *m = sb_new(8, 1000, 8, 1000, &len);
	struct sockbuf a, e;
	REQUIRE(sockbuf_attach(&a, m, len, SB_APP) == 0 && sockbuf_attach(&e, m, len, SB_ENGINE) == 0);
	CHECK(put(&e.rx, "hello world", 11, 7) == 0);
	CHECK(put(&e.rx, "xyz", 3, 8) == 0);
	CHECK(put(&e.rx, "last", 4, 9) == 0);
	struct copied c = { .fail_at = -1 };
	struct sockbuf_desc d;
	bool cut = true;
	int cerr = 1;
	CHECK(sockbuf_dgram_read(&a.rx, 64, SOCKBUF_READ_PEEK, copy_into, &c, &d, &cut, &cerr) == 11);
	CHECK(!cut && !cerr && d.port == 7 && !memcmp(c.buf, "hello world", 11));
	CHECK(sockbuf_dgram_read(&a.rx, 5, 0, copy_into, &c, &d, &cut, &cerr) == 5); /* cut to 5 */
	CHECK(cut && d.port == 7 && !memcmp(c.buf, "hello", 5));
	CHECK(sockbuf_dgram_read(&a.rx, 1, SOCKBUF_READ_TRUNC, copy_into, &c, &d, &cut, &cerr) == 3); /* whole length */
	CHECK(cut && d.port == 8 && c.buf[0] == 'x');
	c.fail_at = 0;
	CHECK(sockbuf_dgram_read(&a.rx, 64, 0, copy_into, &c, &d, &cut, &cerr) == 4);
	CHECK(cerr == -14 && d.port == 9); /* the copy failed: consumed all the same */
	c.fail_at = -1;
	CHECK(sockbuf_dgram_read(&a.rx, 64, 0, copy_into, &c, &d, &cut, &cerr) == CHAN_EAGAIN);
	free(m);
}

/* The sends' shared writing: a stream's bytes in pieces (the piece limit, the ring's room,
 * the call going on from where it stopped), a fill that fails commits nothing of its piece;
 * a datagram whole or not at all, too large refused. */
struct source { const char *data; int fail_at; int calls; };
static int fill_from(void *ctx, uint64_t at, unsigned char *p, uint64_t n)
{
	struct source *s = ctx;
	s->calls++;
	if (s->fail_at >= 0 && at + n > (uint64_t)s->fail_at)
		return -14; /* EFAULT */
	memcpy(p, s->data + at, n);
	return 0;
}

static void stream_write(void)
{
	size_t len;
	void *m = sb_new(8, 1000, 8, 1000, &len);
	struct sockbuf a, e;
	REQUIRE(sockbuf_attach(&a, m, len, SB_APP) == 0 && sockbuf_attach(&e, m, len, SB_ENGINE) == 0);
	static char big[2400];
	for (int i = 0; i < 2400; i++)
		big[i] = (char)('a' + i % 26);
	struct source src = { big, -1, 0 };
	uint64_t done = 0;
	CHECK(sockbuf_stream_write(&a.tx, &done, 700, 300, fill_from, &src) == 0);
	CHECK(done == 700 && src.calls == 3); /* 300 + 300 + 100 */
	/* The ring is 1000 bytes and no piece is larger than half: the rest waits for room. */
	CHECK(sockbuf_stream_write(&a.tx, &done, 2000, 0, fill_from, &src) == 0);
	CHECK(done > 700 && done < 2000);
	uint64_t stopped = done;
	/* The engine reads all that came, checking each byte; then the call goes on. */
	struct sockbuf_desc d;
	int err;
	uint64_t seen = 0;
	const unsigned char *p;
	while ((p = sockbuf_peek(&e.tx, &d, &err))) {
		CHECK(!memcmp(p, big + seen, d.len));
		seen += d.len;
		sockbuf_consume(&e.tx, &d);
	}
	CHECK(seen == stopped);
	CHECK(sockbuf_stream_write(&a.tx, &done, 2000, 0, fill_from, &src) == 0 && done > stopped);
	/* A fill that fails: its error, *done where it was, nothing of that piece committed. */
	while ((p = sockbuf_peek(&e.tx, &d, &err))) {
		CHECK(!memcmp(p, big + seen, d.len));
		seen += d.len;
		sockbuf_consume(&e.tx, &d);
	}
	uint64_t at = done;
	src.fail_at = (int)at + 10;
	CHECK(at == 2000 && sockbuf_stream_write(&a.tx, &done, 2400, 0, fill_from, &src) == -14 && done == at);
	CHECK(!sockbuf_peek(&e.tx, &d, &err) && err == CHAN_EAGAIN);
	/* A full descriptor queue stops the write with nothing lost. */
	src.fail_at = -1;
	uint64_t small = 0;
	for (int i = 0; i < 20; i++) {
		uint64_t goal = small + 1;
		CHECK(sockbuf_stream_write(&a.tx, &small, goal, 0, fill_from, &src) == 0);
	}
	CHECK(small == 8); /* 8 descriptor slots */
	free(m);
}

static void dgram_write(void)
{
	size_t len;
	void *m = sb_new(8, 1000, 8, 1000, &len);
	struct sockbuf a, e;
	REQUIRE(sockbuf_attach(&a, m, len, SB_APP) == 0 && sockbuf_attach(&e, m, len, SB_ENGINE) == 0);
	struct source src = { "datagram-payload-0123456789", -1, 0 };
	struct sockbuf_desc to = { .family = 2, .port = 53, .addr = { 10, 0, 2, 2 } }, d;
	CHECK(sockbuf_dgram_write(&a.tx, 16, &to, fill_from, &src) == 0);
	int err;
	const unsigned char *p = sockbuf_peek(&e.tx, &d, &err);
	CHECK(p && d.len == 16 && d.port == 53 && d.addr[0] == 10 && !memcmp(p, "datagram-payload", 16));
	sockbuf_consume(&e.tx, &d);
	CHECK(sockbuf_dgram_write(&a.tx, 501, &to, fill_from, &src) == CHAN_EINVAL); /* > half the ring */
	src.fail_at = 3;
	CHECK(sockbuf_dgram_write(&a.tx, 10, &to, fill_from, &src) == -14);
	CHECK(!sockbuf_peek(&e.tx, &d, &err) && err == CHAN_EAGAIN); /* nothing committed */
	src.fail_at = -1;
	int n = 0;
	while (sockbuf_dgram_write(&a.tx, 20, &to, fill_from, &src) == 0)
		n++;
	CHECK(n == 8 && sockbuf_dgram_write(&a.tx, 20, &to, fill_from, &src) == CHAN_EAGAIN);
	free(m);
}

static void lying_peer(void)
{
	size_t len;
	void *m = sb_new(8, 1000, 8, 1000, &len);
	struct sockbuf a, e;
	REQUIRE(sockbuf_attach(&a, m, len, SB_APP) == 0 && sockbuf_attach(&e, m, len, SB_ENGINE) == 0);
	unsigned char b[100] = { 0 };
	(void)a;
	struct sockbuf_hdr *h = m;
	struct sockbuf_desc *slot = (struct sockbuf_desc *)((unsigned char *)m + h->tx_q + SPSC_HDR_SIZE);
	int err = 0;
	struct sockbuf_desc d;
	/* The application rewrites its descriptor: each lie is caught. */
	CHECK(put(&a.tx, b, 100, 1) == 0);
	slot->len = 5000;
	CHECK(!sockbuf_peek(&e.tx, &d, &err) && err == SOCKBUF_ECORRUPT);
	slot->len = 100;
	slot->off = 900;
	CHECK(!sockbuf_peek(&e.tx, &d, &err) && err == SOCKBUF_ECORRUPT);
	slot->off = 0;
	slot->end = 1u << 20;
	CHECK(!sockbuf_peek(&e.tx, &d, &err) && err == SOCKBUF_ECORRUPT);
	slot->end = 100;
	CHECK(sockbuf_peek(&e.tx, &d, &err));
	/* The engine lies in `released` on the RX side: the application's producer... and the
	 * engine's producer side sees an impossible value as corruption. */
	CHECK(put(&e.rx, b, 10, 1) == 0);
	atomic_store(e.rx.released, 500);
	CHECK(!sockbuf_alloc(&e.rx, 10, &err) && err == SOCKBUF_ECORRUPT);
	free(m);
}

static void reattach_after_restart(void)
{
	size_t len;
	void *m = sb_new(8, 1000, 8, 1000, &len);
	struct sockbuf a, e;
	REQUIRE(sockbuf_attach(&a, m, len, SB_APP) == 0 && sockbuf_attach(&e, m, len, SB_ENGINE) == 0);
	unsigned char b[300];
	for (int i = 0; i < 3; i++) {
		memset(b, 'a' + i, sizeof(b));
		CHECK(put(&e.rx, b, 300, (uint16_t)i) == 0);
	}
	struct sockbuf_desc d;
	int err = 0;
	REQUIRE(sockbuf_peek(&a.rx, &d, &err));
	sockbuf_consume(&a.rx, &d);
	/* The engine restarts: a new producer continues after the last unconsumed message. */
	struct sockbuf e2;
	REQUIRE(sockbuf_attach(&e2, m, len, SB_ENGINE) == 0);
	memset(b, 'z', sizeof(b));
	CHECK(put(&e2.rx, b, 300, 9) == 0);
	for (int i = 1; i <= 3; i++) {
		const unsigned char *p = sockbuf_peek(&a.rx, &d, &err);
		REQUIRE(p);
		CHECK(p[0] == (i < 3 ? 'a' + i : 'z') && p[299] == p[0]);
		sockbuf_consume(&a.rx, &d);
	}
	CHECK(!sockbuf_ready(&a.rx));
	free(m);
}

/* Random sizes and interleavings against a model FIFO; every byte checked. */
static void random_model(void)
{
	size_t len;
	void *m = sb_new(16, 4099, 16, 4099, &len);
	struct sockbuf a, e;
	REQUIRE(sockbuf_attach(&a, m, len, SB_APP) == 0 && sockbuf_attach(&e, m, len, SB_ENGINE) == 0);
	enum { N = 64 };
	uint32_t lens[N];
	uint8_t seeds[N];
	unsigned head = 0, tail = 0, seed = 12345, delivered = 0;
	unsigned char buf[4099];
	for (int step = 0; step < 200000 && delivered < 40000; step++) {
		seed = seed * 1103515245u + 12345u;
		if ((seed >> 16) % 2 && head - tail < N) {
			uint32_t n = (seed >> 8) % 2049;
			uint8_t s = (uint8_t)(seed >> 3);
			for (uint32_t i = 0; i < n; i++)
				buf[i] = (uint8_t)(s + i);
			int r = put(&a.tx, buf, n, 0);
			CHECK(r == 0 || r == CHAN_EAGAIN);
			if (r == 0) {
				lens[head % N] = n;
				seeds[head % N] = s;
				head++;
			}
		} else {
			struct sockbuf_desc d;
			int err = 0;
			const unsigned char *p = sockbuf_peek(&e.tx, &d, &err);
			if (!p) {
				CHECK(err == CHAN_EAGAIN && head == tail);
				continue;
			}
			REQUIRE(head != tail && d.len == lens[tail % N]);
			for (uint32_t i = 0; i < d.len; i++)
				if (p[i] != (uint8_t)(seeds[tail % N] + i)) {
					CHECK(!"byte mismatch");
					break;
				}
			sockbuf_consume(&e.tx, &d);
			tail++;
			delivered++;
		}
	}
	CHECK(delivered > 1000);
	free(m);
}

/* The producer's mark: a new buffer asks for a wake-up after every release; a mark ahead
 * of `released` holds it back until the consumer's releases reach it; an engine that
 * attaches again reads the same shared word. */
static void notify_mark(void)
{
	size_t len;
	void *m = sb_new(8, 4096, 8, 4096, &len);
	struct sockbuf a, e;
	CHECK(sockbuf_attach(&a, m, len, SB_APP) == 0);
	CHECK(sockbuf_attach(&e, m, len, SB_ENGINE) == 0);
	CHECK(sockbuf_notify_due(&a.rx)); /* 0: every release */
	char msg[100] = { 0 };
	for (int i = 0; i < 3; i++)
		CHECK(put(&e.rx, msg, sizeof(msg), 0) == 0);
	sockbuf_notify_at(&e.rx, 250); /* after 250 bytes released */
	CHECK(!sockbuf_notify_due(&a.rx));
	struct sockbuf_desc d;
	int err;
	for (int i = 0; i < 2; i++) {
		CHECK(sockbuf_peek(&a.rx, &d, &err) != NULL);
		sockbuf_consume(&a.rx, &d);
	}
	CHECK(!sockbuf_notify_due(&a.rx)); /* 200 */
	CHECK(sockbuf_peek(&a.rx, &d, &err) != NULL);
	sockbuf_consume(&a.rx, &d);
	CHECK(sockbuf_notify_due(&a.rx)); /* 300 */
	sockbuf_notify_at(&e.rx, 1000);
	struct sockbuf e2;
	CHECK(sockbuf_attach(&e2, m, len, SB_ENGINE) == 0);
	CHECK(!sockbuf_notify_due(&a.rx));
	sockbuf_notify_at(&e2.rx, 0); /* a restarted engine clears it */
	CHECK(sockbuf_notify_due(&a.rx));
	CHECK(sockbuf_notify_due(&a.tx)); /* each side has its own */
	free(m);
}

int main(void)
{
	unit_begin(__FILE__);
	RUN(geometry);
	RUN(round_trip_and_wrap);
	RUN(flow_control);
	RUN(stream_room);
	RUN(stream_pieces);
	RUN(stream_read);
	RUN(dgram_read);
	RUN(stream_write);
	RUN(dgram_write);
	RUN(lying_peer);
	RUN(reattach_after_restart);
	RUN(notify_mark);
	RUN(random_model);
	return unit_end();
}
