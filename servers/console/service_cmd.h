/* The `service` command: lists, starts, stops, kills, restarts, live-updates services and
 * injects faults into them, through rs's control calls (lib/rs/rs_proto.h; the caller needs
 * `control` in system.conf). Written as a program's main so it can become a standalone
 * program for the shell; for now the console runs it. Prints its results; returns 0 on
 * success, 1 on a failure, 2 on a usage error. */
#pragma once

int service_main(int argc, char **argv);
