/*
 * sample.c - one random value of a parameter, as W&B's random search
 * draws it (sweeps/params.py: HyperParameter.ppf).
 *
 * The formulas for the uniform families are W&B's, applied to one uniform
 * u in [0, 1), so a given u gives W&B's value; normal and beta are drawn
 * directly (same distributions as W&B's inverse CDFs). q-distributions
 * round with numpy's round (half to even) and give ints only when q was
 * written as an integer, as W&B's astype(int) does. Unlike W&B, every
 * value stays inside its declared range (sw_transform__value): a bound
 * that W&B's arithmetic or rounding to q would step past is kept.
 */
#include <math.h>

#include "search/strategy.h"
#include "search/transform.h"

/* numpy's astype(int) on an integral double, saturating instead of UB. */
static int64_t to_int64(double x)
{
    if (isnan(x))
        return INT64_MIN;
    if (x >= 0x1.0p63)
        return INT64_MAX;
    if (x < -0x1.0p63)
        return INT64_MIN;
    return (int64_t)x;
}

sw_value *sw_sample__quantize(const sw_param *p, double x)
{
    /* rint rounds half to even in the default rounding mode, as np.round
     * with decimals=0 does. */
    double y = rint(x / p->q) * p->q;

    if (p->q_int)
        return sw_value_int(to_int64(y));
    return sw_value_float(y);
}

/* Two's-complement reading of `x` as int64, without relying on
 * implementation-defined conversions. */
static int64_t as_int64(uint64_t x)
{
    if (x <= (uint64_t)INT64_MAX)
        return (int64_t)x;
    return -(int64_t)(~x) - 1;
}

/* Inclusive [imin, imax]; a span of 2^64 takes the raw word. */
static sw_value *int_uniform(const sw_param *p, sw_rng *r)
{
    uint64_t span = (uint64_t)p->imax - (uint64_t)p->imin + 1;
    uint64_t off = span ? sw_rng_below(r, span) : sw_rng_next(r);

    return sw_value_int(as_int64((uint64_t)p->imin + off));
}

/* W&B's categorical_w_probabilities: the first i whose cumulative
 * probability exceeds u, else index 0. */
static size_t weighted_index(const sw_param *p, double u)
{
    double cdf = 0.0;
    size_t i;

    for (i = 0; i < p->n_values; i++) {
        cdf += p->probs[i];
        if (u < cdf)
            return i;
    }
    return 0;
}

static sw_value *categorical(const sw_param *p, sw_rng *r)
{
    size_t i;

    if (p->probs)
        i = weighted_index(p, sw_rng_uniform(r));
    else
        i = (size_t)sw_rng_below(r, p->n_values);
    return sw_value_clone(p->values[i]);
}

/* A direct draw for the normal and beta families: the same distribution
 * as W&B's ppf of a uniform, without inverting a CDF. False for the
 * others, which take W&B's ppf of one uniform draw. */
static bool direct(const sw_param *p, sw_rng *r, double *x)
{
    switch (p->dist) {
    case SW_DIST_NORMAL:
    case SW_DIST_Q_NORMAL:
        *x = p->mu + p->sigma * sw_rng_normal(r);
        return true;
    case SW_DIST_LOG_NORMAL:
    case SW_DIST_Q_LOG_NORMAL:
        *x = exp(p->mu + p->sigma * sw_rng_normal(r));
        return true;
    case SW_DIST_BETA:
    case SW_DIST_Q_BETA:
        *x = sw_rng_beta(r, p->a, p->b);
        return true;
    default:
        return false;
    }
}

sw_value *sw_param_sample(const sw_param *p, sw_rng *r)
{
    double x;

    switch (p->dist) {
    case SW_DIST_CONSTANT:
        return sw_value_clone(p->value);
    case SW_DIST_CATEGORICAL:
        return categorical(p, r);
    case SW_DIST_INT_UNIFORM:
        return int_uniform(p, r);
    default:
        break;
    }
    if (!direct(p, r, &x)) /* the uniform and log-uniform families */
        return sw_transform__ppf(p, sw_rng_uniform(r));
    return sw_transform__value(p, x); /* rounded to q, kept in range */
}
