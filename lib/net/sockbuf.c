/* A socket's buffers: descriptor queues plus byte rings (sockbuf.h). */
#include "sockbuf.h"

#define LINE 64u
#define PAGE 4096u

static uint64_t up(uint64_t x, uint64_t a) { return (x + a - 1) & ~(a - 1); }
static bool pow2(uint32_t x) { return x && !(x & (x - 1)); }

/* Offsets of every part for a geometry; false if the geometry is invalid. */
static bool layout(struct sockbuf_hdr *h, uint32_t rx_slots, uint32_t rx_size, uint32_t tx_slots,
		   uint32_t tx_size)
{
	size_t rq = spsc_size(SOCKBUF_SLOT, rx_slots), tq = spsc_size(SOCKBUF_SLOT, tx_slots);
	if (!rq || !tq || !rx_size || !tx_size || rx_size > (1u << 30) || tx_size > (1u << 30))
		return false;
	uint64_t o = up(sizeof(struct sockbuf_hdr), LINE);
	h->rx_q = o;
	o = up(o + rq, LINE);
	h->rx_rel = o;
	o += LINE;
	h->tx_q = o;
	o = up(o + tq, LINE);
	h->tx_rel = o;
	o = up(o + LINE, PAGE);
	h->rx_data = o;
	o = up(o + rx_size, PAGE);
	h->tx_data = o;
	h->bytes = up(o + tx_size, PAGE);
	h->rx_slots = rx_slots;
	h->tx_slots = tx_slots;
	h->rx_size = rx_size;
	h->tx_size = tx_size;
	h->magic = SOCKBUF_MAGIC;
	h->version = SOCKBUF_VERSION;
	return pow2(rx_slots) && pow2(tx_slots);
}

size_t sockbuf_size(uint32_t rx_slots, uint32_t rx_size, uint32_t tx_slots, uint32_t tx_size)
{
	struct sockbuf_hdr h;
	return layout(&h, rx_slots, rx_size, tx_slots, tx_size) ? (size_t)h.bytes : 0;
}

int sockbuf_init(void *mem, size_t len, uint32_t rx_slots, uint32_t rx_size, uint32_t tx_slots,
		 uint32_t tx_size)
{
	struct sockbuf_hdr h;
	if (!mem || ((uintptr_t)mem & (PAGE - 1)) || !layout(&h, rx_slots, rx_size, tx_slots, tx_size) ||
	    h.bytes > len)
		return CHAN_EINVAL;
	unsigned char *b = mem;
	/* The header, the queues' headers and the `released` lines only: a queue's slots and
	 * the byte rings are read only where an index or a descriptor names what its producer
	 * wrote. A new buffer object comes zeroed from the kernel (and lazily: each page when
	 * first touched, so what is not written here is not made), and a parked one goes back
	 * only to the process that had it. Zeroing a stream's 512 KiB of rings here once cost
	 * more than the rest of a connection's setup. */
	memset(b, 0, (size_t)h.rx_q);
	memset(b + h.rx_rel, 0, LINE);
	memset(b + h.tx_rel, 0, LINE);
	if (spsc_init(b + h.rx_q, (size_t)(h.rx_rel - h.rx_q), SOCKBUF_SLOT, rx_slots) < 0 ||
	    spsc_init(b + h.tx_q, (size_t)(h.tx_rel - h.tx_q), SOCKBUF_SLOT, tx_slots) < 0)
		return CHAN_EINVAL;
	memcpy(b, &h, sizeof(h));
	return 0;
}

static int side_attach(struct sockbuf_side *s, unsigned char *b, uint64_t q, uint64_t rel,
		       uint64_t data, uint32_t size, bool producer)
{
	*s = (struct sockbuf_side){ .data = b + data, .size = size, .producer = producer,
				    .released = (_Atomic uint64_t *)(void *)(b + rel),
				    .notify_at = (_Atomic uint64_t *)(void *)(b + rel + sizeof(uint64_t)) };
	int r0 = spsc_attach(&s->q, b + q, (size_t)(rel - q), producer ? SPSC_PRODUCER : SPSC_CONSUMER);
	if (r0 < 0)
		return r0;
	/* Continue from what is published: an engine re-attaching after a restart. */
	uint64_t r = atomic_load_explicit(s->released, memory_order_acquire);
	s->consumed = r;
	s->produced = r;
	long queued = spsc_count(&s->q);
	if (queued < 0)
		return CHAN_ECORRUPT;
	if (producer && queued > 0) {
		/* Messages not yet consumed: production continues after the newest one. */
		struct sockbuf_desc last;
		memcpy(&last, s->q.slots + ((s->q.mine - 1) & (s->q.nslots - 1)) * s->q.slot_size, sizeof(last));
		if (last.end < r || last.end - r > size)
			return CHAN_ECORRUPT;
		s->produced = last.end;
	}
	return 0;
}

int sockbuf_attach(struct sockbuf *sb, void *mem, size_t len, int role)
{
	struct sockbuf_hdr h, want;
	if (!sb || !mem || len < sizeof(h))
		return CHAN_EINVAL;
	memcpy(&h, mem, sizeof(h)); /* once: later rewrites of the header are ignored */
	if (h.magic != SOCKBUF_MAGIC || h.version != SOCKBUF_VERSION ||
	    !layout(&want, h.rx_slots, h.rx_size, h.tx_slots, h.tx_size) || h.bytes != want.bytes ||
	    h.rx_q != want.rx_q || h.rx_rel != want.rx_rel || h.rx_data != want.rx_data || h.tx_q != want.tx_q ||
	    h.tx_rel != want.tx_rel || h.tx_data != want.tx_data || h.bytes > len)
		return CHAN_EINVAL;
	unsigned char *b = mem;
	bool app = role == SB_APP;
	int r = side_attach(&sb->rx, b, h.rx_q, h.rx_rel, h.rx_data, h.rx_size, !app);
	return r ? r : side_attach(&sb->tx, b, h.tx_q, h.tx_rel, h.tx_data, h.tx_size, app);
}

/* Producer: bytes in use (produced, not released), or -1 if `released` is impossible. */
static int64_t in_use(struct sockbuf_side *s)
{
	uint64_t r = atomic_load_explicit(s->released, memory_order_acquire);
	uint64_t used = s->produced - r;
	return used > s->size ? -1 : (int64_t)used;
}

void *sockbuf_alloc(struct sockbuf_side *s, uint32_t len, int *err)
{
	int e = CHAN_EINVAL;
	if (s->producer && len <= s->size / 2) {
		int64_t used = in_use(s);
		uint32_t pos = (uint32_t)(s->produced % s->size);
		uint32_t skip = len > s->size - pos ? s->size - pos : 0;
		if (used < 0)
			e = SOCKBUF_ECORRUPT;
		else if ((uint64_t)used + skip + len > s->size)
			e = CHAN_EAGAIN;
		else
			return s->data + (skip ? 0 : pos);
	}
	if (err)
		*err = e;
	return NULL;
}

int sockbuf_commit(struct sockbuf_side *s, uint32_t len, const struct sockbuf_desc *d)
{
	uint32_t pos = (uint32_t)(s->produced % s->size);
	uint64_t start = s->produced + (len > s->size - pos ? s->size - pos : 0);
	struct sockbuf_desc m = *d;
	m.off = (uint32_t)(start % s->size);
	m.len = len;
	m.end = start + len;
	int r = spsc_push(&s->q, &m);
	if (r == 0)
		s->produced = m.end;
	return r;
}

uint32_t sockbuf_room(struct sockbuf_side *s)
{
	int64_t used = in_use(s);
	long queued = spsc_count(&s->q);
	if (!s->producer || used < 0 || queued < 0 || (uint64_t)queued >= s->q.nslots)
		return 0;
	uint32_t pos = (uint32_t)(s->produced % s->size), to_end = s->size - pos;
	uint32_t free = s->size - (uint32_t)used;
	uint32_t here = free < to_end ? free : to_end;           /* from pos, no wrap */
	uint32_t wrapped = free > to_end ? free - to_end : 0;    /* from 0, skipping the end */
	uint32_t best = here > wrapped ? here : wrapped;
	return best > s->size / 2 ? s->size / 2 : best;
}

uint32_t sockbuf_space(struct sockbuf_side *s)
{
	int64_t used = in_use(s);
	long queued = spsc_count(&s->q);
	if (used < 0 || queued < 0 || (uint64_t)queued >= s->q.nslots)
		return 0;
	return s->size - (uint32_t)used;
}

const void *sockbuf_peek(struct sockbuf_side *s, struct sockbuf_desc *d, int *err)
{
	int r = s->producer ? CHAN_EINVAL : spsc_peek(&s->q, d);
	if (r == 0) {
		/* The descriptor is our copy now; check it against what we know. */
		uint64_t start = d->end - d->len;
		if (d->end < s->consumed || d->len > d->end - s->consumed || d->end - s->consumed > s->size ||
		    d->off != start % s->size || d->len > s->size - d->off)
			r = SOCKBUF_ECORRUPT;
		else
			return s->data + d->off;
	}
	if (err)
		*err = r;
	return NULL;
}

void sockbuf_consume(struct sockbuf_side *s, const struct sockbuf_desc *d)
{
	unsigned char scratch[SOCKBUF_SLOT];
	if (spsc_pop(&s->q, scratch) != 0)
		return;
	if (d->end >= s->consumed && d->end - s->consumed <= s->size)
		s->consumed = d->end;
	atomic_store_explicit(s->released, s->consumed, memory_order_release);
}

void sockbuf_notify_at(struct sockbuf_side *s, uint64_t at)
{
	atomic_store_explicit(s->notify_at, at, memory_order_relaxed);
}

bool sockbuf_notify_due(struct sockbuf_side *s)
{
	return s->consumed >= atomic_load_explicit(s->notify_at, memory_order_relaxed);
}

bool sockbuf_ready(struct sockbuf_side *s)
{
	return spsc_count(&s->q) > 0;
}

const unsigned char *sockbuf_stream_peek(struct sockbuf_side *s, uint32_t off, uint64_t want,
					 struct sockbuf_desc *d, uint64_t *n, int *err)
{
	const unsigned char *p = sockbuf_peek(s, d, err);
	if (!p)
		return NULL;
	if (d->flags & SBD_FIN) {
		*err = SOCKBUF_EFIN;
		return NULL;
	}
	if (off > d->len) {
		*err = SOCKBUF_ECORRUPT;
		return NULL;
	}
	*n = d->len - off < want ? d->len - off : want;
	return p + off;
}

bool sockbuf_stream_advance(struct sockbuf_side *s, const struct sockbuf_desc *d, uint32_t *off, uint64_t n)
{
	*off += (uint32_t)n;
	if (!(d->flags & SBD_FIN) && *off < d->len)
		return false;
	sockbuf_consume(s, d);
	*off = 0;
	return true;
}

uint64_t sockbuf_produced_count(struct sockbuf_side *s)
{
	return atomic_load_explicit(&s->q.sh->head, memory_order_acquire);
}

bool sockbuf_stream_fin_queued(struct sockbuf_side *s)
{
	struct sockbuf_desc d;
	return spsc_peek_newest(&s->q, &d) == 0 && (d.flags & SBD_FIN) && d.len == 0;
}

void sockbuf_stream_read(struct sockbuf_side *s, uint32_t *off, uint64_t len, int how, sockbuf_copy_fn copy,
			 void *ctx, struct sockbuf_read *r)
{
	r->fin = r->freed = false;
	r->err = 0;
	while (r->got < len) {
		struct sockbuf_desc d;
		uint64_t n;
		int err;
		const unsigned char *p = sockbuf_stream_peek(s, *off, len - r->got, &d, &n, &err);
		if (!p && err == SOCKBUF_EFIN) {
			r->fin = true;
			if (!(how & SOCKBUF_READ_PEEK)) /* every read from now on returns 0 */
				r->freed |= sockbuf_stream_advance(s, &d, off, 0);
			return;
		}
		if (!p) {
			r->err = err == CHAN_EAGAIN ? 0 : SOCKBUF_ECORRUPT;
			return;
		}
		if (!(how & SOCKBUF_READ_TRUNC) && (r->err = copy(ctx, r->got, p, n)) != 0)
			return;
		r->got += n;
		if (how & SOCKBUF_READ_PEEK)
			return;
		r->freed |= sockbuf_stream_advance(s, &d, off, n);
	}
}

int64_t sockbuf_dgram_read(struct sockbuf_side *s, uint64_t len, int how, sockbuf_copy_fn copy, void *ctx,
			   struct sockbuf_desc *d, bool *cut, int *copy_err)
{
	int err;
	*copy_err = 0;
	const unsigned char *p = sockbuf_peek(s, d, &err);
	if (!p)
		return err == CHAN_EAGAIN ? CHAN_EAGAIN : SOCKBUF_ECORRUPT;
	uint64_t n = d->len < len ? d->len : len;
	*copy_err = copy(ctx, 0, p, n);
	*cut = n < d->len || (d->flags & SBD_TRUNC);
	if (!(how & SOCKBUF_READ_PEEK))
		sockbuf_consume(s, d);
	return (how & SOCKBUF_READ_TRUNC) ? (int64_t)d->len : (int64_t)n;
}

int sockbuf_stream_write(struct sockbuf_side *s, uint64_t *done, uint64_t len, uint32_t piece, sockbuf_fill_fn fill,
			 void *ctx)
{
	while (*done < len) {
		uint64_t n = len - *done;
		uint32_t room = sockbuf_room(s);
		n = n < room ? n : room;
		if (piece && n > piece)
			n = piece;
		unsigned char *p = n ? sockbuf_alloc(s, (uint32_t)n, NULL) : NULL;
		if (!p)
			return 0;
		int e = fill(ctx, *done, p, n);
		if (e)
			return e;
		struct sockbuf_desc d = { 0 };
		if (sockbuf_commit(s, (uint32_t)n, &d))
			return 0; /* the descriptor queue is full (sockbuf_room saw a slot: a peer's doing) */
		*done += n;
	}
	return 0;
}

int sockbuf_dgram_write(struct sockbuf_side *s, uint64_t len, const struct sockbuf_desc *d, sockbuf_fill_fn fill,
			void *ctx)
{
	int err;
	if (len > UINT32_MAX)
		return CHAN_EINVAL;
	unsigned char *p = sockbuf_alloc(s, (uint32_t)len, &err);
	if (!p)
		return err;
	int e = fill(ctx, 0, p, len);
	if (e)
		return e; /* nothing committed: the space is offered again */
	e = sockbuf_commit(s, (uint32_t)len, d);
	return e == 0 ? 0 : e == CHAN_EAGAIN ? CHAN_EAGAIN : SOCKBUF_ECORRUPT;
}
