/*
 * tpe.c - method: tpe (an extension): a tree-structured Parzen estimator
 * in the manner of Optuna's TPESampler.
 *
 * The ended trials are ranked by loss (the metric, negated to maximise;
 * failed ones imputed per metric.impute, so they rank last by default);
 * the best gamma(n) = min(ceil(n / 10), 25) form "below", the rest and
 * the trials in flight (the constant liar: as bad as can be) form
 * "above". Each group becomes a Parzen estimator, a mixture with one
 * component per trial plus a prior component, weighted as Optuna weighs
 * them (older trials of a large group fade). Candidates are drawn from
 * below's mixture and the one with the highest log l(x) - log g(x) wins.
 *
 * Coordinates are the space's (space.h): reals in W&B's CDF space on
 * [0, 1] (log-uniform parameters are therefore searched in log space, as
 * Optuna's log=True does), ints as cells of [0, 1] with the mass of each
 * cell, categoricals by counts with Optuna's prior weight. Nested
 * parameters are leaves like any other, present in every trial.
 *
 * Where it differs from Optuna's defaults: the estimator is multivariate
 * (one kernel per trial over all parameters, as Optuna's
 * multivariate=True), but with each parameter's bandwidths from Optuna's
 * univariate neighbour rule and magic clip rather than Scott's rule; the
 * first N_STARTUP trials are a scrambled Sobol design instead of random
 * draws; 64 candidates are scored instead of 24; trials in flight count
 * (Optuna's constant_liar=True). Each choice was measured on
 * tests/bench/bench_search. A suggestion costs O(candidates x trials x
 * parameters).
 *
 * Multi-fidelity (a sweep with rungs): the estimators are built from the
 * values runs had at the highest rung where max(N_STARTUP, parameters +
 * 1) of them have one, BOHB's densities per budget, the runs below that
 * rung estimated there (fidelity.c); a tenth of those suggestions are
 * start-up points (BOHB's random_fraction).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "search/sobol.h"
#include "search/space.h"
#include "search/strategy.h"
#include "search/transform.h"

#define N_STARTUP 10
#define N_CANDIDATES 64
#define PRIOR_WEIGHT 1.0
#define WARM_STREAM UINT64_C(0x7be5a1e5)

typedef struct {
    const sw_spec *spec;
    uint64_t seed;
    sw_space space;
    sw_history hist;
    sw_sobol warm;
    bool mf;         /* multi-fidelity: fitted on rung values */
    sw_fidelity fid; /* what the rungs showed */
    int64_t fitted;  /* the level of the last suggestion; 0: none */
} tpe_state;

/* A Parzen estimator: k components (the last is the prior) over n dims.
 * Continuous dims have mu and sigma per component; categorical dims have
 * a probability per component and level. */
typedef struct {
    const sw_space *sp;
    size_t k;
    double *w;     /* log weights, k */
    double *mu;    /* k x n */
    double *sigma; /* k x n */
    double *lmass; /* k x n: log mass of the component inside [0, 1] */
    double **cat;  /* per dim: k x levels log probabilities, or NULL */
} parzen;

static double log_ndtr(double x)
{
    if (x > -20.0)
        return log(0.5 * erfc(-x / sqrt(2.0)));
    return -0.5 * x * x - log(-x) - 0.5 * log(2.0 * M_PI) +
           log1p(-1.0 / (x * x) + 3.0 / (x * x * x * x));
}

/* log(Phi(b) - Phi(a)) for a < b, without cancellation. */
static double log_mass(double a, double b)
{
    double t;

    if (a >= 0.0) {
        t = a;
        a = -b;
        b = -t;
    }
    if (b <= 0.0)
        return log_ndtr(b) + log1p(-exp(log_ndtr(a) - log_ndtr(b)));
    return log1p(-(0.5 * erfc(-a / sqrt(2.0)) + 0.5 * erfc(b / sqrt(2.0))));
}

/* Optuna's default_weights: flat up to 25 trials, then the oldest ramp
 * linearly from 1/n up to 1; w[i] for the i-th oldest of n. */
static double default_weight(size_t i, size_t n)
{
    size_t ramp = n < 25 ? 0 : n - 25;

    if (i >= ramp)
        return 1.0;
    if (ramp == 1)
        return 1.0 / (double)n;
    return 1.0 / (double)n +
           (double)i * (1.0 - 1.0 / (double)n) / (double)(ramp - 1);
}

/* Pairs (value, component) by value, then component: deterministic. */
static int by_value(const void *a, const void *b)
{
    const double *x = a, *y = b;

    if (x[0] != y[0])
        return x[0] < y[0] ? -1 : 1;
    return x[1] < y[1] ? -1 : x[1] > y[1];
}

/* Optuna's univariate bandwidths for one dim: the larger gap to a sorted
 * neighbour (the bounds 0 and 1 count as neighbours, except for the
 * outermost components), the prior's mean included. */
static void neighbour_sigmas(const double *mu, size_t k, size_t n, size_t j,
                             double *sigma)
{
    double *s = sw_malloc((k + 2) * 2 * sizeof(*s));
    size_t c, at;

    for (c = 0; c < k; c++) {
        s[2 * c] = mu[c * n + j];
        s[2 * c + 1] = (double)c;
    }
    qsort(s, k, 2 * sizeof(*s), by_value);
    for (at = 0; at < k; at++) {
        double left = s[2 * at] - (at ? s[2 * (at - 1)] : 0.0);
        double right = (at + 1 < k ? s[2 * (at + 1)] : 1.0) - s[2 * at];

        if (k >= 2 && at == 0)
            left = right;
        if (k >= 2 && at == k - 1)
            right = left;
        sigma[(size_t)s[2 * at + 1] * n + j] = left > right ? left : right;
    }
    free(s);
}

/* Optuna's categorical kernels: each trial's level gets 1 on top of
 * prior_weight / (n + 1) spread over every level; the prior component is
 * the parameter's own distribution (uniform, or its probabilities). */
static double *cat_kernels(const sw_dim *d, const double *mu, size_t k,
                           size_t n, size_t j)
{
    size_t L = d->levels, c, v;
    double *lp = sw_malloc((k * L + 1) * sizeof(*lp));
    double base = PRIOR_WEIGHT / (double)k;

    for (c = 0; c + 1 < k; c++) {
        double total = base * (double)L + 1.0;

        for (v = 0; v < L; v++)
            lp[c * L + v] = log(base / total);
        lp[c * L + (size_t)mu[c * n + j]] = log((base + 1.0) / total);
    }
    for (v = 0; v < L; v++)
        lp[c * L + v] = d->p->probs ? log(d->p->probs[v]) : -log((double)L);
    return lp;
}

/* The estimator of the trials `rows` (record numbers of `h`, in index
 * order). */
static void parzen_build(parzen *pz, const tpe_state *st, const sw_history *h,
                         const size_t *rows, size_t m)
{
    const sw_space *sp = &st->space;
    size_t n = sp->n, k = m + 1, c, j;
    double total = PRIOR_WEIGHT, lo;

    pz->sp = sp;
    pz->k = k;
    pz->w = sw_malloc((k + 1) * sizeof(double));
    pz->mu = sw_malloc((k * n + 1) * sizeof(double));
    pz->sigma = sw_malloc((k * n + 1) * sizeof(double));
    pz->lmass = sw_malloc((k * n + 1) * sizeof(double));
    pz->cat = sw_calloc(n + 1, sizeof(double *));
    for (c = 0; c < m; c++) {
        pz->w[c] = default_weight(c, m);
        total += pz->w[c];
        memcpy(&pz->mu[c * n], sw_history__z(h, rows[c]), n * sizeof(double));
    }
    pz->w[m] = PRIOR_WEIGHT;
    for (c = 0; c < k; c++)
        pz->w[c] = log(pz->w[c] / total);
    lo = 1.0 / fmin(100.0, 1.0 + (double)k);
    for (j = 0; j < n; j++) {
        pz->mu[m * n + j] = 0.5;
        if (sp->dims[j].kind == SW_DIM_CAT) {
            pz->cat[j] = cat_kernels(&sp->dims[j], pz->mu, k, n, j);
            continue;
        }
        neighbour_sigmas(pz->mu, k, n, j, pz->sigma);
        for (c = 0; c < k; c++) {
            double *s = &pz->sigma[c * n + j], mu = pz->mu[c * n + j];

            *s = c == m ? 1.0 : *s < lo ? lo : *s > 1.0 ? 1.0 : *s;
            pz->lmass[c * n + j] = log_mass(-mu / *s, (1.0 - mu) / *s);
        }
    }
}

static void parzen_free(parzen *pz)
{
    size_t j;

    for (j = 0; j < pz->sp->n; j++)
        free(pz->cat[j]);
    free(pz->cat);
    free(pz->w);
    free(pz->mu);
    free(pz->sigma);
    free(pz->lmass);
}

/* log density of component c in dim j at coordinate x. */
static double kernel_log(const parzen *pz, size_t c, size_t j, double x)
{
    const sw_dim *d = &pz->sp->dims[j];
    size_t n = pz->sp->n;
    double mu = pz->mu[c * n + j], s = pz->sigma[c * n + j], h, t;

    if (d->kind == SW_DIM_CAT)
        return pz->cat[j][c * d->levels + (size_t)x];
    if (d->kind == SW_DIM_INT) {
        h = 0.5 / (double)d->levels;
        return log_mass((x - h - mu) / s, (x + h - mu) / s) -
               pz->lmass[c * n + j];
    }
    t = (x - mu) / s;
    return -0.5 * t * t - log(s) - 0.5 * log(2.0 * M_PI) - pz->lmass[c * n + j];
}

/* One coordinate of component c in dim j, drawn from r. */
static double kernel_draw(const parzen *pz, size_t c, size_t j, sw_rng *r)
{
    const sw_dim *d = &pz->sp->dims[j];
    size_t n = pz->sp->n, v;
    double mu = pz->mu[c * n + j], s = pz->sigma[c * n + j];
    double u = sw_rng_uniform(r), pa, pb, x;

    if (d->kind == SW_DIM_CAT) {
        double cum = 0.0;

        for (v = 0; v + 1 < d->levels; v++) {
            cum += exp(pz->cat[j][c * d->levels + v]);
            if (u < cum)
                break;
        }
        return (double)v;
    }
    pa = sw_transform__norm_cdf(-mu / s);
    pb = sw_transform__norm_cdf((1.0 - mu) / s);
    x = mu + s * sw_transform__norm_ppf(pa + u * (pb - pa));
    return sw_space__snap(d, isfinite(x) ? x : mu);
}

/* A component drawn by weight. */
static size_t pick(const parzen *pz, sw_rng *r)
{
    double u = sw_rng_uniform(r), cum = 0.0;
    size_t c;

    for (c = 0; c + 1 < pz->k; c++) {
        cum += exp(pz->w[c]);
        if (u < cum)
            break;
    }
    return c;
}

/* log of the mixture's density at x. */
static double mixture_log(const parzen *pz, const double *x)
{
    double top = -INFINITY, sum = 0.0, *t;
    size_t c, j;

    t = sw_malloc((pz->k + 1) * sizeof(*t));
    for (c = 0; c < pz->k; c++) {
        t[c] = pz->w[c];
        for (j = 0; j < pz->sp->n; j++)
            t[c] += kernel_log(pz, c, j, x[j]);
        top = t[c] > top ? t[c] : top;
    }
    for (c = 0; c < pz->k && isfinite(top); c++)
        sum += exp(t[c] - top);
    free(t);
    return isfinite(top) ? top + log(sum) : top;
}

/* The best of N_CANDIDATES draws from `l` by log l(x) - log g(x): each
 * draw picks a component, then every coordinate from it. */
static void choose(const parzen *l, const parzen *g, sw_rng *r, double *z)
{
    size_t n = l->sp->n, i, j;
    double *x = sw_malloc((n + 1) * sizeof(*x)), top = -INFINITY;

    for (i = 0; i < N_CANDIDATES; i++) {
        size_t c = pick(l, r);
        double s;

        for (j = 0; j < n; j++)
            x[j] = kernel_draw(l, c, j, r);
        s = mixture_log(l, x) - mixture_log(g, x);
        if (s > top || i == 0) {
            top = s;
            memcpy(z, x, n * sizeof(*z));
        }
    }
    free(x);
}

typedef struct {
    double loss;
    size_t i;
} ranked;

static int by_loss(const void *a, const void *b)
{
    const ranked *x = a, *y = b;

    if (x->loss != y->loss)
        return x->loss < y->loss ? -1 : 1;
    return x->i < y->i ? -1 : x->i > y->i;
}

static int by_record(const void *a, const void *b)
{
    const size_t *x = a, *y = b;

    return *x < *y ? -1 : *x > *y;
}

/* Splits the records: the best gamma(n) ended ones into below[0..*nb),
 * the others and those in flight into above[0..*na), in index order. */
static void split(const sw_history *h, const double *loss, size_t *below,
                  size_t *nb, size_t *above, size_t *na)
{
    ranked *rk = sw_malloc((h->len + 1) * sizeof(*rk));
    size_t i, n = 0, gamma;

    *na = 0;
    for (i = 0; i < h->len; i++) {
        if (h->obs[i].pending)
            above[(*na)++] = i;
        else
            rk[n++] = (ranked){loss[i], i};
    }
    qsort(rk, n, sizeof(*rk), by_loss);
    gamma = (n + 9) / 10;
    gamma = gamma < 25 ? gamma : 25;
    for (i = 0; i < n; i++) {
        if (i < gamma)
            below[i] = rk[i].i;
        else
            above[(*na)++] = rk[i].i;
    }
    *nb = gamma;
    qsort(below, *nb, sizeof(*below), by_record);
    qsort(above, *na, sizeof(*above), by_record);
    free(rk);
}

static void suggest(const tpe_state *st, const sw_history *h,
                    const double *loss, sw_rng *r, double *z)
{
    size_t n = h->len, nb, na;
    size_t *below = sw_malloc((2 * n + 1) * sizeof(*below));
    size_t *above = below + n;
    parzen l, g;

    split(h, loss, below, &nb, above, &na);
    parzen_build(&l, st, h, below, nb);
    parzen_build(&g, st, h, above, na);
    choose(&l, &g, r, z);
    parzen_free(&l);
    parzen_free(&g);
    free(below);
}

static int tpe_open(void **state, const sw_spec *spec, uint64_t seed)
{
    tpe_state *st = sw_calloc(1, sizeof(*st));
    sw_rng r;

    st->spec = spec;
    st->seed = seed;
    sw_space__init(&st->space, spec);
    sw_history__init(&st->hist, st->space.n);
    sw_rng_seed(&r, seed, WARM_STREAM);
    sw_sobol__init(&st->warm, st->space.n, &r);
    st->mf = sw_search_multi_fidelity(spec);
    sw_fidelity__init(&st->fid);
    *state = st;
    return SW_OK;
}

static void tpe_close(void *state)
{
    tpe_state *st = state;

    if (!st)
        return;
    sw_history__dispose(&st->hist);
    sw_fidelity__dispose(&st->fid);
    sw_space__dispose(&st->space);
    free(st);
}

/* What the model of a suggestion is fitted on: with multi-fidelity, the
 * highest rung where as many runs have a value as the plain method
 * waits for (N_STARTUP, and BOHB's parameters + 1), else the ended
 * runs. `view` is initialised; the caller disposes it. */
static const sw_history *model_history(tpe_state *st, sw_history *view)
{
    size_t n_min = st->space.n + 1 > N_STARTUP ? st->space.n + 1 : N_STARTUP;

    if (!st->mf) {
        sw_history__init(view, st->space.n);
        st->fitted = 0;
        return &st->hist;
    }
    return sw_fidelity__history(&st->fid, &st->hist, n_min, view, &st->fitted);
}

static int tpe_next(void *state, uint64_t index, sw_value **vals)
{
    tpe_state *st = state;
    sw_history view;
    const sw_history *h = model_history(st, &view);
    double *loss = sw_malloc((h->len + 1) * sizeof(*loss));
    double *z = sw_malloc((st->space.n + 1) * sizeof(*z));
    size_t i, ended = 0;
    sw_rng r;

    sw_history__losses(h, &st->spec->metric, loss);
    for (i = 0; i < h->len; i++)
        ended += !h->obs[i].pending;
    sw_rng_seed(&r, st->seed, index);
    if (ended < N_STARTUP || st->space.n == 0 ||
        (st->fitted > 0 &&
         sw_fidelity__coin(st->seed, index, SW_FIDELITY_RANDOM)))
        sw_space__warm_point(&st->space, &st->warm, index, &r, z);
    else
        suggest(st, h, loss, &r, z);
    sw_history__suggested(&st->hist, &st->space, index, z, vals);
    sw_history__dispose(&view);
    free(loss);
    free(z);
    return SW_OK;
}

static int tpe_observe(void *state, const sw_trial *t, double value)
{
    tpe_state *st = state;

    return sw_history__record(&st->hist, &st->space, t, value, false);
}

static int tpe_pending(void *state, const sw_trial *t)
{
    tpe_state *st = state;

    return sw_history__record(&st->hist, &st->space, t, NAN, true);
}

static int tpe_observe_rung(void *state, const sw_trial *t, int64_t iter,
                            double value)
{
    tpe_state *st = state;

    return sw_fidelity__record_trial(&st->fid, &st->hist, &st->space, t, iter,
                                     value);
}

static int64_t tpe_fitted(const void *state)
{
    return ((const tpe_state *)state)->fitted;
}

const sw_strategy sw_tpe__strategy = {
    .version = SW_STRATEGY_VERSION,
    .name = "tpe",
    .open = tpe_open,
    .close = tpe_close,
    .next = tpe_next,
    .size = sw_search__unbounded,
    .observe = tpe_observe,
    .pending = tpe_pending,
    .observe_rung = tpe_observe_rung,
    .fitted = tpe_fitted,
};
