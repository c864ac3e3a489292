/* Tiny host unit-test framework. Include it first (before any kernel header).
 * A case is a `static void name(void)`; CHECK* record the case's first failure and go on,
 * REQUIRE returns from the case. main: unit_begin(__FILE__); RUN(a); RUN(b); return unit_end();
 * Output: one `PASS <file>.<case>` / `FAIL <file>.<case>: <why> at <file>:<line>` line per
 * case, then `UNIT SUMMARY <file>: N passed, N failed`. A case running over UNIT_TIMEOUT
 * seconds prints a FAIL line and ends the process. */
#pragma once
#define _POSIX_C_SOURCE 200809L
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef UNIT_TIMEOUT /* a file may allow its cases more */
#define UNIT_TIMEOUT 30
#endif
#define UNIT_USED __attribute__((unused))
static UNIT_USED char unit_file[64], unit_why[512], unit_timeout_msg[192];
static UNIT_USED int unit_case_failed, unit_npass, unit_nfail;

static UNIT_USED __attribute__((format(printf, 3, 4))) void unit_fail(const char *file, int line,
								    const char *fmt, ...)
{
	if (unit_case_failed++)
		return;
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(unit_why, sizeof(unit_why) - 64, fmt, ap);
	va_end(ap);
	n = n < 0 ? 0 : n > (int)sizeof(unit_why) - 65 ? (int)sizeof(unit_why) - 65 : n;
	snprintf(unit_why + n, sizeof(unit_why) - (size_t)n, " at %s:%d", file, line);
	for (char *p = unit_why; *p; p++) /* one printable line, whatever the values held */
		if ((unsigned char)*p < 0x20 || (unsigned char)*p > 0x7e)
			*p = '?';
}

#define CHECK(c) ((c) ? (void)0 : unit_fail(__FILE__, __LINE__, "CHECK(%s)", #c))
#define CHECK_EQ_U64(a, b) do { unsigned long long a_ = (uint64_t)(a), b_ = (uint64_t)(b); \
	if (a_ != b_) unit_fail(__FILE__, __LINE__, "%s == %s: %llu (%#llx) != %llu (%#llx)", \
				#a, #b, a_, a_, b_, b_); } while (0)
#define CHECK_EQ_I64(a, b) do { long long a_ = (int64_t)(a), b_ = (int64_t)(b); \
	if (a_ != b_) unit_fail(__FILE__, __LINE__, "%s == %s: %lld != %lld", #a, #b, a_, b_); \
	} while (0)
#define CHECK_STR(a, b) do { const char *a_ = (a), *b_ = (b); if (strcmp(a_, b_)) \
	unit_fail(__FILE__, __LINE__, "%s == %s: \"%s\" != \"%s\"", #a, #b, a_, b_); } while (0)
#define REQUIRE(c) do { if (!(c)) { unit_fail(__FILE__, __LINE__, "REQUIRE(%s)", #c); return; } \
	} while (0)
/* Little-endian stores, for building the binary images parsers are tested on. */
static UNIT_USED void put16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)v, p[1] = (uint8_t)(v >> 8); }
static UNIT_USED void put32(uint8_t *p, uint32_t v) { put16(p, (uint16_t)v), put16(p + 2, (uint16_t)(v >> 16)); }
static UNIT_USED void put64(uint8_t *p, uint64_t v) { put32(p, (uint32_t)v), put32(p + 4, (uint32_t)(v >> 32)); }
#define UNIT_FAILED() (unit_case_failed != 0)
#define RUN(fn) unit_run(#fn, fn)

static UNIT_USED void unit_on_alarm(int sig)
{
	(void)sig;
	ssize_t r = write(1, unit_timeout_msg, strlen(unit_timeout_msg));
	(void)r;
	_exit(2);
}

static UNIT_USED void unit_begin(const char *path)
{
	const char *b = strrchr(path, '/');
	snprintf(unit_file, sizeof(unit_file), "%s", b ? b + 1 : path);
	char *dot = strrchr(unit_file, '.');
	if (dot)
		*dot = '\0';
	signal(SIGALRM, unit_on_alarm);
}

static UNIT_USED void unit_run(const char *name, void (*fn)(void))
{
	unit_case_failed = 0;
	snprintf(unit_timeout_msg, sizeof(unit_timeout_msg), "FAIL %s.%s: timed out after %d s\n",
		 unit_file, name, UNIT_TIMEOUT);
	alarm(UNIT_TIMEOUT);
	fn();
	alarm(0);
	if (unit_case_failed)
		printf("FAIL %s.%s: %s\n", unit_file, name, unit_why), unit_nfail++;
	else
		printf("PASS %s.%s\n", unit_file, name), unit_npass++;
	fflush(stdout);
}

static UNIT_USED int unit_end(void)
{
	printf("UNIT SUMMARY %s: %d passed, %d failed\n", unit_file, unit_npass, unit_nfail);
	return unit_nfail != 0;
}

/* Fixed-seed xorshift64 for fuzz and model tests (state must not be 0). */
static inline uint64_t unit_rand(uint64_t *s)
{
	uint64_t x = *s;
	x ^= x << 13, x ^= x >> 7, x ^= x << 17;
	return *s = x;
}
