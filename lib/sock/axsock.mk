# lib/sock as a static library per C library (README.md), included by the top-level Makefile
# before apps/ports/ports.mk:
#   $(B)/lib/musl/libaxsock.a   musl-gcc: our Linux test programs, lighttpd, memcached
#   $(B)/lib/glibc/libaxsock.a  gcc (glibc): iperf 2 (static C++)
# AXSOCK_LDFLAGS: the ld --wrap flags made from lib/sock/wrap.syms (one name a line). A
# program links with $(AXSOCK_LDFLAGS) and the library after its own objects and libraries.
comma := ,
AXSOCK_SRCS := lib/sock/sock.c lib/sock/activity.c lib/sock/posix.c lib/sock/events.c lib/sock/lfs64.c lib/sock/file.c \
	lib/net/sockbuf.c lib/chan/spsc.c
AXSOCK_HDRS := $(wildcard lib/sock/*.h lib/net/*.h lib/chan/*.h)
AXSOCK_SYMS := lib/sock/wrap.syms
AXSOCK_CFLAGS := -std=c11 -O2 -g -Wall -Wextra -Werror -D_GNU_SOURCE -Ilib/sock -Ilib/net -Ilib/posix -Ilib/chan -Ikernel/abi
AXSOCK_LDFLAGS := $(foreach s,$(shell sed -e 's/\#.*//' $(AXSOCK_SYMS)),-Wl$(comma)--wrap=$(s))
AXSOCK_CC_musl := musl-gcc
AXSOCK_CC_glibc := gcc
AXSOCK_MUSL := $(B)/lib/musl/libaxsock.a
AXSOCK_GLIBC := $(B)/lib/glibc/libaxsock.a
$(B)/lib/%/libaxsock.a: $(AXSOCK_SRCS) $(AXSOCK_HDRS) lib/sock/axsock.mk
	@rm -rf $(@D)/obj && mkdir -p $(@D)/obj
	@for s in $(AXSOCK_SRCS); do \
		echo "$(AXSOCK_CC_$*) -c $$s"; \
		$(AXSOCK_CC_$*) $(AXSOCK_CFLAGS) -c $$s -o $(@D)/obj/$$(basename $$s .c).o || exit 1; \
	done
	@rm -f $@ && ar rcs $@ $(@D)/obj/*.o
.PHONY: axsock
axsock: $(AXSOCK_MUSL) $(AXSOCK_GLIBC)
print-axsock-ldflags:
	@echo '$(AXSOCK_LDFLAGS)'
