/* tcphash server PORT [ADDR]: a stream server for the TCP transfer tests (tests/system/tcp_tools.py
 * is the client; tests/system/test_tcp_apps.py). Accepts connections one at a time on
 * ADDR:PORT (default 0.0.0.0; on the host, 127.0.0.1); each starts with a header line:
 *   send N         the client sends N bytes; the answer is their CRC-32 (zlib's), as
 *                  8 hex digits and a newline
 *   recv N SEED    the server sends N bytes of the stream of SEED (below), then closes
 * Anything else is answered `error` and closed. After a transfer the server waits (30 s at
 * most) for the client to close first, so TIME_WAIT stays on the client's side and a
 * thousand short connections leave nothing behind in the server's stack. The stream of SEED is made of 64 KiB blocks:
 * a base block of xorshift64 output from SEED, with block k's first 8 bytes replaced by k
 * (little-endian), so no two blocks are alike. Transfers of 1 MiB or more are logged:
 * `tcphash: #K send N crc C` / `tcphash: #K recv N SEED done|short`. Builds for Axolotl
 * (musl-gcc) and for the host alike. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#define BLOCK 65536

static uint32_t crc_table[256];
static uint8_t base[BLOCK], buf[BLOCK];

static void crc_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;
		for (int k = 0; k < 8; k++)
			c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
		crc_table[i] = c;
	}
}

/* zlib's crc32(crc, data): start with 0. */
static uint32_t crc32_update(uint32_t crc, const uint8_t *p, size_t n)
{
	crc = ~crc;
	while (n--)
		crc = crc_table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return ~crc;
}

static void make_base(uint64_t seed)
{
	uint64_t x = seed ^ 0x9e3779b97f4a7c15ull;
	for (size_t i = 0; i < BLOCK; i += 8) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		memcpy(base + i, &x, 8); /* little-endian, as Python's int.to_bytes(8, "little") */
	}
}

/* The header line, without its newline; -1 on a closed or bad connection. */
static int read_line(int fd, char *line, size_t size)
{
	size_t n = 0;
	for (;;) {
		char ch;
		ssize_t r = read(fd, &ch, 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r != 1)
			return -1;
		if (ch == '\n')
			break;
		if (n + 1 >= size)
			return -1;
		line[n++] = ch;
	}
	line[n] = 0;
	return 0;
}

static int write_all(int fd, const void *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			printf("tcphash: write: %s\n", w < 0 ? strerror(errno) : "wrote nothing");
			return -1;
		}
		p = (const char *)p + w;
		n -= (size_t)w;
	}
	return 0;
}

/* Waits for the client's end of stream, discarding anything it still sends. */
static void wait_for_close(int fd)
{
	struct timeval tv = { 30, 0 };
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	while (read(fd, buf, sizeof(buf)) > 0)
		;
}

static void serve(int fd, unsigned long id)
{
	char line[80], out[32];
	unsigned long long n, seed;
	if (read_line(fd, line, sizeof(line)) < 0)
		return;
	if (sscanf(line, "send %llu", &n) == 1) {
		uint32_t crc = 0;
		unsigned long long got = 0;
		while (got < n) {
			size_t want = n - got < BLOCK ? (size_t)(n - got) : BLOCK;
			ssize_t r = read(fd, buf, want);
			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0)
				break;
			crc = crc32_update(crc, buf, (size_t)r);
			got += (unsigned long long)r;
		}
		if (got < n) {
			printf("tcphash: #%lu send %llu: only %llu arrived\n", id, n, got);
			return;
		}
		snprintf(out, sizeof(out), "%08x\n", crc);
		write_all(fd, out, strlen(out));
		if (n >= (1u << 20))
			printf("tcphash: #%lu send %llu crc %08x\n", id, n, crc);
		wait_for_close(fd);
	} else if (sscanf(line, "recv %llu %llu", &n, &seed) == 2) {
		make_base(seed);
		unsigned long long sent = 0;
		for (uint64_t k = 0; sent < n; k++) {
			memcpy(buf, base, BLOCK);
			memcpy(buf, &k, 8);
			size_t len = n - sent < BLOCK ? (size_t)(n - sent) : BLOCK;
			if (write_all(fd, buf, len) < 0)
				break;
			sent += len;
		}
		if (n >= (1u << 20))
			printf("tcphash: #%lu recv %llu %llu %s\n", id, n, seed, sent == n ? "done" : "short");
		if (sent == n)
			wait_for_close(fd);
	} else {
		write_all(fd, "error\n", 6);
		printf("tcphash: #%lu bad header\n", id);
	}
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 3 || strcmp(argv[1], "server")) {
		fprintf(stderr, "usage: tcphash server PORT [ADDR]\n");
		return 2;
	}
	signal(SIGPIPE, SIG_IGN); /* a client that goes away is an error of that write only */
	crc_init();
	int l = socket(AF_INET, SOCK_STREAM, 0), one = 1;
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(argv[2])) };
	if (argc > 3 && inet_pton(AF_INET, argv[3], &a.sin_addr) != 1) {
		fprintf(stderr, "tcphash: bad address %s\n", argv[3]);
		return 2;
	}
	setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof(a)) || listen(l, 256)) {
		printf("tcphash: cannot listen on %s: %s\n", argv[2], strerror(errno));
		return 1;
	}
	printf("tcphash: listening on %s\n", argv[2]);
	for (unsigned long id = 1;; id++) {
		int c = accept(l, NULL, NULL);
		if (c < 0) {
			if (errno != EINTR && errno != ECONNABORTED)
				printf("tcphash: accept: %s\n", strerror(errno));
			if (errno == EBADF || errno == EINVAL)
				return 1;
			usleep(10000); /* out of descriptors or memory: no busy loop */
			continue;
		}
		serve(c, id);
		close(c);
	}
}
