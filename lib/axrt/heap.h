/* A small heap for servers (ax_malloc/ax_free): power-of-two size classes from 32 bytes to
 * 64 KiB with free lists, carved from 256 KiB memory objects; bigger blocks are memory
 * objects of their own. Single-threaded (servers are). Each arena and each big block holds
 * one of the process's memory-object handles (4096 at most, shared with everything else).
 * Its objects are mapped at addresses of their own window and its state is kept (AX_KEPT),
 * so a server that keeps its image (ax_keep_image, keep.h) hands its whole heap to its
 * successor. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

void *ax_malloc(size_t n);
void *ax_calloc(size_t n, size_t size);
void *ax_realloc(void *p, size_t n);
void ax_free(void *p);
/* Whether `head` (an object's first 32 bytes) is the head of one of the heap's objects; if so
 * where it was mapped and how big it is. */
bool ax_heap_object(const void *head, uint64_t *va, uint64_t *bytes);
