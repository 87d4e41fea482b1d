/*
 * sobol.h - scrambled Sobol points in [0, 1)^d, for the sobol strategy and
 * for the starting designs and candidate sets of Bayesian search.
 * Internal to search/.
 *
 * Direction numbers are Joe and Kuo's (new-joe-kuo-6.21201) for the first
 * SW_SOBOL_MAX_DIMS dimensions; points have 32 bits, so a sequence has
 * 2^32 points. Scrambling is Matousek's linear matrix scrambling plus a
 * digital shift, which keeps the net properties: the first 2^m points put
 * exactly one point in each interval [k / 2^m, (k + 1) / 2^m) of every
 * coordinate.
 */
#ifndef SW_SOBOL_H
#define SW_SOBOL_H

#include <stddef.h>
#include <stdint.h>

#include "search/rng.h"

#define SW_SOBOL_MAX_DIMS 64
#define SW_SOBOL_BITS 32

typedef struct {
    size_t dims;
    uint32_t v[SW_SOBOL_MAX_DIMS][SW_SOBOL_BITS]; /* scrambled directions */
    uint32_t shift[SW_SOBOL_MAX_DIMS];
} sw_sobol;

/* Prepares a sequence in min(dims, SW_SOBOL_MAX_DIMS) dimensions,
 * scrambled from `r`, or the plain sequence when `r` is NULL. */
void sw_sobol__init(sw_sobol *q, size_t dims, sw_rng *r);

/* Point `index` of the sequence (Gray-code order, as scipy's) into
 * u[0..q->dims). */
void sw_sobol__point(const sw_sobol *q, uint32_t index, double *u);

#endif
