/* boot/system.conf parser (lib/sysconf): every field, every error names its line, fuzz. */
#include "unit.h"
#include "sysconf.h"

static struct svc_conf sv[16];
static struct sysconf_error err;

static int parse(const char *s) { return sysconf_parse(s, strlen(s), sv, 16, &err); }

static void defaults(void)
{
	REQUIRE(parse("# the stack\n\nservice ip\n") == 1);
	CHECK_STR(sv[0].name, "ip");
	CHECK_STR(sv[0].binary, "ip");
	CHECK_STR(sv[0].args, "");
	CHECK_EQ_I64(sv[0].cpu, SVC_CPU_ANY);
	CHECK(!sv[0].dedicated && !sv[0].dma && !sv[0].pci_all && !sv[0].control && !sv[0].keep && !sv[0].optional);
	CHECK_EQ_U64(sv[0].priority, 2);
	CHECK_EQ_U64(sv[0].restart, SVC_RESTART_ALWAYS);
	CHECK_EQ_U64(sv[0].heartbeat_ms, 0);
	CHECK_EQ_U64(sv[0].backoff_ms, 100);
	CHECK_EQ_U64(sv[0].nports + sv[0].npci + sv[0].nmmio + sv[0].irqs, 0);
}

static void every_field(void)
{
	const char *t =
		"service e1000 binary=e1000d args=\"mtu 1500 poll\" cpu=3 dedicated priority=0 "
		"ioports=0xc000-0xc03f,0x60 irq=11,3 pci=00:03.0,1f:1f.7 mmio=0xfebc0000+32 dma "
		"kcalls=vcopy,poweroff restart=on-failure heartbeat=500 backoff=250 control keep optional  # trailing comment\n"
		"service relay restart=never\r\n";
	REQUIRE(parse(t) == 2);
	struct svc_conf *c = &sv[0];
	CHECK_STR(c->binary, "e1000d");
	CHECK_STR(c->args, "mtu 1500 poll");
	CHECK_EQ_I64(c->cpu, 3);
	CHECK(c->dedicated && c->dma && c->control && c->keep && c->optional);
	CHECK(!sv[1].optional);
	CHECK_EQ_U64(c->priority, 0);
	REQUIRE(c->nports == 2);
	CHECK_EQ_U64(c->ports[0].lo, 0xc000);
	CHECK_EQ_U64(c->ports[0].hi, 0xc03f);
	CHECK_EQ_U64(c->ports[1].lo, 0x60);
	CHECK_EQ_U64(c->ports[1].hi, 0x60);
	CHECK_EQ_U64(c->irqs, (1u << 11) | (1u << 3));
	REQUIRE(c->npci == 2);
	CHECK_EQ_U64(c->pci[0], 3u << 3);
	CHECK_EQ_U64(c->pci[1], 0x1fu << 8 | 0x1fu << 3 | 7);
	REQUIRE(c->nmmio == 1);
	CHECK_EQ_U64(c->mmio[0].pa, 0xfebc0000);
	CHECK_EQ_U64(c->mmio[0].pages, 32);
	CHECK_EQ_U64(c->kcalls, SVC_KC_VCOPY | SVC_KC_POWEROFF);
	CHECK_EQ_U64(c->restart, SVC_RESTART_ON_FAILURE);
	CHECK_EQ_U64(c->heartbeat_ms, 500);
	CHECK_EQ_U64(c->backoff_ms, 250);
	CHECK_STR(sv[1].name, "relay");
	CHECK_EQ_U64(sv[1].restart, SVC_RESTART_NEVER);
	CHECK(!sv[1].control);
}

/* Each bad line is refused with its line number and a message naming the problem. */
static void errors_name_the_line(void)
{
	static const struct { const char *text, *msg; } bad[] = {
		{ "servce ip", "expected `service NAME" },
		{ "service", "bad service name" },
		{ "service a/b", "bad service name" },
		{ "service ip colour=blue", "unknown key: colour=blue" },
		{ "service ip fast", "unknown flag: fast" },
		{ "service ip control=yes", "unknown key: control=yes" },
		{ "service ip dma=1", "unknown key: dma=1" },
		{ "service ip cpu=x", "cpu must be" },
		{ "service ip dedicated", "dedicated needs cpu=N" },
		{ "service ip priority=8", "priority must be 0-7" },
		{ "service ip ioports=0x10000", "bad port" },
		{ "service ip ioports=0x60-0x50", "port range ends before" },
		{ "service ip irq=16", "IRQ must be 0-15" },
		{ "service ip pci=0:3", "PCI address" },
		{ "service ip pci=00:20.0", "PCI address" },
		{ "service ip pci=00:03.0,00:04.0,00:05.0,00:06.0,00:07.0,00:08.0,00:09.0,00:0a.0,00:0b.0", "too many PCI devices" },
		{ "service ip mmio=0xfebc0001+1", "mmio must be" },
		{ "service ip mmio=0xfebc0000+0", "mmio must be" },
		{ "service ip kcalls=spawn", "unknown kernel call" },
		{ "service ip restart=sometimes", "restart must be" },
		{ "service ip heartbeat=-1", "heartbeat must be" },
		{ "service ip backoff=0", "backoff must be" },
		{ "service ip args=\"open", "unterminated quote" },
		{ "service ip args=\"a\"b", "text after a closing quote" },
		{ "service ip args=", "empty value" },
		{ "service ip irq=1,,2", "IRQ must be" },
		{ "service ip ioports=0x60,0x61,0x62,0x63,0x64,0x65,0x66,0x67,0x68", "too many port ranges" },
		{ "service ip\tbinary=abcdefghijklmnopqrstuvwxyz0123456789", "binary name too long" },
		{ "service ip\x01", "control character" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char text[256];
		snprintf(text, sizeof(text), "# header\nservice ok\n%s\nservice later\n", bad[i].text);
		memset(&err, 0, sizeof(err));
		int r = parse(text);
		if (r != -1 || err.line != 3 || !strstr(err.msg, bad[i].msg))
			unit_fail(__FILE__, __LINE__, "case %zu \"%s\": r=%d line=%d msg=\"%s\"", i, bad[i].text, r,
				  err.line, err.msg);
	}
	CHECK(parse("service a\nservice a\n") == -1 && err.line == 2 && strstr(err.msg, "defined twice: a"));
	char big[700];
	memset(big, 'x', sizeof(big));
	memcpy(big, "service ", 8);
	CHECK(sysconf_parse(big, sizeof(big), sv, 16, &err) == -1 && strstr(err.msg, "too long"));
	CHECK(sysconf_parse("service a\nservice b\n", 20, sv, 1, &err) == -1 && strstr(err.msg, "too many services"));
	CHECK(sysconf_parse("service a\0service b", 19, sv, 16, &err) == -1);
}

/* pci= by vendor:device id, alone, with an index, and mixed with bus:dev.fn. */
static void pci_by_id(void)
{
	REQUIRE(parse("service e1000 pci=8086:100e dma\nservice nic2 pci=8086:10D3#1,00:04.0\n") == 2);
	CHECK_EQ_U64(sv[0].npci_ids, 1);
	CHECK_EQ_U64(sv[0].pci_ids[0].vendor, 0x8086);
	CHECK_EQ_U64(sv[0].pci_ids[0].device, 0x100e);
	CHECK_EQ_U64(sv[0].pci_ids[0].index, 0);
	CHECK_EQ_U64(sv[0].npci, 0);
	CHECK_EQ_U64(sv[1].npci_ids, 1);
	CHECK_EQ_U64(sv[1].pci_ids[0].device, 0x10d3);
	CHECK_EQ_U64(sv[1].pci_ids[0].index, 1);
	REQUIRE(sv[1].npci == 1);
	CHECK_EQ_U64(sv[1].pci[0], 4u << 3);
	/* the buffer ends inside the id: no read past it (ASan watches) */
	char *buf = malloc(17);
	memcpy(buf, "service a pci=80", 16);
	CHECK(sysconf_parse(buf, 16, sv, 16, &err) == -1);
	free(buf);
}

/* Several ids are alternatives, kept in their order (rs gives the first present): the
 * ixgbe line of boot/system.conf. */
static void pci_ids_any_of(void)
{
	REQUIRE(parse("service ixgbe pci=8086:10c9,8086:10fb,8086:10f7,8086:1507,8086:1557 dma optional\n") == 1);
	static const uint16_t want[] = { 0x10c9, 0x10fb, 0x10f7, 0x1507, 0x1557 };
	REQUIRE(sv[0].npci_ids == 5);
	for (int i = 0; i < 5; i++) {
		CHECK_EQ_U64(sv[0].pci_ids[i].vendor, 0x8086);
		CHECK_EQ_U64(sv[0].pci_ids[i].device, want[i]);
		CHECK_EQ_U64(sv[0].pci_ids[i].index, 0);
	}
	CHECK(!sv[0].pci_error[0] && sv[0].dma && sv[0].optional);
	CHECK_EQ_U64(sv[0].npci, 0);
	/* 8 ids fit, a ninth does not */
	REQUIRE(parse("service a pci=8086:0001,8086:0002,8086:0003,8086:0004,8086:0005,8086:0006,8086:0007,8086:0008\n") == 1);
	CHECK(sv[0].npci_ids == 8 && !sv[0].pci_error[0]);
}

/* A bad id marks its service alone: the file parses, the service carries the first bad id
 * with its message and line (rs logs it and never starts the service), the other lines and
 * the rest of the service's own line are read as usual. */
static void a_bad_pci_id_marks_its_service_alone(void)
{
	static const struct { const char *ids, *msg; } bad[] = {
		{ "8086:10", "PCI id must be VVVV:DDDD or VVVV:DDDD#N: 8086:10" },
		{ "8086:100g", "PCI id must be VVVV:DDDD or VVVV:DDDD#N: 8086:100g" },
		{ "8086:100e#", "PCI id must be" },
		{ "8086:100e#256", "PCI id must be" },
		{ "8086:100e1", "PCI id must be" },
		{ "ffff:100e", "PCI id must be VVVV:DDDD or VVVV:DDDD#N: ffff:100e" },
		{ "0000:100e", "PCI id must be" },
		{ "8086:10c9,8086:10zz,1af4:1041", "PCI id must be VVVV:DDDD or VVVV:DDDD#N: 8086:10zz" },
		{ "8086:10c9,8086:1", "PCI id must be VVVV:DDDD or VVVV:DDDD#N: 8086:1" },
		{ "8086:10c9,,8086:10fb", "" },
		{ "8086:0001,8086:0002,8086:0003,8086:0004,8086:0005,8086:0006,8086:0007,8086:0008,8086:0009",
		  "too many PCI ids (8 at most): 8086:0009" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char text[256];
		snprintf(text, sizeof(text), "service ok\n# the NIC\nservice nic pci=%s dma heartbeat=1000\nservice later\n",
			 bad[i].ids);
		memset(&err, 0, sizeof(err));
		int r = parse(text);
		if (!bad[i].msg[0]) { /* (an empty item is a bus:dev.fn error: the file fails) */
			CHECK(r == -1 && err.line == 3);
			continue;
		}
		if (r != 3 || strcmp(sv[1].name, "nic") || !strstr(sv[1].pci_error, bad[i].msg) || sv[1].pci_error_line != 3 ||
		    !sv[1].dma || sv[1].heartbeat_ms != 1000 || sv[0].pci_error[0] || sv[2].pci_error[0])
			unit_fail(__FILE__, __LINE__, "case %zu \"%s\": r=%d error=\"%s\" line %d", i, bad[i].ids, r,
				  sv[1].pci_error, sv[1].pci_error_line);
	}
	/* only the first bad id is kept */
	REQUIRE(parse("service nic pci=8086:1,8086:2\n") == 1);
	CHECK(strstr(sv[0].pci_error, ": 8086:1") && !strstr(sv[0].pci_error, "8086:2"));
}

static void not_nul_terminated(void)
{
	/* The buffer ends right after the name: no read past len (ASan watches). */
	char *buf = malloc(10);
	memcpy(buf, "service ip", 10);
	CHECK(sysconf_parse(buf, 10, sv, 16, &err) == 1 && !strcmp(sv[0].name, "ip"));
	memcpy(buf, "service a=", 10);
	CHECK(sysconf_parse(buf, 10, sv, 16, &err) == -1);
	free(buf);
}

/* Mutated valid files: the parser returns a count or an error, never reads out of bounds. */
static void fuzz(void)
{
	static const char seed[] = "service e1000 binary=e1000d args=\"a b\" cpu=3 dedicated priority=0 "
				   "ioports=0xc000-0xc03f irq=11 pci=00:03.0,8086:100e#2 mmio=0xfebc0000+32 dma kcalls=vcopy "
				   "restart=on-failure heartbeat=500\nservice ip cpu=1 control\n";
	uint64_t x = 88172645463325252ull;
	int ok = 0;
	for (int i = 0; i < 200000; i++) {
		size_t n = sizeof(seed) - 1;
		char *b = malloc(n);
		memcpy(b, seed, n);
		for (int m = 0; m < 4; m++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			b[x % n] = (char)(x >> 32);
		}
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		size_t len = x % (n + 1);
		int r = sysconf_parse(b, len, sv, 16, &err), lines = 1; /* (a mutation may make a newline) */
		for (size_t j = 0; j < len; j++)
			lines += b[j] == '\n';
		if (r < -1 || r > lines)
			unit_fail(__FILE__, __LINE__, "round %d: result %d", i, r);
		if (r < 0 && (err.line < 1 || err.line > lines || !err.msg[0]))
			unit_fail(__FILE__, __LINE__, "round %d: error without line or message (%d: %s)", i, err.line, err.msg);
		ok += r >= 0;
		free(b);
	}
	CHECK(ok > 0);
}

int main(void)
{
	unit_begin(__FILE__);
	RUN(defaults);
	RUN(every_field);
	RUN(errors_name_the_line);
	RUN(pci_by_id);
	RUN(pci_ids_any_of);
	RUN(a_bad_pci_id_marks_its_service_alone);
	RUN(not_nul_terminated);
	RUN(fuzz);
	return unit_end();
}
