/* The system calls lib/sock makes for itself, straight to the kernel (syscall(2)): never
 * through the C library's entry points, which ld --wrap may route back into the library
 * (posix.c, events.c). Each returns -1 with errno set on failure, as the C library's. */
#pragma once
#include <poll.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "axolotl/kcall.h"

static inline int ax_sys_poll(struct pollfd *p, nfds_t n, int ms)
{
	return (int)syscall(SYS_poll, p, n, ms);
}
static inline int ax_sys_getsockopt(int fd, int level, int name, void *v, socklen_t *l)
{
	return (int)syscall(SYS_getsockopt, fd, level, name, v, l);
}
/* Axolotl's own KC_NOTIFY (kernel/abi/axolotl/kcall.h): only ever made where the activity
 * page exists, that is on Axolotl. */
static inline int ax_sys_notify(uint32_t ep, uint64_t bits)
{
	return (int)syscall((long)KC_NR(KC_NOTIFY), (long)ep, (long)bits);
}
/* KC_WAKE WK_SET: the process's wake word is the uint32 at va (sock_ax.h app.word). */
static inline int ax_sys_wake_word(const volatile void *va)
{
	return (int)syscall((long)KC_NR(KC_WAKE), (long)WK_SET, (long)(uintptr_t)va);
}
static inline int ax_sys_setsockopt(int fd, int level, int name, const void *v, socklen_t l)
{
	return (int)syscall(SYS_setsockopt, fd, level, name, v, l);
}
