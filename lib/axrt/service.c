#include "service.h"
#include "heartbeat.h"
#include "ds_client.h"

struct ax_svc_state ax_svc = { "?", "?", 0, false };
/* A build's tag ("v2" for the live-update test's second versions, lib/axrt/build_v2.c). */
__attribute__((weak)) const char ax_build_tag[] = "";

static endpoint_t rs_ep(void) { return (endpoint_t)kcall1(KC_INFO, KI_PARENT); }

void ax_svc_init(int argc, char **argv)
{
	ax_heartbeat_init(argc, argv);
	if (argc > 0) {
		const char *base = argv[0];
		for (const char *p = argv[0]; *p; p++)
			if (*p == '/')
				base = p + 1;
		ax_svc.name = ax_svc.label = base;
	}
	for (int i = 1; i < argc; i++) {
		if (!strncmp(argv[i], "restarted=", 10))
			ax_svc.restarts = (uint32_t)ax_atou(argv[i] + 10);
		else if (!strcmp(argv[i], "update=1"))
			ax_svc.update = true;
		else if (!strncmp(argv[i], "label=", 6))
			ax_svc.label = argv[i] + 6;
	}
}

bool ax_svc_rs_arg(const char *a)
{
	return !strncmp(a, "hb=", 3) || !strncmp(a, "restarted=", 10) || !strcmp(a, "update=1") || !strncmp(a, "label=", 6);
}

int64_t ax_svc_lookup(const char *name, endpoint_t *next)
{
	struct kmsg m = { .type = RS_LOOKUP };
	int64_t r = ax_strpad(m.w, RS_NAME_LEN, name);
	if (r == 0)
		r = ax_call(rs_ep(), &m);
	if (r == 0)
		r = (int64_t)m.w[6];
	if (next)
		*next = r == 0 ? (endpoint_t)m.w[1] : 0;
	return r == 0 ? (int64_t)(uint32_t)m.w[0] : r;
}

int64_t ax_svc_complain(endpoint_t peer, const char *what, uint64_t stalled_ms)
{
	struct kmsg m = { .type = RS_COMPLAIN };
	m.w[0] = peer;
	m.w[1] = stalled_ms;
	ax_strpad(&m.w[2], RS_COMPLAIN_WHAT, what); /* (a name too long is left out: it is only said) */
	int64_t r = ax_call(rs_ep(), &m);
	if (r == 0)
		r = (int64_t)m.w[6];
	return r == 0 ? (int64_t)m.w[0] : r;
}

int64_t ax_svc_ready(void)
{
	struct kmsg m = { .type = RS_READY };
	int64_t r = ax_call(rs_ep(), &m);
	return r < 0 ? r : (int64_t)m.w[6];
}

/* Live update, old side: quiesce, tell rs, and block until rs either kills us (committed)
 * or answers "resume" (rolled back). */
static void quiesce(struct ax_evloop *l)
{
	int64_t r = l->quiesce ? l->quiesce(l) : l->restartable ? RS_QUIESCED_REPLACE : -KE_NOSYS;
	struct kmsg m = { .type = RS_QUIESCED, .w = { (uint64_t)r } };
	ax_printf("%s: %s\n", ax_svc.name,
		  r == 0 ? "quiesced for a live update" : r > 0 ? "quiesced: to be replaced by its new version" : "cannot be updated");
	int64_t e = ax_call(rs_ep(), &m);
	if (r == 0 && (e < 0 || m.w[0] == 1)) { /* rolled back, or rs died meanwhile */
		ax_printf("%s: update %s, resuming\n", ax_svc.name, e < 0 ? "abandoned (rs is gone)" : "rolled back");
		if (l->resume)
			l->resume(l);
	}
}

void ax_svc_crash(void)
{
	volatile uint64_t *volatile nowhere = (volatile uint64_t *)16;
	*nowhere = 1;
}

void ax_svc_hang(void)
{
	for (;;)
		__asm__ volatile("pause"); /* no heartbeats from here on */
}

void ax_svc_commands(struct ax_evloop *l)
{
	for (;;) {
		struct kmsg m = { .type = RS_CMD };
		if (ax_call(rs_ep(), &m) < 0 || m.w[6] != 0 || m.w[0] == RS_DO_NONE)
			return;
		char word[RS_WORD_LEN + 1] = { 0 };
		memcpy(word, &m.w[1], RS_WORD_LEN);
		switch (m.w[0]) {
		case RS_DO_QUIESCE:
			quiesce(l);
			break;
		case RS_DO_CRASH:
			ax_printf("%s: injected fault: crashing\n", ax_svc.name);
			ax_svc_crash();
			break;
		case RS_DO_HANG:
			ax_printf("%s: injected fault: hanging\n", ax_svc.name);
			ax_svc_hang();
		case RS_DO_INJECT:
			if (l->inject)
				l->inject(l, word);
			else
				ax_printf("%s: no injectable fault named %s\n", ax_svc.name, word);
			break;
		case RS_DO_DS:
			dsc_restarted((endpoint_t)m.w[3]);
			break;
		default:
			return;
		}
	}
}
