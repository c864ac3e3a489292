/* Pools of fixed-size buffers and rich pointers (pool.h). */
#include "pool.h"

long pool_init(struct pool_owner *o, uint32_t pool_id, void *mem, size_t len, uint32_t buf_size,
	       uint32_t nbufs, void *priv, size_t priv_len)
{
	if (!o || !mem || ((uintptr_t)mem & (CHAN_CACHE_LINE - 1)) || len < POOL_HDR_SIZE ||
	    !buf_size || !priv || ((uintptr_t)priv & 3))
		return CHAN_EINVAL;
	uint64_t fit = (len - POOL_HDR_SIZE) / buf_size;
	if (fit < nbufs)
		nbufs = (uint32_t)fit;
	/* Offsets are 32-bit: the whole buffer area must be addressable by one. */
	if (!nbufs || (uint64_t)nbufs * buf_size > UINT32_MAX || priv_len < POOL_PRIV_SIZE(nbufs))
		return CHAN_EINVAL;
	struct pool_shared *sh = mem;
	sh->magic = POOL_MAGIC;
	sh->pool_id = pool_id;
	sh->buf_size = buf_size;
	sh->nbufs = nbufs;
	o->v = (struct pool_view){ (unsigned char *)mem + POOL_HDR_SIZE, pool_id, buf_size, nbufs };
	o->free_stack = priv;
	o->used = (uint8_t *)priv + (size_t)nbufs * sizeof(uint32_t);
	/* Lowest index on top of the stack: buffers are handed out in address order first. */
	for (uint32_t i = 0; i < nbufs; i++)
		o->free_stack[i] = nbufs - 1 - i, o->used[i] = 0;
	o->nfree = nbufs;
	return nbufs;
}

int pool_alloc(struct pool_owner *o, uint32_t len, struct chan_ptr *out)
{
	if (len > o->v.buf_size)
		return CHAN_EINVAL;
	if (!o->nfree)
		return CHAN_EAGAIN;
	uint32_t i = o->free_stack[--o->nfree];
	o->used[i] = 1;
	*out = (struct chan_ptr){ o->v.pool_id, i * o->v.buf_size, len };
	return 0;
}

int pool_free(struct pool_owner *o, struct chan_ptr p)
{
	/* Only the exact pointer pool_alloc made names a buffer to free. */
	if (p.pool_id != o->v.pool_id || p.offset % o->v.buf_size || p.len > o->v.buf_size)
		return CHAN_EINVAL;
	uint32_t i = p.offset / o->v.buf_size;
	if (i >= o->v.nbufs)
		return CHAN_EINVAL;
	if (!o->used[i])
		return CHAN_EDOUBLE;
	o->used[i] = 0;
	o->free_stack[o->nfree++] = i; /* cannot overflow: one entry per used buffer */
	return 0;
}

long pool_reclaim(struct pool_owner *o, struct spsc *ret, uint32_t *rejected)
{
	long freed = 0;
	struct chan_ptr p;
	int r;
	while ((r = spsc_pop_part(ret, &p, sizeof(p))) == 0) {
		if (pool_free(o, p) == 0)
			freed++;
		else if (rejected)
			++*rejected;
	}
	return r == CHAN_EAGAIN ? freed : r;
}

int pool_attach(struct pool_view *v, const void *mem, size_t len)
{
	if (!v || !mem || ((uintptr_t)mem & (CHAN_CACHE_LINE - 1)) || len < POOL_HDR_SIZE)
		return CHAN_EINVAL;
	const volatile struct pool_shared *sh = mem; /* each field read once */
	uint32_t magic = sh->magic, id = sh->pool_id, bs = sh->buf_size, n = sh->nbufs;
	if (magic != POOL_MAGIC || !bs || !n || (uint64_t)bs * n > UINT32_MAX ||
	    (uint64_t)bs * n > len - POOL_HDR_SIZE)
		return CHAN_EINVAL;
	*v = (struct pool_view){ (unsigned char *)mem + POOL_HDR_SIZE, id, bs, n };
	return 0;
}

void *pool_resolve(const struct pool_view *v, struct chan_ptr p)
{
	if (p.pool_id != v->pool_id)
		return NULL;
	uint32_t i = p.offset / v->buf_size;
	/* 64-bit sums: offset + len cannot wrap. The range must stay inside buffer i. */
	if (i >= v->nbufs || (uint64_t)p.offset + p.len > (uint64_t)(i + 1) * v->buf_size)
		return NULL;
	return v->bufs + p.offset;
}

int pool_return(struct spsc *ret, struct chan_ptr p)
{
	return spsc_push_part(ret, &p, sizeof(p));
}
