/* Freestanding formatted output. Pure code: also built and tested on the host. */
#include "lib/printf.h"

struct out {
	char *buf;
	size_t cap; /* bytes available including the terminating NUL */
	size_t len; /* bytes the complete output needs */
};

static void put(struct out *o, char c)
{
	if (o->len + 1 < o->cap)
		o->buf[o->len] = c;
	o->len++;
}

static void pad(struct out *o, char c, int count)
{
	while (count-- > 0)
		put(o, c);
}

enum { F_LEFT = 1, F_ZERO = 2, F_SPACE = 4, F_PLUS = 8, F_ALT = 16 };

static void put_number(struct out *o, uint64_t v, bool neg, unsigned base, bool upper,
		       int flags, int width, int prec)
{
	const char *digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";
	char tmp[24];
	int nd = 0;
	while (v) {
		tmp[nd++] = digits[v % base];
		v /= base;
	}
	if (prec < 0 && nd == 0)
		tmp[nd++] = '0';
	int zeros = prec > nd ? prec - nd : 0;
	char sign = neg ? '-' : (flags & F_PLUS) ? '+' : (flags & F_SPACE) ? ' ' : 0;
	const char *prefix = "";
	if ((flags & F_ALT) && base == 16 && nd > 0 && (nd > 1 || tmp[0] != '0'))
		prefix = upper ? "0X" : "0x";
	/* '#' makes the first digit a zero; with no digits at all (0 at precision 0) it is one. */
	if ((flags & F_ALT) && base == 8 && zeros == 0 && (nd == 0 || tmp[nd - 1] != '0'))
		prefix = "0";
	int plen = 0;
	while (prefix[plen])
		plen++;
	int total = nd + zeros + plen + (sign ? 1 : 0);
	int fill = width > total ? width - total : 0;
	if ((flags & F_ZERO) && !(flags & F_LEFT) && prec < 0) {
		zeros += fill;
		fill = 0;
	}
	if (!(flags & F_LEFT))
		pad(o, ' ', fill);
	if (sign)
		put(o, sign);
	for (int i = 0; i < plen; i++)
		put(o, prefix[i]);
	pad(o, '0', zeros);
	while (nd)
		put(o, tmp[--nd]);
	if (flags & F_LEFT)
		pad(o, ' ', fill);
}

int kvsnprintf(char *buf, size_t n, const char *fmt, va_list ap)
{
	struct out o = { buf, n, 0 };
	va_list args;
	va_copy(args, ap);
	while (*fmt) {
		if (*fmt != '%') {
			put(&o, *fmt++);
			continue;
		}
		fmt++;
		int flags = 0;
		for (;; fmt++) {
			if (*fmt == '-') flags |= F_LEFT;
			else if (*fmt == '0') flags |= F_ZERO;
			else if (*fmt == ' ') flags |= F_SPACE;
			else if (*fmt == '+') flags |= F_PLUS;
			else if (*fmt == '#') flags |= F_ALT;
			else break;
		}
		int width = 0;
		if (*fmt == '*') {
			width = va_arg(args, int);
			if (width < 0) {
				flags |= F_LEFT;
				width = -width;
			}
			fmt++;
		} else {
			while (*fmt >= '0' && *fmt <= '9')
				width = width * 10 + (*fmt++ - '0');
		}
		int prec = -1;
		if (*fmt == '.') {
			fmt++;
			prec = 0;
			if (*fmt == '*') {
				prec = va_arg(args, int);
				if (prec < 0)
					prec = -1;
				fmt++;
			} else {
				while (*fmt >= '0' && *fmt <= '9')
					prec = prec * 10 + (*fmt++ - '0');
			}
		}
		int lng = 0; /* 0 int, -1 short, -2 char, 1 long, 2 long long / size_t */
		for (;; fmt++) {
			if (*fmt == 'l') lng = lng >= 1 ? 2 : 1;
			else if (*fmt == 'h') lng = lng <= -1 ? -2 : -1;
			else if (*fmt == 'z' || *fmt == 't' || *fmt == 'j') lng = 2;
			else break;
		}
		char c = *fmt;
		if (!c)
			break;
		fmt++;
		switch (c) {
		case 'd':
		case 'i': {
			int64_t v;
			if (lng >= 1)
				v = lng == 1 ? (int64_t)va_arg(args, long) : (int64_t)va_arg(args, long long);
			else
				v = va_arg(args, int);
			if (lng == -1) v = (short)v;
			if (lng == -2) v = (signed char)v;
			uint64_t mag = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
			put_number(&o, mag, v < 0, 10, false, flags, width, prec);
			break;
		}
		case 'u':
		case 'x':
		case 'X':
		case 'o': {
			uint64_t v;
			if (lng >= 1)
				v = lng == 1 ? (uint64_t)va_arg(args, unsigned long)
					     : (uint64_t)va_arg(args, unsigned long long);
			else
				v = va_arg(args, unsigned int);
			if (lng == -1) v = (unsigned short)v;
			if (lng == -2) v = (unsigned char)v;
			unsigned base = c == 'u' ? 10 : c == 'o' ? 8 : 16;
			put_number(&o, v, false, base, c == 'X', flags & ~(F_PLUS | F_SPACE), width, prec);
			break;
		}
		case 'p': {
			uintptr_t v = (uintptr_t)va_arg(args, void *);
			/* "0x" and 16 digits (or the width), also for NULL: '#' would drop the 0x of 0. */
			put(&o, '0');
			put(&o, 'x');
			put_number(&o, v, false, 16, false, F_ZERO, width ? width - 2 : 16, -1);
			break;
		}
		case 'c': {
			char ch = (char)va_arg(args, int);
			if (!(flags & F_LEFT))
				pad(&o, ' ', width - 1);
			put(&o, ch);
			if (flags & F_LEFT)
				pad(&o, ' ', width - 1);
			break;
		}
		case 's': {
			const char *s = va_arg(args, const char *);
			if (!s)
				s = "(null)";
			int len = 0;
			while ((prec < 0 || len < prec) && s[len]) /* never reads past the precision */
				len++;
			if (!(flags & F_LEFT))
				pad(&o, ' ', width - len);
			for (int i = 0; i < len; i++)
				put(&o, s[i]);
			if (flags & F_LEFT)
				pad(&o, ' ', width - len);
			break;
		}
		case '%':
			put(&o, '%');
			break;
		default:
			/* Unknown conversion: print it literally so the mistake is visible. */
			put(&o, '%');
			put(&o, c);
			break;
		}
	}
	va_end(args);
	if (n)
		buf[o.len < n ? o.len : n - 1] = '\0';
	return (int)o.len;
}

int ksnprintf(char *buf, size_t n, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = kvsnprintf(buf, n, fmt, ap);
	va_end(ap);
	return r;
}
