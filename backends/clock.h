/*
 * clock.h - a clock, as the engine reads time: monotonic seconds for
 * timeouts, grace periods and back-offs, and wall time for what is
 * recorded. It lives here, below the engine, because an executor may
 * keep one: the simulated cluster (sim.c) runs on a virtual clock that
 * the engine then reads instead of the system's (orchestrator/engine/clock.h).
 */
#ifndef SW_BACKENDS_CLOCK_H
#define SW_BACKENDS_CLOCK_H

typedef struct sw_clock sw_clock;

struct sw_clock {
    double (*mono)(const sw_clock *c); /* seconds; only differences mean */
    double (*wall)(const sw_clock *c); /* unix seconds */
};

static inline double sw_clock_mono(const sw_clock *c)
{
    return c->mono(c);
}

static inline double sw_clock_wall(const sw_clock *c)
{
    return c->wall(c);
}

#endif
