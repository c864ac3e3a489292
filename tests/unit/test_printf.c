/* kvsnprintf/ksnprintf (kernel/lib/printf.c) against the host's snprintf, for the subset
 * printf.h documents: %d %i %u %x %X %o %p %s %c %%, flags - 0 space + #, width and
 * precision (digits or '*'), length modifiers hh h l ll z t j. */
#include "unit.h"
#include <limits.h>
#include <stddef.h>
#include "lib/printf.h"

/* Formats with both implementations and compares text and return value. */
#define SAME(fmt, ...) do { \
	char k_[256], h_[256]; \
	memset(k_, 0x55, sizeof(k_)); \
	int kr_ = ksnprintf(k_, sizeof(k_), fmt, __VA_ARGS__); \
	int hr_ = snprintf(h_, sizeof(h_), fmt, __VA_ARGS__); \
	if (strcmp(k_, h_) || kr_ != hr_) \
		unit_fail(__FILE__, __LINE__, "format \"%s\": kernel \"%s\" (%d), host \"%s\" (%d)", \
			  fmt, k_, kr_, h_, hr_); \
	} while (0)

/* The same for flag combinations gcc's format check warns about (all defined by C). */
#define SAME_NC(fmt, ...) do { const char *volatile f_ = fmt; SAME(f_, __VA_ARGS__); } while (0)

/* Expects a fixed output (for what differs from the host or is outside C's rules). */
#define KEXPECT(want, fmt, ...) do { \
	char k_[256]; \
	int kr_ = ksnprintf(k_, sizeof(k_), fmt, __VA_ARGS__); \
	CHECK_STR(k_, want); \
	CHECK_EQ_I64(kr_, (int)strlen(want)); \
	} while (0)

/* Not format-checked: for conversions the kernel treats as mistakes. */
static int kfmt_unchecked(char *buf, size_t n, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = kvsnprintf(buf, n, fmt, ap);
	va_end(ap);
	return r;
}

static void signed_decimal(void)
{
	SAME("%d", 0);
	SAME("%d", 42);
	SAME("%d", -42);
	SAME("%i", 123456);
	SAME("%d|%d", INT_MAX, INT_MIN);
	SAME("%ld", LONG_MIN);
	SAME("%lld", (long long)INT64_MIN);
	SAME("%lld", (long long)INT64_MAX);
	SAME("%li", -1L);
	SAME("%hd", (short)-1234);
	SAME("%hd", 70000); /* converted to short */
	SAME("%hhd", 300);  /* converted to signed char */
	SAME("%hhd", -129);
	SAME("%zd", (ptrdiff_t)-5);
	SAME("%td", (ptrdiff_t)-77777777777);
	SAME("%jd", (intmax_t)INT64_MIN);
}

static void unsigned_and_hex(void)
{
	SAME("%u", 0u);
	SAME("%u", UINT_MAX);
	SAME("%x", 0xdeadbeefu);
	SAME("%X", 0xdeadbeefu);
	SAME("%lx", 0x123456789abcdef0ul);
	SAME("%llu", (unsigned long long)UINT64_MAX);
	SAME("%llx", (unsigned long long)UINT64_MAX);
	SAME("%lu", ULONG_MAX);
	SAME("%zu", (size_t)SIZE_MAX);
	SAME("%zx", (size_t)4096);
	SAME("%hu", 65537u);
	SAME("%hhx", 0x1ffu);
	SAME("%hhu", (unsigned)-1);
	SAME("%jx", (uintmax_t)1 << 63);
	SAME("%u", -1); /* int passed to %u: reinterpreted as unsigned */
	SAME("%o", 8u);
	SAME("%llo", (unsigned long long)UINT64_MAX);
	SAME("%o", 0u);
}

static void widths_and_flags(void)
{
	SAME("[%5d]", 42);
	SAME("[%-5d]", 42);
	SAME("[%05d]", 42);
	SAME("[%05d]", -42);
	SAME_NC("[%-05d]", -42); /* '-' wins over '0' */
	SAME("[%+d]", 42);
	SAME("[%+d]", 0);
	SAME("[% d]", 42);
	SAME("[% d]", -42);
	SAME_NC("[%+ d]", 42); /* '+' wins over ' ' */
	SAME("[%+05d]", 7);
	SAME("[% 05d]", 7);
	SAME("[%1d]", 12345); /* width smaller than the number */
	SAME("[%20llu]", (unsigned long long)UINT64_MAX);
	SAME("[%-25lld]", (long long)INT64_MIN);
	SAME("[%025lld]", (long long)INT64_MIN);
	SAME("[%08x]", 0xbeefu);
	SAME("[%-8X]", 0xbeefu);
	SAME("[%#x]", 0xbeefu);
	SAME("[%#X]", 0xbeefu);
	SAME("[%#x]", 0u); /* no prefix for zero */
	SAME("[%#010x]", 0xbeefu);
	SAME("[%#10x]", 0xbeefu);
	SAME("[%-#10x]", 0xbeefu);
	SAME("[%#o]", 8u);
	SAME("[%#o]", 0u);
	SAME("[%#5o]", 1u);
	SAME_NC("[%+u]", 5u); /* sign flags do nothing for unsigned conversions */
	SAME_NC("[% x]", 5u);
	SAME("[%*d]", 6, 42);
	SAME("[%*d]", -6, 42); /* negative '*' width: left-justified */
	SAME("[%-*d]", 6, 42);
	SAME("[%0*d]", 6, -42);
}

static void precision(void)
{
	SAME("[%.3d]", 7);
	SAME("[%.3d]", -7);
	SAME("[%8.3d]", -7);
	SAME("[%-8.3d]", -7);
	SAME_NC("[%08.3d]", 7); /* '0' is ignored when a precision is given */
	SAME("[%.0d]", 0);   /* zero with precision 0 prints no digits */
	SAME("[%5.0d]", 0);
	SAME("[%+.0d]", 0);
	SAME("[%.0x]", 0u);
	SAME("[%.0u]", 0u);
	SAME("[%.1d]", 0);
	SAME("[%.10lx]", 0xabcul);
	SAME("[%#.8x]", 0xabcu);
	SAME("[%#.3o]", 8u);  /* precision already gives the leading zero */
	SAME("[%#.0o]", 0u);  /* '#' forces the single zero digit */
	SAME("[%#.0x]", 0u);  /* no digits and no prefix */
	SAME("[%#5.0x]", 0u);
	SAME("[%.*d]", 4, 3);
	SAME("[%.*d]", -4, 3); /* negative '*' precision: as if omitted */
	SAME("[%.*d]", -1, 0);
	SAME("[%.*s]", -1, "hello");
	SAME("[%*.*d]", 8, 4, -3);
	SAME("[%.d]", 0);      /* '.' alone means precision 0 */
}

static void strings_and_chars(void)
{
	SAME("[%s]", "hello");
	SAME("[%s]", "");
	SAME("[%10s]", "hello");
	SAME("[%-10s]", "hello");
	SAME("[%2s]", "hello");
	SAME("[%.3s]", "hello");
	SAME("[%.0s]", "hello");
	SAME("[%.10s]", "hello");
	SAME("[%8.3s]", "hello");
	SAME("[%-8.3s]", "hello");
	SAME("[%*.*s]", -7, 2, "hello");
	SAME("[%.*s]", 3, "hello");
	SAME("[%c]", 'x');
	SAME("[%3c]", 'x');
	SAME("[%-3c]", 'x');
	SAME("[%c%c%c]", 'a', 'b', 'c');
	SAME("[%c]", 200); /* converted to char */
	SAME("[%%]%s", "");
	SAME("100%% %s %d%%", "of", 5);
	SAME("%s", "no conversions at all, just text");
	SAME("%s=%d %s=%#llx", "a", -1, "b", (unsigned long long)0xffffffff00000000ull);
	/* A precision bounds the read: the array is not NUL-terminated. */
	static const char unterminated[4] = { 'a', 'b', 'c', 'd' };
	SAME("[%.4s]", unterminated);
	SAME("[%.2s]", unterminated);
}

static void null_string_and_pointers(void)
{
	/* printf.c prints "(null)" for a NULL %s (glibc does too, but C leaves it undefined). */
	const char *volatile nul = NULL;
	KEXPECT("[(null)]", "[%s]", nul);
	KEXPECT("[  (null)]", "[%8s]", nul);
	KEXPECT("[(nu]", "[%.3s]", nul);
	/* %p: always "0x" and 16 zero-padded lower-case hex digits (glibc differs: "(nil)", no padding). */
	KEXPECT("0x0000000000000000", "%p", (void *)0);
	KEXPECT("0x0000000000001234", "%p", (void *)0x1234);
	KEXPECT("0xffff800000abcdef", "%p", (void *)0xffff800000abcdefull);
	KEXPECT("[0xffffffffffffffff]", "[%p]", (void *)UINTPTR_MAX);
	/* A wider field extends the zero padding. */
	KEXPECT("0x00000000000000001234", "%22p", (void *)0x1234);
	KEXPECT("[0x1234]", "[%1p]", (void *)0x1234); /* a narrower width only drops padding */
	/* Same as %#018lx on the host for nonzero values. */
	char k[64], h[64];
	void *ptrs[] = { (void *)1, (void *)0x7fffdeadbeefull, (void *)&k };
	for (size_t i = 0; i < sizeof(ptrs) / sizeof(ptrs[0]); i++) {
		ksnprintf(k, sizeof(k), "%p", ptrs[i]);
		snprintf(h, sizeof(h), "%#018lx", (unsigned long)(uintptr_t)ptrs[i]);
		CHECK_STR(k, h);
	}
}

static void unknown_conversions(void)
{
	char buf[32];
	/* Unknown conversion: "%" and the character are printed literally. */
	CHECK_EQ_I64(kfmt_unchecked(buf, sizeof(buf), "a%qb"), 4);
	CHECK_STR(buf, "a%qb");
	CHECK_EQ_I64(kfmt_unchecked(buf, sizeof(buf), "[%-5y]"), 4);
	CHECK_STR(buf, "[%y]");
	/* A '%' (with or without flags) at the very end ends the output. */
	CHECK_EQ_I64(kfmt_unchecked(buf, sizeof(buf), "abc%"), 3);
	CHECK_STR(buf, "abc");
	CHECK_EQ_I64(kfmt_unchecked(buf, sizeof(buf), "abc%-08l"), 3);
	CHECK_STR(buf, "abc");
}

static void truncation(void)
{
	const char *full = "value=-123456789 hex=0xabcdef str=hello";
	int len = (int)strlen(full);
	/* Every buffer size from 0 to past the end, on a heap block of exactly n bytes (ASan). */
	for (size_t n = 0; n <= (size_t)len + 3; n++) {
		char *b = malloc(n ? n : 1);
		memset(b, '#', n ? n : 1);
		int r = ksnprintf(n ? b : NULL, n, "value=%d hex=%#x str=%s", -123456789, 0xabcdefu,
				  "hello");
		CHECK_EQ_I64(r, len);
		if (n == 0) {
			CHECK(b[0] == '#'); /* n = 0 writes nothing */
		} else {
			size_t keep = n - 1 < (size_t)len ? n - 1 : (size_t)len;
			CHECK(memcmp(b, full, keep) == 0);
			CHECK(b[keep] == '\0');
			for (size_t i = keep + 1; i < n; i++)
				CHECK(b[i] == '#'); /* nothing written after the terminator */
		}
		free(b);
		if (UNIT_FAILED())
			return;
	}
	/* n = 0 with a NULL buffer only measures. */
	CHECK_EQ_I64(ksnprintf(NULL, 0, "%s-%d", "abc", 12345), 9);
	/* Padding and numbers are cut too, and the return value still counts them. */
	char small[4] = "zzz";
	CHECK_EQ_I64(ksnprintf(small, sizeof(small), "%10d", 5), 10);
	CHECK_STR(small, "   ");
	CHECK_EQ_I64(ksnprintf(small, sizeof(small), "%llu", (unsigned long long)UINT64_MAX), 20);
	CHECK_STR(small, "184");
	CHECK_EQ_I64(ksnprintf(small, 1, "%s", "abc"), 3);
	CHECK_STR(small, "");
	CHECK(small[1] == '8'); /* untouched past n */
}

/* kvsnprintf through a va_list, used twice (the kernel copies the list). */
static int kv_twice(char *a, char *b, size_t n, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r1 = kvsnprintf(a, n, fmt, ap);
	int r2 = kvsnprintf(b, n, fmt, ap);
	va_end(ap);
	return r1 == r2 ? r1 : -1;
}

static void va_list_is_not_consumed(void)
{
	char a[64], b[64];
	CHECK_EQ_I64(kv_twice(a, b, sizeof(a), "%d %s %llx", 7, "x", 0x10ull), 6);
	CHECK_STR(a, "7 x 10");
	CHECK_STR(b, "7 x 10");
}

/* Random conversion specifications, each compared with the host. */
static void random_specs_match_host(void)
{
	static const char convs[] = "diuxXocs";
	static const char *lens[] = { "", "hh", "h", "l", "ll", "z", "t", "j" };
	static const char *strs[] = { "", "a", "hello", "a longer string, 30 characters" };
	uint64_t seed = 0x9e3779b97f4a7c15ull;
	for (int iter = 0; iter < 200000 && !UNIT_FAILED(); iter++) {
		uint64_t r = unit_rand(&seed), v = unit_rand(&seed);
		char conv = convs[r % 8];
		r /= 8;
		bool isnum = conv != 'c' && conv != 's';
		char fmt[40], *p = fmt;
		*p++ = '<';
		*p++ = '%';
		/* Flags only where C defines them for the conversion. */
		if (r & 1) *p++ = '-';
		if ((r & 2) && isnum) *p++ = '0';
		if ((r & 4) && (conv == 'd' || conv == 'i')) *p++ = ' ';
		if ((r & 8) && (conv == 'd' || conv == 'i')) *p++ = '+';
		if ((r & 16) && (conv == 'x' || conv == 'X' || conv == 'o')) *p++ = '#';
		r >>= 5;
		if (r & 1)
			p += sprintf(p, "%d", (int)((r >> 1) % 30));
		r >>= 6;
		if ((r & 1) && conv != 'c')
			p += sprintf(p, ".%d", (int)((r >> 1) % 25));
		r >>= 6;
		const char *len = isnum ? lens[r % 8] : "";
		p += sprintf(p, "%s%c>", len, conv);
		/* Interesting magnitudes: small, near type limits, full 64-bit. */
		switch ((v >> 60) & 3) {
		case 0: v &= 0xff; v = (v & 1) ? (uint64_t)-(int64_t)(v >> 1) : v >> 1; break;
		case 1: v = (v & 1) ? (uint64_t)INT64_MIN + (v >> 58 & 3) : UINT64_MAX - (v >> 58 & 3); break;
		case 2: v >>= (v & 63); break;
		default: break;
		}
		char k[256], h[256];
		int kr, hr;
		bool ll = !strcmp(len, "l") || !strcmp(len, "ll") || !strcmp(len, "z") ||
			  !strcmp(len, "t") || !strcmp(len, "j");
		if (conv == 's') {
			const char *s = strs[v % 4];
			kr = ksnprintf(k, sizeof(k), fmt, s);
			hr = snprintf(h, sizeof(h), fmt, s);
		} else if (conv == 'c') {
			int c = (int)(' ' + v % 95);
			kr = ksnprintf(k, sizeof(k), fmt, c);
			hr = snprintf(h, sizeof(h), fmt, c);
		} else if (ll) {
			/* l, ll, z, t and j are all 64-bit on x86-64: passing long long is exact. */
			kr = ksnprintf(k, sizeof(k), fmt, (long long)v);
			hr = snprintf(h, sizeof(h), fmt, (long long)v);
		} else {
			kr = ksnprintf(k, sizeof(k), fmt, (int)(uint32_t)v);
			hr = snprintf(h, sizeof(h), fmt, (int)(uint32_t)v);
		}
		if (kr != hr || strcmp(k, h))
			unit_fail(__FILE__, __LINE__, "format \"%s\" value %#llx: kernel \"%s\" (%d), host \"%s\" (%d)",
				  fmt, (unsigned long long)v, k, kr, h, hr);
	}
}

int main(void)
{
	unit_begin(__FILE__);
	RUN(signed_decimal);
	RUN(unsigned_and_hex);
	RUN(widths_and_flags);
	RUN(precision);
	RUN(strings_and_chars);
	RUN(null_string_and_pointers);
	RUN(unknown_conversions);
	RUN(truncation);
	RUN(va_list_is_not_consumed);
	RUN(random_specs_match_host);
	return unit_end();
}
