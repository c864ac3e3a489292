/* The terminal line discipline (ldisc.h). Follows Linux's n_tty.c in what it does with each
 * byte, so programs see the terminal they expect; differences are noted where they are. */
#include "ldisc.h"

#define M(i) ((i) & (LD_BUF - 1))

/* Linux's INIT_C_CC: ^C ^\ DEL ^U ^D, VTIME 0, VMIN 1, -, ^Q ^S ^Z, -, ^R ^O ^W ^V, - */
static const uint8_t default_cc[LD_NCCS] = { 3, 034, 0177, 025, 4, 0, 1, 0, 021, 023, 032, 0, 022, 017, 027, 026, 0 };

enum { ERASE, WERASE, KILL };

static bool canonical(const struct ldisc *l) { return l->t.lflag & LD_ICANON; }
static bool ctl(uint8_t c) { return c < 0x20 || c == 0x7f; }
static bool alnum(uint8_t c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
/* A UTF-8 continuation byte takes no column (only with IUTF8, as in Linux). */
static bool cont(const struct ldisc *l, uint8_t c) { return (l->t.iflag & LD_IUTF8) && (c & 0xc0) == 0x80; }
/* c is the special character cc[i]; 0 there means disabled (_POSIX_VDISABLE), so a typed NUL
 * is never special. */
static bool is(const struct ldisc *l, uint8_t c, int i) { return l->t.cc[i] && c == l->t.cc[i]; }

void ld_init(struct ldisc *l, void (*out)(void *ctx, const char *s, size_t n), void (*sig)(void *ctx, int sig),
	     void *ctx)
{
	l->t.iflag = LD_ICRNL | LD_IXON;
	l->t.oflag = LD_OPOST | LD_ONLCR;
	l->t.cflag = LD_B115200 | LD_CS8 | LD_CREAD | LD_CLOCAL;
	l->t.lflag = LD_ISIG | LD_ICANON | LD_ECHO | LD_ECHOE | LD_ECHOK | LD_ECHOCTL | LD_ECHOKE | LD_IEXTEN;
	l->t.line = 0;
	for (int i = 0; i < LD_NCCS; i++)
		l->t.cc[i] = default_cc[i];
	l->tail = l->canon = l->head = 0;
	l->col = l->canon_col = 0;
	l->lnext = false;
	l->out = out;
	l->sig = sig;
	l->ctx = ctx;
}

static void emit(struct ldisc *l, const void *s, size_t n)
{
	if (l->out && n)
		l->out(l->ctx, s, n);
}

/* One byte to the terminal through output processing, keeping track of the column (Linux's
 * do_output_char). */
static void out_char(struct ldisc *l, uint8_t c)
{
	uint32_t o = l->t.oflag;
	if (!(o & LD_OPOST)) {
		emit(l, &c, 1);
		return;
	}
	switch (c) {
	case '\n':
		if (o & LD_ONLRET)
			l->col = 0;
		if (o & LD_ONLCR) {
			l->col = l->canon_col = 0;
			emit(l, "\r\n", 2);
			return;
		}
		l->canon_col = l->col;
		break;
	case '\r':
		if ((o & LD_ONOCR) && l->col == 0)
			return;
		if (o & LD_OCRNL) {
			c = '\n';
			if (o & LD_ONLRET)
				l->canon_col = l->col = 0;
			break;
		}
		l->canon_col = l->col = 0;
		break;
	case '\t': {
		uint32_t spaces = 8 - (l->col & 7);
		l->col += spaces;
		if ((o & LD_TABDLY) == LD_XTABS) {
			emit(l, "        ", spaces);
			return;
		}
		break;
	}
	case '\b':
		if (l->col > 0)
			l->col--;
		break;
	default:
		if (!ctl(c)) {
			if ((o & LD_OLCUC) && c >= 'a' && c <= 'z')
				c -= 'a' - 'A';
			if (!cont(l, c))
				l->col++;
		}
	}
	emit(l, &c, 1);
}

void ld_output(struct ldisc *l, const uint8_t *s, size_t n)
{
	if (!(l->t.oflag & LD_OPOST)) {
		emit(l, s, n);
		return;
	}
	bool lcuc = l->t.oflag & LD_OLCUC;
	for (size_t i = 0; i < n;) {
		/* Runs of plain printable bytes go out in one piece. */
		size_t j = i;
		while (j < n && !ctl(s[j]) && !(lcuc && s[j] >= 'a' && s[j] <= 'z')) {
			l->col += !cont(l, s[j]);
			j++;
		}
		emit(l, s + i, j - i);
		if (j < n)
			out_char(l, s[j++]);
		i = j;
	}
}

/* Echo of an input byte: control characters as ^X under ECHOCTL (Linux's echo_char). */
static void echo_char(struct ldisc *l, uint8_t c)
{
	if ((l->t.lflag & LD_ECHOCTL) && ctl(c) && c != '\t') {
		uint8_t s[2] = { '^', c ^ 0100 };
		emit(l, s, 2);
		l->col += 2;
		return;
	}
	out_char(l, c);
}

static void echo_erase_one(struct ldisc *l)
{
	out_char(l, '\b');
	out_char(l, ' ');
	out_char(l, '\b');
}

static uint32_t count(const struct ldisc *l) { return l->head - l->tail; }

/* Room for one more byte; in canonical mode the last place is kept for the byte that ends a
 * line, so a full line can still be entered. */
static bool room(const struct ldisc *l, bool ends_line)
{
	uint32_t n = count(l);
	return canonical(l) && !ends_line ? n < LD_BUF - 1 : n < LD_BUF;
}

static void put(struct ldisc *l, uint8_t c, uint8_t flags)
{
	l->buf[M(l->head)] = c;
	l->fl[M(l->head)] = flags;
	l->head++;
	if (!canonical(l) || (flags & LDF_DELIM))
		l->canon = l->head;
}

static void full(struct ldisc *l)
{
	if ((l->t.iflag & LD_IMAXBEL) && (l->t.lflag & LD_ECHO))
		out_char(l, '\a');
}

void ld_flush_input(struct ldisc *l)
{
	l->tail = l->canon = l->head;
	l->lnext = false;
}

void ld_set(struct ldisc *l, const struct ld_termios *t)
{
	bool was = canonical(l);
	l->t = *t;
	if (was == canonical(l))
		return;
	/* As Linux: the line markers go; pending input becomes one line when canonical mode
	 * starts, and all of it readable when it ends (EOF markers turn into the typed byte). */
	for (uint32_t i = l->tail; i != l->head; i++)
		l->fl[M(i)] = 0;
	if (canonical(l) && l->head != l->tail)
		l->fl[M(l->head - 1)] = LDF_DELIM;
	l->canon = l->head;
	l->lnext = false;
}

/* Column after echoing the line being edited up to `end`, starting at canon_col. */
static uint32_t line_col(const struct ldisc *l, uint32_t end)
{
	uint32_t col = l->canon_col;
	for (uint32_t i = l->canon; i != end; i++) {
		uint8_t c = l->buf[M(i)];
		if (c == '\t')
			col = (col | 7) + 1;
		else if (ctl(c))
			col += (l->t.lflag & LD_ECHOCTL) ? 2 : 0;
		else
			col += !cont(l, c);
	}
	return col;
}

/* VERASE, VWERASE and VKILL (Linux's eraser): `key` is the byte typed, for the echo. */
static void erase(struct ldisc *l, int kind, uint8_t key)
{
	uint32_t lf = l->t.lflag;
	if (l->head == l->canon)
		return;
	if (kind == KILL) {
		if (!(lf & LD_ECHO)) {
			l->head = l->canon;
			return;
		}
		if (!(lf & LD_ECHOK) || !(lf & LD_ECHOKE) || !(lf & LD_ECHOE)) {
			/* Not erased on the screen: the kill character, and a new line under ECHOK. */
			l->head = l->canon;
			echo_char(l, key);
			if (lf & LD_ECHOK)
				out_char(l, '\n');
			return;
		}
	}
	bool seen_alnum = false;
	while (l->head != l->canon) {
		uint32_t h = l->head;
		uint8_t c;
		do /* a UTF-8 character goes whole */
			c = l->buf[M(--h)];
		while (cont(l, c) && h != l->canon);
		if (kind == WERASE) {
			/* Linux's word: trailing non-alphanumerics, then alphanumerics and '_'. */
			if (alnum(c) || c == '_')
				seen_alnum = true;
			else if (seen_alnum)
				break;
		}
		l->head = h;
		if (lf & LD_ECHO) {
			if (kind == ERASE && !(lf & LD_ECHOE)) {
				echo_char(l, key);
			} else if (c == '\t') {
				/* Back to where the tab started, recomputed from the line's start (at most
				 * 8 columns, should output in between have moved the cursor). */
				uint32_t to = line_col(l, h);
				for (int n = 0; n < 8 && l->col > to; n++)
					out_char(l, '\b');
			} else if (ctl(c)) {
				if (lf & LD_ECHOCTL) { /* it was echoed as ^X */
					echo_erase_one(l);
					echo_erase_one(l);
				}
			} else {
				echo_erase_one(l);
			}
		}
		if (kind == ERASE)
			break;
	}
}

static void reprint(struct ldisc *l, uint8_t key)
{
	echo_char(l, key);
	out_char(l, '\n');
	for (uint32_t i = l->canon; i != l->head; i++)
		echo_char(l, l->buf[M(i)]);
}

static void isig(struct ldisc *l, int sig, uint8_t c)
{
	if (!(l->t.lflag & LD_NOFLSH))
		ld_flush_input(l);
	if (l->sig)
		l->sig(l->ctx, sig);
	if (l->t.lflag & LD_ECHO)
		echo_char(l, c);
}

/* An ordinary byte: echoed and stored. */
static void normal(struct ldisc *l, uint8_t c)
{
	if (!room(l, false)) {
		full(l);
		return;
	}
	if (l->t.lflag & LD_ECHO) {
		if (c == '\n' && !canonical(l)) {
			out_char(l, '\n');
		} else {
			/* (A literal newline in canonical mode shows as ^J, unlike Linux, which moves to
			 * a new line the line editing then cannot erase back over.) */
			if (l->head == l->canon)
				l->canon_col = l->col;
			echo_char(l, c);
		}
	}
	put(l, c, 0);
}

/* A byte that ends a line in canonical mode: NL, VEOL, VEOL2, or VEOF (a hidden marker). */
static void end_line(struct ldisc *l, uint8_t c, bool eof)
{
	if (!room(l, true)) {
		full(l);
		return;
	}
	uint32_t lf = l->t.lflag;
	if (c == '\n' && !eof) {
		if (lf & (LD_ECHO | LD_ECHONL))
			out_char(l, '\n');
	} else if (!eof && (lf & LD_ECHO)) {
		if (l->head == l->canon)
			l->canon_col = l->col;
		echo_char(l, c);
	}
	put(l, c, LDF_DELIM | (eof ? LDF_EOF : 0));
}

void ld_input(struct ldisc *l, uint8_t c)
{
	uint32_t in = l->t.iflag, lf = l->t.lflag;
	if (in & LD_ISTRIP)
		c &= 0x7f;
	if ((in & LD_IUCLC) && (lf & LD_IEXTEN) && c >= 'A' && c <= 'Z')
		c += 'a' - 'A';
	if (l->lnext) {
		l->lnext = false;
		if (c == '\t' && (lf & LD_ECHO) && (lf & LD_ECHOCTL)) {
			out_char(l, ' '); /* a tab moves over the caret without covering it */
			out_char(l, '\b');
		}
		normal(l, c);
		return;
	}
	/* Output is written at once and never stopped, so VSTART and VSTOP only go unseen. */
	if ((in & LD_IXON) && (is(l, c, LD_VSTART) || is(l, c, LD_VSTOP)))
		return;
	if (lf & LD_ISIG) {
		int sig = is(l, c, LD_VINTR) ? LD_SIGINT : is(l, c, LD_VQUIT) ? LD_SIGQUIT : is(l, c, LD_VSUSP) ? LD_SIGTSTP : 0;
		if (sig) {
			isig(l, sig, c);
			return;
		}
	}
	if (c == '\r') {
		if (in & LD_IGNCR)
			return;
		if (in & LD_ICRNL)
			c = '\n';
	} else if (c == '\n' && (in & LD_INLCR)) {
		c = '\r';
	}
	if (!canonical(l)) {
		normal(l, c);
		return;
	}
	bool ext = lf & LD_IEXTEN;
	if (is(l, c, LD_VERASE))
		erase(l, ERASE, c);
	else if (is(l, c, LD_VKILL))
		erase(l, KILL, c);
	else if (ext && is(l, c, LD_VWERASE))
		erase(l, WERASE, c);
	else if (ext && is(l, c, LD_VLNEXT)) {
		l->lnext = true;
		if ((lf & LD_ECHO) && (lf & LD_ECHOCTL)) {
			out_char(l, '^'); /* a caret the quoted byte's echo then overwrites */
			out_char(l, '\b');
		}
	} else if (ext && is(l, c, LD_VREPRINT) && (lf & LD_ECHO))
		reprint(l, c);
	else if (c == '\n')
		end_line(l, c, false);
	else if (is(l, c, LD_VEOF))
		end_line(l, c, true);
	else if (is(l, c, LD_VEOL) || (ext && is(l, c, LD_VEOL2)))
		end_line(l, c, false);
	else if (c == '\b')
		erase(l, ERASE, c); /* Backspace erases too, whatever VERASE is (DEL by default), as
				       serial terminals send either */
	else
		normal(l, c);
}

uint32_t ld_avail(const struct ldisc *l) { return (canonical(l) ? l->canon : l->head) - l->tail; }

bool ld_line_ready(const struct ldisc *l) { return l->canon != l->tail; }

uint32_t ld_inq(const struct ldisc *l)
{
	if (!canonical(l))
		return count(l);
	uint32_t n = 0;
	for (uint32_t i = l->tail; i != l->canon; i++)
		n += !(l->fl[M(i)] & LDF_EOF);
	return n;
}

size_t ld_read_prep(const struct ldisc *l, uint8_t *dst, size_t n, uint32_t *used)
{
	uint32_t i = l->tail;
	size_t k = 0;
	if (!canonical(l)) {
		for (; i != l->head && k < n; i++)
			dst[k++] = l->buf[M(i)];
	} else {
		while (i != l->canon) {
			uint8_t f = l->fl[M(i)];
			if (f & LDF_EOF) { /* consumed with the bytes before it, never copied */
				i++;
				break;
			}
			if (k == n)
				break;
			dst[k++] = l->buf[M(i++)];
			if (f & LDF_DELIM)
				break;
		}
	}
	*used = i - l->tail;
	return k;
}

void ld_consume(struct ldisc *l, uint32_t used)
{
	uint32_t max = ld_avail(l);
	l->tail += used < max ? used : max;
}
