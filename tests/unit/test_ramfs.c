/* vfs's RAM file system and initrd parser (servers/vfs/ramfs.c, cpio.c) on the host. */
#include "unit.h"
#include "lx_abi.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ramfs.h"

/* A newc archive entry, as tools/mkcpio.py writes it. */
static size_t entry(uint8_t *out, const char *name, uint32_t mode, const char *data)
{
	size_t nl = strlen(name) + 1, dl = data ? strlen(data) : 0;
	int n = sprintf((char *)out, "070701%08x%08x%08x%08x%08x%08x%08x%08x%08x%08x%08x%08x%08x", 1u, mode, 0u, 0u,
			1u, 0u, (unsigned)dl, 0u, 0u, 0u, 0u, (unsigned)nl, 0u);
	size_t off = (size_t)n;
	memcpy(out + off, name, nl);
	off += nl;
	while (off % 4)
		out[off++] = 0;
	if (dl)
		memcpy(out + off, data, dl);
	off += dl;
	while (off % 4)
		out[off++] = 0;
	return off;
}

static size_t sample(uint8_t *img)
{
	size_t n = 0;
	n += entry(img + n, "etc", 040755, NULL);
	n += entry(img + n, "etc/passwd", 0100644, "root:x:0:0::/root:/bin/sh\n");
	n += entry(img + n, "usr/share/deep/file", 0100644, "made its parents\n");
	n += entry(img + n, "TRAILER!!!", 0, NULL);
	return n;
}

static void loads_the_initrd(void)
{
	static uint8_t img[4096];
	size_t len = sample(img);
	struct rnode *root = ramfs_init(), *n;
	REQUIRE(root);
	CHECK_EQ_I64(cpio_load(root, img, len), 3);
	REQUIRE(ramfs_resolve(root, root, "/etc/passwd", RAMFS_FOLLOW, &n, NULL, NULL) == 0);
	char buf[64] = { 0 };
	CHECK_EQ_I64(ramfs_read(n, 0, buf, sizeof(buf)), 26);
	CHECK(!strncmp(buf, "root:x:0:0:", 11));
	CHECK_EQ_I64(ramfs_resolve(root, root, "/usr/share/deep/file", RAMFS_FOLLOW, &n, NULL, NULL), 0);
	CHECK_EQ_I64(ramfs_resolve(root, root, "/etc/passwd/x", RAMFS_FOLLOW, &n, NULL, NULL), -LX_ENOTDIR);
	CHECK_EQ_I64(ramfs_resolve(root, root, "/usr/../etc/./passwd", RAMFS_FOLLOW, &n, NULL, NULL), 0);
	ramfs_free_tree(root);
}

static void create_write_truncate_remove(void)
{
	struct rnode *root = ramfs_init(), *tmp, *f, *parent;
	const char *last;
	REQUIRE(ramfs_create(root, "tmp", 3, LX_S_IFDIR | 0755, &tmp) == 0);
	CHECK_EQ_I64(ramfs_resolve(root, root, "/tmp/new", RAMFS_FOLLOW, &f, &parent, &last), -LX_ENOENT);
	CHECK(parent == tmp && !strcmp(last, "new"));
	REQUIRE(ramfs_create(tmp, "new", 3, LX_S_IFREG | 0644, &f) == 0);
	CHECK_EQ_I64(ramfs_create(tmp, "new", 3, LX_S_IFREG | 0644, &f), -LX_EEXIST);
	CHECK_EQ_I64(ramfs_write(f, 5000, "x", 1), 1);
	char buf[16];
	CHECK_EQ_I64(ramfs_read(f, 4990, buf, 16), 11);
	CHECK(buf[0] == 0 && buf[10] == 'x'); /* the hole reads as zeros */
	CHECK_EQ_I64(ramfs_write(f, RAMFS_MAX_FILE, "x", 1), -LX_EFBIG);
	CHECK_EQ_I64(ramfs_truncate(f, 3), 0);
	CHECK_EQ_U64(f->size, 3);
	CHECK_EQ_I64(ramfs_remove(tmp), -LX_ENOTEMPTY);
	f->opens = 1; /* an open file outlives its name */
	CHECK_EQ_I64(ramfs_remove(f), 0);
	CHECK(f->unlinked);
	CHECK_EQ_I64(ramfs_read(f, 0, buf, 3), 3);
	ramfs_release(f); /* last close: freed (ASan checks) */
	CHECK_EQ_I64(ramfs_remove(tmp), 0);
	CHECK_EQ_I64(ramfs_resolve(root, root, "/tmp", RAMFS_FOLLOW, &f, NULL, NULL), -LX_ENOENT);
	ramfs_free_tree(root);
}

static void rename_moves_and_replaces(void)
{
	struct rnode *root = ramfs_init(), *a, *b, *d, *sub, *n;
	REQUIRE(ramfs_create(root, "a", 1, LX_S_IFREG | 0644, &a) == 0 && ramfs_create(root, "b", 1, LX_S_IFREG | 0644, &b) == 0);
	REQUIRE(ramfs_create(root, "d", 1, LX_S_IFDIR | 0755, &d) == 0 && ramfs_create(d, "sub", 3, LX_S_IFDIR | 0755, &sub) == 0);
	CHECK_EQ_I64(ramfs_rename(a, root, b->name, 1), 0); /* replaces b, whose name it reuses (ASan) */
	CHECK_EQ_I64(ramfs_resolve(root, root, "/b", RAMFS_FOLLOW, &n, NULL, NULL), 0);
	CHECK(n == a);
	CHECK_EQ_I64(ramfs_resolve(root, root, "/a", RAMFS_FOLLOW, &n, NULL, NULL), -LX_ENOENT);
	CHECK_EQ_I64(ramfs_rename(d, sub, "x", 1), -LX_EINVAL);  /* into itself */
	CHECK_EQ_I64(ramfs_rename(a, root, "d", 1), -LX_EISDIR); /* a file over a directory */
	CHECK_EQ_I64(ramfs_rename(sub, root, "b", 1), -LX_ENOTDIR);
	CHECK_EQ_I64(ramfs_rename(a, d, "moved", 5), 0);
	CHECK_EQ_I64(ramfs_resolve(root, root, "/d/moved", RAMFS_FOLLOW, &n, NULL, NULL), 0);
	ramfs_free_tree(root);
}

static void hard_links(void)
{
	struct rnode *root = ramfs_init(), *d, *f, *n, *e;
	uint64_t nodes0 = ramfs_nodes;
	REQUIRE(ramfs_create(root, "d", 1, LX_S_IFDIR | 0755, &d) == 0 && ramfs_create(root, "f", 1, LX_S_IFREG | 0644, &f) == 0);
	CHECK_EQ_I64(ramfs_write(f, 0, "data", 4), 4);
	CHECK_EQ_I64(ramfs_link(d, "g", 1, f), 0);
	CHECK_EQ_I64(ramfs_link(root, "h", 1, f), 0);
	CHECK_EQ_I64(ramfs_link(root, "h", 1, f), -LX_EEXIST);
	CHECK_EQ_I64(ramfs_link(root, "dd", 2, d), -LX_EPERM); /* no links to directories */
	CHECK_EQ_U64(ramfs_nlink(f), 3);
	/* every name resolves to the one node; RAMFS_ENTRY gives the name itself */
	CHECK(ramfs_resolve(root, root, "/d/g", 0, &n, NULL, NULL) == 0 && n == f);
	CHECK(ramfs_resolve(root, root, "/d/g", RAMFS_ENTRY, &e, NULL, NULL) == 0 && e != f && ramfs_node(e) == f);
	char buf[8] = { 0 };
	CHECK(ramfs_write(n, 4, "!", 1) == 1 && ramfs_read(f, 0, buf, 8) == 5 && !memcmp(buf, "data!", 5));
	/* renaming one name over another of the same file changes nothing */
	CHECK_EQ_I64(ramfs_rename(e, root, "h", 1), 0);
	CHECK_EQ_U64(ramfs_nlink(f), 3);
	/* a link's own name goes */
	CHECK_EQ_I64(ramfs_remove(e), 0);
	CHECK_EQ_U64(ramfs_nlink(f), 2);
	CHECK_EQ_I64(ramfs_resolve(root, root, "/d/g", 0, &n, NULL, NULL), -LX_ENOENT);
	/* the file's first name goes: "h" takes its place, the node stays itself */
	uint64_t ino = f->ino;
	CHECK_EQ_I64(ramfs_remove(f), 0);
	CHECK(!f->unlinked && ramfs_nlink(f) == 1 && f->ino == ino && !strcmp(f->name, "h"));
	CHECK(ramfs_resolve(root, root, "/h", RAMFS_ENTRY, &n, NULL, NULL) == 0 && n == f);
	CHECK_EQ_I64(ramfs_resolve(root, root, "/f", 0, &n, NULL, NULL), -LX_ENOENT);
	CHECK_EQ_I64(ramfs_remove(f), 0); /* the last name: freed (ASan) */
	CHECK_EQ_I64(ramfs_remove(d), 0);
	CHECK_EQ_U64(ramfs_nodes, nodes0);
	/* links left in the tree are freed with it */
	REQUIRE(ramfs_create(root, "f", 1, LX_S_IFREG | 0644, &f) == 0 && ramfs_create(root, "d", 1, LX_S_IFDIR | 0755, &d) == 0);
	CHECK(ramfs_link(d, "x", 1, f) == 0 && ramfs_link(root, "y", 1, f) == 0);
	ramfs_free_tree(root);
}

static int unbacked;
static void count_unback(struct rnode *n)
{
	unbacked++;
	free(n->data);
	n->data = NULL;
}

/* A backed node (vfs fmap.c): its area never moves or grows, a hook lets it go. */
static void backed_nodes(void)
{
	struct rnode *root = ramfs_init(), *f;
	REQUIRE(ramfs_create(root, "f", 1, LX_S_IFREG | 0644, &f) == 0);
	CHECK_EQ_I64(ramfs_write(f, 0, "abc", 3), 3);
	uint8_t *area = calloc(1, 8192);
	memcpy(area, f->data, f->size);
	free(f->data);
	f->data = area, f->cap = 8192, f->backed = true;
	CHECK_EQ_I64(ramfs_write(f, 8000, "0123456789", 10), 10);
	CHECK(f->data == area && f->size == 8010 && !memcmp(area + 8000, "0123456789", 10) && area[5000] == 0);
	CHECK_EQ_I64(ramfs_write(f, 8190, "xyz", 3), -LX_EFBIG); /* past the area */
	CHECK_EQ_I64(ramfs_truncate(f, 10000), -LX_EFBIG);
	CHECK_EQ_I64(ramfs_truncate(f, 2), 0);
	CHECK(f->data == area && f->size == 2);
	ramfs_hooks.unback = count_unback;
	CHECK_EQ_I64(ramfs_remove(f), 0); /* freed: the hook, not the allocator, takes the area (ASan) */
	CHECK_EQ_I64(unbacked, 1);
	ramfs_hooks.unback = NULL;
	ramfs_free_tree(root);
}

static void symlinks_resolve(void)
{
	struct rnode *root = ramfs_init(), *etc, *pw, *l, *n, *parent;
	const char *last;
	REQUIRE(ramfs_create(root, "etc", 3, LX_S_IFDIR | 0755, &etc) == 0 && ramfs_create(etc, "passwd", 6, LX_S_IFREG | 0644, &pw) == 0);
	REQUIRE(ramfs_symlink(root, "abs", 3, "/etc/passwd", 11, &l) == 0);
	CHECK_EQ_U64(l->mode, LX_S_IFLNK | 0777);
	CHECK_EQ_U64(l->size, 11);
	CHECK_EQ_I64(ramfs_resolve(root, root, "/abs", RAMFS_FOLLOW, &n, NULL, NULL), 0);
	CHECK(n == pw);
	CHECK_EQ_I64(ramfs_resolve(root, root, "/abs", 0, &n, NULL, NULL), 0); /* lstat's view */
	CHECK(n == l);
	/* relative targets start in the link's directory; a link to a directory in the middle */
	REQUIRE(ramfs_symlink(etc, "rel", 3, "passwd", 6, &l) == 0);
	REQUIRE(ramfs_symlink(root, "e", 1, "etc", 3, &l) == 0);
	CHECK_EQ_I64(ramfs_resolve(root, etc, "rel", RAMFS_FOLLOW, &n, NULL, NULL), 0);
	CHECK(n == pw);
	CHECK_EQ_I64(ramfs_resolve(root, root, "e/rel", RAMFS_FOLLOW, &n, NULL, NULL), 0);
	CHECK(n == pw);
	CHECK_EQ_I64(ramfs_resolve(root, root, "e/", 0, &n, NULL, NULL), 0); /* a slash follows */
	CHECK(n == etc);
	CHECK_EQ_I64(ramfs_resolve(root, root, "/e/../e/./passwd", 0, &n, NULL, NULL), 0); /* ".." of the target */
	CHECK(n == pw);
	CHECK_EQ_I64(ramfs_resolve(root, root, "/abs/", 0, &n, NULL, NULL), -LX_ENOTDIR);
	CHECK_EQ_I64(ramfs_resolve(root, root, "/abs/x", 0, &n, NULL, NULL), -LX_ENOTDIR);
	/* a dangling link: what a create through it would make */
	REQUIRE(ramfs_symlink(root, "dangle", 6, "etc/newfile", 11, &l) == 0);
	CHECK_EQ_I64(ramfs_resolve(root, root, "/dangle", RAMFS_FOLLOW, &n, &parent, &last), -LX_ENOENT);
	CHECK(parent == etc && !strcmp(last, "newfile"));
	CHECK_EQ_I64(ramfs_resolve(root, root, "/dangle", 0, &n, &parent, &last), 0);
	/* loops and long chains: 40 links are followed, the 41st is ELOOP */
	REQUIRE(ramfs_symlink(root, "loop1", 5, "loop2", 5, &l) == 0 && ramfs_symlink(root, "loop2", 5, "/loop1", 6, &l) == 0);
	CHECK_EQ_I64(ramfs_resolve(root, root, "/loop1", RAMFS_FOLLOW, &n, NULL, NULL), -LX_ELOOP);
	CHECK_EQ_I64(ramfs_resolve(root, root, "/loop1/x", 0, &n, NULL, NULL), -LX_ELOOP);
	CHECK_EQ_I64(ramfs_resolve(root, root, "/loop1", 0, &n, NULL, NULL), 0);
	char name[16], target[16];
	for (int i = 0; i <= 40; i++) { /* c0 -> c1 -> ... -> c40 -> /etc/passwd */
		snprintf(name, sizeof(name), "c%d", i);
		snprintf(target, sizeof(target), "c%d", i + 1);
		REQUIRE(ramfs_symlink(root, name, strlen(name), i == 40 ? "/etc/passwd" : target, i == 40 ? 11 : strlen(target), &l) == 0);
	}
	CHECK_EQ_I64(ramfs_resolve(root, root, "/c1", RAMFS_FOLLOW, &n, NULL, NULL), 0); /* 40 links */
	CHECK(n == pw);
	CHECK_EQ_I64(ramfs_resolve(root, root, "/c0", RAMFS_FOLLOW, &n, NULL, NULL), -LX_ELOOP); /* 41 */
	/* bad targets */
	CHECK_EQ_I64(ramfs_symlink(root, "empty", 5, "", 0, &l), -LX_ENOENT);
	CHECK_EQ_I64(ramfs_symlink(root, "nul", 3, "a\0b", 3, &l), -LX_EINVAL);
	CHECK_EQ_I64(ramfs_symlink(root, "abs", 3, "x", 1, &l), -LX_EEXIST);
	ramfs_free_tree(root);
}

static void archive_symlinks(void)
{
	static uint8_t img[4096];
	size_t len = 0;
	len += entry(img + len, "bin/busybox", 0100755, "\177ELF");
	len += entry(img + len, "bin/sh", 0120777, "/bin/busybox");
	len += entry(img + len, "bin/ls", 0120777, "busybox");
	len += entry(img + len, "bin/sh", 0120777, "other"); /* a repeat: the first stays */
	len += entry(img + len, "TRAILER!!!", 0, NULL);
	struct rnode *root = ramfs_init(), *bb, *n;
	CHECK_EQ_I64(cpio_load(root, img, len), 4);
	REQUIRE(ramfs_resolve(root, root, "/bin/busybox", 0, &bb, NULL, NULL) == 0);
	CHECK_EQ_I64(ramfs_resolve(root, root, "/bin/sh", RAMFS_FOLLOW, &n, NULL, NULL), 0);
	CHECK(n == bb);
	CHECK_EQ_I64(ramfs_resolve(root, root, "/bin/ls", RAMFS_FOLLOW, &n, NULL, NULL), 0);
	CHECK(n == bb);
	CHECK_EQ_I64(ramfs_resolve(root, root, "/bin/sh", 0, &n, NULL, NULL), 0);
	CHECK(n->mode == (LX_S_IFLNK | 0777) && !strcmp((const char *)n->data, "/bin/busybox"));
	ramfs_free_tree(root);
	/* a link with an empty target is a malformed archive */
	len = entry(img, "bad", 0120777, NULL);
	len += entry(img + len, "TRAILER!!!", 0, NULL);
	root = ramfs_init();
	CHECK_EQ_I64(cpio_load(root, img, len), -LX_ENOENT);
	ramfs_free_tree(root);
}

/* Random trees of directories, files and links (loops among them) and random paths:
 * resolution ends in a node or one of its errors, never follows a link it returns, and
 * never touches memory it should not (ASan). */
static void resolution_fuzz(void)
{
	static const char *const parts[] = { "a", "b", "f", "l1", "l2", "l3", ".", "..", "", "/", "nope" };
	static const char *const targets[] = { "a", "../a", "/a/b", "l1", "l2/f", "/", ".", "..", "b/../l3", "f", "nope/x", "/l2" };
	unsigned seed = 777;
#define RND(n) ((seed = seed * 1103515245u + 12345u) >> 8) % (n)
	for (int round = 0; round < 300; round++) {
		struct rnode *root = ramfs_init(), *dirs[8] = { root }, *n, *parent;
		int nd = 1;
		for (int i = 0; i < 30; i++) {
			struct rnode *d = dirs[RND(nd)];
			const char *name = parts[RND(6)];
			int kind = RND(3);
			if (kind == 0 && ramfs_create(d, name, strlen(name), LX_S_IFDIR | 0755, &n) == 0 && nd < 8)
				dirs[nd++] = n;
			else if (kind == 1)
				ramfs_create(d, name, strlen(name), LX_S_IFREG | 0644, &n);
			else {
				const char *t = targets[RND(sizeof(targets) / sizeof(targets[0]))];
				ramfs_symlink(d, name, strlen(name), t, strlen(t), &n);
			}
		}
		for (int k = 0; k < 200; k++) {
			char path[128] = "";
			int len = (int)RND(6) + 1;
			for (int j = 0; j < len; j++) {
				strcat(path, parts[RND(sizeof(parts) / sizeof(parts[0]))]);
				if (RND(3))
					strcat(path, "/");
			}
			const char *last = NULL;
			parent = root; /* must be cleared when nothing can be made */
			int follow = RND(2) ? RAMFS_FOLLOW : 0;
			int r = ramfs_resolve(root, dirs[RND(nd)], path, follow, &n, &parent, &last);
			if (r == 0) {
				CHECK(n != NULL);
				CHECK(!follow || (n->mode & LX_S_IFMT) != LX_S_IFLNK);
			} else {
				CHECK(r == -LX_ENOENT || r == -LX_ENOTDIR || r == -LX_ELOOP);
				if (r == -LX_ENOENT && parent)
					CHECK((parent->mode & LX_S_IFMT) == LX_S_IFDIR && last && last[0] && last[0] != '/');
			}
		}
		ramfs_free_tree(root);
	}
#undef RND
}

static void malformed_archives_are_refused(void)
{
	static uint8_t img[4096], bad[4096];
	size_t len = sample(img);
	struct rnode *root = ramfs_init();
	CHECK_EQ_I64(cpio_load(root, img, 50), -LX_EINVAL);     /* truncated header */
	CHECK_EQ_I64(cpio_load(root, img, len - 8), -LX_EINVAL); /* no trailer */
	memcpy(bad, img, len);
	memcpy(bad + 6 + 8 * 6, "7fffffff", 8); /* a file size past the end */
	CHECK_EQ_I64(cpio_load(root, bad, len), -LX_EINVAL);
	ramfs_free_tree(root);
	/* Mutation fuzz: any result, never a crash or an out-of-bounds read (ASan). */
	unsigned seed = 12345;
	for (int round = 0; round < 20000; round++) {
		memcpy(bad, img, len);
		for (int k = 0; k < 4; k++) {
			seed = seed * 1103515245u + 12345u;
			bad[(seed >> 8) % len] = (uint8_t)(seed >> 20);
		}
		uint8_t *copy = malloc(len); /* exact size: ASan sees any overrun */
		memcpy(copy, bad, len);
		root = ramfs_init();
		cpio_load(root, copy, len);
		ramfs_free_tree(root);
		free(copy);
	}
}

int main(void)
{
	unit_begin(__FILE__);
	RUN(loads_the_initrd);
	RUN(create_write_truncate_remove);
	RUN(rename_moves_and_replaces);
	RUN(hard_links);
	RUN(backed_nodes);
	RUN(symlinks_resolve);
	RUN(archive_symlinks);
	RUN(resolution_fuzz);
	RUN(malformed_archives_are_refused);
	return unit_end();
}
