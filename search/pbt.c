/*
 * pbt.c - population-based training, decided a round at a time (pbt.h).
 *
 * The pbt keeps the round trained to and, for each member, whether it
 * reached that round and its value there (sign flipped for a metric to
 * maximize, so lower is better below; a non-finite one +inf). A round is
 * decided from those records alone: members ranked by value, ties by
 * place, the ended (not recorded) below all of them. Random choices are
 * drawn from streams of the seed named by (round, member), one salt for
 * the choice of a parent and one for the perturbation, so the decisions
 * do not depend on the order anything arrived in.
 */
#include "search/pbt.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "search/rng.h"
#include "search/search.h"
#include "search/transform.h"
#include "sweeps/error.h"

#define SALT_PARENT 0x70627470617265ULL    /* "pbtpare" */
#define SALT_PERTURB 0x7062747065727475ULL /* "pbtpertu" */

typedef struct {
    bool reached;
    double value; /* lower is better; +inf: not finite */
} member;

struct sw_pbt {
    const sw_pbt_spec *spec;
    double sign;
    uint64_t seed;
    size_t n, rounds, round;
    member *m;
};

int sw_pbt_new(sw_pbt **out, const sw_pbt_spec *spec, bool maximize,
               uint64_t seed)
{
    sw_pbt *p;

    if (spec->population < 2 || spec->population > SW_PBT_MAX_POPULATION ||
        spec->interval < 1 || spec->max_iter <= spec->interval ||
        !(spec->quantile > 0 && spec->quantile <= 0.5) ||
        spec->n_factors == 0 ||
        !(spec->resample_probability >= 0 && spec->resample_probability <= 1))
        return sw_error_set(SW_EINVALID,
                            "pbt wants population 2 to %d, interval >= 1, "
                            "max_iter > interval, quantile in (0, 0.5], "
                            "factors and a resample probability",
                            SW_PBT_MAX_POPULATION);
    p = sw_calloc(1, sizeof(*p));
    p->spec = spec;
    p->sign = maximize ? -1 : 1;
    p->seed = seed;
    p->n = (size_t)spec->population;
    p->rounds =
        (size_t)((spec->max_iter + spec->interval - 1) / spec->interval);
    p->round = 1;
    p->m = sw_calloc(p->n, sizeof(*p->m));
    *out = p;
    return SW_OK;
}

void sw_pbt_free(sw_pbt *p)
{
    if (!p)
        return;
    free(p->m);
    free(p);
}

size_t sw_pbt_population(const sw_pbt *p)
{
    return p->n;
}

size_t sw_pbt_rounds(const sw_pbt *p)
{
    return p->rounds;
}

int64_t sw_pbt_round_iter(const sw_pbt *p, size_t k)
{
    if (k >= p->rounds)
        return p->spec->max_iter;
    return (int64_t)k * p->spec->interval;
}

size_t sw_pbt_round(const sw_pbt *p)
{
    return p->round;
}

size_t sw_pbt_round_at(const sw_pbt *p, int64_t iter)
{
    if (iter <= 0)
        return 0;
    if (iter >= p->spec->max_iter)
        return p->rounds;
    return iter % p->spec->interval == 0 ? (size_t)(iter / p->spec->interval)
                                         : 0;
}

void sw_pbt_start_at(sw_pbt *p, size_t k)
{
    p->round = k < 1 ? 1 : k > p->rounds ? p->rounds : k;
    memset(p->m, 0, p->n * sizeof(*p->m));
}

void sw_pbt_record(sw_pbt *p, size_t i, size_t k, double value)
{
    if (k != p->round || i >= p->n || p->m[i].reached)
        return;
    p->m[i].reached = true;
    p->m[i].value = isfinite(value) ? p->sign * value : INFINITY;
}

bool sw_pbt_reached(const sw_pbt *p, size_t i, double *value)
{
    if (i >= p->n || !p->m[i].reached)
        return false;
    if (value)
        *value = isfinite(p->m[i].value) ? p->sign * p->m[i].value : NAN;
    return true;
}

size_t sw_pbt_quota(const sw_pbt *p)
{
    size_t q = (size_t)ceil((double)p->n * p->spec->quantile - 1e-9);

    if (q > p->n / 2)
        q = p->n / 2;
    return q < 1 ? 1 : q;
}

/* The members that reached the round, best first (ties by place), into
 * order[]; their number. */
static size_t ranking(const sw_pbt *p, size_t *order)
{
    size_t n = 0, i, j;

    for (i = 0; i < p->n; i++) {
        if (!p->m[i].reached)
            continue;
        for (j = n; j > 0 && p->m[order[j - 1]].value > p->m[i].value; j--)
            order[j] = order[j - 1];
        order[j] = i;
        n++;
    }
    return n;
}

size_t sw_pbt_decide(const sw_pbt *p, sw_pbt_exploit *out)
{
    size_t *order, alive, top, bottom, gone, q = sw_pbt_quota(p), n = 0, i;
    bool *loses;
    sw_rng r;

    if (p->round >= p->rounds)
        return 0;
    order = sw_calloc(p->n, sizeof(*order));
    loses = sw_calloc(p->n, sizeof(*loses));
    alive = ranking(p, order);
    gone = p->n - alive;
    top = alive < q ? alive : q;
    bottom = gone >= q ? 0 : q - gone;
    if (bottom > alive - top)
        bottom = alive - top;
    for (i = 0; i < p->n; i++)
        loses[i] = !p->m[i].reached;
    for (i = alive - bottom; i < alive; i++)
        loses[order[i]] = true;
    for (i = 0; top > 0 && i < p->n; i++) {
        if (!loses[i])
            continue;
        sw_rng_seed(&r, p->seed ^ SALT_PARENT, (uint64_t)p->round << 32 | i);
        out[n].member = i;
        out[n++].parent = order[sw_rng_below(&r, top)];
    }
    free(order);
    free(loses);
    return n;
}

void sw_pbt_advance(sw_pbt *p)
{
    sw_pbt_start_at(p, p->round + 1);
}

/* ---- explore: perturbing a member's parameters ---------------------- */

static bool quantized(sw_dist d)
{
    return d == SW_DIST_Q_UNIFORM || d == SW_DIST_Q_LOG_UNIFORM ||
           d == SW_DIST_Q_LOG_UNIFORM_VALUES || d == SW_DIST_Q_NORMAL ||
           d == SW_DIST_Q_LOG_NORMAL || d == SW_DIST_Q_BETA;
}

/* Which way `x` times `f` moves from x: +1 or -1 (for x = 0, up when f
 * grows a value). */
static int direction(double x, double f)
{
    double y = x * f;

    return y > x ? 1 : y < x ? -1 : f > 1 ? 1 : -1;
}

/* An int_uniform's x times f, rounded, moved by one at least, within
 * [imin, imax]. */
static sw_value *scale_int(const sw_param *prm, double x, double f)
{
    double k = nearbyint(x * f);

    if (k == x && f != 1)
        k = x + direction(x, f);
    if (k < (double)prm->imin)
        k = (double)prm->imin;
    if (k > (double)prm->imax)
        k = (double)prm->imax;
    return sw_value_int((int64_t)k);
}

/* A continuous x times f, as the search's values are made (rounded to
 * q, kept within the bounds); a q-distribution that rounds back to x
 * moves by q. */
static sw_value *scale_real(const sw_param *prm, double x, double f)
{
    sw_value *v = sw_transform__value(prm, x * f);
    double y;

    if (f != 1 && quantized(prm->dist) && sw_value_number(v, &y) && y == x) {
        sw_value_free(v);
        v = sw_transform__value(prm, x + direction(x, f) * prm->q);
    }
    return v;
}

/* A categorical's neighbouring value: either side at random, the one
 * there is at an end; itself when it is the only value. */
static sw_value *neighbour(const sw_param *prm, long i, sw_rng *r)
{
    long n = (long)prm->n_values, j;

    if (n == 1)
        j = 0;
    else if (i == 0)
        j = 1;
    else if (i == n - 1)
        j = n - 2;
    else
        j = sw_rng_below(r, 2) ? i + 1 : i - 1;
    return sw_value_clone(prm->values[j]);
}

/* One leaf perturbed; a value that is not one of its parameter (not a
 * number, not among the values) is drawn again from its distribution. */
static sw_value *perturb_leaf(const sw_pbt *p, const sw_param *prm,
                              const sw_value *v, sw_rng *r)
{
    const sw_pbt_spec *s = p->spec;
    double x, f;
    long i;

    if (prm->dist == SW_DIST_CONSTANT)
        return sw_value_clone(prm->value);
    if (sw_rng_uniform(r) < s->resample_probability)
        return sw_param_sample(prm, r);
    if (prm->dist == SW_DIST_CATEGORICAL) {
        i = sw_transform__index(prm, v);
        return i < 0 ? sw_param_sample(prm, r) : neighbour(prm, i, r);
    }
    f = s->factors[sw_rng_below(r, s->n_factors)];
    if (!sw_value_number(v, &x) || !isfinite(x))
        return sw_param_sample(prm, r);
    if (prm->dist == SW_DIST_INT_UNIFORM)
        return scale_int(prm, x, f);
    return scale_real(prm, x, f);
}

/* The leaf at `prm`'s path in nested params, or NULL. */
static const sw_value *leaf_of(const sw_value *params, const sw_param *prm)
{
    size_t k;

    for (k = 0; params && k < prm->depth; k++)
        params = params->type == SW_MAP ? sw_value_map_get(params, prm->path[k])
                                        : NULL;
    return params;
}

int sw_pbt_perturb(const sw_pbt *p, const sw_spec *spec, const sw_value *params,
                   size_t k, size_t i, sw_value **out)
{
    sw_value **vals = sw_calloc(spec->n_params + 1, sizeof(*vals));
    const sw_value *leaf;
    size_t j;
    sw_rng r;

    sw_rng_seed(&r, p->seed ^ SALT_PERTURB, (uint64_t)k << 32 | i);
    for (j = 0; j < spec->n_params; j++) {
        leaf = leaf_of(params, &spec->params[j]);
        if (!leaf && spec->params[j].dist != SW_DIST_CONSTANT) {
            sw_error_set(SW_EINVALID,
                         "parameter %s: missing from the parameters to "
                         "perturb",
                         spec->params[j].name);
            while (j > 0)
                sw_value_free(vals[--j]);
            free(vals);
            return SW_EINVALID;
        }
        vals[j] = perturb_leaf(p, &spec->params[j], leaf, &r);
    }
    *out = sw_spec_nest(spec, vals);
    free(vals);
    return SW_OK;
}

/* 1st, 2nd, 3rd, 4th, ... 11th, 12th, 13th, 21st. */
static const char *ordinal(size_t n)
{
    if (n % 100 >= 11 && n % 100 <= 13)
        return "th";
    return n % 10 == 1 ? "st" : n % 10 == 2 ? "nd" : n % 10 == 3 ? "rd" : "th";
}

void sw_pbt_explain(const sw_pbt *p, size_t i, sw_buf *out)
{
    size_t *order = sw_calloc(p->n, sizeof(*order)), n = ranking(p, order);
    size_t pos = 0, j;

    sw_buf_printf(out, "round %zu (iteration %lld)", p->round,
                  (long long)sw_pbt_round_iter(p, p->round));
    for (j = 0; j < n; j++)
        if (order[j] == i)
            pos = j + 1;
    if (pos == 0)
        sw_buf_puts(out, ": not reached yet");
    else
        sw_buf_printf(out, ": value %g, %zu%s of the %zu there so far",
                      isfinite(p->m[i].value) ? p->sign * p->m[i].value : NAN,
                      pos, ordinal(pos), n);
    free(order);
}
