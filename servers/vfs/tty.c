/* The terminal on the console: the glue between the console server's input channel, the
 * line discipline (ldisc.c) and the file calls (tty.h). One terminal, shared by every file
 * with dev = DEV_CONSOLE. What it cannot know: Linux process ids and sessions live in pm,
 * so the foreground process group is the number a program last gave LX_TIOCSPGRP (see
 * servers/vfs/README.md, "Terminal"). */
#include "tty.h"
#include "lx_abi.h"
#include "ldisc.h"
#include "tty_proto.h"
#include "pm_proto.h"
#include "chan_name.h"
#include "spsc.h"
#include "service.h"

#define DECISECOND 100000000ull /* VTIME's unit, in ns */
#define SIGNAL_RETRY_NS 10000000ull

static VFS_KEPT struct ldisc ld;
static struct spsc inq;
static struct chan_export ex;
/* The console has attached: reads wait for input (before: end of file). Kept: a new instance
 * waits for the console to attach again rather than tell readers the terminal has ended. */
static VFS_KEPT bool keyboard;
static bool broken;   /* the channel was found corrupt: no more input */
static VFS_KEPT int32_t fg_pgrp, session;
static VFS_KEPT struct winsize { uint16_t row, col, xpixel, ypixel; } winsz;

/* Output (program writes and echo) is gathered and written once per call or input batch. */
static char out_buf[4096];
static struct ax_outbuf out = { out_buf, sizeof(out_buf), 0 };

/* Signals pm could not take at once (it was busy: KC_SENDNB refused), retried by the timer. */
static VFS_KEPT uint32_t pending_sigs;
static VFS_KEPT int32_t pending_pgrp;

/* Readers waiting under VTIME: a read is retried statelessly, so its deadline lives here,
 * by the caller's endpoint. */
#define MAX_TIMED 8
static struct timed {
	endpoint_t ep;
	uint64_t deadline; /* 0: not started */
	uint32_t seen;     /* VMIN > 0: the bytes there when the inter-byte timer last started */
} timed[MAX_TIMED];

void tty_flush(void) { ax_out_flush(&out); }

static void emit(void *ctx, const char *s, size_t n)
{
	(void)ctx;
	ax_out_put(&out, s, n);
}

static bool send_signal(int32_t pgrp, int sig)
{
	int64_t pm = ax_svc_lookup("pm", NULL);
	if (pm <= 0)
		return true; /* nobody to tell */
	struct kmsg m = { .type = PM_SIGNAL, .w = { (uint64_t)-(int64_t)pgrp, (uint64_t)sig } };
	return ax_sendnb((endpoint_t)pm, &m) != -KE_AGAIN;
}

/* A signal character (or a window size change) for the foreground process group: pm
 * delivers it (PM_SIGNAL); without a foreground group nothing happens. */
void tty_session(int32_t pid)
{
	session = fg_pgrp = pid;
}

static void signal_fg(void *ctx, int sig)
{
	(void)ctx;
	if (fg_pgrp <= 0)
		return;
	if (pending_sigs && pending_pgrp != fg_pgrp)
		pending_sigs = 0; /* meant for a group that is no longer in front */
	if (!send_signal(fg_pgrp, sig)) {
		pending_sigs |= 1u << sig;
		pending_pgrp = fg_pgrp;
	}
}

static void attached(struct chan_export *e, endpoint_t importer)
{
	(void)e, (void)importer;
	keyboard = !broken;
}

void tty_init(bool adopted)
{
	if (!adopted) {
		ld_init(&ld, emit, signal_fg, NULL);
		winsz = (struct winsize){ 24, 80, 0, 0 };
	}
	ld.out = emit, ld.sig = signal_fg; /* this build's code */
	ex = (struct chan_export){ .rights = KP_R | KP_W, .peer = "console", .on_attach = attached };
	ax_strpad(ex.key, sizeof(ex.key), TTY_CHAN_KEY);
	int64_t r = chan_create(&ex, TTY_SLOT, TTY_SLOTS, SPSC_CONSUMER, &inq);
	if (r == 0)
		r = chan_export(&ex);
	if (r < 0)
		ax_printf("vfs: the terminal has no keyboard (cannot export %s/%s: error %lld)\n", TTY_CHAN_LABEL,
			  TTY_CHAN_KEY, (long long)r);
}

bool tty_message(struct kmsg *m) { return chan_export_serve(m); }

void tty_input(void)
{
	uint8_t slot[TTY_SLOT];
	int e;
	while (!broken && (e = spsc_pop(&inq, slot)) != CHAN_EAGAIN) {
		if (e == CHAN_ECORRUPT) {
			ax_printf("vfs: the terminal's input channel is corrupt: no more input\n");
			broken = true;
			keyboard = false;
			break;
		}
		/* The console's bytes are checked like anyone's: a bad length is cut. */
		for (unsigned i = 0; i < slot[0] && i < TTY_SLOT_DATA; i++)
			ld_input(&ld, slot[1 + i]);
	}
	tty_flush();
	vfs_kick();
}

static struct timed *timer_of(endpoint_t ep, bool create)
{
	struct timed *free_slot = NULL;
	for (int i = 0; i < MAX_TIMED; i++) {
		if (timed[i].ep == ep)
			return &timed[i];
		if (!timed[i].ep && !free_slot)
			free_slot = &timed[i];
	}
	if (free_slot && create)
		*free_slot = (struct timed){ .ep = ep };
	return create ? free_slot : NULL;
}

void tty_cancel(endpoint_t ep)
{
	struct timed *t = timer_of(ep, false);
	if (t)
		t->ep = 0;
}

/* Non-canonical mode: whether a read of len bytes returns now (Linux's VMIN/VTIME rules). */
static bool raw_ready(endpoint_t ep, uint32_t avail, uint64_t len)
{
	uint64_t vmin = ld.t.cc[LD_VMIN], vtime = ld.t.cc[LD_VTIME];
	if (vmin && avail >= (vmin < len ? vmin : len))
		return true;
	if (!vtime)
		return vmin == 0; /* VMIN 0: a poll; else wait for the bytes */
	if (vmin ? !avail : avail)
		return !vmin; /* VMIN 0: any byte ends the wait; VMIN > 0: the timer starts with one */
	/* Timed: VMIN 0 with nothing yet (the whole read), or VMIN > 0 with some bytes (between
	 * bytes, restarted by each new one). */
	struct timed *t = timer_of(ep, true);
	uint64_t now = ax_time_ns();
	if (!t)
		return true; /* no room to time it: do not wait */
	if (!t->deadline || (vmin && avail != t->seen)) {
		t->seen = avail;
		t->deadline = now + vtime * DECISECOND;
	}
	return now >= t->deadline;
}

/* Copies what a read returns now to the caller; bytes leave the buffer only if that worked. */
static int64_t deliver(struct client *c, uint64_t ubuf, uint64_t len)
{
	static uint8_t tmp[LD_BUF];
	uint32_t used;
	size_t n = ld_read_prep(&ld, tmp, len < sizeof(tmp) ? len : sizeof(tmp), &used);
	if (n && ax_vcopy(EP_NONE, tmp, c->ep, (void *)ubuf, n) < 0)
		return -LX_EFAULT;
	ld_consume(&ld, used);
	return (int64_t)n;
}

int64_t tty_read(struct client *c, struct ofile *f, uint64_t ubuf, uint64_t len)
{
	if (len == 0)
		return 0;
	bool canon = ld.t.lflag & LD_ICANON, nonblock = f->flags & LX_O_NONBLOCK;
	uint32_t avail = ld_avail(&ld);
	bool ready = canon ? ld_line_ready(&ld) : nonblock || !keyboard ? avail > 0 : raw_ready(c->ep, avail, len);
	if (ready || !keyboard) {
		tty_cancel(c->ep);
		return deliver(c, ubuf, len); /* without a keyboard: what is there, else end of file */
	}
	return nonblock ? -LX_EAGAIN : VFS_BLOCK;
}

int64_t tty_write(struct client *c, struct ofile *f, uint64_t ubuf, uint64_t len)
{
	(void)f;
	static uint8_t tmp[4096];
	for (uint64_t done = 0; done < len;) {
		uint64_t k = len - done < sizeof(tmp) ? len - done : sizeof(tmp);
		if (ax_vcopy(c->ep, (const void *)(ubuf + done), EP_NONE, tmp, k) < 0)
			return done ? (int64_t)done : -LX_EFAULT;
		ld_output(&ld, tmp, k);
		done += k;
	}
	return (int64_t)len;
}

uint32_t tty_poll(struct ofile *f)
{
	(void)f;
	uint32_t vmin = ld.t.cc[LD_VMIN];
	bool in = !keyboard || ((ld.t.lflag & LD_ICANON) ? ld_line_ready(&ld)
				 : ld_avail(&ld) >= (!ld.t.cc[LD_VTIME] && vmin ? vmin : 1));
	return LX_POLLOUT | (in ? LX_POLLIN : 0);
}

uint64_t tty_timer(void)
{
	bool timing = false;
	for (int i = 0; i < MAX_TIMED; i++)
		timing |= timed[i].ep && timed[i].deadline;
	if (!timing && !pending_sigs)
		return 0; /* the usual case: no clock read on every turn of the loop */
	uint64_t now = ax_time_ns(), next = 0;
	if (pending_sigs) {
		for (int s = 1; s < 32; s++)
			if ((pending_sigs & (1u << s)) && send_signal(pending_pgrp, s))
				pending_sigs &= ~(1u << s);
		next = pending_sigs ? SIGNAL_RETRY_NS : 0;
	}
	bool due = false;
	for (int i = 0; i < MAX_TIMED; i++)
		due |= timed[i].ep && timed[i].deadline && timed[i].deadline <= now;
	if (due) {
		vfs_kick(); /* the timed-out readers answer now */
		now = ax_time_ns();
	}
	for (int i = 0; i < MAX_TIMED; i++) {
		struct timed *t = &timed[i];
		if (!t->ep || !t->deadline)
			continue;
		if (t->deadline <= now)
			t->ep = 0; /* nobody waited for it any more */
		else if (!next || t->deadline - now < next)
			next = t->deadline - now;
	}
	return next;
}

static int64_t get(struct client *c, uint64_t uptr, void *v, size_t n)
{
	return ax_vcopy(c->ep, (const void *)uptr, EP_NONE, v, n) < 0 ? -LX_EFAULT : 0;
}

static int64_t put(struct client *c, uint64_t uptr, const void *v, size_t n)
{
	return ax_vcopy(EP_NONE, v, c->ep, (void *)uptr, n) < 0 ? -LX_EFAULT : 0;
}

static int64_t put_int(struct client *c, uint64_t uptr, int32_t v) { return put(c, uptr, &v, sizeof(v)); }

int64_t tty_ioctl(struct client *c, struct ofile *f, uint64_t cmd, uint64_t arg)
{
	int32_t v;
	int64_t r;
	switch ((uint32_t)cmd) { /* the request is an int in Linux */
	case LX_TCGETS:
		return put(c, arg, &ld.t, sizeof(ld.t));
	case LX_TCSETS:
	case LX_TCSETSW: /* output is written at once: nothing to wait for */
	case LX_TCSETSF: {
		struct ld_termios t;
		if ((r = get(c, arg, &t, sizeof(t))))
			return r;
		if ((uint32_t)cmd == LX_TCSETSF)
			ld_flush_input(&ld);
		ld_set(&ld, &t);
		return 0; /* held readers are retried after every call anyway */
	}
	case LX_TCSBRK: /* tcdrain, or a break: neither has anything to do */
	case LX_TCSBRKP:
	case LX_TIOCEXCL:
	case LX_TIOCNXCL:
	case LX_TIOCSCTTY: /* vfs knows no sessions (pm does): every process shares the console */
	case LX_TIOCNOTTY:
		return 0;
	case LX_TCXONC: /* output is never stopped; accepted */
		return arg <= 3 ? 0 : -LX_EINVAL;
	case LX_TCFLSH: /* TCIFLUSH 0, TCOFLUSH 1 (nothing queued), TCIOFLUSH 2 */
		if (arg > 2)
			return -LX_EINVAL;
		if (arg != 1)
			ld_flush_input(&ld);
		return 0;
	case LX_TIOCGPGRP: /* no foreground group yet: as for a terminal that is not the caller's */
		return fg_pgrp ? put_int(c, arg, fg_pgrp) : -LX_ENOTTY;
	case LX_TIOCGSID:
		return session ? put_int(c, arg, session) : -LX_ENOTTY;
	case LX_TIOCSPGRP:
		if ((r = get(c, arg, &v, sizeof(v))))
			return r;
		if (v <= 0)
			return -LX_EINVAL;
		fg_pgrp = v;
		if (!session)
			session = v; /* the first foreground group is taken as the session's leader's */
		return 0;
	case LX_TIOCOUTQ:
		return put_int(c, arg, 0);
	case LX_FIONREAD:
		return put_int(c, arg, (int32_t)ld_inq(&ld));
	case LX_TIOCGWINSZ:
		return put(c, arg, &winsz, sizeof(winsz));
	case LX_TIOCSWINSZ: {
		struct winsize w;
		if ((r = get(c, arg, &w, sizeof(w))))
			return r;
		bool changed = memcmp(&w, &winsz, sizeof(w)) != 0;
		winsz = w;
		if (changed)
			signal_fg(NULL, LX_SIGWINCH);
		return 0;
	}
	case LX_FIONBIO:
		if ((r = get(c, arg, &v, sizeof(v))))
			return r;
		f->flags = v ? f->flags | LX_O_NONBLOCK : f->flags & ~(uint32_t)LX_O_NONBLOCK;
		return 0;
	case LX_TIOCGETD: /* N_TTY, the only discipline */
		return put_int(c, arg, 0);
	case LX_TIOCSETD:
		if ((r = get(c, arg, &v, sizeof(v))))
			return r;
		return v == 0 ? 0 : -LX_EINVAL;
	}
	return -LX_ENOTTY;
}
