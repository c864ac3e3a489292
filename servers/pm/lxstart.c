/* lxstart PATH [ARGS...]: the first Linux program of a pm session when the program is a
 * file (pm run=/bin/sh): a boot module that execs PATH with ARGS and a basic environment.
 * Built with musl-gcc like any Linux program. */
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	static char *env[] = { "PATH=/bin:/sbin:/usr/bin:/usr/sbin", "HOME=/root", "TERM=vt100", "SHELL=/bin/sh",
			       "USER=root", "LOGNAME=root", NULL };
	if (argc < 2) {
		fprintf(stderr, "usage: lxstart PATH [ARGS...]\n");
		return 2;
	}
	execve(argv[1], argv + 1, env);
	perror(argv[1]);
	return 127;
}
