/*
 * test_tpe.c - method: tpe. It minimises and maximises, ranks failed runs
 * last (metric.impute) and runs in flight as the worst (constant liar),
 * survives NaN results, gives parallel suggestions that differ, starts
 * with a Sobol design, and is a function of the seed and the recorded
 * history only.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <cmocka.h>

#include "fixture.h"

static double num(const sw_value *params, const char *name)
{
    double x = NAN;

    assert_true(sw_value_number(fx_get(params, name), &x));
    return x;
}

/* A bowl with its minimum 0 at x = 0.3, y = 0.7. */
static double bowl(const sw_value *p)
{
    double x = num(p, "x") - 0.3, y = num(p, "y") - 0.7;

    return x * x + y * y;
}

static void bowl_spec(sw_spec *s, sw_method m)
{
    *s = (sw_spec){.method = m};
    fx_range(s, "x", SW_DIST_UNIFORM, 0.0, 1.0);
    fx_range(s, "y", SW_DIST_UNIFORM, 0.0, 1.0);
}

/* n sequential trials of f (negated when `negate`); the best f. */
static double drive(sw_search *s, int n, double (*f)(const sw_value *),
                    bool negate)
{
    sw_trial t;
    double best = INFINITY;
    int i;

    sw_trial_init(&t);
    for (i = 0; i < n; i++) {
        double y;

        assert_int_equal(sw_search_next(s, &t), SW_OK);
        y = f(t.params);
        assert_int_equal(sw_search_observe(s, &t, negate ? -y : y), SW_OK);
        best = y < best ? y : best;
    }
    sw_trial_dispose(&t);
    return best;
}

static double dist(const sw_trial *a, const sw_trial *b)
{
    double dx = num(a->params, "x") - num(b->params, "x");
    double dy = num(a->params, "y") - num(b->params, "y");

    return sqrt(dx * dx + dy * dy);
}

/* A categorical with one good value, an int with one best value, nested:
 * the values suggested are the parameter's own, and the search finds the
 * good category and the best int. */
static double mixed(const sw_value *p)
{
    const sw_value *c = fx_get(p, "opt.name");
    double n = num(p, "opt.n"), off = strcmp(c->u.s, "sgd") ? 1.0 : 0.0;

    return off + (n - 6) * (n - 6) / 16.0 +
           (num(p, "x") - 0.4) * (num(p, "x") - 0.4);
}

static void mixed_spec(sw_spec *s, sw_method m)
{
    *s = (sw_spec){.method = m};
    fx_int(s, "opt.n", 1, 12);
    fx_values(s, "opt.name", 3,
              (sw_value *[]){sw_value_str("adam"), sw_value_str("sgd"),
                             sw_value_str("rms")});
    fx_const(s, "tag", sw_value_str("t"));
    fx_range(s, "x", SW_DIST_UNIFORM, 0.0, 1.0);
}

static void test_minimise_and_maximise(void **state)
{
    sw_spec s;
    sw_search *a, *b;

    (void)state;
    bowl_spec(&s, SW_METHOD_TPE);
    assert_int_equal(sw_search_new(&a, &s, 1), SW_OK);
    assert_true(drive(a, 60, bowl, false) < 5e-3);
    s.metric.goal = SW_GOAL_MAXIMIZE;
    assert_int_equal(sw_search_new(&b, &s, 1), SW_OK);
    assert_true(drive(b, 60, bowl, true) < 5e-3);
    sw_search_free(a);
    sw_search_free(b);
    fx_free(&s);
}

/* Runs right of x = 0.6 fail: they rank last, and the search moves left,
 * to the optimum at 0.5. */
static void test_nan_results(void **state)
{
    sw_spec s = {.method = SW_METHOD_TPE};
    sw_search *b;
    sw_trial t;
    int i, failed_late = 0;
    double best = INFINITY;

    (void)state;
    fx_range(&s, "x", SW_DIST_UNIFORM, 0.0, 1.0);
    assert_int_equal(sw_search_new(&b, &s, 3), SW_OK);
    sw_trial_init(&t);
    for (i = 0; i < 60; i++) {
        double x, y;

        assert_int_equal(sw_search_next(b, &t), SW_OK);
        x = num(t.params, "x");
        y = x >= 0.6 ? NAN : (x - 0.5) * (x - 0.5);
        assert_int_equal(sw_search_observe(b, &t, y), SW_OK);
        if (isnan(y))
            failed_late += i >= 30;
        else if (y < best)
            best = y;
    }
    assert_true(best < 1e-3);
    assert_true(failed_late <= 8);
    sw_trial_dispose(&t);
    sw_search_free(b);
    fx_free(&s);
}

/* The first 10 trials are the scrambled Sobol design: the first 8 take
 * each eighth of x once. */
static void test_startup_is_sobol(void **state)
{
    sw_spec s;
    sw_search *b;
    sw_trial t;
    int i, seen[8] = {0};

    (void)state;
    bowl_spec(&s, SW_METHOD_TPE);
    assert_int_equal(sw_search_new(&b, &s, 4), SW_OK);
    sw_trial_init(&t);
    for (i = 0; i < 8; i++) {
        assert_int_equal(sw_search_next(b, &t), SW_OK);
        seen[(int)(num(t.params, "x") * 8)]++;
        assert_int_equal(sw_search_observe(b, &t, bowl(t.params)), SW_OK);
    }
    for (i = 0; i < 8; i++)
        assert_int_equal(seen[i], 1);
    sw_trial_dispose(&t);
    sw_search_free(b);
    fx_free(&s);
}

/* Past the startup, four suggestions with none observed differ. */
static void test_parallel_suggestions_differ(void **state)
{
    sw_spec s;
    sw_search *b;
    sw_trial t[4];
    int i, j;

    (void)state;
    bowl_spec(&s, SW_METHOD_TPE);
    assert_int_equal(sw_search_new(&b, &s, 5), SW_OK);
    drive(b, 20, bowl, false);
    for (i = 0; i < 4; i++) {
        sw_trial_init(&t[i]);
        assert_int_equal(sw_search_next(b, &t[i]), SW_OK);
        for (j = 0; j < i; j++)
            assert_true(dist(&t[i], &t[j]) > 1e-6);
    }
    for (i = 0; i < 4; i++)
        sw_trial_dispose(&t[i]);
    sw_search_free(b);
    fx_free(&s);
}

/* A resume replays the ended runs in another order and the running one:
 * the next suggestion is the live sweep's. */
static void test_resume_replays_to_the_same_suggestion(void **state)
{
    sw_spec s;
    sw_search *live, *resumed;
    sw_trial t[16], next;
    int i;

    (void)state;
    mixed_spec(&s, SW_METHOD_TPE);
    assert_int_equal(sw_search_new(&live, &s, 6), SW_OK);
    assert_int_equal(sw_search_new(&resumed, &s, 6), SW_OK);
    for (i = 0; i < 15; i++) {
        sw_trial_init(&t[i]);
        assert_int_equal(sw_search_next(live, &t[i]), SW_OK);
        if (i != 3) /* trial 3 stays in flight */
            sw_search_observe(live, &t[i], mixed(t[i].params));
    }
    sw_trial_init(&t[15]);
    assert_int_equal(sw_search_next(live, &t[15]), SW_OK);
    for (i = 14; i >= 0; i--)
        if (i != 3)
            sw_search_observe(resumed, &t[i], mixed(t[i].params));
    assert_int_equal(sw_search_pending(resumed, &t[3]), SW_OK);
    sw_trial_init(&next);
    assert_int_equal(sw_search_next(resumed, &next), SW_OK);
    assert_int_equal(next.index, 15);
    assert_string_equal(next.id, t[15].id);
    for (i = 0; i < 16; i++)
        sw_trial_dispose(&t[i]);
    sw_trial_dispose(&next);
    sw_search_free(live);
    sw_search_free(resumed);
    fx_free(&s);
}

/* The good category, the best int, nested, with a constant alongside. */
static void test_categorical_and_int(void **state)
{
    sw_spec s;
    sw_search *a, *b;
    sw_trial ta, tb;
    int i;

    (void)state;
    mixed_spec(&s, SW_METHOD_TPE);
    assert_int_equal(sw_search_new(&a, &s, 11), SW_OK);
    assert_true(drive(a, 60, mixed, false) < 0.02);
    assert_int_equal(sw_search_new(&b, &s, 11), SW_OK);
    sw_trial_init(&ta);
    sw_trial_init(&tb);
    sw_search_free(a);
    assert_int_equal(sw_search_new(&a, &s, 11), SW_OK);
    for (i = 0; i < 30; i++) { /* deterministic for a seed */
        assert_int_equal(sw_search_next(a, &ta), SW_OK);
        assert_int_equal(sw_search_next(b, &tb), SW_OK);
        assert_true(sw_value_equal(ta.params, tb.params));
        assert_string_equal(fx_get(ta.params, "tag")->u.s, "t");
        sw_search_observe(a, &ta, mixed(ta.params));
        sw_search_observe(b, &tb, mixed(tb.params));
    }
    sw_trial_dispose(&ta);
    sw_trial_dispose(&tb);
    sw_search_free(a);
    sw_search_free(b);
    fx_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_minimise_and_maximise),
        cmocka_unit_test(test_nan_results),
        cmocka_unit_test(test_startup_is_sobol),
        cmocka_unit_test(test_parallel_suggestions_differ),
        cmocka_unit_test(test_resume_replays_to_the_same_suggestion),
        cmocka_unit_test(test_categorical_and_int),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
