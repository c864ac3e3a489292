/* The console's `perf` command (perf_cmd.c). */
#pragma once
int perf_main(int argc, char **argv);
int threads_main(int argc, char **argv);
