/*
 * space.c - the coordinates of a search space: each searchable leaf to
 * and from z, through W&B's cdf and ppf (transform.c).
 *
 * Encoding then decoding is the identity on values: an int's z is the
 * centre of its cell and ppf maps the whole cell to it, a categorical's z
 * is its index. Reals that round (q-distributions) snap to cdf(value) of
 * the rounded value, so a strategy can ask where a suggestion really is.
 */
#include "search/space.h"

#include <math.h>
#include <stdlib.h>

#include "search/strategy.h"
#include "search/transform.h"

/* Int ranges wider than this are searched as reals (then rounded). */
#define MAX_INT_LEVELS (1u << 20)

static bool q_dist(sw_dist d)
{
    return d == SW_DIST_Q_UNIFORM || d == SW_DIST_Q_LOG_UNIFORM ||
           d == SW_DIST_Q_LOG_UNIFORM_VALUES || d == SW_DIST_Q_NORMAL ||
           d == SW_DIST_Q_LOG_NORMAL || d == SW_DIST_Q_BETA;
}

static void init_dim(sw_dim *d, const sw_param *p, size_t leaf)
{
    double span = (double)p->imax - (double)p->imin + 1.0;

    d->p = p;
    d->leaf = leaf;
    d->kind = SW_DIM_REAL;
    d->levels = 0;
    d->rounds = q_dist(p->dist);
    if (p->dist == SW_DIST_CATEGORICAL) {
        d->kind = SW_DIM_CAT;
        d->levels = p->n_values;
    } else if (p->dist == SW_DIST_INT_UNIFORM) {
        if (span <= (double)MAX_INT_LEVELS) {
            d->kind = SW_DIM_INT;
            d->levels = (size_t)span;
        } else {
            d->rounds = true;
        }
    }
}

void sw_space__init(sw_space *sp, const sw_spec *spec)
{
    size_t i;

    sp->spec = spec;
    sp->n = 0;
    sp->dims = sw_calloc(spec->n_params + 1, sizeof(*sp->dims));
    for (i = 0; i < spec->n_params; i++)
        if (sw_transform__searchable(&spec->params[i]))
            init_dim(&sp->dims[sp->n++], &spec->params[i], i);
}

void sw_space__dispose(sw_space *sp)
{
    free(sp->dims);
    sp->dims = NULL;
    sp->n = 0;
}

/* z of one value; NaN when it cannot be a value of the dimension. */
static double encode_one(const sw_dim *d, const sw_value *v)
{
    double x;

    switch (d->kind) {
    case SW_DIM_CAT:
        x = (double)sw_transform__index(d->p, v);
        return x < 0.0 ? NAN : x;
    case SW_DIM_INT:
        if (!v || !sw_value_number(v, &x) || !isfinite(x))
            return NAN;
        x = (floor(x) - (double)d->p->imin + 0.5) / (double)d->levels;
        return x < 0.0 ? 0.0 : x > 1.0 ? 1.0 : x;
    default:
        return sw_transform__cdf(d->p, v);
    }
}

int sw_space__encode_leaves(const sw_space *sp, sw_value *const *vals,
                            double *z)
{
    size_t j;

    for (j = 0; j < sp->n; j++) {
        z[j] = encode_one(&sp->dims[j], vals[sp->dims[j].leaf]);
        if (isnan(z[j]))
            return sw_error_set(SW_EINVALID,
                                "parameter %s: the value is missing or not "
                                "a value of its distribution",
                                sp->dims[j].p->name);
    }
    return SW_OK;
}

/* The leaf at `p`'s path in nested params, or NULL. */
static const sw_value *leaf_of(const sw_value *params, const sw_param *p)
{
    size_t k;

    for (k = 0; params && k < p->depth; k++)
        params = sw_value_map_get(params, p->path[k]);
    return params;
}

int sw_space__encode(const sw_space *sp, const sw_value *params, double *z)
{
    const sw_spec *spec = sp->spec;
    sw_value **vals = sw_calloc(spec->n_params + 1, sizeof(*vals));
    size_t j;
    int err;

    /* borrowed leaves, read only: the cast only fits the array's type */
    for (j = 0; j < sp->n; j++)
        vals[sp->dims[j].leaf] = (sw_value *)leaf_of(params, sp->dims[j].p);
    err = sw_space__encode_leaves(sp, vals, z);
    free(vals);
    return err;
}

void sw_space__decode(const sw_space *sp, const double *z, sw_value **vals)
{
    const sw_spec *spec = sp->spec;
    size_t i, j;

    for (i = 0; i < spec->n_params; i++)
        if (!sw_transform__searchable(&spec->params[i]))
            vals[i] = sw_value_clone(spec->params[i].value);
    for (j = 0; j < sp->n; j++) {
        const sw_dim *d = &sp->dims[j];

        if (d->kind == SW_DIM_CAT)
            vals[d->leaf] =
                sw_value_clone(d->p->values[lround(sw_space__snap(d, z[j]))]);
        else
            vals[d->leaf] = sw_transform__ppf(d->p, z[j]);
    }
}

double sw_space__from_u(const sw_dim *d, double u)
{
    if (d->kind == SW_DIM_CAT)
        return (double)sw_transform__ppf_index(d->p, u);
    return sw_space__snap(d, u);
}

double sw_space__snap(const sw_dim *d, double z)
{
    sw_value *v;
    double k;

    if (d->kind == SW_DIM_CAT) {
        k = floor(z + 0.5);
        return k < 0.0                     ? 0.0
               : k > (double)d->levels - 1 ? (double)d->levels - 1
                                           : k;
    }
    z = z < 0.0 ? 0.0 : z > 1.0 ? 1.0 : z;
    if (d->kind == SW_DIM_INT) {
        k = ceil(z * (double)d->levels) - 1.0;
        k = k < 0.0                     ? 0.0
            : k > (double)d->levels - 1 ? (double)d->levels - 1
                                        : k;
        return (k + 0.5) / (double)d->levels;
    }
    if (!d->rounds)
        return z;
    v = sw_transform__ppf(d->p, z);
    k = sw_transform__cdf(d->p, v);
    sw_value_free(v);
    return isnan(k) ? z : k;
}

void sw_space__warm_point(const sw_space *sp, const sw_sobol *warm,
                          uint64_t index, sw_rng *r, double *z)
{
    double u[SW_SOBOL_MAX_DIMS];
    size_t j;

    sw_sobol__point(warm, (uint32_t)index, u);
    for (j = 0; j < sp->n; j++)
        z[j] = sw_space__from_u(&sp->dims[j], j < warm->dims && !(index >> 32)
                                                  ? u[j]
                                                  : sw_rng_uniform(r));
}
