/* Minimal string and memory routines for the freestanding kernel.
 * gcc may emit calls to memcpy/memset/memmove/memcmp itself, so these names are required. */
#include "lib/string.h"

/* memcpy and memset move 8 bytes per string-instruction step, then the tail bytewise. A
 * byte loop costs four instructions a byte, which under QEMU's TCG made zeroing a stream
 * socket's 564 KiB buffer object (kernel frames, then sockbuf_init) most of a TCP connection's
 * cost. The direction flag is clear: the ABI says so in user space, and the kernel clears
 * it on every entry (SFMASK, cld in the interrupt stubs). */
void *memcpy(void *dst, const void *src, size_t n)
{
	void *d = dst;
	size_t q = n / 8, r = n % 8;
	__asm__ volatile("rep movsq\n\t"
			 "mov %3, %%rcx\n\t"
			 "rep movsb"
			 : "+D"(d), "+S"(src), "+c"(q)
			 : "r"(r)
			 : "memory");
	return dst;
}

void *memmove(void *dst, const void *src, size_t n)
{
	unsigned char *d = dst;
	const unsigned char *s = src;
	if (d < s) {
		while (n--)
			*d++ = *s++;
	} else if (d > s) {
		while (n--)
			d[n] = s[n];
	}
	return dst;
}

void *memset(void *dst, int c, size_t n)
{
	void *d = dst;
	size_t q = n / 8, r = n % 8;
	uint64_t v = (uint8_t)c * 0x0101010101010101ull;
	__asm__ volatile("rep stosq\n\t"
			 "mov %3, %%rcx\n\t"
			 "rep stosb"
			 : "+D"(d), "+c"(q)
			 : "a"(v), "r"(r)
			 : "memory");
	return dst;
}

int memcmp(const void *a, const void *b, size_t n)
{
	const unsigned char *x = a, *y = b;
	for (size_t i = 0; i < n; i++)
		if (x[i] != y[i])
			return x[i] < y[i] ? -1 : 1;
	return 0;
}

size_t strlen(const char *s)
{
	size_t n = 0;
	while (s[n])
		n++;
	return n;
}

size_t strnlen(const char *s, size_t max)
{
	size_t n = 0;
	while (n < max && s[n])
		n++;
	return n;
}

int strcmp(const char *a, const char *b)
{
	while (*a && *a == *b)
		a++, b++;
	return (unsigned char)*a - (unsigned char)*b;
}

int strncmp(const char *a, const char *b, size_t n)
{
	for (; n; n--, a++, b++) {
		if (*a != *b)
			return (unsigned char)*a - (unsigned char)*b;
		if (!*a)
			return 0;
	}
	return 0;
}

char *strchr(const char *s, int c)
{
	for (; *s; s++)
		if (*s == (char)c)
			return (char *)s;
	return c ? NULL : (char *)s;
}
