/* lib/sock's half of the activity page (lib/net/sock_ax.h, docs/sockets.md "Telling the
 * stack"): telling a socket's engine that the library moved its data, and the counters of
 * calls answered in user space against calls that needed the kernel. */
#pragma once
#include <stdbool.h>
#include <stdint.h>
#include "sock_ax.h"

/* The page syscall made for this process (from AX_SOCKBUF's answer; 0: none). */
void axsock_act_page(uint64_t va);
/* The library moved fd's data (TX queued, RX released): set its bit, bump its engine's word
 * and, if the engine may be asleep, wake it (one AX_KICK system call). */
void axsock_activity(int fd, uint32_t eng, uint32_t bit);
/* One interposed call of kind c ended: user: it made no system call. */
void axsock_count(enum ax_call c, bool user);
/* System calls the library made from this thread so far (a call compares before and after
 * to know whether it stayed in user space). */
extern _Thread_local uint64_t axsock_nsys;
/* Wake-ups the library made (AX_KICK: the engine slept, or there is no page). */
extern uint64_t axsock_kicks, axsock_marks; /* and times the library marked activity */
/* The counters (the page's, or the library's own before the page exists). */
const struct ax_activity *axsock_act(void);
