/* Synchronous kernel IPC with 64-byte messages, and asynchronous notifications.
 * Deadlock rules (docs/kernel-api.md): a send to a thread that is itself blocked sending
 * (directly or through a chain) to the sender fails with -KE_DEADLK; servers answer
 * clients with KC_REPLY, which never blocks; notifications never block. */
#pragma once
#include "proc/proc.h"

int64_t ipc_send(struct thread *me, endpoint_t dst, const struct kmsg *m, bool call);
int64_t ipc_receive(struct thread *me, endpoint_t src);
int64_t ipc_reply(struct thread *me, endpoint_t dst, const struct kmsg *m, bool nonblocking_send);
int64_t ipc_notify(struct thread *me, endpoint_t dst, uint64_t bits);
/* t, blocked waiting for a reply, becomes a caller of d with message m (already stamped
 * with its source): delivered if d is receiving, else queued behind d's senders. */
void ipc_redirect(struct thread *t, struct thread *d, const struct kmsg *m);
/* A thread is dying: fail everybody who waits on it and unlink it from queues. */
void ipc_cancel(struct thread *t);
/* Takes a thread blocked in a send out of its receiver's queue. */
void ipc_cancel_send(struct thread *t);
/* Something arrived for t (a notification or kernel message): wake it if it waits for it. */
void ipc_wake_receiver(struct thread *t);
/* Blocks the calling thread (unless it was killed); returns its ipc_result when woken. */
int64_t ipc_block(struct thread *me, enum block_reason why, endpoint_t peer);
void ipc_wake(struct thread *t, int64_t result);
