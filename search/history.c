/*
 * history.c - what an adaptive strategy knows: every trial it gave or was
 * told of, its point, and its result or that it is still in flight.
 *
 * Records are kept sorted by trial index and keyed by it, so telling the
 * same thing twice changes nothing and the record is the same whatever
 * order a live sweep or a resume replays it in. Imputation of missing
 * results (W&B's metric.impute) is done on demand, from the record as it
 * stands, as W&B recomputes it at every suggestion.
 */
#include "search/space.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sweeps/error.h"

void sw_history__init(sw_history *h, size_t n_dims)
{
    memset(h, 0, sizeof(*h));
    h->n_dims = n_dims;
}

void sw_history__dispose(sw_history *h)
{
    free(h->obs);
    free(h->z);
    sw_history__init(h, 0);
}

const double *sw_history__z(const sw_history *h, size_t i)
{
    return h->z + i * h->n_dims;
}

/* The position of `index`, or where it would go; *found says which. */
static size_t find(const sw_history *h, uint64_t index, bool *found)
{
    size_t lo = 0, hi = h->len;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;

        if (h->obs[mid].index < index)
            lo = mid + 1;
        else
            hi = mid;
    }
    *found = lo < h->len && h->obs[lo].index == index;
    return lo;
}

/* Makes room for a record at `at` (growing both arrays). */
static void insert_at(sw_history *h, size_t at)
{
    size_t cap = h->cap, d = h->n_dims;

    sw_grow(&h->obs, &h->cap, h->len + 1, sizeof(*h->obs));
    if (h->cap != cap)
        h->z = sw_realloc(h->z, (h->cap * d + 1) * sizeof(*h->z));
    memmove(&h->obs[at + 1], &h->obs[at], (h->len - at) * sizeof(*h->obs));
    memmove(&h->z[(at + 1) * d], &h->z[at * d],
            (h->len - at) * d * sizeof(*h->z));
    h->len++;
}

static void put(sw_history *h, uint64_t index, const double *z, double y,
                bool pending)
{
    bool found;
    size_t at = find(h, index, &found);

    if (found && pending)
        return;
    if (!found)
        insert_at(h, at);
    h->obs[at].index = index;
    h->obs[at].y = y;
    h->obs[at].pending = pending;
    if (h->n_dims)
        memcpy(&h->z[at * h->n_dims], z, h->n_dims * sizeof(*z));
}

void sw_history__observe(sw_history *h, uint64_t index, const double *z,
                         double y)
{
    put(h, index, z, y, false);
}

void sw_history__pending(sw_history *h, uint64_t index, const double *z)
{
    put(h, index, z, NAN, true);
}

/* W&B's value for a missing metric, on the metric's own scale. */
static double imputed(const sw_metric *m, bool have_worst, double worst)
{
    bool by_worst = !m->impute || strcmp(m->impute, "worst") == 0;

    return by_worst && have_worst ? worst : 0.0;
}

size_t sw_history__losses(const sw_history *h, const sw_metric *m, double *loss)
{
    double sign = m->goal == SW_GOAL_MAXIMIZE ? -1.0 : 1.0;
    double worst = -INFINITY, fill;
    size_t i, real = 0;

    for (i = 0; i < h->len; i++) {
        double y = h->obs[i].y;

        if (!h->obs[i].pending && isfinite(y)) {
            real++;
            if (sign * y > worst)
                worst = sign * y;
        }
    }
    fill = sign * imputed(m, real > 0, sign * worst);
    for (i = 0; i < h->len; i++) {
        if (h->obs[i].pending)
            loss[i] = NAN;
        else if (isfinite(h->obs[i].y))
            loss[i] = sign * h->obs[i].y;
        else
            loss[i] = fill;
    }
    return real;
}

int sw_history__record(sw_history *h, const sw_space *sp, const sw_trial *t,
                       double y, bool pending)
{
    double *z = sw_malloc((sp->n + 1) * sizeof(*z));
    int err = sw_space__encode(sp, t->params, z);

    if (err == SW_OK && pending)
        sw_history__pending(h, t->index, z);
    else if (err == SW_OK)
        sw_history__observe(h, t->index, z, y);
    free(z);
    return err;
}

void sw_history__suggested(sw_history *h, const sw_space *sp, uint64_t index,
                           double *z, sw_value **vals)
{
    sw_space__decode(sp, z, vals);
    if (sw_space__encode_leaves(sp, vals, z) == SW_OK)
        sw_history__pending(h, index, z);
}
