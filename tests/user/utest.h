/* What the user-level test programs (utest, udev) share: the UTEST PASS/FAIL line protocol
 * that tests/system parses, and a seeded random source for their fuzzers. */
#pragma once
#include "axrt.h"

static int failures;
/* Report the test case as failed and leave it (the enclosing function returns). */
#define FAIL(name, ...)                                  \
	do {                                             \
		ax_printf("UTEST FAIL %s: ", name);      \
		ax_printf(__VA_ARGS__);                  \
		ax_printf("\n");                         \
		failures++;                              \
		return;                                  \
	} while (0)
#define CHECK(name, cond, ...)                     \
	do {                                       \
		if (!(cond))                       \
			FAIL(name, __VA_ARGS__);   \
	} while (0)

/* xorshift64: reproducible runs from a fixed seed. */
static inline uint64_t xorshift64(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}
