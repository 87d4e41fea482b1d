/*
 * test_bayes.c - method: bayes. It minimises and maximises, imputes
 * failed runs (W&B's metric.impute) and runs in flight, survives NaN
 * results, gives parallel suggestions that differ, and is a function of
 * the seed and the recorded history only, so a resume that replays the
 * history suggests what the live sweep would have.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <cmocka.h>

#include "fixture.h"
#include "search/space.h"

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

static void test_minimise(void **state)
{
    sw_spec s;
    sw_search *b;

    (void)state;
    bowl_spec(&s, SW_METHOD_BAYES);
    assert_int_equal(sw_search_new(&b, &s, 1), SW_OK);
    assert_true(drive(b, 20, bowl, false) < 1e-3);
    sw_search_free(b);
    fx_free(&s);
}

static void test_maximise(void **state)
{
    sw_spec s;
    sw_search *b;

    (void)state;
    bowl_spec(&s, SW_METHOD_BAYES);
    s.metric.goal = SW_GOAL_MAXIMIZE;
    assert_int_equal(sw_search_new(&b, &s, 2), SW_OK);
    /* the metric is -bowl: maximising it finds the bowl's minimum */
    assert_true(drive(b, 20, bowl, true) < 1e-3);
    sw_search_free(b);
    fx_free(&s);
}

/* W&B's impute: worst finite loss by default, 0 for best and latest (a
 * run without history), 0 when nothing is finite; in flight: NaN. */
static void test_imputation_of_failed_runs(void **state)
{
    sw_history h;
    sw_metric m = {0};
    double loss[5], z = 0.5;

    (void)state;
    sw_history__init(&h, 1);
    sw_history__observe(&h, 0, &z, NAN);
    assert_int_equal(sw_history__losses(&h, &m, loss), 0);
    assert_true(loss[0] == 0.0);
    sw_history__observe(&h, 3, &z, 2.0);
    sw_history__observe(&h, 1, &z, 5.0);
    sw_history__observe(&h, 2, &z, INFINITY);
    sw_history__pending(&h, 4, &z);
    assert_int_equal(sw_history__losses(&h, &m, loss), 2);
    assert_true(loss[0] == 5.0 && loss[1] == 5.0 && loss[2] == 5.0);
    assert_true(loss[3] == 2.0 && isnan(loss[4]));
    m.goal = SW_GOAL_MAXIMIZE;
    sw_history__losses(&h, &m, loss);
    assert_true(loss[0] == -2.0 && loss[1] == -5.0 && loss[3] == -2.0);
    m.impute = "best";
    sw_history__losses(&h, &m, loss);
    assert_true(loss[0] == 0.0 && loss[2] == 0.0);
    m.impute = "latest";
    sw_history__losses(&h, &m, loss);
    assert_true(loss[0] == 0.0);
    /* a pending record does not undo a result; a result ends pending */
    sw_history__pending(&h, 3, &z);
    sw_history__observe(&h, 4, &z, 1.0);
    m = (sw_metric){0};
    sw_history__losses(&h, &m, loss);
    assert_true(loss[3] == 2.0 && loss[4] == 1.0);
    assert_int_equal(h.len, 5);
    sw_history__dispose(&h);
}

/* Runs that fail right of x = 0.6 give NaN: the search keeps working and
 * learns to stay left, where the optimum is. */
static double cliff(const sw_value *p)
{
    double x = num(p, "x");

    return x >= 0.6 ? NAN : (x - 0.5) * (x - 0.5);
}

static void test_nan_results(void **state)
{
    sw_spec s = {.method = SW_METHOD_BAYES};
    sw_search *b;
    sw_trial t;
    int i, failed_late = 0;
    double best = INFINITY;

    (void)state;
    fx_range(&s, "x", SW_DIST_UNIFORM, 0.0, 1.0);
    assert_int_equal(sw_search_new(&b, &s, 3), SW_OK);
    sw_trial_init(&t);
    for (i = 0; i < 20; i++) {
        double y;

        assert_int_equal(sw_search_next(b, &t), SW_OK);
        y = cliff(t.params);
        assert_int_equal(sw_search_observe(b, &t, y), SW_OK);
        if (isnan(y))
            failed_late += i >= 10;
        else if (y < best)
            best = y;
    }
    assert_true(best < 1e-3);
    assert_true(failed_late <= 3);
    sw_trial_dispose(&t);
    sw_search_free(b);
    fx_free(&s);
}

/* With nothing finite yet, suggestions are the warm-up design: distinct. */
static void test_warm_up_until_two_results(void **state)
{
    sw_spec s;
    sw_search *b;
    sw_trial t[6];
    int i, j;

    (void)state;
    bowl_spec(&s, SW_METHOD_BAYES);
    assert_int_equal(sw_search_new(&b, &s, 4), SW_OK);
    for (i = 0; i < 6; i++) {
        sw_trial_init(&t[i]);
        assert_int_equal(sw_search_next(b, &t[i]), SW_OK);
        assert_int_equal(sw_search_observe(b, &t[i], NAN), SW_OK);
        for (j = 0; j < i; j++)
            assert_string_not_equal(t[i].id, t[j].id);
    }
    for (i = 0; i < 6; i++)
        sw_trial_dispose(&t[i]);
    sw_search_free(b);
    fx_free(&s);
}

static double dist(const sw_trial *a, const sw_trial *b)
{
    double dx = num(a->params, "x") - num(b->params, "x");
    double dy = num(a->params, "y") - num(b->params, "y");

    return sqrt(dx * dx + dy * dy);
}

/* Four suggestions in a row with none observed, after the GP has begun:
 * the runs in flight are imputed, so they are four different points. */
static void test_parallel_suggestions_differ(void **state)
{
    sw_spec s;
    sw_search *b;
    sw_trial t[4];
    int i, j;

    (void)state;
    bowl_spec(&s, SW_METHOD_BAYES);
    assert_int_equal(sw_search_new(&b, &s, 5), SW_OK);
    drive(b, 6, bowl, false);
    for (i = 0; i < 4; i++) {
        sw_trial_init(&t[i]);
        assert_int_equal(sw_search_next(b, &t[i]), SW_OK);
        for (j = 0; j < i; j++)
            assert_true(dist(&t[i], &t[j]) > 1e-3);
    }
    for (i = 0; i < 4; i++)
        sw_trial_dispose(&t[i]);
    sw_search_free(b);
    fx_free(&s);
}

/* A resume replays the ended runs (in any order) and the running ones:
 * the next suggestion is the live sweep's, at the next index. */
static void test_resume_replays_to_the_same_suggestion(void **state)
{
    sw_spec s;
    sw_search *live, *resumed;
    sw_trial t[8], next;
    int i;

    (void)state;
    bowl_spec(&s, SW_METHOD_BAYES);
    assert_int_equal(sw_search_new(&live, &s, 6), SW_OK);
    assert_int_equal(sw_search_new(&resumed, &s, 6), SW_OK);
    for (i = 0; i < 7; i++) {
        sw_trial_init(&t[i]);
        assert_int_equal(sw_search_next(live, &t[i]), SW_OK);
        if (i < 6) /* trial 6 stays in flight */
            sw_search_observe(live, &t[i], bowl(t[i].params));
    }
    sw_trial_init(&t[7]);
    assert_int_equal(sw_search_next(live, &t[7]), SW_OK);
    for (i = 5; i >= 0; i--)
        assert_int_equal(sw_search_observe(resumed, &t[i], bowl(t[i].params)),
                         SW_OK);
    assert_int_equal(sw_search_pending(resumed, &t[6]), SW_OK);
    assert_int_equal(sw_search_pending(resumed, &t[6]), SW_OK);
    sw_trial_init(&next);
    assert_int_equal(sw_search_next(resumed, &next), SW_OK);
    assert_int_equal(next.index, 7);
    assert_string_equal(next.id, t[7].id);
    for (i = 0; i < 8; i++)
        sw_trial_dispose(&t[i]);
    sw_trial_dispose(&next);
    sw_search_free(live);
    sw_search_free(resumed);
    fx_free(&s);
}

/* The same seed and results give the same trials; another seed does not. */
static void test_deterministic_for_a_seed(void **state)
{
    sw_spec s;
    sw_search *a, *b, *c;
    sw_trial ta, tb, tc;
    int i, same = 0;

    (void)state;
    bowl_spec(&s, SW_METHOD_BAYES);
    assert_int_equal(sw_search_new(&a, &s, 9), SW_OK);
    assert_int_equal(sw_search_new(&b, &s, 9), SW_OK);
    assert_int_equal(sw_search_new(&c, &s, 10), SW_OK);
    sw_trial_init(&ta);
    sw_trial_init(&tb);
    sw_trial_init(&tc);
    for (i = 0; i < 8; i++) {
        assert_int_equal(sw_search_next(a, &ta), SW_OK);
        assert_int_equal(sw_search_next(b, &tb), SW_OK);
        assert_int_equal(sw_search_next(c, &tc), SW_OK);
        assert_true(sw_value_equal(ta.params, tb.params));
        same += sw_value_equal(ta.params, tc.params);
        sw_search_observe(a, &ta, bowl(ta.params));
        sw_search_observe(b, &tb, bowl(tb.params));
        sw_search_observe(c, &tc, bowl(tc.params));
    }
    assert_int_equal(same, 0);
    sw_trial_dispose(&ta);
    sw_trial_dispose(&tb);
    sw_trial_dispose(&tc);
    sw_search_free(a);
    sw_search_free(b);
    sw_search_free(c);
    fx_free(&s);
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

static void test_categorical_and_int(void **state)
{
    sw_spec s;
    sw_search *b;

    (void)state;
    mixed_spec(&s, SW_METHOD_BAYES);
    assert_int_equal(sw_search_new(&b, &s, 11), SW_OK);
    assert_true(drive(b, 25, mixed, false) < 0.01);
    sw_search_free(b);
    fx_free(&s);
}

/* A result for a value the sweep cannot give is refused, as W&B does. */
static void test_observe_refuses_foreign_values(void **state)
{
    sw_spec s;
    sw_search *b;
    sw_trial t;
    sw_value *opt;

    (void)state;
    mixed_spec(&s, SW_METHOD_BAYES);
    assert_int_equal(sw_search_new(&b, &s, 12), SW_OK);
    sw_trial_init(&t);
    assert_int_equal(sw_search_next(b, &t), SW_OK);
    opt = sw_value_map_get(t.params, "opt");
    sw_value_map_set(opt, "name", sw_value_str("lamb"));
    assert_int_equal(sw_search_observe(b, &t, 1.0), SW_EINVALID);
    assert_non_null(strstr(sw_error_last(), "opt.name"));
    sw_trial_dispose(&t);
    sw_search_free(b);
    fx_free(&s);
}

/* A function of a categorical "c" and an int "n" (and "k" when there). */
static double discrete(const sw_value *p)
{
    const sw_value *c = fx_get(p, "c"), *k = fx_get(p, "k");
    double n = num(p, "n") - 3.0, off = (double)(c->u.s[0] - 'a');

    return off + n * n + (k ? (double)(k->u.s[0] - 'p') : 0.0);
}

static void discrete_spec(sw_spec *s, int64_t ints)
{
    *s = (sw_spec){.method = SW_METHOD_BAYES};
    fx_values(s, "c", 3,
              (sw_value *[]){sw_value_str("a"), sw_value_str("b"),
                             sw_value_str("c")});
    fx_int(s, "n", 1, ints);
}

/* Runs bayes on spec s until it ends or `max` trials; the ids into ids.
 * Returns the number of trials it gave. */
static int run_ids(const sw_spec *s, uint64_t seed, int max, char (*ids)[17])
{
    sw_search *b;
    sw_trial t;
    int n = 0, err = SW_OK;

    assert_int_equal(sw_search_new(&b, s, seed), SW_OK);
    sw_trial_init(&t);
    while (n < max && (err = sw_search_next(b, &t)) == SW_OK) {
        memcpy(ids[n++], t.id, sizeof(t.id));
        assert_int_equal(sw_search_observe(b, &t, discrete(t.params)), SW_OK);
    }
    if (n < max)
        assert_int_equal(err, SW_EDONE);
    sw_trial_dispose(&t);
    sw_search_free(b);
    return n;
}

static void assert_distinct(char (*ids)[17], int n)
{
    int i, j;

    for (i = 0; i < n; i++)
        for (j = 0; j < i; j++)
            assert_string_not_equal(ids[i], ids[j]);
}

/* 3 x 4 configurations: each once, then the search ends as a grid does. */
static void test_discrete_space_runs_each_configuration_once(void **state)
{
    sw_spec s;
    sw_search *b;
    char ids[20][17];
    uint64_t count;
    bool bounded, saturated;

    (void)state;
    discrete_spec(&s, 4);
    assert_int_equal(sw_search_new(&b, &s, 13), SW_OK);
    sw_search_size(b, &count, &bounded, &saturated);
    assert_true(bounded && !saturated && count == 12);
    sw_search_free(b);
    assert_int_equal(run_ids(&s, 13, 20, ids), 12);
    assert_distinct(ids, 12);
    fx_free(&s);
}

/* 3 x 20 x 4 = 240 configurations: no repeat in the first 80 trials. */
static void test_discrete_space_does_not_repeat(void **state)
{
    sw_spec s;
    char ids[80][17];

    (void)state;
    discrete_spec(&s, 20);
    fx_values(&s, "k", 4,
              (sw_value *[]){sw_value_str("p"), sw_value_str("q"),
                             sw_value_str("r"), sw_value_str("s")});
    assert_int_equal(run_ids(&s, 14, 80, ids), 80);
    assert_distinct(ids, 80);
    fx_free(&s);
}

/* The initial design covers a 4-way categorical in its first 4 points,
 * whatever the seed. */
static void test_initial_design_covers_categories(void **state)
{
    sw_spec s;
    uint64_t seed;

    (void)state;
    s = (sw_spec){.method = SW_METHOD_BAYES};
    fx_values(&s, "opt", 4,
              (sw_value *[]){sw_value_str("a"), sw_value_str("b"),
                             sw_value_str("c"), sw_value_str("d")});
    fx_int(&s, "n", 1, 32);
    fx_range(&s, "x", SW_DIST_UNIFORM, 0.0, 1.0);
    for (seed = 0; seed < 8; seed++) {
        sw_search *b;
        sw_trial t;
        int i, seen = 0;

        assert_int_equal(sw_search_new(&b, &s, seed), SW_OK);
        sw_trial_init(&t);
        for (i = 0; i < 4; i++) {
            assert_int_equal(sw_search_next(b, &t), SW_OK);
            seen |= 1 << (fx_get(t.params, "opt")->u.s[0] - 'a');
            assert_int_equal(sw_search_observe(b, &t, num(t.params, "x")),
                             SW_OK);
        }
        assert_int_equal(seen, 0xf);
        sw_trial_dispose(&t);
        sw_search_free(b);
    }
    fx_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_minimise),
        cmocka_unit_test(test_maximise),
        cmocka_unit_test(test_imputation_of_failed_runs),
        cmocka_unit_test(test_nan_results),
        cmocka_unit_test(test_warm_up_until_two_results),
        cmocka_unit_test(test_parallel_suggestions_differ),
        cmocka_unit_test(test_resume_replays_to_the_same_suggestion),
        cmocka_unit_test(test_deterministic_for_a_seed),
        cmocka_unit_test(test_categorical_and_int),
        cmocka_unit_test(test_observe_refuses_foreign_values),
        cmocka_unit_test(test_discrete_space_runs_each_configuration_once),
        cmocka_unit_test(test_discrete_space_does_not_repeat),
        cmocka_unit_test(test_initial_design_covers_categories),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
