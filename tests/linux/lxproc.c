/* Linux-ABI tests of processes, threads and signals, run inside Axolotl under pm (built with
 * musl-gcc -static like any Linux program). Each check prints LXTEST PASS|FAIL name.
 *   lxproc threads        8 threads: mutexes, condition variables, joins, TLS, tids
 *   lxproc signals        handlers, masks, pending, SA_RESETHAND, alternate stack, a
 *                         caught SIGSEGV, EINTR and SA_RESTART, FPU state kept
 *   lxproc fork           fork/wait4 statuses, signals to children, SIGCHLD, pipes
 *                         between processes, groups and sessions, vfork
 *   lxproc exec N         execve (ELF, #! script, errors) and N fork+exec+wait rounds
 *                         that must leave free memory where it was
 *   lxproc timers         alarm, setitimer, getitimer: EINTR, periodic, fork, errors
 *   lxproc locks          fcntl record and OFD locks, flock: conflicts, waits, release
 *                         at close and exit, EINTR, errors
 *   lxproc pipes          F_GETPIPE_SZ, F_SETPIPE_SZ, writes of at most PIPE_BUF whole
 *   lxproc fifos          mkfifo, mknod, opens that wait for the other side, EINTR
 *   lxproc shfutex        futexes in MAP_SHARED memory between processes, a pshared semaphore
 *   lxproc procfs         /proc/self and /proc/PID: stat, status, cmdline, comm, the listing
 *   lxproc reaper         PR_SET_CHILD_SUBREAPER adopts orphans, PR_SET_PDEATHSIG
 *   lxproc true | fdclosed    helpers the exec tests run (and "args one" via a script) */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <setjmp.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/msg.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/file.h>
#include <sys/fsuid.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/time.h>
#include <sys/timerfd.h>
#include <sys/epoll.h>
#include <sys/times.h>
#include <sys/syscall.h>
#include <sys/sysinfo.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int failures;
static volatile uintptr_t bad_address = 8; /* an unmapped page: a store there faults */

static void check(const char *name, int ok)
{
	printf("LXTEST %s %s\n", ok ? "PASS" : "FAIL", name);
	fflush(stdout);
	if (!ok)
		failures++;
}

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* ---- threads ---- */
#define NTHREADS 8
#define ROUNDS 2000
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static long counter, turn;
static __thread long tls_value;
static pid_t tids[NTHREADS];

static void *worker(void *arg)
{
	long id = (long)arg;
	tls_value = id * 1000;
	tids[id] = (pid_t)syscall(SYS_gettid);
	for (int i = 0; i < ROUNDS; i++) {
		pthread_mutex_lock(&mu);
		counter++;
		pthread_mutex_unlock(&mu);
	}
	/* Take turns in id order through one condition variable: every thread must wake. */
	pthread_mutex_lock(&mu);
	while (turn != id)
		pthread_cond_wait(&cv, &mu);
	turn++;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mu);
	if (tls_value != id * 1000)
		return (void *)-1;
	if (id == NTHREADS - 1)
		pthread_exit((void *)(id + 100));
	return (void *)(id + 100);
}

static int mode_threads(void)
{
	pthread_t t[NTHREADS];
	int created = 0;
	tls_value = -5;
	for (long i = 0; i < NTHREADS; i++)
		created += pthread_create(&t[i], NULL, worker, (void *)i) == 0;
	check("create_8", created == NTHREADS);
	int joined = 0;
	for (long i = 0; i < created; i++) {
		void *ret;
		joined += pthread_join(t[i], &ret) == 0 && (long)ret == i + 100;
	}
	check("join_results", joined == NTHREADS);
	check("mutex_counter", counter == (long)NTHREADS * ROUNDS);
	check("condvar_turns", turn == NTHREADS);
	check("tls_main_untouched", tls_value == -5);
	int distinct = 1;
	for (int i = 0; i < NTHREADS; i++)
		for (int j = 0; j < i; j++)
			distinct &= tids[i] != tids[j] && tids[i] > 0 && tids[i] != getpid();
	check("tids_distinct", distinct);
	check("gettid_main_is_pid", syscall(SYS_gettid) == getpid());
	/* A timed wait that nobody signals times out. */
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_nsec += 50 * 1000000;
	if (ts.tv_nsec >= 1000000000)
		ts.tv_sec++, ts.tv_nsec -= 1000000000;
	pthread_mutex_lock(&mu);
	double t0 = now_ms();
	int r = pthread_cond_timedwait(&cv, &mu, &ts);
	pthread_mutex_unlock(&mu);
	check("cond_timedwait_times_out", r == ETIMEDOUT && now_ms() - t0 >= 40);
	/* futex errors: a value that does not match, a misaligned word */
	int word = 1;
	errno = 0;
	check("futex_eagain", syscall(SYS_futex, &word, 0 /* WAIT */, 2, NULL, NULL, 0) == -1 && errno == EAGAIN);
	errno = 0;
	check("futex_einval", syscall(SYS_futex, (char *)&word + 1, 1, 1, NULL, NULL, 0) == -1 && errno == EINVAL);
	printf("LXTEST DONE %d failures\n", failures);
	return failures;
}

/* ---- signals ---- */
static volatile sig_atomic_t got, got_sig, got_code;
static volatile pid_t got_pid;
static volatile uintptr_t handler_sp;
static sigjmp_buf jump;

static void on_info(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	got++;
	got_sig = sig;
	got_pid = si->si_pid;
	got_code = si->si_code;
	volatile double x = 1.5;
	x = x * x * 3.0; /* the handler uses the FPU too */
	int local;
	handler_sp = (uintptr_t)&local;
}

static void on_plain(int sig)
{
	(void)sig;
	got++;
}

static void on_segv(int sig)
{
	(void)sig;
	siglongjmp(jump, 1);
}

static pthread_t main_thread;
static int pipe_w;

static void *poke(void *arg)
{
	long what = (long)arg;
	struct timespec d = { 0, 80 * 1000000 };
	nanosleep(&d, NULL);
	pthread_kill(main_thread, SIGUSR1);
	if (what == 1) { /* and then the data the restarted read waits for */
		nanosleep(&d, NULL);
		write(pipe_w, "z", 1);
	}
	return NULL;
}

static void set_handler(int sig, void (*h)(int), int flags)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = h;
	sa.sa_flags = flags;
	sigaction(sig, &sa, NULL);
}

static int mode_signals(void)
{
	struct sigaction sa, old;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_info;
	sa.sa_flags = SA_SIGINFO;
	check("sigaction", sigaction(SIGUSR1, &sa, NULL) == 0);
	check("sigaction_read_back", sigaction(SIGUSR1, NULL, &old) == 0 && old.sa_sigaction == on_info);
	volatile double before = 2.25;
	raise(SIGUSR1);
	check("handler_ran", got == 1 && got_sig == SIGUSR1);
	check("siginfo_pid", got_pid == getpid());
	check("fpu_kept", before * 2 == 4.5);
	kill(getpid(), SIGUSR1);
	check("kill_self", got == 2 && got_code == SI_USER);

	/* Blocked: pending until unblocked. */
	sigset_t set, pend;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	raise(SIGUSR1);
	sigpending(&pend);
	check("blocked_stays_pending", got == 2 && sigismember(&pend, SIGUSR1));
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	check("delivered_on_unblock", got == 3);
	errno = 0;
	check("sigprocmask_einval", sigprocmask(99, &set, NULL) == -1 && errno == EINVAL);
	errno = 0;
	check("sigaction_sigkill_einval", sigaction(SIGKILL, &sa, NULL) == -1 && errno == EINVAL);

	/* Ignored, and reset after one delivery. */
	set_handler(SIGUSR2, SIG_IGN, 0);
	raise(SIGUSR2);
	check("ignored", got == 3);
	got = 0;
	set_handler(SIGUSR2, on_plain, SA_RESETHAND);
	raise(SIGUSR2);
	check("resethand_once", got == 1 && sigaction(SIGUSR2, NULL, &old) == 0 && old.sa_handler == SIG_DFL);

	/* On an alternate stack. */
	static char alt[65536];
	stack_t ss = { .ss_sp = alt, .ss_size = sizeof(alt), .ss_flags = 0 };
	check("sigaltstack", sigaltstack(&ss, NULL) == 0);
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
	sigaction(SIGUSR1, &sa, NULL);
	raise(SIGUSR1);
	check("ran_on_altstack", handler_sp >= (uintptr_t)alt && handler_sp < (uintptr_t)alt + sizeof(alt));

	/* A fault caught by a handler. */
	set_handler(SIGSEGV, on_segv, SA_NODEFER);
	int caught = 0;
	if (sigsetjmp(jump, 1) == 0)
		*(volatile int *)bad_address = 1;
	else
		caught = 1;
	check("segv_caught", caught);

	/* EINTR: a nanosleep cut short by a signal from another thread. */
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGUSR1, &sa, NULL);
	main_thread = pthread_self();
	pthread_t th;
	pthread_create(&th, NULL, poke, (void *)0);
	struct timespec req = { 5, 0 }, rem = { 0, 0 };
	double t0 = now_ms();
	errno = 0;
	int r = nanosleep(&req, &rem);
	check("nanosleep_eintr", r == -1 && errno == EINTR && now_ms() - t0 < 4000 && rem.tv_sec >= 3);
	pthread_join(th, NULL);

	/* A read held by vfs: EINTR without SA_RESTART, carried on with it. */
	int p[2];
	char c;
	pipe(p);
	pipe_w = p[1];
	pthread_create(&th, NULL, poke, (void *)0);
	errno = 0;
	r = (int)read(p[0], &c, 1);
	check("read_eintr", r == -1 && errno == EINTR);
	pthread_join(th, NULL);
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigaction(SIGUSR1, &sa, NULL);
	got = 0;
	pthread_create(&th, NULL, poke, (void *)1);
	r = (int)read(p[0], &c, 1);
	check("read_restarted", r == 1 && c == 'z' && got == 1);
	pthread_join(th, NULL);

	/* sigsuspend: waits with the signal unblocked, the old mask back afterwards. */
	sigprocmask(SIG_BLOCK, &set, NULL);
	pthread_create(&th, NULL, poke, (void *)0);
	sigset_t none;
	sigemptyset(&none);
	got = 0;
	r = sigsuspend(&none);
	sigset_t now;
	sigprocmask(SIG_BLOCK, NULL, &now);
	check("sigsuspend", r == -1 && errno == EINTR && got == 1 && sigismember(&now, SIGUSR1));
	pthread_join(th, NULL);

	/* ppoll with a mask: SIGUSR1 (blocked) is let in for the wait only, and SA_RESTART
	 * does not restart it (as Linux). */
	got = 0;
	pthread_create(&th, NULL, poke, (void *)0);
	struct timespec five = { 5, 0 };
	errno = 0;
	r = ppoll(NULL, 0, &five, &none);
	sigprocmask(SIG_BLOCK, NULL, &now);
	check("ppoll_mask_lets_signal_in", r == -1 && errno == EINTR && got == 1);
	check("ppoll_mask_restored", sigismember(&now, SIGUSR1));
	pthread_join(th, NULL);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	printf("LXTEST DONE %d failures\n", failures);
	return failures;
}

/* ---- fork ---- */
static volatile sig_atomic_t chld;
static void on_chld(int sig)
{
	(void)sig;
	chld++;
}

static void sleep_ms(long ms)
{
	struct timespec d = { ms / 1000, (ms % 1000) * 1000000 };
	while (nanosleep(&d, &d) == -1 && errno == EINTR)
		;
}

static volatile sig_atomic_t usr2_seen;
static void on_usr2(int sig)
{
	(void)sig;
	usr2_seen++;
}

static int status_of(pid_t pid)
{
	int st = -1;
	return waitpid(pid, &st, 0) == pid ? st : -1;
}

static int mode_fork(void)
{
	set_handler(SIGCHLD, on_chld, SA_RESTART);
	pid_t me = getpid();
	pid_t pid = fork();
	if (pid == 0)
		_exit(getppid() == me ? 3 : 4);
	check("fork", pid > 0 && pid != me);
	int st = status_of(pid);
	check("wait_exit_status", WIFEXITED(st) && WEXITSTATUS(st) == 3);
	check("sigchld", chld >= 1);
	errno = 0;
	check("echild", waitpid(-1, &st, WNOHANG) == -1 && errno == ECHILD);

	/* Memory is copied: the child's writes stay in the child. */
	static int shared_var = 7;
	pid = fork();
	if (pid == 0) {
		shared_var = 99;
		_exit(shared_var == 99 ? 0 : 1);
	}
	st = status_of(pid);
	check("memory_copied", WIFEXITED(st) && WEXITSTATUS(st) == 0 && shared_var == 7);

	/* Killed by a signal; a fault; WNOHANG while it runs. */
	pid = fork();
	if (pid == 0) {
		for (;;)
			pause();
	}
	check("wnohang_running", waitpid(pid, &st, WNOHANG) == 0);
	check("kill_child", kill(pid, SIGTERM) == 0);
	st = status_of(pid);
	check("status_signaled", WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM);

	/* A signal the child ignores only by inheritance, sent before the child sets its own
	 * action (a shell's `cmd & kill $!`): it acts on the action the child sets. The child
	 * sleeps first, so the kill is surely earlier. */
	signal(SIGTERM, SIG_IGN);
	pid = fork();
	if (pid == 0) {
		sleep_ms(100);
		signal(SIGTERM, SIG_DFL); /* the held SIGTERM ends us here */
		sleep_ms(300);
		_exit(3);
	}
	check("kill_before_child_restores_default", kill(pid, SIGTERM) == 0);
	st = status_of(pid);
	check("held_signal_acts_on_child_action", WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM);
	/* ...but a child that ignores it itself discards it, as POSIX says for any pending one */
	pid = fork();
	if (pid == 0) {
		sleep_ms(100);
		signal(SIGTERM, SIG_IGN);
		signal(SIGTERM, SIG_DFL);
		sleep_ms(100);
		_exit(4);
	}
	kill(pid, SIGTERM);
	st = status_of(pid);
	check("held_signal_discarded_by_sig_ign", WIFEXITED(st) && WEXITSTATUS(st) == 4);
	signal(SIGTERM, SIG_DFL);

	/* Blocked signals are never dropped as ignored (the action may change before the
	 * unblock), as on Linux: raised while blocked and ignored, then caught. */
	sigset_t usr2, old;
	sigemptyset(&usr2);
	sigaddset(&usr2, SIGUSR2);
	sigprocmask(SIG_BLOCK, &usr2, &old);
	signal(SIGUSR2, SIG_IGN);
	raise(SIGUSR2);
	sigset_t pend;
	sigpending(&pend);
	int was_pending = sigismember(&pend, SIGUSR2);
	usr2_seen = 0;
	set_handler(SIGUSR2, on_usr2, 0);
	sigprocmask(SIG_SETMASK, &old, NULL);
	check("blocked_ignored_signal_kept", was_pending == 1 && usr2_seen == 1);
	signal(SIGUSR2, SIG_DFL);

	pid = fork();
	if (pid == 0)
		*(volatile int *)bad_address = 1;
	st = status_of(pid);
	check("status_segv_core", WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV && WCOREDUMP(st));
	pid = fork();
	if (pid == 0) {
		int q[2];
		pipe(q);
		close(q[0]);
		write(q[1], "x", 1); /* SIGPIPE: the default action ends us */
		_exit(0);
	}
	st = status_of(pid);
	check("status_sigpipe", WIFSIGNALED(st) && WTERMSIG(st) == SIGPIPE);

	/* A pipe between parent and child, the parent blocking in read. */
	int p[2];
	pipe(p);
	pid = fork();
	if (pid == 0) {
		close(p[0]);
		struct timespec d = { 0, 50 * 1000000 };
		nanosleep(&d, NULL);
		const char *msg = "through the pipe";
		write(p[1], msg, strlen(msg));
		_exit(0);
	}
	close(p[1]);
	char buf[64] = { 0 };
	size_t n = 0;
	for (ssize_t k; (k = read(p[0], buf + n, sizeof(buf) - 1 - n)) > 0;)
		n += (size_t)k;
	close(p[0]);
	check("pipe_between_processes", n == 16 && !strcmp(buf, "through the pipe"));
	status_of(pid);

	/* Groups and sessions. */
	pid = fork();
	if (pid == 0) {
		int ok = getpgrp() == getpgid(0) && setpgid(0, 0) == 0 && getpgrp() == getpid();
		ok = ok && setsid() == -1 && errno == EPERM; /* a group leader cannot */
		_exit(ok ? 0 : 1);
	}
	st = status_of(pid);
	check("setpgid_in_child", WIFEXITED(st) && WEXITSTATUS(st) == 0);
	pid = fork();
	if (pid == 0)
		_exit(setsid() == getpid() && getsid(0) == getpid() ? 0 : 1);
	st = status_of(pid);
	check("setsid", WIFEXITED(st) && WEXITSTATUS(st) == 0);
	/* kill of a process group */
	pid_t a = fork();
	if (a == 0) {
		setpgid(0, 0);
		for (;;)
			pause();
	}
	setpgid(a, a);
	pid_t b = fork();
	if (b == 0) {
		setpgid(0, a);
		for (;;)
			pause();
	}
	setpgid(b, a);
	struct timespec d = { 0, 30 * 1000000 };
	nanosleep(&d, NULL);
	check("kill_group", kill(-a, SIGKILL) == 0);
	int sa_ = status_of(a), sb = status_of(b);
	check("group_killed", WIFSIGNALED(sa_) && WTERMSIG(sa_) == SIGKILL && WIFSIGNALED(sb) && WTERMSIG(sb) == SIGKILL);
	errno = 0;
	check("kill_esrch", kill(999999, 0) == -1 && errno == ESRCH);

	/* CPU time: a child burns 100 ms of CPU; wait4's rusage, RUSAGE_CHILDREN and times()
	 * report at least that; RUSAGE_SELF reports the caller's own. */
	pid = fork();
	if (pid == 0) {
		struct timespec cpu;
		do
			clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu);
		while (cpu.tv_sec == 0 && cpu.tv_nsec < 100 * 1000000);
		_exit(0);
	}
	struct rusage ru, rc, rs;
	int wst;
	check("wait4_rusage", wait4(pid, &wst, 0, &ru) == pid && ru.ru_utime.tv_sec * 1000000 + ru.ru_utime.tv_usec >= 90000);
	check("rusage_children", getrusage(RUSAGE_CHILDREN, &rc) == 0 &&
					 rc.ru_utime.tv_sec * 1000000 + rc.ru_utime.tv_usec >= 90000);
	check("rusage_self", getrusage(RUSAGE_SELF, &rs) == 0 && rs.ru_maxrss > 0);
	struct tms tm;
	check("times_children", times(&tm) != (clock_t)-1 && tm.tms_cutime >= 9);
	errno = 0;
	check("rusage_einval", getrusage(7, &rs) == -1 && errno == EINVAL);

	/* Reserved memory (PROT_NONE: the kernel makes its pages only when mprotect opens them)
	 * is copied as it is: the opened page with its contents, the rest still reserved. */
	size_t rlen = (size_t)256 << 20;
	char *res = mmap(NULL, rlen, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	char *open_pg = res + (rlen / 2);
	int opened = res != MAP_FAILED && mprotect(open_pg, 4096, PROT_READ | PROT_WRITE) == 0;
	if (opened)
		open_pg[100] = 'p';
	pid = fork();
	if (pid == 0) {
		if (open_pg[100] != 'p' || open_pg[101] != 0)
			_exit(1);
		open_pg[100] = 'c';
		if (mprotect(res, 4096, PROT_READ | PROT_WRITE) != 0 || res[0] != 0)
			_exit(2); /* the child's own reserved page opens zeroed */
		*(volatile char *)(res + 4096) = 1; /* still reserved: SIGSEGV */
		_exit(3);
	}
	st = status_of(pid);
	check("fork_copies_reserved_memory", opened && WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV &&
						    open_pg[100] == 'p');
	if (WIFEXITED(st))
		printf("LXTEST INFO reserved-memory child exited %d\n", WEXITSTATUS(st));
	check("munmap_reserved", res != MAP_FAILED && munmap(res, rlen) == 0);

	/* vfork: the parent waits until the child ends. */
	volatile int order = 0;
	pid = vfork();
	if (pid == 0)
		_exit(5);
	order = 1;
	st = status_of(pid);
	check("vfork", order == 1 && WIFEXITED(st) && WEXITSTATUS(st) == 5);
	printf("LXTEST DONE %d failures\n", failures);
	return failures;
}

/* ---- exec ---- */
static long free_pages(void)
{
	struct sysinfo si;
	sysinfo(&si);
	return (long)(si.freeram * si.mem_unit / 4096);
}

static int run_wait(char *const argv[])
{
	pid_t pid = fork();
	if (pid == 0) {
		execv(argv[0], argv);
		_exit(127);
	}
	return status_of(pid);
}

static int mode_exec(int rounds)
{
	char *argv_true[] = { "/bin/lxproc", "true", NULL };
	/* A signal held for a child that ignores it by inheritance (see mode_fork) is dropped
	 * when the child execs: the new program keeps the signal ignored. */
	signal(SIGTERM, SIG_IGN);
	pid_t held = fork();
	if (held == 0) {
		sleep_ms(100);
		execv(argv_true[0], argv_true);
		_exit(127);
	}
	kill(held, SIGTERM);
	int hst = status_of(held);
	signal(SIGTERM, SIG_DFL);
	check("held_signal_dropped_at_exec", WIFEXITED(hst) && WEXITSTATUS(hst) == 0);
	int st = run_wait(argv_true);
	check("exec_elf", WIFEXITED(st) && WEXITSTATUS(st) == 0);
	/* a script with an interpreter line and an argument */
	int fd = open("/tmp/script.sh", O_CREAT | O_WRONLY | O_TRUNC, 0755);
	const char *text = "#!/bin/lxproc args one\nignored\n";
	write(fd, text, strlen(text));
	close(fd);
	char *argv_script[] = { "/tmp/script.sh", "two", NULL };
	st = run_wait(argv_script);
	check("exec_script", WIFEXITED(st) && WEXITSTATUS(st) == 42);
	errno = 0;
	check("exec_enoent", execl("/nonexistent", "x", (char *)NULL) == -1 && errno == ENOENT);
	fd = open("/tmp/noexec", O_CREAT | O_WRONLY | O_TRUNC, 0644);
	write(fd, "data", 4);
	close(fd);
	errno = 0;
	check("exec_eacces", execl("/tmp/noexec", "x", (char *)NULL) == -1 && errno == EACCES);
	fd = open("/tmp/garbage", O_CREAT | O_WRONLY | O_TRUNC, 0755);
	write(fd, "garbage, not an ELF file", 24);
	close(fd);
	errno = 0;
	check("exec_enoexec", execl("/tmp/garbage", "x", (char *)NULL) == -1 && errno == ENOEXEC);
	errno = 0;
	check("exec_efault", syscall(SYS_execve, (char *)1, argv_true, NULL) == -1 && errno == EFAULT);
	/* close-on-exec: the child sees fd 5 closed */
	int cfd = open("/tmp/noexec", O_RDONLY | O_CLOEXEC);
	dup2(cfd, 5);
	fcntl(5, F_SETFD, FD_CLOEXEC);
	char *argv_fd[] = { "/bin/lxproc", "fdclosed", NULL };
	st = run_wait(argv_fd);
	check("cloexec_closed", WIFEXITED(st) && WEXITSTATUS(st) == 0);
	close(cfd), close(5);

	/* A private file mapping: the file's bytes, then zeros; writes stay private. */
	fd = open("/etc/passwd", O_RDONLY);
	char *m = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	check("mmap_file", m != MAP_FAILED && !strncmp(m, "root:", 5) && m[8191] == 0);
	if (m != MAP_FAILED) {
		m[0] = 'X';
		char first;
		pread(fd, &first, 1, 0);
		check("mmap_file_private", first == 'r');
		munmap(m, 8192);
	}
	errno = 0;
	check("mmap_file_shared_write_rdonly_eacces", mmap(NULL, 4096, PROT_WRITE, MAP_SHARED, fd, 0) == MAP_FAILED && errno == EACCES);
	errno = 0;
	check("mmap_unaligned_offset_einval", mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 1) == MAP_FAILED && errno == EINVAL);
	close(fd);
	errno = 0;
	check("mmap_badf", mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, 99, 0) == MAP_FAILED && errno == EBADF);
	int zfd = open("/dev/zero", O_RDWR);
	char *z = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE, zfd, 0);
	check("mmap_dev_zero", z != MAP_FAILED && z[0] == 0 && z[4095] == 0);
	close(zfd);

	/* Rounds of fork+exec+wait leave free memory where it was. */
	for (int i = 0; i < 5; i++)
		run_wait(argv_true); /* caches and heaps reach their size */
	long before = free_pages();
	int ok = 0;
	for (int i = 0; i < rounds; i++) {
		st = run_wait(argv_true);
		ok += WIFEXITED(st) && WEXITSTATUS(st) == 0;
	}
	long after = free_pages();
	printf("LXTEST exec: %d rounds, %d ok, free pages %ld -> %ld\n", rounds, ok, before, after);
	check("exec_rounds", ok == rounds);
	check("exec_no_leak", after >= before - 4);
	printf("LXTEST DONE %d failures\n", failures);
	return failures;
}

/* ---- timers: alarm, setitimer, getitimer (ITIMER_REAL) ---- */
static volatile sig_atomic_t alrm;
static siginfo_t alrm_info;
static void on_alrm(int sig, siginfo_t *si, void *uc)
{
	(void)sig, (void)uc;
	alrm_info = *si;
	alrm++;
}

static volatile sig_atomic_t timer_called;
static void on_timer_thread(union sigval v) { timer_called = v.sival_int; }

static int mode_timers(void)
{
	struct sigaction sa = { .sa_sigaction = on_alrm, .sa_flags = SA_SIGINFO };
	sigemptyset(&sa.sa_mask);
	check("alrm_handler", sigaction(SIGALRM, &sa, NULL) == 0);
	/* alarm: the seconds left of the one before */
	unsigned a0 = alarm(5), a1 = alarm(3), a2 = alarm(0);
	check("alarm_returns_left", a0 == 0 && (a1 == 5 || a1 == 4) && (a2 == 3 || a2 == 2));
	check("alarm_cancelled_quiet", (sleep_ms(300), alrm == 0));
	/* an alarm interrupts a blocking read (no SA_RESTART): EINTR, SIGALRM from the kernel */
	int p[2];
	check("pipe", pipe(p) == 0);
	double t0 = now_ms();
	alarm(1);
	char c;
	ssize_t r = read(p[0], &c, 1);
	double took = now_ms() - t0;
	check("alarm_interrupts_read", r == -1 && errno == EINTR && alrm == 1 && took >= 900 && took < 10000);
	check("alarm_si_code_kernel", alrm_info.si_signo == SIGALRM && alrm_info.si_code == SI_KERNEL);
	/* setitimer: periodic every 50 ms, read back, then disarmed */
	struct itimerval it = { { 0, 50000 }, { 0, 50000 } }, old, cur;
	alrm = 0;
	check("setitimer", setitimer(ITIMER_REAL, &it, &old) == 0 && old.it_value.tv_sec == 0 &&
			   old.it_value.tv_usec == 0);
	check("getitimer_armed", getitimer(ITIMER_REAL, &cur) == 0 && cur.it_interval.tv_usec == 50000 &&
				 cur.it_value.tv_sec == 0 && cur.it_value.tv_usec <= 50000);
	t0 = now_ms();
	while (alrm < 3 && now_ms() - t0 < 20000)
		pause();
	took = now_ms() - t0;
	check("setitimer_periodic", alrm >= 3 && took >= 90);
	struct itimerval off = { { 0, 0 }, { 0, 0 } };
	check("setitimer_off_returns_old", setitimer(ITIMER_REAL, &off, &old) == 0 && old.it_interval.tv_usec == 50000);
	int seen = alrm;
	sleep_ms(300);
	check("setitimer_off_quiet", alrm == seen && getitimer(ITIMER_REAL, &cur) == 0 && cur.it_value.tv_sec == 0 &&
					 cur.it_value.tv_usec == 0);
	/* errors */
	struct itimerval bad = { { 0, 0 }, { 0, 1000000 } };
	check("setitimer_einval_usec", setitimer(ITIMER_REAL, &bad, NULL) == -1 && errno == EINVAL);
	check("setitimer_einval_which", setitimer(7, &it, NULL) == -1 && errno == EINVAL);
	check("getitimer_efault", syscall(SYS_getitimer, ITIMER_REAL, (void *)8) == -1 && errno == EFAULT);
	/* not inherited by fork; kept by the parent; the default action ends a process */
	alarm(30);
	pid_t pid = fork();
	if (pid == 0) {
		struct itimerval ch;
		_exit(getitimer(ITIMER_REAL, &ch) == 0 && ch.it_value.tv_sec == 0 && ch.it_value.tv_usec == 0 ? 0 : 1);
	}
	int st = status_of(pid);
	check("fork_child_has_no_timer", WIFEXITED(st) && WEXITSTATUS(st) == 0);
	unsigned left = alarm(0);
	check("parent_keeps_its_alarm", left >= 28 && left <= 30);
	pid = fork();
	if (pid == 0) {
		signal(SIGALRM, SIG_DFL);
		alarm(1);
		for (;;)
			pause();
	}
	st = status_of(pid);
	check("alarm_default_action_kills", WIFSIGNALED(st) && WTERMSIG(st) == SIGALRM);
	/* timerfd */
	uint64_t ticks = 0;
	int tn = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	check("timerfd_create", tn >= 0 && read(tn, &ticks, 8) == -1 && errno == EAGAIN);
	struct itimerspec ts = { { 0, 50000000 }, { 0, 100000000 } }, got;
	check("timerfd_settime", timerfd_settime(tn, 0, &ts, NULL) == 0 && timerfd_gettime(tn, &got) == 0 &&
				 got.it_interval.tv_nsec == 50000000 && got.it_value.tv_sec == 0 && got.it_value.tv_nsec > 0 &&
				 got.it_value.tv_nsec <= 100000000);
	struct pollfd pf = { .fd = tn, .events = POLLIN };
	t0 = now_ms();
	int pr = poll(&pf, 1, 5000);
	took = now_ms() - t0;
	check("timerfd_poll_waits", pr == 1 && (pf.revents & POLLIN) && took >= 50 && took < 5000);
	sleep_ms(300);
	check("timerfd_periodic_count", read(tn, &ticks, 8) == 8 && ticks >= 3 && read(tn, &ticks, 8) == -1 && errno == EAGAIN);
	int ep = epoll_create1(0);
	struct epoll_event ee = { .events = EPOLLIN, .data.u64 = 77 };
	check("timerfd_epoll", ep >= 0 && epoll_ctl(ep, EPOLL_CTL_ADD, tn, &ee) == 0 && epoll_wait(ep, &ee, 1, 5000) == 1 &&
			       ee.data.u64 == 77);
	struct itimerspec zero = { { 0, 0 }, { 0, 0 } };
	check("timerfd_disarm", timerfd_settime(tn, 0, &zero, &got) == 0 && got.it_interval.tv_nsec == 50000000 &&
				timerfd_gettime(tn, &got) == 0 && got.it_value.tv_sec == 0 && got.it_value.tv_nsec == 0 &&
				(sleep_ms(120), read(tn, &ticks, 8) == -1 && errno == EAGAIN));
	int tb = timerfd_create(CLOCK_REALTIME, 0); /* blocking, an absolute time on the wall clock */
	struct timespec wall;
	clock_gettime(CLOCK_REALTIME, &wall);
	struct itimerspec abs = { { 0, 0 }, { wall.tv_sec, wall.tv_nsec } };
	abs.it_value.tv_nsec += 200000000;
	if (abs.it_value.tv_nsec >= 1000000000)
		abs.it_value.tv_sec++, abs.it_value.tv_nsec -= 1000000000;
	t0 = now_ms();
	check("timerfd_abstime_blocking_read", tb >= 0 && timerfd_settime(tb, TFD_TIMER_ABSTIME, &abs, NULL) == 0 &&
					       read(tb, &ticks, 8) == 8 && ticks == 1 && now_ms() - t0 >= 150);
	struct itimerspec badv = { { 0, 0 }, { 0, 1000000000 } };
	int pp[2];
	check("timerfd_errors", timerfd_create(42, 0) == -1 && errno == EINVAL && timerfd_create(CLOCK_MONOTONIC, 0x40) == -1 &&
				errno == EINVAL && timerfd_settime(tn, 0, &badv, NULL) == -1 && errno == EINVAL &&
				pipe(pp) == 0 && timerfd_settime(pp[0], 0, &ts, NULL) == -1 && errno == EINVAL &&
				timerfd_gettime(999, &got) == -1 && errno == EBADF && read(tn, &ticks, 4) == -1 && errno == EINVAL);
	close(tn), close(tb), close(ep), close(pp[0]), close(pp[1]);
	/* POSIX timers: signals with SI_TIMER and the timer's value, to the process or a thread */
	struct sigaction su = { .sa_sigaction = on_alrm, .sa_flags = SA_SIGINFO };
	sigemptyset(&su.sa_mask);
	sigaction(SIGUSR1, &su, NULL);
	struct sigevent sev = { .sigev_notify = SIGEV_SIGNAL, .sigev_signo = SIGUSR1, .sigev_value.sival_int = 0x1234 };
	timer_t tid;
	check("timer_create", timer_create(CLOCK_MONOTONIC, &sev, &tid) == 0);
	struct itimerspec per = { { 0, 50000000 }, { 0, 50000000 } };
	alrm = 0;
	check("timer_settime", timer_settime(tid, 0, &per, NULL) == 0 && timer_gettime(tid, &got) == 0 &&
			       got.it_interval.tv_nsec == 50000000 && got.it_value.tv_nsec <= 50000000);
	t0 = now_ms();
	while (alrm < 3 && now_ms() - t0 < 20000)
		pause();
	check("timer_signals_si_timer_and_value", alrm >= 3 && alrm_info.si_signo == SIGUSR1 &&
						  alrm_info.si_code == SI_TIMER && alrm_info.si_value.sival_int == 0x1234);
	check("timer_getoverrun", timer_getoverrun(tid) >= 0);
	check("timer_delete", timer_delete(tid) == 0 && timer_gettime(tid, &got) == -1 && errno == EINVAL);
	int seen2 = alrm;
	sleep_ms(200);
	check("timer_deleted_quiet", alrm == seen2);
	struct sigevent none = { .sigev_notify = SIGEV_NONE };
	struct itimerspec once = { { 0, 0 }, { 5, 0 } };
	check("timer_sigev_none", timer_create(CLOCK_REALTIME, &none, &tid) == 0 && timer_settime(tid, 0, &once, NULL) == 0 &&
				  timer_gettime(tid, &got) == 0 && got.it_value.tv_sec >= 4 && timer_delete(tid) == 0);
	/* sigwaitinfo/sigtimedwait: a blocked signal taken without its handler */
	sigset_t w2;
	sigemptyset(&w2);
	sigaddset(&w2, SIGUSR2);
	sigprocmask(SIG_BLOCK, &w2, NULL);
	siginfo_t wi;
	int hits0 = alrm;
	check("sigwaitinfo", kill(getpid(), SIGUSR2) == 0 && sigwaitinfo(&w2, &wi) == SIGUSR2 && wi.si_code == SI_USER &&
			     wi.si_pid == getpid() && alrm == hits0);
	struct timespec tmo = { 0, 100000000 };
	t0 = now_ms();
	check("sigtimedwait_times_out", sigtimedwait(&w2, &wi, &tmo) == -1 && errno == EAGAIN && now_ms() - t0 >= 80);
	/* SIGEV_THREAD: the C library's helper thread waits for the timer's signal (sigwaitinfo)
	 * and calls the function */
	struct sigevent th = { .sigev_notify = SIGEV_THREAD, .sigev_notify_function = on_timer_thread,
			       .sigev_value.sival_int = 7 };
	struct itimerspec soon = { { 0, 0 }, { 0, 100000000 } };
	timer_called = 0;
	check("timer_sigev_thread", timer_create(CLOCK_MONOTONIC, &th, &tid) == 0 && timer_settime(tid, 0, &soon, NULL) == 0 &&
				    (sleep_ms(1000), timer_called == 7) && timer_delete(tid) == 0);
	struct sigevent badsev = { .sigev_notify = SIGEV_SIGNAL, .sigev_signo = 99 };
	check("timer_errors", timer_create(CLOCK_MONOTONIC, &badsev, &tid) == -1 && errno == EINVAL &&
			      timer_create(42, NULL, &tid) == -1 && errno == EINVAL &&
			      syscall(SYS_timer_settime, 77, 0, &per, NULL) == -1 && errno == EINVAL);
	return failures;
}

/* ---- locks: fcntl record locks, OFD locks, flock ---- */
static int setlk(int fd, int cmd, short type, off_t start, off_t len)
{
	struct flock fl = { .l_type = type, .l_whence = SEEK_SET, .l_start = start, .l_len = len };
	return fcntl(fd, cmd, &fl);
}

static struct flock getlk(int fd, int cmd, short type, off_t start, off_t len)
{
	struct flock fl = { .l_type = type, .l_whence = SEEK_SET, .l_start = start, .l_len = len };
	if (fcntl(fd, cmd, &fl) != 0)
		fl.l_type = -1;
	return fl;
}

/* A child's verdict as its exit status: 0 when ok. */
static int child_status(pid_t pid)
{
	int st = status_of(pid);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 100 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
}

static int mode_locks(void)
{
	const char *path = "/tmp/lxproc-locks";
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	check("locks_open", fd >= 0 && write(fd, "0123456789", 10) == 10);
	pid_t me = getpid();
	/* record locks between processes */
	check("setlk_write", setlk(fd, F_SETLK, F_WRLCK, 0, 100) == 0);
	pid_t pid = fork();
	if (pid == 0) {
		int f = open(path, O_RDWR);
		int bad = 0;
		bad |= !(setlk(f, F_SETLK, F_WRLCK, 50, 10) == -1 && (errno == EAGAIN || errno == EACCES)) << 0;
		bad |= !(setlk(f, F_SETLK, F_RDLCK, 99, 1) == -1) << 1;
		struct flock g = getlk(f, F_GETLK, F_RDLCK, 10, 5);
		bad |= !(g.l_type == F_WRLCK && g.l_start == 0 && g.l_len == 100 && g.l_pid == me) << 2;
		bad |= !(setlk(f, F_SETLK, F_WRLCK, 100, 100) == 0) << 3; /* next to it: free */
		g = getlk(f, F_GETLK, F_WRLCK, 300, 0);
		bad |= !(g.l_type == F_UNLCK) << 4;
		double t0 = now_ms(); /* waits until the parent unlocks 0..9 */
		bad |= !(setlk(f, F_SETLKW, F_WRLCK, 0, 10) == 0 && now_ms() - t0 >= 200) << 5;
		_exit(bad);
	}
	sleep_ms(500);
	struct flock g = getlk(fd, F_GETLK, F_WRLCK, 150, 10);
	check("getlk_sees_the_childs_lock", g.l_type == F_WRLCK && g.l_start == 100 && g.l_len == 100 && g.l_pid == pid);
	check("unlock_part", setlk(fd, F_SETLK, F_UNLCK, 0, 10) == 0);
	int cs = child_status(pid);
	if (cs)
		printf("LXTEST INFO locks child: %#x\n", cs);
	check("records_conflict_wait_and_report", cs == 0);
	check("exit_drops_the_childs_locks", getlk(fd, F_GETLK, F_WRLCK, 0, 0).l_type == F_UNLCK);
	/* any close of the file drops the process's record locks */
	int dupfd = dup(fd);
	check("relock", setlk(fd, F_SETLK, F_WRLCK, 0, 0) == 0);
	close(dupfd);
	pid = fork();
	if (pid == 0) {
		int f = open(path, O_RDWR);
		_exit(setlk(f, F_SETLK, F_WRLCK, 0, 0) == 0 ? 0 : 1);
	}
	check("close_drops_record_locks", child_status(pid) == 0);
	/* OFD locks: owned by the open file, conflicting with record locks */
	int a = open(path, O_RDWR), b = open(path, O_RDWR);
	struct flock ofd = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 10 };
	check("ofd_setlk", fcntl(a, F_OFD_SETLK, &ofd) == 0);
	check("ofd_conflicts_between_open_files", fcntl(b, F_OFD_SETLK, &ofd) == -1 && errno == EAGAIN);
	check("ofd_conflicts_with_record_lock", setlk(b, F_SETLK, F_RDLCK, 5, 1) == -1 && errno == EAGAIN);
	struct flock q = { .l_type = F_RDLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 1 };
	check("ofd_getlk_pid_minus_1", fcntl(b, F_OFD_GETLK, &q) == 0 && q.l_type == F_WRLCK && q.l_pid == -1);
	close(a);
	check("ofd_last_close_drops", fcntl(b, F_OFD_SETLK, &ofd) == 0);
	close(b);
	/* flock: whole file, by open file, separate from record locks */
	int f1 = open(path, O_RDWR), f2 = open(path, O_RDWR);
	check("flock_ex", flock(f1, LOCK_EX) == 0);
	check("flock_conflict_nb", flock(f2, LOCK_EX | LOCK_NB) == -1 && errno == EWOULDBLOCK &&
				   flock(f2, LOCK_SH | LOCK_NB) == -1 && errno == EWOULDBLOCK);
	check("flock_apart_from_records", setlk(f2, F_SETLK, F_WRLCK, 0, 0) == 0 && setlk(f2, F_SETLK, F_UNLCK, 0, 0) == 0);
	pid = fork();
	if (pid == 0) { /* the same open file: its own lock, converted */
		_exit(flock(f1, LOCK_SH | LOCK_NB) == 0 ? 0 : 1);
	}
	check("flock_inherited_open_file", child_status(pid) == 0);
	check("flock_shared_by_two", flock(f2, LOCK_SH | LOCK_NB) == 0);
	check("flock_unlock", flock(f2, LOCK_UN) == 0 && flock(f1, LOCK_UN) == 0 && flock(f2, LOCK_EX | LOCK_NB) == 0);
	pid = fork();
	if (pid == 0) { /* blocks until the parent's unlock */
		int f = open(path, O_RDWR);
		double t0 = now_ms();
		_exit(flock(f, LOCK_EX) == 0 && now_ms() - t0 >= 200 ? 0 : 1);
	}
	sleep_ms(500);
	check("flock_unlock_wakes", flock(f2, LOCK_UN) == 0 && child_status(pid) == 0);
	/* a signal ends a lock wait */
	check("flock_again", flock(f1, LOCK_EX) == 0);
	struct sigaction sa = { .sa_sigaction = on_alrm, .sa_flags = SA_SIGINFO };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	alarm(1);
	int r = flock(f2, LOCK_EX);
	check("flock_wait_eintr", r == -1 && errno == EINTR);
	/* a wait that would close a cycle: EDEADLK, and the other waiter goes on at the unlock */
	const char *path2 = "/tmp/lxproc-locks2";
	int dl = open(path2, O_RDWR | O_CREAT | O_TRUNC, 0644);
	int okdl = dl >= 0 && setlk(dl, F_SETLK, F_WRLCK, 0, 10) == 0;
	pid = fork();
	if (pid == 0) {
		int f = open(path2, O_RDWR);
		_exit(setlk(f, F_SETLK, F_WRLCK, 10, 10) == 0 && setlk(f, F_SETLKW, F_WRLCK, 0, 10) == 0 ? 0 : 1);
	}
	sleep_ms(300);
	errno = 0;
	okdl = okdl && setlk(dl, F_SETLKW, F_WRLCK, 10, 10) == -1 && errno == EDEADLK;
	okdl = okdl && setlk(dl, F_SETLK, F_UNLCK, 0, 10) == 0 && child_status(pid) == 0;
	check("setlkw_edeadlk", okdl);
	close(dl);
	unlink(path2);
	/* errors */
	check("setlk_einval_type", setlk(f1, F_SETLK, 7, 0, 1) == -1 && errno == EINVAL);
	struct flock w = { .l_type = F_WRLCK, .l_whence = 9, .l_start = 0, .l_len = 1 };
	check("setlk_einval_whence", fcntl(f1, F_SETLK, &w) == -1 && errno == EINVAL);
	check("setlk_einval_negative", setlk(f1, F_SETLK, F_WRLCK, -5, 1) == -1 && errno == EINVAL);
	struct flock op = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_pid = 1 };
	check("ofd_einval_pid", fcntl(f1, F_OFD_SETLK, &op) == -1 && errno == EINVAL);
	int ro = open(path, O_RDONLY);
	check("setlk_ebadf_mode", setlk(ro, F_SETLK, F_WRLCK, 0, 1) == -1 && errno == EBADF);
	check("setlk_efault", fcntl(f1, F_SETLK, (void *)8) == -1 && errno == EFAULT);
	check("flock_einval", flock(f1, 0) == -1 && errno == EINVAL);
	check("flock_ebadf", flock(999, LOCK_SH) == -1 && errno == EBADF);
	close(ro), close(f1), close(f2), close(fd);
	unlink(path);
	return failures;
}

/* ---- pipes: F_GETPIPE_SZ, F_SETPIPE_SZ, atomic small writes ---- */
static int mode_pipes(void)
{
	int p[2];
	static char out[1 << 15], in[1 << 15];
	for (size_t i = 0; i < sizeof(out); i++)
		out[i] = (char)(i * 7 + (i >> 8));
	check("pipe2", pipe2(p, O_NONBLOCK) == 0);
	check("getpipe_sz_default", fcntl(p[0], F_GETPIPE_SZ) == 65536 && fcntl(p[1], F_GETPIPE_SZ) == 65536);
	check("setpipe_sz_rounds_up", fcntl(p[1], F_SETPIPE_SZ, 5000) == 8192 && fcntl(p[0], F_GETPIPE_SZ) == 8192);
	check("setpipe_sz_minimum", fcntl(p[1], F_SETPIPE_SZ, 1) == 4096 && fcntl(p[1], F_SETPIPE_SZ, 8192) == 8192);
	ssize_t w = write(p[1], out, 10000);
	struct pollfd pf = { .fd = p[1], .events = POLLOUT };
	check("full_at_the_new_size", w == 8192 && poll(&pf, 1, 0) == 0);
	check("setpipe_sz_ebusy", fcntl(p[1], F_SETPIPE_SZ, 4096) == -1 && errno == EBUSY);
	check("setpipe_sz_keeps_data", fcntl(p[1], F_SETPIPE_SZ, 1 << 20) == 1 << 20 && read(p[0], in, sizeof(in)) == 8192 &&
					  !memcmp(in, out, 8192));
	check("setpipe_sz_eperm", fcntl(p[1], F_SETPIPE_SZ, 2 << 20) == -1 && errno == EPERM);
	int fd = open("/tmp/lxproc-pipes", O_RDWR | O_CREAT | O_TRUNC, 0644);
	check("getpipe_sz_ebadf", fcntl(fd, F_GETPIPE_SZ) == -1 && errno == EBADF);
	close(fd);
	unlink("/tmp/lxproc-pipes");
	/* a write of at most PIPE_BUF bytes goes in whole or not at all */
	check("small_ring", fcntl(p[1], F_SETPIPE_SZ, 4096) == 4096 && write(p[1], out, 4000) == 4000);
	check("small_write_eagain_not_partial", write(p[1], out, 200) == -1 && errno == EAGAIN);
	check("big_write_partial", write(p[1], out + 4000, 5000) == 96);
	pid_t pid = fork();
	if (pid == 0) { /* blocking: waits for room for all 200 */
		int fl = fcntl(p[1], F_GETFL);
		fcntl(p[1], F_SETFL, fl & ~O_NONBLOCK);
		_exit(write(p[1], out + 4096, 200) == 200 ? 0 : 1);
	}
	sleep_ms(300);
	ssize_t r1 = read(p[0], in, 150); /* room 150: not yet enough */
	sleep_ms(300);
	int st = -1;
	int waiting = waitpid(pid, &st, WNOHANG) == 0;
	ssize_t r2 = read(p[0], in + 150, 3946);
	st = status_of(pid);
	ssize_t r3 = read(p[0], in + 4096, 200);
	check("blocking_small_write_whole", r1 == 150 && waiting && r2 == 3946 && WIFEXITED(st) &&
					    WEXITSTATUS(st) == 0 && r3 == 200 && !memcmp(in, out, 4096) &&
					    !memcmp(in + 4096, out + 4096, 200));
	close(p[0]);
	close(p[1]);
	/* packet pipes (O_DIRECT): a read takes one packet, drops what does not fit; writes past
	 * PIPE_BUF are split */
	int pk[2];
	char pb[8192];
	check("packet_pipe", pipe2(pk, O_DIRECT | O_NONBLOCK) == 0 && (fcntl(pk[0], F_GETFL) & O_DIRECT) &&
				     write(pk[1], "ab", 2) == 2 && write(pk[1], "cde", 3) == 3 && read(pk[0], pb, 100) == 2 &&
				     !memcmp(pb, "ab", 2) && read(pk[0], pb, 100) == 3 && !memcmp(pb, "cde", 3));
	check("packet_rest_dropped", write(pk[1], "12345", 5) == 5 && read(pk[0], pb, 2) == 2 && !memcmp(pb, "12", 2) &&
					     read(pk[0], pb, 100) == -1 && errno == EAGAIN);
	check("packet_split_at_pipe_buf", write(pk[1], out, 10000) == 10000 && read(pk[0], pb, sizeof(pb)) == 4096 &&
						  read(pk[0], pb, sizeof(pb)) == 4096 && read(pk[0], pb, sizeof(pb)) == 1808 &&
						  !memcmp(pb, out + 8192, 1808));
	close(pk[0]);
	close(pk[1]);
	return failures;
}

/* ---- named pipes: mkfifo, mknod, the opens that wait for the other side ---- */
static int mode_fifos(void)
{
	const char *path = "/tmp/lxproc-fifo";
	unlink(path);
	struct stat st;
	check("mkfifo", mkfifo(path, 0600) == 0 && stat(path, &st) == 0 && S_ISFIFO(st.st_mode) &&
			(st.st_mode & 0777) == 0600);
	check("mkfifo_eexist", mkfifo(path, 0600) == -1 && errno == EEXIST);
	/* root makes device nodes: one of vfs's devices by its number, or one that opens as ENXIO */
	int dn = mknod("/tmp/lxproc-chr", S_IFCHR | 0666, makedev(1, 3)) == 0 ? open("/tmp/lxproc-chr", O_RDWR) : -1;
	char db[4];
	check("mknod_chr_null", dn >= 0 && write(dn, "gone", 4) == 4 && read(dn, db, 4) == 0 &&
				       stat("/tmp/lxproc-chr", &st) == 0 && S_ISCHR(st.st_mode) && st.st_rdev == makedev(1, 3) &&
				       close(dn) == 0 && unlink("/tmp/lxproc-chr") == 0 &&
				       mknod("/tmp/lxproc-blk", S_IFBLK | 0600, makedev(8, 0)) == 0 &&
				       open("/tmp/lxproc-blk", O_RDONLY) == -1 && errno == ENXIO && unlink("/tmp/lxproc-blk") == 0 &&
				       mknod("/tmp/lxproc-nodev", S_IFCHR | 0600, makedev(42, 7)) == 0 &&
				       open("/tmp/lxproc-nodev", O_RDONLY) == -1 && errno == ENXIO &&
				       stat("/tmp/lxproc-nodev", &st) == 0 && st.st_rdev == makedev(42, 7) &&
				       unlink("/tmp/lxproc-nodev") == 0);
	check("mknod_regular", mknod("/tmp/lxproc-reg", S_IFREG | 0600, 0) == 0 && stat("/tmp/lxproc-reg", &st) == 0 &&
			       S_ISREG(st.st_mode) && unlink("/tmp/lxproc-reg") == 0);
	check("wronly_nonblock_enxio", open(path, O_WRONLY | O_NONBLOCK) == -1 && errno == ENXIO);
	int r = open(path, O_RDONLY | O_NONBLOCK);
	char b[16];
	check("rdonly_nonblock_opens", r >= 0 && read(r, b, sizeof(b)) == 0); /* no writer: end of file */
	close(r);
	/* a blocking reader waits for a writer that comes 300 ms later */
	pid_t pid = fork();
	if (pid == 0) {
		sleep_ms(300);
		int w = open(path, O_WRONLY);
		_exit(w >= 0 && write(w, "fifo!", 5) == 5 && close(w) == 0 ? 0 : 1);
	}
	double t0 = now_ms();
	r = open(path, O_RDONLY);
	double waited = now_ms() - t0;
	ssize_t n = r >= 0 ? read(r, b, sizeof(b)) : -1;
	int st2 = status_of(pid);
	ssize_t eof = r >= 0 ? read(r, b + 8, 8) : -1;
	check("reader_waits_for_writer", r >= 0 && waited >= 200 && n == 5 && !memcmp(b, "fifo!", 5) &&
					 WIFEXITED(st2) && WEXITSTATUS(st2) == 0 && eof == 0);
	close(r);
	/* a blocking writer waits for a reader */
	pid = fork();
	if (pid == 0) {
		sleep_ms(300);
		int rr = open(path, O_RDONLY);
		char c[4];
		_exit(rr >= 0 && read(rr, c, 4) == 4 && !memcmp(c, "back", 4) ? 0 : 1);
	}
	t0 = now_ms();
	int w = open(path, O_WRONLY);
	waited = now_ms() - t0;
	check("writer_waits_for_reader", w >= 0 && waited >= 200 && write(w, "back", 4) == 4 && close(w) == 0 &&
					 child_status(pid) == 0);
	/* O_RDWR opens at once; what is left when the last end closes is gone */
	int rw = open(path, O_RDWR);
	check("rdwr_opens", rw >= 0 && write(rw, "left", 4) == 4 && close(rw) == 0);
	r = open(path, O_RDONLY | O_NONBLOCK);
	check("emptied_after_last_close", r >= 0 && read(r, b, sizeof(b)) == 0);
	close(r);
	/* a signal ends a waiting open, with no descriptor left behind */
	struct sigaction sa = { .sa_sigaction = on_alrm, .sa_flags = SA_SIGINFO };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	int probe = dup(0);
	close(probe);
	alarm(1);
	r = open(path, O_RDONLY);
	int e = errno, next = dup(0);
	check("open_wait_eintr", r == -1 && e == EINTR && next == probe);
	close(next);
	check("unlink_fifo", unlink(path) == 0);
	return failures;
}

/* ---- futexes shared between processes (MAP_SHARED memory) ---- */
#define FUTEX_WAIT 0
#define FUTEX_WAKE 1
#define FUTEX_WAIT_PRIVATE 128
#define FUTEX_WAKE_PRIVATE 129
static long futex_call(volatile int *w, int op, int val, const struct timespec *ts)
{
	return syscall(SYS_futex, w, op, val, ts, NULL, 0);
}

static int mode_shared_futex(void)
{
	volatile int *w = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	check("shared_map", w != MAP_FAILED);
	/* a wait woken by another process's wake */
	w[0] = 0;
	pid_t pid = fork();
	if (pid == 0) {
		sleep_ms(300);
		w[0] = 1;
		long n = 0;
		for (int i = 0; i < 100 && n == 0; i++, sleep_ms(20)) /* (until the parent waits) */
			n = futex_call(w, FUTEX_WAKE, 1, NULL);
		_exit(n == 1 ? 0 : 1);
	}
	struct timespec ten = { 10, 0 };
	double t0 = now_ms();
	long r = futex_call(w, FUTEX_WAIT, 0, &ten);
	check("shared_wait_woken_by_other_process", r == 0 && w[0] == 1 && now_ms() - t0 < 9000 && child_status(pid) == 0);
	/* a private futex is the process's own: another process's wake does not reach it */
	w[1] = 0;
	pid = fork();
	if (pid == 0) {
		long n = 0;
		for (int i = 0; i < 20; i++, sleep_ms(20))
			n += futex_call(w + 1, FUTEX_WAKE_PRIVATE, 1, NULL);
		_exit(n == 0 ? 0 : 1);
	}
	struct timespec half = { 0, 600000000 };
	errno = 0;
	r = futex_call(w + 1, FUTEX_WAIT_PRIVATE, 0, &half);
	check("private_wait_not_woken_by_other_process", r == -1 && errno == ETIMEDOUT && child_status(pid) == 0);
	/* a process-shared semaphore in shared memory */
	sem_t *sem = (sem_t *)(w + 16);
	check("sem_init_pshared", sem_init(sem, 1, 0) == 0);
	pid = fork();
	if (pid == 0) {
		struct timespec until;
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += 10;
		_exit(sem_timedwait(sem, &until) == 0 ? 0 : 1);
	}
	sleep_ms(300);
	check("sem_post_wakes_other_process", sem_post(sem) == 0 && child_status(pid) == 0);
	munmap((void *)w, 4096);
	return failures;
}

/* ---- /proc/self and /proc/PID: stat, status, cmdline, comm, the directory listing ---- */
static ssize_t read_file(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, size - 1);
	close(fd);
	if (n >= 0)
		buf[n] = 0;
	return n;
}

static int listed_in_proc(pid_t pid)
{
	char want[16];
	snprintf(want, sizeof(want), "%d", (int)pid);
	DIR *d = opendir("/proc");
	int found = 0;
	for (struct dirent *e; d && (e = readdir(d));)
		found |= !strcmp(e->d_name, want);
	if (d)
		closedir(d);
	return found;
}

static int mode_procfs(int argc, char **argv)
{
	char buf[4096], path[64], want[512];
	pid_t me = getpid();
	/* stat: pid, (comm), state, ppid, then Linux's other fields (52 in all) */
	int pid = 0, ppid = -1, fields = 0;
	char comm[32] = "", state = 0;
	if (read_file("/proc/self/stat", buf, sizeof(buf)) > 0 &&
	    sscanf(buf, "%d (%31[^)]) %c %d", &pid, comm, &state, &ppid) == 4) {
		for (char *q = strrchr(buf, ')') + 1; *q; q++)
			fields += q[0] == ' ' && q[1] && q[1] != '\n';
	}
	check("self_stat", pid == me && !strcmp(comm, "lxproc") && state == 'R' && ppid == getppid() && fields + 2 == 52);
	snprintf(want, sizeof(want), "Pid:\t%d\nPPid:\t%d\n", (int)me, (int)getppid());
	check("self_status", read_file("/proc/self/status", buf, sizeof(buf)) > 0 && strstr(buf, "Name:\tlxproc\n") &&
			     strstr(buf, want) && strstr(buf, "Uid:\t0"));
	size_t wl = 0;
	for (int i = 0; i < argc; i++)
		wl += (size_t)snprintf(want + wl, sizeof(want) - wl, "%s", argv[i]) + 1; /* with its NUL */
	ssize_t n = read_file("/proc/self/cmdline", buf, sizeof(buf));
	check("self_cmdline", n == (ssize_t)wl && !memcmp(buf, want, wl));
	check("self_comm", read_file("/proc/self/comm", buf, sizeof(buf)) > 0 && !strcmp(buf, "lxproc\n"));
	/* maps: the stack, the vDSO, a mapping of ours with its protection, gone after munmap */
	char *mp = mmap(NULL, 3 * 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *ms = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	static char maps[16384];
	char want_p[64], want_s[64];
	snprintf(want_p, sizeof(want_p), "%08lx-%08lx r--p ", (unsigned long)mp, (unsigned long)(mp + 3 * 4096));
	snprintf(want_s, sizeof(want_s), "%08lx-%08lx rw-s ", (unsigned long)ms, (unsigned long)(ms + 4096));
	ssize_t ml = read_file("/proc/self/maps", maps, sizeof(maps));
	check("self_maps", ml > 0 && strstr(maps, want_p) && strstr(maps, want_s) && strstr(maps, "rw-p 00000000 00:00 0") &&
				   strstr(maps, "[stack]") && strstr(maps, "[vdso]"));
	munmap(mp, 3 * 4096);
	munmap(ms, 4096);
	ml = read_file("/proc/self/maps", maps, sizeof(maps));
	check("maps_after_munmap", ml > 0 && !strstr(maps, want_p) && !strstr(maps, want_s) && strstr(maps, "[stack]"));
	char pname[16] = "";
	check("pr_set_name_comm", prctl(PR_SET_NAME, "renamed-proc", 0, 0, 0) == 0 &&
					  prctl(PR_GET_NAME, pname, 0, 0, 0) == 0 && !strcmp(pname, "renamed-proc") &&
					  read_file("/proc/self/comm", buf, sizeof(buf)) > 0 && !strcmp(buf, "renamed-proc\n"));
	prctl(PR_SET_NAME, "lxproc", 0, 0, 0);
	extern char **environ;
	size_t el = 0;
	static char envs[4096];
	for (char **e = environ; *e && el < sizeof(envs) - 256; e++)
		el += (size_t)snprintf(envs + el, sizeof(envs) - el, "%s", *e) + 1;
	n = read_file("/proc/self/environ", buf, sizeof(buf));
	check("self_environ", n == (ssize_t)el && !memcmp(buf, envs, el));
	/* another process: its directory by pid, while it lives */
	int p[2];
	check("procfs_pipe", pipe(p) == 0);
	pid_t child = fork();
	if (child == 0) {
		char c;
		close(p[1]);
		_exit(read(p[0], &c, 1) == 1 ? 0 : 1); /* blocked until the parent writes */
	}
	close(p[0]);
	sleep_ms(300);
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)child);
	pid = 0, ppid = -1, state = 0;
	n = read_file(path, buf, sizeof(buf));
	check("child_stat", n > 0 &&
			    sscanf(buf, "%d (%31[^)]) %c %d", &pid, comm, &state, &ppid) == 4 && pid == child && ppid == me &&
			    state == 'S');
	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)child);
	n = read_file(path, buf, sizeof(buf));
	check("child_cmdline_inherited", n == (ssize_t)wl && !memcmp(buf, want, wl));
	check("proc_lists_both", listed_in_proc(me) && listed_in_proc(child));
	char lk[256] = "", cw[256] = "";
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)child);
	ssize_t ln = readlink(path, lk, sizeof(lk) - 1);
	snprintf(path, sizeof(path), "/proc/%d/cwd", (int)child);
	ssize_t cn = readlink(path, cw, sizeof(cw) - 1);
	char mycwd[256] = "", myexe[256] = "";
	ssize_t me_n = readlink("/proc/self/exe", myexe, sizeof(myexe) - 1); /* (a boot module has none) */
	/* the child's descriptors: its copy of our pipe's read end, its own pipe made after the fork */
	char fdl[64] = "";
	snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)child, p[0]);
	ssize_t fl = readlink(path, fdl, sizeof(fdl) - 1);
	snprintf(path, sizeof(path), "/proc/%d/fd", (int)child);
	int nfds = 0;
	DIR *fdd = opendir(path);
	for (struct dirent *de; fdd && (de = readdir(fdd));)
		nfds += de->d_name[0] != '.';
	if (fdd)
		closedir(fdd);
	check("child_fd_dir", fl > 6 && !strncmp(fdl, "pipe:[", 6) && nfds >= 4);
	static char cmaps[16384];
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)child);
	check("child_exe_cwd_maps", ln == me_n && !strcmp(lk, myexe) && cn > 0 && getcwd(mycwd, sizeof(mycwd)) &&
					    !strcmp(cw, mycwd) && read_file(path, cmaps, sizeof(cmaps)) > 0 &&
					    strstr(cmaps, "[stack]"));
	check("child_ends", write(p[1], "x", 1) == 1 && child_status(child) == 0);
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)child);
	check("ended_child_gone", read_file(path, buf, sizeof(buf)) == -1 && errno == ENOENT && !listed_in_proc(child));
	close(p[1]);
	/* comm is the name execve was given (a link's), not the file it leads to */
	unlink("/tmp/lxalias");
	check("comm_after_exec_through_a_link", symlink("/bin/lxproc", "/tmp/lxalias") == 0 &&
		(child = fork()) >= 0 && (child || (execl("/tmp/lxalias", "lxalias", "commcheck", (char *)NULL), _exit(9), 0)) &&
		child_status(child) == 0);
	unlink("/tmp/lxalias");
	return failures;
}

/* ---- prctl: a subreaper adopts orphans below it; the parent-death signal ---- */
static int mode_reaper(void)
{
	pid_t me = getpid();
	int on = -1;
	check("subreaper_set", prctl(PR_SET_CHILD_SUBREAPER, 1) == 0 && prctl(PR_GET_CHILD_SUBREAPER, &on) == 0 && on == 1);
	/* a grandchild whose parent ends comes to us */
	pid_t a = fork();
	if (a == 0) {
		pid_t b = fork();
		if (b == 0) {
			for (int i = 0; i < 200 && getppid() != me; i++)
				sleep_ms(20); /* until its parent has ended */
			_exit(getppid() == me ? 7 : 1);
		}
		_exit(0);
	}
	int st = -1;
	check("middle_child_ends", waitpid(a, &st, 0) == a && WIFEXITED(st) && WEXITSTATUS(st) == 0);
	pid_t got = waitpid(-1, &st, 0);
	check("orphan_adopted_and_reaped", got > 0 && got != a && WIFEXITED(st) && WEXITSTATUS(st) == 7);
	/* the parent-death signal: a grandchild asks for SIGTERM when its parent ends */
	a = fork();
	if (a == 0) {
		pid_t b = fork();
		if (b == 0) {
			int sig = -1;
			if (prctl(PR_SET_PDEATHSIG, SIGTERM) != 0 || prctl(PR_GET_PDEATHSIG, &sig) != 0 || sig != SIGTERM)
				_exit(3);
			for (;;)
				pause();
		}
		sleep_ms(300);
		_exit(0);
	}
	waitpid(a, &st, 0);
	got = waitpid(-1, &st, 0);
	check("pdeathsig_delivered", got > 0 && WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM);
	check("pdeathsig_einval", prctl(PR_SET_PDEATHSIG, 99) == -1 && errno == EINVAL);
	return failures;
}

/* AF_UNIX sockets (vfs unix.c). */
static socklen_t un_addr(struct sockaddr_un *a, const char *path, int abstract_ns)
{
	memset(a, 0, sizeof(*a));
	a->sun_family = AF_UNIX;
	size_t n = strlen(path);
	if (abstract_ns) {
		memcpy(a->sun_path + 1, path, n);
		return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n);
	}
	memcpy(a->sun_path, path, n);
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + 1);
}

static int mode_unix(void)
{
	/* socketpair: both ways, end of file after close, EPIPE after the peer is gone */
	int sv[2];
	char b[256];
	check("socketpair", socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
	check("pair_both_ways", write(sv[0], "ping", 4) == 4 && read(sv[1], b, sizeof(b)) == 4 && !memcmp(b, "ping", 4) &&
					send(sv[1], "pong!", 5, 0) == 5 && recv(sv[0], b, sizeof(b), 0) == 5 &&
					!memcmp(b, "pong!", 5));
	struct stat st;
	int type = 0;
	socklen_t tl = sizeof(type);
	check("pair_is_socket", fstat(sv[0], &st) == 0 && S_ISSOCK(st.st_mode) &&
					getsockopt(sv[0], SOL_SOCKET, SO_TYPE, &type, &tl) == 0 && type == SOCK_STREAM);
	struct ucred cred;
	socklen_t cl = sizeof(cred);
	check("peercred", getsockopt(sv[0], SOL_SOCKET, SO_PEERCRED, &cred, &cl) == 0 && cl == sizeof(cred) &&
				  cred.pid == getpid() && cred.uid == 0);
	/* a stream across a fork, bigger than the queue: short writes and blocking both ways */
	pid_t pid = fork();
	if (pid == 0) {
		close(sv[0]);
		static char big[1 << 20];
		for (size_t i = 0; i < sizeof(big); i++)
			big[i] = (char)(i * 7 + i / 251);
		size_t off = 0;
		while (off < sizeof(big)) {
			ssize_t w = write(sv[1], big + off, sizeof(big) - off);
			if (w <= 0)
				_exit(1);
			off += (size_t)w;
		}
		_exit(0);
	}
	close(sv[1]);
	size_t got = 0;
	int same = 1;
	for (;;) {
		ssize_t r = read(sv[0], b, sizeof(b));
		if (r <= 0)
			break;
		for (ssize_t i = 0; i < r; i++, got++)
			same &= b[i] == (char)(got * 7 + got / 251);
	}
	check("stream_1mib_across_fork", got == (1u << 20) && same && child_status(pid) == 0);
	check("eof_after_peer_close", read(sv[0], b, 1) == 0);
	signal(SIGPIPE, SIG_IGN);
	check("epipe_after_peer_close", write(sv[0], "x", 1) == -1 && errno == EPIPE);
	close(sv[0]);

	/* a listener on a path: connect, accept, names, poll, nonblocking accept */
	const char *path = "/tmp/lxproc.sock";
	unlink(path);
	struct sockaddr_un a, peer;
	socklen_t al = un_addr(&a, path, 0), pl;
	int l = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0);
	check("bind_path", l >= 0 && bind(l, (struct sockaddr *)&a, al) == 0 && stat(path, &st) == 0 &&
				   S_ISSOCK(st.st_mode));
	check("bind_eaddrinuse", bind(socket(AF_UNIX, SOCK_STREAM, 0), (struct sockaddr *)&a, al) == -1 &&
					 errno == EADDRINUSE);
	check("open_enxio", open(path, O_RDONLY) == -1 && errno == ENXIO);
	int tmp = socket(AF_UNIX, SOCK_STREAM, 0);
	check("connect_not_listening_refused", connect(tmp, (struct sockaddr *)&a, al) == -1 && errno == ECONNREFUSED);
	close(tmp);
	int acc = -1;
	socklen_t accl = sizeof(acc);
	check("listen", listen(l, 4) == 0 && getsockopt(l, SOL_SOCKET, SO_ACCEPTCONN, &acc, &accl) == 0 && acc == 1);
	check("accept_eagain", accept(l, NULL, NULL) == -1 && errno == EAGAIN);
	struct pollfd pf = { l, POLLIN, 0 };
	check("listener_not_readable", poll(&pf, 1, 0) == 0);
	int cfd = socket(AF_UNIX, SOCK_STREAM, 0);
	check("connect_path", connect(cfd, (struct sockaddr *)&a, al) == 0 && write(cfd, "early", 5) == 5);
	check("listener_readable", poll(&pf, 1, 1000) == 1 && (pf.revents & POLLIN));
	pl = sizeof(peer);
	int s = accept4(l, (struct sockaddr *)&peer, &pl, SOCK_CLOEXEC);
	check("accept_unnamed_peer", s >= 0 && pl == sizeof(sa_family_t) && peer.sun_family == AF_UNIX &&
					     (fcntl(s, F_GETFD) & FD_CLOEXEC));
	check("data_sent_before_accept", read(s, b, sizeof(b)) == 5 && !memcmp(b, "early", 5));
	struct sockaddr_un nm;
	socklen_t nl = sizeof(nm);
	check("getsockname_path", getsockname(s, (struct sockaddr *)&nm, &nl) == 0 && nl == al &&
					  !strcmp(nm.sun_path, path));
	nl = sizeof(nm);
	check("getpeername_of_client", getpeername(cfd, (struct sockaddr *)&nm, &nl) == 0 && !strcmp(nm.sun_path, path));
	/* epoll: readable when the peer writes, hang-up when it closes */
	int ep = epoll_create1(0);
	struct epoll_event ev = { .events = EPOLLIN | EPOLLRDHUP, .data.fd = s }, out[2];
	check("epoll_add", epoll_ctl(ep, EPOLL_CTL_ADD, s, &ev) == 0 && epoll_wait(ep, out, 2, 0) == 0);
	check("epoll_readable", write(cfd, "hi", 2) == 2 && epoll_wait(ep, out, 2, 1000) == 1 &&
					(out[0].events & EPOLLIN) && read(s, b, sizeof(b)) == 2);
	check("shutdown_wr_gives_eof", shutdown(cfd, SHUT_WR) == 0 && epoll_wait(ep, out, 2, 1000) == 1 &&
					       (out[0].events & EPOLLRDHUP) && read(s, b, sizeof(b)) == 0 &&
					       write(s, "back", 4) == 4 && read(cfd, b, sizeof(b)) == 4);
	close(ep);
	close(cfd);
	close(s);
	/* a blocking accept waits for a child's connect; a blocking read waits for its data */
	int fl = fcntl(l, F_GETFL);
	fcntl(l, F_SETFL, fl & ~O_NONBLOCK);
	pid = fork();
	if (pid == 0) {
		sleep_ms(200);
		int c = socket(AF_UNIX, SOCK_STREAM, 0);
		if (c < 0 || connect(c, (struct sockaddr *)&a, al) != 0)
			_exit(1);
		sleep_ms(200);
		_exit(write(c, "late", 4) == 4 ? 0 : 2);
	}
	s = accept(l, NULL, NULL);
	ssize_t n = s >= 0 ? read(s, b, sizeof(b)) : -1;
	check("blocking_accept_and_read", s >= 0 && n == 4 && !memcmp(b, "late", 4) && child_status(pid) == 0);
	close(s);
	close(l);
	check("connect_after_close_refused", (tmp = socket(AF_UNIX, SOCK_STREAM, 0)) >= 0 &&
						     connect(tmp, (struct sockaddr *)&a, al) == -1 && errno == ECONNREFUSED);
	close(tmp);
	check("unlink_path", unlink(path) == 0);

	/* datagrams: an abstract name, boundaries kept, the sender's address, truncation */
	int d1 = socket(AF_UNIX, SOCK_DGRAM, 0), d2 = socket(AF_UNIX, SOCK_DGRAM, 0);
	struct sockaddr_un da, db;
	socklen_t dal = un_addr(&da, "lxproc-dgram-a", 1), dbl = un_addr(&db, "lxproc-dgram-b", 1);
	check("bind_abstract", bind(d1, (struct sockaddr *)&da, dal) == 0 && bind(d2, (struct sockaddr *)&db, dbl) == 0);
	check("sendto_abstract", sendto(d2, "one", 3, 0, (struct sockaddr *)&da, dal) == 3 &&
					 sendto(d2, "second", 6, 0, (struct sockaddr *)&da, dal) == 6);
	struct sockaddr_un from;
	socklen_t fromlen = sizeof(from);
	n = recvfrom(d1, b, sizeof(b), 0, (struct sockaddr *)&from, &fromlen);
	check("dgram_boundaries_and_sender", n == 3 && !memcmp(b, "one", 3) && fromlen == dbl &&
						     !memcmp(from.sun_path, db.sun_path, dbl - 2));
	struct iovec iov = { b, 3 };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	n = recvmsg(d1, &mh, 0);
	check("dgram_truncated", n == 3 && (mh.msg_flags & MSG_TRUNC) && !memcmp(b, "sec", 3));
	check("dgram_empty_eagain", recv(d1, b, sizeof(b), MSG_DONTWAIT) == -1 && errno == EAGAIN);
	check("dgram_connect_send", connect(d2, (struct sockaddr *)&da, dal) == 0 && send(d2, "c", 1, 0) == 1 &&
					    recv(d1, b, sizeof(b), 0) == 1);
	check("dgram_no_such_name", sendto(d1, "x", 1, 0, (struct sockaddr *)&db, un_addr(&db, "lxproc-none", 1)) == -1 &&
					    errno == ECONNREFUSED);
	close(d1);
	close(d2);
	/* autobind: an abstract name of five hex digits */
	int d3 = socket(AF_UNIX, SOCK_DGRAM, 0);
	sa_family_t fam = AF_UNIX;
	nl = sizeof(nm);
	check("autobind", bind(d3, (struct sockaddr *)&fam, sizeof(fam)) == 0 &&
				  getsockname(d3, (struct sockaddr *)&nm, &nl) == 0 && nl == 8 && nm.sun_path[0] == 0);
	close(d3);

	/* seqpacket: a connection whose messages keep their boundaries; writev is one message */
	check("seqpacket_pair", socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv) == 0);
	struct iovec two[2] = { { "ab", 2 }, { "cde", 3 } };
	check("seqpacket_writev_one_message", writev(sv[0], two, 2) == 5 && write(sv[0], "f", 1) == 1 &&
						      read(sv[1], b, sizeof(b)) == 5 && !memcmp(b, "abcde", 5) &&
						      read(sv[1], b, sizeof(b)) == 1);
	close(sv[0]);
	check("seqpacket_eof", read(sv[1], b, sizeof(b)) == 0);
	close(sv[1]);
	/* SCM_RIGHTS: open files cross, the same open file (its offset shared); a control
	 * buffer too small for all keeps what fits (MSG_CTRUNC, the rest closed); a bad
	 * descriptor EBADF; MSG_CMSG_CLOEXEC */
	check("rights_pair", socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
	int file = open("/tmp/lxproc-pass", O_RDWR | O_CREAT | O_TRUNC, 0600), pp[2];
	check("rights_setup", file >= 0 && write(file, "passed!", 7) == 7 && lseek(file, 0, SEEK_SET) == 0 &&
				      pipe(pp) == 0);
	union { struct cmsghdr h; char b[CMSG_SPACE(3 * sizeof(int))]; } cm;
	int give[3] = { file, pp[0], pp[0] };
	struct iovec one = { "r", 1 };
	struct msghdr sm = { .msg_iov = &one, .msg_iovlen = 1, .msg_control = cm.b, .msg_controllen = CMSG_SPACE(2 * sizeof(int)) };
	struct cmsghdr *ch = CMSG_FIRSTHDR(&sm);
	ch->cmsg_level = SOL_SOCKET, ch->cmsg_type = SCM_RIGHTS, ch->cmsg_len = CMSG_LEN(2 * sizeof(int));
	memcpy(CMSG_DATA(ch), give, 2 * sizeof(int));
	check("rights_send", sendmsg(sv[0], &sm, 0) == 1);
	close(file);
	close(pp[0]);
	union { struct cmsghdr h; char b[CMSG_SPACE(sizeof(struct ucred)) + CMSG_SPACE(3 * sizeof(int))]; } rc;
	struct iovec rio = { b, sizeof(b) };
	struct msghdr rm = { .msg_iov = &rio, .msg_iovlen = 1, .msg_control = rc.b, .msg_controllen = sizeof(rc.b) };
	n = recvmsg(sv[1], &rm, MSG_CMSG_CLOEXEC);
	struct cmsghdr *rh = CMSG_FIRSTHDR(&rm);
	int got_fds[2] = { -1, -1 };
	if (rh && rh->cmsg_type == SCM_RIGHTS && rh->cmsg_len == CMSG_LEN(2 * sizeof(int)))
		memcpy(got_fds, CMSG_DATA(rh), sizeof(got_fds));
	check("rights_received", n == 1 && rh && rh->cmsg_level == SOL_SOCKET && got_fds[0] >= 0 && got_fds[1] >= 0 &&
					 !(rm.msg_flags & MSG_CTRUNC) && (fcntl(got_fds[0], F_GETFD) & FD_CLOEXEC));
	check("rights_same_file", read(got_fds[0], b, 3) == 3 && !memcmp(b, "pas", 3) &&
					  lseek(got_fds[0], 0, SEEK_CUR) == 3);
	check("rights_pipe_end", write(pp[1], "via", 3) == 3 && read(got_fds[1], b, sizeof(b)) == 3 && !memcmp(b, "via", 3));
	close(got_fds[0]);
	/* three in flight, room for one */
	memcpy(give, (int[]){ pp[1], pp[1], pp[1] }, sizeof(give));
	sm.msg_controllen = CMSG_SPACE(3 * sizeof(int));
	ch->cmsg_len = CMSG_LEN(3 * sizeof(int));
	memcpy(CMSG_DATA(ch), give, sizeof(give));
	check("rights_send_three", sendmsg(sv[0], &sm, 0) == 1);
	rm.msg_controllen = CMSG_LEN(sizeof(int)); /* room for one descriptor (Linux counts so) */
	n = recvmsg(sv[1], &rm, 0);
	rh = CMSG_FIRSTHDR(&rm);
	int first = -1;
	if (rh && rh->cmsg_len == CMSG_LEN(sizeof(int)))
		memcpy(&first, CMSG_DATA(rh), sizeof(int));
	check("rights_ctrunc", n == 1 && (rm.msg_flags & MSG_CTRUNC) && first >= 0 && write(first, "x", 1) == 1 &&
				       read(got_fds[1], b, 1) == 1);
	close(first);
	int bad = 1000;
	memcpy(CMSG_DATA(ch), &bad, sizeof(int));
	ch->cmsg_len = CMSG_LEN(sizeof(int));
	sm.msg_controllen = CMSG_SPACE(sizeof(int));
	check("rights_ebadf", sendmsg(sv[0], &sm, 0) == -1 && errno == EBADF);
	/* a file the child opened reaches the parent; SO_PASSCRED tells the child's pid */
	int on = 1;
	check("passcred_on", setsockopt(sv[1], SOL_SOCKET, SO_PASSCRED, &on, sizeof(on)) == 0);
	pid = fork();
	if (pid == 0) {
		int cf = open("/tmp/lxproc-pass", O_RDONLY);
		memcpy(CMSG_DATA(ch), &cf, sizeof(int));
		_exit(cf >= 0 && sendmsg(sv[0], &sm, 0) == 1 ? 0 : 1);
	}
	rm.msg_controllen = sizeof(rc.b);
	n = recvmsg(sv[1], &rm, 0);
	int from_child = -1;
	pid_t cred_pid = 0;
	for (rh = CMSG_FIRSTHDR(&rm); rh; rh = CMSG_NXTHDR(&rm, rh)) {
		if (rh->cmsg_type == SCM_RIGHTS)
			memcpy(&from_child, CMSG_DATA(rh), sizeof(int));
		if (rh->cmsg_type == SCM_CREDENTIALS) {
			struct ucred uc;
			memcpy(&uc, CMSG_DATA(rh), sizeof(uc));
			cred_pid = uc.pid;
		}
	}
	check("rights_from_child_with_creds", n == 1 && child_status(pid) == 0 && from_child >= 0 && cred_pid == pid &&
						      read(from_child, b, 7) == 7 && !memcmp(b, "passed!", 7));
	close(from_child);
	struct ucred lie = { getpid() + 1, 0, 0 };
	union { struct cmsghdr h; char b[CMSG_SPACE(sizeof(struct ucred))]; } cc;
	struct msghdr cm2 = { .msg_iov = &one, .msg_iovlen = 1, .msg_control = cc.b, .msg_controllen = sizeof(cc.b) };
	struct cmsghdr *c2 = CMSG_FIRSTHDR(&cm2);
	c2->cmsg_level = SOL_SOCKET, c2->cmsg_type = SCM_CREDENTIALS, c2->cmsg_len = CMSG_LEN(sizeof(lie));
	memcpy(CMSG_DATA(c2), &lie, sizeof(lie));
	check("creds_other_pid_eperm", sendmsg(sv[0], &cm2, 0) == -1 && errno == EPERM);
	close(got_fds[1]);
	close(pp[1]);
	close(sv[0]);
	close(sv[1]);
	unlink("/tmp/lxproc-pass");
	/* sendmmsg/recvmmsg: three datagrams out, three in, lengths told */
	int mm[2];
	struct mmsghdr out3[3], in3[3];
	struct iovec oi[3], ii[3];
	char ib[3][16];
	const char *words[3] = { "one", "three", "fiftyfive" };
	memset(out3, 0, sizeof(out3));
	memset(in3, 0, sizeof(in3));
	for (int i = 0; i < 3; i++) {
		oi[i] = (struct iovec){ (void *)words[i], strlen(words[i]) };
		out3[i].msg_hdr.msg_iov = &oi[i], out3[i].msg_hdr.msg_iovlen = 1;
		ii[i] = (struct iovec){ ib[i], sizeof(ib[i]) };
		in3[i].msg_hdr.msg_iov = &ii[i], in3[i].msg_hdr.msg_iovlen = 1;
	}
	check("mmsg", socketpair(AF_UNIX, SOCK_DGRAM, 0, mm) == 0 && sendmmsg(mm[0], out3, 3, 0) == 3 &&
			      recvmmsg(mm[1], in3, 3, MSG_WAITFORONE, NULL) == 3 && in3[0].msg_len == 3 && in3[1].msg_len == 5 &&
			      in3[2].msg_len == 9 && !memcmp(ib[2], "fiftyfive", 9) &&
			      recvmmsg(mm[1], in3, 3, MSG_DONTWAIT, NULL) == -1 && errno == EAGAIN);
	close(mm[0]);
	close(mm[1]);
	check("unknown_family_eafnosupport", socket(AF_APPLETALK, SOCK_DGRAM, 0) == -1 && errno == EAFNOSUPPORT);
	return failures ? 1 : 0;
}

/* System V message queues and semaphores (vfs sysv.c). */
struct lx_msgbuf {
	long type;
	char text[64];
};

static int mode_sysv(void)
{
	struct lx_msgbuf m;
	int q = msgget(IPC_PRIVATE, 0600);
	check("msgget_private", q >= 0);
	for (long t = 1; t <= 3; t++) {
		m.type = t;
		snprintf(m.text, sizeof(m.text), "type %ld", t);
		if (msgsnd(q, &m, strlen(m.text) + 1, 0) != 0)
			q = -1;
	}
	check("msgsnd_three", q >= 0);
	struct msqid_ds ds;
	check("msgctl_stat", msgctl(q, IPC_STAT, &ds) == 0 && ds.msg_qnum == 3 && ds.msg_cbytes == 21 &&
				     ds.msg_lspid == getpid() && (ds.msg_perm.mode & 0777) == 0600);
	check("msgrcv_type", msgrcv(q, &m, sizeof(m.text), 3, 0) == 7 && m.type == 3 && !strcmp(m.text, "type 3"));
	check("msgrcv_except", msgrcv(q, &m, sizeof(m.text), 1, MSG_EXCEPT) == 7 && m.type == 2);
	check("msgrcv_e2big", msgrcv(q, &m, 3, 0, 0) == -1 && errno == E2BIG);
	check("msgrcv_noerror", msgrcv(q, &m, 3, 0, MSG_NOERROR) == 3 && m.type == 1 && !memcmp(m.text, "typ", 3));
	check("msgrcv_empty_enomsg", msgrcv(q, &m, sizeof(m.text), 0, IPC_NOWAIT) == -1 && errno == ENOMSG);
	m.type = 5;
	for (int i = 0; i < 3; i++) {
		m.type = 9 - 2 * i; /* 9, 7, 5 */
		msgsnd(q, &m, 1, 0);
	}
	check("msgrcv_lowest_type", msgrcv(q, &m, 1, -8, 0) == 1 && m.type == 5 && msgrcv(q, &m, 1, -8, 0) == 1 &&
					    m.type == 7 && msgrcv(q, &m, 1, -8, IPC_NOWAIT) == -1 && errno == ENOMSG);
	msgrcv(q, &m, 1, 0, 0);
	/* a blocking receive waits for another process's send */
	pid_t pid = fork();
	if (pid == 0) {
		sleep_ms(200);
		struct lx_msgbuf c = { 4, "late" };
		_exit(msgsnd(q, &c, 5, 0) == 0 ? 0 : 1);
	}
	double t0 = now_ms();
	ssize_t n = msgrcv(q, &m, sizeof(m.text), 0, 0);
	check("msgrcv_waits_for_send", n == 5 && m.type == 4 && !strcmp(m.text, "late") && now_ms() - t0 >= 100 &&
					       child_status(pid) == 0);
	/* removed under a waiting receiver: EIDRM */
	pid = fork();
	if (pid == 0)
		_exit(msgrcv(q, &m, sizeof(m.text), 0, 0) == -1 && errno == EIDRM ? 0 : 1);
	sleep_ms(200);
	check("msgctl_rmid", msgctl(q, IPC_RMID, NULL) == 0 && child_status(pid) == 0);
	check("msgsnd_after_rmid_einval", msgsnd(q, &m, 1, 0) == -1 && errno == EINVAL);
	/* keys */
	key_t key = 0x6c787076;
	int k1 = msgget(key, IPC_CREAT | 0644), k2 = msgget(key, 0);
	check("msgget_key", k1 >= 0 && k2 == k1 && msgget(key, IPC_CREAT | IPC_EXCL | 0644) == -1 && errno == EEXIST &&
				    msgget(key + 1, 0) == -1 && errno == ENOENT);
	msgctl(k1, IPC_RMID, NULL);
	int k3 = msgget(key, IPC_CREAT | 0644);
	check("msgget_new_id_after_rmid", k3 >= 0 && k3 != k1);
	msgctl(k3, IPC_RMID, NULL);

	/* semaphores */
	int s = semget(IPC_PRIVATE, 2, 0600);
	unsigned short all[2] = { 3, 0 };
	check("semget_setall", s >= 0 && semctl(s, 0, SETALL, all) == 0 && semctl(s, 0, GETVAL) == 3 &&
				       semctl(s, 1, GETVAL) == 0);
	struct sembuf two[2] = { { 0, -1, 0 }, { 1, 1, 0 } };
	check("semop_atomic_pair", semop(s, two, 2) == 0 && semctl(s, 0, GETVAL) == 2 && semctl(s, 1, GETVAL) == 1 &&
					   semctl(s, 0, GETPID) == getpid());
	struct sembuf take3 = { 0, -3, IPC_NOWAIT };
	check("semop_nowait_eagain", semop(s, &take3, 1) == -1 && errno == EAGAIN && semctl(s, 0, GETVAL) == 2);
	struct sembuf take3w[2] = { { 1, -1, 0 }, { 0, -3, 0 } }; /* all or nothing: sem 1 is not taken */
	struct timespec ts = { 0, 100000000 };
	check("semtimedop_times_out", semtimedop(s, take3w, 2, &ts) == -1 && errno == EAGAIN && semctl(s, 1, GETVAL) == 1);
	pid = fork();
	if (pid == 0) {
		sleep_ms(200);
		struct sembuf give = { 0, 1, 0 };
		_exit(semop(s, &give, 1) == 0 ? 0 : 1);
	}
	check("semop_waits_for_post", semop(s, take3w, 2) == 0 && semctl(s, 0, GETVAL) == 0 && semctl(s, 1, GETVAL) == 0 &&
					      child_status(pid) == 0);
	/* GETNCNT counts a waiter */
	pid = fork();
	if (pid == 0) {
		struct sembuf wait1 = { 0, -1, 0 };
		_exit(semop(s, &wait1, 1) == 0 ? 0 : 1);
	}
	int ncnt = 0;
	for (int i = 0; i < 200 && (ncnt = semctl(s, 0, GETNCNT)) != 1; i++)
		sleep_ms(10);
	struct sembuf post = { 0, 1, 0 };
	check("getncnt_and_wake", ncnt == 1 && semop(s, &post, 1) == 0 && child_status(pid) == 0 &&
					  semctl(s, 0, GETNCNT) == 0);
	/* SEM_UNDO: a process's adjustments are undone when it ends */
	check("setval", semctl(s, 0, SETVAL, 5) == 0);
	pid = fork();
	if (pid == 0) {
		struct sembuf t2 = { 0, -2, SEM_UNDO };
		_exit(semop(s, &t2, 1) == 0 && semctl(s, 0, GETVAL) == 3 ? 0 : 1);
	}
	int child_ok = child_status(pid) == 0, v = -1;
	for (int i = 0; i < 200 && (v = semctl(s, 0, GETVAL)) != 5; i++)
		sleep_ms(10);
	check("sem_undo_at_exit", child_ok && v == 5);
	struct semid_ds sd;
	check("semctl_stat", semctl(s, 0, IPC_STAT, &sd) == 0 && sd.sem_nsems == 2 && (sd.sem_perm.mode & 0777) == 0600);
	check("setval_erange", semctl(s, 0, SETVAL, 40000) == -1 && errno == ERANGE);
	struct sembuf bad = { 7, 1, 0 };
	check("semop_efbig", semop(s, &bad, 1) == -1 && errno == EFBIG);
	pid = fork();
	if (pid == 0) {
		struct sembuf w = { 1, -1, 0 };
		_exit(semop(s, &w, 1) == -1 && errno == EIDRM ? 0 : 1);
	}
	sleep_ms(200);
	check("semctl_rmid_wakes_eidrm", semctl(s, 0, IPC_RMID) == 0 && child_status(pid) == 0 &&
						 semop(s, &post, 1) == -1 && errno == EINVAL);
	/* shared memory: one segment seen by a forked child, a second attachment, SHM_RDONLY,
	 * counts, removal that waits for the last detach */
	int shm = shmget(IPC_PRIVATE, 10000, 0600);
	char *p1 = shm >= 0 ? shmat(shm, NULL, 0) : (char *)-1;
	check("shmget_shmat", shm >= 0 && p1 != (char *)-1 && p1[0] == 0 && p1[9999] == 0);
	if (p1 != (char *)-1)
		strcpy(p1, "from parent");
	pid = fork();
	if (pid == 0) {
		char *p2 = shmat(shm, NULL, 0);
		int ok = !strcmp(p1, "from parent") && p2 != (char *)-1 && p2 != p1 && !strcmp(p2, "from parent");
		struct shmid_ds cd;
		ok = ok && shmctl(shm, IPC_STAT, &cd) == 0 && cd.shm_nattch == 3; /* parent's, inherited, p2 */
		if (ok)
			strcpy(p2 + 5000, "from child");
		_exit(ok && shmdt(p2) == 0 ? 0 : 1);
	}
	int cst = child_status(pid);
	struct shmid_ds sd2;
	int nat = -1;
	for (int i = 0; i < 200; i++) { /* the child's inherited attachment ends with it */
		if (shmctl(shm, IPC_STAT, &sd2) == 0 && (nat = (int)sd2.shm_nattch) == 1)
			break;
		sleep_ms(10);
	}
	check("shm_shared_with_child", cst == 0 && !strcmp(p1 + 5000, "from child") && nat == 1 &&
					       sd2.shm_segsz == 10000 && sd2.shm_cpid == getpid());
	char *ro = shmat(shm, NULL, SHM_RDONLY);
	set_handler(SIGSEGV, on_segv, SA_NODEFER);
	int ro_faults = 0;
	if (ro != (char *)-1 && sigsetjmp(jump, 1) == 0)
		ro[0] = 'x';
	else
		ro_faults = 1;
	signal(SIGSEGV, SIG_DFL);
	check("shm_rdonly", ro != (char *)-1 && ro_faults && !strcmp(ro, "from parent") && shmdt(ro) == 0);
	check("shmdt_unknown_einval", shmdt(p1 + 4096) == -1 && errno == EINVAL);
	key_t skey = 0x6c787073;
	int named = shmget(skey, 4096, IPC_CREAT | 0600);
	check("shm_rmid_waits_for_detach", named >= 0 && shmctl(shm, IPC_RMID, NULL) == 0 && !strcmp(p1, "from parent") &&
						   shmctl(named, IPC_RMID, NULL) == 0 &&
						   shmget(skey, 4096, 0) == -1 && errno == ENOENT);
	check("shmdt_last", shmdt(p1) == 0 && shmctl(shm, IPC_STAT, &sd2) == -1 && errno == EINVAL);
	return failures ? 1 : 0;
}

/* Hard links (vfs ramfs_link). */
static int mode_links(void)
{
	const char *a = "/tmp/lxproc-link-a", *b = "/tmp/lxproc-link-b";
	unlink(a), unlink(b);
	int fd = open(a, O_RDWR | O_CREAT | O_TRUNC, 0640);
	struct stat sa, sb;
	check("link", fd >= 0 && write(fd, "one", 3) == 3 && link(a, b) == 0 && stat(a, &sa) == 0 && stat(b, &sb) == 0 &&
			      sa.st_ino == sb.st_ino && sa.st_nlink == 2 && sb.st_nlink == 2 && (sb.st_mode & 0777) == 0640);
	int fb = open(b, O_RDWR);
	char buf[16] = { 0 };
	check("link_same_data", fb >= 0 && pwrite(fb, "two", 3, 3) == 3 && pread(fd, buf, 6, 0) == 6 &&
					!memcmp(buf, "onetwo", 6));
	check("link_eexist", link(a, b) == -1 && errno == EEXIST);
	check("link_dir_eperm", link("/tmp", "/tmp/lxproc-link-dir") == -1 && errno == EPERM);
	check("link_missing_enoent", link("/tmp/lxproc-none", "/tmp/lxproc-x") == -1 && errno == ENOENT);
	check("rename_same_file_noop", rename(a, b) == 0 && stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_nlink == 2);
	check("unlink_first_name", unlink(a) == 0 && stat(a, &sa) == -1 && errno == ENOENT && stat(b, &sb) == 0 &&
					   sb.st_nlink == 1 && fstat(fd, &sa) == 0 && sa.st_ino == sb.st_ino && sa.st_nlink == 1);
	check("linkat_symlink_follow", symlink(b, "/tmp/lxproc-link-s") == 0 &&
					       linkat(AT_FDCWD, "/tmp/lxproc-link-s", AT_FDCWD, a, AT_SYMLINK_FOLLOW) == 0 &&
					       stat(a, &sa) == 0 && sa.st_ino == sb.st_ino && lstat(a, &sa) == 0 && S_ISREG(sa.st_mode));
	DIR *dir = opendir("/tmp");
	int seen = 0;
	for (struct dirent *de; dir && (de = readdir(dir));)
		if (!strcmp(de->d_name, "lxproc-link-a") || !strcmp(de->d_name, "lxproc-link-b"))
			seen += de->d_ino == sb.st_ino && de->d_type == DT_REG;
	if (dir)
		closedir(dir);
	check("readdir_both_names", seen == 2);
	check("unlink_all", unlink(a) == 0 && unlink(b) == 0 && unlink("/tmp/lxproc-link-s") == 0 && fstat(fd, &sa) == 0 &&
				    sa.st_nlink == 0 && pread(fd, buf, 6, 0) == 6);
	close(fd);
	close(fb);
	return failures ? 1 : 0;
}

/* IPC objects kept by vfs across its restart (test_tcp_apps): made, then "ipckeep: ready",
 * then (once /tmp/ipckeep-go exists: the test restarted vfs meanwhile) each checked. */
static int mode_ipckeep(void)
{
	int sv[2], l = -1, cfd = -1, q = -1, sem = -1, shm = -1;
	struct sockaddr_un a;
	socklen_t al = un_addr(&a, "/tmp/ipckeep.sock", 0);
	unlink("/tmp/ipckeep.sock");
	unlink("/tmp/ipckeep-go");
	struct lx_msgbuf m = { 7, "queued" };
	char *seg = (char *)-1;
	int made = socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0 && write(sv[0], "before", 6) == 6 &&
		   (l = socket(AF_UNIX, SOCK_STREAM, 0)) >= 0 && bind(l, (struct sockaddr *)&a, al) == 0 &&
		   listen(l, 4) == 0 && (cfd = socket(AF_UNIX, SOCK_STREAM, 0)) >= 0 &&
		   connect(cfd, (struct sockaddr *)&a, al) == 0 && write(cfd, "pending", 7) == 7 &&
		   (q = msgget(IPC_PRIVATE, 0600)) >= 0 && msgsnd(q, &m, 7, 0) == 0 &&
		   (sem = semget(IPC_PRIVATE, 1, 0600)) >= 0 && semctl(sem, 0, SETVAL, 3) == 0 &&
		   (shm = shmget(IPC_PRIVATE, 8192, 0600)) >= 0 && (seg = shmat(shm, NULL, 0)) != (char *)-1;
	int mf = open("/tmp/ipckeep.map", O_RDWR | O_CREAT | O_TRUNC, 0600);
	char *fm = mf >= 0 && ftruncate(mf, 4096) == 0 ? mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, mf, 0)
							  : MAP_FAILED;
	made = made && fm != MAP_FAILED;
	check("ipckeep_made", made);
	if (!made)
		return 1;
	strcpy(seg + 4096, "shm-before");
	strcpy(fm + 10, "map-before");
	printf("ipckeep: ready\n");
	fflush(stdout);
	struct stat st;
	for (int i = 0; i < 6000 && stat("/tmp/ipckeep-go", &st) != 0; i++)
		sleep_ms(50);
	char b[32] = { 0 };
	check("ipckeep_pair", read(sv[1], b, sizeof(b)) == 6 && !memcmp(b, "before", 6) && write(sv[1], "after", 5) == 5 &&
				      read(sv[0], b, sizeof(b)) == 5);
	int s = accept(l, NULL, NULL);
	check("ipckeep_backlog", s >= 0 && read(s, b, sizeof(b)) == 7 && !memcmp(b, "pending", 7));
	int c2 = socket(AF_UNIX, SOCK_STREAM, 0);
	check("ipckeep_listener", c2 >= 0 && connect(c2, (struct sockaddr *)&a, al) == 0 && (s = accept(l, NULL, NULL)) >= 0 &&
					  write(c2, "x", 1) == 1 && read(s, b, 1) == 1);
	check("ipckeep_msg", msgrcv(q, &m, sizeof(m.text), 0, IPC_NOWAIT) == 7 && m.type == 7 && !strcmp(m.text, "queued"));
	struct sembuf take = { 0, -3, IPC_NOWAIT };
	check("ipckeep_sem", semctl(sem, 0, GETVAL) == 3 && semop(sem, &take, 1) == 0 && semctl(sem, 0, GETVAL) == 0);
	char *again = shmat(shm, NULL, 0);
	check("ipckeep_shm", !strcmp(seg + 4096, "shm-before") && again != (char *)-1 && !strcmp(again + 4096, "shm-before") &&
				     shmdt(again) == 0 && shmdt(seg) == 0 && shmctl(shm, IPC_RMID, NULL) == 0);
	check("ipckeep_file_mapping", pread(mf, b, 10, 10) == 10 && !memcmp(b, "map-before", 10) &&
					      (strcpy(fm + 100, "map-after"), pread(mf, b, 9, 100) == 9) &&
					      !memcmp(b, "map-after", 9) && pwrite(mf, "w", 1, 200) == 1 && fm[200] == 'w');
	munmap(fm, 4096);
	close(mf);
	unlink("/tmp/ipckeep.map");
	msgctl(q, IPC_RMID, NULL);
	semctl(sem, 0, IPC_RMID);
	unlink("/tmp/ipckeep.sock");
	printf("ipckeep: done, %d failed\n", failures);
	return failures ? 1 : 0;
}

/* Shared file mappings (vfs fmap.c) and msync. */
static int mode_mapshared(void)
{
	const char *path = "/tmp/lxproc-map";
	unlink(path);
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	char *m = MAP_FAILED;
	check("map_shared_rw", fd >= 0 && ftruncate(fd, 8192) == 0 &&
				       (m = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)) != MAP_FAILED);
	if (m == MAP_FAILED)
		return 1;
	char b[32] = { 0 };
	memcpy(m + 100, "stored", 6);
	check("store_reaches_file", pread(fd, b, 6, 100) == 6 && !memcmp(b, "stored", 6));
	check("write_reaches_mapping", pwrite(fd, "written", 7, 5000) == 7 && !memcmp(m + 5000, "written", 7));
	/* another mapping of the file, read-only, sees stores made after it was made */
	int ro = open(path, O_RDONLY);
	char *r = ro >= 0 ? mmap(NULL, 8192, PROT_READ, MAP_SHARED, ro, 0) : MAP_FAILED;
	memcpy(m + 200, "later", 5);
	check("second_mapping_sees_stores", r != MAP_FAILED && !memcmp(r + 200, "later", 5) && !memcmp(r + 100, "stored", 6));
	check("shared_write_on_rdonly_eacces", mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, ro, 0) == MAP_FAILED &&
						       errno == EACCES);
	/* a private mapping is a copy: later stores do not reach it, its stores not the file */
	char *pv = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	memcpy(m + 300, "after-private", 13);
	int priv_ok = pv != MAP_FAILED && !memcmp(pv + 100, "stored", 6) && memcmp(pv + 300, "after-private", 13);
	if (pv != MAP_FAILED)
		memcpy(pv + 400, "private", 7);
	check("private_is_a_copy", priv_ok && pread(fd, b, 7, 400) == 7 && memcmp(b, "private", 7));
	char *pv2 = mmap(NULL, 8192, PROT_READ, MAP_PRIVATE, fd, 0); /* made after the stores: has them */
	check("private_copy_is_current", pv2 != MAP_FAILED && !memcmp(pv2 + 300, "after-private", 13));
	if (pv2 != MAP_FAILED)
		munmap(pv2, 8192);
	/* a forked child's stores through the inherited mapping */
	pid_t pid = fork();
	if (pid == 0) {
		memcpy(m + 600, "child", 5);
		_exit(0);
	}
	check("child_stores_seen", child_status(pid) == 0 && pread(fd, b, 5, 600) == 5 && !memcmp(b, "child", 5));
	/* a process that opens and maps the file itself */
	pid = fork();
	if (pid == 0) {
		int f2 = open(path, O_RDWR);
		char *m2 = f2 >= 0 ? mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, f2, 0) : MAP_FAILED;
		if (m2 == MAP_FAILED || memcmp(m2 + 100, "stored", 6))
			_exit(1);
		memcpy(m2 + 700, "other", 5);
		_exit(msync(m2, 8192, MS_SYNC) == 0 && munmap(m2, 8192) == 0 ? 0 : 2);
	}
	check("other_process_maps_it", child_status(pid) == 0 && !memcmp(m + 700, "other", 5));
	/* the file grows under the mapping; msync's checks */
	char *big = mmap(NULL, 65536, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	check("grows_under_mapping", big != MAP_FAILED && ftruncate(fd, 65536) == 0 && pwrite(fd, "far", 3, 60000) == 3 &&
					     !memcmp(big + 60000, "far", 3) && !memcmp(big + 100, "stored", 6));
	check("msync", msync(m, 8192, MS_SYNC) == 0 && msync(m, 8192, MS_ASYNC | MS_INVALIDATE) == 0);
	check("msync_einval", msync(m + 1, 100, MS_SYNC) == -1 && errno == EINVAL &&
				      msync(m, 100, MS_SYNC | MS_ASYNC) == -1 && errno == EINVAL);
	munmap(big, 65536);
	check("msync_unmapped_enomem", msync(big, 4096, MS_SYNC) == -1 && errno == ENOMEM);
	/* unlinked while mapped: the pages live on */
	check("unlinked_while_mapped", unlink(path) == 0 && close(fd) == 0 && !memcmp(m + 100, "stored", 6) &&
					       (memcpy(m + 800, "still", 5), !memcmp(r + 800, "still", 5)));
	munmap(m, 8192);
	munmap(r, 8192);
	close(ro);
	return failures ? 1 : 0;
}

/* Users and permissions (pm creds.c, vfs perm.c): a child drops root and meets Linux's
 * checks. */
static int mode_creds(void)
{
	const char *secret = "/tmp/lxproc-secret", *mine = "/tmp/lxproc-mine";
	unlink(secret), unlink(mine);
	int fd = open(secret, O_RDWR | O_CREAT | O_TRUNC, 0600);
	struct stat st;
	check("tmp_sticky_world", stat("/tmp", &st) == 0 && (st.st_mode & 07777) == 01777);
	check("root_made_file", fd >= 0 && write(fd, "root only", 9) == 9 && fstat(fd, &st) == 0 && st.st_uid == 0);
	close(fd);
	int pr = open("/tmp/lxproc-public", O_RDWR | O_CREAT | O_TRUNC, 0644);
	close(pr);
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid == 0) {
		gid_t none[1];
		int ok = setgroups(0, NULL) == 0 && setgid(1000) == 0 && setuid(1000) == 0;
		uid_t r, e, sv;
		ok = ok && getuid() == 1000 && geteuid() == 1000 && getgid() == 1000 && getgroups(1, none) == 0 &&
		     getresuid(&r, &e, &sv) == 0 && r == 1000 && sv == 1000;
		printf("LXTEST %s creds_dropped\n", ok ? "PASS" : "FAIL");
		int e1 = setuid(0) == -1 && errno == EPERM;
		printf("LXTEST %s creds_no_way_back\n", e1 ? "PASS" : "FAIL");
		int e2 = open(secret, O_RDONLY) == -1 && errno == EACCES && access(secret, R_OK) == -1 && errno == EACCES;
		printf("LXTEST %s creds_eacces_open\n", e2 ? "PASS" : "FAIL");
		int e3 = open("/tmp/lxproc-public", O_RDONLY) >= 0 && open("/tmp/lxproc-public", O_WRONLY) == -1 &&
			 errno == EACCES;
		printf("LXTEST %s creds_other_bits\n", e3 ? "PASS" : "FAIL");
		int m = open(mine, O_RDWR | O_CREAT | O_EXCL, 0640);
		struct stat ms;
		int e4 = m >= 0 && fstat(m, &ms) == 0 && ms.st_uid == 1000 && ms.st_gid == 1000 && chmod(mine, 0600) == 0;
		printf("LXTEST %s creds_new_file_ours\n", e4 ? "PASS" : "FAIL");
		int e5 = chmod(secret, 0644) == -1 && errno == EPERM && chown(mine, 0, 0) == -1 && errno == EPERM &&
			 unlink(secret) == -1 && errno == EPERM; /* sticky /tmp: another user's file */
		printf("LXTEST %s creds_eperm_owner_and_sticky\n", e5 ? "PASS" : "FAIL");
		int e6 = kill(parent, 0) == -1 && errno == EPERM && kill(getpid(), 0) == 0;
		printf("LXTEST %s creds_kill_eperm\n", e6 ? "PASS" : "FAIL");
		int e7 = mkdir("/lxproc-nope", 0755) == -1 && errno == EACCES && chdir("/root") == -1 && errno == EACCES &&
			 mknod("/tmp/lxproc-udev", S_IFCHR | 0600, makedev(1, 3)) == -1 && errno == EPERM;
		printf("LXTEST %s creds_dir_permissions\n", e7 ? "PASS" : "FAIL");
		char buf[64];
		int sf = open("/proc/self/status", O_RDONLY);
		ssize_t n = sf >= 0 ? read(sf, buf, sizeof(buf) - 1) : -1;
		int e8 = 1;
		if (n > 0) {
			static char all[2048];
			memcpy(all, buf, (size_t)n);
			ssize_t k;
			while ((k = read(sf, all + n, sizeof(all) - 1 - (size_t)n)) > 0)
				n += k;
			all[n] = 0;
			e8 = strstr(all, "Uid:\t1000\t1000") != NULL && opendir("/proc/self/fd") != NULL;
		}
		printf("LXTEST %s creds_proc_status\n", e8 ? "PASS" : "FAIL");
		fflush(stdout);
		_exit(ok && e1 && e2 && e3 && e4 && e5 && e6 && e7 && e8 ? 0 : 1);
	}
	check("child_dropped_root", child_status(pid) == 0);
	/* saved set-user-ID: a daemon may drop its effective id and take it back */
	pid = fork();
	if (pid == 0) {
		int ok = setresuid(1000, 1000, 0) == 0 && geteuid() == 1000 && access(secret, R_OK) == -1 &&
			 seteuid(0) == 0 && geteuid() == 0 && open(secret, O_RDONLY) >= 0;
		_exit(ok ? 0 : 1);
	}
	check("saved_uid_regains_root", child_status(pid) == 0);
	pid = fork();
	if (pid == 0)
		_exit(setfsuid(1000) == 0 && open(secret, O_RDONLY) == -1 && errno == EACCES && setfsuid(0) == 1000 &&
		      open(secret, O_RDONLY) >= 0 ? 0 : 1);
	check("fsuid", child_status(pid) == 0);
	/* a set-user-ID program: run by uid 1000, it runs as root (not under no_new_privs) */
	const char *suid = "/tmp/lxproc-suid";
	int in = open("/proc/self/exe", O_RDONLY), outf = open(suid, O_WRONLY | O_CREAT | O_TRUNC, 0755);
	if (in < 0)
		in = open("/bin/lxproc", O_RDONLY);
	static char cp[65536];
	ssize_t k;
	while (in >= 0 && outf >= 0 && (k = read(in, cp, sizeof(cp))) > 0)
		if (write(outf, cp, (size_t)k) != k)
			break;
	close(in);
	close(outf);
	int suid_ok = chmod(suid, 04755) == 0;
	for (int nnp = 0; nnp < 2; nnp++) {
		pid = fork();
		if (pid == 0) {
			if (setuid(1000) != 0 || (nnp && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0))
				_exit(9);
			execl(suid, "lxproc", "suidcheck", (char *)NULL);
			_exit(8);
		}
		suid_ok = suid_ok && child_status(pid) == (nnp ? 3 : 0);
	}
	check("setuid_program", suid_ok && unlink(suid) == 0);
	struct stat ms;
	check("root_chown_and_unlink", stat(mine, &ms) == 0 && ms.st_uid == 1000 && chown(mine, 0, 0) == 0 &&
					       stat(mine, &ms) == 0 && ms.st_uid == 0 && unlink(mine) == 0 && unlink(secret) == 0 &&
					       unlink("/tmp/lxproc-public") == 0);
	return failures ? 1 : 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	if (!strcmp(mode, "true"))
		return 0;
	/* Run as the script "#!/bin/lxproc args one" with "two": as in Linux, the rest of the
	 * interpreter line is one argument, then the script's path, then its arguments. */
	if (!strcmp(mode, "args one"))
		return argc == 4 && !strcmp(argv[2], "/tmp/script.sh") && !strcmp(argv[3], "two") ? 42 : 1;
	if (!strcmp(mode, "commcheck")) { /* run through the link /tmp/lxalias (procfs) */
		char c[32] = "";
		int fd = open("/proc/self/comm", O_RDONLY);
		ssize_t n = fd >= 0 ? read(fd, c, sizeof(c) - 1) : -1;
		return n == 8 && !memcmp(c, "lxalias\n", 8) ? 0 : 1;
	}
	if (!strcmp(mode, "fdclosed"))
		return fcntl(5, F_GETFD) == -1 && errno == EBADF ? 0 : 1;
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(mode, "threads"))
		return mode_threads();
	if (!strcmp(mode, "signals"))
		return mode_signals();
	if (!strcmp(mode, "fork"))
		return mode_fork();
	if (!strcmp(mode, "exec"))
		return mode_exec(argc > 2 ? atoi(argv[2]) : 200);
	if (!strcmp(mode, "timers"))
		return mode_timers();
	if (!strcmp(mode, "locks"))
		return mode_locks();
	if (!strcmp(mode, "pipes"))
		return mode_pipes();
	if (!strcmp(mode, "fifos"))
		return mode_fifos();
	if (!strcmp(mode, "shfutex"))
		return mode_shared_futex();
	if (!strcmp(mode, "procfs"))
		return mode_procfs(argc, argv);
	if (!strcmp(mode, "reaper"))
		return mode_reaper();
	if (!strcmp(mode, "unix"))
		return mode_unix();
	if (!strcmp(mode, "sysv"))
		return mode_sysv();
	if (!strcmp(mode, "links"))
		return mode_links();
	if (!strcmp(mode, "ipckeep"))
		return mode_ipckeep();
	if (!strcmp(mode, "mapshared"))
		return mode_mapshared();
	if (!strcmp(mode, "creds"))
		return mode_creds();
	if (!strcmp(mode, "suidcheck")) /* run set-user-ID root by uid 1000 (mode_creds) */
		return getuid() == 1000 && geteuid() == 0 ? 0 : geteuid() == 1000 ? 3 : 1;
	fprintf(stderr, "usage: lxproc threads|signals|fork|exec [N]|timers|locks|pipes|fifos|shfutex|procfs|reaper|unix|sysv|links|ipckeep|mapshared|creds\n");
	return 2;
}
