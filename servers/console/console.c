/* console: the serial console. Owns input on COM1 (the kernel keeps writing output there
 * itself, by polling). Typed bytes go to the monitor, which edits them into lines and runs
 * them as commands (help, the service command), or, once vfs has published its terminal,
 * to that terminal (term.c); Ctrl-] switches between the two. See servers/console/README.md.
 *   console               started by rs: ioports=0x3f8-0x3ff irq=4 control */
#include "axrt.h"
#include "evloop.h"
#include "service.h"
#include "ioport.h"
#include "lineed.h"
#include "commands.h"
#include "term.h"
#include "ds_client.h"
#include "keep.h"

#define COM1 0x3f8
#define UART_RBR 0 /* receive buffer (read) */
#define UART_IER 1 /* interrupt enable */
#define UART_LSR 5 /* line status */
#define IER_RX 0x01 /* received data available (and, with the FIFO, its timeout) */
#define LSR_DR 0x01 /* a byte is waiting in RBR */
#define LSR_NONE 0xff /* what a port with no UART behind it reads */
#define IRQ 4
#define IRQ_BIT (1ull << 0)
#define POLL_NS 20000000ull /* without the IRQ: look at the UART every 20 ms */
#define DRAIN_MAX 4096 /* bytes per turn at most, so a babbling line cannot starve the loop */
#define RETRY_NS 10000000ull /* the terminal's channel was full: push again in 10 ms */
#define HOTKEY 0x1d /* Ctrl-]: between the terminal and the monitor */

static struct lineed ed;
static bool to_terminal;     /* typed bytes go to vfs's terminal, not the monitor */
static bool terminal_seen;   /* a terminal has attached since we started */
static bool terminal_lost;   /* we left the terminal because its vfs ended */
static uint64_t idle_wait_ns; /* the event loop's sleep with nothing queued: 0, or POLL_NS */

/* What a restarted (or live-updated) console takes over, with `keep` in boot/system.conf:
 * whether the user had chosen the monitor. A console that came back in the terminal while
 * the user was typing commands would hand their next command to the shell. */
#define CONSOLE_KEEP_MAGIC 0x31504b534e4f43ull /* "CONSKP1" */
static struct { uint64_t at_monitor; } *kept;
static bool stay_at_monitor; /* adopted at_monitor: the first terminal does not take typing */

/* Echo is collected and written once per batch of input, not once per byte. */
static char echo_buf[256];
static struct ax_outbuf echo_out = { echo_buf, sizeof(echo_buf), 0 };

static void flush(void) { ax_out_flush(&echo_out); }

static void echo(void *ctx, const char *s, size_t n)
{
	(void)ctx;
	ax_out_put(&echo_out, s, n);
}

static void prompt(void)
{
	flush();
	ax_write("axolotl> ", 9);
}

static void to_monitor(const char *why)
{
	flush();
	to_terminal = false;
	kept->at_monitor = 1;
	le_init(&ed, echo, NULL);
	ax_printf("\nconsole: %s\n", why);
	prompt();
}

static void to_tty(const char *why)
{
	flush();
	to_terminal = true;
	kept->at_monitor = 0;
	ax_printf("\nconsole: %s\n", why);
}

static void feed(uint8_t c)
{
	if (c == HOTKEY && term_attached()) {
		if (to_terminal)
			to_monitor("monitor (Ctrl-] returns to the terminal)");
		else
			to_tty("terminal (Ctrl-] for the monitor)");
		return;
	}
	if (to_terminal) {
		term_put(c);
		return;
	}
	switch (le_feed(&ed, c)) {
	case LE_LINE:
		flush();
		console_run(ed.buf);
		prompt();
		break;
	case LE_CANCEL:
		prompt();
		break;
	case LE_TOOLONG:
		flush();
		ax_printf("\nconsole: line too long (at most %d characters), ignored\n", LE_MAX);
		break;
	case LE_NONE:
		break;
	}
}

/* Hands the bytes queued for the terminal to vfs; back to the monitor if vfs is gone. */
static void push(struct ax_evloop *l)
{
	if (!term_push() && to_terminal) {
		to_monitor("the terminal is gone (vfs ended): monitor");
		kept->at_monitor = 0; /* not the user's choice: the terminal takes typing when back */
		terminal_lost = true;
	}
	l->wait_ns = term_pending() ? RETRY_NS : idle_wait_ns;
}

/* Reads every byte the UART holds; true if there was any. */
static bool drain(void)
{
	int n = 0;
	uint8_t lsr;
	while (n < DRAIN_MAX && (lsr = ax_inb(COM1 + UART_LSR)) != LSR_NONE && (lsr & LSR_DR)) {
		feed(ax_inb(COM1 + UART_RBR));
		n++;
	}
	flush();
	return n > 0;
}

/* ds changed something we watch: vfs's terminal appeared. */
static void ds_changes(void)
{
	char label[DS_NAME_LEN], key[DS_NAME_LEN];
	bool news = false;
	while (dsc_check(label, key) == 0)
		news = true;
	if (!news || !term_changed())
		return;
	/* The first terminal, or one back after its vfs ended under it: typing goes there. A vfs
	 * that came back while the monitor was chosen leaves the monitor where it is. */
	if (!terminal_seen && stay_at_monitor) {
		flush();
		ax_printf("\nconsole: terminal attached; typing stays in the monitor, as before the restart "
			  "(Ctrl-] goes to the terminal)\n");
		prompt();
	} else if (!terminal_seen || terminal_lost) {
		to_tty("terminal attached: typing goes to it (Ctrl-] switches to the monitor and back)");
	} else if (!to_terminal) {
		flush();
		ax_printf("\nconsole: the terminal is back (a new vfs): Ctrl-] goes to it\n");
		prompt();
	}
	terminal_seen = true, terminal_lost = false;
}

static void on_notify(struct ax_evloop *l, uint64_t bits)
{
	if (bits & DS_NOTIFY_BIT)
		ds_changes();
	if (bits & IRQ_BIT) {
		drain();
		kcall1(KC_IRQ_UNMASK, IRQ);
		/* A byte that arrived after the last look but before the unmask raised the UART's
		 * line while it was masked; that edge may be gone, and the line stays up until RBR
		 * is read, so no new one comes. Look once more: reading it lets the next byte
		 * interrupt. */
		drain();
	}
	push(l);
}

/* Each turn of the loop: the UART when there is no IRQ, and what the terminal's channel
 * could not take before. */
static bool poll(struct ax_evloop *l)
{
	bool r = idle_wait_ns && drain();
	if (r || term_pending())
		push(l);
	return r;
}

int main(int argc, char **argv)
{
	ax_svc_init(argc, argv); /* heartbeats for rs */
	bool adopted;
	kept = ax_keep_open(CONSOLE_KEEP_MAGIC, ax_keep_layout((const uint64_t[]){ sizeof(*kept) }, 1),
			    sizeof(*kept), &adopted);
	if (ax_svc.restarts) /* the last instance's channels and imports go; we make our own */
		ax_keep_sweep_grants(), ax_keep_sweep();
	stay_at_monitor = adopted && kept->at_monitor == 1; /* any other value: not trusted */
	kept->at_monitor = stay_at_monitor;
	if (adopted)
		ax_printf("console: restarted (generation %lu): typing goes to the %s, as before\n",
			  (unsigned long)ax_keep_generation(), stay_at_monitor ? "monitor" : "terminal");
	/* restartable: the terminal's state is vfs's; the monitor keeps none */
	struct ax_evloop l = { .on_notify = on_notify, .poll = poll, .restartable = true };
	le_init(&ed, echo, NULL);
	if (ax_inb(COM1 + UART_LSR) == LSR_NONE) {
		/* Nothing to read from; stay up (answering rs) rather than crash-loop. */
		ax_printf("console: no UART at %#x, no input\n", COM1);
		return (int)ax_evloop_run(&l);
	}
	/* Bind first, so the interrupt the UART raises for bytes already waiting is seen. */
	int64_t r = kcall6(KC_IRQ_BIND, IRQ, IRQ_BIT, KIRQ_WATCHED, 0, 0, 0); /* we unmask at once: rs watches */
	if (r < 0) {
		ax_printf("console: IRQ %d not available (error %lld), polling every 20 ms\n", IRQ, (long long)r);
		l.wait_ns = idle_wait_ns = POLL_NS;
	} else {
		/* Only the received-data interrupt: the kernel writes with them off and polls. */
		ax_outb(COM1 + UART_IER, IER_RX);
	}
	/* vfs's terminal, when there is one: ds tells us when it appears. */
	bool watching = term_watch() == 0;
	ax_printf("console: ready\n");
	prompt();
	if (watching)
		ds_changes(); /* what ds holds already counts (it notifies only of later changes) */
	if (r == 0)
		on_notify(&l, IRQ_BIT); /* whatever was typed before we were listening */
	r = ax_evloop_run(&l);
	ax_printf("console: event loop ended (error %lld)\n", (long long)r);
	return 1;
}
