#include "console/log.h"
#include "console/serial.h"
#include "console/vga.h"
#include "lib/printf.h"
#include "lib/spinlock.h"
#include "arch/time.h"
#include "smp/percpu.h"

static spinlock_t console_lock = SPINLOCK_INIT;
static volatile bool locks_broken;
static enum log_level max_level = LOG_INFO;

void log_set_level(enum log_level lvl) { max_level = lvl; }

void console_break_locks(void) { locks_broken = true; }
void console_mend_locks(void) { locks_broken = false; }

static uint64_t console_lock_acquire(void)
{
	uint64_t f = irq_save();
	if (locks_broken) {
		/* After a panic: try briefly, then write anyway rather than hang. */
		for (int i = 0; i < 1000000; i++)
			if (spin_trylock(&console_lock))
				return f | (1ull << 63);
		return f;
	}
	spin_lock(&console_lock);
	return f | (1ull << 63);
}

static void console_lock_release(uint64_t f)
{
	if (f & (1ull << 63))
		spin_unlock(&console_lock);
	irq_restore(f & ~(1ull << 63));
}

static void emit(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		serial_putc(s[i]);
		vga_putc(s[i]);
	}
}

void console_write(const char *s, size_t n)
{
	uint64_t f = console_lock_acquire();
	emit(s, n);
	console_lock_release(f);
}

void klog(enum log_level lvl, const char *fmt, ...)
{
	static const char tag[] = "EWID";
	if (lvl > max_level)
		return;
	char line[512];
	uint64_t us = time_us_since_boot();
	int n = ksnprintf(line, sizeof(line), "[%5llu.%06llu] cpu%u %c: ",
			  (unsigned long long)(us / 1000000), (unsigned long long)(us % 1000000),
			  this_cpu_index(), tag[lvl]);
	va_list ap;
	va_start(ap, fmt);
	n += kvsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
	va_end(ap);
	if (n > (int)sizeof(line) - 2)
		n = sizeof(line) - 2;
	if (n == 0 || line[n - 1] != '\n')
		line[n++] = '\n';
	console_write(line, (size_t)n);
}

void kprintf(const char *fmt, ...)
{
	char line[512];
	va_list ap;
	va_start(ap, fmt);
	int n = kvsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n > (int)sizeof(line) - 1)
		n = sizeof(line) - 1;
	console_write(line, (size_t)n);
}
