#include "commands.h"
#include "axrt.h"
#include "service_cmd.h"
#include "net_cmd.h"
#include "perf_cmd.h"

/* Longer than ax_printf's buffer, so written as it is. */
static const char help_text[] = "commands:\n"
	"  help                        this list\n"
	"  service list                services: state, endpoint, CPU, restarts, uptime, build id\n"
	"  service log                 rs's event log: starts, crashes, hangs, restarts, updates\n"
	"  service start NAME          start a stopped service\n"
	"  service stop NAME           stop a service and keep it down\n"
	"  service kill NAME           kill a service as a crash would (its restart policy applies)\n"
	"  service restart NAME        stop a service and start it again at once\n"
	"  service update NAME BINARY  live-update a service to another boot module\n"
	"  service update all [SUFFIX] every service that can be, to NAME.SUFFIX (or NAME)\n"
	"  service inject NAME WORD    inject a fault: crash, hang, or the service's own\n"
	"  ifconfig | route | arp      ip's interfaces, routing table, ARP cache\n"
	"  ping [-c N] [-s SIZE] [-i MS] ADDR  ICMP echo from ip (default 4 of 56 bytes, 1 s apart)\n"
	"  netstat                     the counters of every network service that runs\n"
	"  socklib                     the socket library's calls: user space against system calls\n"
	"  mem                         the kernel's free frames, memory objects and threads\n"
	"  perf                        the kernel's activity (switches, IPIs, lock waits, calls) since\n"
	"                              the last perf; also /proc/axolotl/kstat\n"
	"  threads                     every thread: CPU, state, times run, CPU time; also\n"
	"                              /proc/axolotl/threads\n"
	"  pf rules|states|counters    pf's numbered rules with matches, connection table, counters\n"
	"  pf add RULE | pf del N      add a rule at the end (48 characters at most) / delete rule N\n"
	"  pf flush | pf reload        drop every rule (all pass) / take pf.conf's rules again\n"
	"keys: Backspace/DEL erase a character, Ctrl-U the line, Ctrl-C abandons it; Ctrl-] goes to the\n"
	"  terminal of Linux programs and back, when vfs has one\n";

static int help(int argc, char **argv)
{
	(void)argc, (void)argv;
	ax_write(help_text, sizeof(help_text) - 1);
	return 0;
}

/* One line, for people and for the leak tests (tests/system/test_tcp_apps.py). */
static int mem(int argc, char **argv)
{
	(void)argc, (void)argv;
	int64_t frames = kcall1(KC_INFO, KI_FREE_FRAMES), objs = kcall1(KC_INFO, KI_MEMOBJS),
		threads = kcall1(KC_INFO, KI_THREADS);
	int64_t run = kcall1(KC_INFO, KI_FREE_RUN);
	ax_printf("mem: free_frames %lld (%lld KiB) memobjs %lld threads %lld longest_free_run %lld KiB\n",
		  (long long)frames, (long long)frames * 4, (long long)objs, (long long)threads, (long long)run * 4);
	return frames < 0 || objs < 0;
}

static const struct {
	const char *name;
	int (*main)(int argc, char **argv);
} commands[] = {
	{ "help", help },
	{ "service", service_main },
	{ "ifconfig", ifconfig_main },
	{ "route", route_main },
	{ "arp", arp_main },
	{ "ping", ping_main },
	{ "netstat", netstat_main },
	{ "socklib", socklib_main },
	{ "mem", mem },
	{ "perf", perf_main },
	{ "threads", threads_main },
	{ "pf", pf_main },
};

/* Splits line at spaces into argv; the number of words, or -1 if there are too many. */
static int split(char *line, char **argv)
{
	int argc = 0;
	for (char *p = line; *p;) {
		while (*p == ' ')
			*p++ = 0;
		if (!*p)
			break;
		if (argc == CMD_MAX_ARGS)
			return -1;
		argv[argc++] = p;
		while (*p && *p != ' ')
			p++;
	}
	return argc;
}

void console_run(char *line)
{
	char *argv[CMD_MAX_ARGS + 1];
	int argc = split(line, argv);
	if (argc < 0) {
		ax_printf("console: too many words (at most %d)\n", CMD_MAX_ARGS);
		return;
	}
	if (argc == 0)
		return;
	argv[argc] = NULL;
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[0], commands[i].name)) {
			commands[i].main(argc, argv);
			return;
		}
	ax_printf("console: unknown command: %s\n", argv[0]);
}
