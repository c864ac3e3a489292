/* udpecho PORT [count]: a UDP echo server for the network tests (tests/system/test_udp.py).
 * Binds 0.0.0.0:PORT and sends every datagram back to its sender with recvfrom/sendto,
 * on the same socket for its whole life (it never reopens: the stack's recovery must keep
 * that socket working). Prints `udpecho: listening on PORT`, then `udpecho: N echoed`
 * every 1000 datagrams, and ends after count datagrams if given. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static char buf[65536];

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: udpecho PORT [count]\n");
		return 2;
	}
	int port = atoi(argv[1]);
	unsigned long count = argc > 2 ? strtoul(argv[2], NULL, 10) : 0;
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (fd < 0) {
		printf("udpecho: socket: %s\n", strerror(errno));
		return 1;
	}
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		printf("udpecho: bind: %s\n", strerror(errno));
		return 1;
	}
	printf("udpecho: listening on %d\n", port);
	fflush(stdout);
	unsigned long echoed = 0, errors = 0;
	while (!count || echoed < count) {
		struct sockaddr_in from;
		socklen_t flen = sizeof(from);
		ssize_t n = recvfrom(fd, buf, sizeof(buf), 0, (struct sockaddr *)&from, &flen);
		if (n < 0) {
			if (errno != EINTR && ++errors % 100 == 1)
				printf("udpecho: recvfrom: %s (%lu errors)\n", strerror(errno), errors);
			continue;
		}
		if (sendto(fd, buf, (size_t)n, 0, (struct sockaddr *)&from, flen) != n) {
			if (++errors % 100 == 1)
				printf("udpecho: sendto: %s (%lu errors)\n", strerror(errno), errors);
			continue;
		}
		if (++echoed % 1000 == 0) {
			printf("udpecho: %lu echoed\n", echoed);
			fflush(stdout);
		}
	}
	printf("udpecho: done, %lu echoed, %lu errors\n", echoed, errors);
	return 0;
}
