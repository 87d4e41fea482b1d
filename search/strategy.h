/*
 * strategy.h - the interface a search strategy implements (for people who
 * write strategies; the engine uses search.h only).
 *
 * A strategy is a table of function pointers with a version, one file per
 * implementation (grid.c, random.c), reached only through the one-line
 * wrappers in search.c. A strategy deals in leaf values: one sw_value per
 * spec->params[i], in spec order; search.c nests them and sets the id.
 *
 * Strategies whose trials are a fixed sequence (grid, random, sobol)
 * implement `at`; adaptive ones (bayes, tpe) leave `at` NULL, implement
 * `next` and learn from `observe` and `pending`. Optional entries are NULL
 * when not needed.
 *
 * Version 2 added `pending`; version 3 `observe_rung` and `fitted`.
 */
#ifndef SW_STRATEGY_H
#define SW_STRATEGY_H

#include "search/search.h"

#define SW_STRATEGY_VERSION 3

typedef struct {
    int version; /* SW_STRATEGY_VERSION */
    const char *name;
    /* Prepares the state of a search over `spec` (borrowed for the life of
     * the search). Fails with SW_EINVALID and a message. */
    int (*open)(void **state, const sw_spec *spec, uint64_t seed);
    /* Frees the state; accepts NULL. */
    void (*close)(void *state);
    /* Leaf values of the trial at `index` into vals[0..n_params); SW_EDONE
     * past the end. NULL for strategies that depend on observations. */
    int (*at)(void *state, uint64_t index, sw_value **vals);
    /* Optional: the next trial's leaf values when `at` cannot say (an
     * adaptive strategy). `index` is the trial's position; the strategy
     * counts the trial it gives as in flight until it is observed. */
    int (*next)(void *state, uint64_t index, sw_value **vals);
    /* The number of trials before any run_cap, as sw_search_size says. */
    void (*size)(const void *state, uint64_t *count, bool *bounded,
                 bool *saturated);
    /* Optional: learns the metric `value` of a finished trial (NaN: it
     * failed or gave no value). Clears the trial's in-flight state. */
    int (*observe)(void *state, const sw_trial *t, double value);
    /* Optional: trial `t` is in flight (launched, no result yet).
     * Idempotent by t->index; a no-op for an observed trial. */
    int (*pending)(void *state, const sw_trial *t);
    /* Optional: learns the metric `value` trial `t` had at iteration
     * `iter` (sw_search_observe_rung). */
    int (*observe_rung)(void *state, const sw_trial *t, int64_t iter,
                        double value);
    /* Optional: what sw_search_fitted says. */
    int64_t (*fitted)(const void *state);
} sw_strategy;

extern const sw_strategy sw_grid__strategy;
extern const sw_strategy sw_random__strategy;
extern const sw_strategy sw_sobol__strategy;
extern const sw_strategy sw_bayes__strategy;
extern const sw_strategy sw_tpe__strategy;
extern const sw_strategy sw_pbt__strategy; /* its population (random.c) */

/* The multiples of q in W&B's rounding: numpy's round, half to even. Gives
 * an SW_INT when p->q_int (numpy's astype(int), saturating), else
 * SW_FLOAT. */
sw_value *sw_sample__quantize(const sw_param *p, double x);

/* The size of a search with no end of its own (random, bayes, tpe):
 * unbounded, before any run_cap. */
void sw_search__unbounded(const void *state, uint64_t *count, bool *bounded,
                          bool *saturated);

/* Where `p` was declared, for messages: "file:line:col: ", "file: "
 * when its line is not known, "" without a file. */
char *sw_search__where(const sw_spec *spec, const sw_param *p);

#endif
