/*
 * extrapolate.c - the power law a + b t^-c, fitted by least squares:
 * for each c of a grid, a and b are a straight line's fit of y against
 * x = t^-c (closed form); the c whose line leaves the least squared
 * error, refined by golden-section search beside it, gives the
 * prediction (a step of 0.1 in c moved predictions from 9 points to 81
 * by 0.04). No clocks, no state: the same points give
 * the same value, so a resumed sweep ranks as the first did.
 */
#include "search/extrapolate.h"

#include <math.h>

#define C_LO 0.2
#define C_HI 2.0
#define C_STEPS 19 /* c = 0.2, 0.3, ... 2.0 */
#define STEP ((C_HI - C_LO) / (C_STEPS - 1))
#define REFINE                                                                 \
    16 /* golden-section steps around the grid's best c:                       \
          the bracket shrinks to 0.2 x 0.618^16, 1e-4 */

/* The latest point's value (the highest t; the last given of a tie). */
static double latest(const double *t, const double *y, size_t n)
{
    size_t i, at = 0;

    for (i = 1; i < n; i++)
        if (t[i] >= t[at])
            at = i;
    return y[at];
}

/* The least squared error of the line y = a + b x, x = t^-c, and its
 * value at `at`; INFINITY when the x do not vary. */
static double fit(const double *t, const double *y, size_t n, double c,
                  double at, double *pred)
{
    double sx = 0, sy = 0, sxx = 0, sxy = 0, a, b, sse = 0, d, var, x;
    size_t i;

    for (i = 0; i < n; i++) {
        x = pow(t[i], -c);
        sx += x, sy += y[i], sxx += x * x, sxy += x * y[i];
    }
    var = sxx - sx * sx / (double)n;
    if (!(var > 0))
        return INFINITY;
    b = (sxy - sx * sy / (double)n) / var;
    a = (sy - b * sx) / (double)n;
    for (i = 0; i < n; i++) {
        d = y[i] - (a + b * pow(t[i], -c));
        sse += d * d;
    }
    *pred = a + b * pow(at, -c);
    return sse;
}

double sw_extrapolate(const double *t, const double *y, size_t n, double at,
                      bool falls)
{
    const double phi = 0.6180339887498949;
    double last, sse, best_sse = INFINITY, best = NAN, best_c = C_LO,
                      tmin = INFINITY, tmax = -INFINITY, lo, hi, c1, c2, p1, p2,
                      s1, s2, c;
    size_t i;
    int k;

    if (n == 0)
        return NAN;
    last = latest(t, y, n);
    for (i = 0; i < n; i++) {
        if (!isfinite(y[i]) || !(t[i] >= 1))
            return last;
        tmin = fmin(tmin, t[i]);
        tmax = fmax(tmax, t[i]);
    }
    if (n < 3 || tmax <= tmin || !(at > tmax))
        return last;
    for (k = 0; k < C_STEPS; k++) { /* the grid, then around its best */
        c = C_LO + (C_HI - C_LO) * k / (C_STEPS - 1);
        if ((sse = fit(t, y, n, c, at, &p1)) < best_sse)
            best_sse = sse, best = p1, best_c = c;
    }
    lo = fmax(C_LO, best_c - STEP), hi = fmin(C_HI, best_c + STEP);
    c1 = hi - phi * (hi - lo), c2 = lo + phi * (hi - lo);
    s1 = fit(t, y, n, c1, at, &p1), s2 = fit(t, y, n, c2, at, &p2);
    for (k = 0; k < REFINE; k++) { /* golden section */
        if (s1 < s2) {
            hi = c2, c2 = c1, s2 = s1, p2 = p1;
            c1 = hi - phi * (hi - lo);
            s1 = fit(t, y, n, c1, at, &p1);
        } else {
            lo = c1, c1 = c2, s1 = s2, p1 = p2;
            c2 = lo + phi * (hi - lo);
            s2 = fit(t, y, n, c2, at, &p2);
        }
    }
    if (s1 < best_sse)
        best_sse = s1, best = p1;
    if (s2 < best_sse)
        best = p2;
    if (!isfinite(best))
        return last;
    return falls ? fmin(best, last) : fmax(best, last);
}
