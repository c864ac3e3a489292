/* The control virtqueue's VQ_PAIRS_SET command (ctrlq.h). */
#include "ctrlq.h"

int vnet_ctrl_mq_pairs(struct virtq *q, volatile struct vnet_ctrl_cmd *c, uint64_t bus, uint16_t pairs)
{
	if (pairs < VNET_CTRL_MQ_PAIRS_MIN || pairs > VNET_CTRL_MQ_PAIRS_MAX)
		return VQ_EINVAL;
	if (q->inflight)
		return VQ_EFULL;
	c->cls = VNET_CTRL_MQ;
	c->cmd = VNET_CTRL_MQ_VQ_PAIRS_SET;
	c->data[0] = (uint8_t)pairs;
	c->data[1] = (uint8_t)(pairs >> 8);
	c->ack = 0xff; /* not an answer: a device that writes nothing has not said yes */
	const struct virtq_buf b[3] = { { bus, 2, false }, { bus + 2, 2, false }, { bus + 4, 1, true } };
	int head = virtq_add(q, b, 3, pairs);
	return head < 0 ? head : VQ_OK;
}

int vnet_ctrl_answer(struct virtq *q, const volatile struct vnet_ctrl_cmd *c)
{
	uint64_t tok;
	uint32_t len;
	int r = virtq_peek(q, &tok, &len);
	if (r == 0)
		return VNET_CTRL_WAIT;
	if (r != 1)
		return VNET_CTRL_BAD;
	virtq_pop(q);
	__atomic_thread_fence(__ATOMIC_ACQUIRE); /* the ack after the used element */
	return c->ack == VNET_CTRL_OK ? VNET_CTRL_DONE : VNET_CTRL_REFUSED;
}
