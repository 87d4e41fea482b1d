/*
 * acq.h - expected improvement over a mixed search space, and where it is
 * highest. Internal to search/ (used by bayes.c).
 *
 * The Gaussian process sees features: one per real or int dimension (its
 * coordinate z in [0, 1]) and one per category of a categorical (one-hot,
 * the categories sharing one lengthscale). Expected improvement is taken
 * of a loss (lower is better) in the GP's units.
 */
#ifndef SW_ACQ_H
#define SW_ACQ_H

#include "search/gp.h"
#include "search/space.h"

typedef struct {
    const sw_space *sp; /* borrowed */
    size_t n;           /* features */
    size_t *first;      /* per dimension: its first feature */
    size_t *group;      /* per feature: its dimension (the GP's groups) */
} sw_features;

void sw_features__init(sw_features *f, const sw_space *sp);
void sw_features__dispose(sw_features *f);
/* The features of point z into x[0..f->n). */
void sw_features__of(const sw_features *f, const double *z, double *x);

typedef struct {
    const sw_features *f;
    const sw_gp *gp;
    double best; /* the incumbent loss, in the GP's units */
    /* Optional: points that must not be proposed (in a discrete space,
     * the configurations already tried); NULL: none. */
    bool (*taken)(const void *ctx, const double *z);
    const void *taken_ctx;
    /* Optional: the Sobol candidates, and as many perturbations of the
     * best points; 0: SW_ACQ_CANDIDATES. */
    size_t candidates;
} sw_acq;

#define SW_ACQ_CANDIDATES 512

/* log EI at point z; when g is not NULL, its gradient in z for the real
 * and int dimensions (0 for categoricals). */
double sw_acq__log_ei(const sw_acq *a, const double *z, double *g);

/* The best of the m points in z (m x dims) by EI, not taken, into z_out;
 * returns its log EI, or -INFINITY (z_out untouched) when all are taken. */
double sw_acq__best_of(const sw_acq *a, const double *z, size_t m,
                       double *z_out);

/* A point maximising EI into z_out: scrambled Sobol candidates over the
 * whole space and perturbations of the `n_near` points in `near` (k x
 * dims), the best few refined by L-BFGS on the continuous coordinates
 * and then by single-dimension moves on the discrete ones. Returns its
 * log EI, -INFINITY when every candidate was taken (z_out is then one of
 * them). Depends only on its arguments and r's state. */
double sw_acq__maximize(const sw_acq *a, const double *near, size_t n_near,
                        sw_rng *r, double *z_out);

#endif
