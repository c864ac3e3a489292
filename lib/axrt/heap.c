#include "heap.h"
#include "axrt.h"

#define MIN_SHIFT 5   /* 32 bytes */
#define MAX_SHIFT 16  /* 64 KiB: larger blocks get an object of their own */
#define ARENA (256u << 10)
#define HDR 16        /* every block starts with its header; payload 16-byte aligned */

struct hdr {
	uint64_t size;   /* class size (small) or mapped bytes (big) */
	uint64_t magic;  /* HEAP_SMALL or HEAP_BIG: catches frees of foreign pointers */
};
#define HEAP_SMALL 0x736d616c6c686561ull
#define HEAP_BIG 0x626967686561706full

static void *free_list[MAX_SHIFT + 1];
static char *arena_cur, *arena_end;

/* A fresh object of `bytes`, mapped; its handle in *handle. */
static void *map_bytes(uint64_t bytes, int64_t *handle)
{
	int64_t h = ax_mo_create(bytes / 4096, 0);
	int64_t va = h > 0 ? ax_mo_map(h, 0, 0, bytes / 4096, KP_R | KP_W) : -1;
	if (va <= 0) {
		if (h > 0)
			ax_mo_destroy(h);
		return NULL;
	}
	*handle = h;
	return (void *)va;
}

static int shift_for(size_t total)
{
	int s = MIN_SHIFT;
	while ((1ull << s) < total)
		s++;
	return s;
}

void *ax_malloc(size_t n)
{
	if (n > (1ull << 40))
		return NULL;
	size_t total = n + HDR;
	if (total > (1ull << MAX_SHIFT)) {
		uint64_t bytes = (total + 4095) & ~4095ull;
		int64_t handle;
		struct hdr *h = map_bytes(bytes, &handle);
		if (!h)
			return NULL;
		*h = (struct hdr){ bytes | (uint64_t)handle << 40, HEAP_BIG }; /* bytes < 2^40 */
		return (char *)h + HDR;
	}
	int s = shift_for(total);
	struct hdr *h = free_list[s];
	if (h) {
		free_list[s] = *(void **)((char *)h + HDR);
	} else {
		if (arena_cur + (1ull << s) > arena_end) {
			int64_t handle;
			char *a = map_bytes(ARENA, &handle);
			if (!a)
				return NULL;
			arena_cur = a, arena_end = a + ARENA; /* the old arena's tail is given up */
		}
		h = (struct hdr *)arena_cur;
		arena_cur += 1ull << s;
	}
	*h = (struct hdr){ 1ull << s, HEAP_SMALL };
	return (char *)h + HDR;
}

void *ax_calloc(size_t n, size_t size)
{
	if (size && n > (size_t)-1 / size)
		return NULL;
	void *p = ax_malloc(n * size);
	if (p)
		memset(p, 0, n * size);
	return p;
}

void ax_free(void *p)
{
	if (!p)
		return;
	struct hdr *h = (struct hdr *)((char *)p - HDR);
	if (h->magic == HEAP_BIG) {
		h->magic = 0;
		ax_mo_destroy((int64_t)(h->size >> 40)); /* the object, its mapping and its pages */
		return;
	}
	if (h->magic != HEAP_SMALL) {
		ax_printf("heap: free of a pointer it never gave: %p\n", p);
		return;
	}
	h->magic = 0;
	int s = shift_for(h->size);
	*(void **)p = free_list[s];
	free_list[s] = h;
}

void *ax_realloc(void *p, size_t n)
{
	if (!p)
		return ax_malloc(n);
	struct hdr *h = (struct hdr *)((char *)p - HDR);
	size_t have = (h->magic == HEAP_BIG ? h->size & ((1ull << 40) - 1) : h->size) - HDR;
	if (n <= have)
		return p;
	void *q = ax_malloc(n);
	if (q) {
		memcpy(q, p, have);
		ax_free(p);
	}
	return q;
}
