/* Split virtqueues: the driver's side (virtq.h). */
#include "virtq.h"
#include <string.h>

int virtq_init(struct virtq *q, uint16_t size, void *desc, void *avail, void *used)
{
	if (!size || size > VQ_MAX || (size & (size - 1)))
		return VQ_EINVAL;
	memset(q, 0, sizeof(*q));
	q->size = size;
	q->desc = desc;
	q->avail = avail;
	q->used = used;
	memset(desc, 0, VQ_DESC_BYTES(size));
	memset(avail, 0, VQ_AVAIL_BYTES(size));
	memset(used, 0, VQ_USED_BYTES(size));
	for (uint16_t i = 0; i < size; i++)
		q->next[i] = (uint16_t)(i + 1 < size ? i + 1 : 0);
	q->free_head = 0;
	q->nfree = size;
	return VQ_OK;
}

uint16_t virtq_space(const struct virtq *q) { return q->nfree; }

int virtq_add(struct virtq *q, const struct virtq_buf *b, unsigned n, uint64_t token)
{
	if (!n || n > 255)
		return VQ_EINVAL;
	if (n > q->nfree)
		return VQ_EFULL;
	uint16_t head = q->free_head, i = head;
	uint32_t wlen = 0;
	for (unsigned k = 0; k < n; k++) {
		q->desc[i].addr = b[k].addr;
		q->desc[i].len = b[k].len;
		q->desc[i].flags = (uint16_t)((b[k].write ? VQ_DESC_F_WRITE : 0) | (k + 1 < n ? VQ_DESC_F_NEXT : 0));
		q->desc[i].next = q->next[i];
		if (b[k].write)
			wlen += b[k].len;
		i = q->next[i];
	}
	q->free_head = i; /* the chain is the free list's first n: the rest stays free */
	q->nfree = (uint16_t)(q->nfree - n);
	q->chain_n[head] = (uint8_t)n;
	q->chain_wlen[head] = wlen;
	q->token[head] = token;
	q->avail->ring[q->avail_idx & (q->size - 1)] = head;
	q->avail_idx++;
	q->inflight++;
	return head;
}

bool virtq_publish(struct virtq *q)
{
	if (q->avail_idx == q->told)
		return false;
	__atomic_thread_fence(__ATOMIC_RELEASE); /* descriptors and ring entries before the index */
	q->avail->idx = q->avail_idx;
	q->told = q->avail_idx;
	__atomic_thread_fence(__ATOMIC_SEQ_CST); /* the index before we read the device's flags */
	return !(q->used->flags & VQ_USED_F_NO_NOTIFY);
}

/* The chain headed at head back on the free list. */
static void chain_free(struct virtq *q, uint16_t head)
{
	uint16_t n = q->chain_n[head], i = head;
	for (uint16_t k = 1; k < n; k++)
		i = q->next[i];
	q->next[i] = q->free_head;
	q->free_head = head;
	q->nfree = (uint16_t)(q->nfree + n);
	q->chain_n[head] = 0;
	q->inflight--;
}

int virtq_peek(struct virtq *q, uint64_t *token, uint32_t *len)
{
	uint16_t idx = q->used->idx;
	if (idx == q->used_seen)
		return 0;
	if ((uint16_t)(idx - q->used_seen) > q->inflight)
		return VQ_EBADIDX; /* more used than we made available */
	__atomic_thread_fence(__ATOMIC_ACQUIRE); /* the element after the index */
	volatile struct virtq_used_elem *e = &q->used->ring[q->used_seen & (q->size - 1)];
	uint32_t id = e->id, l = e->len; /* read once: the device may change them */
	if (id >= q->size || !q->chain_n[id])
		return VQ_EBADID;
	*token = q->token[id];
	*len = l;
	q->peeked = (uint16_t)id;
	return l > q->chain_wlen[id] ? VQ_EBADLEN : 1;
}

void virtq_pop(struct virtq *q)
{
	q->used_seen++;
	chain_free(q, q->peeked);
}

int virtq_get(struct virtq *q, uint64_t *token, uint32_t *len)
{
	int r = virtq_peek(q, token, len);
	if (r == 1 || r == VQ_EBADLEN)
		virtq_pop(q);
	return r;
}
