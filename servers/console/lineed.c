#include "lineed.h"

#define CTRL(c) ((c) & 0x1f)
#define ESC 0x1b

/* Escape-sequence states: after ESC, inside a CSI sequence (ESC [ params final), or before
 * the one byte that ends an SS3 sequence (ESC O x, what some terminals send for arrows). */
enum { ESC_NONE, ESC_START, ESC_CSI, ESC_SS3 };

void le_init(struct lineed *e, void (*echo)(void *ctx, const char *s, size_t n), void *ctx)
{
	e->len = 0;
	e->buf[0] = 0;
	e->esc = ESC_NONE;
	e->after_cr = false;
	e->discarding = false;
	e->echo = echo;
	e->ctx = ctx;
}

static void say(struct lineed *e, const char *s, size_t n)
{
	if (e->echo)
		e->echo(e->ctx, s, n);
}

static void erase(struct lineed *e, size_t n)
{
	for (; n && e->len; n--, e->len--)
		say(e, "\b \b", 3);
}

/* Swallows the bytes of an escape sequence; true if c was one of them. A control byte
 * (Enter, Ctrl-C...) ends a sequence and counts as itself, so a stray ESC never eats a key
 * that matters. */
static bool in_escape(struct lineed *e, uint8_t c)
{
	if (c == ESC) {
		e->esc = ESC_START;
		return true;
	}
	if (e->esc == ESC_NONE || c < 0x20) {
		e->esc = ESC_NONE;
		return false;
	}
	if (e->esc == ESC_START)
		e->esc = c == '[' ? ESC_CSI : c == 'O' ? ESC_SS3 : ESC_NONE;
	else if (e->esc == ESC_SS3 || c > 0x3f)
		e->esc = ESC_NONE; /* CSI: parameters are 0x20-0x3f, the final byte ends it */
	return true;
}

static enum le_event enter(struct lineed *e)
{
	if (e->discarding) {
		/* The refusal already ended the screen line. */
		e->discarding = false;
		return LE_CANCEL;
	}
	say(e, "\n", 1);
	e->buf[e->len] = 0;
	e->len = 0;
	return LE_LINE;
}

enum le_event le_feed(struct lineed *e, uint8_t c)
{
	bool lf_of_crlf = c == '\n' && e->after_cr;
	e->after_cr = c == '\r';
	if (lf_of_crlf || in_escape(e, c))
		return LE_NONE;
	if (c == '\r' || c == '\n')
		return enter(e);
	if (c == CTRL('C')) {
		say(e, "^C\n", 3);
		e->len = 0;
		e->discarding = false;
		return LE_CANCEL;
	}
	if (e->discarding)
		return LE_NONE;
	if (c == '\b' || c == 0x7f) {
		erase(e, 1);
	} else if (c == CTRL('U')) {
		erase(e, e->len);
	} else if (c >= 0x20 && c < 0x7f) {
		if (e->len == LE_MAX) {
			e->len = 0;
			e->discarding = true;
			return LE_TOOLONG;
		}
		e->buf[e->len++] = (char)c;
		say(e, (const char *)&c, 1);
	}
	/* Anything else (other control bytes, bytes >= 0x80) is dropped. */
	return LE_NONE;
}
