/*
 * search.h - search strategies: what to try next.
 *
 * A search is pure: no I/O, no clocks, no getenv. Given the same spec,
 * seed and observations it gives the same trials. Every trial has an index
 * (its position in the search's sequence) and a stable id: a hash of its
 * canonical parameters, so a resumed sweep recognises a grid cell it has
 * already run.
 */
#ifndef SW_SEARCH_H
#define SW_SEARCH_H

#include <stdbool.h>
#include <stdint.h>

#include "search/rng.h"
#include "sweeps/spec.h"

typedef struct {
    sw_value *params; /* nested map of plain values; owned */
    uint64_t index;   /* position in the search's sequence */
    char id[17];      /* 16 hex digits of the canonical-params hash */
} sw_trial;

void sw_trial_init(sw_trial *t);
void sw_trial_dispose(sw_trial *t);

/* Sets t->id from t->params (hash of the canonical JSON). */
void sw_trial_set_id(sw_trial *t);

typedef struct sw_search sw_search;

/* Creates the search the spec's method names. Fails with SW_EINVALID and a
 * message when the spec cannot be searched that way (a continuous
 * parameter in a grid; a method not yet available). The spec is borrowed
 * and must outlive the search. */
int sw_search_new(sw_search **out, const sw_spec *spec, uint64_t seed);
void sw_search_free(sw_search *s);

/* The next trial into *out (initialised by the caller, who disposes it;
 * any params it held are freed). Returns SW_EDONE when the search is
 * exhausted (grid, or run_cap reached). */
int sw_search_next(sw_search *s, sw_trial *out);

/* The trial at `index` of the sequence, without moving the cursor; for the
 * methods whose sequence does not depend on results (grid, random,
 * sobol).
 * SW_EDONE when `index` is past the grid's end or run_cap. */
int sw_search_at(sw_search *s, uint64_t index, sw_trial *out);

/* The number of trials the search can give: *bounded is false when it is
 * unbounded (random without run_cap), *saturated is true when the count
 * exceeds UINT64_MAX (then *count is UINT64_MAX). run_cap is applied. */
void sw_search_size(const sw_search *s, uint64_t *count, bool *bounded,
                    bool *saturated);

/* Tells the search the metric `value` of an ended trial: NaN for a failed
 * run or one without a value (bayes and tpe impute it per
 * metric.impute). Clears the trial's in-flight state; observing the same
 * index again replaces the value. Strategies that do not learn (grid,
 * random, sobol) ignore it. Fails with SW_EINVALID when the trial's
 * parameters are not in the sweep's space (a value not among `values`). */
int sw_search_observe(sw_search *s, const sw_trial *t, double value);

/* Tells the search that trial `t` is in flight, so that adaptive methods
 * suggest away from it. sw_search_next already counts the trial it gives,
 * so this is for resume: after replaying sw_search_observe for every
 * ended run, call it for each run still running. Idempotent by t->index.
 *
 * For every method, observe and pending also move the cursor past
 * t->index, so that after a replay sw_search_next gives a new index. A
 * suggestion depends only on the seed, its index and the set of (index,
 * params, value) recorded, not on the order they came. */
int sw_search_pending(sw_search *s, const sw_trial *t);

/* Whether bayes and tpe fit their model on the values runs had at rungs
 * (multi-fidelity search, docs/search.md): the method is bayes or tpe,
 * early_terminate is hyperband or asha (its rungs, promote or not), and
 * the file does not say `multi_fidelity: false`. */
bool sw_search_multi_fidelity(const sw_spec *spec);

/* Tells the search the metric `value` trial `t` had at iteration `iter`
 * (> 0): a rung of early_terminate it reached, or the last iteration of
 * a run that finished. Replaces the value that trial had at `iter`; a
 * trial not heard of yet counts as in flight (observe ends it). Without
 * multi-fidelity (sw_search_multi_fidelity), and for the methods that do
 * not learn, it changes nothing. Fails with SW_EINVALID as observe does.
 * Moves the cursor past t->index as observe does; the rung values are
 * part of the set a suggestion depends on. */
int sw_search_observe_rung(sw_search *s, const sw_trial *t, int64_t iter,
                           double value);

/* The iteration whose values the model of the last suggestion was
 * fitted on, multi-fidelity's level (that suggestion may have been one
 * of its random share); 0: the ended runs' values, or no model yet. */
int64_t sw_search_fitted(const sw_search *s);

/* The grid's own size, before run_cap: the product of the value counts of
 * its parameters. Fails with SW_EINVALID when a parameter is continuous. */
int sw_grid_size(const sw_spec *spec, uint64_t *count, bool *saturated);

/* Draws one value of `p` from `r` as W&B's random search does; the caller
 * owns the result. */
sw_value *sw_param_sample(const sw_param *p, sw_rng *r);

#endif
