/* The event loop skeleton every server starts from: poll its channels, and when there is no
 * work, sleep in one place for both channel doorbells and kernel IPC (KC_WAIT), then
 * dispatch what woke it. Without a doorbell or a timeout it simply blocks in receive.
 * rs's commands (AX_RS_BIT: live update, fault injection, ds restarted) are handled here
 * too, through lib/axrt/service.c. */
#pragma once
#include <stdatomic.h>
#include "axrt.h"

struct ax_evloop {
	/* A message from a process. The handler replies (ax_reply) if the sender called. */
	void (*on_message)(struct ax_evloop *l, struct kmsg *m);
	/* Pending notification bits (KC_NOTIFY, IRQs), without the ones the loop handles. */
	void (*on_notify)(struct ax_evloop *l, uint64_t bits);
	/* A kernel report: KMSG_PROC_EXIT or KMSG_PROC_FAULT of a child. */
	void (*on_report)(struct ax_evloop *l, const struct kmsg *m);
	/* Channel work; returns true if it did any (the loop polls again before sleeping). */
	bool (*poll)(struct ax_evloop *l);
	/* Word that peers write to wake us (with `poll`), or NULL. */
	const volatile uint64_t *doorbell;
	/* The consumer's "going to sleep" flag of that doorbell's channel (lib/chan/doorbell.h),
	 * raised around the last poll and the wait so a producer knows to ring; or NULL. */
	_Atomic uint32_t *sleeping;
	/* Longest sleep in ns (0: none), e.g. to retry a full queue or run a timer. */
	uint64_t wait_ns;
	/* Live update (servers/rs/README.md): save the state for the new version and let go of
	 * shared resources; 0, or negative if the update must not go on. NULL: not updatable. */
	int64_t (*quiesce)(struct ax_evloop *l);
	/* No quiesce hook, but everything this server must keep survives a restart (in ds, in
	 * memory rs keeps, or in its peers): a live update ends it at the top of its loop and
	 * starts the new binary as its restart; the new instance commits at its first turn. */
	bool restartable;
	/* The update was rolled back: take the resources back and carry on. */
	void (*resume)(struct ax_evloop *l);
	/* A fault of the server's own kind was injected (`service inject NAME WORD`). */
	void (*inject)(struct ax_evloop *l, const char *word);
	bool stop;   /* set by a handler to make ax_evloop_run return */
	void *ctx;   /* the server's own state */
};

/* Runs until a handler sets l->stop. Returns 0, or a negative error from the kernel. */
int64_t ax_evloop_run(struct ax_evloop *l);
