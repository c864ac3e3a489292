/* rs's shared state between its parts: rs.c (starting, restarts, heartbeats), rs_ds.c
 * (keeping ds informed), rs_ctl.c (requests from services and the service command). */
#pragma once
#include "axrt.h"
#include "sysconf.h"
#include "rs_proto.h"

#define MAX_SVC 32

/* UP_STARTING: the old instance waits (state transfer) while the new one starts;
 * UP_REPLACED: the old one said its state survives a restart and was ended, the new one runs
 * as its restart would (docs/recovery.md, "Live update"). */
enum update_phase { UP_NONE, UP_QUIESCING, UP_STARTING, UP_REPLACED };
enum start_kind { START_NORMAL, START_UPDATE, START_REPLACE };

struct svc {
	struct svc_conf c;
	endpoint_t ep;     /* running instance; 0: none */
	uint32_t restarts;
	uint32_t incarnation; /* instances started after the first (restarts and updates): restarted=N */
	uint32_t build_id;    /* of the running instance's binary (module_build_id) */
	char binary_now[32];  /* the running instance's binary (a live update changes it) */
	uint64_t started_ns, restart_at_ns, delay_ms;
	bool stopped;      /* ended and not to be restarted */
	bool absent;       /* optional, its PCI device missing: stopped for good (RS_ST_ABSENT) */
	bool restart_now;  /* killed by RS_RESTART: start again without back-off */
	/* Heartbeat (heartbeat_ms > 0): a page the service bumps, looked at four times a period;
	 * a service whose counter has not moved for a period since a ping is hung. */
	int64_t hb_handle;
	volatile uint64_t *hb;
	uint64_t hb_last, hb_check_ns;
	uint64_t hb_ping_ns;   /* when it was pinged (the counter had stopped) */
	uint64_t hb_cpu_us;    /* its CPU time when pinged (rs_hang.c) */
	uint32_t hb_starved;   /* periods in a row it was starved, not hung */
	uint32_t hb_waited;    /* periods in a row it waited in a call on a peer */
	bool hb_pinged;
	bool hb_seen;          /* it has beaten since it started */
	/* Commands waiting for the service to fetch them (RS_CMD): a bit per RS_DO_*. */
	uint32_t cmds;
	/* Complaints about channels that stopped moving (rs_stall.c): the latest this service
	 * made about a peer, and the ones made about this instance. */
	struct { endpoint_t peer; uint64_t since_ns, last_ns; } said;
	struct { uint64_t first_ns, last_ns, cpu_us; bool told; } accused;
	char word[RS_WORD_LEN];
	endpoint_t ds_for_cmd; /* RS_DO_DS: the new ds */
	/* Live update in progress. */
	struct {
		enum update_phase phase;
		char binary[32];
		char old_binary[32];
		endpoint_t requester;  /* the service command waiting for the outcome */
		endpoint_t next;       /* the new instance */
		bool old_waiting;      /* the old instance is blocked in RS_QUIESCED */
		bool replacing;        /* it quiesced for a replacement: it is being ended */
		uint64_t deadline_ns;
		uint64_t asked_ns;     /* when the update was asked for: the stall is measured from it */
	} up;
	endpoint_t retired; /* an instance rs ended on purpose: its exit is no crash */
	/* keep: the ended instance whose handles the kernel keeps for the next one (KC_LEGACY),
	 * 0: none; legacy_given: how many the running instance got (-1: none). */
	endpoint_t legacy_of;
	int64_t legacy_given;
	/* pci=VVVV:DDDD,...: the function found (the first id of the list that is present),
	 * resolved once at the first start (rs_pci.c) and kept, so a restart never probes a
	 * BAR of a device another instance may still use. */
	bool pci_resolved;
	struct svc_pci {
		uint16_t bdf;
		uint8_t irq;                           /* ISA line 1..15, or 0: none */
		uint8_t nmmio, nio;
		struct { uint64_t pa, pages; } mmio[6]; /* memory BARs, page-rounded */
		struct { uint16_t port, count; } io[6]; /* I/O BARs */
	} pci_found;
};

extern struct svc *svcs; /* MAX_SVC, in memory kept for our successor */
extern int nsvc;
extern bool rs_watched; /* the kernel's watchdog is armed on us (KC_ALIVE): our hang is noticed */

struct svc *svc_by_name(const char *name);
struct svc *svc_by_ep(endpoint_t ep);
uint32_t svc_state(const struct svc *s);

/* rs.c */
bool waiting_for_rs(endpoint_t ep); /* blocked in a call to rs that is not answered yet */
/* Logs an event: a console line "rs: ..." and an entry in the event log (RS_LOG). */
void rs_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void rs_log_read(struct kmsg *m); /* RS_LOG */
int64_t svc_start(struct svc *s, const char *binary, enum start_kind kind);
/* A boot module's bytes, mapped read-only once; NULL if there is no such module. */
const uint8_t *module_bytes(const char *binary, size_t *len);
/* A boot module's build id: FNV-1a of its bytes (what `service list` shows), 0 if unknown. */
uint32_t module_build_id(const char *binary);
/* An update by replacement: the old instance has ended; the new binary starts as a restart. */
void svc_replace(struct svc *s, const struct kmsg *report);
void svc_queue_cmd(struct svc *s, uint32_t cmd);
void svc_heartbeat_reset(struct svc *s);

/* rs_ds.c: every message to ds goes through an outbox sent without blocking (rs never waits
 * for anyone), retried until ds takes it. */
void rsds_registered(struct svc *s, endpoint_t ep); /* label s->c.name now belongs to ep */
void rsds_publish(const struct svc *s);             /* rs/NAME = {endpoint, restarts, state} */
void rsds_resync(void);                             /* a new rs: every label and state again */
void rsds_ds_started(struct svc *ds);               /* ds (re)started: register and publish all */
bool rsds_flush(void);                              /* true if messages are still waiting */

/* rs_pci.c: services named by PCI id (pci=VVVV:DDDD[#n]). */
/* Finds the functions of s's ids (once); 0, or -KE_SRCH after logging the missing device. */
int64_t rspci_resolve(struct svc *s);
/* Gives ep the functions found, their BARs and interrupt lines; 0 or the first error. */
int64_t rspci_give(const struct svc *s, endpoint_t ep);
/* Appends " pci=BB:DD.F" for each function s uses (by id or by address); returns the
 * new length. */
int rspci_args(const struct svc *s, char *buf, size_t cap, int n);

/* rs_ctl.c */
void rsctl_message(struct kmsg *m);
uint64_t rsctl_check_updates(void); /* deadlines; ns until the next one, 0 if none */
/* An instance in a live update ended: the new one (ep) before it was ready, roll back; the
 * old one (ep 0), abandon the update (its restart follows). */
void rsctl_update_died(struct svc *s, endpoint_t ep);
/* A replacement's new instance failed: logged, the update answered; the caller restarts
 * the service's configured binary. */
void rsctl_replace_failed(struct svc *s, const char *why);

/* rs_hang.c: is a service that missed its heartbeat hung, only starved of CPU, or waiting
 * for a peer that is slow, starting or stuck itself? */
enum hang_verdict { HV_HUNG, HV_STARVED, HV_WAITING };
#define HANG_CHAIN_MAX 8
/* A wait on a peer longer than both is taken for a hang (the peer never answers, and no
 * heartbeat of its own may catch it): 4 periods and 20 s, longer than a server's start
 * (tcp's 8 MiB pool took 6 s under a loaded TCG host). */
#define HANG_WAIT_PERIODS 4
#define HANG_WAIT_MS 20000
/* A service that has not beaten since it started is not hung before this (a restarted
 * tcp formats an 8 MiB pool; 1 s periods must not kill it for that). */
#define HANG_START_NS 10000000000ull
uint64_t hang_cpu_us(endpoint_t ep);

/* rs_stall.c: RS_COMPLAIN from c: 1 if the accused was restarted, 0 if noted, or -KE_*. */
int64_t stall_complaint(struct svc *c, const struct kmsg *m);
/* Lines bound KIRQ_WATCHED left masked for seconds: their drivers' stalls (once a second). */
void stall_irq_check(void);
/* where gets what the thread was doing, for the log; end, the thread at the end of the
 * chain of calls it waits in (HV_STARVED, HV_WAITING; 0 if none). */
enum hang_verdict hang_judge(endpoint_t ep, uint64_t cpu_us_at_ping, uint32_t period_ms, char *where, size_t n,
			     endpoint_t *end);
