/* The link from the console to the terminal in vfs (term.h, lib/posix/tty_proto.h). */
#include "term.h"
#include "axrt.h"
#include "chan_name.h"
#include "ds_client.h"
#include "spsc.h"
#include "tty_proto.h"

#define QUEUE 1024 /* a power of two */

static struct chan_import imp;
static struct spsc q;
static bool attached;
static uint8_t queue[QUEUE];
static uint32_t qhead, qtail; /* free-running */
static uint64_t dropped;

int64_t term_watch(void) { return dsc_subscribe(TTY_CHAN_LABEL, TTY_CHAN_KEY); }

bool term_attached(void) { return attached; }

static void detach(void)
{
	chan_unimport(&imp);
	attached = false;
}

bool term_changed(void)
{
	/* vfs/ttyin published again: a new vfs (restarted or live-updated) made a new channel, or
	 * ds restarted and the same vfs published its own again. Imported anew either way; the
	 * bytes queued here stay queued. */
	if (attached) {
		chan_unimport(&imp);
		attached = false;
	}
	int64_t r = chan_import(TTY_CHAN_LABEL, TTY_CHAN_KEY, &imp);
	if (r < 0)
		return false;
	if (spsc_attach(&q, imp.va, imp.bytes, SPSC_PRODUCER) < 0 || q.slot_size != TTY_SLOT) {
		ax_printf("console: %s/%s is not a terminal channel, ignored\n", TTY_CHAN_LABEL, TTY_CHAN_KEY);
		chan_unimport(&imp);
		return false;
	}
	attached = true;
	return true;
}

void term_put(uint8_t c)
{
	if (qhead - qtail == QUEUE) {
		if (dropped++ == 0)
			ax_printf("\nconsole: the terminal takes no input; typed bytes are dropped\n");
		return;
	}
	queue[qhead++ % QUEUE] = c;
}

bool term_pending(void) { return attached && qhead != qtail; }

/* Moves the queued bytes into the channel and tells vfs. -1: the channel is corrupt; -2: vfs
 * is gone (the bytes stay queued). */
static int push_queue(void)
{
	bool pushed = false;
	uint32_t from = qtail;
	while (qhead != qtail) {
		uint8_t slot[TTY_SLOT];
		uint32_t n = 0;
		for (; n < TTY_SLOT_DATA && qtail + n != qhead; n++)
			slot[1 + n] = queue[(qtail + n) % QUEUE];
		slot[0] = (uint8_t)n;
		int e = spsc_push_part(&q, slot, 1 + n);
		if (e == CHAN_EAGAIN)
			break; /* vfs is behind: the rest waits here */
		if (e < 0)
			return -1;
		qtail += n;
		pushed = true;
	}
	/* Also while vfs is behind: a notification that fails says vfs is gone. */
	if ((pushed || qhead != qtail) && ax_notify(imp.owner, TTY_INPUT_BIT) < 0) {
		qtail = from;
		return -2;
	}
	return 0;
}

bool term_push(void)
{
	if (!attached)
		return true;
	int e = push_queue();
	/* vfs is gone: a new vfs may have published its terminal already (a restart or an
	 * update; its notice may still be on its way): the bytes go there. */
	if (e == -2 && term_changed())
		e = push_queue();
	if (e == -1)
		ax_printf("\nconsole: the terminal's channel is corrupt\n");
	if (e < 0) {
		detach();
		qtail = qhead; /* typed for a terminal that is gone */
	}
	return e == 0;
}
