/* What the lib/sock test programs share: PASS/FAIL lines under a tag, and a UDP socket
 * bound to 127.0.0.1 on an ephemeral port. */
#pragma once
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

static int passed, failed;
static const char *check_tag;

static void check(const char *name, int ok)
{
	printf("%s %s %s\n", check_tag, ok ? "PASS" : "FAIL", name);
	fflush(stdout);
	ok ? passed++ : failed++;
}

/* The program at self run again with AXOLOTL_SOCK=0 (the same checks through system calls):
 * whether it exited 0. */
static inline int rerun_without_library(const char *self)
{
	fflush(stdout);
	pid_t kid = fork();
	if (kid == 0) {
		char *env[] = { "AXOLOTL_SOCK=0", NULL };
		char *args[] = { (char *)self, NULL };
		execve(self, args, env);
		_exit(127);
	}
	int st = -1;
	waitpid(kid, &st, 0);
	return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

static inline int udp_bound(struct sockaddr_in *a)
{
	int s = socket(AF_INET, SOCK_DGRAM, 0);
	*a = (struct sockaddr_in){ .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t l = sizeof(*a);
	if (s < 0 || bind(s, (struct sockaddr *)a, sizeof(*a)) || getsockname(s, (struct sockaddr *)a, &l))
		printf("  socket: %s\n", strerror(errno));
	return s;
}
