/* What posix.c (the interposed descriptor and data calls) and events.c (poll, select,
 * epoll) share. */
#pragma once
#include <stdbool.h>
#include "state.h"

/* The library is on (AXOLOTL_SOCK is not "0" in the environment). */
bool axsock_on(void);
/* fd's record if the wrappers look at it (the library is on and socket/accept made it). */
struct axsock *axsock_tracked(int fd);
/* fd is closed or replaced: events.c forgets it (and the epoll list it was, if any). */
void axsock_events_forget(int fd);
/* A socket given back to syscall: registered in the kernel's epoll sets it is in here. */
void axsock_events_to_kernel(int fd);
/* A listener ls (descriptor l): asks syscall once to take its accepted connections over
 * (AX_ACCEPT_TAKE), which also gives its readiness entry in the page. */
void axsock_listener_take(struct axsock *ls, int l);
/* Tells syscall to look at a socket again (a stale readiness report): one system call. */
void axsock_resync(int fd);
