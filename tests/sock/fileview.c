/* fileview: pread of regular files answered by lib/sock from vfs's file views
 * (lib/posix/fview.h, lib/sock/file.c), in an unmodified program linked with the library by
 * ld --wrap, as lighttpd is. Every pread's bytes are compared with what was written:
 * preads past the second of a descriptor come from the view with no Linux call (the
 * kernel's count of this process's calls); a write or a truncate through another
 * descriptor, or by a forked child, is seen by the very next pread; the end of the file,
 * offsets past it, a negative offset (EINVAL), a NULL buffer (EFAULT), a write-only
 * descriptor (EBADF), a directory (EISDIR), a pipe (ESPIPE); dup2 of another file onto a
 * descriptor with a view reads the other file; a forked child reads through the inherited
 * view; 40 files read in turn (more than vfs's 32 views) stay right as views are taken
 * back; a 5 MiB file (no view) goes to vfs; close and reopen. Then it runs itself with
 * AXOLOTL_SOCK=0: the same checks pass through vfs and no pread comes from a view.
 * Prints FILEVIEW PASS|FAIL NAME lines (off_ prefixed in the second run) and
 * "fileview: N passed, N failed" at the end. */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include "sock.h"
#include "socktest.h"

#define KC_BASE 0x0a000000L
#define KC_INFO 16
#define KI_LINUX_CALLS 9

static bool lib;
static const char *pre = "";
static long linux_calls(void) { return syscall(KC_BASE | KC_INFO, KI_LINUX_CALLS, 0); }

static void ck(const char *name, int ok)
{
	char n[128];
	snprintf(n, sizeof(n), "%s%s", pre, name);
	check(n, ok);
}

static void fill(unsigned char *b, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		b[i] = (unsigned char)((i * 131 + seed * 7 + (i >> 8)) & 0xff);
}

static int make_file(const char *path, const unsigned char *b, size_t n)
{
	int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0644);
	if (fd < 0)
		return -1;
	size_t done = 0;
	while (done < n) {
		ssize_t w = write(fd, b + done, n - done);
		if (w <= 0)
			break;
		done += (size_t)w;
	}
	close(fd);
	return done == n ? 0 : -1;
}

/* pread of [off, off+n) of fd equals want (the file's bytes, size bytes of them). */
static bool reads_as(int fd, const unsigned char *want, size_t size, size_t off, size_t n)
{
	static unsigned char got[70000];
	memset(got, 0xee, n);
	ssize_t r = pread(fd, got, n, (off_t)off);
	size_t expect = off >= size ? 0 : (size - off < n ? size - off : n);
	return r == (ssize_t)expect && !memcmp(got, want + off, expect);
}

#define SIZE 10000
static unsigned char a[SIZE], b[SIZE], big_buf[70000];

static void basic_checks(void)
{
	fill(a, SIZE, 1);
	ck("file_made", make_file("/tmp/fv_a", a, SIZE) == 0);
	int fd = open("/tmp/fv_a", O_RDONLY);
	ck("file_opened", fd >= 0);
	bool ok = true;
	for (int i = 0; i < 4; i++) /* the first goes to vfs, the second asks for a view */
		ok &= reads_as(fd, a, SIZE, (size_t)i * 1000, 3000);
	ck("preads_right", ok);
	uint64_t u0 = axfile_counts.user;
	long k0 = linux_calls();
	ok = true;
	for (int i = 0; i < 100; i++)
		ok &= reads_as(fd, a, SIZE, (size_t)(i * 97) % SIZE, 512);
	long k1 = linux_calls();
	ck("preads_right_again", ok);
	if (lib)
		ck("preads_without_linux_calls", k1 == k0 && axfile_counts.user - u0 == 100);
	else
		ck("preads_are_linux_calls", k1 - k0 >= 100 && axfile_counts.user == 0);
	ck("pread_at_end_short", reads_as(fd, a, SIZE, SIZE - 10, 100));
	ck("pread_past_end_zero", reads_as(fd, a, SIZE, SIZE + 5000, 100) && reads_as(fd, a, SIZE, SIZE, 1));
	ck("pread_zero_bytes", pread(fd, big_buf, 0, 10) == 0);
	errno = 0;
	ck("pread_negative_offset_einval", pread(fd, big_buf, 10, -1) == -1 && errno == EINVAL);
	errno = 0;
	ck("pread_null_buffer_efault", pread(fd, NULL, 10, 0) == -1 && errno == EFAULT);

	/* another descriptor writes: the next pread sees it */
	int w = open("/tmp/fv_a", O_WRONLY);
	memcpy(a + 100, "XYZ", 3);
	ck("write_through_other_fd", pwrite(w, "XYZ", 3, 100) == 3);
	ck("pread_sees_write_at_once", reads_as(fd, a, SIZE, 90, 20));
	ok = true;
	for (int i = 0; i < 10; i++) /* and views come back */
		ok &= reads_as(fd, a, SIZE, (size_t)i * 900, 1000);
	ck("preads_right_after_write", ok);
	ck("truncate_other_fd", ftruncate(w, 50) == 0);
	ck("pread_sees_truncate", reads_as(fd, a, 50, 0, 100) && reads_as(fd, a, 50, 60, 10));
	ok = true;
	for (int i = 0; i < 6; i++)
		ok &= reads_as(fd, a, 50, 0, 100);
	ck("preads_right_after_truncate", ok);
	fill(a, SIZE, 2);
	ok = pwrite(w, a, SIZE, 0) == SIZE; /* grows again */
	for (int i = 0; i < 6; i++)
		ok &= reads_as(fd, a, SIZE, (size_t)i * 1500, 2000);
	ck("pread_sees_growth", ok);

	/* a forked child reads through the inherited view, then writes: we see it */
	fflush(stdout);
	pid_t kid = fork();
	if (kid == 0) {
		bool good = true;
		for (int i = 0; i < 5; i++)
			good &= reads_as(fd, a, SIZE, (size_t)i * 100, 4000);
		memcpy(a + 5000, "child", 5);
		good &= pwrite(w, "child", 5, 5000) == 5;
		_exit(good ? 0 : 1);
	}
	int st = -1;
	waitpid(kid, &st, 0);
	ck("child_reads_inherited_view", WIFEXITED(st) && WEXITSTATUS(st) == 0);
	memcpy(a + 5000, "child", 5);
	ck("parent_sees_child_write", reads_as(fd, a, SIZE, 4990, 30));
	close(w);

	/* dup2 of another file onto fd: fd reads the other file */
	fill(b, SIZE, 3);
	ck("second_file_made", make_file("/tmp/fv_b", b, SIZE) == 0);
	int fb = open("/tmp/fv_b", O_RDONLY);
	ok = true;
	for (int i = 0; i < 4; i++)
		ok &= reads_as(fd, a, SIZE, 0, 100); /* fd has a view */
	ok &= dup2(fb, fd) == fd;
	for (int i = 0; i < 4; i++)
		ok &= reads_as(fd, b, SIZE, (size_t)i * 10, 100);
	ck("dup2_onto_fd_reads_the_other_file", ok);
	close(fb);
	close(fd);
	/* closed and opened again (perhaps the same number): the right file */
	fd = open("/tmp/fv_a", O_RDONLY);
	ok = true;
	for (int i = 0; i < 4; i++)
		ok &= reads_as(fd, a, SIZE, (size_t)i * 10, 100);
	ck("reopened_reads_right", ok);
	close(fd);
	unlink("/tmp/fv_b");
}

static void error_checks(void)
{
	int w = open("/tmp/fv_a", O_WRONLY);
	bool ok = w >= 0;
	for (int i = 0; i < 3; i++) {
		errno = 0;
		ok &= pread(w, big_buf, 10, 0) == -1 && errno == EBADF;
	}
	ck("write_only_ebadf", ok);
	close(w);
	int d = open("/tmp", O_RDONLY | O_DIRECTORY);
	ok = d >= 0;
	for (int i = 0; i < 3; i++) {
		errno = 0;
		ok &= pread(d, big_buf, 10, 0) == -1 && errno == EISDIR;
	}
	ck("directory_eisdir", ok);
	close(d);
	int p[2];
	ok = pipe(p) == 0 && write(p[1], "x", 1) == 1;
	for (int i = 0; i < 3; i++) {
		errno = 0;
		ok &= pread(p[0], big_buf, 1, 0) == -1 && errno == ESPIPE;
	}
	ck("pipe_espipe", ok);
	close(p[0]);
	close(p[1]);
	errno = 0;
	ck("closed_fd_ebadf", pread(900, big_buf, 1, 0) == -1 && errno == EBADF);
}

/* More files than vfs keeps views of, read round-robin: views taken back under us. */
static void many_checks(void)
{
	enum { FILES = 40, LEN = 3000 };
	static unsigned char data[FILES][LEN];
	int fds[FILES];
	bool ok = true;
	char path[64];
	for (int i = 0; i < FILES; i++) {
		fill(data[i], LEN, 10 + (unsigned)i);
		snprintf(path, sizeof(path), "/tmp/fv_many%d", i);
		ok &= make_file(path, data[i], LEN) == 0;
		fds[i] = open(path, O_RDONLY);
		ok &= fds[i] >= 0;
	}
	for (int round = 0; round < 6 && ok; round++)
		for (int i = 0; i < FILES; i++)
			ok &= reads_as(fds[i], data[i], LEN, (size_t)round * 400, 1000);
	ck("forty_files_round_robin", ok);
	for (int i = 0; i < FILES; i++) {
		close(fds[i]);
		snprintf(path, sizeof(path), "/tmp/fv_many%d", i);
		unlink(path);
	}
	/* a file too big for a view: vfs answers every pread */
	enum { BIG = 5 << 20 };
	unsigned char *big = malloc(BIG);
	ok = big != NULL;
	if (ok) {
		fill(big, BIG, 77);
		ok &= make_file("/tmp/fv_big", big, BIG) == 0;
		int fd = open("/tmp/fv_big", O_RDONLY);
		uint64_t u0 = axfile_counts.user;
		for (int i = 0; i < 6; i++)
			ok &= reads_as(fd, big, BIG, (size_t)i * 900001, 65536);
		ok &= axfile_counts.user == u0;
		close(fd);
		unlink("/tmp/fv_big");
		free(big);
	}
	ck("big_file_through_vfs", ok);
}

int main(int argc, char **argv)
{
	(void)argc;
	check_tag = "FILEVIEW";
	const char *e = getenv("AXOLOTL_SOCK");
	lib = !(e && !strcmp(e, "0"));
	pre = lib ? "" : "off_";
	basic_checks();
	error_checks();
	many_checks();
	printf("fileview%s: preads from views %llu, to vfs %llu, views mapped %llu\n", lib ? "" : " off",
	       (unsigned long long)axfile_counts.user, (unsigned long long)axfile_counts.vfs,
	       (unsigned long long)axfile_counts.views);
	if (lib) {
		ck("without_library_all_passed", rerun_without_library(argv[0]));
		printf("fileview: %d passed, %d failed\n", passed, failed);
	} else {
		ck("without_library_no_views", axfile_counts.user == 0 && axfile_counts.views == 0);
		printf("fileview off: %d passed, %d failed\n", passed, failed);
	}
	unlink("/tmp/fv_a");
	return failed != 0;
}
