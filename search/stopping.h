/*
 * stopping.h - the early-stopping rules of `early_terminate`: Hyperband
 * exactly as W&B decides it, ASHA and the median rule (docs/stopping.md).
 *
 * A stopper is pure: no clocks, no I/O, no getenv. It is fed every value
 * of the sweep's metric, run by run, as the values are committed, and
 * answers whether a run should stop now. Work per value is O(1), plus a
 * sorted insertion (O(runs)) when a value lands on a band, a rung or, for
 * the median rule, a step; an answer is O(1) (O(log iterations) for the
 * median rule). Replaying the same values in the same order gives the same
 * answers, so a resumed sweep rebuilds its stopper from the store.
 *
 * What counts: one finite value of the metric is one iteration of its
 * run; NaN and infinities are skipped, as W&B skips them. The values of
 * every run count, whatever its state. Only running runs are candidates:
 * the caller asks about those, and keeps a run stopped once told so.
 */
#ifndef SW_STOPPING_H
#define SW_STOPPING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sweeps/buf.h"
#include "sweeps/spec.h"

typedef struct sw_stopper sw_stopper;

/* The most distinct bands or rungs a stopper keeps (W&B's min_iter form
 * makes 100; max_iter with s can make more when eta is near 1). */
#define SW_STOPPER_MAX_LEVELS 4096

/* Creates the stopper of `cfg` (borrowed; a valid spec's), for a metric
 * to maximize or not. Fails with SW_EINVALID and a message when `cfg`
 * names no rule, or when Hyperband's max_iter, s and eta make more than
 * SW_STOPPER_MAX_LEVELS bands (an eta within a hair of 1). */
int sw_stopper_new(sw_stopper **out, const sw_early_terminate *cfg,
                   bool maximize);
void sw_stopper_free(sw_stopper *s);

/* Records the next value of the metric for `run`, any id the caller
 * chooses (the store's run id). A non-finite value is not an iteration
 * and changes nothing. Can't fail (memory exhaustion aborts). */
void sw_stopper_observe(sw_stopper *s, int64_t run, double value);

/* Whether `run` should stop now, given every value observed so far; false
 * for a run never observed. */
bool sw_stopper_should_stop(const sw_stopper *s, int64_t run);

/* A counter that grows whenever a value may have changed the answer for a
 * run other than the one that reported (a Hyperband threshold moved; the
 * median rule's values at a step shared by several runs changed). When it
 * has not moved since the last report, only the reporting run needs
 * asking. ASHA decides at each rung once, so it never moves. */
uint64_t sw_stopper_generation(const sw_stopper *s);

/* The iterations recorded for `run`: its count of finite values. */
int64_t sw_stopper_iterations(const sw_stopper *s, int64_t run);

/* Hyperband's bands or ASHA's rungs, ascending, into *at (borrowed);
 * returns their count (0 for the median rule). */
size_t sw_stopper_levels(const sw_stopper *s, const int64_t **at);

/* The value a run at level `i` is held to now, in the metric's own units:
 * Hyperband's threshold, or ASHA's cutoff for the runs that reached the
 * rung. False when no run has reached it (or `i` is past the levels). */
bool sw_stopper_threshold(const sw_stopper *s, size_t i, double *out);

/* Appends one line on why `run` stops or goes on ("iteration 10, band 9:
 * value 0.41, threshold 0.38: stop"; values as Python writes them), for
 * logs and `sweep show`. */
void sw_stopper_explain(const sw_stopper *s, int64_t run, sw_buf *out);

#endif
