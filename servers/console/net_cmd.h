/* The console's network commands (README.md, "Network commands"): ifconfig, route, arp,
 * ping, netstat and pf, all through the query protocol every network server answers
 * (lib/net/netq_proto.h). Written as programs' mains, like service_main. Each prints its
 * results and returns 0 on success, 1 on a failure, 2 on a usage error. */
#pragma once

int ifconfig_main(int argc, char **argv);
int route_main(int argc, char **argv);
int arp_main(int argc, char **argv);
int ping_main(int argc, char **argv);
int netstat_main(int argc, char **argv);
int pf_main(int argc, char **argv);
/* socklib: the socket library's calls per process and call, answered in user space or with
 * system calls (syscall's NQ_SOCKLIB; thesis table 5.2). */
int socklib_main(int argc, char **argv);
