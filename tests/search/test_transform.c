/*
 * test_transform.c - W&B's cdf and ppf (sweeps/params.py): categoricals
 * normalised by index as W&B does, ints, the log families, and the
 * normal and beta functions against scipy's values.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <cmocka.h>

#include "fixture.h"
#include "search/transform.h"

static sw_param *abcd(sw_spec *s)
{
    return fx_values(s, "c", 4,
                     (sw_value *[]){sw_value_str("a"), sw_value_str("b"),
                                    sw_value_str("c"), sw_value_str("d")});
}

static void assert_str_value(sw_value *v, const char *want)
{
    assert_non_null(v);
    assert_int_equal(v->type, SW_STR);
    assert_string_equal(v->u.s, want);
    sw_value_free(v);
}

/* W&B: value i of n is randint.cdf(i, 0, n) = (i + 1) / n, and
 * ppf(u) = values[ceil(u n) - 1]. */
static void test_categorical_as_wandb(void **state)
{
    sw_spec s = {0};
    sw_param *p;
    sw_value *v = sw_value_str("b");

    (void)state;
    p = abcd(&s);
    assert_true(sw_transform__cdf(p, v) == 0.5);
    sw_value_free(v);
    v = sw_value_str("d");
    assert_true(sw_transform__cdf(p, v) == 1.0);
    sw_value_free(v);
    v = sw_value_str("zz");
    assert_true(isnan(sw_transform__cdf(p, v)));
    sw_value_free(v);
    assert_str_value(sw_transform__ppf(p, 0.25), "a");
    assert_str_value(sw_transform__ppf(p, 0.26), "b");
    assert_str_value(sw_transform__ppf(p, 0.75), "c");
    assert_str_value(sw_transform__ppf(p, 1.0), "d");
    /* scipy gives index -1 (the last value) at 0; we give the first */
    assert_str_value(sw_transform__ppf(p, 0.0), "a");
    fx_free(&s);
}

/* With probabilities: the cumulative probability, and the first value
 * whose cumulative probability exceeds u. */
static void test_categorical_with_probabilities(void **state)
{
    sw_spec s = {0};
    sw_param *p;
    sw_value *v = sw_value_str("b");

    (void)state;
    p = abcd(&s);
    p->probs = sw_calloc(4, sizeof(double));
    p->probs[0] = 0.1;
    p->probs[1] = 0.2;
    p->probs[2] = 0.3;
    p->probs[3] = 0.4;
    assert_float_equal(sw_transform__cdf(p, v), 0.3, 1e-12);
    sw_value_free(v);
    assert_str_value(sw_transform__ppf(p, 0.05), "a");
    assert_str_value(sw_transform__ppf(p, 0.1), "b");
    assert_str_value(sw_transform__ppf(p, 0.61), "d");
    assert_str_value(sw_transform__ppf(p, 1.0), "d");
    fx_free(&s);
}

/* Python's ==: 1 is found among [1.0, 2.0], true is not 1 */
static void test_index_by_python_equality(void **state)
{
    sw_spec s = {0};
    sw_param *p;
    sw_value *one = sw_value_int(1), *yes = sw_value_bool(true);

    (void)state;
    p = fx_values(&s, "x", 2,
                  (sw_value *[]){sw_value_float(1.0), sw_value_float(2.0)});
    assert_int_equal(sw_transform__index(p, one), 0);
    assert_int_equal(sw_transform__index(p, yes), -1);
    sw_value_free(one);
    sw_value_free(yes);
    fx_free(&s);
}

static void test_int_uniform(void **state)
{
    sw_spec s = {0};
    sw_param *p;
    sw_value *v;

    (void)state;
    p = fx_int(&s, "n", 1, 4);
    assert_true(sw_transform__cdf_num(p, 1) == 0.25);
    assert_true(sw_transform__cdf_num(p, 4) == 1.0);
    v = sw_transform__ppf(p, 0.25);
    assert_int_equal(v->u.i, 1);
    sw_value_free(v);
    v = sw_transform__ppf(p, 0.26);
    assert_int_equal(v->u.i, 2);
    sw_value_free(v);
    v = sw_transform__ppf(p, 0.0); /* scipy: min - 1 */
    assert_int_equal(v->type, SW_INT);
    assert_int_equal(v->u.i, 1);
    sw_value_free(v);
    v = sw_transform__ppf(p, 1.0);
    assert_int_equal(v->u.i, 4);
    sw_value_free(v);
    fx_free(&s);
}

static double ppf_num(const sw_param *p, double u)
{
    sw_value *v = sw_transform__ppf(p, u);
    double x = NAN;

    sw_value_number(v, &x);
    sw_value_free(v);
    return x;
}

/* W&B's formulas for the log families, v1 (exponents) and v2 (values). */
static void test_log_families(void **state)
{
    sw_spec s = {0};
    sw_param *lv, *iv, *l1, *i1;

    (void)state;
    lv = fx_range(&s, "a", SW_DIST_LOG_UNIFORM_VALUES, 1e-4, 1.0);
    iv = fx_range(&s, "b", SW_DIST_INV_LOG_UNIFORM_VALUES, 1e-4, 1.0);
    l1 = fx_range(&s, "c", SW_DIST_LOG_UNIFORM, log(1e-4), 0.0);
    i1 = fx_range(&s, "d", SW_DIST_INV_LOG_UNIFORM, 0.0, log(1e4));
    assert_float_equal(sw_transform__cdf_num(lv, 1e-2), 0.5, 1e-12);
    assert_float_equal(ppf_num(lv, 0.5), 1e-2, 1e-14);
    assert_float_equal(sw_transform__cdf_num(iv, 1e-3), 0.25, 1e-12);
    assert_float_equal(ppf_num(iv, 0.25), 1e-3, 1e-15);
    assert_float_equal(sw_transform__cdf_num(l1, 1e-3), 0.25, 1e-12);
    assert_float_equal(ppf_num(l1, 0.25), 1e-3, 1e-15);
    /* inv v1: values in [e^-max, e^-min] */
    assert_float_equal(sw_transform__cdf_num(i1, 1e-2), 0.5, 1e-12);
    assert_float_equal(ppf_num(i1, 0.5), 1e-2, 1e-14);
    fx_free(&s);
}

/* Reference values from scipy.stats 1.10. */
static void test_normal_and_beta_against_scipy(void **state)
{
    (void)state;
    assert_float_equal(sw_transform__norm_ppf(1e-10), -6.361340902404056,
                       1e-13);
    assert_float_equal(sw_transform__norm_ppf(0.975), 1.959963984540054, 1e-14);
    assert_float_equal(sw_transform__norm_ppf(0.3), -0.5244005127080409, 1e-14);
    assert_float_equal(sw_transform__norm_ppf(1 - 1e-12), 7.0344869100478356,
                       1e-6);
    assert_float_equal(sw_transform__norm_cdf(1.959963984540054), 0.975, 1e-15);
    assert_float_equal(sw_transform__beta_cdf(0.5, 2, 3), 0.6875, 1e-14);
    assert_float_equal(sw_transform__beta_cdf(0.3, 2.5, 0.7),
                       0.029814024845250465, 1e-13);
    assert_float_equal(sw_transform__beta_cdf(0.01, 0.2, 5), 0.5846698531754058,
                       1e-12);
    assert_float_equal(sw_transform__beta_ppf(0.9, 0.5, 0.5),
                       0.9755282581475768, 1e-12);
}

/* cdf(ppf(u)) is u for every continuous distribution; q rounds. */
static void test_round_trips(void **state)
{
    static const sw_dist dists[] = {SW_DIST_UNIFORM,
                                    SW_DIST_LOG_UNIFORM,
                                    SW_DIST_LOG_UNIFORM_VALUES,
                                    SW_DIST_INV_LOG_UNIFORM,
                                    SW_DIST_INV_LOG_UNIFORM_VALUES,
                                    SW_DIST_NORMAL,
                                    SW_DIST_LOG_NORMAL,
                                    SW_DIST_BETA};
    sw_spec s = {0};
    size_t k;
    int i;

    (void)state;
    for (k = 0; k < sizeof(dists) / sizeof(*dists); k++) {
        sw_param *p = fx_range(&s, "x", dists[k], 0.5, 3.0);

        p->mu = 1.0;
        p->sigma = 0.5;
        p->a = 2.5;
        p->b = 0.7;
        for (i = 1; i < 100; i++) {
            double u = i / 100.0;

            assert_float_equal(sw_transform__cdf_num(p, ppf_num(p, u)), u,
                               1e-9);
        }
    }
    fx_free(&s);
}

static void test_q_uniform_rounds(void **state)
{
    sw_spec s = {0};
    sw_param *p;
    sw_value *v;

    (void)state;
    p = fx_range(&s, "x", SW_DIST_Q_UNIFORM, 0.0, 100.0);
    p->q = 10;
    p->q_int = true;
    v = sw_transform__ppf(p, 0.234);
    assert_int_equal(v->type, SW_INT);
    assert_int_equal(v->u.i, 20);
    assert_float_equal(sw_transform__cdf(p, v), 0.2, 1e-15);
    sw_value_free(v);
    fx_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_categorical_as_wandb),
        cmocka_unit_test(test_categorical_with_probabilities),
        cmocka_unit_test(test_index_by_python_equality),
        cmocka_unit_test(test_int_uniform),
        cmocka_unit_test(test_log_families),
        cmocka_unit_test(test_normal_and_beta_against_scipy),
        cmocka_unit_test(test_round_trips),
        cmocka_unit_test(test_q_uniform_rounds),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
