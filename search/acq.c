/*
 * acq.c - expected improvement, in logs, and its maximisation over a
 * search space of reals, ints and categoricals.
 *
 * EI is computed as log EI (stable where EI underflows, so far-off
 * candidates still rank and gradients do not vanish). The search for its
 * maximum is deliberately broad: 512 scrambled Sobol points over the
 * whole space (or as many as the caller asks), as many perturbations of
 * the best points observed (small and
 * large steps, a categorical switched now and then), the best few of
 * those polished by projected L-BFGS on the continuous coordinates, then
 * snapped to values that exist and improved one discrete coordinate at a
 * time. W&B scores 1,000 random points and stops there.
 */
#include "search/acq.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "search/optim.h"
#include "search/sobol.h"
#include "sweeps/error.h"

#define N_REFINE 5
#define LBFGS_ITERS 40
#define MOVE_PASSES 3

void sw_features__init(sw_features *f, const sw_space *sp)
{
    size_t j, k;

    f->sp = sp;
    f->n = 0;
    f->first = sw_calloc(sp->n + 1, sizeof(*f->first));
    for (j = 0; j < sp->n; j++) {
        f->first[j] = f->n;
        f->n += sp->dims[j].kind == SW_DIM_CAT ? sp->dims[j].levels : 1;
    }
    f->group = sw_calloc(f->n + 1, sizeof(*f->group));
    for (j = 0; j < sp->n; j++)
        for (k = f->first[j]; k < (j + 1 < sp->n ? f->first[j + 1] : f->n); k++)
            f->group[k] = j;
}

void sw_features__dispose(sw_features *f)
{
    free(f->first);
    free(f->group);
    f->first = f->group = NULL;
}

void sw_features__of(const sw_features *f, const double *z, double *x)
{
    size_t j, k;

    for (j = 0; j < f->sp->n; j++) {
        const sw_dim *d = &f->sp->dims[j];

        if (d->kind != SW_DIM_CAT) {
            x[f->first[j]] = z[j];
            continue;
        }
        for (k = 0; k < d->levels; k++)
            x[f->first[j] + k] = (double)k == z[j] ? 1.0 : 0.0;
    }
}

/* log EI from the posterior at a point; r1 = Phi(u) / h(u) and
 * r2 = phi(u) / h(u), h(u) = u Phi(u) + phi(u), for the gradient. Below
 * u = -10 h comes from its asymptotic series, as u Phi(u) + phi(u)
 * cancels. */
static double log_ei_at(double best, double mu, double var, double *r1,
                        double *r2)
{
    double s = sqrt(var), u = (best - mu) / s, h, pdf, cdf;

    if (u > -10.0) {
        pdf = exp(-0.5 * u * u) / sqrt(2.0 * M_PI);
        cdf = 0.5 * erfc(-u / sqrt(2.0));
        h = u * cdf + pdf;
        if (h < 1e-300)
            h = 1e-300;
        *r1 = cdf / h;
        *r2 = pdf / h;
        return log(s) + log(h);
    } else {
        double i2 = 1.0 / (u * u);
        double ser = i2 * (1.0 - i2 * (3.0 - i2 * (15.0 - 105.0 * i2)));
        double mills = (1.0 - i2 * (1.0 - i2 * (3.0 - 15.0 * i2))) / -u;

        *r1 = mills / ser;
        *r2 = 1.0 / ser;
        return log(s) - 0.5 * u * u - 0.5 * log(2.0 * M_PI) + log(ser);
    }
}

double sw_acq__log_ei(const sw_acq *a, const double *z, double *g)
{
    const sw_features *f = a->f;
    size_t nf = f->n, j;
    double *x = sw_malloc((3 * nf + 2 * a->gp->n + 1) * sizeof(double));
    double *dmu = x + nf, *dvar = dmu + nf, *work = dvar + nf;
    double mu, var, r1, r2, le;

    sw_features__of(f, z, x);
    sw_gp__predict(a->gp, x, &mu, &var, g ? dmu : NULL, g ? dvar : NULL, work);
    le = log_ei_at(a->best, mu, var, &r1, &r2);
    for (j = 0; g && j < f->sp->n; j++) {
        size_t k = f->first[j];
        double s = sqrt(var);

        g[j] = 0.0;
        if (f->sp->dims[j].kind != SW_DIM_CAT)
            g[j] = (-r1 * dmu[k] + r2 * dvar[k] / (2.0 * s)) / s;
    }
    free(x);
    return le;
}

/* Scrambled Sobol points over the whole space into z (k x n). */
static void global_candidates(const sw_space *sp, size_t k, sw_rng *r,
                              double *z)
{
    sw_sobol *q = sw_malloc(sizeof(*q));
    double u[SW_SOBOL_MAX_DIMS];
    size_t i, j;

    sw_sobol__init(q, sp->n, r);
    for (i = 0; i < k; i++) {
        sw_sobol__point(q, (uint32_t)i, u);
        for (j = 0; j < sp->n; j++)
            z[i * sp->n + j] = sw_space__from_u(
                &sp->dims[j], j < q->dims ? u[j] : sw_rng_uniform(r));
    }
    free(q);
}

/* Perturbations of the points in `near` into z (k x n): Gaussian
 * steps of a random scale on each continuous coordinate, and each
 * categorical switched with probability 1 / n. */
static void near_candidates(const sw_space *sp, const double *near,
                            size_t n_near, size_t k, sw_rng *r, double *z)
{
    size_t i, j, n = sp->n;

    for (i = 0; i < k; i++) {
        const double *c = &near[sw_rng_below(r, n_near) * n];
        double scale = pow(10.0, -2.5 + 1.8 * sw_rng_uniform(r));
        double *zi = &z[i * n];

        for (j = 0; j < n; j++) {
            const sw_dim *d = &sp->dims[j];

            if (d->kind == SW_DIM_CAT)
                zi[j] = sw_rng_below(r, n) == 0
                            ? (double)sw_rng_below(r, d->levels)
                            : c[j];
            else
                zi[j] = sw_space__snap(d, c[j] + scale * sw_rng_normal(r));
        }
    }
}

static bool is_taken(const sw_acq *a, const double *z)
{
    return a->taken && a->taken(a->taken_ctx, z);
}

/* log EI of m candidates, at once; -INFINITY for those taken. */
static void score(const sw_acq *a, const double *z, size_t m, double *le)
{
    size_t nf = a->f->n, n = a->f->sp->n, i;
    double *x = sw_malloc((m * nf + 2 * m + 1) * sizeof(double));
    double *mu = x + m * nf, *var = mu + m, r1, r2;

    for (i = 0; i < m; i++)
        sw_features__of(a->f, &z[i * n], &x[i * nf]);
    sw_gp__predict_many(a->gp, x, m, mu, var);
    for (i = 0; i < m; i++)
        le[i] = is_taken(a, &z[i * n])
                    ? -INFINITY
                    : log_ei_at(a->best, mu[i], var[i], &r1, &r2);
    free(x);
}

/* The L-BFGS view: the continuous coordinates of a point. */
typedef struct {
    const sw_acq *a;
    double *z;
    size_t *idx, m;
} cont_ctx;

static double neg_log_ei(void *ctx, const double *x, double *g)
{
    cont_ctx *c = ctx;
    double *gz = sw_malloc((c->a->f->sp->n + 1) * sizeof(double)), v;
    size_t i;

    for (i = 0; i < c->m; i++)
        c->z[c->idx[i]] = x[i];
    v = -sw_acq__log_ei(c->a, c->z, gz);
    for (i = 0; i < c->m; i++)
        g[i] = -gz[c->idx[i]];
    free(gz);
    return v;
}

/* Polishes the continuous coordinates of z. */
static void polish(const sw_acq *a, double *z)
{
    const sw_space *sp = a->f->sp;
    size_t idx[SW_OPTIM_MAX_N], j, m = 0;
    double x[SW_OPTIM_MAX_N], lo[SW_OPTIM_MAX_N], hi[SW_OPTIM_MAX_N];
    cont_ctx c = {a, z, idx, 0};

    for (j = 0; j < sp->n && m < SW_OPTIM_MAX_N; j++) {
        if (sp->dims[j].kind == SW_DIM_CAT)
            continue;
        idx[m] = j;
        x[m] = z[j];
        lo[m] = 0.0;
        hi[m++] = 1.0;
    }
    c.m = m;
    if (m)
        sw_optim__minimize(neg_log_ei, &c, x, m, lo, hi, LBFGS_ITERS);
    for (j = 0; j < m; j++)
        z[idx[j]] = x[j];
    for (j = 0; j < sp->n; j++)
        z[j] = sw_space__snap(&sp->dims[j], z[j]);
}

/* Tries z[j] = v; keeps it when EI grows and the point is not taken. */
static void try_move(const sw_acq *a, double *z, size_t j, double v, double *le,
                     int *moved)
{
    double old = z[j], t;

    if (v == old)
        return;
    z[j] = v;
    t = is_taken(a, z) ? -INFINITY : sw_acq__log_ei(a, z, NULL);
    if (t > *le) {
        *le = t;
        *moved = 1;
    } else {
        z[j] = old;
    }
}

/* One discrete coordinate at a time: an int one cell either way, a
 * categorical to each other value. Returns the final log EI. */
static double moves(const sw_acq *a, double *z)
{
    const sw_space *sp = a->f->sp;
    double le = sw_acq__log_ei(a, z, NULL);
    int pass, moved = 1;
    size_t j, k;

    for (pass = 0; pass < MOVE_PASSES && moved; pass++) {
        moved = 0;
        for (j = 0; j < sp->n; j++) {
            const sw_dim *d = &sp->dims[j];
            double step = 1.0 / (double)d->levels, c = z[j];

            if (d->kind == SW_DIM_INT) {
                if (c - step > 0.0)
                    try_move(a, z, j, c - step, &le, &moved);
                if (c + step < 1.0)
                    try_move(a, z, j, c + step, &le, &moved);
            } else if (d->kind == SW_DIM_CAT) {
                for (k = 0; k < d->levels; k++)
                    try_move(a, z, j, (double)k, &le, &moved);
            }
        }
    }
    return le;
}

/* The indices of the k highest scores (k <= m), best first. */
static void top_k(const double *le, size_t m, size_t *best, size_t k)
{
    size_t i, j, t;

    for (i = 0; i < k; i++)
        best[i] = SIZE_MAX;
    for (i = 0; i < m; i++) {
        for (j = 0; j < k; j++)
            if (best[j] == SIZE_MAX || le[i] > le[best[j]])
                break;
        if (j == k)
            continue;
        for (t = k - 1; t > j; t--)
            best[t] = best[t - 1];
        best[j] = i;
    }
}

double sw_acq__best_of(const sw_acq *a, const double *z, size_t m,
                       double *z_out)
{
    size_t n = a->f->sp->n, top;
    double *le = sw_malloc((m + 1) * sizeof(*le)), best;

    score(a, z, m, le);
    top_k(le, m, &top, 1);
    best = top == SIZE_MAX ? -INFINITY : le[top];
    if (best > -INFINITY)
        memcpy(z_out, z + top * n, n * sizeof(*z_out));
    free(le);
    return best;
}

double sw_acq__maximize(const sw_acq *a, const double *near, size_t n_near,
                        sw_rng *r, double *z_out)
{
    size_t k = a->candidates ? a->candidates : SW_ACQ_CANDIDATES;
    size_t n = a->f->sp->n, m = k + (n_near ? k : 0), i;
    double *z = sw_malloc((m * n + n + 1) * sizeof(double));
    double *le = sw_malloc((m + 1) * sizeof(double)), best = -INFINITY;
    double *cand = z + m * n;
    size_t top[N_REFINE];

    global_candidates(a->f->sp, k, r, z);
    if (n_near)
        near_candidates(a->f->sp, near, n_near, k, r, z + k * n);
    score(a, z, m, le);
    top_k(le, m, top, N_REFINE);
    memcpy(z_out, z + top[0] * n, n * sizeof(*z_out));
    best = le[top[0]];
    for (i = 0; i < N_REFINE && top[i] != SIZE_MAX; i++) {
        double t;

        memcpy(cand, z + top[i] * n, n * sizeof(*cand));
        polish(a, cand);
        t = moves(a, cand);
        if (t > best && !is_taken(a, cand)) {
            best = t;
            memcpy(z_out, cand, n * sizeof(*z_out));
        }
    }
    free(z);
    free(le);
    return best;
}
