/*
 * optim.c - projected L-BFGS over a box.
 *
 * Nocedal's two-loop recursion on the variables that are free (not held
 * at a bound by the gradient), a projected backtracking line search with
 * Armijo's condition, and a restart along the projected gradient when
 * the quasi-Newton direction does not descend. Enough for the smooth,
 * low-dimensional problems of Bayesian search (a dozen hyperparameters,
 * a point of the search space); not a general-purpose L-BFGS-B.
 */
#include "search/optim.h"

#include <math.h>
#include <string.h>

#define MEM 6

typedef struct {
    double s[MEM][SW_OPTIM_MAX_N], y[MEM][SW_OPTIM_MAX_N], rho[MEM];
    int len, head; /* pairs stored; where the next one goes */
} memory;

static double dot(const double *a, const double *b, size_t n)
{
    double s = 0.0;
    size_t i;

    for (i = 0; i < n; i++)
        s += a[i] * b[i];
    return s;
}

/* True when x[i] sits on a bound that g pushes it against. */
static int held(double x, double g, double lo, double hi)
{
    return (x <= lo && g > 0.0) || (x >= hi && g < 0.0);
}

/* d = -H g on the free variables (two-loop recursion); 0 on held ones. */
static void direction(const memory *m, const double *g, const int *fixed,
                      double *d, size_t n)
{
    double a[MEM], gamma = 1.0;
    int k, i;
    size_t j;

    for (j = 0; j < n; j++)
        d[j] = fixed[j] ? 0.0 : -g[j];
    for (k = 0; k < m->len; k++) {
        i = (m->head - 1 - k + MEM) % MEM;
        a[i] = m->rho[i] * dot(m->s[i], d, n);
        for (j = 0; j < n; j++)
            d[j] -= a[i] * m->y[i][j];
    }
    if (m->len) {
        i = (m->head - 1 + MEM) % MEM;
        gamma = 1.0 / (m->rho[i] * dot(m->y[i], m->y[i], n));
    }
    for (j = 0; j < n; j++)
        d[j] *= gamma;
    for (k = m->len - 1; k >= 0; k--) {
        double b;

        i = (m->head - 1 - k + MEM) % MEM;
        b = m->rho[i] * dot(m->y[i], d, n);
        for (j = 0; j < n; j++)
            d[j] += m->s[i][j] * (a[i] - b);
    }
    for (j = 0; j < n; j++)
        if (fixed[j])
            d[j] = 0.0;
}

static void remember(memory *m, const double *s, const double *y, size_t n)
{
    double sy = dot(s, y, n);

    if (!(sy > 1e-12))
        return;
    memcpy(m->s[m->head], s, n * sizeof(*s));
    memcpy(m->y[m->head], y, n * sizeof(*y));
    m->rho[m->head] = 1.0 / sy;
    m->head = (m->head + 1) % MEM;
    if (m->len < MEM)
        m->len++;
}

typedef struct {
    sw_optim_fn f;
    void *ctx;
    size_t n;
    const double *lo, *hi;
} problem;

/* Backtracks from step t along d; on success x, fx and g move. */
static int line_search(const problem *p, double *x, double *fx, double *g,
                       const double *d, double t)
{
    double xn[SW_OPTIM_MAX_N], gn[SW_OPTIM_MAX_N], fn, decrease;
    size_t j;
    int k;

    for (k = 0; k < 30; k++, t *= 0.5) {
        for (j = 0; j < p->n; j++) {
            xn[j] = x[j] + t * d[j];
            xn[j] = xn[j] < p->lo[j]   ? p->lo[j]
                    : xn[j] > p->hi[j] ? p->hi[j]
                                       : xn[j];
        }
        for (decrease = 0.0, j = 0; j < p->n; j++)
            decrease += g[j] * (xn[j] - x[j]);
        if (!(decrease < 0.0))
            return 0;
        fn = p->f(p->ctx, xn, gn);
        if (fn <= *fx + 1e-4 * decrease) {
            *fx = fn;
            memcpy(x, xn, p->n * sizeof(*x));
            memcpy(g, gn, p->n * sizeof(*g));
            return 1;
        }
    }
    return 0;
}

/* One iteration; 0 when no progress can be made. */
static int step(const problem *p, memory *m, double *x, double *fx, double *g,
                int first)
{
    double d[SW_OPTIM_MAX_N], s[SW_OPTIM_MAX_N], yv[SW_OPTIM_MAX_N];
    double g0[SW_OPTIM_MAX_N], f0 = *fx, t = 1.0, dn;
    int fixed[SW_OPTIM_MAX_N];
    size_t j;

    for (j = 0; j < p->n; j++)
        fixed[j] = held(x[j], g[j], p->lo[j], p->hi[j]);
    direction(m, g, fixed, d, p->n);
    if (!(dot(d, g, p->n) < 0.0)) {
        m->len = 0;
        direction(m, g, fixed, d, p->n);
    }
    dn = sqrt(dot(d, d, p->n));
    if (!(dn > 1e-12))
        return 0;
    if (first || m->len == 0)
        t = fmin(1.0, 1.0 / dn);
    memcpy(s, x, p->n * sizeof(*x));
    memcpy(g0, g, p->n * sizeof(*g));
    if (!line_search(p, x, fx, g, d, t))
        return 0;
    for (j = 0; j < p->n; j++) {
        s[j] = x[j] - s[j];
        yv[j] = g[j] - g0[j];
    }
    remember(m, s, yv, p->n);
    return fabs(f0 - *fx) > 1e-10 * (1.0 + fabs(f0));
}

double sw_optim__minimize(sw_optim_fn f, void *ctx, double *x, size_t n,
                          const double *lo, const double *hi, int iters)
{
    problem p = {f, ctx, n, lo, hi};
    double g[SW_OPTIM_MAX_N], fx;
    memory m;
    size_t j;
    int it;

    if (n == 0 || n > SW_OPTIM_MAX_N)
        return f(ctx, x, g);
    for (j = 0; j < n; j++)
        x[j] = x[j] < lo[j] ? lo[j] : x[j] > hi[j] ? hi[j] : x[j];
    memset(&m, 0, sizeof(m));
    fx = f(ctx, x, g);
    for (it = 0; it < iters && isfinite(fx); it++)
        if (!step(&p, &m, x, &fx, g, it == 0))
            break;
    return fx;
}
