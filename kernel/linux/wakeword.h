/* KC_WAKE: a Linux process's wake word, rung by the servers (wakeword.c). */
#pragma once
#include "proc/proc.h"

int64_t kc_wake(struct thread *me, uint64_t op, uint64_t a, uint64_t b);
