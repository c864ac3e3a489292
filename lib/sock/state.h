/* lib/sock's private record of one descriptor (sock.c, posix.c, events.c): whether the C
 * library's calls on it are interposed (tracked: made by socket/accept/accept4), whether
 * the library owns its rings (taken), and what the POSIX calls told it (non-blocking,
 * timeouts, shutdown). Library memory only, never the shared buffer. */
#pragma once
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include "sockbuf.h"

#define AXSOCK_MAX_FDS 1024

struct axsock {
	/* the rings (sock.c) */
	bool taken;
	bool stream;
	bool peer_fin;     /* stream: the peer's FIN was read (every read returns 0) */
	uint32_t rx_off;   /* stream: bytes already read of the oldest RX piece */
	uint32_t eng, bit; /* its engine and bit in the activity page */
	uint64_t va, bytes; /* the buffer's mapping (unmapped when the socket is closed) */
	struct sockbuf sb;
	/* the POSIX layer (posix.c) */
	bool tracked;      /* made by socket/accept/accept4: the wrappers look at it */
	bool never;        /* taking it failed, or it was dup'ed or forked: system calls only */
	bool connected;    /* connected (accepted, or connect succeeded; a datagram's: to a peer) */
	bool broadcast;    /* datagram: SO_BROADCAST is on (a send to 255.255.255.255 may go) */
	bool connecting;   /* stream: connect is in progress (non-blocking) */
	bool nonblock;     /* O_NONBLOCK */
	bool shut_rd, shut_wr;
	_Atomic bool hup_hint; /* the kernel reported POLLERR/POLLHUP: a receive asks it */
	int32_t rcvtimeo_ms, sndtimeo_ms; /* SO_RCVTIMEO/SO_SNDTIMEO, 0: none */
	atomic_flag lock;  /* around ring operations (threads sharing the socket) */
	/* a listener: syscall takes its accepted connections over for us (AX_ACCEPT_TAKE) */
	uint8_t accept_take; /* 0: not asked yet, 1: yes (accept_key), 2: no */
	uint32_t accept_key;
	bool listening;      /* listen() succeeded on it */
	uint8_t listen_slot; /* its readiness in the page's `listen` table (+ 1; 0: none): epoll
	                        answers it from there (events.c) */
	/* its last accept emptied the queue (the entry's `more` 0): the next non-blocking one
	 * is EAGAIN with no system call if the page's app.arrivals is still drained_at */
	bool drained;
	uint32_t drained_at;
};

/* fd's record (NULL when out of range). */
struct axsock *axsock_slot(int fd);
/* The record if the library owns fd's rings, else NULL. */
struct axsock *axsock_owned(int fd);
