/*
 * promote.h - asynchronous successive halving with promotions (ASHA as
 * Li et al. describe it in "A System for Massively Parallel
 * Hyperparameter Tuning", Algorithm 2): runs train to a rung and pause
 * there; a paused run is promoted to the next rung when it is among the
 * top 1/eta of the runs that reached its rung, and a new configuration
 * starts only when no promotion is due. docs/stopping.md says how the
 * engine uses it (`early_terminate: {type: asha, promote: true}`).
 *
 * Rungs are iterations min_iter * eta^k (k = 0, 1, ...) below max_iter,
 * then max_iter itself, the last: a run that reaches it has finished.
 * With brackets (asynchronous Hyperband), a run of bracket b starts at
 * rung b and is compared at each rung only with its own bracket's runs:
 * configurations whose curves cross (slow starters that end best) get
 * brackets that train them far before any comparison.
 *
 * A promoter is pure: no clocks, no I/O. The same records in the same
 * order give the same promotions, so a resumed sweep rebuilds it from
 * the store (each paused run's rung and value, and which were promoted).
 * Work per record is a sorted insertion, O(runs at that rung); a call to
 * next() is O(rungs x candidates).
 */
#ifndef SW_PROMOTE_H
#define SW_PROMOTE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sweeps/buf.h"

typedef struct sw_promoter sw_promoter;

/* The most rungs a promoter keeps. */
#define SW_PROMOTER_MAX_RUNGS 64

/* A promoter for rungs from min_iter (>= 1) by eta (> 1) up to max_iter
 * (>= min_iter), for a metric to maximize or not. SW_EINVALID, with a
 * message, for parameters outside those bounds. */
int sw_promoter_new(sw_promoter **out, int64_t min_iter, double eta,
                    int64_t max_iter, bool maximize);
/* Accepts NULL. */
void sw_promoter_free(sw_promoter *p);

/* Asynchronous Hyperband: `brackets` (1 to rungs) brackets, bracket b
 * starting its runs at rung b and promoting them among its own; a run's
 * bracket is drawn from (seed, run) with Hyperband's weights (each
 * bracket about the same budget), so a rebuilt promoter draws the same.
 * 1, the default, is plain ASHA. SW_EINVALID outside those bounds. Call
 * it before any record. */
int sw_promoter_set_brackets(sw_promoter *p, size_t brackets, uint64_t seed);

/* Whether the values recorded below the last rung are predictions of
 * the run's final value (extrapolated curves): explain() says so. */
void sw_promoter_set_predicted(sw_promoter *p, bool predicted);

/* The bracket of `run`: the rung it starts at (0 with one bracket). */
size_t sw_promoter_bracket(const sw_promoter *p, int64_t run);

/* The number of rungs, and the iteration of rung k (k < rungs). */
size_t sw_promoter_rungs(const sw_promoter *p);
int64_t sw_promoter_rung_iter(const sw_promoter *p, size_t k);

/* The rung a run that has trained `iter` iterations has reached: the
 * highest k with rung_iter(k) <= iter; -1 below the first. */
int sw_promoter_rung_of(const sw_promoter *p, int64_t iter);

/* Records that `run` (any id the caller chooses) reached rung k with
 * `value`, its metric at that iteration: it waits there to be promoted
 * (or, at the last rung, has finished). A non-finite value ranks last.
 * A second record of the same run at the same rung is ignored. Can't
 * fail (memory exhaustion aborts). */
void sw_promoter_record(sw_promoter *p, int64_t run, size_t k, double value);

/* Marks `run` as promoted out of rung k (a resumed sweep replays the
 * promotions it made). Ignored for a run not recorded there. */
void sw_promoter_mark(sw_promoter *p, int64_t run, size_t k);

/* Undoes a promotion next() gave that the caller could not make yet
 * (the run has not stopped at its rung): it is due again. */
void sw_promoter_unmark(sw_promoter *p, int64_t run, size_t k);

/* The next promotion due, top rung first: a run at some rung k below the
 * last that is among the best floor(n_k / eta) of the n_k runs of its
 * bracket recorded at k and not promoted yet. True with *run and *to (k + 1)
 * set, and the run marked promoted; false when none is due (start a new one).
 */
bool sw_promoter_next(sw_promoter *p, int64_t *run, size_t *to);

/* Past the quota, for a sweep that can start nothing new (its run_cap
 * reached, its space drawn whole) while some of its devices would
 * idle: the best waiting run, at the highest rung below the last, that
 * `fits` accepts (it is asked of each waiting run, run and rung, from
 * the top rung down and best first, until it says yes). True with *run
 * and *to (k + 1) set and the run marked promoted; false when none
 * fits. At rung k + 1 such a run is outside the quota: neither counted
 * among the n whose top 1/eta go on nor ever due (only next_beyond()
 * takes it further), so the drain never changes what next() promotes.
 * A promoter rebuilt from records and marks counts it as any. */
bool sw_promoter_next_beyond(sw_promoter *p,
                             bool (*fits)(void *ctx, int64_t run, size_t k),
                             void *ctx, int64_t *run, size_t *to);

/* Whether `run`'s latest promotion was past the quota (next_beyond()). */
bool sw_promoter_beyond(const sw_promoter *p, int64_t run);

/* The iteration `run` trains to next: the rung after the highest one it
 * was recorded at (the last rung's iteration once there), or the first
 * rung for a run never recorded. */
int64_t sw_promoter_target(const sw_promoter *p, int64_t run);

/* Whether `run` waits at some rung below the last, not promoted: paused.
 * *k is that rung. */
bool sw_promoter_waiting(const sw_promoter *p, int64_t run, size_t *k);

/* One line on where `run` stands ("rung 1 (iteration 3): value 0.41,
 * 2nd of 5, the top 1 go on: waits"), for logs and the run's reason. */
void sw_promoter_explain(const sw_promoter *p, int64_t run, sw_buf *out);

#endif
