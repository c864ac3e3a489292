/* lib/netdrv's own state between its files (drivers see only netdrv.h). */
#pragma once
#include "netdrv.h"
#include "evloop.h"
#include "watch.h"

#define NETDRV_IRQ_BIT (1ull << 0)       /* our notification bit for the device's interrupt */
#define NETDEV_WAKE_BIT (1ull << 40)     /* what we notify ip with: "your up channel has data" */
#define WAIT_IRQ_NS 50000000ull          /* interrupt mode: the safety-net poll */
#define WAIT_POLL_NS 50000ull            /* polling mode */
#define WAIT_DETACHED_NS 100000000ull

/* One queue pair with ip (netdev_proto.h): queue 0 is ip/NAME.down and .up, queue Q
 * ip/NAME.dQ and .uQ. */
struct netdrv_qlink {
	struct chan_import down_mem, up_mem;
	struct spsc down, up;
	struct chan_watch up_w;      /* ip reads up (lib/chan/watch.h) */
	bool kick_ip;
	struct chan_ptr spare[NETDRV_RX_SPARE]; /* RX buffers ip gave beyond what the ring holds */
	uint32_t nspare;
};

struct netdrv_link {
	uint8_t ip_seen[DS_VAL_LEN]; /* ds value of ip/NAME.down when we imported it */
	uint32_t ip_seen_len;
	struct netdrv_qlink q[NETDEV_MAXQ];
	struct chan_axolotl_peer ipwake;
	struct chan_platform plat;
	uint64_t next_attach_ns;
};
extern struct netdrv_link ndl;
extern struct ax_evloop nd_loop;

/* pools.c */
int nd_pool_find(uint32_t id);
int64_t nd_pool_import(int i, uint32_t id, const char *label, const char *key);
void nd_pool_drop(int i);
/* attach.c */
void nd_key(char key[16], const char *fmt);
int64_t nd_attach(void);
void nd_ds_changed(void);
/* serve.c: up to a batch of ip's messages on queue q; how many */
int nd_serve_down(unsigned q);
void nd_rx_refill(unsigned q); /* spare RX buffers into queue q's ring while it has room */
void nd_reset(void);     /* the device reset: its ring and our spares empty */
/* loop.c */
void nd_bind_irq(void);
