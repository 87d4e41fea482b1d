/*
 * clock.h - the engine's time. The engine never reads the system's clocks
 * itself: it is given a clock, monotonic for timeouts, grace periods and
 * back-offs (so a clock step or a suspend changes none of them), and wall
 * time for what is recorded. A simulated cluster, or a test, gives it one
 * that moves only when told to.
 */
#ifndef SW_CLOCK_H
#define SW_CLOCK_H

typedef struct sw_clock sw_clock;

struct sw_clock {
    double (*mono)(const sw_clock *c); /* seconds; only differences mean */
    double (*wall)(const sw_clock *c); /* unix seconds */
};

/* The machine's clocks: CLOCK_MONOTONIC and CLOCK_REALTIME. */
extern const sw_clock sw_clock_system;

static inline double sw_clock_mono(const sw_clock *c)
{
    return c->mono(c);
}

static inline double sw_clock_wall(const sw_clock *c)
{
    return c->wall(c);
}

#endif
