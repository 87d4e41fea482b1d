/*
 * test_sample.c - one draw of each distribution, as W&B's random search
 * makes them: ranges, moments over many draws, numpy's half-to-even
 * rounding, and ints versus floats by how q was written.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <cmocka.h>

#include "search/strategy.h"
#include "fixture.h"

#define N 20000

typedef struct {
    double mean, var, lo, hi;
} stats;

/* Draws `p` N times; every draw must have type `type`. */
static stats draw(const sw_param *p, sw_type type, uint64_t seed)
{
    stats st = {0, 0, INFINITY, -INFINITY};
    double s = 0, ss = 0;
    sw_rng r;
    int i;

    sw_rng_seed(&r, seed, 0);
    for (i = 0; i < N; i++) {
        sw_value *v = sw_param_sample(p, &r);
        double x;

        assert_int_equal(v->type, type);
        assert_true(sw_value_number(v, &x));
        s += x;
        ss += x * x;
        st.lo = x < st.lo ? x : st.lo;
        st.hi = x > st.hi ? x : st.hi;
        sw_value_free(v);
    }
    st.mean = s / N;
    st.var = ss / N - st.mean * st.mean;
    return st;
}

/* The same over log(x), for the log families. */
static stats draw_log(const sw_param *p)
{
    stats st = {0, 0, INFINITY, -INFINITY};
    double s = 0;
    sw_rng r;
    int i;

    sw_rng_seed(&r, 5, 0);
    for (i = 0; i < N; i++) {
        sw_value *v = sw_param_sample(p, &r);
        double x = v->u.f;

        assert_int_equal(v->type, SW_FLOAT);
        assert_true(x > 0);
        st.lo = x < st.lo ? x : st.lo;
        st.hi = x > st.hi ? x : st.hi;
        s += log(x);
        sw_value_free(v);
    }
    st.mean = s / N;
    return st;
}

static void test_uniform(void **state)
{
    sw_spec s = {0};
    stats st = draw(fx_range(&s, "x", SW_DIST_UNIFORM, 3, 5), SW_FLOAT, 1);

    (void)state;
    assert_true(st.lo >= 3 && st.hi < 5);
    assert_true(fabs(st.mean - 4) < 0.02);
    assert_true(fabs(st.var - 4.0 / 12) < 0.01);
    fx_free(&s);
}

static void test_int_uniform_includes_both_ends(void **state)
{
    sw_spec s = {0};
    sw_param *p = fx_int(&s, "n", -2, 2);
    int counts[5] = {0};
    sw_rng r;
    int i;

    (void)state;
    sw_rng_seed(&r, 2, 0);
    for (i = 0; i < N; i++) {
        sw_value *v = sw_param_sample(p, &r);

        assert_int_equal(v->type, SW_INT);
        assert_true(v->u.i >= -2 && v->u.i <= 2);
        counts[v->u.i + 2]++;
        sw_value_free(v);
    }
    for (i = 0; i < 5; i++) /* 4000 expected, sd 57 */
        assert_true(abs(counts[i] - 4000) < 5 * 57);
    /* the whole int64 range is a span of 2^64 */
    p->imin = INT64_MIN;
    p->imax = INT64_MAX;
    for (i = 0; i < 10; i++)
        sw_value_free(sw_param_sample(p, &r));
    fx_free(&s);
}

static void test_quantize_rounds_half_to_even(void **state)
{
    static const double in[] = {0.5, 1.5, 2.5, -0.5, -1.5, 2.4999, 2.5001};
    static const double out[] = {0, 2, 2, -0.0, -2, 2, 3};
    sw_spec s = {0};
    sw_param *p = fx_param(&s, "q", SW_DIST_Q_UNIFORM);
    sw_value *v;
    size_t i;

    (void)state;
    for (i = 0; i < sizeof(in) / sizeof(*in); i++) {
        v = sw_sample__quantize(p, in[i]);
        assert_int_equal(v->type, SW_FLOAT); /* default q is 1.0 */
        assert_true(v->u.f == out[i]);
        assert_true(signbit(v->u.f) == signbit(out[i]));
        sw_value_free(v);
    }
    p->q = 0.5; /* 1.25 / 0.5 = 2.5, rounds to 2, so 1.0 */
    v = sw_sample__quantize(p, 1.25);
    assert_true(v->u.f == 1.0);
    sw_value_free(v);
    p->q = 2;
    p->q_int = true; /* q: 2 written as an int: astype(int) */
    v = sw_sample__quantize(p, 5.0);
    assert_int_equal(v->type, SW_INT);
    assert_int_equal(v->u.i, 4);
    sw_value_free(v);
    v = sw_sample__quantize(p, 1e300); /* saturates, no UB */
    assert_true(v->u.i == INT64_MAX);
    sw_value_free(v);
    fx_free(&s);
}

/* Every draw of `p` is a multiple of its q. */
static void assert_multiples(const sw_param *p, sw_type type)
{
    sw_rng r;
    int i;

    sw_rng_seed(&r, 11, 0);
    for (i = 0; i < 2000; i++) {
        sw_value *v = sw_param_sample(p, &r);
        double x, k;

        assert_int_equal(v->type, type);
        assert_true(sw_value_number(v, &x));
        k = x / p->q;
        assert_true(fabs(k - rint(k)) < 1e-6 * fmax(1, fabs(k)));
        sw_value_free(v);
    }
}

static void test_q_distributions(void **state)
{
    static const double qs[] = {0.1, 1, 10};
    size_t i;

    (void)state;
    for (i = 0; i < 3; i++) {
        sw_spec s = {0};
        sw_param *ps[6];
        size_t j;

        ps[0] = fx_range(&s, "a", SW_DIST_Q_UNIFORM, 0, 100);
        ps[1] = fx_range(&s, "b", SW_DIST_Q_LOG_UNIFORM_VALUES, 0.1, 100);
        ps[2] = fx_range(&s, "c", SW_DIST_Q_LOG_UNIFORM, log(0.1), log(100));
        ps[3] = fx_param(&s, "d", SW_DIST_Q_NORMAL);
        ps[4] = fx_param(&s, "e", SW_DIST_Q_LOG_NORMAL);
        ps[5] = fx_param(&s, "f", SW_DIST_Q_BETA);
        ps[3]->mu = 4, ps[3]->sigma = 2;
        ps[4]->mu = 2, ps[4]->sigma = 2;
        ps[5]->a = 2, ps[5]->b = 5;
        for (j = 0; j < 6; j++) {
            ps[j]->q = qs[i];
            assert_multiples(ps[j], SW_FLOAT);
            ps[j]->q_int = qs[i] >= 1;
            if (ps[j]->q_int)
                assert_multiples(ps[j], SW_INT);
        }
        fx_free(&s);
    }
}

static void test_log_families(void **state)
{
    sw_spec s = {0};
    sw_param *a = fx_range(&s, "a", SW_DIST_LOG_UNIFORM_VALUES, 5, 100);
    sw_param *b = fx_range(&s, "b", SW_DIST_LOG_UNIFORM, log(5), log(100));
    sw_param *c =
        fx_range(&s, "c", SW_DIST_INV_LOG_UNIFORM_VALUES, 1e-15, 1e20);
    sw_param *d =
        fx_range(&s, "d", SW_DIST_INV_LOG_UNIFORM, log(1e-20), log(1e15));
    double mid = (log(5) + log(100)) / 2, mid2 = (log(1e-15) + log(1e20)) / 2;
    stats st;

    (void)state;
    st = draw_log(a);
    assert_true(st.lo >= 5 && st.hi <= 100 * (1 + 1e-12));
    assert_true(fabs(st.mean - mid) < 0.02);
    st = draw_log(b);
    assert_true(st.lo >= 5 * (1 - 1e-12) && st.hi <= 100 * (1 + 1e-12));
    assert_true(fabs(st.mean - mid) < 0.02);
    /* inv_log_uniform_values: the same law as log_uniform_values */
    st = draw_log(c);
    assert_true(st.lo >= 1e-15 * (1 - 1e-9) && st.hi <= 1e20 * (1 + 1e-9));
    assert_true(fabs(st.mean - mid2) < 0.85); /* 5 sd */
    /* inv_log_uniform: exp(-U(min, max)), in [e^-max, e^-min] */
    st = draw_log(d);
    assert_true(st.lo >= 1e-15 * (1 - 1e-9) && st.hi <= 1e20 * (1 + 1e-9));
    assert_true(fabs(st.mean - mid2) < 0.85); /* 5 sd */
    fx_free(&s);
}

static void test_normal_families(void **state)
{
    sw_spec s = {0};
    sw_param *n = fx_param(&s, "n", SW_DIST_NORMAL);
    sw_param *ln = fx_param(&s, "ln", SW_DIST_LOG_NORMAL);
    stats st;

    (void)state;
    n->mu = 2, n->sigma = 3;
    st = draw(n, SW_FLOAT, 3);
    assert_true(fabs(st.mean - 2) < 5 * 3 / sqrt(N));
    assert_true(fabs(st.var - 9) < 0.5);
    ln->mu = 2, ln->sigma = 0.5;
    st = draw_log(ln);
    assert_true(fabs(st.mean - 2) < 5 * 0.5 / sqrt(N));
    fx_free(&s);
}

static void test_beta(void **state)
{
    sw_spec s = {0};
    sw_param *p = fx_param(&s, "b", SW_DIST_BETA);
    stats st;

    (void)state;
    p->a = 2, p->b = 5;
    st = draw(p, SW_FLOAT, 4);
    assert_true(st.lo >= 0 && st.hi <= 1);
    assert_true(fabs(st.mean - 2.0 / 7) < 0.005);
    fx_free(&s);
}

/* Counts the draws of each value index of a categorical `p`. */
static void count_choices(const sw_param *p, int *counts, int n)
{
    sw_rng r;
    int i;
    size_t j;

    sw_rng_seed(&r, 6, 0);
    for (i = 0; i < n; i++) {
        sw_value *v = sw_param_sample(p, &r);

        for (j = 0; j < p->n_values; j++)
            if (sw_value_equal(v, p->values[j]))
                counts[j]++;
        sw_value_free(v);
    }
}

static void test_categorical(void **state)
{
    static const double w[] = {0.1, 0.25, 0.15, 0.2, 0.3};
    sw_spec s = {0};
    sw_value *vals[5];
    sw_param *p;
    int counts[5] = {0};
    int i;

    (void)state;
    for (i = 0; i < 5; i++)
        vals[i] = sw_value_int(i);
    p = fx_values(&s, "c", 5, vals);
    count_choices(p, counts, N);
    for (i = 0; i < 5; i++)
        assert_true(abs(counts[i] - N / 5) < 5 * 57);
    p->probs = sw_calloc(5, sizeof(double));
    for (i = 0; i < 5; i++) {
        p->probs[i] = w[i];
        counts[i] = 0;
    }
    count_choices(p, counts, N);
    for (i = 0; i < 5; i++) /* within 5 sd of the binomial count */
        assert_true(fabs(counts[i] - N * w[i]) <
                    5 * sqrt(N * w[i] * (1 - w[i])));
    p->probs[0] = 0.5, p->probs[1] = 0, p->probs[2] = 0.5;
    p->n_values = 3; /* values 3 and 4 stay owned by the spec */
    memset(counts, 0, sizeof(counts));
    count_choices(p, counts, 2000);
    assert_int_equal(counts[1], 0);
    assert_int_equal(counts[0] + counts[2], 2000);
    p->n_values = 5;
    fx_free(&s);
}

static void test_constant_is_copied(void **state)
{
    sw_spec s = {0};
    sw_value *m = sw_value_map();
    sw_param *p;
    sw_value *v;
    sw_rng r;

    (void)state;
    sw_value_map_set(m, "k", sw_value_str("v"));
    p = fx_const(&s, "c", m);
    sw_rng_seed(&r, 1, 1);
    v = sw_param_sample(p, &r);
    assert_true(v != p->value && sw_value_equal(v, p->value));
    sw_value_free(v);
    fx_free(&s);
}

static void test_same_seed_same_draws(void **state)
{
    sw_spec s = {0};
    sw_param *p = fx_param(&s, "g", SW_DIST_Q_LOG_NORMAL);
    sw_rng a, b;
    int i;

    (void)state;
    p->q = 0.01;
    sw_rng_seed(&a, 77, 5);
    sw_rng_seed(&b, 77, 5);
    for (i = 0; i < 100; i++) {
        sw_value *x = sw_param_sample(p, &a), *y = sw_param_sample(p, &b);

        assert_true(sw_value_equal(x, y));
        sw_value_free(x);
        sw_value_free(y);
    }
    fx_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_uniform),
        cmocka_unit_test(test_int_uniform_includes_both_ends),
        cmocka_unit_test(test_quantize_rounds_half_to_even),
        cmocka_unit_test(test_q_distributions),
        cmocka_unit_test(test_log_families),
        cmocka_unit_test(test_normal_families),
        cmocka_unit_test(test_beta),
        cmocka_unit_test(test_categorical),
        cmocka_unit_test(test_constant_is_copied),
        cmocka_unit_test(test_same_seed_same_draws),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
