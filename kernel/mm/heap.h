/* Kernel heap for small objects: size classes 16..2048 bytes carved from single frames
 * (empty frames go back to the frame allocator, one per class stays cached), larger
 * requests as whole contiguous frames. Memory comes back zeroed. */
#pragma once
#include "lib/types.h"

void *kmalloc(size_t size);
void *kzalloc(size_t size);
void kfree(void *p);
