#include "core/ktest.h"
#include "boot/cmdline.h"
#include "console/log.h"
#include "arch/time.h"
#include "lib/printf.h"

extern const struct ktest _ktests_start[], _ktests_end[];
static const struct ktest *current;
static char reason[256];

static void vrecord(const char *fmt, va_list ap)
{
	kvsnprintf(reason, sizeof(reason), fmt, ap);
}

void ktest_fail(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vrecord(fmt, ap);
	va_end(ap);
}

void ktest_skip(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vrecord(fmt, ap);
	va_end(ap);
}

void ktest_info(const char *fmt, ...)
{
	char line[256];
	va_list ap;
	va_start(ap, fmt);
	kvsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	kprintf("KTEST INFO %s %s\n", current ? current->name : "-", line);
}

int ktest_run(const char *list)
{
	int passed = 0, failed = 0, skipped = 0;
	for (const struct ktest *t = _ktests_start; t < _ktests_end; t++) {
		if (!list_contains(list, t->name, !t->explicit_only))
			continue;
		current = t;
		reason[0] = 0;
		kprintf("KTEST START %s\n", t->name);
		uint64_t t0 = time_us_since_boot();
		enum ktest_result r = t->fn();
		uint64_t us = time_us_since_boot() - t0;
		if (r == KTEST_OK) {
			passed++;
			kprintf("KTEST PASS %s %lluus\n", t->name, (unsigned long long)us);
		} else if (r == KTEST_SKIPPED) {
			skipped++;
			kprintf("KTEST SKIP %s: %s\n", t->name, reason);
		} else {
			failed++;
			kprintf("KTEST FAIL %s: %s\n", t->name, reason[0] ? reason : "(no reason given)");
		}
	}
	current = NULL;
	kprintf("KTEST SUMMARY passed=%d failed=%d skipped=%d\n", passed, failed, skipped);
	return failed;
}
