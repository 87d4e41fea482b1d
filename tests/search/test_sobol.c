/*
 * test_sobol.c - the Sobol sequence and the sobol strategy: Joe and Kuo's
 * plain points as scipy gives them, the net properties that survive
 * scrambling, a lower discrepancy than random points, and trials fixed
 * by (seed, index) and mapped through each parameter's ppf.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <cmocka.h>

#include "fixture.h"
#include "search/sobol.h"

/* scipy.stats.qmc.Sobol(4, scramble=False).random(8) */
static void test_plain_points_as_scipy(void **state)
{
    static const double want[8][4] = {
        {0, 0, 0, 0},
        {0.5, 0.5, 0.5, 0.5},
        {0.75, 0.25, 0.25, 0.25},
        {0.25, 0.75, 0.75, 0.75},
        {0.375, 0.375, 0.625, 0.875},
        {0.875, 0.875, 0.125, 0.375},
        {0.625, 0.125, 0.875, 0.625},
        {0.125, 0.625, 0.375, 0.125},
    };
    sw_sobol q;
    double u[4];
    int i, j;

    (void)state;
    sw_sobol__init(&q, 4, NULL);
    for (i = 0; i < 8; i++) {
        sw_sobol__point(&q, (uint32_t)i, u);
        for (j = 0; j < 4; j++)
            assert_true(u[j] == want[i][j]);
    }
}

/* The first 2^m points put one point in each 1/2^m interval of every
 * coordinate, plain or scrambled, in all SW_SOBOL_MAX_DIMS dims. */
static void test_every_axis_stratified(void **state)
{
    static sw_sobol q;
    static unsigned char hits[SW_SOBOL_MAX_DIMS][1024];
    double u[SW_SOBOL_MAX_DIMS];
    sw_rng r;
    int pass, i, j;

    (void)state;
    for (pass = 0; pass < 2; pass++) {
        sw_rng_seed(&r, 42, 0);
        sw_sobol__init(&q, SW_SOBOL_MAX_DIMS, pass ? &r : NULL);
        memset(hits, 0, sizeof(hits));
        for (i = 0; i < 1024; i++) {
            sw_sobol__point(&q, (uint32_t)i, u);
            for (j = 0; j < SW_SOBOL_MAX_DIMS; j++) {
                assert_true(u[j] >= 0.0 && u[j] < 1.0);
                hits[j][(int)(u[j] * 1024)]++;
            }
        }
        for (j = 0; j < SW_SOBOL_MAX_DIMS; j++)
            for (i = 0; i < 1024; i++)
                assert_int_equal(hits[j][i], 1);
    }
}

/* The first two dims form a (0, m, 2)-net: every elementary box of area
 * 2^-m, of any shape, holds one of the first 2^m points. */
static void test_first_pair_is_a_net(void **state)
{
    sw_sobol q;
    sw_rng r;
    double u[2], pts[256][2];
    int a, i, k, cnt[256];

    (void)state;
    sw_rng_seed(&r, 7, 1);
    sw_sobol__init(&q, 2, &r);
    for (i = 0; i < 256; i++) {
        sw_sobol__point(&q, (uint32_t)i, u);
        pts[i][0] = u[0];
        pts[i][1] = u[1];
    }
    for (a = 0; a <= 8; a++) { /* boxes 2^-a wide, 2^-(8-a) high */
        memset(cnt, 0, sizeof(cnt));
        for (i = 0; i < 256; i++) {
            int x = (int)(pts[i][0] * (1 << a));
            int y = (int)(pts[i][1] * (1 << (8 - a)));

            cnt[x * (1 << (8 - a)) + y]++;
        }
        for (k = 0; k < 256; k++)
            assert_int_equal(cnt[k], 1);
    }
}

/* Hickernell's centred L2 discrepancy of n points in s dims. */
static double centred_l2(const double *x, int n, int s)
{
    double a = 0.0, b = 0.0;
    int i, j, k;

    for (i = 0; i < n; i++) {
        double p = 1.0;

        for (k = 0; k < s; k++) {
            double t = fabs(x[i * s + k] - 0.5);

            p *= 1.0 + 0.5 * t - 0.5 * t * t;
        }
        a += p;
        for (j = 0; j < n; j++) {
            double q = 1.0;

            for (k = 0; k < s; k++) {
                double ti = fabs(x[i * s + k] - 0.5);
                double tj = fabs(x[j * s + k] - 0.5);

                q *= 1.0 + 0.5 * ti + 0.5 * tj -
                     0.5 * fabs(x[i * s + k] - x[j * s + k]);
            }
            b += q;
        }
    }
    return sqrt(pow(13.0 / 12.0, s) - 2.0 * a / n + b / ((double)n * n));
}

/* 128 scrambled points in 5 dims beat every one of 10 random sets. */
static void test_lower_discrepancy_than_random(void **state)
{
    static double x[128 * 5];
    sw_sobol q;
    sw_rng r;
    double qmc;
    int i, k, set;

    (void)state;
    sw_rng_seed(&r, 3, 0);
    sw_sobol__init(&q, 5, &r);
    for (i = 0; i < 128; i++)
        sw_sobol__point(&q, (uint32_t)i, &x[i * 5]);
    qmc = centred_l2(x, 128, 5);
    for (set = 0; set < 10; set++) {
        for (k = 0; k < 128 * 5; k++)
            x[k] = sw_rng_uniform(&r);
        assert_true(qmc < 0.5 * centred_l2(x, 128, 5));
    }
}

static void make_spec(sw_spec *s)
{
    *s = (sw_spec){.method = SW_METHOD_SOBOL};
    fx_range(s, "lr", SW_DIST_LOG_UNIFORM_VALUES, 1e-5, 1e-1);
    fx_int(s, "n", 1, 8);
    fx_values(s, "opt.name", 3,
              (sw_value *[]){sw_value_str("adam"), sw_value_str("sgd"),
                             sw_value_str("rms")});
    fx_const(s, "tag", sw_value_str("x"));
}

/* Trial i is fixed by (seed, i); values come through each ppf; the first
 * 8 trials take each eighth of lr's log range once. */
static void test_strategy(void **state)
{
    sw_spec s;
    sw_search *a, *b, *c;
    sw_trial t, u, w;
    int i, seen[8] = {0}, same = 0;
    uint64_t count;
    bool bounded, saturated;

    (void)state;
    make_spec(&s);
    assert_int_equal(sw_search_new(&a, &s, 5), SW_OK);
    assert_int_equal(sw_search_new(&b, &s, 5), SW_OK);
    assert_int_equal(sw_search_new(&c, &s, 6), SW_OK);
    sw_trial_init(&t);
    sw_trial_init(&u);
    sw_trial_init(&w);
    for (i = 0; i < 8; i++) {
        double lr;

        assert_int_equal(sw_search_next(a, &t), SW_OK);
        assert_int_equal(sw_search_at(b, (uint64_t)i, &u), SW_OK);
        assert_int_equal(sw_search_at(c, (uint64_t)i, &w), SW_OK);
        assert_true(sw_value_equal(t.params, u.params));
        same += sw_value_equal(t.params, w.params);
        assert_true(sw_value_number(fx_get(t.params, "lr"), &lr));
        seen[(int)((log10(lr) + 5.0) / 4.0 * 8.0)]++;
        assert_int_equal(fx_get(t.params, "n")->type, SW_INT);
        assert_int_equal(fx_get(t.params, "opt.name")->type, SW_STR);
        assert_string_equal(fx_get(t.params, "tag")->u.s, "x");
    }
    for (i = 0; i < 8; i++)
        assert_int_equal(seen[i], 1);
    assert_int_equal(same, 0);
    sw_search_size(a, &count, &bounded, &saturated);
    assert_true(bounded);
    assert_true(count == UINT64_C(1) << 32);
    assert_int_equal(sw_search_at(a, UINT64_C(1) << 32, &t), SW_EDONE);
    sw_trial_dispose(&t);
    sw_trial_dispose(&u);
    sw_trial_dispose(&w);
    sw_search_free(a);
    sw_search_free(b);
    sw_search_free(c);
    fx_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plain_points_as_scipy),
        cmocka_unit_test(test_every_axis_stratified),
        cmocka_unit_test(test_first_pair_is_a_net),
        cmocka_unit_test(test_lower_discrepancy_than_random),
        cmocka_unit_test(test_strategy),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
