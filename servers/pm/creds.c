/* A process's credentials (Linux's real, effective, saved and file-system user and group
 * ids, and up to PM_NGROUPS supplementary groups), their system calls with Linux's rules,
 * and vfs's copy: vfs checks file permissions against the file-system ids, so every change
 * is told to it (VFS_CREDS) before the call returns. A process started by pm runs as root;
 * fork copies the parent's; execve keeps them but for a set-user-ID or set-group-ID file's
 * owner or group, which become the effective ones (not with PR_SET_NO_NEW_PRIVS). */
#include "pm.h"
#include "lx_abi.h"
#include "vfs_proto.h"

#define ID_KEEP 0xffffffffu /* -1: leave this id as it is */

static bool privileged(const struct lxcreds *c) { return c->euid == 0; }

/* Tells vfs the ids it checks files with. 0, or the error vfs gave. */
static int64_t tell_vfs(struct lxproc *p)
{
	const struct lxcreds *c = &p->creds;
	struct kmsg m = { .type = VFS_CREDS,
			  .w = { p->ep, c->fsuid | (uint64_t)c->fsgid << 32, c->uid | (uint64_t)c->gid << 32,
				 c->ngroups } };
	for (uint32_t i = 0; i < c->ngroups; i++)
		m.w[4 + i / 2] |= (uint64_t)c->groups[i] << (i % 2 ? 32 : 0);
	int64_t r = lx_vfs_call(&m);
	return r == -KE_SRCH ? 0 : r < 0 ? r : (int64_t)m.w[0]; /* (no vfs: nothing to tell) */
}

void lx_creds_fork(struct lxproc *child, const struct lxproc *parent)
{
	child->creds = parent->creds; /* (vfs copies its own with VFS_FORK) */
}

/* Sets the real, effective and saved ids (ID_KEEP: unchanged), the file-system id following
 * the effective one, and tells vfs; on vfs's refusal nothing changes. */
static int64_t apply(struct lxproc *p, uint32_t r, uint32_t e, uint32_t s, bool gid)
{
	struct lxcreds save = p->creds, *n = &p->creds;
	uint32_t *ids[3] = { gid ? &n->gid : &n->uid, gid ? &n->egid : &n->euid, gid ? &n->sgid : &n->suid };
	uint32_t want[3] = { r, e, s };
	for (int i = 0; i < 3; i++)
		if (want[i] != ID_KEEP)
			*ids[i] = want[i];
	if (gid)
		n->fsgid = n->egid;
	else
		n->fsuid = n->euid;
	int64_t err = tell_vfs(p);
	if (err < 0)
		p->creds = save;
	return err < 0 ? err : 0;
}

/* Whether an unprivileged process may take id: one it has as real, effective or saved. */
static bool has_id(const struct lxcreds *c, uint32_t id, bool gid)
{
	return id == ID_KEEP || (gid ? id == c->gid || id == c->egid || id == c->sgid
				     : id == c->uid || id == c->euid || id == c->suid);
}

static int64_t set_res(struct lxproc *p, uint32_t r, uint32_t e, uint32_t s, bool gid)
{
	const struct lxcreds *c = &p->creds;
	if (!privileged(c) && (!has_id(c, r, gid) || !has_id(c, e, gid) || !has_id(c, s, gid)))
		return -LX_EPERM;
	return apply(p, r, e, s, gid);
}

/* setuid: a privileged process sets all three; another only its effective id, to its real
 * or saved one. */
static int64_t set_id(struct lxproc *p, uint32_t id, bool gid)
{
	const struct lxcreds *c = &p->creds;
	if (id == ID_KEEP)
		return -LX_EINVAL;
	if (privileged(c))
		return apply(p, id, id, id, gid);
	if (id != (gid ? c->gid : c->uid) && id != (gid ? c->sgid : c->suid))
		return -LX_EPERM;
	return apply(p, ID_KEEP, id, ID_KEEP, gid);
}

/* setreuid: unprivileged, the real id only to the real or effective one, the effective to
 * any of the three; the saved id becomes the new effective one when the real id is set or
 * the effective one is set to other than the old real id (Linux). */
static int64_t set_re(struct lxproc *p, uint32_t r, uint32_t e, bool gid)
{
	const struct lxcreds *c = &p->creds;
	uint32_t real = gid ? c->gid : c->uid, eff = gid ? c->egid : c->euid;
	if (!privileged(c) && ((r != ID_KEEP && r != real && r != eff) || !has_id(c, e, gid)))
		return -LX_EPERM;
	uint32_t s = ID_KEEP;
	if (r != ID_KEEP || (e != ID_KEEP && e != real))
		s = e != ID_KEEP ? e : eff;
	return apply(p, r, e, s, gid);
}

static int64_t get_res(struct lxproc *p, uint64_t ur, uint64_t ue, uint64_t us, bool gid)
{
	const struct lxcreds *c = &p->creds;
	uint32_t v[3] = { gid ? c->gid : c->uid, gid ? c->egid : c->euid, gid ? c->sgid : c->suid };
	uint64_t at[3] = { ur, ue, us };
	for (int i = 0; i < 3; i++)
		if (ax_vcopy(EP_NONE, &v[i], p->ep, (void *)at[i], 4) < 0)
			return -LX_EFAULT;
	return 0;
}

static int64_t get_groups(struct lxproc *p, int64_t size, uint64_t list)
{
	const struct lxcreds *c = &p->creds;
	if (size < 0)
		return -LX_EINVAL;
	if (size == 0)
		return c->ngroups;
	if ((uint64_t)size < c->ngroups)
		return -LX_EINVAL;
	if (c->ngroups && ax_vcopy(EP_NONE, c->groups, p->ep, (void *)list, c->ngroups * 4) < 0)
		return -LX_EFAULT;
	return c->ngroups;
}

static int64_t set_groups(struct lxproc *p, int64_t size, uint64_t list)
{
	if (!privileged(&p->creds))
		return -LX_EPERM;
	if (size < 0 || size > PM_NGROUPS)
		return -LX_EINVAL; /* (Linux allows 65536; ours is a short list) */
	struct lxcreds save = p->creds;
	if (size && ax_vcopy(p->ep, (const void *)list, EP_NONE, p->creds.groups, (uint64_t)size * 4) < 0) {
		p->creds = save;
		return -LX_EFAULT;
	}
	p->creds.ngroups = (uint32_t)size;
	int64_t err = tell_vfs(p);
	if (err < 0)
		p->creds = save;
	return err < 0 ? err : 0;
}

/* setfsuid/setfsgid: the old id is the answer, whether or not the change was allowed. */
static int64_t set_fs(struct lxproc *p, uint32_t id, bool gid)
{
	struct lxcreds *c = &p->creds;
	uint32_t old = gid ? c->fsgid : c->fsuid;
	bool ok = privileged(c) || (gid ? id == c->gid || id == c->egid || id == c->sgid || id == c->fsgid
				   : id == c->uid || id == c->euid || id == c->suid || id == c->fsuid);
	if (ok && id != ID_KEEP && id != old) {
		if (gid)
			c->fsgid = id;
		else
			c->fsuid = id;
		if (tell_vfs(p) < 0) {
			if (gid)
				c->fsgid = old;
			else
				c->fsuid = old;
		}
	}
	return old;
}

void lx_creds_exec(struct lxproc *p, const uint64_t setid[2])
{
	struct lxcreds *c = &p->creds;
	uint32_t euid = c->euid, egid = c->egid;
	if (!p->no_new_privs) {
		if (setid[0] >> 32)
			euid = (uint32_t)setid[0];
		if (setid[1] >> 32)
			egid = (uint32_t)setid[1];
	}
	/* Linux: the saved ids become the effective ones at every execve. */
	if (euid == c->euid && egid == c->egid && c->suid == euid && c->sgid == egid)
		return;
	apply(p, ID_KEEP, euid, euid, false);
	apply(p, ID_KEEP, egid, egid, true);
}

bool lx_may_signal(const struct lxproc *from, const struct lxproc *to)
{
	if (!from || privileged(&from->creds))
		return true; /* (pm's own signals, and root's) */
	const struct lxcreds *s = &from->creds, *t = &to->creds;
	return s->uid == t->uid || s->uid == t->suid || s->euid == t->uid || s->euid == t->suid;
}

bool lx_privileged(const struct lxproc *p) { return privileged(&p->creds); }

int64_t lx_creds_call(struct lxproc *p, uint32_t nr, const uint64_t *a, bool *served)
{
	*served = true;
	const struct lxcreds *c = &p->creds;
	switch (nr) {
	case LX_SYS_getuid:
		return c->uid;
	case LX_SYS_getgid:
		return c->gid;
	case LX_SYS_geteuid:
		return c->euid;
	case LX_SYS_getegid:
		return c->egid;
	case LX_SYS_getresuid:
		return get_res(p, a[0], a[1], a[2], false);
	case LX_SYS_getresgid:
		return get_res(p, a[0], a[1], a[2], true);
	case LX_SYS_getgroups:
		return get_groups(p, (int32_t)a[0], a[1]);
	case LX_SYS_setgroups:
		return set_groups(p, (int32_t)a[0], a[1]);
	case LX_SYS_setuid:
		return set_id(p, (uint32_t)a[0], false);
	case LX_SYS_setgid:
		return set_id(p, (uint32_t)a[0], true);
	case LX_SYS_setreuid:
		return set_re(p, (uint32_t)a[0], (uint32_t)a[1], false);
	case LX_SYS_setregid:
		return set_re(p, (uint32_t)a[0], (uint32_t)a[1], true);
	case LX_SYS_setresuid:
		return set_res(p, (uint32_t)a[0], (uint32_t)a[1], (uint32_t)a[2], false);
	case LX_SYS_setresgid:
		return set_res(p, (uint32_t)a[0], (uint32_t)a[1], (uint32_t)a[2], true);
	case LX_SYS_setfsuid:
		return set_fs(p, (uint32_t)a[0], false);
	case LX_SYS_setfsgid:
		return set_fs(p, (uint32_t)a[0], true);
	}
	*served = false;
	return 0;
}
