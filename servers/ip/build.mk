# ip: the IPv4 server (README.md), an lwIP instance of its own (lib/lwip/lwip.mk).
include lib/lwip/lwip.mk
ip_SRCS := $(wildcard servers/ip/*.c)
ip_CFLAGS := -Ilib/net -Iservers/ip
$(eval $(call lwip_instance,ip,servers/ip,$(LWIP_CORE) core/raw.c core/udp.c core/stats.c \
	core/ipv4/icmp.c core/ipv4/ip4_frag.c core/ipv4/etharp.c core/ipv4/dhcp.c netif/ethernet.c))
$(eval $(call native_prog,ip))
# Pure parts with host unit tests (tests/unit/test_ip_hdr.c, test_ip_route.c, test_ip_rss.c).
UNIT_EXTRA_SRCS += servers/ip/hdr.c servers/ip/route.c servers/ip/rss.c
UNIT_EXTRA_HDRS += servers/ip/hdr.h servers/ip/route.h servers/ip/rss.h
UNIT_EXTRA_CFLAGS += -Iservers/ip
