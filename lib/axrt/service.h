/* Living under rs (servers/rs/README.md): the arguments rs gives a service, finding other
 * services, and the commands rs sends (live update, fault injection, ds restarted), which
 * the event loop runs when AX_RS_BIT is notified. */
#pragma once
#include "evloop.h"
#include "rs_proto.h"

struct ax_svc_state {
	const char *name;   /* argv[0]: the binary, for log lines */
	const char *label;  /* the service's name (its ds label): label=, else the binary's name */
	uint32_t restarts;  /* restarted=N: this is the N-th restart, recover state from ds */
	bool update;        /* update=1: a live update's new instance, take the old one's state */
};
extern struct ax_svc_state ax_svc;
extern const char ax_build_tag[]; /* "" or the build's tag (Makefile UPDATE_V2) */

/* Parses hb=, restarted=, update= and label= (and maps the heartbeat page). */
void ax_svc_init(int argc, char **argv);
/* Whether argument a is one of those rs appends for the runtime (hb=, restarted=, update=1,
 * label=): a server passing its arguments on (pm's run=) leaves them out. */
bool ax_svc_rs_arg(const char *a);
/* Endpoint of the named service's running instance, or a negative error: -KE_AGAIN when it
 * is configured but not running now (crashed and waiting for its restart, or stopped),
 * -KE_SRCH when there is no such service. *next (if given) gets the endpoint of the
 * instance a live update is bringing up, or 0. */
int64_t ax_svc_lookup(const char *name, endpoint_t *next);
/* Tell rs that our channel `what` to peer has stood still for stalled_ms with messages
 * queued (lib/chan/watch.h): 1 if rs restarted peer, 0 if it took note, or an error. */
int64_t ax_svc_complain(endpoint_t peer, const char *what, uint64_t stalled_ms);
/* New instance of a live update: the state is taken over, commit. 0, or an error (then the
 * update was rolled back and the caller should exit). */
int64_t ax_svc_ready(void);
/* The injected fault `crash`: a write to an unmapped page, reported to our parent like any
 * crash. */
void ax_svc_crash(void);
/* The injected fault `hang`: spins on the CPU, without heartbeats, until killed. */
__attribute__((noreturn)) void ax_svc_hang(void);
/* Fetches and runs the commands rs has queued for us (called by the event loop). */
void ax_svc_commands(struct ax_evloop *l);
