/* The control virtqueue's one command this driver sends (virtio 1.0 §5.1.6.5.5): how many
 * queue pairs the device spreads received flows over, VIRTIO_NET_CTRL_MQ_VQ_PAIRS_SET.
 * Portable C over a struct virtq like virtq.c, host-tested (tests/unit/test_virtq.c): the
 * driver polls the answer (vnet.c set_queues), a bounded wait. Nothing the device writes is
 * trusted: its used element goes through virtq_peek, and only an ack of VIRTIO_NET_OK in
 * the byte we reset before counts as yes. */
#pragma once
#include "virtq.h"

#define VNET_CTRL_MQ 4              /* class */
#define VNET_CTRL_MQ_VQ_PAIRS_SET 0 /* command; data: le16 virtqueue_pairs */
#define VNET_CTRL_MQ_PAIRS_MIN 1
#define VNET_CTRL_MQ_PAIRS_MAX 0x8000
#define VNET_CTRL_OK 0
#define VNET_CTRL_ERR 1

/* One command in memory the device reads (class, command, data) and writes (ack), in three
 * descriptors: the header, the data, the ack. */
struct vnet_ctrl_cmd {
	uint8_t cls, cmd;
	uint8_t data[2]; /* le16 */
	uint8_t ack;
	uint8_t pad[3];
};
_Static_assert(sizeof(struct vnet_ctrl_cmd) == 8, "the command's layout");

/* vnet_ctrl_answer's results. */
enum { VNET_CTRL_WAIT = 0, VNET_CTRL_DONE = 1, VNET_CTRL_REFUSED = -1, VNET_CTRL_BAD = -2 };

/* Writes VQ_PAIRS_SET with pairs into c (at bus address bus) and queues it on q (published
 * by the caller: virtq_publish, then the doorbell). VQ_OK, VQ_EINVAL for pairs outside
 * 1..0x8000, VQ_EFULL while a command is still in flight (one at a time). */
int vnet_ctrl_mq_pairs(struct virtq *q, volatile struct vnet_ctrl_cmd *c, uint64_t bus, uint16_t pairs);
/* The device's answer to the command in flight: VNET_CTRL_WAIT (none yet), DONE (ack OK),
 * REFUSED (another ack, or none written), BAD (an impossible used element: the queue can no
 * longer be trusted). */
int vnet_ctrl_answer(struct virtq *q, const volatile struct vnet_ctrl_cmd *c);
