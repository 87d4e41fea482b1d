/*
 * transform.h - each distribution mapped to and from [0, 1] through its
 * CDF, as W&B's HyperParameter.cdf and .ppf do (sweeps/params.py), and
 * the few special functions that needs. Internal to search/.
 *
 * Bayesian search works on these [0, 1] coordinates: a parameter's value
 * becomes cdf(value), a point u becomes ppf(u). Categoricals are read by
 * index, as W&B does: value i of n becomes (i + 1) / n, or the cumulative
 * probability of value i when the parameter has probabilities.
 */
#ifndef SW_TRANSFORM_H
#define SW_TRANSFORM_H

#include <stdbool.h>

#include "sweeps/spec.h"

/* True when `p` is searched (everything but constants). */
bool sw_transform__searchable(const sw_param *p);

/* The index of `v` among a categorical's values: equal first, else equal
 * as numbers (Python's ==, so 1 matches 1.0); -1 when absent. */
long sw_transform__index(const sw_param *p, const sw_value *v);

/* W&B's cdf of a value of `p`, in [0, 1]; NaN when `v` cannot be a value
 * of `p` (not a number, not among the values). Constants give 0. */
double sw_transform__cdf(const sw_param *p, const sw_value *v);

/* W&B's cdf of a number: the categorical index, or the value itself. */
double sw_transform__cdf_num(const sw_param *p, double x);

/* W&B's ppf: the value at `u` (clamped to [0, 1]); the caller owns it.
 * Unlike scipy, u = 0 gives the first value of a categorical or
 * int_uniform (scipy gives index -1 and min - 1), and a bounded
 * distribution gives its bounds exactly at u = 0 and 1 and never a value
 * outside them (see sw_transform__value). */
sw_value *sw_transform__ppf(const sw_param *p, double u);

/* The declared range [*lo, *hi] of a continuous distribution: min and max
 * (exp of them for log_uniform and q_log_uniform, [e^-max, e^-min] for
 * inv_log_uniform), [0, 1] for beta. False for the unbounded ones
 * (normal, log_normal and their q forms), categoricals and int_uniform. */
bool sw_transform__bounds(const sw_param *p, double *lo, double *hi);

/* The value of a continuous `p` at x (a ppf or a direct draw), the one
 * place every search's continuous values pass through: rounded to q as
 * W&B does, then kept inside the declared range, on the multiples of q
 * when one lies inside it. A rounding error of x or of k * q past a
 * bound gives the bound itself. The caller owns the result. */
sw_value *sw_transform__value(const sw_param *p, double x);

/* The categorical index ppf(u) picks, in [0, n_values). */
long sw_transform__ppf_index(const sw_param *p, double u);

/* Standard normal CDF and its inverse (full double precision). */
double sw_transform__norm_cdf(double x);
double sw_transform__norm_ppf(double u);

/* The regularized incomplete beta function I_x(a, b) and its inverse. */
double sw_transform__beta_cdf(double x, double a, double b);
double sw_transform__beta_ppf(double u, double a, double b);

#endif
