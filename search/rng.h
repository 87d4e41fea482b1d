/*
 * rng.h - the explicit, seeded random generator every strategy uses.
 *
 * xoshiro256** seeded through splitmix64: the same seed gives the same
 * stream on every machine and compiler. A stream is plain data in caller
 * memory; there is no global generator.
 */
#ifndef SW_RNG_H
#define SW_RNG_H

#include <stdint.h>

typedef struct {
    uint64_t s[4];
} sw_rng;

/* Seeds `r` from `seed` and a stream number, so that (seed, stream) pairs
 * give independent streams (one per trial index, say). */
void sw_rng_seed(sw_rng *r, uint64_t seed, uint64_t stream);
uint64_t sw_rng_next(sw_rng *r);
/* Uniform in [0, 1), 53 random bits. */
double sw_rng_uniform(sw_rng *r);
/* Uniform integer in [0, n), without modulo bias; n > 0. */
uint64_t sw_rng_below(sw_rng *r, uint64_t n);
/* Standard normal. */
double sw_rng_normal(sw_rng *r);
/* Gamma(shape, 1), shape > 0. */
double sw_rng_gamma(sw_rng *r, double shape);
/* Beta(a, b), a, b > 0. */
double sw_rng_beta(sw_rng *r, double a, double b);

#endif
