/* /proc's pieces (procfs.c: the tree, the hooks, the system's files; procpid.c: /proc/PID
 * and /proc/self's per-process files; procsys.c: cpuinfo and /proc/sys). */
#pragma once
#include "vfs.h"

enum { PROC_MEMINFO = 1, PROC_MOUNTS, PROC_UPTIME, PROC_FD, PROC_EXE, PROC_CWD, PROC_STAT, PROC_KSTAT, PROC_THREADS, PROC_SWITCHES,
       PROC_CPUINFO, PROC_PIDDIR, PROC_PID_STAT, PROC_PID_STATUS, PROC_PID_CMDLINE, PROC_PID_COMM, PROC_PID_ENVIRON, PROC_PID_MAPS };
#define SELF_SLOT 0xffffffffu /* rnode.dev of /proc/self's per-process files: the caller */

/* A node of /proc: a file (regular or link) or directory with a magic number. */
int procfs_make(struct rnode *dir, const char *name, uint32_t mode, uint16_t magic, struct rnode **out);
/* procpid.c: whether a PID directory is absent now (an empty slot); a per-process file's
 * text; those files in dir about the process in slot (SELF_SLOT: the caller); the PID
 * directories, made once. */
bool procfs_pid_hidden(const struct rnode *n);
int procfs_pid_file(const struct rnode *n, char *buf, size_t size);
int procfs_pid_files(struct rnode *dir, uint32_t slot);
/* The process a per-process node (a file, exe, cwd) is about, or NULL. */
struct client *procfs_client(const struct rnode *n);
int procfs_pid_dirs_init(struct rnode *proc);
/* procsys.c */
int procfs_cpuinfo(char *buf, size_t size);
int procfs_sys_init(struct rnode *proc);
