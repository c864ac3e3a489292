/* Code-mutating fault injection: `service inject NAME TYPE|random [N] [seed=S] [at=ADDR]`.
 * The fault model is lib/swifi's (the swifi of Rio, Nooks and MINIX 3): rs picks the
 * instruction, lib/swifi how to change it, the kernel writes it into the running instance's
 * own copy of its text (KC_TEXT). The binary and the next incarnation stay clean.
 *
 * Targets are drawn from code the server runs: a function holding one of the instruction
 * addresses the kernel sampled (interrupts and kernel calls from the server's user mode);
 * any function of the binary's symbol table when there are no samples, or when the sampled
 * functions have no instruction the fault type fits (a call to a free function, a compare). Each fault is logged
 * with its seed, type and address; `at=ADDR` with the same type and seed replays it. */
#include "rs.h"
#include "rs_swifi.h"
#include "elfsym.h"
#include "swifi.h"
#include "x86dec.h"

#define MAX_FNS 4096
#define MAX_FREE 32
#define FN_WINDOW 16384 /* bytes of a function read (from its start) to find instructions */
#define ATTEMPTS 256    /* functions tried per fault before giving up on the type: the */
#define SAMPLED 64      /* first ones hold sampled addresses, the rest are any function */

static struct elf_fn fns[MAX_FNS];
static uint32_t nfns;
static uint64_t free_fns[MAX_FREE];
static uint32_t nfree;
static uint8_t window[FN_WINDOW];

/* A function that frees memory (SW_LEAK's target): free, or a name ending in _free. */
static bool frees(const char *name)
{
	size_t n = strlen(name);
	return !strcmp(name, "free") || (n > 5 && !strcmp(name + n - 5, "_free"));
}

static void add_fn(void *arg, const struct elf_fn *f)
{
	(void)arg;
	if (nfns < MAX_FNS)
		fns[nfns++] = *f;
	if (frees(f->name) && nfree < MAX_FREE) {
		uint32_t i = nfree++; /* kept sorted: lib/swifi looks calls up in it */
		for (; i && free_fns[i - 1] > f->addr; i--)
			free_fns[i] = free_fns[i - 1];
		free_fns[i] = f->addr;
	}
}

static const struct elf_fn *fn_at(uint64_t va)
{
	for (uint32_t i = 0; i < nfns; i++)
		if (va >= fns[i].addr && va - fns[i].addr < fns[i].size)
			return &fns[i];
	return NULL;
}

/* The running instance's function bytes, from the instance itself (earlier faults show);
 * returns the number read. */
static size_t read_fn(endpoint_t ep, const struct elf_fn *f)
{
	size_t want = f->size < FN_WINDOW ? f->size : FN_WINDOW, got = 0;
	while (got < want) {
		size_t n = want - got < TEXT_READ_MAX ? want - got : TEXT_READ_MAX;
		if (ax_text(ep, KT_READ, f->addr + got, window + got, n) != (int64_t)n)
			break;
		got += n;
	}
	return got;
}

static int64_t apply(struct svc *s, enum swifi_type t, const struct elf_fn *f, uint64_t at, uint64_t seed,
		     struct swifi_rng *rng, uint32_t nth)
{
	size_t n = read_fn(s->ep, f);
	size_t from = 0;
	if (at) { /* replay: the window is the one instruction at `at` */
		struct x86_insn in;
		while (from < n && f->addr + from < at && x86_decode(window + from, n - from, &in))
			from += in.len;
		if (f->addr + from != at || !x86_decode(window + from, n - from, &in))
			return -KE_INVAL; /* not an instruction boundary */
		n = from + in.len;
	}
	const struct swifi_ctx ctx = { free_fns, nfree };
	struct swifi_patch p;
	if (swifi_make(t, window + from, n - from, f->addr + from, &ctx, rng, &p))
		return -KE_SRCH;
	/* How the chosen instruction changes (which bit, which register) is drawn from the seed
	 * and its place alone (the function's name and the offset in it, not the address), so
	 * that `at=` replays it exactly, also in a rebuilt binary where the function moved. */
	uint64_t place = 0xcbf29ce484222325ull; /* FNV-1a of the name */
	for (const char *c = f->name; *c; c++)
		place = (place ^ (uint8_t)*c) * 0x100000001b3ull;
	struct swifi_rng how;
	swifi_seed(&how, seed ^ place ^ ((p.addr - f->addr) * 0x9e3779b97f4a7c15ull));
	if (swifi_make(t, window + (p.addr - f->addr), p.len, p.addr, &ctx, &how, &p))
		return -KE_SRCH;
	int64_t r = ax_text(s->ep, KT_WRITE, p.addr, p.new_, p.len);
	if (r < 0)
		return r;
	char was[3 * 8 + 1] = "", now[3 * 8 + 1] = "";
	for (uint32_t i = 0; i < p.len && i < 8; i++) {
		ksnprintf(was + 3 * i, 4, "%02x ", p.old[i]);
		ksnprintf(now + 3 * i, 4, "%02x ", p.new_[i]);
	}
	rs_log("swifi %s #%u seed=%llu %s at=%#llx (%.32s+%#llx): %s-> %s", s->c.name, nth, (unsigned long long)seed,
	       swifi_name(t), (unsigned long long)p.addr, f->name, (unsigned long long)(p.addr - f->addr), was, now);
	return 0;
}

int64_t swifi_inject(struct svc *s, const char *word, uint32_t count, uint64_t *seed, uint64_t at)
{
	int type = strcmp(word, "random") ? swifi_type_by_name(word) : -1;
	if ((type < 0 && strcmp(word, "random")) || (at && type < 0))
		return -KE_INVAL; /* (a replay names its type) */
	size_t len;
	const uint8_t *img = module_bytes(s->binary_now, &len);
	nfns = nfree = 0;
	if (!img || elf_functions(img, len, add_fn, NULL) <= 0)
		return -KE_NOSYS; /* no symbols: nothing to aim at */
	uint64_t samples[TEXT_SAMPLES];
	int64_t ns = ax_text(s->ep, KT_SAMPLES, 0, samples, sizeof(samples));
	if (ns < 0)
		return ns;
	if (!*seed)
		*seed = ax_time_ns() ^ ((uint64_t)s->ep << 32) ^ s->restarts;
	struct swifi_rng rng;
	swifi_seed(&rng, *seed);
	if (at) {
		const struct elf_fn *f = fn_at(at);
		int64_t r = f ? apply(s, (enum swifi_type)type, f, at, *seed, &rng, 1) : -KE_INVAL;
		return r < 0 ? r : 1;
	}
	uint32_t done = 0;
	for (uint32_t k = 0; k < count; k++) {
		for (uint32_t a = 0; a < ATTEMPTS; a++) {
			const struct elf_fn *f = ns && a < SAMPLED ? fn_at(samples[swifi_below(&rng, (uint64_t)ns)]) : NULL;
			if (!f)
				f = &fns[swifi_below(&rng, nfns)];
			enum swifi_type t = type >= 0 ? (enum swifi_type)type : (enum swifi_type)swifi_below(&rng, SW_NTYPES);
			int64_t r = apply(s, t, f, 0, *seed, &rng, k + 1);
			if (r == 0) {
				done++;
				break;
			}
			if (r != -KE_SRCH)
				return done ? (int64_t)done : r;
		}
	}
	if (!done)
		rs_log("swifi %s: no instruction fits %s (seed=%llu)", s->c.name, word, (unsigned long long)*seed);
	return done ? (int64_t)done : -KE_SRCH;
}
