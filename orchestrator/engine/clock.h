/*
 * clock.h - the engine's time. The engine never reads the system's clocks
 * itself: it is given a clock (backends/clock.h), monotonic for timeouts,
 * grace periods and back-offs (so a clock step or a suspend changes none
 * of them), and wall time for what is recorded. A simulated cluster, or a
 * test, gives it one that moves only when told to.
 */
#ifndef SW_CLOCK_H
#define SW_CLOCK_H

#include "backends/clock.h"

/* The machine's clocks: CLOCK_MONOTONIC and CLOCK_REALTIME. */
extern const sw_clock sw_clock_system;

#endif
