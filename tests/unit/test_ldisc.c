/* The terminal line discipline (servers/vfs/ldisc.c): Linux's defaults, canonical editing
 * (erase, kill, word erase, EOF, reprint, literal next), signal characters, non-canonical
 * reads, input and output processing, a full buffer; then two fuzzes: canonical editing
 * against a model (the lines a reader gets, and a model terminal that must always show the
 * line being edited), and random settings, bytes and reads checked for the buffer's
 * invariants under ASan/UBSan. */
#include "unit.h"
#include "ldisc.h"

static struct ldisc ld;
static char echoed[1 << 16];
static size_t nechoed;
static int sigs[64], nsigs; /* the first 64 signals, and how many there were */

static void out(void *ctx, const char *s, size_t n)
{
	(void)ctx;
	for (size_t i = 0; i < n; i++)
		if (nechoed < sizeof(echoed) - 1)
			echoed[nechoed++] = s[i];
	echoed[nechoed] = 0;
}

static void sig(void *ctx, int s)
{
	(void)ctx;
	if (nsigs < 64)
		sigs[nsigs] = s;
	nsigs++;
}

static void reset(void)
{
	ld_init(&ld, out, sig, NULL);
	nechoed = 0;
	echoed[0] = 0;
	nsigs = 0;
}

static void clear_echo(void)
{
	nechoed = 0;
	echoed[0] = 0;
}

static void type(const char *s)
{
	for (; *s; s++)
		ld_input(&ld, (uint8_t)*s);
}

/* One read of at most n bytes, as a string; *eof set when it was end of file. */
static const char *rd(size_t n, bool *eof)
{
	static char buf[LD_BUF + 1];
	uint32_t used;
	size_t k = ld_read_prep(&ld, (uint8_t *)buf, n, &used);
	ld_consume(&ld, used);
	buf[k] = 0;
	if (eof)
		*eof = k == 0 && used > 0;
	return buf;
}

static void set_lflag(uint32_t on, uint32_t off)
{
	struct ld_termios t = ld.t;
	t.lflag = (t.lflag | on) & ~off;
	ld_set(&ld, &t);
}

static void defaults_are_linuxs(void)
{
	reset();
	CHECK_EQ_U64(ld.t.iflag, 0400 | 02000);                               /* ICRNL IXON */
	CHECK_EQ_U64(ld.t.oflag, 01 | 04);                                    /* OPOST ONLCR */
	CHECK_EQ_U64(ld.t.lflag, 01 | 02 | 010 | 020 | 040 | 01000 | 04000 | 0100000);
	static const uint8_t cc[LD_NCCS] = { 3, 034, 0177, 025, 4, 0, 1, 0, 021, 023, 032, 0, 022, 017, 027, 026, 0 };
	CHECK(memcmp(ld.t.cc, cc, sizeof(cc)) == 0);
	CHECK(!ld_line_ready(&ld));
	CHECK_EQ_U64(ld_avail(&ld), 0);
}

static void a_line_with_echo(void)
{
	reset();
	type("hello");
	CHECK_STR(echoed, "hello");
	CHECK(!ld_line_ready(&ld));
	CHECK_EQ_U64(ld_avail(&ld), 0);
	type("\r"); /* ICRNL */
	CHECK_STR(echoed, "hello\r\n");
	CHECK(ld_line_ready(&ld));
	CHECK_EQ_U64(ld_inq(&ld), 6);
	CHECK_STR(rd(100, NULL), "hello\n");
	CHECK(!ld_line_ready(&ld));
	/* two lines typed ahead come out one per read */
	type("ab\ncd\n");
	CHECK_STR(rd(100, NULL), "ab\n");
	CHECK_STR(rd(100, NULL), "cd\n");
	/* a short buffer takes a line in pieces */
	type("abcdef\n");
	CHECK_STR(rd(4, NULL), "abcd");
	CHECK_STR(rd(4, NULL), "ef\n");
}

static void erase_kill_and_word_erase(void)
{
	reset();
	type("hellx\x7fo");
	CHECK_STR(echoed, "hellx\b \bo");
	type(" wrld\b\b\borld\n"); /* backspace erases too */
	CHECK_STR(rd(100, NULL), "hello world\n");
	clear_echo();
	type("\x7f"); /* nothing to erase: nothing echoed */
	CHECK_STR(echoed, "");
	type("garbage\x15kept\n");
	CHECK_STR(rd(100, NULL), "kept\n");
	type("one two  \x17three\n");
	CHECK_STR(rd(100, NULL), "one three\n");
	type("foo-bar\x17\x17x\n"); /* the word, then "-" and foo (Linux's word rule) */
	CHECK_STR(rd(100, NULL), "x\n");
	type("foo-bar\x17\n");
	CHECK_STR(rd(100, NULL), "foo-\n");
	/* without ECHOKE the kill character is echoed and a new line started (ECHOK) */
	set_lflag(0, LD_ECHOKE);
	clear_echo();
	type("abc\x15");
	CHECK_STR(echoed, "abc^U\r\n");
	/* without ECHOE erase echoes the erase character */
	set_lflag(0, LD_ECHOE);
	clear_echo();
	type("ab\x7f\n");
	CHECK_STR(echoed, "ab^?\r\n");
	CHECK_STR(rd(100, NULL), "a\n");
}

static void end_of_file(void)
{
	reset();
	bool eof;
	type("partial\x04");
	CHECK_STR(echoed, "partial"); /* VEOF is not echoed */
	CHECK_EQ_U64(ld_inq(&ld), 7);
	CHECK_STR(rd(100, &eof), "partial");
	CHECK(!eof);
	CHECK(!ld_line_ready(&ld));
	type("\x04");
	CHECK(ld_line_ready(&ld));
	CHECK_STR(rd(100, &eof), "");
	CHECK(eof);
	CHECK(!ld_line_ready(&ld));
	/* data exactly filling the read takes the EOF marker with it */
	type("abc\x04");
	CHECK_STR(rd(3, &eof), "abc");
	CHECK(!ld_line_ready(&ld));
	/* a shorter read leaves the rest, then the marker goes with the rest */
	type("abcd\x04");
	CHECK_STR(rd(3, NULL), "abc");
	CHECK_STR(rd(3, &eof), "d");
	CHECK(!eof && !ld_line_ready(&ld));
}

static void signal_characters(void)
{
	reset();
	type("lost\x03");
	CHECK_EQ_I64(nsigs, 1);
	CHECK_EQ_I64(sigs[0], LD_SIGINT);
	CHECK_STR(echoed, "lost^C");
	type("after\n");
	CHECK_STR(rd(100, NULL), "after\n");
	type("typed ahead\n\x1c");
	CHECK_EQ_I64(sigs[1], LD_SIGQUIT);
	CHECK(!ld_line_ready(&ld)); /* flushed, completed lines too */
	type("\x1a");
	CHECK_EQ_I64(sigs[2], LD_SIGTSTP);
	/* NOFLSH keeps the input */
	set_lflag(LD_NOFLSH, 0);
	type("kept\n\x03");
	CHECK_EQ_I64(nsigs, 4);
	CHECK_STR(rd(100, NULL), "kept\n");
	/* without ISIG they are data */
	set_lflag(0, LD_ISIG);
	type("\x03\n");
	CHECK_EQ_I64(nsigs, 4);
	CHECK_STR(rd(100, NULL), "\x03\n");
	/* VINTR set to 0 is disabled: a NUL byte is data */
	reset();
	ld.t.cc[LD_VINTR] = 0;
	ld_input(&ld, 0);
	type("\n");
	CHECK_EQ_I64(nsigs, 0);
	uint32_t used;
	uint8_t b[4];
	CHECK_EQ_U64(ld_read_prep(&ld, b, 4, &used), 2);
	CHECK(b[0] == 0 && b[1] == '\n');
}

static void non_canonical(void)
{
	reset();
	set_lflag(0, LD_ICANON | LD_ECHO);
	type("x");
	CHECK_EQ_U64(ld_avail(&ld), 1);
	CHECK_STR(echoed, "");
	type("y\rz\x7f");
	CHECK_EQ_U64(ld_avail(&ld), 5);
	CHECK_STR(rd(1, NULL), "x");
	CHECK_STR(rd(100, NULL), "y\nz\x7f"); /* ICRNL still; DEL is data */
	/* with ECHO, control characters echo as ^X and newline as a newline */
	set_lflag(LD_ECHO, 0);
	clear_echo();
	type("a\x01\r");
	CHECK_STR(echoed, "a^A\r\n");
	/* back to canonical: pending input becomes a line */
	set_lflag(LD_ICANON, 0);
	CHECK(ld_line_ready(&ld));
	CHECK_STR(rd(100, NULL), "a\x01\n");
	type("ab");
	set_lflag(0, LD_ICANON); /* the line being edited becomes readable */
	CHECK_EQ_U64(ld_avail(&ld), 2);
	set_lflag(LD_ICANON, 0);
	CHECK_STR(rd(100, NULL), "ab");
}

static void control_characters_tabs_and_utf8(void)
{
	reset();
	type("a\x01");
	CHECK_STR(echoed, "a^A");
	clear_echo();
	type("\x7f");
	CHECK_STR(echoed, "\b \b\b \b");
	CHECK_EQ_U64(ld.col, 1);
	type("b\tc"); /* column 1: b to 2, the tab to 8, c to 9 */
	CHECK_EQ_U64(ld.col, 9);
	clear_echo();
	type("\x7f\x7f");
	CHECK_STR(echoed, "\b \b\b\b\b\b\b\b");
	CHECK_EQ_U64(ld.col, 2);
	type("\n");
	CHECK_STR(rd(100, NULL), "ab\n");
	/* IUTF8: one erase takes a whole character */
	struct ld_termios t = ld.t;
	t.iflag |= LD_IUTF8;
	ld_set(&ld, &t);
	clear_echo();
	type("x\xc3\xa9");
	CHECK_EQ_U64(ld.col, 2);
	type("\x7f\n");
	CHECK_STR(rd(100, NULL), "x\n");
}

static void literal_next_reprint_and_eol(void)
{
	reset();
	type("\x16\x03\x16\x7f\n"); /* ^V^C ^V DEL: data, no signal */
	CHECK_EQ_I64(nsigs, 0);
	CHECK_STR(echoed, "^\b^C^\b^?\r\n");
	CHECK_STR(rd(100, NULL), "\x03\x7f\n");
	clear_echo();
	type("abc\x12");
	CHECK_STR(echoed, "abc^R\r\nabc");
	type("\n");
	CHECK_STR(rd(100, NULL), "abc\n");
	ld.t.cc[LD_VEOL] = ';';
	type("a;b");
	CHECK(ld_line_ready(&ld));
	CHECK_STR(rd(100, NULL), "a;");
	/* ECHONL without ECHO: only the newline shows */
	set_lflag(LD_ECHONL, LD_ECHO);
	clear_echo();
	type("secret\n");
	CHECK_STR(echoed, "\r\n");
	CHECK_STR(rd(100, NULL), "bsecret\n");
}

static void input_processing(void)
{
	reset();
	struct ld_termios t = ld.t;
	t.iflag = LD_IGNCR;
	ld_set(&ld, &t);
	type("a\rb\n");
	CHECK_STR(rd(100, NULL), "ab\n");
	t.iflag = LD_INLCR | LD_ICRNL; /* NL becomes CR, CR becomes NL */
	t.cc[LD_VEOL] = '\r';
	ld_set(&ld, &t);
	type("x\n");
	CHECK_STR(rd(100, NULL), "x\r");
	t.iflag = LD_ISTRIP | LD_IUCLC;
	ld_set(&ld, &t);
	ld_input(&ld, 'A' | 0x80);
	type("B\n");
	CHECK_STR(rd(100, NULL), "ab\n");
	/* IXON swallows ^S and ^Q; without it they are data */
	reset();
	type("\x13q\x11\n");
	CHECK_STR(rd(100, NULL), "q\n");
	t = ld.t;
	t.iflag &= ~(uint32_t)LD_IXON;
	ld_set(&ld, &t);
	type("\x13\n");
	CHECK_STR(rd(100, NULL), "\x13\n");
}

static void output_processing(void)
{
	reset();
	ld_output(&ld, (const uint8_t *)"a\nb", 3);
	CHECK_STR(echoed, "a\r\nb");
	CHECK_EQ_U64(ld.col, 1);
	struct ld_termios t = ld.t;
	t.oflag = 0; /* no OPOST: as it is */
	ld_set(&ld, &t);
	clear_echo();
	ld_output(&ld, (const uint8_t *)"a\nb\t", 4);
	CHECK_STR(echoed, "a\nb\t");
	t.oflag = LD_OPOST | LD_XTABS | LD_OLCUC | LD_OCRNL;
	ld_set(&ld, &t);
	ld.col = 0;
	clear_echo();
	ld_output(&ld, (const uint8_t *)"ab\tc\r", 5);
	CHECK_STR(echoed, "AB      C\n");
	t.oflag = LD_OPOST | LD_ONOCR;
	ld_set(&ld, &t);
	ld.col = 0;
	clear_echo();
	ld_output(&ld, (const uint8_t *)"\rx\r", 3);
	CHECK_STR(echoed, "x\r");
}

static void a_full_buffer(void)
{
	reset();
	for (int i = 0; i < 5000; i++)
		ld_input(&ld, 'x');
	CHECK(!ld_line_ready(&ld));
	ld_input(&ld, '\n'); /* the place kept for the end of the line */
	CHECK(ld_line_ready(&ld));
	uint8_t buf[LD_BUF];
	uint32_t used;
	size_t n = ld_read_prep(&ld, buf, sizeof(buf), &used);
	CHECK_EQ_U64(n, LD_BUF);
	CHECK(buf[LD_BUF - 2] == 'x' && buf[LD_BUF - 1] == '\n');
	ld_consume(&ld, used);
	set_lflag(0, LD_ICANON | LD_ECHO);
	for (int i = 0; i < 5000; i++)
		ld_input(&ld, 'y');
	CHECK_EQ_U64(ld_avail(&ld), LD_BUF);
	ld_flush_input(&ld);
	CHECK_EQ_U64(ld_avail(&ld), 0);
}

/* --- Fuzz 1: canonical editing against a model. --- */

#define MODEL_LINES 256
static struct {
	uint8_t line[1024];
	size_t len;
	uint8_t done[MODEL_LINES][1100]; /* completed lines, in order */
	size_t dlen[MODEL_LINES], dhead, dtail;
	bool deof[MODEL_LINES];
	int sigs;
	bool lnext;
} md;

/* The model terminal: one row of cells and the cursor. */
static char row[8192];
static size_t cur;
static bool row_bad;

static void term(void *ctx, const char *s, size_t n)
{
	(void)ctx;
	for (size_t i = 0; i < n; i++) {
		uint8_t c = (uint8_t)s[i];
		if (c == '\r')
			cur = 0;
		else if (c == '\n')
			memset(row, ' ', sizeof(row)); /* a new row; the column stays (a bare LF) */
		else if (c == '\b')
			cur -= cur > 0;
		else if (c == '\t')
			cur = (cur | 7) + 1;
		else if (c >= 0x20 && c != 0x7f)
			row[cur < sizeof(row) - 1 ? cur++ : cur] = (char)c;
		row_bad |= cur >= sizeof(row) - 16;
	}
}

static void model_done(bool eof)
{
	size_t i = md.dhead++ % MODEL_LINES;
	memcpy(md.done[i], md.line, md.len);
	md.dlen[i] = md.len;
	md.deof[i] = eof;
	md.len = 0;
}

/* Bytes the discipline holds for the model's state (an EOF marker takes one). */
static size_t model_bytes(void)
{
	size_t n = md.len;
	for (size_t i = md.dtail; i != md.dhead; i++)
		n += md.dlen[i % MODEL_LINES] + md.deof[i % MODEL_LINES];
	return n;
}

static bool word_char(uint8_t c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }

static void model_input(uint8_t c)
{
	if (md.lnext) {
		md.lnext = false;
		md.line[md.len++] = c;
		return;
	}
	if (c == 0x13 || c == 0x11)
		return; /* IXON */
	if (c == 3) {
		md.dtail = md.dhead;
		md.len = 0;
		md.sigs++;
		return;
	}
	if (c == '\r')
		c = '\n';
	if (c == 0x7f || c == '\b') {
		md.len -= md.len > 0;
	} else if (c == 0x15) {
		md.len = 0;
	} else if (c == 0x17) {
		bool seen = false;
		while (md.len) {
			uint8_t x = md.line[md.len - 1];
			if (word_char(x))
				seen = true;
			else if (seen)
				break;
			md.len--;
		}
	} else if (c == 0x16) {
		md.lnext = true;
	} else if (c == 0x12) {
		/* reprint: the line is unchanged */
	} else if (c == '\n') {
		md.line[md.len++] = '\n';
		model_done(false);
	} else if (c == 4) {
		model_done(true);
	} else {
		md.line[md.len++] = c;
	}
}

/* What the screen must show for the line: ^X for control characters (ECHOCTL), tabs to
 * the next stop. Checks the row from the line's start column and the cursor after it. */
static bool screen_shows_line(void)
{
	if (!md.len)
		return true;
	size_t col = ld.canon_col;
	for (size_t i = 0; i < md.len; i++) {
		uint8_t c = md.line[i];
		if (c == '\t') {
			col = (col | 7) + 1;
		} else if (c < 0x20 || c == 0x7f) {
			if (row[col] != '^' || row[col + 1] != (char)(c ^ 0100))
				return false;
			col += 2;
		} else {
			if (row[col++] != (char)c)
				return false;
		}
	}
	if (cur != col)
		return false;
	for (size_t i = col + (md.lnext ? 1 : 0); i < col + 16; i++)
		if (row[i] != ' ')
			return false;
	return true;
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint32_t rnd(uint32_t n)
{
	rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
	return (uint32_t)(rng % n);
}

static void fuzz_canonical_against_a_model(void)
{
	static const uint8_t keys[] = { 'a', 'b', 'z', '0', '_', ' ', '-', '.', 0x7f, '\b', 0x15, 0x17, '\r', '\n',
					4, 3, '\t', 1, 0x1b, 0x16, 0x12, 0x13, 0x80, 0xe9 };
	long steps = 0, reads = 0, eofs = 0;
	for (int round = 0; round < 40 && !UNIT_FAILED(); round++) {
		ld_init(&ld, term, sig, NULL);
		memset(&md, 0, sizeof(md));
		memset(row, ' ', sizeof(row));
		cur = 0;
		row_bad = false;
		nsigs = 0;
		for (int step = 0; step < 5000 && !UNIT_FAILED(); step++, steps++) {
			uint8_t c = keys[rnd(sizeof(keys))];
			if (md.len > 400 && !md.lnext)
				c = '\n';
			if ((md.dhead - md.dtail >= MODEL_LINES - 2 || model_bytes() > LD_BUF - 600) && !md.lnext)
				c = 3; /* keep the model's queue and the 4 KiB buffer from filling */
			ld_input(&ld, c);
			model_input(c);
			if (!screen_shows_line() || row_bad) {
				unit_fail(__FILE__, __LINE__, "round %d step %d: after byte %#x the screen does not show the line (len %zu)",
					  round, step, c, md.len);
				if (getenv("LDISC_DEBUG")) {
					fprintf(stderr, "line:");
					for (size_t i = 0; i < md.len; i++)
						fprintf(stderr, " %02x", md.line[i]);
					fprintf(stderr, "\ncanon_col %u cur %zu row: [%.80s]\n", ld.canon_col, cur, row);
				}
				return;
			}
			CHECK_EQ_I64(nsigs, md.sigs);
			CHECK_EQ_I64(ld_line_ready(&ld), md.dhead != md.dtail);
			if (rnd(4) == 0 && md.dhead != md.dtail) {
				/* a read of random size against the model's first line */
				size_t n = 1 + rnd(40), i = md.dtail % MODEL_LINES;
				uint8_t buf[64];
				uint32_t used;
				size_t k = ld_read_prep(&ld, buf, n, &used);
				ld_consume(&ld, used);
				size_t want = md.dlen[i] < n ? md.dlen[i] : n;
				reads++;
				if (k != want || memcmp(buf, md.done[i], k)) {
					unit_fail(__FILE__, __LINE__, "round %d step %d: read %zu gave %zu bytes, model %zu", round,
						  step, n, k, want);
					return;
				}
				eofs += k == 0;
				memmove(md.done[i], md.done[i] + k, md.dlen[i] - k);
				md.dlen[i] -= k;
				if (md.dlen[i] == 0)
					md.dtail++; /* used up: its NL was copied, or its EOF marker went with it */
			}
		}
	}
	printf("  fuzz: %ld bytes typed, %ld reads checked, %ld ends of file\n", steps, reads, eofs);
}

/* --- Fuzz 2: anything goes; the buffer's invariants must hold. --- */

static void fuzz_random_settings_and_bytes(void)
{
	static const uint32_t iflags[] = { LD_ISTRIP, LD_INLCR, LD_IGNCR, LD_ICRNL, LD_IUCLC, LD_IXON, LD_IMAXBEL, LD_IUTF8 };
	static const uint32_t oflags[] = { LD_OPOST, LD_OLCUC, LD_ONLCR, LD_OCRNL, LD_ONOCR, LD_ONLRET, LD_XTABS };
	static const uint32_t lflags[] = { LD_ISIG, LD_ICANON, LD_ECHO, LD_ECHOE, LD_ECHOK, LD_ECHONL, LD_NOFLSH,
					   LD_ECHOCTL, LD_ECHOKE, LD_IEXTEN };
	long ops = 0;
	for (int round = 0; round < 100 && !UNIT_FAILED(); round++) {
		ld_init(&ld, out, sig, NULL);
		for (int step = 0; step < 3000; step++, ops++) {
			nechoed = 0;
			uint32_t what = rnd(100);
			if (what < 3) {
				struct ld_termios t = ld.t;
				t.iflag = t.oflag = t.lflag = 0;
				for (size_t i = 0; i < sizeof(iflags) / 4; i++)
					t.iflag |= rnd(2) ? iflags[i] : 0;
				for (size_t i = 0; i < sizeof(oflags) / 4; i++)
					t.oflag |= rnd(2) ? oflags[i] : 0;
				for (size_t i = 0; i < sizeof(lflags) / 4; i++)
					t.lflag |= rnd(2) ? lflags[i] : 0;
				for (int i = 0; i < LD_NCCS; i++)
					if (rnd(3) == 0)
						t.cc[i] = (uint8_t)rnd(256);
				ld_set(&ld, &t);
			} else if (what < 70) {
				ld_input(&ld, (uint8_t)(rnd(2) ? rnd(256) : rnd(0x20)));
			} else if (what < 80) {
				uint8_t s[32];
				size_t n = rnd(sizeof(s));
				for (size_t i = 0; i < n; i++)
					s[i] = (uint8_t)rnd(256);
				ld_output(&ld, s, n);
			} else if (what < 99) {
				uint8_t buf[LD_BUF];
				uint32_t used, avail = ld_avail(&ld);
				size_t n = rnd(3) ? rnd(64) : LD_BUF;
				size_t k = ld_read_prep(&ld, buf, n, &used);
				CHECK(k <= n && used <= avail && k <= used);
				ld_consume(&ld, used);
			} else {
				ld_flush_input(&ld);
			}
			uint32_t count = ld.head - ld.tail, lines = ld.canon - ld.tail;
			if (count > LD_BUF || lines > count || ld_avail(&ld) > count || (step % 64 == 0 && ld_inq(&ld) > count)) {
				unit_fail(__FILE__, __LINE__, "round %d step %d: head %u canon %u tail %u", round, step, ld.head,
					  ld.canon, ld.tail);
				return;
			}
		}
	}
	printf("  fuzz: %ld random operations\n", ops);
}

int main(void)
{
	unit_begin(__FILE__);
	RUN(defaults_are_linuxs);
	RUN(a_line_with_echo);
	RUN(erase_kill_and_word_erase);
	RUN(end_of_file);
	RUN(signal_characters);
	RUN(non_canonical);
	RUN(control_characters_tabs_and_utf8);
	RUN(literal_next_reprint_and_eol);
	RUN(input_processing);
	RUN(output_processing);
	RUN(a_full_buffer);
	RUN(fuzz_canonical_against_a_model);
	RUN(fuzz_random_settings_and_bytes);
	return unit_end();
}
