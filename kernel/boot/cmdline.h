/* Kernel command line: space-separated words, each `key` or `key=value`. */
#pragma once
#include "lib/types.h"

/* Copies the value of key into out (empty for a bare `key`). Returns true if key is present. */
bool cmdline_get(const char *cmdline, const char *key, char *out, size_t outlen);
bool cmdline_has(const char *cmdline, const char *key);
/* Is word a member of a comma-separated list? With all_matches, "all" matches every word. */
bool list_contains(const char *list, const char *word, bool all_matches);
