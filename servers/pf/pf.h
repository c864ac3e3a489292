/* pf, the packet filter server (README.md): what its files share. */
#pragma once
#include "axrt.h"
#include "filter.h"

/* Notification bits pf sends ip with a ring of ip/pf.ans's doorbell (chan_kick: only when
 * ip has raised that channel's `sleeping` flag). */
#define PF_ANS_WAKE_BIT (1ull << 8)
#define PF_LABEL "pf"
#define PF_ENOENT 2 /* Linux's ENOENT: a NETQ topic not served here */

extern struct pf_filter pf_f;

/* Rule list changes made at run time; each saves the list in ds. 0 or -KE_*. */
int pf_rules_replace(const struct pf_rule *rules, int n);
int pf_rules_add(const struct pf_rule *r);
int pf_rules_del(int number); /* 1-based */
/* pf.conf, the boot module: its rules (count), 0 rules when it is absent (*absent set), or
 * -1 with err ("pf: line N: ..."). */
int pf_conf_read(struct pf_rule *rules, int max, char err[PF_ERR_LEN], bool *absent);

/* store.c: the rules in ds ("r.N" = one struct pf_rule, "nrules" = struct pf_ds_count). */
void pf_store_save(void);
/* The rules saved in ds: their number, or -1 if there are none or they do not check out. */
int pf_store_load(struct pf_rule *rules, int max);
/* Connection-table entries for the connected sockets in udp's and tcp's tables in ds;
 * returns how many were made. */
int pf_store_rebuild_states(struct pf_filter *f, uint64_t now);

/* flows.c: the flow table ip may pass packets by (lib/net/pf_flow.h). */
struct pf_req;
void pf_flows_attach(void);  /* import ip/pf.flows (after the channels) */
void pf_flows_detach(void);
void pf_flows_judged(const struct pf_req *req, uint32_t verdict, uint64_t now);
void pf_flows_rules_changed(void);

/* query.c: NETQ_SHOW and NETQ_PF (lib/net/netq_proto.h); true if m was one (answered). */
bool pf_query(struct kmsg *m);
