/* lxtty: the terminal on the serial console, from a Linux program's side (tests/system/
 * test_tty.py types into the serial port when it sees each "LXTTY READY" line).
 *   lxtty        termios defaults, window size, ioctls, then canonical reads of edited
 *                lines, end of file, FIONREAD, raw reads (VMIN/VTIME), signal characters
 * Prints "LXTTY PASS|FAIL name" per check, "LXTTY GOT ..." for what reads returned, and
 * "LXTTY DONE N failures" at the end. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

static int failures;

static void check(const char *name, int ok)
{
	printf("LXTTY %s %s\n", ok ? "PASS" : "FAIL", name);
	fflush(stdout);
	failures += !ok;
}

static void ready(const char *what)
{
	printf("LXTTY READY %s\n", what);
	fflush(stdout);
}

/* What a read returned, bytes as hex (so a typed byte never shows up here as itself). */
static void got(const char *what, const char *buf, ssize_t n)
{
	printf("LXTTY GOT %s %zd:", what, n);
	for (ssize_t i = 0; i < n; i++)
		printf(" %02x", (unsigned char)buf[i]);
	printf("\n");
	fflush(stdout);
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void nap(long ms)
{
	struct timespec ts = { ms / 1000, ms % 1000 * 1000000 };
	nanosleep(&ts, NULL);
}

/* One canonical read; checks it returned exactly want. */
static void read_line(const char *name, const char *want)
{
	char buf[256];
	ready(name);
	ssize_t n = read(0, buf, sizeof(buf));
	got(name, buf, n);
	check(name, n == (ssize_t)strlen(want) && !memcmp(buf, want, (size_t)n));
}

static void settings(void)
{
	struct termios t;
	check("isatty", isatty(0) && isatty(1) && isatty(2));
	check("tcgetattr", tcgetattr(0, &t) == 0);
	tcflag_t lf = ISIG | ICANON | ECHO | ECHOE | ECHOK | ECHOCTL | ECHOKE | IEXTEN;
	check("termios_defaults", (t.c_lflag & lf) == lf && (t.c_iflag & ICRNL) && (t.c_oflag & (OPOST | ONLCR)) == (OPOST | ONLCR) &&
		  t.c_cc[VINTR] == 3 && t.c_cc[VQUIT] == 034 && t.c_cc[VERASE] == 0177 && t.c_cc[VKILL] == 025 &&
		  t.c_cc[VEOF] == 4 && t.c_cc[VSUSP] == 032 && t.c_cc[VWERASE] == 027 && t.c_cc[VMIN] == 1 &&
		  t.c_cc[VTIME] == 0 && cfgetospeed(&t) == B115200);
	struct termios u = t;
	u.c_cc[VKILL] = 'K';
	struct termios back;
	check("tcsetattr", tcsetattr(0, TCSANOW, &u) == 0 && tcgetattr(1, &back) == 0 && back.c_cc[VKILL] == 'K');
	tcsetattr(0, TCSANOW, &t);

	struct winsize w = { 0 }, big = { .ws_row = 40, .ws_col = 100 };
	check("winsize_default", ioctl(0, TIOCGWINSZ, &w) == 0 && w.ws_row == 24 && w.ws_col == 80);
	check("winsize_set", ioctl(0, TIOCSWINSZ, &big) == 0 && ioctl(2, TIOCGWINSZ, &w) == 0 && w.ws_row == 40 && w.ws_col == 100);
	w.ws_row = 24, w.ws_col = 80;
	ioctl(0, TIOCSWINSZ, &w);

	int n = -1;
	check("fionread_empty", ioctl(0, FIONREAD, &n) == 0 && n == 0);
	check("tiocoutq", ioctl(1, TIOCOUTQ, &n) == 0 && n == 0);
	check("tcflush_tcflow_tcdrain", tcflush(0, TCIFLUSH) == 0 && tcflow(0, TCOON) == 0 && tcdrain(1) == 0);
	check("tcflush_bad", tcflush(0, 7) == -1 && errno == EINVAL);
	errno = 0;
	check("no_foreground_group_yet", tcgetpgrp(0) == -1 && errno == ENOTTY);
	check("unknown_ioctl", ioctl(0, 0x54ff, &n) == -1 && errno == ENOTTY);
	int null = open("/dev/null", O_RDWR);
	check("devnull_not_a_tty", null >= 0 && !isatty(null) && errno == ENOTTY);
	close(null);
	check("tcgetattr_efault", ioctl(0, TCGETS, (void *)8) == -1 && errno == EFAULT);

	/* O_NONBLOCK: nothing typed, so EAGAIN */
	char c;
	int fl = fcntl(0, F_GETFL);
	fcntl(0, F_SETFL, fl | O_NONBLOCK);
	check("nonblock_eagain", read(0, &c, 1) == -1 && errno == EAGAIN);
	fcntl(0, F_SETFL, fl);
	int on = 1;
	check("fionbio", ioctl(0, FIONBIO, &on) == 0 && (fcntl(0, F_GETFL) & O_NONBLOCK) && read(0, &c, 1) == -1 &&
		       errno == EAGAIN);
	on = 0;
	ioctl(0, FIONBIO, &on);
}

/* The console attaches to the terminal a moment after boot; until then reads see end of
 * file, after it a read with O_NONBLOCK finds nothing typed yet (EAGAIN). */
static void wait_for_the_keyboard(void)
{
	char c;
	int fl = fcntl(0, F_GETFL);
	fcntl(0, F_SETFL, fl | O_NONBLOCK);
	ssize_t n = 0;
	for (double t0 = now(); n == 0 && now() - t0 < 120; nap(50))
		n = read(0, &c, 1);
	fcntl(0, F_SETFL, fl);
	check("keyboard", n == -1 && errno == EAGAIN);
}

/* The test types "sync" when it sees this. */
static void sync_with_the_test(void)
{
	char buf[64];
	ready("sync");
	ssize_t n = read(0, buf, sizeof(buf));
	got("sync", buf, n);
	check("sync", n == 5 && !memcmp(buf, "sync\n", 5));
}

static void canonical(void)
{
	read_line("edit", "hello world\n");  /* typed: hellx DEL o wrld BS BS BS orld CR */
	read_line("kill", "kept\n");         /* garbage ^U kept CR */
	read_line("werase", "one three\n");  /* one two ^W three CR */
	read_line("literal", "a\003b\n");    /* a ^V ^C b CR */

	char buf[64];
	ready("eof"); /* partial ^D ^D */
	ssize_t n = read(0, buf, sizeof(buf));
	got("eof1", buf, n);
	check("eof_pushes_the_line", n == 7 && !memcmp(buf, "partial", 7));
	n = read(0, buf, sizeof(buf));
	check("eof_on_empty_line", n == 0);

	ready("fionread"); /* abc CR */
	int k = 0;
	for (double t0 = now(); k == 0 && now() - t0 < 60; nap(20))
		ioctl(0, FIONREAD, &k);
	check("fionread", k == 4);
	n = read(0, buf, 2);
	check("short_read", n == 2 && !memcmp(buf, "ab", 2));
	n = read(0, buf, sizeof(buf));
	check("rest_of_line", n == 2 && !memcmp(buf, "c\n", 2));
}

static void raw(void)
{
	struct termios t, r;
	tcgetattr(0, &t);
	r = t;
	r.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
	r.c_cc[VMIN] = 1;
	r.c_cc[VTIME] = 0;
	tcsetattr(0, TCSAFLUSH, &r);
	ready("raw"); /* xyz */
	char buf[8], all[8];
	int ones = 0;
	for (int i = 0; i < 3; i++) {
		ssize_t n = read(0, buf, 1);
		ones += n == 1;
		all[i] = buf[0];
	}
	got("raw", all, 3);
	check("raw_bytes", ones == 3 && !memcmp(all, "xyz", 3));

	r.c_cc[VMIN] = 2; /* a read waits for two bytes */
	tcsetattr(0, TCSANOW, &r);
	ready("vmin2"); /* pq */
	ssize_t n = read(0, buf, sizeof(buf));
	got("vmin2", buf, n);
	check("vmin2", n == 2 && !memcmp(buf, "pq", 2));

	r.c_cc[VMIN] = 5; /* five bytes, or 0.3 s after the last one */
	r.c_cc[VTIME] = 3;
	tcsetattr(0, TCSANOW, &r);
	ready("interbyte"); /* ab */
	n = read(0, buf, sizeof(buf));
	got("interbyte", buf, n);
	check("interbyte_timer", n == 2 && !memcmp(buf, "ab", 2));

	r.c_cc[VMIN] = 0;
	r.c_cc[VTIME] = 3; /* 0.3 s for the first byte */
	tcsetattr(0, TCSANOW, &r);
	double t0 = now();
	n = read(0, buf, sizeof(buf));
	double dt = now() - t0;
	printf("LXTTY vtime read returned %zd after %.2f s\n", n, dt);
	check("vtime_times_out", n == 0 && dt >= 0.25 && dt < 10);

	r.c_cc[VTIME] = 0; /* VMIN 0, VTIME 0: a poll */
	tcsetattr(0, TCSANOW, &r);
	t0 = now();
	n = read(0, buf, sizeof(buf));
	check("vmin0_vtime0_polls", n == 0 && now() - t0 < 10); /* (the bound only catches a hang) */
	tcsetattr(0, TCSAFLUSH, &t);
}

static void signals(void)
{
	pid_t me = getpid();
	pid_t sid = 0;
	check("tiocsctty", ioctl(0, TIOCSCTTY, 0) == 0);
	check("tcsetpgrp", tcsetpgrp(0, me) == 0 && tcgetpgrp(0) == me);
	check("tiocgsid", ioctl(0, TIOCGSID, &sid) == 0 && sid == me);
	check("tcsetpgrp_bad", tcsetpgrp(0, -5) == -1 && errno == EINVAL);
	printf("LXTTY foreground group %d\n", (int)me);
	/* lost ^C, then ^\ and ^Z, then after CR: the signals flush what was typed before them
	 * (pm has no signals yet, so this read is not interrupted) */
	read_line("signals", "after\n");
	/* the console is killed and restarted meanwhile: the new one attaches again */
	read_line("restart", "again\n");
}

int main(void)
{
	wait_for_the_keyboard();
	settings();
	sync_with_the_test();
	canonical();
	raw();
	signals();
	printf("LXTTY DONE %d failures\n", failures);
	return failures != 0;
}
