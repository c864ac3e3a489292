/* System V message queues and semaphores (sysv.c). */
#pragma once
#include "vfs.h"
#include "lx_abi.h"

/* msgget, msgsnd, msgrcv, msgctl, semget, semop, semtimedop, semctl, shmget, shmat, shmdt,
 * shmctl; VFS_NOT_MINE for others. */
int64_t sysv_call(struct client *c, struct vcall *v);
/* After a restart (adopted: the tables are the predecessor's): the segments' objects claimed. */
void sysv_init(bool adopted);
/* Process pid ended: its LX_SEM_UNDO adjustments are applied, its attachments end. */
void sysv_forget(uint64_t pid);
/* A fork's child inherits its parent's attachments; an exec ends a process's. */
void sysv_fork(uint64_t parent, uint64_t child);
void sysv_exec(uint64_t pid);
