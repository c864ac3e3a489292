#!/bin/sh
# A network namespace with a tap device for tests that need raw frames (tests/system/test_ip.py):
#   tools/net-ns.sh up NS ADDR/N    creates namespace NS with tap0 (up, ADDR/N), nothing else
#   tools/net-ns.sh up NS ADDR/N multi_queue   the same, tap0 multiqueue (QEMU's tap,queues=N:
#                                   tests/system/test_virtio_net_mq.py)
#   tools/net-ns.sh down NS         deletes NS (and tap0 with it)
# QEMU runs inside it (`ip netns exec NS qemu ... -netdev tap,ifname=tap0,script=no,
# downscript=no`), so its frames reach only tap0: the namespace has no route anywhere else.
set -eu
case "${1:-}" in
up)
	ip netns add "$2"
	ip netns exec "$2" ip tuntap add dev tap0 mode tap ${4:+"$4"}
	ip netns exec "$2" ip addr add "$3" dev tap0
	ip netns exec "$2" ip link set tap0 up
	;;
down)
	ip netns del "$2" 2>/dev/null || true
	;;
*)
	echo "usage: $0 up NS ADDR/N [multi_queue] | down NS" >&2
	exit 2
	;;
esac
