/*
 * test_extrapolate.c - a curve's value at a later iteration from its
 * first part (search/extrapolate.c): exact power laws come back exact;
 * two curves that cross later rank in their final order from what the
 * first rungs show; too few points, or points that are not numbers,
 * give the latest value; the prediction never goes past it the wrong way.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <cmocka.h>

#include "search/extrapolate.h"

static double law(double a, double b, double c, double t)
{
    return a + b * pow(t, -c);
}

/* y = a + b t^-c at t = 1..n, predicted at `at`. */
static double predict(double a, double b, double c, int n, double at,
                      bool falls)
{
    double t[100], y[100];
    int i;

    for (i = 0; i < n; i++) {
        t[i] = i + 1;
        y[i] = law(a, b, c, t[i]);
    }
    return sw_extrapolate(t, y, (size_t)n, at, falls);
}

static void test_a_power_law_comes_back(void **state)
{
    (void)state;
    /* c on the grid (0.2 .. 2 by 0.1): the fit is exact */
    assert_float_equal(predict(0.4, 1.5, 0.5, 9, 81, true),
                       law(0.4, 1.5, 0.5, 81), 1e-9);
    assert_float_equal(predict(0.1, 2.0, 1.0, 3, 81, true),
                       law(0.1, 2.0, 1.0, 81), 1e-9);
    /* a rising curve (accuracy): b < 0 */
    assert_float_equal(predict(0.95, -0.5, 0.7, 27, 81, false),
                       law(0.95, -0.5, 0.7, 81), 1e-9);
    /* off the grid: the refined c */
    assert_float_equal(predict(0.4, 1.5, 0.55, 9, 81, true),
                       law(0.4, 1.5, 0.55, 81), 1e-4);
    assert_float_equal(predict(0.3, 0.8, 1.234, 27, 81, true),
                       law(0.3, 0.8, 1.234, 81), 1e-4);
}

/* The synthetic family's case: at rung 9 the slow starter (large model)
 * is behind, yet ends ahead at 81; by the value at 9 it ranks last, by
 * its extrapolation first. */
static void test_curves_that_cross_rank_by_their_ends(void **state)
{
    double fast_9 = law(0.45, 0.6, 1.2, 9), slow_9 = law(0.30, 1.4, 0.6, 9);
    double fast = predict(0.45, 0.6, 1.2, 9, 81, true);
    double slow = predict(0.30, 1.4, 0.6, 9, 81, true);

    (void)state;
    assert_true(slow_9 > fast_9);
    assert_true(slow < fast);
    assert_float_equal(slow, law(0.30, 1.4, 0.6, 81), 1e-6);
}

static void test_without_a_fit_the_latest_value(void **state)
{
    double t[] = {1, 2, 3}, y[] = {0.9, NAN, 0.7}, late[] = {3, 1, 2},
           ylate[] = {0.5, 0.9, 0.7};

    (void)state;
    assert_float_equal(sw_extrapolate(t, (double[]){0.9, 0.8}, 2, 81, true),
                       0.8, 0);
    assert_float_equal(sw_extrapolate(t, y, 3, 81, true), 0.7, 0);
    /* the latest is the highest iteration, in any order */
    assert_float_equal(sw_extrapolate(late, ylate, 1, 81, true), 0.5, 0);
    /* no later iteration to predict */
    assert_float_equal(sw_extrapolate(late, ylate, 3, 3, true), 0.5, 0);
    /* the same iteration three times: nothing to fit */
    assert_float_equal(sw_extrapolate((double[]){2, 2, 2}, ylate, 3, 81, true),
                       0.7, 0);
    assert_true(isnan(sw_extrapolate(t, y, 0, 81, true)));
}

/* A loss that rises (overfitting) is not predicted to rise further past
 * its latest value's side: never above it for a falling metric. */
static void test_never_past_the_latest_the_wrong_way(void **state)
{
    double t[] = {1, 2, 3, 4, 5}, y[] = {0.5, 0.55, 0.6, 0.65, 0.7};

    (void)state;
    assert_true(sw_extrapolate(t, y, 5, 81, true) <= 0.7);
    assert_float_equal(sw_extrapolate(t, y, 5, 81, true), 0.7, 0);
    assert_true(predict(0.95, -0.5, 0.7, 5, 81, false) >=
                law(0.95, -0.5, 0.7, 5));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_power_law_comes_back),
        cmocka_unit_test(test_curves_that_cross_rank_by_their_ends),
        cmocka_unit_test(test_without_a_fit_the_latest_value),
        cmocka_unit_test(test_never_past_the_latest_the_wrong_way),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
