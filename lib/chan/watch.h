/* A producer's watch on the consumer (README.md, "A consumer that stops reading"). A server
 * whose loop still turns (so its heartbeat beats) but no longer reads a channel is alive and
 * broken: the producer is the one that sees it, by the consumer's index standing still while
 * messages wait. The watch only decides; ringing the consumer and complaining to rs are the
 * caller's. */
#pragma once
#include "spsc.h"

/* Stalls, measured from the first look that found the tail where the look before left it,
 * with messages queued. */
#define CHAN_STALL_RING_NS 1000000000ull /* ring the consumer: a lost wake-up may be ours */
#define CHAN_STALL_SAY_NS 3000000000ull  /* then it is the consumer's: say so ... */
#define CHAN_STALL_AGAIN_NS 1000000000ull /* ... and again this often while it lasts */
/* How often a producer with messages waiting should look (its loop's longest sleep then). */
#define CHAN_WATCH_LOOK_NS 250000000ull

struct chan_watch {
	uint64_t tail;     /* the consumer's index at the last look */
	uint64_t since_ns; /* when it was first seen standing with messages queued; 0: moving */
	uint64_t rang_ns, said_ns;
	char name[32];     /* the channel's name, for the complaint (set once by the owner; RS_COMPLAIN_WHAT) */
};

enum chan_watch_verdict {
	CW_IDLE,   /* nothing queued */
	CW_MOVING, /* messages queued, the consumer reads (or has not stood still long) */
	CW_RING,   /* stood still CHAN_STALL_RING_NS: ring the consumer once */
	CW_STUCK,  /* stood still CHAN_STALL_SAY_NS: complain (again every CHAN_STALL_AGAIN_NS) */
};

/* Producer side: a look at q. The clock is read only when the tail has not moved since the
 * last look and messages wait (the look costs nothing more on a producer's hot path while
 * the consumer reads). *stalled_ns (if given) gets how long the tail has stood still (0 if
 * moving). A corrupt channel counts as idle: its owner's own checks report it. */
enum chan_watch_verdict chan_watch(struct chan_watch *w, struct spsc *q, uint64_t (*clock)(void), uint64_t *stalled_ns);
/* Forget the history (the channel was attached anew, or the consumer restarted); the name
 * stays. */
static inline void chan_watch_reset(struct chan_watch *w) { w->tail = w->since_ns = w->rang_ns = w->said_ns = 0; }
