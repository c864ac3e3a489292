/* The reincarnation server's message protocol (servers/rs/README.md). Kernel IPC: one
 * 64-byte message per request, the answer in the reply, the result in w[6] (0 or -KE_*).
 * rs never calls anyone, so a service calling rs cannot deadlock with it. */
#pragma once
#include <stdint.h>

#define RS_NAME_LEN 24 /* a service name, NUL-padded (23 characters at most) */
#define RS_WORD_LEN 16 /* an injected fault's name, NUL-padded */

/* A service to rs (its parent). */
#define RS_LOOKUP 0x7201   /* w[0..2] = service name -> w[0] = endpoint of its running instance;
                            * -KE_AGAIN: configured but not running now, -KE_SRCH: no such service */
#define RS_CMD 0x7202      /* after AX_RS_BIT: -> w[0] = RS_DO_*, w[1..2] = word (RS_DO_INJECT),
                              w[3] = the new ds endpoint (RS_DO_DS); call until RS_DO_NONE */
#define RS_QUIESCED 0x7203 /* old instance of a live update, at rest and its state saved: w[0] = 0,
                              or -KE_NOSYS if it cannot be updated, or RS_QUIESCED_REPLACE: its
                              state survives a restart, so rs ends it and starts the new binary
                              as its restart (update=1 restarted=N). The reply comes only on a
                              rollback (w[0] = 1: resume); on success rs kills the caller. */
#define RS_QUIESCED_REPLACE 1
#define RS_COMPLAIN 0x7205 /* a service's channel to a peer has stood still with messages queued
                              (lib/chan/watch.h): w[0] = the peer's endpoint, w[1] = for how many
                              ms, w[2..5] = the channel's name (NUL-padded) -> w[0] = 1 if rs
                              restarted the peer, 0 if it only took note (servers/rs/README.md,
                              "A consumer that stops reading") */
#define RS_COMPLAIN_WHAT 32 /* (ip/virtio-net.down and the like) */
#define RS_READY 0x7204    /* new instance (started with update=1) took the state over and
                              attached: the reply (w[6] = 0) commits the update */

/* Commands rs has queued for a service (RS_CMD). */
#define RS_DO_NONE 0
#define RS_DO_QUIESCE 1 /* stop at the top of the event loop, save state, send RS_QUIESCED */
#define RS_DO_CRASH 2   /* fault injection: crash now (a page fault) */
#define RS_DO_HANG 3    /* fault injection: spin forever without heartbeats */
#define RS_DO_INJECT 4  /* fault injection the server defines itself, named by the word */
#define RS_DO_DS 5      /* ds was restarted: republish everything (lib/ds/ds_client.h) */

/* Control calls (the `service` command); only from services with `control` in system.conf. */
#define RS_LIST 0x7210    /* w[0] = index -> w[0..2] name, w[3] = endpoint | cpu << 32 (cpu -1: any),
                             w[4] = restarts | state << 32 | dedicated << 40, w[5] = uptime ms
                             (low 32 bits) | build id << 32 (a hash of the running binary);
                             -KE_SRCH past the last service */
#define RS_START 0x7211   /* w[0..2] name: start a stopped service */
#define RS_STOP 0x7212    /* w[0..2] name: kill it and keep it down */
#define RS_KILL 0x7213    /* w[0..2] name: kill it as a crash would; its restart policy applies */
#define RS_RESTART 0x7214 /* w[0..2] name: kill it and start it again at once */
#define RS_UPDATE 0x7215  /* w[0..2] name, w[3..5] new binary: live update; the reply comes when
                             it is committed (0) or rolled back (-KE_*) */
#define RS_INJECT 0x7216  /* w[0..2] name, w[3..4] word: "crash", "hang", a code fault of
                             lib/swifi ("flip", "branch", ...) or "random", or the server's own;
                             for code faults w[5] = count (bits 0-15, 0: one) | replay address
                             << 16, w[6] = seed (0: rs picks) -> w[0] = the seed, w[1] = faults
                             applied (0: no instruction fits the type), w[2] = 1 (a code
                             fault; the rest of the record is in rs's log) */
#define RS_INJECT_COUNT(w5) ((uint32_t)((w5) & 0xffff))
#define RS_INJECT_AT(w5) ((w5) >> 16)
#define RS_LOG 0x7217     /* anyone: w[0] = index (0: the oldest event kept), w[1] = byte offset into
                             its text -> w[0] = time ns, w[1] = event number, w[2..5] = the next
                             RS_LOG_CHUNK bytes of text (NUL-padded); -KE_SRCH past the last */
#define RS_LOG_CHUNK 32
#define RS_UPDATE_NOWAIT 0x7218 /* as RS_UPDATE, answered at once (0: the update began); its outcome
                                   is in rs's log and the new instance says it took over. For the
                                   console updating itself: it cannot quiesce while it waits */

/* Service states in RS_LIST. */
#define RS_ST_RUNNING 1
#define RS_ST_WAITING 2  /* ended; restart due after the back-off */
#define RS_ST_STOPPED 3  /* ended and kept down (policy, or RS_STOP) */
#define RS_ST_UPDATING 4 /* a live update is in progress */
#define RS_ST_ABSENT 5   /* optional, and its device is not in this machine: never started */

/* Notification bit: rs has commands queued for the service (fetch them with RS_CMD). A bit
 * anyone could forge only makes the service ask rs, which knows better. */
#define AX_RS_BIT (1ull << 61)
