/* pf's rules: the text form (pf.conf, `pf add`), the compact binary form (one 24-byte ds
 * value each), parsing and printing. Pure code: no libc, host-tested (tests/unit/test_pf_rules.c). */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PF_MAX_RULES 256
#define PF_LINE_MAX 256   /* longest rule line */
#define PF_ERR_LEN 96

/* Rule flags. */
#define PFR_IN 1      /* direction in (neither IN nor OUT: both) */
#define PFR_OUT 2
#define PFR_QUICK 4   /* a match ends the search */
#define PFR_STATE 8   /* keep state */
#define PFR_ON 16     /* on IFINDEX (else any interface) */
#define PFR_PROTO 32  /* proto N (else any protocol) */
#define PFR_SPORT 64  /* from ... port P-Q */
#define PFR_DPORT 128 /* to ... port P-Q */

/* One rule, exactly one ds value. Addresses in host order, ports in host order. */
struct pf_rule {
	uint8_t action;   /* PF_PASS or PF_BLOCK (pf_proto.h) */
	uint8_t flags;    /* PFR_* */
	uint8_t ifindex;
	uint8_t proto;
	uint32_t src, dst;
	uint8_t src_len, dst_len; /* prefix lengths 0..32 (0 = any) */
	uint16_t sport_lo, sport_hi, dport_lo, dport_hi;
	uint16_t pad;     /* 0 */
};
_Static_assert(sizeof(struct pf_rule) == 24, "one ds value");

/* Parses one line (len bytes, no newline needed). 1: a rule in *r; 0: blank or comment;
 * -1: an error, described in err (e.g. "unknown word 'frm'"). */
int pf_parse_line(const char *s, size_t len, struct pf_rule *r, char err[PF_ERR_LEN]);
/* Parses a whole file into rules[0..max). The number of rules, or -1 with err holding
 * "pf: line N: ..." (nothing of the file is to be used then). */
int pf_parse_file(const char *text, size_t len, struct pf_rule *rules, int max, char err[PF_ERR_LEN]);
/* Whether a binary rule (from ds, say) is one the parser could have made. */
bool pf_rule_valid(const struct pf_rule *r);
/* The rule's text form, which pf_parse_line reads back to the same rule; NUL-terminated,
 * truncated to cap. Returns its length. */
size_t pf_rule_format(const struct pf_rule *r, char *out, size_t cap);
/* Dotted quad of a host-order address into out (16 bytes). */
void pf_addr_format(uint32_t a, char out[16]);
