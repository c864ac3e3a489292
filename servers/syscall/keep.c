/* What survives a restart of syscall (README.md, "State and recovery"): the socket table,
 * the activity pages' table and the record of the readiness channel to vfs live in one kept
 * object (lib/axrt/keep.h), and the objects they name (socket buffers, pages, the bell,
 * syscall/vfs.ev) are ours. rs keeps our handles when we die (`keep` in boot/system.conf)
 * and gives them to the next instance, which maps the table again, maps each buffer and
 * page again (each part's *_keep), and closes its handles on every other object its
 * predecessor made (the channels to the engines, which are made anew). A table of another
 * layout (a different build) is not trusted: the instance starts empty. */
#include "syscall.h"
#include "keep.h"

#define KEEP_MAGIC 0x3150454b53595331ull /* "1SYSKEP1" */
#define PART_BYTES(n) (((n) + 4095) & ~(size_t)4095)

static const size_t part_bytes[KEEP_PARTS] = {
	[KEEP_SOCKS] = sizeof(struct sock) * MAX_SOCKS,
	[KEEP_ACTS] = KEEP_ACT_BYTES,
	[KEEP_VFS] = KEEP_VFS_BYTES,
};

static size_t part_offset(int part)
{
	size_t off = 0;
	for (int i = 0; i < part; i++)
		off += PART_BYTES(part_bytes[i]);
	return off;
}

void keep_init(void)
{
	uint64_t v[] = { sizeof(struct sock), MAX_SOCKS, KEEP_ACT_BYTES, KEEP_VFS_BYTES, sizeof(struct sockbuf),
			 act_layout(), vfsside_layout() };
	bool adopted;
	char *area = ax_keep_open(KEEP_MAGIC, ax_keep_layout(v, (int)(sizeof(v) / sizeof(v[0]))),
				  part_offset(KEEP_PARTS), &adopted);
	sock_keep(area + part_offset(KEEP_SOCKS), adopted);
	act_keep(area + part_offset(KEEP_ACTS), adopted);
	vfsside_keep(area + part_offset(KEEP_VFS), adopted);
	if (adopted) {
		int taken = 0;
		for (int i = 0; i < MAX_SOCKS; i++)
			taken += socks[i].id != 0;
		int gone = ax_keep_sweep();
		ax_printf("syscall: restarted (generation %lu): %d sockets taken over, %d objects of the old instance dropped\n",
			  (unsigned long)ax_keep_generation(), taken, gone);
	}
}
