/* The console's commands: splits a typed line into words and runs the command it names. */
#pragma once

#define CMD_MAX_ARGS 24 /* a pf rule has many words */

/* Runs one line (modified in place); an empty line does nothing. */
void console_run(char *line);
