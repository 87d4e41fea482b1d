/*
 * rng.c - the seeded generator: xoshiro256** with splitmix64 seeding, and
 * the few distributions the strategies draw from.
 *
 * Everything here is integer arithmetic or IEEE-exact operations (sqrt,
 * +, *, /) except log, exp and pow in the non-uniform draws, so the raw
 * stream and the uniforms are bit-identical on every platform; normal,
 * gamma and beta agree to the last ulp of the C library's log. The
 * generator is four words of state in caller memory: no globals, no
 * hidden caches (the polar method's second normal is dropped for that).
 */
#include "search/rng.h"

#include <math.h>

#define GOLDEN UINT64_C(0x9e3779b97f4a7c15)

/* splitmix64's output function: a bijection of 64-bit words. */
static uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

static uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

/* The start state is mix64(mix64(seed) ^ stream): for a fixed seed distinct
 * streams start apart, and for a fixed stream distinct seeds do. */
void sw_rng_seed(sw_rng *r, uint64_t seed, uint64_t stream)
{
    uint64_t x = mix64(mix64(seed) ^ stream);
    int i;

    for (i = 0; i < 4; i++) {
        x += GOLDEN;
        r->s[i] = mix64(x);
    }
}

uint64_t sw_rng_next(sw_rng *r)
{
    uint64_t *s = r->s;
    uint64_t out = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;

    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return out;
}

double sw_rng_uniform(sw_rng *r)
{
    return (double)(sw_rng_next(r) >> 11) * 0x1.0p-53;
}

/* Uniform in (0, 1): never 0, so its log is finite. */
static double uniform_open(sw_rng *r)
{
    return ((double)(sw_rng_next(r) >> 11) + 0.5) * 0x1.0p-53;
}

/* Rejects the draws below 2^64 mod n, so every residue is equally likely
 * (the same scheme as OpenBSD's arc4random_uniform). */
uint64_t sw_rng_below(sw_rng *r, uint64_t n)
{
    uint64_t min = (0 - n) % n;
    uint64_t x;

    do {
        x = sw_rng_next(r);
    } while (x < min);
    return x % n;
}

/* Marsaglia's polar method; only sqrt and log, no trigonometry. */
double sw_rng_normal(sw_rng *r)
{
    double u, v, s;

    do {
        u = 2.0 * sw_rng_uniform(r) - 1.0;
        v = 2.0 * sw_rng_uniform(r) - 1.0;
        s = u * u + v * v;
    } while (s >= 1.0 || s == 0.0);
    return u * sqrt(-2.0 * log(s) / s);
}

/* Marsaglia and Tsang (2000) for shape >= 1. */
static double gamma_big(sw_rng *r, double shape)
{
    double d = shape - 1.0 / 3.0;
    double c = 1.0 / sqrt(9.0 * d);

    for (;;) {
        double x = sw_rng_normal(r);
        double v = 1.0 + c * x;
        double u;

        if (v <= 0.0)
            continue;
        v = v * v * v;
        u = uniform_open(r);
        if (u < 1.0 - 0.0331 * (x * x) * (x * x))
            return d * v;
        if (log(u) < 0.5 * x * x + d * (1.0 - v + log(v)))
            return d * v;
    }
}

/* The log of a Gamma(shape) draw. Below shape 1 it uses the boost
 * G(a) = G(a + 1) * U^(1/a) in log space, which cannot underflow even when
 * the draw itself is far below the smallest double. */
static double gamma_log(sw_rng *r, double shape)
{
    if (shape >= 1.0)
        return log(gamma_big(r, shape));
    return log(gamma_big(r, shape + 1.0)) + log(uniform_open(r)) / shape;
}

double sw_rng_gamma(sw_rng *r, double shape)
{
    if (shape >= 1.0)
        return gamma_big(r, shape);
    return exp(gamma_log(r, shape));
}

/* X / (X + Y) with X ~ Gamma(a), Y ~ Gamma(b), computed as
 * 1 / (1 + e^(ln Y - ln X)) so tiny shapes do not give 0 / 0. */
double sw_rng_beta(sw_rng *r, double a, double b)
{
    double lx = gamma_log(r, a);
    double ly = gamma_log(r, b);

    return 1.0 / (1.0 + exp(ly - lx));
}
