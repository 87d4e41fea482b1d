/*
 * fidelity.c - what the rungs have shown, for bayes and tpe to choose
 * new configurations from partial curves (multi-fidelity search, as
 * BOHB does it; docs/search.md).
 *
 * A level is an iteration: a rung of the sweep's early_terminate, or the
 * last iteration of a run that finished. Each keeps the value of the
 * sweep's metric every trial had there, one per trial, sorted by trial
 * index and replaced when told again: a set, so the record is the same
 * whatever order a live sweep or a resume tells it in.
 *
 * The model of a suggestion is fitted at one level, BOHB's: the highest
 * one with at least n_min finite values. view() is the history as that
 * level sees it; the strategies fit on it exactly as they fit on the
 * ended runs' values when no level has enough. Under promotion ASHA
 * only the best runs of a rung reach the next, so a level alone would
 * show the model the good region and nothing of the rest: a trial that
 * stopped (or waits, or still trains) below the level counts there as
 * its value at its highest rung plus the median change from that rung
 * to the level among the trials that have both, a learning curve's
 * shift measured on the runs that went on, and never better than the
 * best that a trial at least as good at that rung did at the level.
 */
#include "search/space.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sweeps/error.h"

#define COIN_STREAM UINT64_C(0xf1de117c0)

void sw_fidelity__init(sw_fidelity *f)
{
    memset(f, 0, sizeof(*f));
}

void sw_fidelity__dispose(sw_fidelity *f)
{
    size_t i;

    for (i = 0; i < f->n; i++)
        free(f->levels[i].obs);
    free(f->levels);
    sw_fidelity__init(f);
}

/* The level of iteration `iter`, made (in order) when it is new. */
static sw_level *level_at(sw_fidelity *f, int64_t iter)
{
    size_t at = 0;

    while (at < f->n && f->levels[at].iter < iter)
        at++;
    if (at < f->n && f->levels[at].iter == iter)
        return &f->levels[at];
    sw_grow(&f->levels, &f->cap, f->n + 1, sizeof(*f->levels));
    memmove(&f->levels[at + 1], &f->levels[at],
            (f->n - at) * sizeof(*f->levels));
    f->n++;
    memset(&f->levels[at], 0, sizeof(*f->levels));
    f->levels[at].iter = iter;
    return &f->levels[at];
}

/* The position of `index` in `l`, or where it would go. */
static size_t find(const sw_level *l, uint64_t index, bool *found)
{
    size_t lo = 0, hi = l->len;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;

        if (l->obs[mid].index < index)
            lo = mid + 1;
        else
            hi = mid;
    }
    *found = lo < l->len && l->obs[lo].index == index;
    return lo;
}

void sw_fidelity__record(sw_fidelity *f, uint64_t index, int64_t iter, double y)
{
    sw_level *l = level_at(f, iter);
    bool found;
    size_t at = find(l, index, &found);

    if (!found) {
        sw_grow(&l->obs, &l->cap, l->len + 1, sizeof(*l->obs));
        memmove(&l->obs[at + 1], &l->obs[at], (l->len - at) * sizeof(*l->obs));
        l->len++;
    }
    if (found && isfinite(l->obs[at].y))
        l->finite--;
    if (isfinite(y))
        l->finite++;
    l->obs[at].index = index;
    l->obs[at].y = y;
}

int sw_fidelity__record_trial(sw_fidelity *f, sw_history *h, const sw_space *sp,
                              const sw_trial *t, int64_t iter, double y)
{
    int err = sw_history__record(h, sp, t, NAN, true);

    if (err == SW_OK)
        sw_fidelity__record(f, t->index, iter, y);
    return err;
}

const sw_level *sw_fidelity__pick(const sw_fidelity *f, size_t n_min)
{
    size_t i;

    for (i = f->n; i-- > 0;)
        if (f->levels[i].finite >= n_min)
            return &f->levels[i];
    return NULL;
}

/* Trial `index`'s value at `l`; false when it has none. */
static bool value_at(const sw_level *l, uint64_t index, double *y)
{
    bool found;
    size_t at = find(l, index, &found);

    if (found)
        *y = l->obs[at].y;
    return found;
}

/* What a lower level k says of the modelled level l: the trials with a
 * finite value at both, by their value at k (at_k ascending), each with
 * the best value at l among it and those before it (best_l); and the
 * median change from k to l. */
typedef struct {
    double *at_k, *best_l; /* n each, one allocation */
    size_t n;
    double shift;
} bridge;

static int by_pair(const void *a, const void *b)
{
    const double *x = a, *y = b;

    if (x[0] != y[0])
        return x[0] < y[0] ? -1 : 1;
    return x[1] < y[1] ? -1 : x[1] > y[1];
}

static int by_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

static void bridge_make(bridge *b, const sw_level *k, const sw_level *l)
{
    double *pair = sw_malloc((2 * k->len + 1) * sizeof(*pair)), y;
    size_t i, n = 0;

    for (i = 0; i < k->len; i++)
        if (isfinite(k->obs[i].y) && value_at(l, k->obs[i].index, &y) &&
            isfinite(y)) {
            pair[2 * n] = k->obs[i].y;
            pair[2 * n++ + 1] = y;
        }
    b->n = n;
    b->at_k = sw_malloc((2 * n + 1) * sizeof(*b->at_k));
    b->best_l = b->at_k + n;
    for (i = 0; i < n; i++) /* the changes, to take their median */
        b->best_l[i] = pair[2 * i + 1] - pair[2 * i];
    qsort(b->best_l, n, sizeof(*b->best_l), by_double);
    b->shift = !n      ? 0
               : n % 2 ? b->best_l[n / 2]
                       : (b->best_l[n / 2 - 1] + b->best_l[n / 2]) / 2;
    qsort(pair, n, 2 * sizeof(*pair), by_pair);
    for (i = 0; i < n; i++) {
        b->at_k[i] = pair[2 * i];
        b->best_l[i] = i && b->best_l[i - 1] < pair[2 * i + 1]
                           ? b->best_l[i - 1]
                           : pair[2 * i + 1];
    }
    free(pair);
}

/* The estimate at l of a trial that had y at k: y plus the median
 * change, but no better than the best that any trial as good at k did
 * at l (the rank is kept, as ASHA assumes when it promotes). */
static double bridge_estimate(const bridge *b, double y)
{
    size_t lo = 0, hi = b->n;
    double est = y + b->shift;

    while (lo < hi) { /* how many had at most y at k */
        size_t mid = lo + (hi - lo) / 2;

        if (b->at_k[mid] <= y)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo && b->best_l[lo - 1] > est ? b->best_l[lo - 1] : est;
}

/* Trial `index`'s estimate at the level above levels[0..n): from the
 * highest of them where it has a finite value and some trial has one at
 * both. */
static bool estimate(const sw_level *levels, size_t n, const bridge *br,
                     uint64_t index, double *y)
{
    size_t k;

    for (k = n; k-- > 0;)
        if (br[k].n && value_at(&levels[k], index, y) && isfinite(*y)) {
            *y = bridge_estimate(&br[k], *y);
            return true;
        }
    return false;
}

/* Records come in index order, so each is appended. */
void sw_fidelity__view(const sw_fidelity *f, const sw_level *l,
                       const sw_history *h, sw_history *view)
{
    size_t n = (size_t)(l - f->levels), i, k;
    bridge *br = sw_malloc((n + 1) * sizeof(*br));
    double y;

    for (k = 0; k < n; k++)
        bridge_make(&br[k], &f->levels[k], l);
    for (i = 0; i < h->len; i++) {
        const sw_obs *o = &h->obs[i];
        const double *z = sw_history__z(h, i);

        if (value_at(l, o->index, &y) ||
            estimate(f->levels, n, br, o->index, &y))
            sw_history__observe(view, o->index, z, y);
        else if (o->pending)
            sw_history__pending(view, o->index, z);
        else if (!isfinite(o->y)) /* failed: imputed at every level */
            sw_history__observe(view, o->index, z, NAN);
    }
    for (k = 0; k < n; k++)
        free(br[k].at_k);
    free(br);
}

const sw_history *sw_fidelity__history(const sw_fidelity *f,
                                       const sw_history *h, size_t n_min,
                                       sw_history *view, int64_t *level)
{
    const sw_level *l = sw_fidelity__pick(f, n_min);

    *level = 0;
    sw_history__init(view, h->n_dims);
    if (!l)
        return h;
    sw_fidelity__view(f, l, h, view);
    *level = l->iter;
    return view;
}

bool sw_fidelity__coin(uint64_t seed, uint64_t index, double fraction)
{
    sw_rng r;

    sw_rng_seed(&r, seed, COIN_STREAM ^ index);
    return sw_rng_uniform(&r) < fraction;
}
