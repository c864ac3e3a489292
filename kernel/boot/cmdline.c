/* Pure code: also tested on the host. */
#include "boot/cmdline.h"

static bool is_space(char c) { return c == ' ' || c == '\t'; }

bool cmdline_get(const char *s, const char *key, char *out, size_t outlen)
{
	size_t klen = 0;
	while (key[klen])
		klen++;
	while (s && *s) {
		while (is_space(*s))
			s++;
		const char *w = s;
		while (*s && !is_space(*s))
			s++;
		size_t wlen = (size_t)(s - w);
		if (wlen >= klen && !__builtin_memcmp(w, key, klen) && (wlen == klen || w[klen] == '=')) {
			if (out && outlen) {
				size_t i = 0;
				for (const char *v = w + klen + (wlen > klen); v < s && i + 1 < outlen; v++)
					out[i++] = *v;
				out[i] = '\0';
			}
			return true;
		}
	}
	if (out && outlen)
		out[0] = '\0';
	return false;
}

bool cmdline_has(const char *s, const char *key) { return cmdline_get(s, key, NULL, 0); }

bool list_contains(const char *list, const char *word, bool all_matches)
{
	size_t wlen = 0;
	while (word[wlen])
		wlen++;
	const char *p = list;
	while (*p) {
		const char *e = p;
		while (*e && *e != ',')
			e++;
		size_t len = (size_t)(e - p);
		if ((all_matches && len == 3 && !__builtin_memcmp(p, "all", 3)) ||
		    (len == wlen && !__builtin_memcmp(p, word, len)))
			return true;
		p = *e ? e + 1 : e;
	}
	return false;
}
