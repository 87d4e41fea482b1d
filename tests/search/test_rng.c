/*
 * test_rng.c - the seeded generator: pinned outputs (to catch drift
 * between platforms and compilers), stream independence, and the moments
 * of each distribution over many draws.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdlib.h>
#include <cmocka.h>

#include "search/rng.h"

#define N 20000

static void test_pinned_outputs(void **state)
{
    /* Computed by an independent transcription of splitmix64 and
     * xoshiro256** (Python, arbitrary-precision integers masked). */
    static const uint64_t want[] = {
        UINT64_C(0xa079be94a9a52920), UINT64_C(0xefcbdb5ddc36f0b2),
        UINT64_C(0xadc037b39358fe9a), UINT64_C(0x15fce3d667cde727)};
    sw_rng r;
    size_t i;

    (void)state;
    sw_rng_seed(&r, 42, 0);
    for (i = 0; i < 4; i++)
        assert_true(sw_rng_next(&r) == want[i]);
    sw_rng_seed(&r, 42, 7);
    assert_true(sw_rng_next(&r) == UINT64_C(0x14272375a85d05e4));
    assert_true(sw_rng_next(&r) == UINT64_C(0xa70bc9f08ead23ce));
    sw_rng_seed(&r, 0, 0);
    assert_true(sw_rng_uniform(&r) == 0.6012629994179048);
}

static void test_streams_are_reproducible_and_distinct(void **state)
{
    sw_rng a, b, c, d;
    int i, same_bc = 0, same_bd = 0;

    (void)state;
    sw_rng_seed(&a, 9, 3);
    sw_rng_seed(&b, 9, 3);
    sw_rng_seed(&c, 9, 4);
    sw_rng_seed(&d, 10, 3);
    for (i = 0; i < 100; i++) {
        uint64_t x = sw_rng_next(&a), y = sw_rng_next(&b);

        assert_true(x == y);
        same_bc += sw_rng_next(&c) == y;
        same_bd += sw_rng_next(&d) == y;
    }
    assert_int_equal(same_bc, 0);
    assert_int_equal(same_bd, 0);
}

static void test_uniform_range_and_mean(void **state)
{
    sw_rng r;
    double sum = 0.0, lo = 1.0, hi = 0.0;
    int i;

    (void)state;
    sw_rng_seed(&r, 1, 0);
    for (i = 0; i < N; i++) {
        double u = sw_rng_uniform(&r);

        assert_true(u >= 0.0 && u < 1.0);
        sum += u;
        lo = u < lo ? u : lo;
        hi = u > hi ? u : hi;
    }
    assert_true(fabs(sum / N - 0.5) < 0.01);
    assert_true(lo < 0.001 && hi > 0.999);
}

static void test_below_is_unbiased(void **state)
{
    sw_rng r;
    int counts[3] = {0, 0, 0};
    int i;

    (void)state;
    sw_rng_seed(&r, 2, 0);
    for (i = 0; i < 30000; i++)
        counts[sw_rng_below(&r, 3)]++;
    for (i = 0; i < 3; i++)
        assert_true(abs(counts[i] - 10000) < 5 * 82); /* 5 sd */
    for (i = 0; i < 100; i++) {
        assert_true(sw_rng_below(&r, 1) == 0);
        /* a bound just above 2^63 rejects half the words */
        assert_true(sw_rng_below(&r, (UINT64_C(1) << 63) + 1) <=
                    (UINT64_C(1) << 63));
    }
}

/* Mean and variance of `n` draws of `f`. */
static void moments(double (*f)(sw_rng *, double, double), double a, double b,
                    double *mean, double *var)
{
    sw_rng r;
    double s = 0.0, ss = 0.0;
    int i;

    sw_rng_seed(&r, 3, (uint64_t)(a * 1000 + b));
    for (i = 0; i < N; i++) {
        double x = f(&r, a, b);

        assert_false(isnan(x));
        s += x;
        ss += x * x;
    }
    *mean = s / N;
    *var = ss / N - *mean * *mean;
}

static double draw_normal(sw_rng *r, double a, double b)
{
    (void)a;
    (void)b;
    return sw_rng_normal(r);
}

static double draw_gamma(sw_rng *r, double a, double b)
{
    double x = sw_rng_gamma(r, a);

    (void)b;
    assert_true(x >= 0.0);
    return x;
}

static double draw_beta(sw_rng *r, double a, double b)
{
    double x = sw_rng_beta(r, a, b);

    assert_true(x >= 0.0 && x <= 1.0);
    return x;
}

static void test_normal_moments(void **state)
{
    double m, v;

    (void)state;
    moments(draw_normal, 0, 0, &m, &v);
    assert_true(fabs(m) < 0.035); /* 5 sd of the mean */
    assert_true(fabs(v - 1.0) < 0.05);
}

static void test_gamma_moments(void **state)
{
    static const double shapes[] = {0.05, 0.3, 1.0, 2.5, 9.0};
    size_t i;

    (void)state;
    for (i = 0; i < sizeof(shapes) / sizeof(*shapes); i++) {
        double k = shapes[i], m, v;

        moments(draw_gamma, k, 0, &m, &v);
        /* mean k, variance k; 5 sd of the mean is 5 sqrt(k / N) */
        assert_true(fabs(m - k) < 5 * sqrt(k / N) + 1e-3);
        assert_true(fabs(v - k) < 0.1 * k + 0.01);
    }
}

static void test_beta_moments(void **state)
{
    double m, v;

    (void)state;
    moments(draw_beta, 2, 5, &m, &v);
    assert_true(fabs(m - 2.0 / 7) < 0.005);
    assert_true(fabs(v - 10.0 / (49 * 8)) < 0.002);
    moments(draw_beta, 0.5, 0.5, &m, &v);
    assert_true(fabs(m - 0.5) < 0.02);
    assert_true(fabs(v - 0.125) < 0.01);
    /* tiny shapes: both gammas underflow, the draw still lands in [0,1] */
    moments(draw_beta, 0.001, 0.001, &m, &v);
    assert_true(fabs(m - 0.5) < 0.05);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pinned_outputs),
        cmocka_unit_test(test_streams_are_reproducible_and_distinct),
        cmocka_unit_test(test_uniform_range_and_mean),
        cmocka_unit_test(test_below_is_unbiased),
        cmocka_unit_test(test_normal_moments),
        cmocka_unit_test(test_gamma_moments),
        cmocka_unit_test(test_beta_moments),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
