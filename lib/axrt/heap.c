#include "heap.h"
#include "axrt.h"
#include "keep.h"

#define MIN_SHIFT 5   /* 32 bytes */
#define MAX_SHIFT 16  /* 64 KiB: larger blocks get an object of their own */
#define ARENA (256u << 10)
#define HDR 16        /* every block starts with its header; payload 16-byte aligned */
#define OBJ_HDR 32    /* every object the heap makes starts with a struct obj */

struct hdr {
	uint64_t size;   /* class size (small) or mapped bytes (big) */
	uint64_t magic;  /* HEAP_SMALL or HEAP_BIG: catches frees of foreign pointers */
};
#define HEAP_SMALL 0x736d616c6c686561ull
#define HEAP_BIG 0x626967686561706full
/* A big block's object: its bytes (below 2^40) and, above, its handle. */
static uint64_t big_bytes(const struct hdr *h) { return h->size & ((1ull << 40) - 1); }

/* The head of each arena and big block's object: a successor that adopts the heap (keep.h)
 * knows its objects by it and maps each again where it was. */
struct obj {
	uint64_t magic; /* HEAP_OBJ */
	uint64_t va, bytes, zero;
};
#define HEAP_OBJ 0x6a626f7061656878ull

/* Objects are mapped in a window of their own, below the area where the kernel picks
 * addresses, so a successor finds their addresses free. A freed big block's range is kept
 * for reuse (a few; beyond that the address range is given up, of 8 TiB). */
#define WINDOW_BASE 0x080000000000ull
#define WINDOW_END 0x100000000000ull
#define HOLES 64

/* All of the heap's state is kept (AX_KEPT): the free lists and the arena hold pointers into
 * objects a successor maps again at the same addresses. */
static AX_KEPT struct heap {
	void *free_list[MAX_SHIFT + 1];
	char *arena_cur, *arena_end;
	uint64_t next_va; /* the window's lowest address never used; 0: WINDOW_BASE */
	struct { uint64_t va, bytes; } holes[HOLES];
} heap;

/* An address range for `bytes` (and the guard page after it), or 0. */
static uint64_t va_take(uint64_t bytes)
{
	uint64_t need = bytes + 4096;
	for (int i = 0; i < HOLES; i++)
		if (heap.holes[i].bytes >= need) {
			uint64_t va = heap.holes[i].va;
			heap.holes[i].va += need, heap.holes[i].bytes -= need;
			return va;
		}
	uint64_t va = heap.next_va ? heap.next_va : WINDOW_BASE;
	if (need > WINDOW_END - va)
		return 0;
	heap.next_va = va + need;
	return va;
}

static void va_give(uint64_t va, uint64_t bytes)
{
	for (int i = 0; i < HOLES; i++)
		if (!heap.holes[i].bytes) {
			heap.holes[i].va = va, heap.holes[i].bytes = bytes + 4096;
			return;
		}
}

/* A fresh object of `bytes` (a whole number of pages), mapped, its head written; its handle
 * in *handle. */
static struct obj *map_bytes(uint64_t bytes, int64_t *handle)
{
	uint64_t va = va_take(bytes);
	int64_t h = va ? ax_mo_create(bytes / 4096, 0) : -1;
	int64_t r = h > 0 ? ax_mo_map(h, va, 0, bytes / 4096, KP_R | KP_W) : -1;
	if (r != (int64_t)va || !va) {
		if (h > 0)
			ax_mo_destroy(h);
		if (va)
			va_give(va, bytes);
		return NULL;
	}
	*handle = h;
	struct obj *o = (struct obj *)va;
	*o = (struct obj){ HEAP_OBJ, va, bytes, 0 };
	return o;
}

bool ax_heap_object(const void *head, uint64_t *va, uint64_t *bytes)
{
	const struct obj *o = head;
	if (o->magic != HEAP_OBJ || o->va < WINDOW_BASE || o->va >= WINDOW_END || o->va % 4096 ||
	    !o->bytes || o->bytes % 4096 || o->bytes > WINDOW_END - o->va)
		return false;
	*va = o->va, *bytes = o->bytes;
	return true;
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
		uint64_t bytes = (total + OBJ_HDR + 4095) & ~4095ull;
		int64_t handle;
		struct obj *o = map_bytes(bytes, &handle);
		if (!o)
			return NULL;
		struct hdr *h = (struct hdr *)((char *)o + OBJ_HDR);
		*h = (struct hdr){ bytes | (uint64_t)handle << 40, HEAP_BIG }; /* bytes < 2^40 */
		return (char *)h + HDR;
	}
	int s = shift_for(total);
	struct hdr *h = heap.free_list[s];
	if (h) {
		heap.free_list[s] = *(void **)((char *)h + HDR);
	} else {
		if (heap.arena_cur + (1ull << s) > heap.arena_end) {
			int64_t handle;
			char *a = (char *)map_bytes(ARENA, &handle);
			if (!a)
				return NULL;
			/* the old arena's tail is given up */
			heap.arena_cur = a + OBJ_HDR, heap.arena_end = a + ARENA;
		}
		h = (struct hdr *)heap.arena_cur;
		heap.arena_cur += 1ull << s;
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
		uint64_t va = (uint64_t)h - OBJ_HDR, bytes = big_bytes(h);
		h->magic = 0;
		ax_mo_destroy((int64_t)(h->size >> 40)); /* the object, its mapping and its pages */
		va_give(va, bytes);
		return;
	}
	if (h->magic != HEAP_SMALL) {
		ax_printf("heap: free of a pointer it never gave: %p\n", p);
		return;
	}
	h->magic = 0;
	int s = shift_for(h->size);
	*(void **)p = heap.free_list[s];
	heap.free_list[s] = h;
}

void *ax_realloc(void *p, size_t n)
{
	if (!p)
		return ax_malloc(n);
	struct hdr *h = (struct hdr *)((char *)p - HDR);
	size_t have = h->magic == HEAP_BIG ? big_bytes(h) - OBJ_HDR - HDR : h->size - HDR;
	if (n <= have)
		return p;
	void *q = ax_malloc(n);
	if (q) {
		memcpy(q, p, have);
		ax_free(p);
	}
	return q;
}
