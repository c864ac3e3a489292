/* In-kernel self-tests, run when the command line says tests=<name,...|all>.
 * Each prints one machine-readable result line on the console:
 *   KTEST PASS <name> <microseconds>us
 *   KTEST FAIL <name>: <reason>
 *   KTEST SKIP <name>: <reason>
 * and the run ends with `KTEST SUMMARY passed=N failed=N skipped=N`. */
#pragma once
#include "lib/types.h"

enum ktest_result { KTEST_OK = 0, KTEST_FAILED = 1, KTEST_SKIPPED = 2 };

struct ktest {
	const char *name;
	enum ktest_result (*fn)(void);
	bool explicit_only; /* not part of tests=all (e.g. the deliberate panic) */
};

#define KTEST_DEFINE(tname, explicit)                                                   \
	static enum ktest_result ktest_fn_##tname(void);                                 \
	static const struct ktest ktest_##tname __section(".ktests") __aligned(8) __attribute__((used)) = \
		{ #tname, ktest_fn_##tname, explicit };                                  \
	static enum ktest_result ktest_fn_##tname(void)
#define KTEST(tname) KTEST_DEFINE(tname, false)
#define KTEST_EXPLICIT(tname) KTEST_DEFINE(tname, true)

void ktest_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void ktest_skip(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Informational line tied to the running test: `KTEST INFO <name> <text>`. */
void ktest_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#define KT_ASSERT(cond, ...)                       \
	do {                                       \
		if (!(cond)) {                     \
			ktest_fail(__VA_ARGS__);   \
			return KTEST_FAILED;       \
		}                                  \
	} while (0)

/* Runs the selected tests; returns the number that failed. */
int ktest_run(const char *list);
