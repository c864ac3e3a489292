/* Memory for the RAM file system: the server heap in Axolotl, libc in the host tests. */
#pragma once
#ifdef VFS_HOST
#include <stdlib.h>
#include <string.h>
#define vfs_malloc malloc
#define vfs_calloc calloc
#define vfs_realloc realloc
#define vfs_free free
#define VFS_KEPT
#else
#include "axrt.h"
#include "heap.h"
#define vfs_malloc ax_malloc
#define vfs_calloc ax_calloc
#define vfs_realloc ax_realloc
#define vfs_free ax_free
#include "keep.h"
/* State that outlives an instance (README.md, "Recovery"): the kept section. */
#define VFS_KEPT AX_KEPT
#endif
