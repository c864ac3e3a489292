/* A small heap for servers (ax_malloc/ax_free): power-of-two size classes from 32 bytes to
 * 64 KiB with free lists, carved from 256 KiB memory objects; bigger blocks are memory
 * objects of their own. Single-threaded (servers are). Each arena and each big block holds
 * one of the process's 64 memory-object handles, which bounds the heap (about 14 MiB of
 * small blocks, or fewer with big ones). */
#pragma once
#include <stddef.h>

void *ax_malloc(size_t n);
void *ax_calloc(size_t n, size_t size);
void *ax_realloc(void *p, size_t n);
void ax_free(void *p);
