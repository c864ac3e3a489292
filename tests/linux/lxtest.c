/* A Linux program built with musl-gcc -static and run unmodified under Axolotl's pm.
 *   lxtest hello [WORDS...]  prints a greeting with its arguments (stdout, via writev) and a
 *                            line on stderr (write), exits 0
 *   lxtest errors            error cases of the forwarded calls, one "LXTEST PASS|FAIL name"
 *                            line each; exits with the number of failures
 *   lxtest exit N            exits with status N
 *   lxtest fuzz N            N system calls with random numbers and arguments (none that would
 *                            end or unmap us, or write random bytes to the console); then
 *                            checks pm still answers */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

static int failures;

static void check(const char *name, int ok)
{
	printf("LXTEST %s %s\n", ok ? "PASS" : "FAIL", name);
	failures += !ok;
}

static __thread int tls_counter = 41; /* thread-local storage: needs arch_prctl(ARCH_SET_FS) */

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "hello";
	if (!strcmp(mode, "hello")) {
		printf("hello from musl:");
		for (int i = 2; i < argc; i++)
			printf(" %s", argv[i]);
		printf(" (argc %d, tls %d)\n", argc, ++tls_counter);
		fprintf(stderr, "lxtest: stderr works too\n");
		return 0;
	}
	if (!strcmp(mode, "exit") && argc > 2)
		return atoi(argv[2]);
	if (!strcmp(mode, "errors")) {
		errno = 0;
		check("unknown_syscall_enosys", syscall(SYS_acct, 0) == -1 && errno == ENOSYS);
		errno = 0;
		check("write_bad_pointer_efault", write(1, (void *)8, 16) == -1 && errno == EFAULT);
		errno = 0;
		check("write_bad_fd_ebadf", write(77, "x", 1) == -1 && errno == EBADF);
		errno = 0;
		check("huge_iovcnt_einval", syscall(SYS_writev, 1, (void *)0, 100000) == -1 && errno == EINVAL);
		struct winsize ws;
		errno = 0;
		check("console_not_a_tty", ioctl(1, TIOCGWINSZ, &ws) == -1 && errno == ENOTTY);
		check("getpid_positive", getpid() > 0 && getpid() == (pid_t)syscall(SYS_gettid));
		check("tls_initialised", tls_counter == 41);
		errno = 0;
		check("arch_prctl_bad_code", syscall(SYS_arch_prctl, 0x9999, 0) == -1 && errno == EINVAL);
		printf("LXTEST DONE %d failures\n", failures);
		return failures;
	}
	if (!strcmp(mode, "fuzz") && argc > 2) {
		unsigned long x = 0x9e3779b97f4a7c15ul, n = strtoul(argv[2], NULL, 10), enosys = 0;
		for (unsigned long i = 0; i < n; i++) {
			long a[7];
			for (int k = 0; k < 7; k++) {
				x ^= x << 13, x ^= x >> 7, x ^= x << 17;
				a[k] = (long)x;
			}
			long nr = (unsigned long)a[6] % 460;
			if (nr == SYS_exit || nr == SYS_exit_group || nr == SYS_arch_prctl || nr == SYS_rt_sigreturn)
				continue;
			if ((nr == SYS_write || nr == SYS_writev || nr == SYS_pwrite64 || nr == SYS_pwritev) && (unsigned long)a[0] <= 2)
				a[0] = 77;
			enosys += syscall(nr, a[0], a[1], a[2], a[3], a[4], a[5]) == -1 && errno == ENOSYS;
		}
		printf("LXTEST fuzz: %lu calls, %lu ENOSYS, pid %d still answers\n", n, enosys, getpid());
		return 0;
	}
	fprintf(stderr, "lxtest: unknown mode %s\n", mode);
	return 2;
}
