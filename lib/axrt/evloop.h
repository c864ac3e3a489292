/* The event loop skeleton every server starts from: poll its channels, and when there is no
 * work, sleep in one place for both channel doorbells and kernel IPC (KC_WAIT), then
 * dispatch what woke it. Without a doorbell it simply blocks in receive. */
#pragma once
#include "axrt.h"

struct ax_evloop {
	/* A message from a process. The handler replies (ax_reply) if the sender called. */
	void (*on_message)(struct ax_evloop *l, struct kmsg *m);
	/* Pending notification bits (KC_NOTIFY, IRQs). */
	void (*on_notify)(struct ax_evloop *l, uint64_t bits);
	/* A kernel report: KMSG_PROC_EXIT or KMSG_PROC_FAULT of a child. */
	void (*on_report)(struct ax_evloop *l, const struct kmsg *m);
	/* Channel work; returns true if it did any (the loop polls again before sleeping). */
	bool (*poll)(struct ax_evloop *l);
	/* Word that peers write to wake us (with `poll`), or NULL. */
	const volatile uint64_t *doorbell;
	bool stop;   /* set by a handler to make ax_evloop_run return */
	void *ctx;   /* the server's own state */
};

/* Runs until a handler sets l->stop. Returns 0, or a negative error from the kernel. */
int64_t ax_evloop_run(struct ax_evloop *l);
