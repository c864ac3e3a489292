/* System V message queues and semaphores (sysv.c). */
#pragma once
#include "vfs.h"

#define NR_SEMGET 64
#define NR_SEMOP 65
#define NR_SEMCTL 66
#define NR_MSGGET 68
#define NR_MSGSND 69
#define NR_MSGRCV 70
#define NR_MSGCTL 71
#define NR_SEMTIMEDOP 220
#define NR_SHMGET 29
#define NR_SHMAT 30
#define NR_SHMCTL 31
#define NR_SHMDT 67

/* msgget, msgsnd, msgrcv, msgctl, semget, semop, semtimedop, semctl, shmget, shmat, shmdt,
 * shmctl; VFS_NOT_MINE for others. */
int64_t sysv_call(struct client *c, struct vcall *v);
/* After a restart (adopted: the tables are the predecessor's): the segments' objects claimed. */
void sysv_init(bool adopted);
/* Process pid ended: its SEM_UNDO adjustments are applied, its attachments end. */
void sysv_forget(uint64_t pid);
/* A fork's child inherits its parent's attachments; an exec ends a process's. */
void sysv_fork(uint64_t parent, uint64_t child);
void sysv_exec(uint64_t pid);
