/* What the console and vfs agree on: the terminal's input channel (servers/vfs/README.md,
 * "Terminal"; servers/console/README.md, "Terminal").
 *
 * vfs owns the channel (it outlives the console, which rs may restart) and exports it in
 * ds as vfs/ttyin for the service `console` alone (lib/chan/chan_name.h); exporting it is
 * how vfs says "a terminal is here". The console, subscribed to vfs/ttyin, imports it as
 * the producer, pushes the bytes typed on the serial port, and after each batch notifies
 * vfs's endpoint (the export's owner) with TTY_INPUT_BIT; vfs then drains the channel into
 * the line discipline. The channel holds 4 KiB, so nothing is lost while vfs is busy; the
 * console keeps what does not fit and tries again. */
#pragma once
#include <stdint.h>

#define TTY_CHAN_LABEL "vfs"
#define TTY_CHAN_KEY "ttyin"
#define TTY_SLOT 64   /* bytes per slot: a length byte (1-63), then that many input bytes */
#define TTY_SLOTS 64
#define TTY_SLOT_DATA (TTY_SLOT - 1)
#define TTY_INPUT_BIT (1ull << 1) /* console -> vfs notification: the channel has input */
