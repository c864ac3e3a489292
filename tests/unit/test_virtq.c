/* drivers/virtio-net/virtq.c: the split virtqueue against a model of a device written here
 * (it reads the available ring and descriptor chains, and writes used elements as the
 * virtio 1.0 spec says a device does), then a device that writes garbage; and the control
 * queue's VQ_PAIRS_SET command (ctrlq.c) as a device reads and answers it. */
#include "unit.h"
#include "virtq.h"
#include "ctrlq.h"

#define N 8

/* The queue's three parts, as one device-visible area would hold them. */
static _Alignas(16) uint8_t mem_desc[VQ_DESC_BYTES(VQ_MAX)];
static _Alignas(4) uint8_t mem_avail[VQ_AVAIL_BYTES(VQ_MAX)];
static _Alignas(4) uint8_t mem_used[VQ_USED_BYTES(VQ_MAX)];

/* The device's side: where it is in the available ring, and where it writes used ones. */
struct dev {
	struct virtq *q;
	uint16_t avail_seen, used_idx;
};

/* The device takes the next available chain: its descriptors' addresses and lengths, the
 * writable bytes; returns the head or -1 if none is available. */
static int dev_take(struct dev *d, uint64_t *addr, uint32_t *len, int *ndesc, uint32_t *wlen)
{
	struct virtq *q = d->q;
	if (d->avail_seen == q->avail->idx)
		return -1;
	uint16_t head = q->avail->ring[d->avail_seen++ % q->size], i = head;
	*ndesc = 0, *wlen = 0;
	for (;;) {
		addr[*ndesc] = q->desc[i].addr;
		len[*ndesc] = q->desc[i].len;
		if (q->desc[i].flags & VQ_DESC_F_WRITE)
			*wlen += q->desc[i].len;
		(*ndesc)++;
		if (!(q->desc[i].flags & VQ_DESC_F_NEXT) || *ndesc > q->size)
			break;
		i = q->desc[i].next;
	}
	return head;
}

static void dev_use(struct dev *d, uint32_t id, uint32_t len)
{
	d->q->used->ring[d->used_idx % d->q->size] = (struct virtq_used_elem){ id, len };
	d->used_idx++;
	d->q->used->idx = d->used_idx;
}

static void setup(struct virtq *q, struct dev *d, uint16_t size)
{
	REQUIRE(virtq_init(q, size, mem_desc, mem_avail, mem_used) == VQ_OK);
	*d = (struct dev){ q, 0, 0 };
}

static void sizes_must_be_powers_of_two(void)
{
	struct virtq q;
	CHECK_EQ_I64(virtq_init(&q, 0, mem_desc, mem_avail, mem_used), VQ_EINVAL);
	CHECK_EQ_I64(virtq_init(&q, 6, mem_desc, mem_avail, mem_used), VQ_EINVAL);
	CHECK_EQ_I64(virtq_init(&q, 512, mem_desc, mem_avail, mem_used), VQ_EINVAL);
	CHECK_EQ_I64(virtq_init(&q, 256, mem_desc, mem_avail, mem_used), VQ_OK);
	CHECK_EQ_U64(virtq_space(&q), 256);
}

/* A chain of a read-only header and two writable buffers: the device sees them in order,
 * linked, flagged; the avail index moves at publish only; the used element gives the token
 * and length back, and the descriptors are free again. */
static void chains_reach_the_device_in_order(void)
{
	struct virtq q;
	struct dev d;
	setup(&q, &d, N);
	struct virtq_buf b[3] = { { 0x1000, 12, false }, { 0x2000, 100, true }, { 0x3000, 200, true } };
	int head = virtq_add(&q, b, 3, 77);
	CHECK_EQ_I64(head, 0);
	CHECK_EQ_U64(virtq_space(&q), N - 3);
	CHECK_EQ_U64(q.avail->idx, 0); /* not published yet */
	uint64_t addr[N + 1];
	uint32_t len[N + 1], wlen;
	int nd;
	CHECK_EQ_I64(dev_take(&d, addr, len, &nd, &wlen), -1);
	CHECK(virtq_publish(&q));
	CHECK(!virtq_publish(&q)); /* nothing new: no notification */
	REQUIRE(dev_take(&d, addr, len, &nd, &wlen) == head);
	CHECK_EQ_I64(nd, 3);
	CHECK_EQ_U64(addr[0], 0x1000);
	CHECK_EQ_U64(addr[2], 0x3000);
	CHECK_EQ_U64(len[1], 100);
	CHECK_EQ_U64(wlen, 300);
	uint64_t tok = 0;
	uint32_t got = 0;
	CHECK_EQ_I64(virtq_get(&q, &tok, &got), 0);
	dev_use(&d, (uint32_t)head, 150);
	CHECK_EQ_I64(virtq_get(&q, &tok, &got), 1);
	CHECK_EQ_U64(tok, 77);
	CHECK_EQ_U64(got, 150);
	CHECK_EQ_U64(virtq_space(&q), N);
	CHECK_EQ_I64(virtq_get(&q, &tok, &got), 0);
}

/* Full: VQ_EFULL, nothing changed. */
static void a_full_queue_refuses(void)
{
	struct virtq q;
	struct dev d;
	setup(&q, &d, N);
	struct virtq_buf b[2] = { { 0x1000, 12, false }, { 0x2000, 64, false } };
	for (int i = 0; i < N / 2; i++)
		CHECK(virtq_add(&q, b, 2, (uint64_t)i) >= 0);
	CHECK_EQ_U64(virtq_space(&q), 0);
	CHECK_EQ_I64(virtq_add(&q, b, 1, 99), VQ_EFULL);
	CHECK_EQ_I64(virtq_add(&q, b, 0, 99), VQ_EINVAL);
	CHECK_EQ_U64(q.avail_idx, N / 2);
}

/* 70000 chains of 1..3 descriptors through a queue of 8: the 16-bit indices wrap around,
 * the device completes them out of order (two at a time, the second first), every token
 * comes back once with its length, and no descriptor is lost. */
static void indices_wrap_and_completions_come_out_of_order(void)
{
	struct virtq q;
	struct dev d;
	setup(&q, &d, N);
	uint64_t next_token = 1, want_sum = 0, got_sum = 0, done = 0;
	int pending_head[2], pending = 0;
	uint32_t pending_len[2];
	for (int round = 0; round < 70000; round++) {
		unsigned n = 1 + (unsigned)round % 3;
		struct virtq_buf b[3];
		for (unsigned k = 0; k < n; k++)
			b[k] = (struct virtq_buf){ 0x10000u * (uint64_t)(k + 1), 64, k > 0 };
		int h = virtq_add(&q, b, n, next_token);
		if (h == VQ_EFULL) {
			round--;
		} else {
			REQUIRE(h >= 0 && h < N);
			want_sum += next_token++;
		}
		virtq_publish(&q);
		uint64_t addr[N + 1];
		uint32_t len[N + 1], wlen;
		int ndesc, head;
		while (pending < 2 && (head = dev_take(&d, addr, len, &ndesc, &wlen)) >= 0) {
			pending_head[pending] = head;
			pending_len[pending++] = wlen;
		}
		if (pending == 2 || h == VQ_EFULL) {
			for (int k = pending - 1; k >= 0; k--)
				dev_use(&d, (uint32_t)pending_head[k], pending_len[k]);
			pending = 0;
		}
		uint64_t tok;
		uint32_t l;
		int r;
		while ((r = virtq_get(&q, &tok, &l)) == 1)
			got_sum += tok, done++;
		REQUIRE(r == 0);
	}
	/* the device finishes what it holds and what is still available; everything is back */
	for (int k = pending - 1; k >= 0; k--)
		dev_use(&d, (uint32_t)pending_head[k], pending_len[k]);
	uint64_t addr[N + 1];
	uint32_t len[N + 1], wlen;
	int ndesc, head;
	while ((head = dev_take(&d, addr, len, &ndesc, &wlen)) >= 0)
		dev_use(&d, (uint32_t)head, wlen);
	uint64_t tok;
	uint32_t l;
	while (virtq_get(&q, &tok, &l) == 1)
		got_sum += tok, done++;
	CHECK_EQ_U64(done, next_token - 1);
	CHECK_EQ_U64(got_sum, want_sum);
	CHECK_EQ_U64(virtq_space(&q), N);
	CHECK(done > 65536);                              /* the 16-bit indices wrapped */
	CHECK_EQ_U64(q.avail->idx, (uint16_t)done);
	CHECK_EQ_U64(q.used_seen, (uint16_t)done);
}

/* A device that writes garbage: an id past the queue, an id that heads no chain in flight
 * (one already used, or a descriptor in the middle of a chain), a used index ahead of what
 * was made available: errors, the queue untouched; a length longer than the chain's
 * writable buffers: an error with the token, the chain freed. */
static void garbage_from_the_device_is_refused(void)
{
	struct virtq q;
	struct dev d;
	setup(&q, &d, N);
	struct virtq_buf b[2] = { { 0x1000, 12, true }, { 0x2000, 2048, true } };
	int h0 = virtq_add(&q, b, 2, 10), h1 = virtq_add(&q, b, 2, 11);
	REQUIRE(h0 == 0 && h1 == 2);
	virtq_publish(&q);
	uint64_t tok = 0;
	uint32_t len = 0;
	dev_use(&d, 9999, 100); /* no such descriptor */
	CHECK_EQ_I64(virtq_get(&q, &tok, &len), VQ_EBADID);
	CHECK_EQ_U64(q.used_seen, 0);
	d.used_idx--, q.used->idx = d.used_idx;
	dev_use(&d, 1, 100); /* the second descriptor of chain 0, not a head */
	CHECK_EQ_I64(virtq_get(&q, &tok, &len), VQ_EBADID);
	d.used_idx--, q.used->idx = d.used_idx;
	q.used->idx = 5; /* five used, two in flight */
	CHECK_EQ_I64(virtq_get(&q, &tok, &len), VQ_EBADIDX);
	q.used->idx = d.used_idx;
	dev_use(&d, (uint32_t)h0, 12 + 2048 + 1); /* longer than what it may write */
	CHECK_EQ_I64(virtq_get(&q, &tok, &len), VQ_EBADLEN);
	CHECK_EQ_U64(tok, 10);
	CHECK_EQ_U64(virtq_space(&q), N - 2);
	dev_use(&d, (uint32_t)h0, 100); /* chain 0 again: used already */
	CHECK_EQ_I64(virtq_get(&q, &tok, &len), VQ_EBADID);
	d.used_idx--, q.used->idx = d.used_idx;
	dev_use(&d, (uint32_t)h1, 12 + 2048);
	CHECK_EQ_I64(virtq_get(&q, &tok, &len), 1);
	CHECK_EQ_U64(tok, 11);
	CHECK_EQ_U64(virtq_space(&q), N);
	/* the device changing the table's links cannot corrupt our free list */
	for (int i = 0; i < N; i++)
		q.desc[i].next = 0xdead;
	for (int i = 0; i < N / 2; i++)
		CHECK(virtq_add(&q, b, 2, 20 + (uint64_t)i) >= 0);
	CHECK_EQ_U64(virtq_space(&q), 0);
}

/* virtq_peek leaves the element for later (the driver had nowhere to put it). */
static void peek_then_pop(void)
{
	struct virtq q;
	struct dev d;
	setup(&q, &d, N);
	struct virtq_buf b = { 0x1000, 64, true };
	int h = virtq_add(&q, &b, 1, 5);
	virtq_publish(&q);
	dev_use(&d, (uint32_t)h, 60);
	uint64_t tok;
	uint32_t len;
	CHECK_EQ_I64(virtq_peek(&q, &tok, &len), 1);
	CHECK_EQ_I64(virtq_peek(&q, &tok, &len), 1);
	CHECK_EQ_U64(virtq_space(&q), N - 1);
	virtq_pop(&q);
	CHECK_EQ_U64(virtq_space(&q), N);
	CHECK_EQ_I64(virtq_peek(&q, &tok, &len), 0);
	/* the device asks not to be notified */
	q.used->flags = VQ_USED_F_NO_NOTIFY;
	virtq_add(&q, &b, 1, 6);
	CHECK(!virtq_publish(&q));
	CHECK_EQ_U64(q.avail->idx, 2);
}

/* One VQ_PAIRS_SET the device answers with ack (0xff: it writes none) and a used length. */
static int ctrl_round(struct virtq *q, struct dev *d, struct vnet_ctrl_cmd *cmd, uint8_t ack, uint32_t used_len)
{
	uint64_t addr[17];
	uint32_t len[17], wlen;
	int nd;
	int r = vnet_ctrl_mq_pairs(q, cmd, 0x5000, 4);
	CHECK_EQ_I64(r, VQ_OK);
	if (r != VQ_OK)
		return r;
	virtq_publish(q);
	int head = dev_take(d, addr, len, &nd, &wlen);
	cmd->ack = ack;
	dev_use(d, (uint32_t)head, used_len);
	return vnet_ctrl_answer(q, cmd);
}

/* VQ_PAIRS_SET as the device reads it (virtio 1.0 §5.1.6.5.5): a read-only header (class
 * 4, command 0), the read-only le16 pair count, then the one writable ack byte; the answer
 * is the ack the device wrote, and only VIRTIO_NET_OK (0) is a yes. */
static void control_queue_sets_the_pairs(void)
{
	struct virtq q;
	struct dev d;
	setup(&q, &d, 16);
	static struct vnet_ctrl_cmd cmd; /* "at bus address" 0x5000 */
	CHECK_EQ_I64(vnet_ctrl_mq_pairs(&q, &cmd, 0x5000, 0), VQ_EINVAL);
	CHECK_EQ_I64(vnet_ctrl_mq_pairs(&q, &cmd, 0x5000, 0x8001), VQ_EINVAL);
	CHECK_EQ_U64(virtq_space(&q), 16);
	CHECK_EQ_I64(vnet_ctrl_mq_pairs(&q, &cmd, 0x5000, 0x104), VQ_OK);
	CHECK_EQ_I64(vnet_ctrl_mq_pairs(&q, &cmd, 0x5000, 2), VQ_EFULL); /* one at a time */
	CHECK(virtq_publish(&q));
	uint64_t addr[17];
	uint32_t len[17], wlen;
	int nd;
	int head = dev_take(&d, addr, len, &nd, &wlen);
	CHECK_EQ_I64(head, 0);
	CHECK_EQ_I64(nd, 3);
	CHECK_EQ_U64(addr[0], 0x5000);
	CHECK_EQ_U64(len[0], 2);
	CHECK_EQ_U64(addr[1], 0x5002);
	CHECK_EQ_U64(len[1], 2);
	CHECK_EQ_U64(addr[2], 0x5004);
	CHECK_EQ_U64(len[2], 1);
	CHECK_EQ_U64(wlen, 1); /* the ack only */
	CHECK(!(q.desc[0].flags & VQ_DESC_F_WRITE) && !(q.desc[1].flags & VQ_DESC_F_WRITE));
	CHECK(q.desc[2].flags & VQ_DESC_F_WRITE);
	const uint8_t *b = (const uint8_t *)&cmd;
	CHECK_EQ_U64(b[0], VNET_CTRL_MQ);
	CHECK_EQ_U64(b[1], VNET_CTRL_MQ_VQ_PAIRS_SET);
	CHECK_EQ_U64(b[2], 0x04);
	CHECK_EQ_U64(b[3], 0x01); /* little-endian 0x104 */
	CHECK_EQ_I64(vnet_ctrl_answer(&q, &cmd), VNET_CTRL_WAIT); /* no answer yet */
	cmd.ack = VNET_CTRL_OK;
	dev_use(&d, (uint32_t)head, 1);
	CHECK_EQ_I64(vnet_ctrl_answer(&q, &cmd), VNET_CTRL_DONE);
	CHECK_EQ_U64(virtq_space(&q), 16);
	/* refused: VIRTIO_NET_ERR, or a used element without the ack written; lies: more written
	 * than the ack, an id never given */
	CHECK_EQ_I64(ctrl_round(&q, &d, &cmd, VNET_CTRL_ERR, 1), VNET_CTRL_REFUSED);
	CHECK_EQ_I64(ctrl_round(&q, &d, &cmd, 0xff, 0), VNET_CTRL_REFUSED);
	CHECK_EQ_I64(ctrl_round(&q, &d, &cmd, VNET_CTRL_OK, 5), VNET_CTRL_BAD);
	setup(&q, &d, 16);
	CHECK_EQ_I64(vnet_ctrl_mq_pairs(&q, &cmd, 0x5000, 4), VQ_OK);
	virtq_publish(&q);
	dev_use(&d, 7, 1);
	CHECK_EQ_I64(vnet_ctrl_answer(&q, &cmd), VNET_CTRL_BAD);
}

int main(void)
{
	unit_begin(__FILE__);
	RUN(sizes_must_be_powers_of_two);
	RUN(chains_reach_the_device_in_order);
	RUN(a_full_queue_refuses);
	RUN(indices_wrap_and_completions_come_out_of_order);
	RUN(garbage_from_the_device_is_refused);
	RUN(peek_then_pop);
	RUN(control_queue_sets_the_pairs);
	return unit_end();
}
