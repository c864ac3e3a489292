/* Whether this test program was linked with the user-space socket library (lib/sock, the
 * *-lib builds), and what it did: lib/sock's global counters, referenced weakly so the plain
 * build links without them. Printed before the summary line, so the system tests can check
 * that the calls really went through the library. */
#pragma once
#include <stdint.h>
#include <stdio.h>

struct axsock_counts {
	uint64_t user, syscalls; /* as lib/sock/sock.h has them */
};
extern struct axsock_counts axsock_counts __attribute__((weak));

static inline void print_library_counts(const char *prog)
{
	if (&axsock_counts)
		printf("%s: socket library: %llu calls in user space, %llu system calls\n", prog,
		       (unsigned long long)axsock_counts.user, (unsigned long long)axsock_counts.syscalls);
}
