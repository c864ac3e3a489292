/* The console's side of the terminal in vfs (lib/posix/tty_proto.h): the typed bytes that
 * are not for the monitor go into vfs's input channel. */
#pragma once
#include <stdbool.h>
#include <stdint.h>

/* Asks ds to tell us when vfs publishes its terminal (vfs/ttyin); an error if there is no
 * ds (then there is never a terminal, and the console is the monitor alone). */
int64_t term_watch(void);
/* ds says something we watch changed: attaches to the terminal if it is not attached yet.
 * True if it has just been attached. */
bool term_changed(void);
bool term_attached(void);
/* Queues a typed byte for the terminal (dropped, and counted, if 1 KiB is already queued:
 * vfs has not taken input for a long while). */
void term_put(uint8_t c);
/* Moves the queue into the channel and wakes vfs. False if vfs is gone: then the terminal
 * is detached (a new vfs publishing again attaches it anew). */
bool term_push(void);
/* Bytes still queued (the channel was full): push again later. */
bool term_pending(void);
