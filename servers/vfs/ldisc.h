/* The terminal line discipline (Linux's N_TTY, the parts a serial console needs): input
 * processing, canonical line editing with echo, signal characters, and output processing.
 * Pure C, no I/O and no libc: bytes come in through ld_input, a program's reads take them
 * out with ld_read_prep/ld_consume, and everything meant for the terminal's screen (echo
 * and processed program output) leaves through the `out` callback; signal characters call
 * `sig`. vfs's glue (tty.c) decides about blocking, VMIN/VTIME timing and process groups.
 * Host-tested in tests/unit/test_ldisc.c. Flag and c_cc values are Linux's (asm-generic
 * termbits.h), so a program's struct termios is copied in and out unchanged. */
#pragma once
#include <stdbool.h>
#include "lx_abi.h"
#include <stddef.h>
#include <stdint.h>

#define LD_BUF 4096 /* bytes of input held at most (a power of two); beyond it input is dropped */

/* Linux's kernel struct termios (LX_TCGETS/LX_TCSETS): 36 bytes. */
#define LD_NCCS 19
struct ld_termios {
	uint32_t iflag, oflag, cflag, lflag;
	uint8_t line;
	uint8_t cc[LD_NCCS];
};
_Static_assert(sizeof(struct ld_termios) == 36, "Linux's struct termios");

/* c_cc indices */
enum { LD_VINTR, LD_VQUIT, LD_VERASE, LD_VKILL, LD_VEOF, LD_VTIME, LD_VMIN, LD_VSWTC, LD_VSTART,
       LD_VSTOP, LD_VSUSP, LD_VEOL, LD_VREPRINT, LD_VDISCARD, LD_VWERASE, LD_VLNEXT, LD_VEOL2 };
/* c_iflag */
#define LD_ISTRIP 0000040
#define LD_INLCR 0000100
#define LD_IGNCR 0000200
#define LD_ICRNL 0000400
#define LD_IUCLC 0001000
#define LD_IXON 0002000
#define LD_IMAXBEL 0020000
#define LD_IUTF8 0040000
/* c_oflag */
#define LD_OPOST 0000001
#define LD_OLCUC 0000002
#define LD_ONLCR 0000004
#define LD_OCRNL 0000010
#define LD_ONOCR 0000020
#define LD_ONLRET 0000040
#define LD_TABDLY 0014000
#define LD_XTABS 0014000
/* c_cflag */
#define LD_B115200 0010002
#define LD_CS8 0000060
#define LD_CREAD 0000200
#define LD_CLOCAL 0004000
/* c_lflag */
#define LD_ISIG 0000001
#define LD_ICANON 0000002
#define LD_ECHO 0000010
#define LD_ECHOE 0000020
#define LD_ECHOK 0000040
#define LD_ECHONL 0000100
#define LD_NOFLSH 0000200
#define LD_ECHOCTL 0001000
#define LD_ECHOKE 0004000
#define LD_IEXTEN 0100000

/* Signals the discipline raises (Linux numbers). */
#define LD_SIGINT 2
#define LD_SIGQUIT 3
#define LD_SIGTSTP 20

struct ldisc {
	struct ld_termios t;
	uint8_t buf[LD_BUF];
	uint8_t fl[LD_BUF];     /* per byte: LDF_* below */
	/* Free-running indices, masked on use: [tail, canon) holds completed lines (canonical
	 * mode), [canon, head) the line being edited; in non-canonical mode all of [tail, head)
	 * is readable. */
	uint32_t tail, canon, head;
	uint32_t col;           /* the terminal's cursor column, as our output left it */
	uint32_t canon_col;     /* the column the line being edited starts at (for erasing tabs) */
	bool lnext;             /* the last byte was VLNEXT: take the next one literally */
	void (*out)(void *ctx, const char *s, size_t n);
	void (*sig)(void *ctx, int sig);
	void *ctx;
};
#define LDF_DELIM 1 /* a line ends after this byte */
#define LDF_EOF 2   /* a VEOF marker: ends the line, never given to the reader */

/* Linux's defaults (tty_std_termios), at 115200 baud. */
void ld_init(struct ldisc *l, void (*out)(void *ctx, const char *s, size_t n), void (*sig)(void *ctx, int sig),
	     void *ctx);
/* New settings (LX_TCSETS): switching canonical mode on makes pending input one line, as Linux
 * does; switching it off makes everything readable. */
void ld_set(struct ldisc *l, const struct ld_termios *t);
/* One byte typed on the terminal. */
void ld_input(struct ldisc *l, uint8_t c);
/* A program's output, processed per c_oflag (OPOST, ONLCR, ...), to `out`. */
void ld_output(struct ldisc *l, const uint8_t *s, size_t n);
/* Drops all pending input (LX_TCFLSH, a signal character without NOFLSH). */
void ld_flush_input(struct ldisc *l);

/* Bytes in the buffer that are not part of the line being edited: in non-canonical mode all
 * of them; in canonical mode those of completed lines, EOF markers included. */
uint32_t ld_avail(const struct ldisc *l);
/* Canonical mode: whether a completed line (maybe empty: end of file) is waiting. */
bool ld_line_ready(const struct ldisc *l);
/* What LX_FIONREAD answers: readable bytes, EOF markers not counted. */
uint32_t ld_inq(const struct ldisc *l);
/* Copies what one read(n) returns now into dst (at most n bytes): in canonical mode up to and
 * including the end of the first line (an EOF marker is not copied), else up to n of the
 * available bytes. *used gets the number of buffer bytes to consume with ld_consume once
 * the caller has delivered them (so a failed copy to the program loses nothing). Returns the
 * bytes copied; 0 with *used > 0 is end of file. */
size_t ld_read_prep(const struct ldisc *l, uint8_t *dst, size_t n, uint32_t *used);
void ld_consume(struct ldisc *l, uint32_t used);
