/* ip's pools as the driver sees them: imported read-only, DMA memory (physically
 * contiguous), their bus addresses. */
#include "netdrv_int.h"

int nd_pool_find(uint32_t id)
{
	for (int i = 0; i < NETDRV_MAX_POOLS; i++)
		if (nd.pools[i].used && nd.pools[i].id == id)
			return i;
	return -1;
}

uint64_t netdrv_pool_bus(int idx, struct chan_ptr p) { return nd.pools[idx].bus + p.offset; }

void nd_pool_drop(int i)
{
	struct netdrv_pool *p = &nd.pools[i];
	if (!p->used)
		return;
	chan_unimport(&p->imp); /* closes our handle: the owner's memory can go */
	memset(p, 0, sizeof(*p));
}

/* Imports label/key as pool id into slot i; 0 or an error. The bus address is that of a
 * MOF_DMA object, physically contiguous: page 0's address plus the header. */
int64_t nd_pool_import(int i, uint32_t id, const char *label, const char *key)
{
	struct netdrv_pool *p = &nd.pools[i];
	nd_pool_drop(i);
	int64_t r = chan_import(label, key, &p->imp);
	if (r < 0)
		return r;
	p->used = true;
	int64_t pa = kcall2(KC_MO_PHYS, (uint64_t)p->imp.handle, 0);
	int64_t last = pa > 0 ? kcall2(KC_MO_PHYS, (uint64_t)p->imp.handle, p->imp.bytes / 4096 - 1) : pa;
	if (pa <= 0 || last != pa + (int64_t)(p->imp.bytes - 4096))
		r = pa < 0 ? pa : -KE_INVAL;
	else if (pool_attach(&p->v, p->imp.va, p->imp.bytes) < 0 || p->v.pool_id != id)
		r = -KE_INVAL;
	if (r < 0) {
		nd_pool_drop(i);
		return r;
	}
	p->id = id;
	ax_strpad(p->label, sizeof(p->label), label); /* ds names: 1..15 characters, checked */
	ax_strpad(p->key, sizeof(p->key), key);
	p->bus = (uint64_t)pa + POOL_HDR_SIZE;
	return 0;
}
