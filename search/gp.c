/*
 * gp.c - Gaussian-process regression for Bayesian search: a Matern 5/2
 * kernel with one lengthscale per input group, hyperparameters fitted by
 * maximising the marginal likelihood (with weak priors), predictions and
 * their gradients for the acquisition function.
 *
 * The linear algebra is LAPACK's, through LAPACKE: Cholesky (dpotrf),
 * solves (dpotrs, dtrtrs) and the inverse for the likelihood's gradient
 * (dpotri); the _work entry points, as the inputs are built here and
 * LAPACKE's NaN scan of every argument would cost as much as a solve.
 * LAPACKE is loaded when a GP first fits (lapack.c). Matrices
 * are column-major; only their lower triangles are used. A kernel matrix
 * that is not numerically positive definite gets more jitter, up to a
 * limit, before the fit gives up.
 */
#include "search/gp.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "search/lapack.h"
#include "search/optim.h"
#include "sweeps/error.h"

#define SQRT5 2.2360679774997896964
#define JITTER 1e-9

/* Log-normal priors and bounds of the hyperparameters, for inputs in
 * [0, 1] and standardised outputs. Lengthscales are centred on a broad,
 * smooth function; the noise prior leans on nearly noiseless results but
 * lets noisy ones be fitted. */
#define LS_MU (-0.7) /* log 0.5 */
#define LS_SD 1.5
#define LS_LO (-4.6) /* log 0.01 */
#define LS_HI 3.9    /* log 50 */
#define SF_MU 0.0
#define SF_SD 1.5
#define SF_LO (-4.6)
#define SF_HI 4.6
#define SN_MU (-6.9) /* log 1e-3 */
#define SN_SD 2.5
#define SN_LO (-13.8) /* log 1e-6 */
#define SN_HI 0.7

/* Work space that outlives a call: the blocks of a GP's size are past
 * malloc's mmap threshold, and a block freed and taken again costs a
 * page fault per page, each suggestion. */
enum { WS_PREDICT, WS_FIT, WS_SLOTS };

struct sw_gp_scratch {
    double *p[WS_SLOTS];
    size_t cap[WS_SLOTS];
};

/* At least n doubles of gp's work space `slot`. */
static double *scratch(const sw_gp *gp, int slot, size_t n)
{
    struct sw_gp_scratch *ws = gp->ws;

    if (ws->cap[slot] < n) {
        free(ws->p[slot]);
        ws->p[slot] = sw_malloc(n * sizeof(double));
        ws->cap[slot] = n;
    }
    return ws->p[slot];
}

void sw_gp__reset(sw_gp *gp)
{
    size_t k;

    for (k = 0; k < gp->n_groups; k++)
        gp->theta[k] = LS_MU;
    gp->theta[gp->n_groups] = SF_MU;
    gp->theta[gp->n_groups + 1] = SN_MU;
    gp->n = 0;
}

void sw_gp__init(sw_gp *gp, size_t d, const size_t *group, size_t n_groups)
{
    size_t k;

    memset(gp, 0, sizeof(*gp));
    gp->d = d;
    gp->n_groups = group ? n_groups : d;
    gp->group = sw_calloc(d + 1, sizeof(*gp->group));
    for (k = 0; k < d; k++)
        gp->group[k] = group ? group[k] : k;
    gp->theta = sw_calloc(gp->n_groups + 2, sizeof(*gp->theta));
    gp->inv_ls2 = sw_calloc(d + 1, sizeof(*gp->inv_ls2));
    gp->ws = sw_calloc(1, sizeof(*gp->ws));
    sw_gp__reset(gp);
}

void sw_gp__dispose(sw_gp *gp)
{
    free(gp->group);
    free(gp->theta);
    free(gp->inv_ls2);
    free(gp->X);
    free(gp->L);
    free(gp->alpha);
    if (gp->ws) {
        free(gp->ws->p[WS_PREDICT]);
        free(gp->ws->p[WS_FIT]);
    }
    free(gp->ws);
    memset(gp, 0, sizeof(*gp));
}

/* Takes the hyperparameters in theta into their working form. */
static void set_theta(sw_gp *gp, const double *theta)
{
    size_t k, g = gp->n_groups;

    if (theta != gp->theta)
        memcpy(gp->theta, theta, (g + 2) * sizeof(*theta));
    for (k = 0; k < gp->d; k++)
        gp->inv_ls2[k] = exp(-2.0 * theta[gp->group[k]]);
    gp->sf2 = exp(theta[g]);
    gp->sn2 = exp(theta[g + 1]);
}

/* The scaled squared distance between rows a and b. */
static double dist2(const sw_gp *gp, const double *a, const double *b)
{
    double r2 = 0.0;
    size_t k;

    for (k = 0; k < gp->d; k++) {
        double t = a[k] - b[k];

        r2 += t * t * gp->inv_ls2[k];
    }
    return r2;
}

static double matern(double sf2, double r)
{
    return sf2 * (1.0 + SQRT5 * r + 5.0 / 3.0 * r * r) * exp(-SQRT5 * r);
}

/* -dk/dr / r: the factor of every derivative of the kernel. */
static double matern_slope(double sf2, double r)
{
    return sf2 * 5.0 / 3.0 * (1.0 + SQRT5 * r) * exp(-SQRT5 * r);
}

/* K (lower triangle) of n points plus noise and `jitter`, then its
 * Cholesky factor in place. Returns LAPACK's info (0: done). */
static int factor(const sw_gp *gp, const double *X, size_t n, double *K,
                  double jitter)
{
    size_t i, j, d = gp->d;

    for (j = 0; j < n; j++) {
        K[j + j * n] = gp->sf2 + gp->sn2 + jitter;
        for (i = j + 1; i < n; i++)
            K[i + j * n] =
                matern(gp->sf2, sqrt(dist2(gp, &X[i * d], &X[j * d])));
    }
    return sw_lapack__dpotrf(LAPACK_COL_MAJOR, 'L', (lapack_int)n, K,
                             (lapack_int)n);
}

/* Factors with growing jitter; 0 on success. */
static int factor_retry(const sw_gp *gp, const double *X, size_t n, double *K)
{
    double jitter = JITTER;
    int k;

    for (k = 0; k < 6; k++, jitter *= 100.0)
        if (factor(gp, X, n, K, jitter) == 0)
            return 0;
    return -1;
}

/* What one evaluation of the likelihood needs. A fit evaluates it some
 * 40 times a restart on the same points: their differences T (d per
 * pair i > j, in the loops' order: j, then i) are taken once, and each
 * evaluation makes each pair's distance R and exponential E once, for
 * the kernel and for its gradient, where it made them twice (the
 * exponentials were a fifth of a suggestion's time). The same sums in
 * the same order: the same values, bit for bit. */
typedef struct {
    sw_gp *gp;
    const double *X, *y;
    size_t n;
    double *K, *W, *alpha;
    double *T, *R, *E;
} fit_ctx;

/* T of the fit's points. */
static void differences(fit_ctx *c)
{
    size_t i, j, k, p = 0, n = c->n, d = c->gp->d;

    for (j = 0; j < n; j++)
        for (i = j + 1; i < n; i++, p++)
            for (k = 0; k < d; k++)
                c->T[p * d + k] = c->X[i * d + k] - c->X[j * d + k];
}

/* R and E at the hyperparameters set in c->gp (as dist2() sums). */
static void distances(fit_ctx *c)
{
    const sw_gp *gp = c->gp;
    size_t p, k, d = gp->d, pairs = c->n * (c->n - 1) / 2;

    for (p = 0; p < pairs; p++) {
        const double *t = &c->T[p * d];
        double r2 = 0.0;

        for (k = 0; k < d; k++)
            r2 += t[k] * t[k] * gp->inv_ls2[k];
        c->R[p] = sqrt(r2);
        c->E[p] = exp(-SQRT5 * c->R[p]);
    }
}

/* factor() from R and E, with growing jitter; 0 on success. */
static int factor_fit(const fit_ctx *c)
{
    const sw_gp *gp = c->gp;
    size_t i, j, p, n = c->n;
    double jitter = JITTER, r, *K = c->K;
    int k;

    for (k = 0; k < 6; k++, jitter *= 100.0) {
        for (j = 0, p = 0; j < n; j++) {
            K[j + j * n] = gp->sf2 + gp->sn2 + jitter;
            for (i = j + 1; i < n; i++, p++) {
                r = c->R[p];
                K[i + j * n] =
                    gp->sf2 * (1.0 + SQRT5 * r + 5.0 / 3.0 * r * r) * c->E[p];
            }
        }
        if (sw_lapack__dpotrf(LAPACK_COL_MAJOR, 'L', (lapack_int)n, K,
                              (lapack_int)n) == 0)
            return 0;
    }
    return -1;
}

static double prior(const double *theta, size_t g, double *grad)
{
    static const double mu[3] = {LS_MU, SF_MU, SN_MU};
    static const double sd[3] = {LS_SD, SF_SD, SN_SD};
    double nlp = 0.0;
    size_t k;

    for (k = 0; k < g + 2; k++) {
        int c = k < g ? 0 : (int)(k - g + 1);
        double z = (theta[k] - mu[c]) / sd[c];

        nlp += 0.5 * z * z;
        grad[k] = z / sd[c];
    }
    return nlp;
}

/* The gradient of the log likelihood: 1/2 tr(W dK), W = aa' - K^-1,
 * added into grad (negated, as the objective is minimised). */
static void likelihood_grad(const fit_ctx *c, double *grad)
{
    const sw_gp *gp = c->gp;
    size_t i, j, k, p = 0, n = c->n, d = gp->d, g = gp->n_groups;

    for (j = 0; j < n; j++) {
        grad[g] -= 0.5 * c->W[j + j * n] * gp->sf2;
        grad[g + 1] -= 0.5 * c->W[j + j * n] * gp->sn2;
        for (i = j + 1; i < n; i++, p++) {
            const double *t = &c->T[p * d];
            double w = c->W[i + j * n], r = c->R[p], e = c->E[p];
            double s = w * (gp->sf2 * 5.0 / 3.0 * (1.0 + SQRT5 * r) * e);

            grad[g] -=
                w * (gp->sf2 * (1.0 + SQRT5 * r + 5.0 / 3.0 * r * r) * e);
            for (k = 0; k < d; k++)
                grad[gp->group[k]] -= s * t[k] * t[k] * gp->inv_ls2[k];
        }
    }
}

/* The negative log marginal likelihood plus prior at theta. */
static double objective(void *ctx, const double *theta, double *grad)
{
    fit_ctx *c = ctx;
    sw_gp *gp = c->gp;
    size_t i, j, n = c->n;
    lapack_int ln = (lapack_int)n;
    double nll;

    set_theta(gp, theta);
    nll = prior(theta, gp->n_groups, grad);
    distances(c);
    if (factor_fit(c) != 0) {
        memset(grad, 0, (gp->n_groups + 2) * sizeof(*grad));
        return 1e300;
    }
    memcpy(c->alpha, c->y, n * sizeof(*c->alpha));
    sw_lapack__dpotrs(LAPACK_COL_MAJOR, 'L', ln, 1, c->K, ln, c->alpha, ln);
    for (i = 0; i < n; i++)
        nll += 0.5 * c->y[i] * c->alpha[i] + log(c->K[i + i * n]);
    memcpy(c->W, c->K, n * n * sizeof(*c->W));
    sw_lapack__dpotri(LAPACK_COL_MAJOR, 'L', ln, c->W, ln);
    for (j = 0; j < n; j++)
        for (i = j; i < n; i++)
            c->W[i + j * n] = c->alpha[i] * c->alpha[j] - c->W[i + j * n];
    likelihood_grad(c, grad);
    return nll;
}

/* A start drawn from the prior, inside the bounds. */
static void draw_start(const sw_gp *gp, sw_rng *r, double *theta)
{
    size_t k, g = gp->n_groups;

    for (k = 0; k < g; k++)
        theta[k] = LS_MU + LS_SD * sw_rng_normal(r);
    theta[g] = SF_MU + 0.5 * SF_SD * sw_rng_normal(r);
    theta[g + 1] = SN_MU + 0.5 * SN_SD * sw_rng_normal(r);
}

static void bounds(const sw_gp *gp, double *lo, double *hi)
{
    size_t k, g = gp->n_groups;

    for (k = 0; k < g; k++) {
        lo[k] = LS_LO;
        hi[k] = LS_HI;
    }
    lo[g] = SF_LO;
    hi[g] = SF_HI;
    lo[g + 1] = SN_LO;
    hi[g + 1] = SN_HI;
}

int sw_gp__fit(sw_gp *gp, const double *X, const double *y, size_t n,
               int restarts, sw_rng *r)
{
    size_t m = gp->n_groups + 2;
    double lo[SW_OPTIM_MAX_N], hi[SW_OPTIM_MAX_N];
    double best[SW_OPTIM_MAX_N], theta[SW_OPTIM_MAX_N];
    double fbest = INFINITY;
    fit_ctx c = {gp, X, y, n, NULL, NULL, NULL, NULL, NULL, NULL};
    size_t pairs = n * (n ? n - 1 : 0) / 2;
    int k;

    if (m > SW_OPTIM_MAX_N)
        return sw_error_set(SW_ERROR, "too many lengthscales to fit");
    if ((k = sw_lapack__load()) < 0)
        return k;
    c.K = scratch(gp, WS_FIT, 2 * n * n + n + pairs * (gp->d + 2) + 1);
    c.W = c.K + n * n;
    c.alpha = c.W + n * n;
    c.T = c.alpha + n;
    c.R = c.T + pairs * gp->d;
    c.E = c.R + pairs;
    differences(&c);
    bounds(gp, lo, hi);
    memcpy(best, gp->theta, m * sizeof(*best));
    for (k = 0; k <= restarts; k++) {
        double f;

        if (k == 0)
            memcpy(theta, gp->theta, m * sizeof(*theta));
        else
            draw_start(gp, r, theta);
        f = sw_optim__minimize(objective, &c, theta, m, lo, hi, 60);
        if (f < fbest) {
            fbest = f;
            memcpy(best, theta, m * sizeof(*best));
        }
    }
    set_theta(gp, best);
    return sw_gp__condition(gp, X, y, n);
}

int sw_gp__condition(sw_gp *gp, const double *X, const double *y, size_t n)
{
    lapack_int ln = (lapack_int)n;
    int error = sw_lapack__load();

    if (error < 0)
        return error;
    set_theta(gp, gp->theta);
    gp->n = n;
    if (gp->cap < n) { /* grown only: a fit conditions on fewer, then more */
        free(gp->X);
        free(gp->L);
        free(gp->alpha);
        gp->X = sw_malloc((n * gp->d + 1) * sizeof(double));
        gp->L = sw_malloc((n * n + 1) * sizeof(double));
        gp->alpha = sw_malloc((n + 1) * sizeof(double));
        gp->cap = n;
    }
    memcpy(gp->X, X, n * gp->d * sizeof(double));
    if (factor_retry(gp, X, n, gp->L) != 0) {
        gp->n = 0;
        return sw_error_set(SW_ERROR, "the kernel matrix is singular");
    }
    memcpy(gp->alpha, y, n * sizeof(double));
    if (n)
        sw_lapack__dpotrs(LAPACK_COL_MAJOR, 'L', ln, 1, gp->L, ln, gp->alpha,
                          ln);
    return SW_OK;
}

/* Adds the gradients of k(x, x_i) times a[i] and b[i] into da and db. */
static void kernel_grads(const sw_gp *gp, const double *x, const double *a,
                         const double *b, double *da, double *db)
{
    size_t i, k, d = gp->d;

    memset(da, 0, d * sizeof(*da));
    memset(db, 0, d * sizeof(*db));
    for (i = 0; i < gp->n; i++) {
        const double *xi = &gp->X[i * d];
        double s = -matern_slope(gp->sf2, sqrt(dist2(gp, x, xi)));

        for (k = 0; k < d; k++) {
            double dk = s * (x[k] - xi[k]) * gp->inv_ls2[k];

            da[k] += a[i] * dk;
            db[k] += b[i] * dk;
        }
    }
}

void sw_gp__predict(const sw_gp *gp, const double *x, double *mu, double *var,
                    double *dmu, double *dvar, double *work)
{
    double *v = work, *w = work + gp->n, m = 0.0, s = gp->sf2;
    lapack_int ln = (lapack_int)gp->n;
    size_t i, k;

    for (i = 0; i < gp->n; i++) {
        v[i] = matern(gp->sf2, sqrt(dist2(gp, x, &gp->X[i * gp->d])));
        m += v[i] * gp->alpha[i];
    }
    if (gp->n)
        sw_lapack__dtrtrs(LAPACK_COL_MAJOR, 'L', 'N', 'N', ln, 1, gp->L, ln, v,
                          ln);
    for (i = 0; i < gp->n; i++)
        s -= v[i] * v[i];
    *mu = m;
    *var = s > 1e-12 ? s : 1e-12;
    if (!dmu || !dvar)
        return;
    /* dvar = -2 (K^-1 k)' dk, K^-1 k = L^-T v */
    memcpy(w, v, gp->n * sizeof(*w));
    if (gp->n)
        sw_lapack__dtrtrs(LAPACK_COL_MAJOR, 'L', 'T', 'N', ln, 1, gp->L, ln, w,
                          ln);
    kernel_grads(gp, x, gp->alpha, w, dmu, dvar);
    for (k = 0; k < gp->d; k++)
        dvar[k] *= s > 1e-12 ? -2.0 : 0.0;
}

#define CHUNK 256

void sw_gp__predict_many(const sw_gp *gp, const double *Xs, size_t m,
                         double *mu, double *var)
{
    size_t n = gp->n, c, i, j;
    lapack_int ln = (lapack_int)n;
    double *Ks = scratch(gp, WS_PREDICT, n * CHUNK + 1);

    for (c = 0; c < m; c += CHUNK) {
        size_t cols = m - c < CHUNK ? m - c : CHUNK;

        for (j = 0; j < cols; j++) {
            const double *x = &Xs[(c + j) * gp->d];

            mu[c + j] = 0.0;
            for (i = 0; i < n; i++) {
                Ks[i + j * n] =
                    matern(gp->sf2, sqrt(dist2(gp, x, &gp->X[i * gp->d])));
                mu[c + j] += Ks[i + j * n] * gp->alpha[i];
            }
        }
        if (n)
            sw_lapack__dtrtrs(LAPACK_COL_MAJOR, 'L', 'N', 'N', ln,
                              (lapack_int)cols, gp->L, ln, Ks, ln);
        for (j = 0; j < cols; j++) {
            double s = gp->sf2;

            for (i = 0; i < n; i++)
                s -= Ks[i + j * n] * Ks[i + j * n];
            var[c + j] = s > 1e-12 ? s : 1e-12;
        }
    }
}
