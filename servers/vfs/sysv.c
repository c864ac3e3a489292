/* System V message queues, semaphore sets and shared memory (Linux's msgget/msgsnd/msgrcv/
 * msgctl, semget/semop/semtimedop/semctl and shmget/shmat/shmdt/shmctl), kept by vfs because it has the model for calls that wait:
 * a msgrcv on an empty queue, a msgsnd to a full one or a semop that cannot go answers
 * VFS_BLOCK and is tried again after every call vfs serves (vfs.c), so each call changes
 * nothing until it can go whole. Keys name objects (LX_IPC_PRIVATE makes a new one), ids are
 * slot + 32768 x sequence as on Linux, so a removed object's id is not taken by the next.
 * Everything runs as root: the permission bits are kept and shown, not enforced.
 * LX_SEM_UNDO adjustments are kept per process and applied when pm says it ended. A shared
 * memory segment is a memory object of ours; shmat maps it into the caller (KC_LX_MMAP
 * LXM_SHARE: the kernel's shared mapping), shmdt takes it out (KC_LX_MUNMAP); the
 * attachments are counted per process through fork, exec and exit. */
#include "vfs.h"
#include "lx_abi.h"
#include "heap.h"
#include "sysv.h"
#include <axolotl/kcall.h>
#include "keep.h"

#define SYSV_MAX 256          /* objects of each kind */
#define SEQ 32768             /* Linux's IPCMNI: id = slot + SEQ * seq */
#define MSGMAX 8192           /* bytes in one message (Linux's default) */
#define MSGMNB 16384          /* bytes a queue holds by default */
#define SEMMSL 32000          /* semaphores in a set */
#define SEMOPM 500            /* operations in one semop */
#define SEMVMX 32767          /* a semaphore's largest value */
#define SHMMAX (1ull << 32)   /* bytes in one segment (our choice: 4 GiB) */
#define SHM_ATT_MAX 1024      /* attachments, all processes */
#define SHM_DEST 01000        /* in the mode: removed, goes with its last detach */
#define PAGE 4096ull

/* struct ipc64_perm and the *id64_ds of x86-64 (bytes). */
struct lx_perm {
	int32_t key;
	uint32_t uid, gid, cuid, cgid, mode;
	uint16_t seq, pad;
	uint64_t unused[2];
};
struct lx_msqid {
	struct lx_perm perm;
	int64_t stime, rtime, ctime;
	uint64_t cbytes, qnum, qbytes;
	int32_t lspid, lrpid;
	uint64_t unused[2];
};
struct lx_semid {
	struct lx_perm perm;
	int64_t otime;
	uint64_t unused1;
	int64_t ctime;
	uint64_t unused2;
	uint64_t nsems;
	uint64_t unused3, unused4;
};
struct lx_shmid {
	struct lx_perm perm;
	uint64_t segsz;
	int64_t atime, dtime, ctime;
	int32_t cpid, lpid;
	uint64_t nattch;
	uint64_t unused[2];
};
_Static_assert(sizeof(struct lx_perm) == 48 && sizeof(struct lx_msqid) == 120 && sizeof(struct lx_semid) == 104 &&
		       sizeof(struct lx_shmid) == 112,
	       "Linux's x86-64 layouts");

struct shmseg {
	struct lx_perm perm;
	int64_t mo;           /* our handle to the memory object */
	uint64_t size;        /* bytes asked for (the object is whole pages) */
	int64_t atime, dtime, ctime;
	int32_t cpid, lpid;
	uint64_t nattch;
};

/* One attachment: a process's mapping of a segment (for shmdt and the count). */
struct shmatt {
	uint64_t pid;         /* 0: a free entry */
	int slot;
	uint64_t addr, len;
};

struct smsg {
	struct smsg *next;
	int64_t type;
	uint64_t len;
	uint8_t text[];
};

struct msq {
	struct lx_perm perm;
	struct smsg *head, *tail;
	uint64_t cbytes, qnum, qbytes;
	int64_t stime, rtime, ctime;
	int32_t lspid, lrpid;
};

struct sem {
	uint16_t val;
	int32_t pid; /* the last to change it */
};

struct semset {
	struct lx_perm perm;
	uint32_t nsems;
	int64_t otime, ctime;
	struct sem *s;
};

/* A process's LX_SEM_UNDO adjustments: one record per (process, set, semaphore). */
struct undo {
	struct undo *next;
	uint64_t pid;
	int id;
	uint32_t num;
	int32_t adj;
};

static VFS_KEPT struct msq *msqs[SYSV_MAX];
static VFS_KEPT struct semset *sems[SYSV_MAX];
static VFS_KEPT uint16_t msq_seq[SYSV_MAX], sem_seq[SYSV_MAX];
static VFS_KEPT struct undo *undos;
static VFS_KEPT struct shmseg *shms[SYSV_MAX];
static VFS_KEPT uint16_t shm_seq[SYSV_MAX];
static VFS_KEPT struct shmatt atts[SHM_ATT_MAX];

static int64_t now_s(void) { return (int64_t)(vfs_now() / 1000000000ull); }

/* ---- keys and ids (both kinds) ---- */

enum kind { K_MSG, K_SEM, K_SHM };

static struct lx_perm *perm_of(enum kind k, int slot)
{
	if (k == K_MSG)
		return msqs[slot] ? &msqs[slot]->perm : NULL;
	if (k == K_SEM)
		return sems[slot] ? &sems[slot]->perm : NULL;
	return shms[slot] ? &shms[slot]->perm : NULL;
}

static uint16_t *seq_of(enum kind k) { return k == K_MSG ? msq_seq : k == K_SEM ? sem_seq : shm_seq; }

static int64_t id_of(enum kind k, int slot) { return slot + (int64_t)SEQ * seq_of(k)[slot]; }

/* A slot freed: the next object there has another id. */
static void seq_next(enum kind k, int slot) { seq_of(k)[slot] = (uint16_t)((seq_of(k)[slot] + 1) % 0xffff); }

/* The slot an id names, or -EINVAL (no such object, or one removed since). */
static int slot_of(enum kind k, int64_t id)
{
	if (id < 0)
		return -LX_EINVAL;
	int slot = (int)(id % SEQ);
	if (slot >= SYSV_MAX || !perm_of(k, slot) || id / SEQ != seq_of(k)[slot])
		return -LX_EINVAL;
	return slot;
}

/* The *get calls' look-up: the slot of key (or a free one for a new object, *fresh set).
 * A removed segment still attached keeps its slot but no longer its key (Linux). */
static int64_t get_slot(enum kind k, int32_t key, uint64_t flags, bool *fresh)
{
	*fresh = false;
	if (key != LX_IPC_PRIVATE)
		for (int i = 0; i < SYSV_MAX; i++) {
			struct lx_perm *p = perm_of(k, i);
			if (p && p->key == key && !(p->mode & SHM_DEST))
				return (flags & LX_IPC_CREAT) && (flags & LX_IPC_EXCL) ? -LX_EEXIST : i;
		}
	if (key != LX_IPC_PRIVATE && !(flags & LX_IPC_CREAT))
		return -LX_ENOENT;
	for (int i = 0; i < SYSV_MAX; i++)
		if (!perm_of(k, i)) {
			*fresh = true;
			return i;
		}
	return -LX_ENOSPC;
}

static void perm_init(struct lx_perm *p, int32_t key, uint64_t flags, uint16_t seq)
{
	*p = (struct lx_perm){ .key = key, .mode = (uint32_t)flags & 0777, .seq = seq };
}

/* LX_IPC_SET: owner, group and the permission bits. */
static void perm_set(struct lx_perm *p, const struct lx_perm *n)
{
	p->uid = n->uid, p->gid = n->gid;
	p->mode = (p->mode & ~0777u) | (n->mode & 0777);
}

/* ---- message queues ---- */

static int64_t msg_get(int32_t key, uint64_t flags)
{
	bool fresh;
	int64_t slot = get_slot(K_MSG, key, flags, &fresh);
	if (slot < 0 || !fresh)
		return slot < 0 ? slot : id_of(K_MSG, (int)slot);
	struct msq *q = ax_calloc(1, sizeof(*q));
	if (!q)
		return -LX_ENOMEM;
	perm_init(&q->perm, key, flags, msq_seq[slot]);
	q->qbytes = MSGMNB;
	q->ctime = now_s();
	msqs[slot] = q;
	return id_of(K_MSG, (int)slot);
}

static int64_t wait_unless(uint64_t flags, int64_t busy) { return (flags & LX_IPC_NOWAIT) ? busy : VFS_BLOCK; }

static int64_t msg_send(struct client *c, struct vcall *v, int64_t id, uint64_t umsg, uint64_t len, uint64_t flags)
{
	int slot = slot_of(K_MSG, id);
	if (slot < 0)
		return v->again ? -LX_EIDRM : slot; /* removed while we waited */
	struct msq *q = msqs[slot];
	if (len > MSGMAX)
		return -LX_EINVAL;
	int64_t type;
	if (ax_vcopy(c->ep, (const void *)umsg, EP_NONE, &type, 8) < 0)
		return -LX_EFAULT;
	if (type < 1)
		return -LX_EINVAL;
	if (q->cbytes + len > q->qbytes || q->qnum + 1 > q->qbytes) /* Linux counts messages too */
		return wait_unless(flags, -LX_EAGAIN);
	struct smsg *m = ax_malloc(sizeof(*m) + len);
	if (!m)
		return -LX_ENOMEM;
	if (len && ax_vcopy(c->ep, (const void *)(umsg + 8), EP_NONE, m->text, len) < 0) {
		ax_free(m);
		return -LX_EFAULT;
	}
	m->next = NULL, m->type = type, m->len = len;
	if (q->tail)
		q->tail->next = m;
	else
		q->head = m;
	q->tail = m;
	q->cbytes += len, q->qnum++;
	q->stime = now_s(), q->lspid = vfs_client_lxpid(c);
	return 0;
}

/* The message msgrcv's type picks: 0 the first; > 0 the first of that type (of another type
 * with LX_MSG_EXCEPT); < 0 the first of the lowest type up to -type. */
static struct smsg *pick(struct msq *q, int64_t type, uint64_t flags, struct smsg **prev)
{
	struct smsg *best = NULL, *bp = NULL;
	for (struct smsg *m = q->head, *p = NULL; m; p = m, m = m->next) {
		bool ok;
		if (type == 0)
			ok = true;
		else if (type > 0)
			ok = (flags & LX_MSG_EXCEPT) ? m->type != type : m->type == type;
		else
			ok = m->type <= -type && (!best || m->type < best->type);
		if (!ok)
			continue;
		best = m, bp = p;
		if (type >= 0)
			break; /* the first that fits; for type < 0 the lowest type, first of its kind */
	}
	*prev = bp;
	return best;
}

static int64_t msg_recv(struct client *c, struct vcall *v, int64_t id, uint64_t umsg, uint64_t len, int64_t type,
			uint64_t flags)
{
	int slot = slot_of(K_MSG, id);
	if (slot < 0)
		return v->again ? -LX_EIDRM : slot; /* removed while we waited */
	if ((int64_t)len < 0)
		return -LX_EINVAL;
	struct msq *q = msqs[slot];
	struct smsg *prev, *m = pick(q, type, flags, &prev);
	if (!m)
		return wait_unless(flags, -LX_ENOMSG);
	if (m->len > len && !(flags & LX_MSG_NOERROR))
		return -LX_E2BIG;
	uint64_t n = m->len < len ? m->len : len;
	if (ax_vcopy(EP_NONE, &m->type, c->ep, (void *)umsg, 8) < 0 ||
	    (n && ax_vcopy(EP_NONE, m->text, c->ep, (void *)(umsg + 8), n) < 0))
		return -LX_EFAULT;
	if (prev)
		prev->next = m->next;
	else
		q->head = m->next;
	if (q->tail == m)
		q->tail = prev;
	q->cbytes -= m->len, q->qnum--;
	q->rtime = now_s(), q->lrpid = vfs_client_lxpid(c);
	ax_free(m);
	return (int64_t)n;
}

static void msq_free(int slot)
{
	struct msq *q = msqs[slot];
	while (q->head) {
		struct smsg *m = q->head;
		q->head = m->next;
		ax_free(m);
	}
	ax_free(q);
	msqs[slot] = NULL;
	seq_next(K_MSG, slot);
}

static int64_t msg_ctl(struct client *c, int64_t id, uint64_t cmd, uint64_t ubuf)
{
	cmd &= ~(uint64_t)0x100; /* IPC_64 */
	if (cmd == LX_IPC_INFO || cmd == LX_MSG_INFO)
		return -LX_EINVAL; /* (no struct msginfo yet) */
	int slot = slot_of(K_MSG, id);
	if (slot < 0)
		return slot;
	struct msq *q = msqs[slot];
	if (cmd == LX_IPC_STAT || cmd == LX_MSG_STAT) {
		struct lx_msqid d = { .perm = q->perm, .stime = q->stime, .rtime = q->rtime, .ctime = q->ctime,
				      .cbytes = q->cbytes, .qnum = q->qnum, .qbytes = q->qbytes, .lspid = q->lspid,
				      .lrpid = q->lrpid };
		return ax_vcopy(EP_NONE, &d, c->ep, (void *)ubuf, sizeof(d)) < 0 ? -LX_EFAULT : 0;
	}
	if (cmd == LX_IPC_SET) {
		struct lx_msqid d;
		if (ax_vcopy(c->ep, (const void *)ubuf, EP_NONE, &d, sizeof(d)) < 0)
			return -LX_EFAULT;
		perm_set(&q->perm, &d.perm);
		q->qbytes = d.qbytes; /* root may raise it past MSGMNB */
		q->ctime = now_s();
		return 0;
	}
	if (cmd == LX_IPC_RMID) {
		msq_free(slot);
		return 0;
	}
	return -LX_EINVAL;
}

/* ---- semaphore sets ---- */

static int64_t sem_get(int32_t key, int64_t nsems, uint64_t flags)
{
	if (nsems < 0 || nsems > SEMMSL)
		return -LX_EINVAL;
	bool fresh;
	int64_t slot = get_slot(K_SEM, key, flags, &fresh);
	if (slot < 0)
		return slot;
	if (!fresh)
		return nsems > (int64_t)sems[slot]->nsems ? -LX_EINVAL : id_of(K_SEM, (int)slot);
	if (nsems == 0)
		return -LX_EINVAL;
	struct semset *s = ax_calloc(1, sizeof(*s));
	struct sem *v = s ? ax_calloc((size_t)nsems, sizeof(*v)) : NULL;
	if (!v) {
		ax_free(s);
		return -LX_ENOMEM;
	}
	perm_init(&s->perm, key, flags, sem_seq[slot]);
	s->nsems = (uint32_t)nsems, s->s = v;
	s->ctime = now_s();
	sems[slot] = s;
	return id_of(K_SEM, (int)slot);
}

struct lx_sembuf {
	uint16_t num;
	int16_t op, flg;
};

static struct undo **undo_find(uint64_t pid, int id, uint32_t num)
{
	struct undo **p = &undos;
	while (*p && !((*p)->pid == pid && (*p)->id == id && (*p)->num == num))
		p = &(*p)->next;
	return p;
}

/* Whether op can go on a semaphore of value val: 0 it can, else it must wait. */
static bool op_waits(const struct lx_sembuf *o, int32_t val)
{
	return o->op < 0 ? val + o->op < 0 : o->op == 0 && val != 0;
}

static int64_t sem_op(struct client *c, struct vcall *v, int64_t id, uint64_t usops, uint64_t nsops, uint64_t utimeout)
{
	if (nsops < 1)
		return -LX_EINVAL;
	if (nsops > SEMOPM)
		return -LX_E2BIG;
	int slot = slot_of(K_SEM, id);
	if (slot < 0)
		return v->again && id >= 0 ? -LX_EIDRM : slot;
	struct semset *s = sems[slot];
	struct lx_sembuf ops[SEMOPM];
	if (ax_vcopy(c->ep, (const void *)usops, EP_NONE, ops, nsops * sizeof(*ops)) < 0)
		return -LX_EFAULT;
	for (uint64_t i = 0; i < nsops; i++)
		if (ops[i].num >= s->nsems)
			return -LX_EFBIG;
	/* All or nothing: every operation is checked against the values the ones before it
	 * would leave, and only then are they all applied. */
	for (uint64_t i = 0; i < nsops; i++) {
		/* the value as the operations before this one on the same semaphore left it */
		int32_t cur = s->s[ops[i].num].val;
		for (uint64_t j = 0; j < i; j++)
			if (ops[j].num == ops[i].num)
				cur += ops[j].op;
		if (op_waits(&ops[i], cur)) {
			if (ops[i].flg & LX_IPC_NOWAIT)
				return -LX_EAGAIN;
			if (utimeout && !v->again) {
				struct { int64_t s, ns; } t;
				if (ax_vcopy(c->ep, (const void *)utimeout, EP_NONE, &t, sizeof(t)) < 0)
					return -LX_EFAULT;
				if (t.s < 0 || t.ns < 0 || t.ns >= 1000000000)
					return -LX_EINVAL;
				v->a[5] = (uint64_t)(t.s * 1000000000 + t.ns); /* kept for the retries */
			}
			if (utimeout)
				return vfs_wait(v, (int64_t)v->a[5]) == VFS_BLOCK ? VFS_BLOCK : -LX_EAGAIN;
			return VFS_BLOCK;
		}
		if (cur + ops[i].op > SEMVMX)
			return -LX_ERANGE;
	}
	int32_t pid = vfs_client_lxpid(c);
	for (uint64_t i = 0; i < nsops; i++) {
		if (ops[i].flg & LX_SEM_UNDO) {
			struct undo **u = undo_find(c->pid, (int)id, ops[i].num);
			if (!*u && (*u = ax_calloc(1, sizeof(**u)))) {
				(*u)->pid = c->pid, (*u)->id = (int)id, (*u)->num = ops[i].num;
			}
			if (*u)
				(*u)->adj -= ops[i].op;
		}
		s->s[ops[i].num].val = (uint16_t)(s->s[ops[i].num].val + ops[i].op);
		s->s[ops[i].num].pid = pid;
	}
	s->otime = now_s();
	return 0;
}

/* The undo records of a set (all, or one semaphore's) go: LX_SETVAL, LX_SETALL, LX_IPC_RMID. */
static void undo_drop(int id, int64_t num)
{
	for (struct undo **p = &undos; *p;) {
		if ((*p)->id == id && (num < 0 || (*p)->num == (uint32_t)num)) {
			struct undo *d = *p;
			*p = d->next;
			ax_free(d);
		} else {
			p = &(*p)->next;
		}
	}
}

/* LX_GETNCNT/LX_GETZCNT: the held semop calls on this semaphore that wait for it to grow / be 0. */
struct cnt_arg {
	int64_t id;
	uint32_t num;
	bool zero;
	const struct semset *s;
};

static bool waits_on(const struct vcall *v, void *arg)
{
	const struct cnt_arg *a = arg;
	if ((v->nr != LX_SYS_semop && v->nr != LX_SYS_semtimedop) || (int64_t)v->a[0] != a->id || v->a[2] > SEMOPM)
		return false;
	struct lx_sembuf ops[SEMOPM];
	if (ax_vcopy(v->thread, (const void *)v->a[1], EP_NONE, ops, v->a[2] * sizeof(*ops)) < 0)
		return false;
	for (uint64_t i = 0; i < v->a[2]; i++)
		if (ops[i].num == a->num && ops[i].num < a->s->nsems && op_waits(&ops[i], a->s->s[a->num].val) &&
		    (ops[i].op == 0) == a->zero)
			return true;
	return false;
}

static int64_t sem_ctl(struct client *c, int64_t id, int64_t num, uint64_t cmd, uint64_t arg)
{
	cmd &= ~(uint64_t)0x100; /* IPC_64 */
	if (cmd == LX_IPC_INFO || cmd == 19 /* SEM_INFO */)
		return -LX_EINVAL; /* (no struct seminfo yet) */
	int slot = slot_of(K_SEM, id);
	if (slot < 0)
		return slot;
	struct semset *s = sems[slot];
	bool one = cmd == LX_GETVAL || cmd == LX_SETVAL || cmd == LX_GETPID || cmd == LX_GETNCNT || cmd == LX_GETZCNT;
	if (one && (num < 0 || num >= s->nsems))
		return -LX_EINVAL;
	switch (cmd) {
	case LX_IPC_STAT:
	case 18: { /* SEM_STAT */
		struct lx_semid d = { .perm = s->perm, .otime = s->otime, .ctime = s->ctime, .nsems = s->nsems };
		return ax_vcopy(EP_NONE, &d, c->ep, (void *)arg, sizeof(d)) < 0 ? -LX_EFAULT : 0;
	}
	case LX_IPC_SET: {
		struct lx_semid d;
		if (ax_vcopy(c->ep, (const void *)arg, EP_NONE, &d, sizeof(d)) < 0)
			return -LX_EFAULT;
		perm_set(&s->perm, &d.perm);
		s->ctime = now_s();
		return 0;
	}
	case LX_IPC_RMID:
		undo_drop((int)id, -1);
		ax_free(s->s);
		ax_free(s);
		sems[slot] = NULL;
		seq_next(K_SEM, slot);
		return 0;
	case LX_GETVAL:
		return s->s[num].val;
	case LX_GETPID:
		return s->s[num].pid;
	case LX_GETNCNT:
	case LX_GETZCNT: {
		struct cnt_arg a = { id, (uint32_t)num, cmd == LX_GETZCNT, s };
		return vfs_held_count(waits_on, &a);
	}
	case LX_SETVAL:
		if ((int32_t)arg < 0 || (int32_t)arg > SEMVMX)
			return -LX_ERANGE;
		s->s[num].val = (uint16_t)arg;
		s->s[num].pid = vfs_client_lxpid(c);
		s->ctime = now_s();
		undo_drop((int)id, num);
		return 0;
	case LX_GETALL:
	case LX_SETALL: {
		uint16_t *vals = ax_malloc(s->nsems * sizeof(*vals));
		if (!vals)
			return -LX_ENOMEM;
		int64_t r = 0;
		if (cmd == LX_GETALL) {
			for (uint32_t i = 0; i < s->nsems; i++)
				vals[i] = s->s[i].val;
			r = ax_vcopy(EP_NONE, vals, c->ep, (void *)arg, s->nsems * sizeof(*vals)) < 0 ? -LX_EFAULT : 0;
		} else if (ax_vcopy(c->ep, (const void *)arg, EP_NONE, vals, s->nsems * sizeof(*vals)) < 0) {
			r = -LX_EFAULT;
		} else {
			for (uint32_t i = 0; i < s->nsems && !r; i++)
				if (vals[i] > SEMVMX)
					r = -LX_ERANGE;
			int32_t pid = vfs_client_lxpid(c);
			for (uint32_t i = 0; i < s->nsems && !r; i++)
				s->s[i].val = vals[i], s->s[i].pid = pid;
			if (!r) {
				s->ctime = now_s();
				undo_drop((int)id, -1);
			}
		}
		ax_free(vals);
		return r;
	}
	}
	return -LX_EINVAL;
}

/* ---- shared memory ---- */

static int64_t shm_get(struct client *c, int32_t key, uint64_t size, uint64_t flags)
{
	bool fresh;
	int64_t slot = get_slot(K_SHM, key, flags, &fresh);
	if (slot < 0)
		return slot;
	if (!fresh)
		return size > shms[slot]->size ? -LX_EINVAL : id_of(K_SHM, (int)slot);
	if (size < 1 || size > SHMMAX)
		return -LX_EINVAL;
	struct shmseg *g = ax_calloc(1, sizeof(*g));
	if (!g)
		return -LX_ENOMEM;
	int64_t mo = ax_mo_create((size + PAGE - 1) / PAGE, 0); /* zeroed, its pages made when touched */
	if (mo < 0) {
		ax_free(g);
		return -LX_ENOMEM;
	}
	perm_init(&g->perm, key, flags, shm_seq[slot]);
	g->mo = mo, g->size = size;
	g->ctime = now_s(), g->cpid = vfs_client_lxpid(c);
	shms[slot] = g;
	return id_of(K_SHM, (int)slot);
}

static void shm_free(int slot)
{
	ax_mo_destroy(shms[slot]->mo); /* the processes' mappings hold the object while they last */
	ax_free(shms[slot]);
	shms[slot] = NULL;
	seq_next(K_SHM, slot);
}

/* An attachment ends (shmdt, exec, exit): the count, and a removed segment's end. */
static void att_end(struct shmatt *a, int32_t lpid)
{
	struct shmseg *g = shms[a->slot];
	a->pid = 0;
	if (!g)
		return;
	g->nattch--;
	g->dtime = now_s(), g->lpid = lpid;
	if (!g->nattch && (g->perm.mode & SHM_DEST))
		shm_free(a->slot);
}

static int64_t shm_at(struct client *c, struct vcall *v, int64_t id, uint64_t addr, uint64_t flags)
{
	int slot = slot_of(K_SHM, id);
	if (slot < 0)
		return slot;
	struct shmseg *g = shms[slot];
	if (addr & (PAGE - 1)) {
		if (!(flags & LX_SHM_RND))
			return -LX_EINVAL;
		addr &= ~(PAGE - 1); /* SHMLBA is a page on x86-64 */
	}
	struct shmatt *a = NULL;
	for (int i = 0; i < SHM_ATT_MAX && !a; i++)
		if (!atts[i].pid)
			a = &atts[i];
	if (!a)
		return -LX_ENOMEM;
	uint64_t len = (g->size + PAGE - 1) & ~(PAGE - 1);
	uint64_t prot = LX_PROT_READ | ((flags & LX_SHM_RDONLY) ? 0 : LX_PROT_WRITE);
	uint64_t mf = LX_MAP_SHARED | LXM_SHARE | (addr ? ((flags & LX_SHM_REMAP) ? LX_MAP_FIXED : LX_MAP_FIXED_NOREPLACE) : 0);
	int64_t va = kcall6(KC_LX_MMAP, v->thread, (uint64_t)g->mo, addr, len, prot | mf << 32, 0);
	if (va < 0)
		return va == -17 /* EEXIST: the range is taken and LX_SHM_REMAP was not asked */ ? -LX_EINVAL : va;
	*a = (struct shmatt){ c->pid, slot, (uint64_t)va, len };
	g->nattch++;
	g->atime = now_s(), g->lpid = vfs_client_lxpid(c);
	return va;
}

static int64_t shm_dt(struct client *c, struct vcall *v, uint64_t addr)
{
	for (int i = 0; i < SHM_ATT_MAX; i++) {
		struct shmatt *a = &atts[i];
		if (a->pid != c->pid || a->addr != addr)
			continue;
		int64_t r = kcall6(KC_LX_MUNMAP, v->thread, a->addr, a->len, 0, 0, 0);
		if (r < 0)
			return r;
		att_end(a, vfs_client_lxpid(c));
		return 0;
	}
	return -LX_EINVAL; /* nothing attached there */
}

static int64_t shm_ctl(struct client *c, int64_t id, uint64_t cmd, uint64_t ubuf)
{
	cmd &= ~(uint64_t)0x100; /* IPC_64 */
	if (cmd == LX_IPC_INFO || cmd == 14 /* SHM_INFO */)
		return -LX_EINVAL; /* (no struct shminfo yet) */
	int slot = slot_of(K_SHM, id);
	if (slot < 0)
		return slot;
	struct shmseg *g = shms[slot];
	switch (cmd) {
	case LX_IPC_STAT:
	case LX_SHM_STAT: {
		struct lx_shmid d = { .perm = g->perm, .segsz = g->size, .atime = g->atime, .dtime = g->dtime,
				      .ctime = g->ctime, .cpid = g->cpid, .lpid = g->lpid, .nattch = g->nattch };
		return ax_vcopy(EP_NONE, &d, c->ep, (void *)ubuf, sizeof(d)) < 0 ? -LX_EFAULT : 0;
	}
	case LX_IPC_SET: {
		struct lx_shmid d;
		if (ax_vcopy(c->ep, (const void *)ubuf, EP_NONE, &d, sizeof(d)) < 0)
			return -LX_EFAULT;
		perm_set(&g->perm, &d.perm);
		g->ctime = now_s();
		return 0;
	}
	case LX_IPC_RMID:
		g->perm.mode |= SHM_DEST;
		g->perm.key = LX_IPC_PRIVATE; /* the key is free for a new segment at once */
		if (!g->nattch)
			shm_free(slot);
		return 0;
	case LX_SHM_LOCK:
	case LX_SHM_UNLOCK:
		return 0; /* nothing is swapped out here */
	}
	return -LX_EINVAL;
}

void sysv_init(bool adopted)
{
	for (int i = 0; adopted && i < SYSV_MAX; i++)
		if (shms[i])
			ax_keep_claim(shms[i]->mo); /* a predecessor's segments are ours again */
}

/* A fork's child has its parent's attachments (the kernel shares the mappings). */
void sysv_fork(uint64_t parent, uint64_t child)
{
	for (int i = 0; i < SHM_ATT_MAX; i++) {
		if (atts[i].pid != parent)
			continue;
		for (int j = 0; j < SHM_ATT_MAX; j++)
			if (!atts[j].pid) {
				atts[j] = atts[i];
				atts[j].pid = child;
				if (shms[atts[j].slot])
					shms[atts[j].slot]->nattch++;
				break;
			}
	}
}

/* execve dropped the process's mappings: its attachments end. */
void sysv_exec(uint64_t pid)
{
	for (int i = 0; i < SHM_ATT_MAX; i++)
		if (atts[i].pid == pid)
			att_end(&atts[i], 0);
}

void sysv_forget(uint64_t pid)
{
	sysv_exec(pid); /* its mappings went with it */
	for (struct undo **p = &undos; *p;) {
		struct undo *u = *p;
		if (u->pid != pid) {
			p = &u->next;
			continue;
		}
		int slot = slot_of(K_SEM, u->id);
		if (slot >= 0 && u->num < sems[slot]->nsems) {
			/* Linux clamps an adjustment that would take the value below 0 */
			int32_t nv = sems[slot]->s[u->num].val + u->adj;
			sems[slot]->s[u->num].val = (uint16_t)(nv < 0 ? 0 : nv > SEMVMX ? SEMVMX : nv);
			sems[slot]->s[u->num].pid = 0;
		}
		*p = u->next;
		ax_free(u);
	}
}

int64_t sysv_call(struct client *c, struct vcall *v)
{
	const uint64_t *a = v->a;
	switch (v->nr) {
	case LX_SYS_msgget:
		return msg_get((int32_t)a[0], a[1]);
	case LX_SYS_msgsnd:
		return msg_send(c, v, (int64_t)(int32_t)a[0], a[1], a[2], a[3]);
	case LX_SYS_msgrcv:
		return msg_recv(c, v, (int64_t)(int32_t)a[0], a[1], a[2], (int64_t)a[3], a[4]);
	case LX_SYS_msgctl:
		return msg_ctl(c, (int64_t)(int32_t)a[0], a[1], a[2]);
	case LX_SYS_semget:
		return sem_get((int32_t)a[0], (int64_t)(int32_t)a[1], a[2]);
	case LX_SYS_semop:
		return sem_op(c, v, (int64_t)(int32_t)a[0], a[1], a[2], 0);
	case LX_SYS_semtimedop:
		return sem_op(c, v, (int64_t)(int32_t)a[0], a[1], a[2], a[3]);
	case LX_SYS_semctl:
		return sem_ctl(c, (int64_t)(int32_t)a[0], (int64_t)(int32_t)a[1], a[2], a[3]);
	case LX_SYS_shmget:
		return shm_get(c, (int32_t)a[0], a[1], a[2]);
	case LX_SYS_shmat:
		return shm_at(c, v, (int64_t)(int32_t)a[0], a[1], a[2]);
	case LX_SYS_shmdt:
		return shm_dt(c, v, a[0]);
	case LX_SYS_shmctl:
		return shm_ctl(c, (int64_t)(int32_t)a[0], a[1], a[2]);
	}
	return VFS_NOT_MINE;
}
