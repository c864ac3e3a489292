/* /proc/cpuinfo (made at each open) and /proc/sys (fixed values programs read). */
#include "procfs.h"
#include "lx_abi.h"

static void cpuid(uint32_t leaf, uint32_t r[4])
{
	__asm__ volatile("cpuid" : "=a"(r[0]), "=b"(r[1]), "=c"(r[2]), "=d"(r[3]) : "a"(leaf), "c"(0));
}

/* /proc/cpuinfo: the fields programs parse, one block per CPU online (every CPU is alike,
 * so the boot CPU's CPUID answers for all). */
int procfs_cpuinfo(char *buf, size_t size)
{
	uint32_t r[4], vendor[4] = { 0 }, brand[13] = { 0 };
	cpuid(0, r);
	vendor[0] = r[1], vendor[1] = r[3], vendor[2] = r[2];
	cpuid(1, r);
	uint32_t eax1 = r[0], ecx1 = r[2], edx1 = r[3];
	uint32_t family = (eax1 >> 8) & 15, model = (eax1 >> 4) & 15, stepping = eax1 & 15;
	if (family == 15)
		family += (eax1 >> 20) & 0xff;
	if (family == 6 || family >= 15)
		model |= ((eax1 >> 16) & 15) << 4;
	cpuid(0x80000000u, r);
	if (r[0] >= 0x80000004u)
		for (uint32_t i = 0; i < 3; i++)
			cpuid(0x80000002u + i, &brand[i * 4]);
	static const struct { uint8_t reg, bit; const char *name; } flags[] = {
		{ 3, 0, "fpu" }, { 3, 4, "tsc" }, { 3, 5, "msr" }, { 3, 6, "pae" }, { 3, 8, "cx8" }, { 3, 9, "apic" },
		{ 3, 15, "cmov" }, { 3, 19, "clflush" }, { 3, 23, "mmx" }, { 3, 24, "fxsr" }, { 3, 25, "sse" },
		{ 3, 26, "sse2" }, { 2, 0, "pni" }, { 2, 1, "pclmulqdq" }, { 2, 3, "monitor" }, { 2, 9, "ssse3" },
		{ 2, 13, "cx16" }, { 2, 19, "sse4_1" }, { 2, 20, "sse4_2" }, { 2, 22, "movbe" }, { 2, 23, "popcnt" },
		{ 2, 25, "aes" }, { 2, 26, "xsave" }, { 2, 28, "avx" }, { 2, 30, "rdrand" }, { 2, 31, "hypervisor" },
	};
	char fl[512];
	int fn = 0;
	for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++)
		if (((flags[i].reg == 3 ? edx1 : ecx1) >> flags[i].bit) & 1)
			fn += ksnprintf(fl + fn, sizeof(fl) - (size_t)fn, "%s%s", fn ? " " : "", flags[i].name);
	int64_t ncpu = kcall2(KC_INFO, KI_NCPUS, 0);
	uint64_t mhz = (uint64_t)kcall2(KC_INFO, KI_TSC_HZ, 0) / 1000000;
	const char *b = (const char *)brand;
	while (*b == ' ')
		b++;
	int len = 0;
	for (int64_t i = 0; i < (ncpu > 0 ? ncpu : 1) && (size_t)len < size; i++)
		len += ksnprintf(buf + len, size - (size_t)len,
				 "processor\t: %lld\nvendor_id\t: %s\ncpu family\t: %u\nmodel\t\t: %u\nmodel name\t: %s\n"
				 "stepping\t: %u\ncpu MHz\t\t: %llu.000\nphysical id\t: 0\nsiblings\t: %lld\ncore id\t\t: %lld\n"
				 "cpu cores\t: %lld\napicid\t\t: %lld\nfpu\t\t: yes\nflags\t\t: %s\nbogomips\t: %llu.00\n\n",
				 (long long)i, (const char *)vendor, family, model, *b ? b : "unknown", stepping,
				 (unsigned long long)mhz, (long long)ncpu, (long long)i, (long long)ncpu, (long long)i, fl,
				 (unsigned long long)mhz * 2);
	return len;
}

/* A file whose text never changes (the /proc/sys values programs read). */
static int fixed(struct rnode *dir, const char *name, const char *value)
{
	struct rnode *n;
	int r = procfs_make(dir, name, LX_S_IFREG | 0444, 0, &n);
	if (r == 0 && ramfs_write(n, 0, value, strlen(value)) < 0)
		r = -LX_ENOMEM;
	if (r == 0)
		n->ro = true;
	return r;
}

/* /proc/sys: what daemons look at when they start, with Linux's names and our values. */
int procfs_sys_init(struct rnode *proc)
{
	struct rnode *sys, *kernel, *net, *core, *fs, *vm, *d;
	int r = procfs_make(proc, "sys", LX_S_IFDIR | 0555, 0, &sys);
	r = r ? r : procfs_make(sys, "kernel", LX_S_IFDIR | 0555, 0, &kernel);
	r = r ? r : fixed(kernel, "ostype", "Linux\n");
	r = r ? r : fixed(kernel, "osrelease", "6.1.0-axolotl\n"); /* as uname (pm) */
	r = r ? r : fixed(kernel, "hostname", "axolotl\n");
	r = r ? r : fixed(kernel, "domainname", "(none)\n");
	r = r ? r : fixed(kernel, "pid_max", "4194304\n"); /* pm's pids wrap there */
	r = r ? r : fixed(kernel, "threads-max", "1024\n");
	r = r ? r : fixed(kernel, "ngroups_max", "65536\n");
	r = r ? r : procfs_make(sys, "net", LX_S_IFDIR | 0555, 0, &net);
	r = r ? r : procfs_make(net, "core", LX_S_IFDIR | 0555, 0, &core);
	r = r ? r : fixed(core, "somaxconn", "4096\n");
	r = r ? r : procfs_make(sys, "fs", LX_S_IFDIR | 0555, 0, &fs);
	r = r ? r : fixed(fs, "pipe-max-size", "1048576\n"); /* pipe.c */
	r = r ? r : fixed(fs, "file-max", "65536\n");
	r = r ? r : fixed(fs, "nr_open", "1024\n"); /* vfs's descriptors per process */
	r = r ? r : procfs_make(sys, "vm", LX_S_IFDIR | 0555, 0, &vm);
	r = r ? r : fixed(vm, "overcommit_memory", "0\n");
	for (struct rnode *dirs[] = { sys, kernel, net, core, fs, vm }, **p = dirs; !r && p < dirs + 6; p++)
		if ((d = *p))
			d->ro = true;
	return r;
}
