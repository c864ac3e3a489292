/* init: the first user process. Starts the other boot modules and reports how each one
 * ends (exit status or fault, from the kernel's reports).
 *   init [start=name,name...] [poweroff]
 * start= limits which modules are started (default: all of them); poweroff stops the
 * machine once every started module has ended (used by the system tests). */
#include "axrt.h"

#define MAX_CHILDREN 32

struct child {
	endpoint_t ep;
	char name[32];
	bool alive;
};

static bool listed(const char *list, const char *name)
{
	size_t n = strlen(name);
	for (const char *p = list; *p;) {
		const char *e = p;
		while (*e && *e != ',')
			e++;
		if ((size_t)(e - p) == n && !strncmp(p, name, n))
			return true;
		p = *e ? e + 1 : e;
	}
	return false;
}

int main(int argc, char **argv)
{
	const char *start = NULL;
	bool poweroff = false;
	for (int i = 1; i < argc; i++) {
		if (!strncmp(argv[i], "start=", 6))
			start = argv[i] + 6;
		else if (!strcmp(argv[i], "poweroff"))
			poweroff = true;
	}
	static struct child kids[MAX_CHILDREN];
	int nkids = 0, alive = 0;
	struct kc_module_info mi;
	for (uint32_t i = 1; ax_module_info(i, &mi) == 0 && nkids < MAX_CHILDREN; i++) {
		/* "path/name args..." */
		const char *p = mi.name, *base = mi.name;
		while (*p && *p != ' ') {
			if (*p == '/')
				base = p + 1;
			p++;
		}
		char name[32];
		size_t n = (size_t)(p - base) < sizeof(name) - 1 ? (size_t)(p - base) : sizeof(name) - 1;
		memcpy(name, base, n);
		name[n] = 0;
		while (*p == ' ')
			p++;
		if (start && !listed(start, name))
			continue;
		/* Boot modules are trusted servers: until rs starts them from its configuration,
		 * init gives each all it holds before it runs. */
		struct kc_spawn s = { i, SPAWN_ANY_CPU, 2, SPAWN_STOPPED, p };
		int64_t ep = ax_spawn(&s), r = 0;
		if (ep >= 0 && ((r = kcall6(KC_PRIV, (uint64_t)ep, KPRIV_ALL, 0, 0, 0, 0)) < 0 ||
				(r = kcall1(KC_START, (uint64_t)ep)) < 0)) {
			ax_kill((endpoint_t)ep);
			ep = r;
		}
		if (ep < 0) {
			ax_printf("init: cannot start %s: error %lld\n", name, (long long)ep);
			continue;
		}
		kids[nkids].ep = (endpoint_t)ep;
		memcpy(kids[nkids].name, name, n + 1);
		kids[nkids].alive = true;
		nkids++;
		alive++;
		ax_printf("init: started %s as endpoint %#x\n", name, (unsigned)ep);
	}
	ax_printf("init: %d modules started\n", nkids);
	while (alive > 0 || !poweroff) {
		struct kmsg m;
		if (ax_receive(EP_ANY, &m) < 0)
			continue;
		if (m.source != EP_KERNEL || (m.type != KMSG_PROC_EXIT && m.type != KMSG_PROC_FAULT))
			continue;
		for (int i = 0; i < nkids; i++) {
			if (!kids[i].alive || kids[i].ep != (endpoint_t)m.w[0])
				continue;
			kids[i].alive = false;
			alive--;
			if (m.type == KMSG_PROC_EXIT)
				ax_printf("init: %s exited with status %lld\n", kids[i].name, (long long)m.w[1]);
			else
				ax_printf("init: %s faulted: vector %llu error %#llx rip %#llx address %#llx\n",
					  kids[i].name, (unsigned long long)m.w[1], (unsigned long long)m.w[2],
					  (unsigned long long)m.w[3], (unsigned long long)m.w[4]);
		}
	}
	ax_printf("INIT DONE\n");
	ax_poweroff(0);
}
