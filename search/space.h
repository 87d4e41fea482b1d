/*
 * space.h - the search space as the adaptive strategies (bayes, tpe) see
 * it, and the record of what they have observed. Internal to search/.
 *
 * Each searchable leaf of the spec is one dimension with a coordinate z:
 *   real (every continuous distribution): z = W&B's cdf(value) in [0, 1];
 *   int (int_uniform): z = the centre of the value's cell,
 *     (k - min + 0.5) / (max - min + 1), so ppf(z) gives k back;
 *   cat (values): z = the value's index.
 * A point of the space is one z per dimension; decoding goes through
 * W&B's ppf, so the values suggested are exactly those W&B's formulas
 * give for those coordinates.
 */
#ifndef SW_SPACE_H
#define SW_SPACE_H

#include <stdbool.h>
#include <stdint.h>

#include "search/search.h"
#include "search/sobol.h"
#include "sweeps/spec.h"

typedef enum { SW_DIM_REAL, SW_DIM_INT, SW_DIM_CAT } sw_dim_kind;

typedef struct {
    const sw_param *p;
    size_t leaf; /* index in spec->params */
    sw_dim_kind kind;
    size_t levels; /* int and cat: the number of values; else 0 */
    bool rounds;   /* real with q (or a huge int range): ppf rounds */
} sw_dim;

typedef struct {
    const sw_spec *spec; /* borrowed */
    sw_dim *dims;
    size_t n; /* searchable leaves */
} sw_space;

/* The dimensions of `spec` (borrowed for the life of the space). */
void sw_space__init(sw_space *sp, const sw_spec *spec);
void sw_space__dispose(sw_space *sp);

/* The point of a trial's nested parameters into z[0..sp->n). Fails with
 * SW_EINVALID and a message when a leaf is missing or not a value of its
 * parameter. */
int sw_space__encode(const sw_space *sp, const sw_value *params, double *z);

/* The same from leaf values (vals[i] for spec->params[i]). */
int sw_space__encode_leaves(const sw_space *sp, sw_value *const *vals,
                            double *z);

/* Leaf values of point z into vals[0..spec->n_params); constants are
 * cloned. The caller owns the values. */
void sw_space__decode(const sw_space *sp, const double *z, sw_value **vals);

/* The coordinate of dimension `d` at quantile u in [0, 1] (through ppf,
 * so categoricals with probabilities follow them). */
double sw_space__from_u(const sw_dim *d, double u);

/* The nearest coordinate a value has: the cell centre of an int, the
 * index of a categorical, cdf(ppf(z)) of a rounded real. */
double sw_space__snap(const sw_dim *d, double z);

/* What the strategies know of one trial. */
typedef struct {
    uint64_t index;
    double y;     /* the metric as reported; NaN when failed or absent */
    bool pending; /* in flight: no result yet */
} sw_obs;

/* Trials by index, ascending, with their points: a set, so a replay in
 * any order gives the same record. */
typedef struct {
    size_t n_dims;
    sw_obs *obs;
    double *z; /* n_dims per trial, in the order of obs */
    size_t len, cap;
} sw_history;

void sw_history__init(sw_history *h, size_t n_dims);
void sw_history__dispose(sw_history *h);

/* Records trial `index` as ended with metric y (NaN: none), replacing
 * any earlier record of it. */
void sw_history__observe(sw_history *h, uint64_t index, const double *z,
                         double y);

/* Records trial `index` as in flight; a no-op when it is already
 * recorded (in flight or ended). */
void sw_history__pending(sw_history *h, uint64_t index, const double *z);

/* Records trial `t` (its params encoded in `sp`) as ended with metric
 * `y` (`pending` false) or as in flight: what a learning strategy's
 * observe and pending do. SW_EINVALID, naming the parameter, when the
 * params are not in the space. */
int sw_history__record(sw_history *h, const sw_space *sp, const sw_trial *t,
                       double y, bool pending);

/* Leaf values of suggested point `z` for trial `index`, into vals; the
 * trial is recorded in `h` as in flight at the point observe() will read
 * back from those values (after rounding and snapping). */
void sw_history__suggested(sw_history *h, const sw_space *sp, uint64_t index,
                           double *z, sw_value **vals);

/* The start-up point of trial `index`: the scrambled Sobol point of that
 * index, and random coordinates past the sequence's dimensions or its
 * 2^32 points. */
void sw_space__warm_point(const sw_space *sp, const sw_sobol *warm,
                          uint64_t index, sw_rng *r, double *z);

/* The point of record i. */
const double *sw_history__z(const sw_history *h, size_t i);

/* Losses to minimise, one per record (NaN for those in flight): the
 * metric, negated when the goal is to maximise; a missing or non-finite
 * one is imputed as W&B does: impute "worst" (the default) gives the
 * worst finite loss recorded, "best" and "latest" give 0 (W&B's value
 * for a run without a history), as does "worst" with nothing finite.
 * Returns how many records have a finite metric of their own. */
size_t sw_history__losses(const sw_history *h, const sw_metric *m,
                          double *loss);

/* What the rungs have shown (fidelity.c): per level, an iteration, the
 * metric of each trial that got there, by trial index. */
typedef struct {
    uint64_t index;
    double y; /* as reported; non-finite ones are imputed */
} sw_rung_obs;

typedef struct {
    int64_t iter;
    sw_rung_obs *obs; /* ascending by index, one per trial */
    size_t len, cap;
    size_t finite; /* how many of them have a finite y */
} sw_level;

typedef struct {
    sw_level *levels; /* ascending by iter, distinct */
    size_t n, cap;
} sw_fidelity;

/* The share of multi-fidelity suggestions that ignore the model (BOHB's
 * random_fraction): points of the initial design, so that a model
 * misled by early values still sees the whole space. BOHB's 1/3 cost
 * more than it saved on tests/bench/bench_mfbo.sh, for both methods;
 * a tenth keeps the guarantee. */
#define SW_FIDELITY_RANDOM 0.1

void sw_fidelity__init(sw_fidelity *f);
void sw_fidelity__dispose(sw_fidelity *f);

/* Records trial `index`'s metric y at iteration `iter`, replacing any
 * value it had there. Can't fail (memory exhaustion aborts). */
void sw_fidelity__record(sw_fidelity *f, uint64_t index, int64_t iter,
                         double y);

/* What a strategy's observe_rung does: trial `t` at `iter` with y, and
 * in `h` as in flight unless `h` knows it already. SW_EINVALID, naming
 * the parameter, when its params are not in the space. */
int sw_fidelity__record_trial(sw_fidelity *f, sw_history *h, const sw_space *sp,
                              const sw_trial *t, int64_t iter, double y);

/* The highest level with at least n_min finite values; NULL: none. */
const sw_level *sw_fidelity__pick(const sw_fidelity *f, size_t n_min);

/* The history `h` as level `l` (one of f's) sees it, into `view`
 * (initialised, empty): a trial with a value at `l` is ended with it;
 * one with a finite value y at a lower level k where some trial has a
 * value at both is ended with an estimate from its highest such k: y
 * plus the median change from k to `l` of the trials with both, but no
 * better than the best value at `l` of those with at most y at k; else
 * one in flight is
 * in flight, one that ended with no finite value (a failed run) is
 * ended with none (imputed as ever), and the others are not there. */
void sw_fidelity__view(const sw_fidelity *f, const sw_level *l,
                       const sw_history *h, sw_history *view);

/* The history a suggestion's model is fitted on: the view of the level
 * pick() chooses (*level its iteration), or `h` itself when none has
 * n_min values (*level 0). `view` is initialised here either way; the
 * caller disposes it. */
const sw_history *sw_fidelity__history(const sw_fidelity *f,
                                       const sw_history *h, size_t n_min,
                                       sw_history *view, int64_t *level);

/* Whether the suggestion of trial `index` is one of the random
 * `fraction`: a function of the seed and the index only. */
bool sw_fidelity__coin(uint64_t seed, uint64_t index, double fraction);

#endif
