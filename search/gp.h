/*
 * gp.h - Gaussian-process regression with a Matern 5/2 ARD kernel, for
 * Bayesian search. Internal to search/.
 *
 * Inputs are points of [0, 1]^d; outputs are expected standardised (mean
 * 0, spread 1), and the prior mean is 0. Inputs share lengthscales by
 * group (the one-hot columns of a categorical share one). The
 * hyperparameters (log lengthscales, log signal and noise variances) are
 * fitted by maximising the marginal likelihood times weak log-normal
 * priors. Predictions are of the latent function, without the noise.
 */
#ifndef SW_GP_H
#define SW_GP_H

#include <stddef.h>

#include "search/rng.h"

typedef struct {
    size_t d;        /* input dimensions */
    size_t n_groups; /* lengthscales */
    size_t *group;   /* d entries: the lengthscale each input uses */
    double *theta;   /* n_groups log lengthscales, log sf2, log sn2 */
    double *inv_ls2; /* d entries: 1 / lengthscale^2 */
    double sf2, sn2; /* signal and noise variances */
    size_t n;        /* points conditioned on */
    size_t cap;      /* points X, L and alpha have room for */
    double *X;       /* n x d, row-major */
    double *L;       /* n x n Cholesky factor of K, column-major, lower */
    double *alpha;   /* K^-1 y */
    struct sw_gp_scratch *ws; /* predictions' work space, kept */
} sw_gp;

/* A GP over `d` inputs whose lengthscales are group[k] < n_groups (group
 * NULL: one per input). Copies `group`. */
void sw_gp__init(sw_gp *gp, size_t d, const size_t *group, size_t n_groups);
void sw_gp__dispose(sw_gp *gp);

/* Puts the hyperparameters back at the prior's centre, keeping the
 * buffers: a GP reused for the next suggestion fits as a new one does,
 * without faulting its blocks in again. */
void sw_gp__reset(sw_gp *gp);

/* Fits the hyperparameters to (X, y), n points, from the prior's centre
 * and `restarts` more starts drawn from `r`, keeping the best; then
 * conditions on the same points. Fails with SW_ERROR when no fit gives a
 * positive-definite kernel matrix. */
int sw_gp__fit(sw_gp *gp, const double *X, const double *y, size_t n,
               int restarts, sw_rng *r);

/* Conditions on (X, y) with the hyperparameters as they are. */
int sw_gp__condition(sw_gp *gp, const double *X, const double *y, size_t n);

/* The posterior mean and variance at x, and when dmu and dvar are not
 * NULL their gradients in x. `work` holds 2 * gp->n doubles. */
void sw_gp__predict(const sw_gp *gp, const double *x, double *mu, double *var,
                    double *dmu, double *dvar, double *work);

/* The posterior means and variances at the m rows of Xs (m x d). Uses
 * the GP's kept work space: not for two threads on one GP at once. */
void sw_gp__predict_many(const sw_gp *gp, const double *Xs, size_t m,
                         double *mu, double *var);

#endif
