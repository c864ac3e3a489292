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

/* msgget, msgsnd, msgrcv, msgctl, semget, semop, semtimedop, semctl; VFS_NOT_MINE for others. */
int64_t sysv_call(struct client *c, struct vcall *v);
/* Process pid ended: its SEM_UNDO adjustments are applied. */
void sysv_forget(uint64_t pid);
