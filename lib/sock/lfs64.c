/* lib/sock: glibc's large-file names of fcntl, sendfile and pread (a program built with
 * _FILE_OFFSET_BITS=64 calls these), interposed like the plain ones (posix.c). A separate
 * object: musl has no such names, and a program that never calls them does not link it. */
#define _LARGEFILE64_SOURCE
#include <fcntl.h>
#include <stdarg.h>
#include <sys/types.h>

int __wrap_fcntl(int, int, ...);
long __wrap_sendfile(int, int, long *, unsigned long);
long __wrap_pread(int, void *, unsigned long, long);

int __wrap_fcntl64(int fd, int cmd, ...)
{
	va_list ap;
	va_start(ap, cmd);
	unsigned long arg = va_arg(ap, unsigned long);
	va_end(ap);
	return __wrap_fcntl(fd, cmd, arg);
}

long __wrap_sendfile64(int out, int in, long *off, unsigned long count)
{
	return __wrap_sendfile(out, in, off, count);
}

long __wrap_pread64(int fd, void *buf, unsigned long n, long off)
{
	return __wrap_pread(fd, buf, n, off);
}
