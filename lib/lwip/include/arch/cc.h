/* lwIP's compiler and platform glue for Axolotl servers (lib/lwip/README.md): freestanding
 * x86-64, gcc, no libc. Diagnostics go to the console; an assertion failure in lwIP ends the
 * server (rs restarts it), it never runs on with a broken invariant. */
#pragma once
#include <stddef.h>
#include <stdint.h>

#define BYTE_ORDER LITTLE_ENDIAN
#define LWIP_NO_INTTYPES_H 1 /* no <inttypes.h>: the format macros are below */
#define LWIP_NO_LIMITS_H 0   /* gcc's freestanding <limits.h> */
#define LWIP_NO_CTYPE_H 1    /* lwIP's own isdigit & co. */
#define X8_F "02x"
#define U16_F "hu"
#define S16_F "hd"
#define X16_F "hx"
#define U32_F "u"
#define S32_F "d"
#define X32_F "x"
#define SZT_F "zu"

/* sys_now() is 32-bit milliseconds; a random number for DHCP xids, IP ids and ports. */
uint32_t lwip_port_rand(void);
#define LWIP_RAND() lwip_port_rand()

void lwip_port_diag(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
__attribute__((noreturn)) void lwip_port_assert(const char *msg, int line, const char *file);
#define LWIP_PLATFORM_DIAG(x) lwip_port_diag x
#define LWIP_PLATFORM_ASSERT(x) lwip_port_assert(x, __LINE__, __FILE__)

#define LWIP_ERR_T int
