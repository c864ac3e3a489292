/* System information calls pm serves: uname, sysinfo, getrandom, resource limits,
 * CPU affinity. Per-process values (limits) live in struct lxproc. */
#include "pm.h"
#include "lx_abi.h"

#define RLIM_INFINITY (~0ull)
#define LX_NR_OPEN 1024 /* descriptors a process may have: servers/vfs MAX_FDS */

struct lx_utsname {
	char sysname[65], nodename[65], release[65], version[65], machine[65], domainname[65];
};

static void field(char *dst, const char *s)
{
	memset(dst, 0, 65);
	memcpy(dst, s, strlen(s));
}

int64_t lx_uname(struct lxproc *p, uint64_t buf)
{
	/* "Linux" and a Linux-like release: programs parse these to pick kernel features. */
	struct lx_utsname u;
	field(u.sysname, "Linux");
	field(u.nodename, "axolotl");
	field(u.release, "6.1.0-axolotl");
	field(u.version, "#1 SMP Axolotl 0.1.0");
	field(u.machine, "x86_64");
	field(u.domainname, "(none)");
	return ax_vcopy(EP_NONE, &u, p->ep, (void *)buf, sizeof(u)) < 0 ? -LX_EFAULT : 0;
}

struct lx_sysinfo {
	int64_t uptime;
	uint64_t loads[3], totalram, freeram, sharedram, bufferram, totalswap, freeswap;
	uint16_t procs, pad;
	uint32_t pad2;
	uint64_t totalhigh, freehigh;
	uint32_t mem_unit;
	char reserved[4];
};

int64_t lx_sysinfo(struct lxproc *p, uint64_t buf)
{
	struct lx_sysinfo si;
	memset(&si, 0, sizeof(si));
	si.uptime = (int64_t)(ax_time_ns() / 1000000000ull);
	si.totalram = lx_total_frames;
	si.freeram = (uint64_t)kcall1(KC_INFO, KI_FREE_FRAMES);
	si.procs = (uint16_t)lx_nprocs();
	si.mem_unit = 4096;
	return ax_vcopy(EP_NONE, &si, p->ep, (void *)buf, sizeof(si)) < 0 ? -LX_EFAULT : 0;
}

/* getrandom: xorshift-multiply output seeded from RDTSC at every call, stirred with a
 * counter. Varied, but NOT cryptographically strong: a real entropy pool is still to come
 * (docs/posix.md says so). */
int64_t lx_getrandom(struct lxproc *p, uint64_t buf, uint64_t len)
{
	static uint64_t state = 0x853c49e6748fea9bull, calls;
	uint8_t chunk[256];
	uint64_t done = 0;
	if (len > (1u << 25))
		len = 1u << 25; /* Linux returns at most 32 MiB per call */
	state ^= ax_rdtsc() + ++calls * 0x9e3779b97f4a7c15ull;
	while (done < len) {
		uint64_t n = len - done < sizeof(chunk) ? len - done : sizeof(chunk);
		for (uint64_t i = 0; i < n; i += 8) {
			state ^= state >> 12, state ^= state << 25, state ^= state >> 27;
			uint64_t v = state * 0x2545f4914f6cdd1dull;
			memcpy(chunk + i, &v, n - i < 8 ? n - i : 8);
		}
		if (ax_vcopy(EP_NONE, chunk, p->ep, (void *)(buf + done), n) < 0)
			return done ? (int64_t)done : -LX_EFAULT;
		done += n;
	}
	return (int64_t)done;
}

void lx_limits_init(struct lxproc *p)
{
	for (int i = 0; i < LX_NLIMITS; i++)
		p->limits[i][0] = p->limits[i][1] = RLIM_INFINITY;
	p->limits[3][0] = 8u << 20;   /* RLIMIT_STACK: 8 MiB soft */
	p->limits[4][0] = 0;          /* RLIMIT_CORE: no core files */
	p->limits[7][0] = 1024;       /* RLIMIT_NOFILE: what vfs's table holds (MAX_FDS) */
	p->limits[7][1] = LX_NR_OPEN;
}

/* prlimit64 on ourselves (pid 0 or our pid): old values out, new ones in. */
int64_t lx_prlimit(struct lxproc *p, uint64_t pid, uint64_t res, uint64_t newp, uint64_t oldp)
{
	if (pid && pid != (uint64_t)p->pid)
		return -LX_EPERM; /* other processes' limits: not yet */
	if (res >= LX_NLIMITS)
		return -LX_EINVAL;
	uint64_t nv[2];
	if (newp) {
		if (ax_vcopy(p->ep, (const void *)newp, EP_NONE, nv, sizeof(nv)) < 0)
			return -LX_EFAULT;
		if (nv[0] > nv[1])
			return -LX_EINVAL;
		/* Raising a hard limit needs privilege, and no one goes past the descriptors vfs
		 * can hold (Linux's fs.nr_open) */
		if ((nv[1] > p->limits[res][1] && !lx_privileged(p)) || (res == 7 && nv[1] > LX_NR_OPEN))
			return -LX_EPERM;
	}
	if (oldp && ax_vcopy(EP_NONE, p->limits[res], p->ep, (void *)oldp, 16) < 0)
		return -LX_EFAULT;
	if (newp)
		memcpy(p->limits[res], nv, sizeof(nv));
	return 0;
}

int64_t lx_sched_getaffinity(struct lxproc *p, uint64_t pid, uint64_t len, uint64_t mask)
{
	if (pid && pid != (uint64_t)p->pid)
		return -LX_EINVAL;
	if (len < 8 || (len & 7))
		return -LX_EINVAL;
	uint64_t ncpus = (uint64_t)kcall1(KC_INFO, KI_NCPUS);
	uint64_t bits = ncpus >= 64 ? ~0ull : (1ull << ncpus) - 1;
	return ax_vcopy(EP_NONE, &bits, p->ep, (void *)mask, 8) < 0 ? -LX_EFAULT : 8;
}
