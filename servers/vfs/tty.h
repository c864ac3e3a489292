/* The terminal on the console (tty.c): vfs's side of /dev/console (and every node with
 * dev = DEV_CONSOLE). Input comes from the console server over a channel
 * (lib/posix/tty_proto.h) into the line discipline (ldisc.h); output goes to the kernel
 * console after output processing. servers/vfs/README.md, "Terminal". */
#pragma once
#include "vfs.h"

/* The line discipline, and the input channel exported as vfs/ttyin for the console. */
/* adopted: the line discipline's state is a predecessor's (kept); the input channel is
 * always made anew. */
void tty_init(bool adopted);
/* The console importing the input channel (CHAN_ATTACH); true if m was that (answered). */
bool tty_message(struct kmsg *m);
/* TTY_INPUT_BIT was notified: takes what the channel holds, echoes, retries held calls. */
void tty_input(void);
/* The file calls on a console file; VFS_BLOCK when a read must wait. */
int64_t tty_read(struct client *c, struct ofile *f, uint64_t ubuf, uint64_t len);
int64_t tty_write(struct client *c, struct ofile *f, uint64_t ubuf, uint64_t len);
int64_t tty_ioctl(struct client *c, struct ofile *f, uint64_t cmd, uint64_t arg);
/* pm started a session leader on the console (VFS_SESSION): the console is its controlling
 * terminal and its group (= its pid) the foreground one. */
void tty_session(int32_t pid);
/* Writes out the terminal output gathered so far (once per served call). */
void tty_flush(void);
/* Runs what is due (VTIME deadlines, signals pm could not take); the nanoseconds until the
 * next thing is due, 0 if nothing is: the event loop's longest sleep. */
uint64_t tty_timer(void);
/* A held call of ep was cancelled (KMSG_LINUX_CANCEL) or ep ended: forget its read timer. */
void tty_cancel(endpoint_t ep);
