/* The user-space socket library's calls to `syscall` (docs/sockets.md): Linux socket
 * options at a level Linux does not use, so they travel as ordinary get/setsockopt calls.
 *   getsockopt(fd, SOL_AXOLOTL, AX_SOCKBUF, struct ax_sockbuf *, len): the library takes the
 *     socket's buffers over: they are mapped into the caller (if not yet), `syscall` stops
 *     serving data calls on the socket (EBADFD) and answers with where they are. The
 *     library attaches as the application side (sockbuf_attach, SB_APP) and continues from
 *     the published indices.
 *   setsockopt(fd, SOL_AXOLOTL, AX_SOCKBUF, &rx_off, 4): hands the socket back (the stream
 *     offset into the oldest RX piece with it): `syscall` serves its data calls again.
 *   setsockopt(fd, SOL_AXOLOTL, AX_KICK, NULL, 0): the library queued TX or released RX:
 *     the engine looks at the socket, vfs hears its readiness again. */
#pragma once
#include <stdint.h>

#define SOL_AXOLOTL 0x4158
#define AX_SOCKBUF 1
#define AX_KICK 2

struct ax_sockbuf {
	uint64_t va;     /* the buffer's address in the caller */
	uint64_t bytes;  /* its size */
	uint32_t rx_off; /* stream: bytes already read of the oldest RX piece */
	uint32_t stream; /* 1: a stream socket, 0: datagrams */
};
