/*
 * extrapolate.h - a learning curve's value at a later iteration, from
 * the part of it seen so far: the power law y = a + b t^-c (the shape of
 * most loss curves, and the synthetic family's exactly), fitted by least
 * squares for the c in [0.2, 2] that fits best. Promotion ASHA ranks the
 * runs at a rung by it (`early_terminate.extrapolate`, docs/stopping.md):
 * a slow starter whose curve still falls steeply ranks above a run that
 * is ahead now but has flattened.
 */
#ifndef SW_EXTRAPOLATE_H
#define SW_EXTRAPOLATE_H

#include <stdbool.h>
#include <stddef.h>

/* The curve's value at iteration `at`, from its n values y[i] at
 * iterations t[i] >= 1 (in any order). With fewer than 3 distinct
 * iterations, or a fit that does not hold (values that are not finite),
 * the value at the latest iteration. The prediction is held within the
 * range the curve could reach: for a curve that falls (`falls`, a loss),
 * never above its latest value; for one that rises, never below it. */
double sw_extrapolate(const double *t, const double *y, size_t n, double at,
                      bool falls);

#endif
