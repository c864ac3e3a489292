/* A statistics register's new events. The 8254x manual has every statistics register
 * clear on read; QEMU's e1000 and e1000e clear some (GPRC, GPTC, GORC, GOTC) but keep
 * CRCERRS through MPC and RNBC as running totals, so summing reads counted the same drops
 * again at every look (netstat's rx_no_buffer grew by 23 per query with no traffic).
 * So the register is read twice in a row: one that clears reads (about) 0 the second time,
 * a running total at least as much as the first. The first look that sees 4 or more
 * events decides for good (fewer could honestly recur between two reads on a busy link);
 * until then a running total's 1 to 3 events may be counted again. */
#ifndef E1K_STAT_H
#define E1K_STAT_H
#include <stdbool.h>
#include <stdint.h>

#define E1K_STAT_DECIDE 4

struct e1k_stat {
	bool decided, running_total;
	uint32_t last; /* the second read of the previous look */
};

/* first and second: two reads of the register, one right after the other. */
static inline uint32_t e1k_stat_new(struct e1k_stat *s, uint32_t first, uint32_t second)
{
	if (!s->decided && first >= E1K_STAT_DECIDE) {
		s->decided = true;
		s->running_total = second >= first;
	}
	uint32_t prev = s->last;
	s->last = second;
	return s->running_total ? second - prev : first + second; /* (wraps as the register does) */
}
#endif
