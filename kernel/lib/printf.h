#pragma once
#include "lib/types.h"

/* Formats like C's vsnprintf for the subset the kernel uses:
 * %d %i %u %x %X %o %p %s %c %% with flags '-', '0', ' ', '+', '#', a width and a precision
 * (numbers or '*'), and the length modifiers hh h l ll z t j.
 * Always NUL-terminates when n > 0; returns the length the full output would have had. */
int kvsnprintf(char *buf, size_t n, const char *fmt, va_list ap);
int ksnprintf(char *buf, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
