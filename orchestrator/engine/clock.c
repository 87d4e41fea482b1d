/*
 * clock.c - the system clock behind clock.h. CLOCK_MONOTONIC does not
 * jump when the wall clock is set; timeouts measured on it are real
 * elapsed time while the machine runs.
 */
#include "orchestrator/engine/clock.h"

#include <time.h>

static double read_clock(clockid_t id)
{
    struct timespec ts;

    clock_gettime(id, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double system_mono(const sw_clock *c)
{
    (void)c;
    return read_clock(CLOCK_MONOTONIC);
}

static double system_wall(const sw_clock *c)
{
    (void)c;
    return read_clock(CLOCK_REALTIME);
}

const sw_clock sw_clock_system = {system_mono, system_wall};
