/* pf's side of the flow table (lib/net/pf_flow.h): ip's memory, imported with the
 * channels; every pass of a packet that may take the fast path is recorded, every rule
 * change voids the table. Without it (an ip that does not export one) ip asks for every
 * packet, as before. */
#include "pf.h"
#include "pf_flow.h"
#include "chan_name.h"

static struct chan_import mem;
static struct pf_flow_table *table;

void pf_flows_attach(void)
{
	pf_flows_detach();
	int64_t e = chan_import("ip", "pf.flows", &mem);
	if (e == 0 && mem.bytes >= sizeof(struct pf_flow_table)) {
		table = mem.va;
		return;
	}
	if (e == 0)
		chan_unimport(&mem);
	mem = (struct chan_import){ 0 };
	ax_printf("pf: no flow table from ip (%lld): ip asks for every packet\n", (long long)(e ? e : -KE_INVAL));
}

void pf_flows_detach(void)
{
	if (table)
		chan_unimport(&mem);
	mem = (struct chan_import){ 0 };
	table = NULL;
}

/* Any passed UDP or TCP packet, its SYN too: our verdict depends on the key alone (no rule
 * matches TCP flags; a connection's state is found by its key), so the packets after it
 * with that key would pass as well. The SYN itself always comes here (pf_flow.h). */
void pf_flows_judged(const struct pf_req *req, uint32_t verdict, uint64_t now)
{
	struct pf_flow_key k;
	uint8_t flags;
	if (!table || verdict != PF_PASS || req->hdr_len > PF_HDR_MAX ||
	    !pf_flow_key_any(req->hdr, req->hdr_len, req->dir, req->ifindex, &k, &flags))
		return;
	pf_flow_put(table, &k, now);
	if (k.proto == 6 && (flags & (PF_FLOW_SYN | PF_FLOW_ACK)) == PF_FLOW_SYN &&
	    pf_filter_reply_passes(&pf_f, req, now)) {
		/* A SYN whose SYN-ACK would pass (pf_filter_reply_passes): the answer's flow, and
		 * the SYN-ACK itself, pass without asking; two switches fewer per connection. */
		struct pf_flow_key r = pf_flow_key_reverse(&k);
		pf_flow_put(table, &r, now);
		r.zero = PF_FLOW_K_SYNACK;
		pf_flow_put(table, &r, now);
	}
}

void pf_flows_rules_changed(void)
{
	if (table)
		pf_flow_invalidate(table);
}
