/* A Linux process's state in the kernel (linux/signal.c, linux/lxproc.c): what struct
 * proc's `lx` points to. Only kernel/linux/ includes this. */
#pragma once
#include "linux/hooks.h"

/* A Linux signal disposition (rt_sigaction's struct k_sigaction layout). */
struct lx_sigaction {
	uint64_t handler;  /* 0 SIG_DFL, 1 SIG_IGN, else the handler's address */
	uint64_t flags;    /* SA_* */
	uint64_t restorer; /* where the handler returns to (SA_RESTORER) */
	uint64_t mask;     /* blocked while the handler runs */
};
/* Linux state of a process (linux/signal.c, linux/lxproc.c); NULL for native processes. */
struct lx_proc {
	int32_t pid;
	uint64_t sigpending;                  /* process-directed, not yet taken by a thread */
	/* Signals ignored only because the parent ignored them at fork, until the process sets
	 * their action or execs: held pending then, not dropped (signal.c, signal_post). */
	uint64_t sig_forkign;
	struct lx_sigaction act[LX_NSIG];
	int32_t sigpid[LX_NSIG];              /* si_pid / si_code / si_value of each pending signal */
	int32_t sigcode[LX_NSIG];
	uint64_t sigval[LX_NSIG];
	uint64_t wake_va;                     /* its wake word (KC_WAKE, wakeword.c), 0: none */
};
