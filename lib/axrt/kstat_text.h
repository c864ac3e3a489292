/* The kernel's activity counters (axolotl/kstat.h) as text: one "name value" line each,
 * then "kcall.NAME calls wait_cycles hold_cycles" for every kernel call made at least once
 * ("kcall.linux" for the Linux calls together). /proc/axolotl/kstat (vfs) and the console's
 * `perf` print this; make bench reads it before and after each load. */
#pragma once
#include <stddef.h>
#include <stdint.h>
#include <axolotl/kstat.h>

extern const char *const kstat_names[KST_COUNT];
/* The name of kernel call n (KC_COUNT: "linux"), or NULL. */
const char *kstat_kcall_name(uint32_t n);
/* Writes the text into buf (NUL-terminated, cut at size); returns its length, or -1 if a
 * counter could not be read. */
int kstat_format(char *buf, size_t size);
