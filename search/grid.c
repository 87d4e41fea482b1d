/*
 * grid.c - the grid strategy: every combination of the parameters' values,
 * in W&B's order, computed lazily from the trial index.
 *
 * Each parameter is an axis with a count of values; nothing per point is
 * stored, and int_uniform and q_uniform values are computed from their
 * digit, so a grid of 10^12 points costs one small array. The trial at
 * index i is i written in mixed radix, the LAST parameter varying fastest
 * (W&B's itertools.product over the params sorted at every level, depth
 * first, which is spec->params' order). Constants are axes of one value.
 * Value lists follow W&B: int_uniform is range(min, max + 1), q_uniform
 * is np.arange(min, max, q) (max excluded, numpy's arithmetic), except
 * that a value numpy's rounding puts past max is max.
 */
#include <math.h>
#include <stdlib.h>

#include "search/strategy.h"

typedef struct {
    uint64_t n;          /* number of values, unless full */
    bool full;           /* exactly 2^64 values (a full int64 int_uniform) */
    bool as_int;         /* q_uniform: numpy's integer arange */
    double first, delta; /* q_uniform (float): v[1], and v[i] - v[0] */
} axis;

typedef struct {
    const sw_spec *spec;
    axis *axes;
    uint64_t count;
    bool saturated;
} grid;

static bool integral(double x)
{
    return x == floor(x) && fabs(x) < 0x1.0p62;
}

static int bad_param(const sw_spec *spec, const sw_param *p, const char *why)
{
    char *where = sw_search__where(spec, p);
    int err =
        sw_error_set(SW_EINVALID, "%sparameters.%s: %s", where, p->name, why);

    free(where);
    return err;
}

/* np.arange(min, max, q): ints when all three are integers, else floats
 * with numpy's length ceil((max - min) / q) and its fill rule. */
static int arange_axis(const sw_spec *spec, const sw_param *p, axis *ax)
{
    double len;

    if (!(p->q > 0))
        return bad_param(spec, p, "q must be positive");
    ax->as_int = p->q_int && integral(p->min) && integral(p->max);
    if (ax->as_int) {
        int64_t lo = (int64_t)p->min, hi = (int64_t)p->max;
        int64_t q = (int64_t)p->q;

        ax->n = hi > lo ? (uint64_t)((hi - lo) / q + ((hi - lo) % q != 0)) : 0;
        return SW_OK;
    }
    len = ceil((p->max - p->min) / p->q);
    if (!(len < 0x1.0p63))
        return bad_param(spec, p, "q_uniform has too many values for a grid");
    ax->n = len > 0 ? (uint64_t)len : 0;
    ax->first = p->min + p->q;
    ax->delta = ax->first - p->min;
    return SW_OK;
}

static int refuse(const sw_spec *spec, const sw_param *p)
{
    char *where = sw_search__where(spec, p);
    int err;

    err = sw_error_set(SW_EINVALID,
                       "%sparameters.%s: grid search needs discrete "
                       "values; %s is continuous (use values, "
                       "int_uniform or q_uniform)",
                       where, p->name, sw_dist_name(p->dist));
    free(where);
    return err;
}

static int make_axis(const sw_spec *spec, const sw_param *p, axis *ax)
{
    *ax = (axis){0};
    switch (p->dist) {
    case SW_DIST_CONSTANT:
        ax->n = 1;
        return SW_OK;
    case SW_DIST_CATEGORICAL:
        if (p->probs)
            return bad_param(spec, p,
                             "grid search cannot use probabilities (W&B "
                             "refuses them too)");
        ax->n = p->n_values;
        return SW_OK;
    case SW_DIST_INT_UNIFORM:
        if (p->imax < p->imin)
            return SW_OK; /* empty; a valid spec never has it */
        ax->n = (uint64_t)p->imax - (uint64_t)p->imin + 1;
        ax->full = ax->n == 0;
        return SW_OK;
    case SW_DIST_Q_UNIFORM:
        return arange_axis(spec, p, ax);
    default:
        return refuse(spec, p);
    }
}

/* The product of the axes' counts; saturates at UINT64_MAX. */
static void product(const axis *axes, size_t n, uint64_t *count,
                    bool *saturated)
{
    uint64_t c = 1;
    bool sat = false;
    size_t i;

    for (i = 0; i < n; i++)
        if (!axes[i].full && axes[i].n == 0) {
            *count = 0;
            *saturated = false;
            return;
        }
    for (i = 0; i < n && !sat; i++) {
        if (axes[i].full || c > UINT64_MAX / axes[i].n)
            sat = true;
        else
            c *= axes[i].n;
    }
    *count = sat ? UINT64_MAX : c;
    *saturated = sat;
}

static int make_axes(const sw_spec *spec, axis *axes)
{
    size_t i;
    int err;

    for (i = 0; i < spec->n_params; i++)
        if ((err = make_axis(spec, &spec->params[i], &axes[i])) < 0)
            return err;
    return SW_OK;
}

/* Computes the grid's size, allocating nothing per point. */
int sw_grid_size(const sw_spec *spec, uint64_t *count, bool *saturated)
{
    axis *axes = sw_calloc(spec->n_params + 1, sizeof(*axes));
    int err = make_axes(spec, axes);

    if (err == SW_OK)
        product(axes, spec->n_params, count, saturated);
    free(axes);
    return err;
}

static int grid_open(void **state, const sw_spec *spec, uint64_t seed)
{
    grid *g = sw_calloc(1, sizeof(*g));
    int err;

    (void)seed; /* the order is W&B's; no shuffling */
    g->spec = spec;
    g->axes = sw_calloc(spec->n_params + 1, sizeof(*g->axes));
    if ((err = make_axes(spec, g->axes)) < 0) {
        free(g->axes);
        free(g);
        return err;
    }
    product(g->axes, spec->n_params, &g->count, &g->saturated);
    *state = g;
    return SW_OK;
}

static void grid_close(void *state)
{
    grid *g = state;

    if (g) {
        free(g->axes);
        free(g);
    }
}

/* The value of `p` at position `d` of its axis. */
static sw_value *axis_value(const sw_param *p, const axis *ax, uint64_t d)
{
    switch (p->dist) {
    case SW_DIST_CONSTANT:
        return sw_value_clone(p->value);
    case SW_DIST_CATEGORICAL:
        return sw_value_clone(p->values[d]);
    case SW_DIST_INT_UNIFORM: {
        uint64_t u = (uint64_t)p->imin + d;
        return sw_value_int(u <= (uint64_t)INT64_MAX ? (int64_t)u
                                                     : -(int64_t)(~u) - 1);
    }
    default: /* SW_DIST_Q_UNIFORM */
        if (ax->as_int)
            return sw_value_int((int64_t)p->min + (int64_t)d * (int64_t)p->q);
        if (d == 0)
            return sw_value_float(p->min);
        if (d == 1)
            return sw_value_float(fmin(ax->first, p->max));
        /* numpy's rounding can step a hair past max (1..1.3 by 0.1 ends
         * on 1.3000000000000003): a suggestion never leaves its range */
        return sw_value_float(fmin(p->min + (double)d * ax->delta, p->max));
    }
}

/* Splits `index` into digits, last parameter fastest; false when the
 * index is past the grid's end. */
static bool decode(const grid *g, uint64_t index, uint64_t *digits)
{
    size_t i = g->spec->n_params;

    if (g->count == 0)
        return false;
    while (i-- > 0) {
        const axis *ax = &g->axes[i];

        if (ax->full) {
            digits[i] = index;
            index = 0;
        } else {
            digits[i] = index % ax->n;
            index /= ax->n;
        }
    }
    return index == 0;
}

static int grid_at(void *state, uint64_t index, sw_value **vals)
{
    grid *g = state;
    const sw_spec *spec = g->spec;
    uint64_t *digits = sw_calloc(spec->n_params + 1, sizeof(*digits));
    size_t i;

    if (!decode(g, index, digits)) {
        free(digits);
        return sw_error_set(SW_EDONE, "the grid has no trial %llu",
                            (unsigned long long)index);
    }
    for (i = 0; i < spec->n_params; i++)
        vals[i] = axis_value(&spec->params[i], &g->axes[i], digits[i]);
    free(digits);
    return SW_OK;
}

static void grid_size(const void *state, uint64_t *count, bool *bounded,
                      bool *saturated)
{
    const grid *g = state;

    *count = g->count;
    *bounded = true;
    *saturated = g->saturated;
}

const sw_strategy sw_grid__strategy = {
    .version = SW_STRATEGY_VERSION,
    .name = "grid",
    .open = grid_open,
    .close = grid_close,
    .at = grid_at,
    .size = grid_size,
};
