/* The console's line editor (servers/console/lineed.c): keys, echo, escape sequences, the
 * length limit, and a fuzz that replays the echo on a model terminal and checks it always
 * shows exactly the line being edited. */
#include "unit.h"
#include "lineed.h"

/* A model terminal line: what the echo has drawn, and the cursor. */
static char screen[LE_MAX + 64];
static size_t cursor, echoed;
static bool screen_bad;

static void term(void *ctx, const char *s, size_t n)
{
	(void)ctx;
	for (; n--; s++) {
		echoed++;
		if (*s == '\n') {
			cursor = 0;
			memset(screen, 0, sizeof(screen));
		} else if (*s == '\b') {
			screen_bad |= cursor == 0; /* never backs over the prompt */
			cursor -= cursor > 0;
		} else if (cursor < sizeof(screen) - 1) {
			screen[cursor++] = *s;
		} else {
			screen_bad = true;
		}
	}
}

static struct lineed ed;

static void reset(void)
{
	le_init(&ed, term, NULL);
	memset(screen, 0, sizeof(screen));
	cursor = echoed = 0;
	screen_bad = false;
}

/* Feeds a string; returns the last event other than LE_NONE (LE_NONE if none). */
static enum le_event type(const char *s)
{
	enum le_event last = LE_NONE;
	for (; *s; s++) {
		enum le_event ev = le_feed(&ed, (uint8_t)*s);
		if (ev != LE_NONE)
			last = ev;
	}
	return last;
}

/* The screen shows exactly the characters in the buffer, cursor at their end. */
static bool screen_matches(void)
{
	return !screen_bad && cursor == ed.len && !memcmp(screen, ed.buf, ed.len);
}

static void enter_variants(void)
{
	reset();
	CHECK_EQ_U64(type("help"), LE_NONE);
	CHECK(screen_matches() && !strncmp(screen, "help", 4));
	CHECK_EQ_U64(type("\r"), LE_LINE);
	CHECK_STR(ed.buf, "help");
	/* CRLF is one Enter; LF alone and CR alone are one each. */
	CHECK_EQ_U64(type("\n"), LE_NONE);
	CHECK_EQ_U64(type("a\n"), LE_LINE);
	CHECK_STR(ed.buf, "a");
	CHECK_EQ_U64(type("\n"), LE_LINE);
	CHECK_STR(ed.buf, "");
	CHECK_EQ_U64(type("\r"), LE_LINE);
	CHECK_EQ_U64(type("\r"), LE_LINE); /* CR CR: two */
	CHECK_EQ_U64(type("b\r\n"), LE_LINE);
	CHECK_STR(ed.buf, "b");
	CHECK_EQ_U64(type("c"), LE_NONE);
	CHECK(screen_matches());
}

static void erasing(void)
{
	reset();
	type("hepl\x7f\x7flp");
	CHECK(screen_matches());
	CHECK_EQ_U64(type("\r"), LE_LINE);
	CHECK_STR(ed.buf, "help");
	type("ab\b");
	CHECK(screen_matches() && ed.len == 1);
	size_t before = echoed;
	type("\b\b\x7f"); /* more erases than characters: nothing drawn over the prompt */
	CHECK(screen_matches() && ed.len == 0);
	CHECK_EQ_U64(echoed - before, 3);
	type("service list\x15");
	CHECK(screen_matches() && ed.len == 0);
	type("help\r");
	CHECK_STR(ed.buf, "help");
}

static void cancel(void)
{
	reset();
	CHECK_EQ_U64(type("service kill x\x03"), LE_CANCEL);
	CHECK(ed.len == 0 && cursor == 0);
	CHECK_EQ_U64(type("help\r"), LE_LINE);
	CHECK_STR(ed.buf, "help");
}

/* Arrow keys and the like are dropped whole; control bytes end a broken sequence and count. */
static void escapes(void)
{
	reset();
	type("a\x1b[A\x1b[1;5Cb\x1bOxc\x1bxd\x1b\x1b[De");
	CHECK(screen_matches());
	CHECK_EQ_U64(type("\r"), LE_LINE);
	CHECK_STR(ed.buf, "abcde");
	CHECK_EQ_U64(type("f\x1b\r"), LE_LINE);
	CHECK_STR(ed.buf, "f");
	CHECK_EQ_U64(type("g\x1b[12\x03"), LE_CANCEL);
	/* Other control bytes and non-ASCII are ignored, not echoed. */
	type("\t\x01\x04\x7e\x80\xff\xc3\xa9h");
	CHECK(screen_matches());
	CHECK_EQ_U64(type("\r"), LE_LINE);
	CHECK_STR(ed.buf, "~h");
}

static void too_long(void)
{
	reset();
	char line[LE_MAX + 1];
	memset(line, 'x', LE_MAX);
	line[LE_MAX] = 0;
	CHECK_EQ_U64(type(line), LE_NONE);
	CHECK(screen_matches());
	CHECK_EQ_U64(type("\r"), LE_LINE);
	CHECK_EQ_U64(strlen(ed.buf), LE_MAX); /* exactly the limit is fine */
	type(line);
	CHECK_EQ_U64(le_feed(&ed, 'y'), LE_TOOLONG);
	/* The rest up to Enter is dropped, even what would be a command. */
	size_t before = echoed;
	CHECK_EQ_U64(type("\x7f\x15help"), LE_NONE);
	CHECK_EQ_U64(echoed, before);
	CHECK_EQ_U64(type("\r"), LE_CANCEL);
	CHECK_EQ_U64(type("\n"), LE_NONE); /* its CRLF */
	CHECK_EQ_U64(type("help\r"), LE_LINE);
	CHECK_STR(ed.buf, "help");
	/* Ctrl-C also ends a refused line. */
	type(line);
	CHECK_EQ_U64(type("zz\x03"), LE_CANCEL);
	CHECK_EQ_U64(type("ok\r"), LE_LINE);
	CHECK_STR(ed.buf, "ok");
}

/* One fuzzed byte: the buffer never overflows, a line is printable and at most LE_MAX
 * long, and the screen always shows the line being edited. Returns the event. */
static enum le_event fuzz_byte(uint8_t c)
{
	enum le_event ev = le_feed(&ed, c);
	if (ed.len > LE_MAX)
		unit_fail(__FILE__, __LINE__, "len %zu", ed.len);
	if (ev == LE_LINE) {
		size_t n = strnlen(ed.buf, sizeof(ed.buf));
		for (size_t k = 0; k < n; k++)
			if (ed.buf[k] < 0x20 || ed.buf[k] > 0x7e)
				unit_fail(__FILE__, __LINE__, "unprintable byte %#x in a line", ed.buf[k]);
		if (n > LE_MAX)
			unit_fail(__FILE__, __LINE__, "line of %zu", n);
	}
	if (ev == LE_TOOLONG) { /* the console ends the screen line with its message */
		memset(screen, 0, sizeof(screen));
		cursor = 0;
	}
	if (!ed.discarding && !screen_matches())
		unit_fail(__FILE__, __LINE__, "byte %#x: screen and line differ", c);
	return ev;
}

/* Random bytes, biased towards the interesting ones, and now and then a long run of letters
 * to reach the limit. */
static void fuzz(void)
{
	static const uint8_t keys[] = { '\r', '\n', '\b', 0x7f, 0x15, 0x03, 0x1b, '[', 'O', 'a', ' ', '1', ';', 0x80 };
	uint64_t x = 0x9e3779b97f4a7c15ull;
	reset();
	int lines = 0, refused = 0;
	for (int i = 0; i < 2000000 && !UNIT_FAILED(); i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		uint8_t c = (x >> 8) & 1 ? keys[(x >> 16) % sizeof(keys)] : (uint8_t)(x >> 24);
		for (int k = 0; (x >> 40) % 1000 == 0 && k < LE_MAX + 5; k++)
			refused += fuzz_byte('z') == LE_TOOLONG;
		lines += fuzz_byte(c) == LE_LINE;
	}
	CHECK(lines > 1000 && refused > 100);
}

int main(void)
{
	unit_begin(__FILE__);
	RUN(enter_variants);
	RUN(erasing);
	RUN(cancel);
	RUN(escapes);
	RUN(too_long);
	RUN(fuzz);
	return unit_end();
}
