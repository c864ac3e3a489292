/* What survives a restart of syscall (README.md, "State and recovery"): the socket table,
 * the activity pages and the readiness channel to vfs live in one lazy memory object, and
 * the objects they name (socket buffers, pages, the bell, syscall/vfs.ev) are ours. rs keeps
 * our handles when we die (`keep` in boot/system.conf; KC_LEGACY) and gives them to the next
 * instance with the same numbers. That instance maps the table object again (the lowest
 * handle it created: we make it before anything else), checks its header, maps each buffer
 * and page again, and closes its handles on every other object its predecessor made
 * (channels to the engines, which are made anew; they go when the engines let go too). A table with another layout (a different build) is not
 * trusted: the new instance starts empty, as a first start. */
#include "syscall.h"
#include "service.h"

#define KEEP_MAGIC 0x3150454b53595331ull /* "1SYSKEP1" */
#define KEEP_PART_BYTES(n) (((n) + 4095) & ~(size_t)4095)

struct keep_hdr {
	uint64_t magic;
	uint64_t layout;      /* the parts' sizes and this build's table geometry */
	int64_t self;         /* this object's handle */
	uint64_t bytes;
	uint64_t generation;  /* instances that used it */
};

/* Parts, each at a page-aligned offset after the header page. */
static const size_t part_bytes[KEEP_PARTS] = {
	[KEEP_SOCKS] = sizeof(struct sock) * MAX_SOCKS,
	[KEEP_ACTS] = KEEP_ACT_BYTES,
	[KEEP_VFS] = KEEP_VFS_BYTES,
};
static struct keep_hdr *hdr;
static bool adopted;

static size_t part_offset(int part)
{
	size_t off = 4096;
	for (int i = 0; i < part; i++)
		off += KEEP_PART_BYTES(part_bytes[i]);
	return off;
}

static uint64_t layout(void)
{
	uint64_t h = 1469598103934665603ull; /* FNV-1a over the sizes */
	uint64_t v[] = { sizeof(struct sock), MAX_SOCKS, KEEP_ACT_BYTES, KEEP_VFS_BYTES, sizeof(struct sockbuf),
			 sizeof(struct keep_hdr), act_layout(), vfsside_layout() };
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		for (int b = 0; b < 8; b++)
			h = (h ^ ((v[i] >> (8 * b)) & 0xff)) * 1099511628211ull;
	return h;
}

static void *keep_part(int part) { return (char *)hdr + part_offset(part); }

/* The lowest handle we created (the table, if a predecessor left one), or 0. */
static int64_t lowest_created(void)
{
	for (int64_t h = 1;; h++) {
		int64_t r = kcall2(KC_INFO, KI_HANDLE, (uint64_t)h);
		if (r == -KE_SRCH)
			return 0;
		if (r >= 0 && (r & 0x100))
			return h;
	}
}

static bool try_adopt(int64_t h, uint64_t bytes)
{
	int64_t va = ax_mo_map(h, 0, 0, bytes / 4096, KP_R | KP_W);
	if (va <= 0)
		return false;
	struct keep_hdr *k = (struct keep_hdr *)va;
	if (k->magic != KEEP_MAGIC || k->layout != layout() || k->self != h || k->bytes != bytes) {
		ax_printf("syscall: the kept socket table does not match this build: starting empty\n");
		ax_mo_unmap((uint64_t)va);
		return false;
	}
	hdr = k;
	return true;
}

/* Every object our predecessor made that nobody adopted goes (keep_sweep's callers said
 * which they took with keep_claim). */
#define MAX_CLAIMED 4096
static int64_t *claimed;
static int nclaimed;

void keep_claim(int64_t h)
{
	if (claimed && nclaimed < MAX_CLAIMED)
		claimed[nclaimed++] = h;
}

static void sweep(void)
{
	int gone = 0;
	for (int64_t h = 1;; h++) {
		int64_t r = kcall2(KC_INFO, KI_HANDLE, (uint64_t)h);
		if (r == -KE_SRCH)
			break;
		if (r < 0 || !(r & 0x100) || h == hdr->self)
			continue;
		bool mine = false;
		for (int i = 0; i < nclaimed && !mine; i++)
			mine = claimed[i] == h;
		/* Our handle only (not a destroy, which would revoke the grants): an engine may
		 * still read the old channel until it notices us and imports the new one. */
		if (!mine && ax_mo_revoke(EP_NONE, h) == 0)
			gone++;
	}
	ax_printf("syscall: restarted (generation %lu): %d objects of the old instance taken over, %d dropped\n",
		  (unsigned long)hdr->generation, nclaimed, gone);
}

void keep_init(void)
{
	size_t bytes = part_offset(KEEP_PARTS);
	int64_t old = ax_svc.restarts ? lowest_created() : 0;
	adopted = old > 0 && try_adopt(old, bytes);
	if (!adopted) {
		int64_t h = ax_mo_create(bytes / 4096, MOF_LAZY);
		int64_t va = h > 0 ? ax_mo_map(h, 0, 0, bytes / 4096, KP_R | KP_W) : h;
		if (va <= 0) { /* without it nothing works: say so and stop (rs restarts us) */
			ax_printf("syscall: cannot make the socket table (%ld)\n", (long)va);
			ax_exit(1);
		}
		hdr = (struct keep_hdr *)va;
		*hdr = (struct keep_hdr){ KEEP_MAGIC, layout(), h, bytes, 0 };
	}
	hdr->generation++;
	static int64_t list[MAX_CLAIMED];
	claimed = adopted ? list : NULL;
	sock_keep(keep_part(KEEP_SOCKS), adopted);
	act_keep(keep_part(KEEP_ACTS), adopted);
	vfsside_keep(keep_part(KEEP_VFS), adopted);
	if (adopted)
		sweep();
	claimed = NULL;
}

/* Maps object h (bytes) again where it was, else anywhere: its address, or NULL. */
void *keep_remap(int64_t h, void *was, uint64_t bytes)
{
	int64_t va = ax_mo_map(h, (uint64_t)was, 0, bytes / 4096, KP_R | KP_W);
	if (va <= 0)
		va = ax_mo_map(h, 0, 0, bytes / 4096, KP_R | KP_W);
	if (va <= 0)
		return NULL;
	keep_claim(h);
	return (void *)va;
}
