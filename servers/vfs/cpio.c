/* The initrd: a newc ("070701") cpio archive, parsed defensively (every length checked
 * against the image) into the RAM file system, creating missing parent directories.
 * Directories, regular files and symbolic links (the data is the target); other kinds and
 * hard links (nlink > 1) are not made. */
#include "ramfs.h"
#include "lx_abi.h"
#include "vfs_alloc.h"

static bool hex8(const uint8_t *s, uint32_t *out)
{
	uint32_t v = 0;
	for (int i = 0; i < 8; i++) {
		uint8_t c = s[i];
		uint32_t d = c >= '0' && c <= '9' ? c - '0' + 0u : c >= 'a' && c <= 'f' ? c - 'a' + 10u
			     : c >= 'A' && c <= 'F' ? c - 'A' + 10u : 16u;
		if (d > 15)
			return false;
		v = v << 4 | d;
	}
	*out = v;
	return true;
}

/* Creates path (NUL-terminated, relative to root) with mode, making parents as needed. */
static int add(struct rnode *root, const char *path, uint32_t mode, const uint8_t *data, uint32_t size)
{
	struct rnode *dir = root;
	const char *p = path;
	for (;;) {
		while (*p == '/')
			p++;
		const char *e = p;
		while (*e && *e != '/')
			e++;
		size_t len = (size_t)(e - p);
		if (!len)
			return 0; /* "." or an empty name: nothing to make */
		bool last = !*e;
		struct rnode *n = NULL;
		for (struct rnode *c = dir->child; c; c = c->next)
			if (strlen(c->name) == len && !memcmp(c->name, p, len))
				n = c;
		if (!n && (!last || (mode & LX_S_IFMT) != LX_S_IFLNK)) {
			if (len == 1 && p[0] == '.') {
				n = dir;
			} else {
				int r = ramfs_create(dir, p, len, last ? mode : (LX_S_IFDIR | 0755), &n);
				if (r)
					return r;
			}
		}
		if (last) {
			if ((mode & LX_S_IFMT) == LX_S_IFLNK)
				return n ? 0 : ramfs_symlink(dir, p, len, (const char *)data, size, &n); /* a repeat: the first stays */
			if ((mode & LX_S_IFMT) == LX_S_IFREG && size)
				return (int)(ramfs_write(n, 0, data, size) < 0 ? -LX_ENOMEM : 0);
			return 0;
		}
		if ((n->mode & LX_S_IFMT) != LX_S_IFDIR)
			return -LX_ENOTDIR;
		dir = n;
		p = e;
	}
}

long cpio_load(struct rnode *root, const uint8_t *img, size_t len)
{
	size_t off = 0;
	long count = 0;
	for (;;) {
		uint32_t f[13];
		if (len - off < 110 || memcmp(img + off, "070701", 6))
			return -LX_EINVAL;
		for (int i = 0; i < 13; i++)
			if (!hex8(img + off + 6 + 8 * i, &f[i]))
				return -LX_EINVAL;
		uint32_t mode = f[1], size = f[6], namesize = f[11];
		size_t name_off = off + 110;
		if (!namesize || namesize > RAMFS_PATH_MAX || namesize > len - name_off || img[name_off + namesize - 1])
			return -LX_EINVAL;
		size_t data_off = (name_off + namesize + 3) & ~(size_t)3;
		if (data_off > len || size > len - data_off)
			return -LX_EINVAL;
		const char *name = (const char *)img + name_off;
		if (!strcmp(name, "TRAILER!!!"))
			return count;
		uint32_t type = mode & LX_S_IFMT;
		if (type == LX_S_IFDIR || type == LX_S_IFREG || type == LX_S_IFLNK) {
			int r = add(root, name, mode, img + data_off, size);
			if (r)
				return r;
			count++;
		} /* other kinds (links, devices) are skipped */
		off = (data_off + size + 3) & ~(size_t)3;
		if (off > len)
			return -LX_EINVAL;
	}
}
