/* File permissions as Linux checks them (the owner's, the group's or the others' bits; root
 * passes all but execution of a file with no x bit), against the credentials pm tells us
 * (VFS_CREDS, servers/pm/creds.c). */
#include "vfs.h"
#include "lx_abi.h"

#define E_PERM_ 1

bool vfs_in_group(const struct client *c, uint32_t gid)
{
	if (c->fsgid == gid)
		return true;
	for (uint32_t i = 0; i < c->ngroups && i < VFS_CREDS_GROUPS; i++)
		if (c->groups[i] == gid)
			return true;
	return false;
}

int64_t vfs_permit(const struct client *c, const struct rnode *n, uint32_t mask, bool real)
{
	uint32_t uid = c ? (real ? c->uid : c->fsuid) : 0, gid = c ? (real ? c->gid : c->fsgid) : 0;
	if (uid == 0) /* root: an x bit somewhere is still needed to run a file */
		return (mask & 1) && vfs_kind(n) != LX_S_IFDIR && !(n->mode & 0111) ? -LX_EACCES : 0;
	if (n->ro && !(mask & 2))
		return 0; /* /proc's generated nodes: each process reads its own (Linux makes them its) */
	uint32_t bits;
	if (uid == n->uid)
		bits = n->mode >> 6;
	else if (gid == n->gid || vfs_in_group(c, n->gid))
		bits = n->mode >> 3;
	else
		bits = n->mode;
	return (bits & mask & 7) == mask ? 0 : -LX_EACCES;
}

bool vfs_owner(const struct client *c, const struct rnode *n) { return !c || c->fsuid == 0 || c->fsuid == n->uid; }

int64_t vfs_permit_entry(const struct client *c, const struct rnode *dir, const struct rnode *n)
{
	int64_t r = vfs_permit(c, dir, 2 | 1, false);
	if (r)
		return r;
	if (n && (dir->mode & LX_S_ISVTX) && !vfs_owner(c, n) && !vfs_owner(c, dir))
		return -E_PERM_; /* /tmp: another user's file */
	return 0;
}

void vfs_own(const struct client *c, struct rnode *n)
{
	if (!c)
		return;
	n->uid = c->fsuid;
	n->gid = n->parent && (n->parent->mode & LX_S_ISGID) ? n->parent->gid : c->fsgid;
	if (vfs_kind(n) == LX_S_IFDIR && n->parent && (n->parent->mode & LX_S_ISGID))
		n->mode |= LX_S_ISGID; /* directories inherit the set-group-ID bit */
}

int64_t vfs_set_creds(const struct kmsg *m)
{
	struct client *c = vfs_client(m->w[0], true);
	if (!c)
		return -LX_ENOMEM;
	if (m->w[3] > VFS_CREDS_GROUPS)
		return -LX_EINVAL;
	c->fsuid = (uint32_t)m->w[1], c->fsgid = (uint32_t)(m->w[1] >> 32);
	c->uid = (uint32_t)m->w[2], c->gid = (uint32_t)(m->w[2] >> 32);
	c->ngroups = (uint32_t)m->w[3];
	for (uint32_t i = 0; i < c->ngroups; i++)
		c->groups[i] = (uint32_t)(m->w[4 + i / 2] >> (i % 2 ? 32 : 0));
	return 0;
}
