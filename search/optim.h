/*
 * optim.h - a small box-constrained minimiser for the Gaussian process's
 * hyperparameters and for the acquisition function. Internal to search/.
 */
#ifndef SW_OPTIM_H
#define SW_OPTIM_H

#include <stddef.h>

/* f at x, its gradient into g (length n); returns f. */
typedef double (*sw_optim_fn)(void *ctx, const double *x, double *g);

/* Minimises f over lo <= x <= hi, from x (updated in place), with a
 * projected L-BFGS and backtracking; at most `iters` iterations and
 * n <= SW_OPTIM_MAX_N. Returns f at the final x. Deterministic. */
#define SW_OPTIM_MAX_N 128
double sw_optim__minimize(sw_optim_fn f, void *ctx, double *x, size_t n,
                          const double *lo, const double *hi, int iters);

#endif
