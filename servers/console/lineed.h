/* The console's line editor: turns the bytes typed on a serial terminal into lines, and says
 * what to echo. Pure C with no libc, so the host unit tests run it too
 * (tests/unit/test_lineed.c). Keys: printable ASCII is echoed and kept; backspace (0x08) and
 * DEL (0x7f) erase one character; Ctrl-U erases the line; Ctrl-C abandons it; CR, LF or CRLF
 * end it. Escape sequences (arrow keys and the like) and other control bytes are dropped. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LE_MAX 200 /* characters in a line; one more is refused */

enum le_event {
	LE_NONE,    /* nothing to do yet */
	LE_LINE,    /* Enter: the line (maybe empty) is in buf, valid until the next le_feed */
	LE_CANCEL,  /* the line was abandoned (Ctrl-C, or the end of a refused line): new prompt */
	LE_TOOLONG, /* the line went over LE_MAX: it is refused, and the rest up to Enter dropped */
};

struct lineed {
	char buf[LE_MAX + 1];
	size_t len;
	uint8_t esc;       /* where we are in an escape sequence (lineed.c) */
	bool after_cr;     /* the last byte was CR, so an LF right after it is the same Enter */
	bool discarding;   /* the line was refused: drop everything up to Enter */
	/* Where the echo goes. */
	void (*echo)(void *ctx, const char *s, size_t n);
	void *ctx;
};

void le_init(struct lineed *e, void (*echo)(void *ctx, const char *s, size_t n), void *ctx);
enum le_event le_feed(struct lineed *e, uint8_t c);
