/* upmsig: stands in for pm in tests/system/test_tty.py (a service named "pm") and logs the
 * PM_SIGNAL messages the terminal in vfs sends for signal characters; delivering them is
 * the real pm's business.
 *   upmsig           prints "upmsig: PM_SIGNAL to W0 signal W1" per message */
#include "axrt.h"
#include "evloop.h"
#include "service.h"
#include "pm_proto.h"

static void on_message(struct ax_evloop *l, struct kmsg *m)
{
	(void)l;
	if (m->type == PM_SIGNAL)
		ax_printf("upmsig: PM_SIGNAL to %lld signal %llu\n", (long long)m->w[0], (unsigned long long)m->w[1]);
	else
		ax_printf("upmsig: message %#x\n", m->type);
	m->w[0] = 0;
	ax_reply(m->source, m); /* answers a call; a KC_SENDNB sender is not waiting (harmless) */
}

int main(int argc, char **argv)
{
	ax_svc_init(argc, argv);
	struct ax_evloop l = { .on_message = on_message };
	return (int)ax_evloop_run(&l);
}
