/* Kernel command line (kernel/boot/cmdline.c): words separated by spaces or tabs, each
 * `key` or `key=value`; no quoting. */
#include "unit.h"
#include "boot/cmdline.h"

static void values(void)
{
	char v[32];
	const char *cl = "loglevel=3 hz=250 nox2apic tests=pmm_contig,heap qemu_exit";
	CHECK(cmdline_get(cl, "loglevel", v, sizeof(v)));
	CHECK_STR(v, "3");
	CHECK(cmdline_get(cl, "hz", v, sizeof(v)));
	CHECK_STR(v, "250");
	CHECK(cmdline_get(cl, "tests", v, sizeof(v)));
	CHECK_STR(v, "pmm_contig,heap");
	CHECK(cmdline_get(cl, "qemu_exit", v, sizeof(v))); /* last word */
	CHECK_STR(v, "");
	/* A bare key has an empty value. */
	strcpy(v, "stale");
	CHECK(cmdline_get(cl, "nox2apic", v, sizeof(v)));
	CHECK_STR(v, "");
	/* `key=` is present with an empty value; the value runs to the end of the word. */
	CHECK(cmdline_get("a= b=x=y c", "a", v, sizeof(v)));
	CHECK_STR(v, "");
	CHECK(cmdline_get("a= b=x=y c", "b", v, sizeof(v)));
	CHECK_STR(v, "x=y");
}

static void missing_keys_clear_out(void)
{
	char v[16];
	strcpy(v, "stale");
	CHECK(!cmdline_get("loglevel=3 hz=100", "nox2apic", v, sizeof(v)));
	CHECK_STR(v, "");
	strcpy(v, "stale");
	CHECK(!cmdline_get("", "hz", v, sizeof(v)));
	CHECK_STR(v, "");
	strcpy(v, "stale");
	CHECK(!cmdline_get(NULL, "hz", v, sizeof(v))); /* no command line at all */
	CHECK_STR(v, "");
	CHECK(!cmdline_has(NULL, "hz"));
	CHECK(!cmdline_has("", "hz"));
	CHECK(!cmdline_has("   \t  ", "hz"));
	/* Keys are case-sensitive. */
	CHECK(!cmdline_has("HZ=100", "hz"));
}

static void prefixes_do_not_match(void)
{
	char v[16];
	/* key is a prefix of a word: must not match. */
	CHECK(!cmdline_has("tests=all", "test"));
	CHECK(!cmdline_has("nox2apicx", "nox2apic"));
	CHECK(!cmdline_get("hzz=5 xhz=6", "hz", v, sizeof(v)));
	CHECK_STR(v, "");
	/* word is a prefix of the key: must not match either. */
	CHECK(!cmdline_has("hz=5", "hzz"));
	CHECK(!cmdline_has("tests", "tests=all"));
	/* The real key after a longer one is still found. */
	CHECK(cmdline_get("hzz=5 hz=7", "hz", v, sizeof(v)));
	CHECK_STR(v, "7");
	/* A value that looks like a key is not a key. */
	CHECK(!cmdline_has("tests=hz", "hz"));
	CHECK(!cmdline_has("a=b", "b"));
}

static void whitespace_and_order(void)
{
	char v[16];
	CHECK(cmdline_get("   hz=100   ", "hz", v, sizeof(v)));
	CHECK_STR(v, "100");
	CHECK(cmdline_get("a\thz=7\tb", "hz", v, sizeof(v)));
	CHECK_STR(v, "7");
	CHECK(cmdline_has("a\t\t b", "b"));
	/* The first occurrence wins. */
	CHECK(cmdline_get("hz=1 hz=2", "hz", v, sizeof(v)));
	CHECK_STR(v, "1");
	CHECK(cmdline_get("hz hz=2", "hz", v, sizeof(v)));
	CHECK_STR(v, "");
	/* No quoting: quotes are ordinary characters and spaces always split. */
	CHECK(cmdline_get("name=\"a b\" x", "name", v, sizeof(v)));
	CHECK_STR(v, "\"a");
	CHECK(cmdline_has("name=\"a b\" x", "b\""));
}

static void small_buffers(void)
{
	char v[8];
	memset(v, '#', sizeof(v));
	/* Truncated to outlen - 1 characters, NUL-terminated, still reported present. */
	CHECK(cmdline_get("key=0123456789", "key", v, 5));
	CHECK_STR(v, "0123");
	CHECK(v[5] == '#');
	memset(v, '#', sizeof(v));
	CHECK(cmdline_get("key=0123456789", "key", v, 1));
	CHECK(v[0] == '\0' && v[1] == '#');
	/* outlen 0 and NULL out write nothing. */
	memset(v, '#', sizeof(v));
	CHECK(cmdline_get("key=0123456789", "key", v, 0));
	CHECK(!cmdline_get("x", "key", v, 0));
	CHECK(v[0] == '#');
	CHECK(cmdline_get("key=0123456789", "key", NULL, 16));
	CHECK(!cmdline_get("x", "key", NULL, 16));
	/* Exact fit, on a heap block of exactly the size (ASan). */
	char *h = malloc(11);
	CHECK(cmdline_get("key=0123456789", "key", h, 11));
	CHECK_STR(h, "0123456789");
	free(h);
	/* Only the word is read: a value at the very end of a heap string (ASan). */
	char *cl = malloc(6);
	memcpy(cl, "a b=c", 6);
	CHECK(cmdline_get(cl, "b", v, sizeof(v)));
	CHECK_STR(v, "c");
	CHECK(!cmdline_has(cl, "c"));
	free(cl);
}

static void has(void)
{
	const char *cl = "loglevel=0 nox2apic";
	CHECK(cmdline_has(cl, "nox2apic"));
	CHECK(cmdline_has(cl, "loglevel"));
	CHECK(!cmdline_has(cl, "loglevel=1"));
	CHECK(cmdline_has(cl, "loglevel=0")); /* the whole word matches as a bare key */
	CHECK(!cmdline_has(cl, "qemu_exit"));
	/* An empty key names no word of a plain command line. */
	CHECK(!cmdline_has("", ""));
	CHECK(!cmdline_has("a b", ""));
}

static void list_membership(void)
{
	CHECK(list_contains("heap,pmm_contig,ioapic", "heap", false));
	CHECK(list_contains("heap,pmm_contig,ioapic", "pmm_contig", false));
	CHECK(list_contains("heap,pmm_contig,ioapic", "ioapic", false));
	CHECK(list_contains("heap", "heap", false));
	CHECK(!list_contains("heap,pmm_contig,ioapic", "pmm", false));     /* prefix */
	CHECK(!list_contains("heap,pmm_contig,ioapic", "contig", false));  /* suffix */
	CHECK(!list_contains("heap,pmm_contig,ioapic", "ioapicx", false)); /* longer */
	CHECK(!list_contains("heap,pmm_contig,ioapic", "heap,pmm_contig", false));
	CHECK(!list_contains("", "heap", false));
	CHECK(!list_contains("", "heap", true));
	CHECK(!list_contains("Heap", "heap", false)); /* case-sensitive */
	CHECK(list_contains(",,heap,", "heap", false));
	CHECK(list_contains("a,,heap", "heap", false));
	/* Spaces are part of the words. */
	CHECK(!list_contains("a, heap", "heap", false));
}

static void list_all_matches(void)
{
	/* With all_matches, an "all" element matches every word. */
	CHECK(list_contains("all", "heap", true));
	CHECK(list_contains("x,all", "panic", true));
	CHECK(list_contains("all,x", "panic", true));
	CHECK(!list_contains("all", "heap", false)); /* explicit-only tests */
	CHECK(list_contains("all", "all", false));   /* still a literal word */
	CHECK(!list_contains("allx,xall,al", "heap", true));
	CHECK(!list_contains("ALL", "heap", true));
	CHECK(!list_contains("x,y", "heap", true));
	CHECK(list_contains("x,heap", "heap", true));
}

/* Random command lines: cmdline_get must agree with a straightforward word splitter. */
static void random_against_model(void)
{
	static const char *keys[] = { "a", "ab", "abc", "b", "hz", "h", "z", "a=b" };
	uint64_t seed = 0x1234567887654321ull;
	for (int iter = 0; iter < 50000 && !UNIT_FAILED(); iter++) {
		char cl[64];
		size_t n = unit_rand(&seed) % sizeof(cl);
		for (size_t i = 0; i < n; i++)
			cl[i] = "ab= \thz"[unit_rand(&seed) % 7];
		cl[n] = '\0';
		const char *key = keys[unit_rand(&seed) % 8];
		size_t klen = strlen(key);
		/* Model: split on space/tab, first word equal to key or starting with "key=". */
		bool want = false;
		char wantv[64] = "";
		char copy[64];
		strcpy(copy, cl);
		for (char *save, *w = strtok_r(copy, " \t", &save); w; w = strtok_r(NULL, " \t", &save)) {
			if (!strcmp(w, key) || (!strncmp(w, key, klen) && w[klen] == '=')) {
				want = true;
				strcpy(wantv, w[klen] ? w + klen + 1 : "");
				break;
			}
		}
		char got[64];
		size_t outlen = 1 + unit_rand(&seed) % 8;
		bool r = cmdline_get(cl, key, got, outlen);
		wantv[outlen - 1 < strlen(wantv) ? outlen - 1 : strlen(wantv)] = '\0';
		if (r != want || strcmp(got, wantv))
			unit_fail(__FILE__, __LINE__, "cmdline \"%s\" key \"%s\" outlen %zu: got %d \"%s\", want %d \"%s\"",
				  cl, key, outlen, r, got, want, wantv);
	}
}

int main(void)
{
	unit_begin(__FILE__);
	RUN(values);
	RUN(missing_keys_clear_out);
	RUN(prefixes_do_not_match);
	RUN(whitespace_and_order);
	RUN(small_buffers);
	RUN(has);
	RUN(list_membership);
	RUN(list_all_matches);
	RUN(random_against_model);
	return unit_end();
}
