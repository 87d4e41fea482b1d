/*
 * bayes.c - method: bayes, with W&B's meaning and a stronger engine.
 *
 * As W&B's bayes_search: each parameter is mapped to [0, 1] through its
 * CDF, a Gaussian process is fitted to the losses of the ended runs
 * (the metric, negated to maximise), failed runs and runs without a value
 * are imputed per metric.impute, runs in flight are imputed with the GP's
 * own prediction (the "kriging believer", W&B's fantasy), and the next
 * point maximises expected improvement over the best loss; until 2 runs
 * have a finite result the points are a warm-up design.
 *
 * Where it differs: a Matern 5/2 kernel with one lengthscale per
 * parameter whose hyperparameters maximise the marginal likelihood (W&B:
 * sklearn's Matern 3/2 with one lengthscale); categoricals one-hot with
 * a shared lengthscale (W&B: their cdf index on one axis); EI maximised
 * over Sobol and local candidates with L-BFGS and discrete moves (W&B: the
 * best of 1,000 random points); a scrambled Sobol warm-up (W&B: random
 * points). Past GP_CAP ended runs the GP keeps the best half and a random
 * half of the rest, and the hyperparameters are fitted on FIT_CAP of
 * those (W&B: 100 random runs), from the prior's centre alone, and EI is
 * maximised over half the candidates, so a suggestion stays fast at any
 * size (under 10 ms at 2,000 runs: bench_search). The work space a
 * suggestion needs is kept in the state, not freed to the kernel.
 *
 * Multi-fidelity (a sweep with rungs, sw_search_multi_fidelity): the GP
 * is fitted on the values runs had at the highest rung where n_init of
 * them have one, as BOHB fits its model at the highest budget with
 * enough points, the runs below that rung estimated there (fidelity.c);
 * a tenth of those suggestions are points of
 * the initial design instead (BOHB's random_fraction). Until a rung has
 * enough, it is fitted on the ended runs, as without.
 *
 * Each suggestion is a function of the seed, its index and the history
 * (a set keyed by trial index): its random stream is (seed, index).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "search/acq.h"
#include "search/sobol.h"
#include "search/strategy.h"

#define N_INIT 2           /* W&B: a GP needs two finite results */
#define INIT_MAX 64        /* the most points the initial design has */
#define ENUM_MAX 4096      /* discrete spaces this small are scored whole */
#define DRAWS 1024         /* random draws for an untried configuration */
#define FIT_CAP 64         /* runs the hyperparameters are fitted on */
#define GP_CAP 256         /* runs the GP is conditioned on */
#define FIT_RESTARTS 3     /* random starts of a fit, beside the prior's */
#define FIT_RESTARTS_BIG 0 /* the same past GP_CAP ended runs */
#define CANDIDATES_BIG 256 /* EI's candidates of each kind, past GP_CAP */
#define N_NEAR 5           /* best runs the local candidates start from */
#define WARP_SKEW 0.5      /* losses more skewed than this are log-warped */
#define WARM_STREAM UINT64_C(0xba7e5ba7e5)
#define LEVEL_STREAM UINT64_C(0x1e7e15ba7e5)

typedef struct {
    const sw_spec *spec;
    uint64_t seed;
    sw_space space;
    sw_features feat;
    sw_history hist;
    sw_sobol warm;
    size_t n_init;    /* the initial design's points */
    uint64_t configs; /* a finite discrete space: its size; else 0 */
    bool mf;          /* multi-fidelity: fitted on rung values */
    sw_fidelity fid;  /* what the rungs showed */
    int64_t fitted;   /* the level of the last suggestion; 0: none */
    /* Work space kept from one suggestion to the next (a suggestion is a
     * function of its inputs alone: nothing of one is read by the next):
     * the GP's blocks are past malloc's mmap threshold, and freed and
     * taken again they cost a page fault per page each suggestion. */
    sw_gp gp;
    double *X, *y; /* (GP_CAP * 2 + 1) rows of training data */
} bayes_state;

/* The size of a space whose every dimension is an int or a categorical,
 * or 0 when one is continuous or the product passes UINT64_MAX. */
static uint64_t count_configs(const sw_space *sp)
{
    uint64_t c = 1;
    size_t j;

    for (j = 0; j < sp->n; j++) {
        uint64_t k = sp->dims[j].levels;

        if (sp->dims[j].kind == SW_DIM_REAL || k == 0 || c > UINT64_MAX / k)
            return 0;
        c *= k;
    }
    return c;
}

/* max(dims + 1, levels of the largest categorical), at most INIT_MAX:
 * enough for the GP to see every direction and every category once. */
static size_t initial_points(const sw_space *sp)
{
    size_t j, n = sp->n + 1;

    for (j = 0; j < sp->n; j++)
        if (sp->dims[j].kind == SW_DIM_CAT && sp->dims[j].levels > n)
            n = sp->dims[j].levels;
    return n < INIT_MAX ? n : INIT_MAX;
}

static int bayes_open(void **state, const sw_spec *spec, uint64_t seed)
{
    bayes_state *st = sw_calloc(1, sizeof(*st));
    sw_rng r;

    st->spec = spec;
    st->seed = seed;
    sw_space__init(&st->space, spec);
    if (st->space.n == 0) {
        sw_space__dispose(&st->space);
        free(st);
        return sw_error_set(SW_EINVALID, "bayes needs at least one "
                                         "parameter that is not a constant");
    }
    sw_features__init(&st->feat, &st->space);
    sw_history__init(&st->hist, st->space.n);
    sw_rng_seed(&r, seed, WARM_STREAM);
    sw_sobol__init(&st->warm, st->space.n, &r);
    st->n_init = initial_points(&st->space);
    st->configs = count_configs(&st->space);
    st->mf = sw_search_multi_fidelity(spec);
    sw_fidelity__init(&st->fid);
    sw_gp__init(&st->gp, st->feat.n, st->feat.group, st->space.n);
    st->X = sw_malloc(((GP_CAP * 2 + 1) * st->feat.n + 1) * sizeof(*st->X));
    st->y = sw_malloc((GP_CAP * 2 + 2) * sizeof(*st->y));
    *state = st;
    return SW_OK;
}

static void bayes_close(void *state)
{
    bayes_state *st = state;

    if (!st)
        return;
    sw_history__dispose(&st->hist);
    sw_fidelity__dispose(&st->fid);
    sw_gp__dispose(&st->gp);
    free(st->X);
    free(st->y);
    sw_features__dispose(&st->feat);
    sw_space__dispose(&st->space);
    free(st);
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

static int by_index(const void *a, const void *b)
{
    const size_t *x = a, *y = b;

    return *x < *y ? -1 : *x > *y;
}

/* Picks at most `cap` of the m records in rows (record numbers, sorted):
 * the best cap / 2 and a random draw from the others, in record order.
 * Returns how many are kept at the front of rows. */
static size_t subset(size_t *rows, size_t m, const double *loss, size_t cap,
                     sw_rng *r)
{
    ranked *rk;
    size_t i, keep = cap / 2;

    if (m <= cap)
        return m;
    rk = sw_malloc(m * sizeof(*rk));
    for (i = 0; i < m; i++)
        rk[i] = (ranked){loss[rows[i]], rows[i]};
    qsort(rk, m, sizeof(*rk), by_loss);
    for (i = keep; i < cap; i++) { /* partial Fisher-Yates on the rest */
        size_t j = i + (size_t)sw_rng_below(r, m - i);
        ranked t = rk[i];

        rk[i] = rk[j];
        rk[j] = t;
    }
    for (i = 0; i < cap; i++)
        rows[i] = rk[i].i;
    free(rk);
    qsort(rows, cap, sizeof(*rows), by_index);
    return cap;
}

static int by_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

/* The sample skewness of m values. */
static double skewness(const double *y, size_t m)
{
    double mean = 0.0, m2 = 0.0, m3 = 0.0;
    size_t i;

    for (i = 0; i < m; i++)
        mean += y[i];
    mean /= (double)m;
    for (i = 0; i < m; i++) {
        double t = y[i] - mean;

        m2 += t * t;
        m3 += t * t * t;
    }
    m2 /= (double)m;
    return m2 > 0.0 ? m3 / (double)m / (m2 * sqrt(m2)) : 0.0;
}

/* How the losses are put to the GP: warped, then standardised. */
typedef struct {
    bool log;        /* log-warped: y - lo + d */
    double lo, d;    /* the warp's shift */
    double mean, sd; /* of the warped values */
} scale;

/* Losses with a long tail of bad values (skewness above WARP_SKEW: a
 * Rosenbrock, a loss that diverges) are warped by log(y - min + d), d
 * the median's distance to the min, so the GP models the region of good
 * values rather than the size of the bad ones. Monotone: the best stays
 * the best.
 *
 * The warp and standardisation of the m losses of `rows`, all the ended
 * ones: a GP conditioned on a subset of them (the best half and a random
 * half) still scales them as the whole history does, so that where it
 * has no point its mean reverts to the average of all results, not to
 * the subset's, which the best half pulls down; with the subset's, the
 * places the draw left out look promising and the search goes back to
 * poor regions once a sweep has more results than GP_CAP. */
static void scale_of(const double *loss, const size_t *rows, size_t m,
                     scale *sc)
{
    double *y = sw_malloc((m + 1) * sizeof(*y)), var = 0.0;
    size_t i;

    for (i = 0; i < m; i++)
        y[i] = loss[rows[i]];
    sc->log = m >= 3 && skewness(y, m) > WARP_SKEW;
    sc->mean = 0.0;
    if (sc->log) {
        double *s = sw_malloc(m * sizeof(*s));

        memcpy(s, y, m * sizeof(*s));
        qsort(s, m, sizeof(*s), by_double);
        sc->lo = s[0];
        sc->d = s[m / 2] - s[0] + 1e-12 * (1.0 + fabs(s[0]));
        free(s);
        for (i = 0; i < m; i++)
            y[i] = log(y[i] - sc->lo + sc->d);
    }
    for (i = 0; i < m; i++)
        sc->mean += y[i];
    sc->mean /= m ? (double)m : 1.0;
    for (i = 0; i < m; i++)
        var += (y[i] - sc->mean) * (y[i] - sc->mean);
    sc->sd = m > 1 ? sqrt(var / (double)m) + 1e-6 : 1.0;
    free(y);
}

/* The training data: features and standardised losses of `rows` of
 * `h`, scaled by sc. */
static void training(const bayes_state *st, const sw_history *h,
                     const size_t *rows, size_t m, const double *loss,
                     const scale *sc, double *X, double *y)
{
    size_t i;

    for (i = 0; i < m; i++) {
        double v = loss[rows[i]];

        if (sc->log) /* lo is the least of all, so of these too */
            v = log(v - sc->lo + sc->d);
        sw_features__of(&st->feat, sw_history__z(h, rows[i]),
                        &X[i * st->feat.n]);
        y[i] = (v - sc->mean) / sc->sd;
    }
}

/* Record numbers of the trials ended (or in flight, when `pending`). */
static size_t records(const sw_history *h, bool pending, size_t *rows)
{
    size_t i, m = 0;

    for (i = 0; i < h->len; i++)
        if (h->obs[i].pending == pending)
            rows[m++] = i;
    return m;
}

/* Fits the hyperparameters on at most FIT_CAP of the m training points
 * (the best half and a random half), then conditions on all m. */
static int fit(const bayes_state *st, sw_gp *gp, const double *X,
               const double *y, size_t m, int restarts, sw_rng *r)
{
    size_t nf = st->feat.n, i, k;
    size_t *pos = sw_malloc((m + 1) * sizeof(*pos));
    double *Xf = sw_malloc((m * nf + 1) * sizeof(*Xf));
    double *yf = sw_malloc((m + 1) * sizeof(*yf));
    int err;

    for (i = 0; i < m; i++)
        pos[i] = i;
    k = subset(pos, m, y, FIT_CAP, r);
    for (i = 0; i < k; i++) {
        memcpy(&Xf[i * nf], &X[pos[i] * nf], nf * sizeof(*Xf));
        yf[i] = y[pos[i]];
    }
    err = sw_gp__fit(gp, Xf, yf, k, restarts, r);
    if (err == SW_OK && k < m)
        err = sw_gp__condition(gp, X, y, m);
    free(pos);
    free(Xf);
    free(yf);
    return err;
}

/* The kriging believer: the trials in flight join the data with the
 * GP's mean as their result, so EI is low around them. X and y have room
 * for m + np rows. Keeps the plain posterior when that fails. */
static void believe(const bayes_state *st, const sw_history *h, sw_gp *gp,
                    double *X, double *y, size_t m, const size_t *pend,
                    size_t np)
{
    size_t nf = st->feat.n, k;
    double *work = sw_malloc((2 * m + 1) * sizeof(*work)), var;

    for (k = 0; k < np; k++) {
        double *x = &X[(m + k) * nf];

        sw_features__of(&st->feat, sw_history__z(h, pend[k]), x);
        sw_gp__predict(gp, x, &y[m + k], &var, NULL, NULL, work);
    }
    free(work);
    if (np && sw_gp__condition(gp, X, y, m + np) != SW_OK)
        sw_gp__condition(gp, X, y, m);
}

/* The best n of the m training rows of `h`, as points, into near. */
static size_t best_points(const bayes_state *st, const sw_history *h,
                          const size_t *rows, size_t m, const double *y,
                          double *near)
{
    ranked *rk = sw_malloc((m + 1) * sizeof(*rk));
    size_t i, n = m < N_NEAR ? m : N_NEAR, d = st->space.n;

    for (i = 0; i < m; i++)
        rk[i] = (ranked){y[i], i};
    qsort(rk, m, sizeof(*rk), by_loss);
    for (i = 0; i < n; i++)
        memcpy(&near[i * d], sw_history__z(h, rows[rk[i].i]),
               d * sizeof(*near));
    free(rk);
    return n;
}

/* The configurations tried (ended or in flight) of a discrete space,
 * distinct and sorted, so a suggestion can avoid them. */
typedef struct {
    const double *z;
    size_t d;
} row;

typedef struct {
    row *rows;
    size_t n, d;
} seen_set;

static int by_row(const void *a, const void *b)
{
    const row *x = a, *y = b;
    size_t j;

    for (j = 0; j < x->d; j++)
        if (x->z[j] != y->z[j])
            return x->z[j] < y->z[j] ? -1 : 1;
    return 0;
}

static void seen_init(seen_set *s, const sw_history *h)
{
    size_t i, k = 0;

    s->d = h->n_dims;
    s->rows = sw_malloc((h->len + 1) * sizeof(*s->rows));
    for (i = 0; i < h->len; i++)
        s->rows[i] = (row){sw_history__z(h, i), h->n_dims};
    qsort(s->rows, h->len, sizeof(*s->rows), by_row);
    for (i = 0; i < h->len; i++)
        if (k == 0 || by_row(&s->rows[k - 1], &s->rows[i]) != 0)
            s->rows[k++] = s->rows[i];
    s->n = k;
}

static bool seen_has(const void *ctx, const double *z)
{
    const seen_set *s = ctx;
    row key = {z, s->d};

    return s->n && bsearch(&key, s->rows, s->n, sizeof(*s->rows), by_row);
}

/* Configuration c of a finite discrete space (mixed radix, the last
 * dimension fastest) as a point. */
static void config_point(const sw_space *sp, uint64_t c, double *z)
{
    size_t j;

    for (j = sp->n; j-- > 0;) {
        const sw_dim *d = &sp->dims[j];
        uint64_t k = c % d->levels;

        c /= d->levels;
        z[j] = d->kind == SW_DIM_CAT ? (double)k
                                     : ((double)k + 0.5) / (double)d->levels;
    }
}

/* The untried configurations of a small discrete space into z; their
 * number. */
static size_t untried_all(const bayes_state *st, const seen_set *seen,
                          double *z)
{
    size_t n = st->space.n, m = 0;
    uint64_t c;

    for (c = 0; c < st->configs; c++) {
        config_point(&st->space, c, &z[m * n]);
        m += !seen_has(seen, &z[m * n]);
    }
    return m;
}

/* An untried configuration into z: a random draw, or past DRAWS of them
 * the first untried one from a random configuration on. The space has
 * one (seen->n < st->configs). */
static void untried(const bayes_state *st, const seen_set *seen, sw_rng *r,
                    double *z)
{
    uint64_t c, k;
    size_t i;

    for (i = 0; i < DRAWS; i++) {
        config_point(&st->space, sw_rng_below(r, st->configs), z);
        if (!seen_has(seen, z))
            return;
    }
    c = sw_rng_below(r, st->configs);
    for (k = 0; k < st->configs; k++) {
        config_point(&st->space, (c + k) % st->configs, z);
        if (!seen_has(seen, z))
            return;
    }
}

/* Where EI is highest: over every untried configuration of a small
 * discrete space, else over candidates (avoiding those tried). */
static void pick(const bayes_state *st, const sw_acq *a, const double *near,
                 size_t n_near, sw_rng *r, double *z)
{
    const seen_set *seen = a->taken_ctx;
    double *all;
    size_t m;

    if (!seen || st->configs > ENUM_MAX) {
        sw_acq__maximize(a, near, n_near, r, z);
        return;
    }
    all = sw_malloc((st->configs * st->space.n + 1) * sizeof(*all));
    m = untried_all(st, seen, all);
    if (sw_acq__best_of(a, all, m, z) == -INFINITY)
        sw_acq__maximize(a, near, n_near, r, z);
    free(all);
}

/* The point maximising EI, given the losses of the records of `h`; in a
 * discrete space (`seen` not NULL) among the configurations not yet
 * tried. */
static int suggest(bayes_state *st, const sw_history *h, const double *loss,
                   const seen_set *seen, sw_rng *r, double *z)
{
    size_t n = h->len, m, np, i;
    size_t *rows = sw_malloc((2 * n + 1) * sizeof(*rows)), *pend = rows + n;
    double *X = st->X, *y = st->y, best = INFINITY;
    double *near = sw_malloc((N_NEAR * st->space.n + 1) * sizeof(*near));
    sw_acq a = {&st->feat, NULL, 0.0, seen ? seen_has : NULL, seen, 0};
    sw_gp *gp = &st->gp;
    scale sc;
    int err, restarts;

    m = records(h, false, rows);
    scale_of(loss, rows, m, &sc);
    restarts = m > GP_CAP ? FIT_RESTARTS_BIG : FIT_RESTARTS;
    a.candidates = m > GP_CAP ? CANDIDATES_BIG : 0;
    m = subset(rows, m, loss, GP_CAP, r);
    np = records(h, true, pend);
    np = np < GP_CAP ? np : GP_CAP;
    training(st, h, rows, m, loss, &sc, X, y);
    for (i = 0; i < m; i++)
        best = y[i] < best ? y[i] : best;
    sw_gp__reset(gp);
    if ((err = fit(st, gp, X, y, m, restarts, r)) == SW_OK) {
        believe(st, h, gp, X, y, m, pend, np);
        a.gp = gp;
        a.best = best;
        pick(st, &a, near, best_points(st, h, rows, m, y, near), r, z);
    }
    free(rows);
    free(near);
    return err;
}

/* Level of categorical dimension j at initial point `index`: each block
 * of `levels` points takes every level once, in an order drawn from the
 * seed, so a short design sees every category. */
static double level_of(const bayes_state *st, size_t j, uint64_t index)
{
    size_t levels = st->space.dims[j].levels, i, at = index % levels;
    size_t *perm = sw_malloc(levels * sizeof(*perm)), k;
    sw_rng r;

    sw_rng_seed(&r, st->seed,
                LEVEL_STREAM ^ ((uint64_t)j << 40) ^ (index / levels));
    for (i = 0; i < levels; i++)
        perm[i] = i;
    for (i = 0; i <= at; i++) { /* partial Fisher-Yates */
        size_t t = i + (size_t)sw_rng_below(&r, levels - i);

        k = perm[i];
        perm[i] = perm[t];
        perm[t] = k;
    }
    k = perm[at];
    free(perm);
    return (double)k;
}

/* The initial design's point `index`: the scrambled Sobol point, with
 * categoricals (those without probabilities, which the draw follows)
 * taking their levels in turn. */
static void warm_point(const bayes_state *st, uint64_t index, sw_rng *r,
                       double *z)
{
    size_t j;

    sw_space__warm_point(&st->space, &st->warm, index, r, z);
    for (j = 0; j < st->space.n; j++)
        if (st->space.dims[j].kind == SW_DIM_CAT && !st->space.dims[j].p->probs)
            z[j] = level_of(st, j, index);
}

/* What the model of a suggestion is fitted on: with multi-fidelity, the
 * highest rung where n_init runs have a value (the initial design's
 * size: every direction, every category seen once), else the ended
 * runs. `view` is initialised; the caller disposes it. */
static const sw_history *model_history(bayes_state *st, sw_history *view)
{
    if (!st->mf) {
        sw_history__init(view, st->space.n);
        st->fitted = 0;
        return &st->hist;
    }
    return sw_fidelity__history(&st->fid, &st->hist, st->n_init, view,
                                &st->fitted);
}

/* A multi-fidelity suggestion that is one of the random share. */
static bool random_share(const bayes_state *st, uint64_t index)
{
    return st->fitted > 0 &&
           sw_fidelity__coin(st->seed, index, SW_FIDELITY_RANDOM);
}

static int bayes_next(void *state, uint64_t index, sw_value **vals)
{
    bayes_state *st = state;
    sw_history view;
    const sw_history *h = model_history(st, &view);
    double *loss = sw_malloc((h->len + 1) * sizeof(*loss));
    double *z = sw_malloc(2 * (st->space.n + 1) * sizeof(*z));
    size_t real = sw_history__losses(h, &st->spec->metric, loss);
    seen_set seen = {NULL, 0, st->space.n};
    int err = SW_OK;
    sw_rng r;

    if (st->configs)
        seen_init(&seen, &st->hist);
    if (st->configs && seen.n >= st->configs) {
        err = sw_error_set(SW_EDONE,
                           "bayes has tried all %llu configurations of the "
                           "discrete space",
                           (unsigned long long)st->configs);
        goto done;
    }
    sw_rng_seed(&r, st->seed, index);
    if (index < st->n_init || real < N_INIT || random_share(st, index) ||
        suggest(st, h, loss, st->configs ? &seen : NULL, &r, z) != SW_OK)
        warm_point(st, index, &r, z);
    if (st->configs && seen_has(&seen, z))
        untried(st, &seen, &r, z);
    sw_history__suggested(&st->hist, &st->space, index, z, vals);
done:
    sw_history__dispose(&view);
    free(seen.rows);
    free(loss);
    free(z);
    return err;
}

/* A finite discrete space ends, as a grid does, when every
 * configuration has been tried. */
static void bayes_size(const void *state, uint64_t *count, bool *bounded,
                       bool *saturated)
{
    const bayes_state *st = state;

    sw_search__unbounded(state, count, bounded, saturated);
    if (st->configs) {
        *count = st->configs;
        *bounded = true;
    }
}

static int bayes_observe(void *state, const sw_trial *t, double value)
{
    bayes_state *st = state;

    return sw_history__record(&st->hist, &st->space, t, value, false);
}

static int bayes_pending(void *state, const sw_trial *t)
{
    bayes_state *st = state;

    return sw_history__record(&st->hist, &st->space, t, NAN, true);
}

static int bayes_observe_rung(void *state, const sw_trial *t, int64_t iter,
                              double value)
{
    bayes_state *st = state;

    return sw_fidelity__record_trial(&st->fid, &st->hist, &st->space, t, iter,
                                     value);
}

static int64_t bayes_fitted(const void *state)
{
    return ((const bayes_state *)state)->fitted;
}

const sw_strategy sw_bayes__strategy = {
    .version = SW_STRATEGY_VERSION,
    .name = "bayes",
    .open = bayes_open,
    .close = bayes_close,
    .next = bayes_next,
    .size = bayes_size,
    .observe = bayes_observe,
    .pending = bayes_pending,
    .observe_rung = bayes_observe_rung,
    .fitted = bayes_fitted,
};
