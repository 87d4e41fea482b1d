/*
 * test_fidelity.c - multi-fidelity bayes and tpe (search/fidelity.c):
 * when a sweep has rungs, the model is fitted on the values runs had at
 * the highest rung where enough of them have one, against hand-worked
 * cases: which sweeps have it, which rung's model a suggestion uses, the
 * history a rung sees, that a suggestion goes where the highest
 * populated rung was best (not where a lower one was), that too few
 * rung values change nothing, and that the order the observations come
 * in does not matter.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <cmocka.h>

#include "fixture.h"
#include "search/space.h"

/* x, y in [0, 1]; minimise `loss`; asha rungs (multi-fidelity on). */
static void plane_spec(sw_spec *s, sw_method m)
{
    *s = (sw_spec){.method = m};
    s->metric.name = "loss";
    s->early_terminate.rule = SW_STOP_ASHA;
    fx_range(s, "x", SW_DIST_UNIFORM, 0.0, 1.0);
    fx_range(s, "y", SW_DIST_UNIFORM, 0.0, 1.0);
}

/* Trial `index` at (x, y), as the engine would rebuild it from the store. */
static void at(sw_trial *t, uint64_t index, double x, double y)
{
    sw_trial_dispose(t);
    t->params = sw_value_map();
    sw_value_map_set(t->params, "x", sw_value_float(x));
    sw_value_map_set(t->params, "y", sw_value_float(y));
    t->index = index;
    sw_trial_set_id(t);
}

static double num(const sw_value *params, const char *name)
{
    double x = NAN;

    assert_true(sw_value_number(fx_get(params, name), &x));
    return x;
}

static double dist_to(const sw_trial *t, double x, double y)
{
    double dx = num(t->params, "x") - x, dy = num(t->params, "y") - y;

    return sqrt(dx * dx + dy * dy);
}

/* Tells `s` trial `index` at (x, y) had `v` at rung `iter`. */
static void rung(sw_search *s, uint64_t index, double x, double y, int64_t iter,
                 double v)
{
    sw_trial t;

    sw_trial_init(&t);
    at(&t, index, x, y);
    assert_int_equal(sw_search_observe_rung(s, &t, iter, v), SW_OK);
    sw_trial_dispose(&t);
}

/* The next trial's rung: what sw_search_fitted says after it. */
static int64_t fitted_next(sw_search *s)
{
    sw_trial t;
    int64_t level;

    sw_trial_init(&t);
    assert_int_equal(sw_search_next(s, &t), SW_OK);
    level = sw_search_fitted(s);
    sw_trial_dispose(&t);
    return level;
}

static void test_which_sweeps(void **state)
{
    sw_spec s;

    (void)state;
    plane_spec(&s, SW_METHOD_BAYES);
    assert_true(sw_search_multi_fidelity(&s));
    s.early_terminate.rule = SW_STOP_HYPERBAND;
    assert_true(sw_search_multi_fidelity(&s));
    s.method = SW_METHOD_TPE;
    assert_true(sw_search_multi_fidelity(&s));
    s.early_terminate.rule = SW_STOP_MEDIAN; /* no rungs */
    assert_false(sw_search_multi_fidelity(&s));
    s.early_terminate.rule = SW_STOP_NONE;
    assert_false(sw_search_multi_fidelity(&s));
    s.early_terminate.rule = SW_STOP_ASHA;
    s.method = SW_METHOD_RANDOM;
    assert_false(sw_search_multi_fidelity(&s));
    s.method = SW_METHOD_BAYES;
    s.no_multi_fidelity = true; /* multi_fidelity: false */
    assert_false(sw_search_multi_fidelity(&s));
    fx_free(&s);
}

/* Two parameters: bayes needs n_init = 3 values at a rung. Six trials at
 * rung 1, three at rung 3, two at rung 9: rung 3's model. A third at
 * rung 9 that is NaN does not count; a finite one does: rung 9's. */
static void test_the_highest_rung_with_enough_values(void **state)
{
    sw_spec s;
    sw_search *b;
    int i;

    (void)state;
    plane_spec(&s, SW_METHOD_BAYES);
    assert_int_equal(sw_search_new(&b, &s, 1), SW_OK);
    for (i = 0; i < 6; i++)
        rung(b, (uint64_t)i, 0.1 * i + 0.05, 0.9 - 0.1 * i, 1, 1.0 + 0.1 * i);
    for (i = 0; i < 3; i++)
        rung(b, (uint64_t)i, 0.1 * i + 0.05, 0.9 - 0.1 * i, 3, 0.5 + 0.1 * i);
    rung(b, 0, 0.05, 0.9, 9, 0.2);
    rung(b, 1, 0.15, 0.8, 9, 0.3);
    assert_int_equal(fitted_next(b), 3);
    rung(b, 2, 0.25, 0.7, 9, NAN);
    assert_int_equal(fitted_next(b), 3);
    rung(b, 2, 0.25, 0.7, 9, 0.4); /* replaces the NaN */
    assert_int_equal(fitted_next(b), 9);
    sw_search_free(b);
    fx_free(&s);
}

/* tpe waits for as many values as it does without rungs: 10. */
static void test_tpe_waits_for_ten(void **state)
{
    sw_spec s;
    sw_search *t;
    int i;

    (void)state;
    plane_spec(&s, SW_METHOD_TPE);
    assert_int_equal(sw_search_new(&t, &s, 1), SW_OK);
    for (i = 0; i < 12; i++)
        rung(t, (uint64_t)i, 0.08 * i, 0.5, 1, (double)i);
    for (i = 0; i < 9; i++)
        rung(t, (uint64_t)i, 0.08 * i, 0.5, 3, (double)i);
    assert_int_equal(fitted_next(t), 1);
    rung(t, 9, 0.72, 0.5, 3, 9.0);
    assert_int_equal(fitted_next(t), 3);
    sw_search_free(t);
    fx_free(&s);
}

/* The history rung 3 sees, by hand: trial 0 reached it (0.5); 1 is in
 * flight with no value yet; 2 failed (ended, no value): imputed at
 * every rung; 3 stopped at rung 1 (0.9) and 5 is in flight past it
 * (0.8): both estimated at rung 3 from trial 4, the one with a value at
 * both (0.6 at rung 1, 0.25 at rung 3: a change of -0.35); 6 stopped at
 * rung 1 with no finite value and ended with one: not there. */
static void test_the_history_a_rung_sees(void **state)
{
    static const double z[] = {0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7};
    sw_history h, view;
    sw_fidelity f;
    sw_level *l;
    double loss[6];
    sw_metric m = {.name = "loss"};
    uint64_t i;

    (void)state;
    sw_history__init(&h, 1);
    sw_fidelity__init(&f);
    for (i = 0; i < 7; i++)
        sw_history__pending(&h, i, &z[i]);
    sw_history__observe(&h, 0, &z[0], 0.4);
    sw_history__observe(&h, 2, &z[2], NAN);
    sw_history__observe(&h, 3, &z[3], 0.9);
    sw_history__observe(&h, 6, &z[6], 2.0);
    sw_fidelity__record(&f, 3, 1, 0.9);
    sw_fidelity__record(&f, 0, 3, 0.7);
    sw_fidelity__record(&f, 0, 3, 0.5); /* replaces 0.7 */
    sw_fidelity__record(&f, 4, 3, 0.25);
    sw_fidelity__record(&f, 4, 1, 0.6);
    sw_fidelity__record(&f, 5, 1, 0.8);
    sw_fidelity__record(&f, 6, 1, NAN);
    l = &f.levels[1];
    assert_int_equal(f.n, 2);
    assert_int_equal(l->iter, 3);
    assert_int_equal(l->finite, 2);
    assert_int_equal(f.levels[0].finite, 3);
    sw_history__init(&view, 1);
    sw_fidelity__view(&f, l, &h, &view);
    assert_int_equal(view.len, 6);
    for (i = 0; i < 6; i++) /* 0 to 5, each at its own point */
        assert_true(view.obs[i].index == i && *sw_history__z(&view, i) == z[i]);
    assert_true(view.obs[0].y == 0.5 && !view.obs[0].pending);
    assert_true(view.obs[1].pending);
    assert_true(isnan(view.obs[2].y) && !view.obs[2].pending);
    assert_true(fabs(view.obs[3].y - 0.55) < 1e-12 && !view.obs[3].pending);
    assert_true(view.obs[4].y == 0.25 && !view.obs[4].pending);
    assert_true(fabs(view.obs[5].y - 0.45) < 1e-12 && !view.obs[5].pending);
    /* impute worst: the failed one counts as the worst there, 0.55 */
    assert_int_equal(sw_history__losses(&view, &m, loss), 4);
    assert_true(fabs(loss[2] - 0.55) < 1e-12);
    assert_true(sw_fidelity__pick(&f, 2) == l);
    assert_true(sw_fidelity__pick(&f, 3) == &f.levels[0]);
    assert_true(sw_fidelity__pick(&f, 4) == NULL);
    sw_history__dispose(&view);
    sw_history__dispose(&h);
    sw_fidelity__dispose(&f);
}

/* The estimates, by hand. Rung 1 to rung 3: A 0.2 -> 0.5, B 0.4 -> 0.3,
 * C 0.6 -> 0.4: changes +0.3, -0.1, -0.2, median -0.1. D had 0.3 at
 * rung 1: 0.2, but A, as good at rung 1, got 0.5: no better, 0.5. E had
 * 0.5: 0.4; A and B were as good, the better got 0.3: 0.4 stands. F had
 * 0.1, better than all: 0.0. */
static void test_estimates_keep_the_rank(void **state)
{
    static const double r1[] = {0.2, 0.4, 0.6, 0.3, 0.5, 0.1};
    static const double r3[] = {0.5, 0.3, 0.4};
    static const double want[] = {0.5, 0.3, 0.4, 0.5, 0.4, 0.0};
    sw_history h, view;
    sw_fidelity f;
    double z = 0.5;
    uint64_t i;

    (void)state;
    sw_history__init(&h, 1);
    sw_fidelity__init(&f);
    for (i = 0; i < 6; i++) {
        sw_history__pending(&h, i, &z);
        sw_fidelity__record(&f, i, 1, r1[i]);
        if (i < 3)
            sw_fidelity__record(&f, i, 3, r3[i]);
    }
    sw_history__init(&view, 1);
    sw_fidelity__view(&f, &f.levels[1], &h, &view);
    assert_int_equal(view.len, 6);
    for (i = 0; i < 6; i++) {
        assert_false(view.obs[i].pending);
        assert_true(fabs(view.obs[i].y - want[i]) < 1e-12);
    }
    sw_history__dispose(&view);
    sw_history__dispose(&h);
    sw_fidelity__dispose(&f);
}

/* A seed whose suggestion of trial `index` is the model's, not one of
 * the random share. */
static uint64_t model_seed(uint64_t index)
{
    uint64_t seed = 1;

    while (sw_fidelity__coin(seed, index, SW_FIDELITY_RANDOM))
        seed++;
    return seed;
}

/* A 5 x 5 grid reached rung 1, where the best was at (0.5, 0.5); the
 * best of them went on to rung 3, as ASHA promotes them (the nine within
 * 0.3 of it; `wide`: thirteen, within 0.4, as tpe needs ten), where the
 * best was (0.3, 0.7): curves that cross. The suggestion goes where
 * rung 3 is good: its distance to (0.3, 0.7), squared (the loss there),
 * under half of rung 1's best's (0.08); told only rung 1, where rung 1
 * is good: its distance to (0.5, 0.5), squared, under half of rung 3's
 * best's. */
static void near_the_best(sw_method method, bool wide)
{
    static const double g[] = {0.1, 0.3, 0.5, 0.7, 0.9};
    uint64_t seed = model_seed(25);
    sw_search *both, *low;
    sw_trial t;
    sw_spec s;
    int i, j;

    plane_spec(&s, method);
    assert_int_equal(sw_search_new(&both, &s, seed), SW_OK);
    assert_int_equal(sw_search_new(&low, &s, seed), SW_OK);
    for (i = 0; i < 5; i++) {
        for (j = 0; j < 5; j++) {
            double x = g[i], y = g[j], u = x - 0.5, v = y - 0.5;
            double p = x - 0.3, q = y - 0.7, f1 = u * u + v * v;
            uint64_t k = (uint64_t)(5 * i + j);

            rung(both, k, x, y, 1, f1);
            rung(low, k, x, y, 1, f1);
            if (f1 < (wide ? 0.17 : 0.09))
                rung(both, k, x, y, 3, p * p + q * q);
        }
    }
    sw_trial_init(&t);
    assert_int_equal(sw_search_next(both, &t), SW_OK);
    assert_int_equal(t.index, 25);
    assert_int_equal(sw_search_fitted(both), 3);
    print_message("%s, rung 3: (%.3f, %.3f)\n", sw_method_name(method),
                  num(t.params, "x"), num(t.params, "y"));
    assert_true(pow(dist_to(&t, 0.3, 0.7), 2) < 0.04);
    assert_int_equal(sw_search_next(low, &t), SW_OK);
    assert_int_equal(sw_search_fitted(low), 1);
    print_message("%s, rung 1 only: (%.3f, %.3f)\n", sw_method_name(method),
                  num(t.params, "x"), num(t.params, "y"));
    assert_true(pow(dist_to(&t, 0.5, 0.5), 2) < 0.04);
    sw_trial_dispose(&t);
    sw_search_free(both);
    sw_search_free(low);
    fx_free(&s);
}

static void test_bayes_goes_where_the_highest_rung_was_best(void **state)
{
    (void)state;
    near_the_best(SW_METHOD_BAYES, false);
}

static void test_tpe_goes_where_the_highest_rung_was_best(void **state)
{
    (void)state;
    near_the_best(SW_METHOD_TPE, true);
}

/* Rung values at no rung with enough of them: the suggestion is the one
 * the search gives without them, from the same trials (ended or in
 * flight). */
static void test_too_few_change_nothing(void **state)
{
    sw_spec s, off;
    sw_search *mf, *plain;
    sw_trial t, a, b;
    int i;

    (void)state;
    plane_spec(&s, SW_METHOD_BAYES);
    plane_spec(&off, SW_METHOD_BAYES);
    off.no_multi_fidelity = true;
    assert_int_equal(sw_search_new(&mf, &s, 3), SW_OK);
    assert_int_equal(sw_search_new(&plain, &off, 3), SW_OK);
    sw_trial_init(&t);
    for (i = 0; i < 6; i++) {
        double x = 0.15 * i + 0.1, y = 1.0 - 0.13 * i;

        at(&t, (uint64_t)i, x, y);
        if (i < 2)
            rung(mf, (uint64_t)i, x, y, 3, x + y);
        if (i < 4) { /* ended */
            assert_int_equal(sw_search_observe(mf, &t, x * y), SW_OK);
            assert_int_equal(sw_search_observe(plain, &t, x * y), SW_OK);
        } else {
            assert_int_equal(sw_search_pending(plain, &t), SW_OK);
            rung(mf, (uint64_t)i, x, y, 1, x);
        }
        rung(plain, (uint64_t)i, x, y, 1, x); /* ignored: it is off */
    }
    sw_trial_init(&a);
    sw_trial_init(&b);
    assert_int_equal(sw_search_next(mf, &a), SW_OK);
    assert_int_equal(sw_search_next(plain, &b), SW_OK);
    assert_int_equal(sw_search_fitted(mf), 0);
    assert_int_equal(sw_search_fitted(plain), 0);
    assert_int_equal(a.index, 6);
    assert_int_equal(b.index, 6);
    assert_true(sw_value_equal(a.params, b.params));
    sw_trial_dispose(&t);
    sw_trial_dispose(&a);
    sw_trial_dispose(&b);
    sw_search_free(mf);
    sw_search_free(plain);
    fx_free(&s);
    fx_free(&off);
}

typedef struct {
    int kind; /* 0: a rung value, 1: ended, 2: in flight */
    uint64_t index;
    int64_t iter;
    double v;
} tell;

static void tell_one(sw_search *s, const tell *e)
{
    double x = 0.037 * (double)e->index, y = fmod(0.61 * (double)e->index, 1);
    sw_trial t;

    sw_trial_init(&t);
    at(&t, e->index, x, y);
    if (e->kind == 0)
        assert_int_equal(sw_search_observe_rung(s, &t, e->iter, e->v), SW_OK);
    else if (e->kind == 1)
        assert_int_equal(sw_search_observe(s, &t, e->v), SW_OK);
    else
        assert_int_equal(sw_search_pending(s, &t), SW_OK);
    sw_trial_dispose(&t);
}

/* 20 trials: each at rung 1, nine at rung 3, five ended (three of them
 * failed), the rest in flight; told in order, and in reverse with
 * a wrong rung value told first and replaced: the same next trial. */
static void order_independent(sw_method method)
{
    tell ev[64];
    sw_search *a, *b;
    sw_trial ta, tb;
    sw_spec s;
    size_t n = 0, i;
    uint64_t k;

    for (k = 0; k < 20; k++) {
        ev[n++] = (tell){0, k, 1, fabs(sin((double)k)) + 1.0};
        if (k % 5 < 2 || k == 7)
            ev[n++] = (tell){0, k, 3, fabs(cos((double)k))};
        if (k % 4 == 0)
            ev[n++] = (tell){1, k, 0, k % 8 ? 0.3 : NAN};
        else
            ev[n++] = (tell){2, k, 0, 0};
    }
    plane_spec(&s, method);
    s.early_terminate.rule = SW_STOP_HYPERBAND;
    assert_int_equal(sw_search_new(&a, &s, 11), SW_OK);
    assert_int_equal(sw_search_new(&b, &s, 11), SW_OK);
    for (i = 0; i < n; i++)
        tell_one(a, &ev[i]);
    tell_one(b, &(tell){0, 0, 3, 99.0}); /* wrong: replaced below */
    for (i = n; i-- > 0;)
        tell_one(b, &ev[i]);
    sw_trial_init(&ta);
    sw_trial_init(&tb);
    assert_int_equal(sw_search_next(a, &ta), SW_OK);
    assert_int_equal(sw_search_next(b, &tb), SW_OK);
    assert_int_equal(sw_search_fitted(a), method == SW_METHOD_TPE ? 1 : 3);
    assert_int_equal(sw_search_fitted(b), sw_search_fitted(a));
    assert_int_equal(ta.index, 20);
    assert_int_equal(tb.index, 20);
    assert_string_equal(ta.id, tb.id);
    sw_trial_dispose(&ta);
    sw_trial_dispose(&tb);
    sw_search_free(a);
    sw_search_free(b);
    fx_free(&s);
}

static void test_order_does_not_matter(void **state)
{
    (void)state;
    order_independent(SW_METHOD_BAYES);
    order_independent(SW_METHOD_TPE);
}

/* A rung is an iteration above 0. */
static void test_rung_zero_refused(void **state)
{
    sw_spec s;
    sw_search *b;
    sw_trial t;

    (void)state;
    plane_spec(&s, SW_METHOD_BAYES);
    assert_int_equal(sw_search_new(&b, &s, 1), SW_OK);
    sw_trial_init(&t);
    at(&t, 0, 0.5, 0.5);
    assert_int_equal(sw_search_observe_rung(b, &t, 0, 1.0), SW_EINVALID);
    sw_trial_dispose(&t);
    sw_search_free(b);
    fx_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_which_sweeps),
        cmocka_unit_test(test_the_highest_rung_with_enough_values),
        cmocka_unit_test(test_tpe_waits_for_ten),
        cmocka_unit_test(test_the_history_a_rung_sees),
        cmocka_unit_test(test_estimates_keep_the_rank),
        cmocka_unit_test(test_bayes_goes_where_the_highest_rung_was_best),
        cmocka_unit_test(test_tpe_goes_where_the_highest_rung_was_best),
        cmocka_unit_test(test_too_few_change_nothing),
        cmocka_unit_test(test_order_does_not_matter),
        cmocka_unit_test(test_rung_zero_refused),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
