/*
 * transform.c - W&B's cdf and ppf for every distribution (sweeps/params.py:
 * HyperParameter.cdf, .ppf), with the normal and beta functions behind
 * them.
 *
 * The formulas are W&B's, so cdf(value) is the [0, 1] coordinate W&B's
 * Bayesian search gives a run, and ppf(u) the value it would suggest.
 * Two deliberate differences, both at the edge u = 0 or 1 where scipy
 * steps outside the parameter: u = 0 gives the first value of a
 * categorical or int_uniform (scipy: index -1, the last value, and
 * min - 1), and u = 1 with probabilities gives the last value with a
 * non-zero probability (W&B's argmin gives index 0). The unbounded
 * distributions clamp u into (0, 1) so ppf stays finite.
 *
 * One more, everywhere: a value never leaves its declared range. W&B's
 * formulas step an ulp or two outside it (exp(log(1e-5)) is
 * 9.999999999999997e-06) and q rounds to a multiple past a bound that is
 * not one; sw_transform__value, which every continuous value of every
 * search goes through, keeps them inside, and the bounds map to u = 0
 * and 1 and back exactly.
 */
#include "search/transform.h"

#include <math.h>

#include "search/strategy.h"

#define U_EDGE 1e-12 /* how close to 0 or 1 an unbounded ppf may go */

bool sw_transform__searchable(const sw_param *p)
{
    return p->dist != SW_DIST_CONSTANT;
}

long sw_transform__index(const sw_param *p, const sw_value *v)
{
    double x, y;
    size_t i;

    for (i = 0; i < p->n_values; i++)
        if (sw_value_equal(p->values[i], v))
            return (long)i;
    if (!v || !sw_value_number(v, &x))
        return -1;
    for (i = 0; i < p->n_values; i++)
        if (sw_value_number(p->values[i], &y) && x == y)
            return (long)i;
    return -1;
}

static double clamp01(double x)
{
    return x < 0.0 ? 0.0 : x > 1.0 ? 1.0 : x;
}

/* scipy's uniform.cdf(x, lo, hi - lo). */
static double uniform_cdf(double x, double lo, double hi)
{
    return clamp01((x - lo) / (hi - lo));
}

/* The categorical: (i + 1) / n, or the cumulative probability of i. */
static double categorical_cdf(const sw_param *p, double i)
{
    double c = 0.0;
    size_t k;

    if (!(i >= 0.0) || i >= (double)p->n_values)
        return NAN;
    if (!p->probs)
        return (floor(i) + 1.0) / (double)p->n_values;
    for (k = 0; k <= (size_t)i; k++)
        c += p->probs[k];
    return clamp01(c);
}

static double normal_cdf(const sw_param *p, double x)
{
    if (p->sigma <= 0.0)
        return x < p->mu ? 0.0 : 1.0;
    return sw_transform__norm_cdf((x - p->mu) / p->sigma);
}

static double lognormal_cdf(const sw_param *p, double x)
{
    if (x <= 0.0)
        return 0.0;
    return normal_cdf(p, log(x));
}

/* The log-uniform families: uniform in log x between their bounds. */
static double log_family_cdf(const sw_param *p, double x)
{
    double lx = x > 0.0 ? log(x) : -INFINITY;

    switch (p->dist) {
    case SW_DIST_LOG_UNIFORM:
    case SW_DIST_Q_LOG_UNIFORM:
        return uniform_cdf(lx, p->min, p->max);
    case SW_DIST_INV_LOG_UNIFORM:
        return 1.0 - uniform_cdf(-lx, p->min, p->max);
    case SW_DIST_INV_LOG_UNIFORM_VALUES:
        return 1.0 - uniform_cdf(-lx, -log(p->max), -log(p->min));
    default: /* LOG_UNIFORM_VALUES, Q_LOG_UNIFORM_VALUES */
        return uniform_cdf(lx, log(p->min), log(p->max));
    }
}

bool sw_transform__bounds(const sw_param *p, double *lo, double *hi)
{
    switch (p->dist) {
    case SW_DIST_UNIFORM:
    case SW_DIST_Q_UNIFORM:
    case SW_DIST_LOG_UNIFORM_VALUES:
    case SW_DIST_Q_LOG_UNIFORM_VALUES:
    case SW_DIST_INV_LOG_UNIFORM_VALUES:
        *lo = p->min;
        *hi = p->max;
        return true;
    case SW_DIST_LOG_UNIFORM:
    case SW_DIST_Q_LOG_UNIFORM:
        *lo = exp(p->min);
        *hi = exp(p->max);
        return true;
    case SW_DIST_INV_LOG_UNIFORM:
        *lo = exp(-p->max);
        *hi = exp(-p->min);
        return true;
    case SW_DIST_BETA:
    case SW_DIST_Q_BETA:
        *lo = 0.0;
        *hi = 1.0;
        return true;
    default:
        return false;
    }
}

double sw_transform__cdf_num(const sw_param *p, double x)
{
    double span, lo, hi;

    /* the bounds exactly, though log(exp(min)) need not be min */
    if (sw_transform__bounds(p, &lo, &hi) && (x <= lo || x >= hi))
        return x <= lo ? 0.0 : 1.0;
    switch (p->dist) {
    case SW_DIST_CONSTANT:
        return 0.0;
    case SW_DIST_CATEGORICAL:
        return categorical_cdf(p, x);
    case SW_DIST_INT_UNIFORM:
        span = (double)p->imax - (double)p->imin + 1.0;
        return clamp01((floor(x) - (double)p->imin + 1.0) / span);
    case SW_DIST_UNIFORM:
    case SW_DIST_Q_UNIFORM:
        return uniform_cdf(x, p->min, p->max);
    case SW_DIST_NORMAL:
    case SW_DIST_Q_NORMAL:
        return normal_cdf(p, x);
    case SW_DIST_LOG_NORMAL:
    case SW_DIST_Q_LOG_NORMAL:
        return lognormal_cdf(p, x);
    case SW_DIST_BETA:
    case SW_DIST_Q_BETA:
        return sw_transform__beta_cdf(x, p->a, p->b);
    default:
        return log_family_cdf(p, x);
    }
}

double sw_transform__cdf(const sw_param *p, const sw_value *v)
{
    double x;

    if (p->dist == SW_DIST_CONSTANT)
        return 0.0;
    if (p->dist == SW_DIST_CATEGORICAL) {
        long i = sw_transform__index(p, v);

        return i < 0 ? NAN : sw_transform__cdf_num(p, (double)i);
    }
    if (!v || !sw_value_number(v, &x) || isnan(x))
        return NAN;
    return sw_transform__cdf_num(p, x);
}

long sw_transform__ppf_index(const sw_param *p, double u)
{
    double c = 0.0;
    long i, last = 0;

    u = clamp01(u);
    if (!p->probs) {
        i = (long)ceil(u * (double)p->n_values) - 1;
        return i < 0 ? 0 : i >= (long)p->n_values ? (long)p->n_values - 1 : i;
    }
    for (i = 0; i < (long)p->n_values; i++) {
        c += p->probs[i];
        if (p->probs[i] > 0.0)
            last = i;
        if (u < c)
            return i;
    }
    return last;
}

/* scipy's randint.ppf(u, min, max + 1), kept inside [min, max]. */
static sw_value *int_ppf(const sw_param *p, double u)
{
    double span = (double)p->imax - (double)p->imin + 1.0;
    double k = ceil(u * span) - 1.0;

    if (k < 0.0)
        k = 0.0;
    if (k > span - 1.0)
        k = span - 1.0;
    if (k >= 0x1.0p63)
        return sw_value_int(p->imax);
    return sw_value_int(p->imin + (int64_t)k);
}

/* The log-uniform families, W&B's formulas. */
static double log_family_ppf(const sw_param *p, double u)
{
    double lmin, lmax;

    switch (p->dist) {
    case SW_DIST_LOG_UNIFORM:
    case SW_DIST_Q_LOG_UNIFORM:
        return exp(p->min + u * (p->max - p->min));
    case SW_DIST_INV_LOG_UNIFORM:
        return exp(-(p->min + (1.0 - u) * (p->max - p->min)));
    case SW_DIST_INV_LOG_UNIFORM_VALUES:
        lmin = log(p->min);
        lmax = log(p->max);
        return exp(-(-lmax + (1.0 - u) * (lmax - lmin)));
    default:
        lmin = log(p->min);
        lmax = log(p->max);
        return exp(lmin + u * (lmax - lmin));
    }
}

static double open01(double u)
{
    return u < U_EDGE ? U_EDGE : u > 1.0 - U_EDGE ? 1.0 - U_EDGE : u;
}

/* The continuous value at u, before any rounding to q. */
static double continuous_ppf(const sw_param *p, double u)
{
    double z;

    switch (p->dist) {
    case SW_DIST_UNIFORM:
    case SW_DIST_Q_UNIFORM:
        return p->min + u * (p->max - p->min);
    case SW_DIST_NORMAL:
    case SW_DIST_Q_NORMAL:
        return p->mu + p->sigma * sw_transform__norm_ppf(open01(u));
    case SW_DIST_LOG_NORMAL:
    case SW_DIST_Q_LOG_NORMAL:
        z = sw_transform__norm_ppf(open01(u));
        return exp(p->mu + p->sigma * z);
    case SW_DIST_BETA:
    case SW_DIST_Q_BETA:
        return sw_transform__beta_ppf(u, p->a, p->b);
    default:
        return log_family_ppf(p, u);
    }
}

static bool quantized(sw_dist d)
{
    return d == SW_DIST_Q_UNIFORM || d == SW_DIST_Q_LOG_UNIFORM ||
           d == SW_DIST_Q_LOG_UNIFORM_VALUES || d == SW_DIST_Q_NORMAL ||
           d == SW_DIST_Q_LOG_NORMAL || d == SW_DIST_Q_BETA;
}

/* The multiple of q nearest to y inside [lo, hi]: y when it is inside,
 * else the first multiple past the bound y crossed; that bound when k * q
 * rounds to just past it (0.30000000000000004 for 3 * 0.1 under 0.3) or
 * when no multiple lies inside. `tol` absorbs the error of bound / q. */
static double inside_grid(double y, double q, double lo, double hi, double tol)
{
    double r, k;

    if (y < lo) {
        r = lo / q;
        k = ceil(r - tol * fmax(1.0, fabs(r))) * q;
        y = k <= hi ? k : lo;
    } else if (y > hi) {
        r = hi / q;
        k = floor(r + tol * fmax(1.0, fabs(r))) * q;
        y = k >= lo ? k : hi;
    }
    return y < lo ? lo : y > hi ? hi : y;
}

sw_value *sw_transform__value(const sw_param *p, double x)
{
    double lo, hi, y;
    sw_value *v;

    if (!sw_transform__bounds(p, &lo, &hi))
        return quantized(p->dist) ? sw_sample__quantize(p, x)
                                  : sw_value_float(x);
    if (!quantized(p->dist))
        return sw_value_float(x < lo ? lo : x > hi ? hi : x);
    v = sw_sample__quantize(p, x);
    if (!sw_value_number(v, &y) || isnan(y) || (y >= lo && y <= hi))
        return v;
    sw_value_free(v);
    /* integer multiples of an integer q are exact: no tolerance, and
     * quantizing them again gives them back as ints */
    y = inside_grid(y, p->q, lo, hi, p->q_int ? 0.0 : 1e-9);
    return p->q_int ? sw_sample__quantize(p, y) : sw_value_float(y);
}

sw_value *sw_transform__ppf(const sw_param *p, double u)
{
    double lo, hi, x;

    u = clamp01(isnan(u) ? 0.5 : u);
    switch (p->dist) {
    case SW_DIST_CONSTANT:
        return sw_value_clone(p->value);
    case SW_DIST_CATEGORICAL:
        return sw_value_clone(p->values[sw_transform__ppf_index(p, u)]);
    case SW_DIST_INT_UNIFORM:
        return int_ppf(p, u);
    default:
        break;
    }
    x = continuous_ppf(p, u);
    if (sw_transform__bounds(p, &lo, &hi) && (u == 0.0 || u == 1.0))
        x = u == 0.0 ? lo : hi; /* exactly, not exp(log(min)) */
    return sw_transform__value(p, x);
}

double sw_transform__norm_cdf(double x)
{
    return 0.5 * erfc(-x / sqrt(2.0));
}

/* Acklam's rational approximation (relative error 1.15e-9), polished by
 * one Halley step on erfc to full double precision. */
static double acklam(double u)
{
    static const double a[] = {-3.969683028665376e+01, 2.209460984245205e+02,
                               -2.759285104469687e+02, 1.383577518672690e+02,
                               -3.066479806614716e+01, 2.506628277459239e+00};
    static const double b[] = {-5.447609879822406e+01, 1.615858368580409e+02,
                               -1.556989798598866e+02, 6.680131188771972e+01,
                               -1.328068155288572e+01};
    static const double c[] = {-7.784894002430293e-03, -3.223964580411365e-01,
                               -2.400758277161838e+00, -2.549732539343734e+00,
                               4.374664141464968e+00,  2.938163982698783e+00};
    static const double d[] = {7.784695709041462e-03, 3.224671290700398e-01,
                               2.445134137142996e+00, 3.754408661907416e+00};
    double q, r;

    if (u < 0.02425 || u > 1.0 - 0.02425) {
        q = sqrt(-2.0 * log(u < 0.5 ? u : 1.0 - u));
        r = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q +
             c[5]) /
            ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1.0);
        return u < 0.5 ? r : -r;
    }
    q = u - 0.5;
    r = q * q;
    return (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r +
            a[5]) *
           q /
           (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1.0);
}

double sw_transform__norm_ppf(double u)
{
    double x, e, h;

    if (!(u > 0.0))
        return u == 0.0 ? -INFINITY : NAN;
    if (!(u < 1.0))
        return u == 1.0 ? INFINITY : NAN;
    x = acklam(u);
    /* Halley's step on e = cdf(x) - u, computed on the tail where it is
     * not rounded away. */
    if (u < 0.5)
        e = 0.5 * erfc(-x / sqrt(2.0)) - u;
    else
        e = (1.0 - u) - 0.5 * erfc(x / sqrt(2.0));
    h = e * sqrt(2.0 * M_PI) * exp(x * x / 2.0);
    return x - h / (1.0 + x * h / 2.0);
}

/* The continued fraction of I_x(a, b) (modified Lentz), valid for
 * x < (a + 1) / (a + b + 2). */
static double beta_cf(double x, double a, double b)
{
    const double tiny = 1e-300;
    double c = 1.0, d = 1.0 - (a + b) * x / (a + 1.0), h;
    int m;

    d = 1.0 / (fabs(d) < tiny ? tiny : d);
    h = d;
    for (m = 1; m <= 300; m++) {
        double m2 = 2.0 * m, aa, del;
        int k;

        for (k = 0; k < 2; k++) {
            if (k == 0)
                aa = m * (b - m) * x / ((a + m2 - 1.0) * (a + m2));
            else
                aa = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1.0));
            d = 1.0 + aa * d;
            d = 1.0 / (fabs(d) < tiny ? tiny : d);
            c = 1.0 + aa / c;
            c = fabs(c) < tiny ? tiny : c;
            del = d * c;
            h *= del;
        }
        if (fabs(del - 1.0) < 1e-15)
            break;
    }
    return h;
}

double sw_transform__beta_cdf(double x, double a, double b)
{
    double lfront;

    if (!(a > 0.0) || !(b > 0.0)) /* a point mass at 0 or 1 */
        return !(a > 0.0) && b > 0.0 ? (x >= 0.0 ? 1.0 : 0.0)
                                     : (x >= 1.0 ? 1.0 : 0.0);
    if (x <= 0.0)
        return 0.0;
    if (x >= 1.0)
        return 1.0;
    lfront = lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x);
    if (x < (a + 1.0) / (a + b + 2.0))
        return exp(lfront) * beta_cf(x, a, b) / a;
    return 1.0 - exp(lfront) * beta_cf(1.0 - x, b, a) / b;
}

/* Bisection on the monotone cdf, to the last bit of x. */
double sw_transform__beta_ppf(double u, double a, double b)
{
    double lo = 0.0, hi = 1.0;
    int i;

    if (!(a > 0.0) || !(b > 0.0))
        return !(a > 0.0) && b > 0.0 ? 0.0 : 1.0;
    if (u <= 0.0)
        return 0.0;
    if (u >= 1.0)
        return 1.0;
    for (i = 0; i < 200 && hi - lo > 0.0; i++) {
        double mid = 0.5 * (lo + hi);

        if (mid <= lo || mid >= hi)
            break;
        if (sw_transform__beta_cdf(mid, a, b) < u)
            lo = mid;
        else
            hi = mid;
    }
    return 0.5 * (lo + hi);
}
