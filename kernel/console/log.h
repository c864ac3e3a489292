/* Kernel log: levels, a timestamp and the CPU on every line, output to every console. */
#pragma once
#include "lib/types.h"

enum log_level { LOG_ERR = 0, LOG_WARN = 1, LOG_INFO = 2, LOG_DEBUG = 3 };

void log_set_level(enum log_level lvl);
void klog(enum log_level lvl, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Raw output without prefix, for machine-readable lines (self-test results). */
void kprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void console_write(const char *s, size_t n);
/* Called on panic: later output must never wait for a lock another CPU may hold. */
void console_break_locks(void);
/* Ends console_break_locks (the NMI hang report, which goes on afterwards). */
void console_mend_locks(void);

#define pr_err(...) klog(LOG_ERR, __VA_ARGS__)
#define pr_warn(...) klog(LOG_WARN, __VA_ARGS__)
#define pr_info(...) klog(LOG_INFO, __VA_ARGS__)
#define pr_debug(...) klog(LOG_DEBUG, __VA_ARGS__)
