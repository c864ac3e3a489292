/* The kernel's activity counters (axolotl/kstat.h) and its threads as text: one "name value" line each,
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
/* Every thread of every process, one line each: endpoint, CPU ("p": pinned there), state,
 * times switched to, CPU time, the address space's page-table root (what tools/qprof.py
 * sees) and the process's name (KI_THREAD_STAT). Returns the text's
 * length (cut at size), or -1 if not even the header fits. /proc/axolotl/threads and the
 * console's `threads` print this; make bench reads it around each load. */
int threads_format(char *buf, size_t size);
/* The switch trace (KI_SWTRACE): the last context switches that fit, oldest first, one line
 * each: sequence number, TSC, CPU, the process switched from and to ("idle": the idle
 * thread), and why the first gave the CPU up (the kernel call it blocked in, "lx.N" a Linux
 * call, "irq", "preempt", "idle"), and who made the second ready (a process, "irq", or
 * "kernel"). /proc/axolotl/switches; tools/bench/switches.py reads it. */
int switches_format(char *buf, size_t size);
/* Writes the text into buf (NUL-terminated, cut at size); returns its length, or -1 if a
 * counter could not be read. */
int kstat_format(char *buf, size_t size);
