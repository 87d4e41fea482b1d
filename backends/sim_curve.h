/*
 * sim_curve.h - a surrogate's output made into the timed lines the
 * simulated cluster replays (sim_curve.c; internal to backends/sim.c).
 */
#ifndef SW_SIM_CURVE_H
#define SW_SIM_CURVE_H

#include <stddef.h>
#include <stdint.h>

/* How an attempt's curve is cut and timed. */
typedef struct {
    double start;      /* the launch's virtual time */
    double startup;    /* seconds a launch costs before the trial's own
                          start-up (its `_startup`) */
    double read_delay; /* seconds from a line's print to its reading */
    int64_t from;      /* resumed from its checkpoint: steps up to this
                          one are not trained again; 0: none */
    int64_t until;     /* SWEEP_TRAIN_UNTIL: it exits after this step;
                          0: it trains its whole curve */
} sw_sim_shape;

/* The lines an attempt prints, in order: line i is text[ends[i-1] ..
 * ends[i]), printed at at[i] and read by the engine at seen[i]; step[i]
 * is its step, the one before's for a line that is not @metrics. */
typedef struct {
    char *text;
    size_t len, n;
    size_t *ends;
    int64_t *step;
    double *at, *seen;
    double end_at; /* when its process exits */
    double read_delay;
} sw_sim_curve;

/* Makes `c` from the `len` bytes of a surrogate's output `raw`: the
 * lines within `sh`'s from/until, timed by their `_seconds` after the
 * start-up, their control keys (_seconds, _startup, _read_delay) taken
 * out and lines left empty by that dropped. A line's `_startup` adds to
 * `sh`'s start-up; its `_read_delay` replaces `sh`'s. seen[] is set by
 * sw_sim__read_times. This function can't fail; `c` is the caller's to dispose.
 */
void sw_sim__shape(sw_sim_curve *c, const char *raw, size_t len,
                   const sw_sim_shape *sh);

/* Sets each line's reading time: its print plus the read delay, at the
 * latest its process's exit (its output is read whole then). Call it
 * once the curve is cut (a failure drawn). */
void sw_sim__read_times(sw_sim_curve *c);

/* The last step the `len` bytes of a run's stdout.log `text` reported:
 * the last @metrics line's "step", or the count of @metrics lines when
 * none says; 0 when there is none. */
int64_t sw_sim__last_step(const char *text, size_t len);

void sw_sim__curve_dispose(sw_sim_curve *c);

#endif
