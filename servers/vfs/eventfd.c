/* eventfd: a 64-bit counter behind a descriptor. A write adds its 8-byte value, a read takes
 * the whole count (or 1 with EFD_SEMAPHORE) and waits while it is 0; a write that would
 * take the count past 2^64 - 2 waits for a read. Waiting is vfs's held calls (VFS_BLOCK). */
#include "vfs.h"
#include "lx_abi.h"
#include "heap.h"

#define EFD_SEMAPHORE 1
#define EFD_MAX 0xfffffffffffffffeull

struct efd {
	uint64_t count;
	bool semaphore;
};

int64_t eventfd_create(struct client *c, uint64_t initval, uint64_t flags)
{
	if (flags & ~(uint64_t)(EFD_SEMAPHORE | LX_O_NONBLOCK | LX_O_CLOEXEC))
		return -LX_EINVAL;
	struct efd *e = ax_calloc(1, sizeof(*e));
	if (e)
		*e = (struct efd){ (uint32_t)initval, flags & EFD_SEMAPHORE };
	return vfs_anon_fd(c, ANON_EVENTFD, e, LX_O_RDWR | (uint32_t)(flags & LX_O_NONBLOCK), flags & LX_O_CLOEXEC, NULL);
}

void eventfd_closed(struct rnode *n)
{
	ax_free(n->priv);
	n->priv = NULL;
}

uint32_t eventfd_poll(const struct ofile *f)
{
	const struct efd *e = f->node->priv;
	return (e->count ? LX_POLLIN | LX_POLLRDNORM : 0) | (e->count < EFD_MAX ? LX_POLLOUT | LX_POLLWRNORM : 0);
}

int64_t eventfd_transfer(struct client *c, struct ofile *f, uint64_t ubuf, uint64_t len, bool write)
{
	struct efd *e = f->node->priv;
	bool nonblock = f->flags & LX_O_NONBLOCK;
	uint64_t v;
	if (len < 8)
		return -LX_EINVAL;
	if (write) {
		if (ax_vcopy(c->ep, (const void *)ubuf, EP_NONE, &v, 8) < 0)
			return -LX_EFAULT;
		if (v == UINT64_MAX)
			return -LX_EINVAL;
		if (v > EFD_MAX - e->count)
			return nonblock ? -LX_EAGAIN : VFS_BLOCK;
		e->count += v;
	} else {
		if (!e->count)
			return nonblock ? -LX_EAGAIN : VFS_BLOCK;
		v = e->semaphore ? 1 : e->count;
		if (ax_vcopy(EP_NONE, &v, c->ep, (void *)ubuf, 8) < 0)
			return -LX_EFAULT;
		e->count -= v;
	}
	f->node->events++;
	return 8;
}
