/*
 * test_random.c - the random strategy: trial i is fixed by (seed, i)
 * whatever order trials are drawn in, the sequence is unbounded unless
 * run_cap says otherwise, and trials are nested and typed as W&B's.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <cmocka.h>

#include "fixture.h"

/* lr uniform [0.001, 0.1), n int_uniform [1, 8], opt.name categorical,
 * opt.wd log_uniform_values, tag constant. */
static void make_spec(sw_spec *s)
{
    *s = (sw_spec){.method = SW_METHOD_RANDOM};
    fx_range(s, "lr", SW_DIST_UNIFORM, 0.001, 0.1);
    fx_int(s, "n", 1, 8);
    fx_values(s, "opt.name", 2,
              (sw_value *[]){sw_value_str("adam"), sw_value_str("sgd")});
    fx_range(s, "opt.wd", SW_DIST_LOG_UNIFORM_VALUES, 1e-6, 1e-2);
    fx_const(s, "tag", sw_value_str("x"));
}

static void test_same_seed_same_trials(void **state)
{
    sw_spec s;
    sw_search *a, *b, *c;
    sw_trial t, u, w;
    int i, same = 0;

    (void)state;
    make_spec(&s);
    assert_int_equal(sw_search_new(&a, &s, 7), SW_OK);
    assert_int_equal(sw_search_new(&b, &s, 7), SW_OK);
    assert_int_equal(sw_search_new(&c, &s, 8), SW_OK);
    sw_trial_init(&t);
    sw_trial_init(&u);
    sw_trial_init(&w);
    for (i = 0; i < 50; i++) {
        assert_int_equal(sw_search_next(a, &t), SW_OK);
        assert_int_equal(sw_search_next(b, &u), SW_OK);
        assert_int_equal(sw_search_next(c, &w), SW_OK);
        assert_true(sw_value_equal(t.params, u.params));
        assert_string_equal(t.id, u.id);
        same += sw_value_equal(t.params, w.params);
    }
    assert_int_equal(same, 0);
    sw_trial_dispose(&t);
    sw_trial_dispose(&u);
    sw_trial_dispose(&w);
    sw_search_free(a);
    sw_search_free(b);
    sw_search_free(c);
    fx_free(&s);
}

static void test_trial_is_independent_of_order(void **state)
{
    sw_spec s;
    sw_search *a, *b;
    sw_trial t, u;
    uint64_t i;

    (void)state;
    make_spec(&s);
    assert_int_equal(sw_search_new(&a, &s, 3), SW_OK);
    assert_int_equal(sw_search_new(&b, &s, 3), SW_OK);
    sw_trial_init(&t);
    sw_trial_init(&u);
    /* b is asked backwards and out of turn; a walks forward */
    assert_int_equal(sw_search_at(b, 1000000, &u), SW_OK);
    for (i = 0; i < 20; i++) {
        assert_int_equal(sw_search_next(a, &t), SW_OK);
        assert_int_equal(sw_search_at(b, 19 - i, &u), SW_OK);
        assert_int_equal(sw_search_at(b, i, &u), SW_OK);
        assert_true(u.index == i && t.index == i);
        assert_true(sw_value_equal(t.params, u.params));
    }
    sw_trial_dispose(&t);
    sw_trial_dispose(&u);
    sw_search_free(a);
    sw_search_free(b);
    fx_free(&s);
}

static void test_shapes_and_types(void **state)
{
    sw_spec s;
    sw_search *r;
    sw_trial t;
    int i;

    (void)state;
    make_spec(&s);
    assert_int_equal(sw_search_new(&r, &s, 1), SW_OK);
    sw_trial_init(&t);
    for (i = 0; i < 500; i++) {
        const sw_value *lr, *n, *name, *wd;

        assert_int_equal(sw_search_next(r, &t), SW_OK);
        assert_int_equal(t.params->u.map.len, 4); /* lr, n, opt, tag */
        lr = fx_get(t.params, "lr");
        n = fx_get(t.params, "n");
        name = fx_get(t.params, "opt.name");
        wd = fx_get(t.params, "opt.wd");
        assert_true(lr->type == SW_FLOAT && lr->u.f >= 0.001 && lr->u.f < 0.1);
        assert_true(n->type == SW_INT && n->u.i >= 1 && n->u.i <= 8);
        assert_int_equal(name->type, SW_STR);
        assert_true(wd->type == SW_FLOAT && wd->u.f >= 1e-6 * 0.999999 &&
                    wd->u.f <= 1e-2 * 1.000001);
        assert_string_equal(fx_get(t.params, "tag")->u.s, "x");
    }
    sw_trial_dispose(&t);
    sw_search_free(r);
    fx_free(&s);
}

/* Uniform and int_uniform draws are exact IEEE arithmetic on the stream,
 * so these values hold on every platform. */
static void test_pinned_first_trial(void **state)
{
    sw_spec s = {.method = SW_METHOD_RANDOM};
    sw_search *r;
    sw_trial t;
    sw_rng g;
    double u;

    (void)state;
    fx_range(&s, "x", SW_DIST_UNIFORM, 0, 1);
    assert_int_equal(sw_search_new(&r, &s, 0), SW_OK);
    sw_trial_init(&t);
    assert_int_equal(sw_search_next(r, &t), SW_OK);
    assert_true(fx_get(t.params, "x")->u.f == 0.6012629994179048);
    sw_rng_seed(&g, 0, 41);
    u = sw_rng_uniform(&g);
    assert_int_equal(sw_search_at(r, 41, &t), SW_OK);
    assert_true(fx_get(t.params, "x")->u.f == u);
    sw_trial_dispose(&t);
    sw_search_free(r);
    fx_free(&s);
}

static void test_unbounded_unless_capped(void **state)
{
    sw_spec s;
    sw_search *r;
    sw_trial t;
    uint64_t n;
    bool bounded, sat;
    int i;

    (void)state;
    make_spec(&s);
    assert_int_equal(sw_search_new(&r, &s, 1), SW_OK);
    sw_search_size(r, &n, &bounded, &sat);
    assert_false(bounded);
    assert_false(sat);
    sw_search_free(r);
    s.run_cap = 3;
    assert_int_equal(sw_search_new(&r, &s, 1), SW_OK);
    sw_search_size(r, &n, &bounded, &sat);
    assert_true(n == 3 && bounded && !sat);
    sw_trial_init(&t);
    for (i = 0; i < 3; i++)
        assert_int_equal(sw_search_next(r, &t), SW_OK);
    assert_int_equal(sw_search_next(r, &t), SW_EDONE);
    assert_int_equal(sw_search_next(r, &t), SW_EDONE);
    assert_int_equal(sw_search_at(r, 2, &t), SW_OK);
    assert_int_equal(sw_search_at(r, 3, &t), SW_EDONE);
    sw_trial_dispose(&t);
    sw_search_free(r);
    fx_free(&s);
}

static void test_ids_distinct(void **state)
{
    sw_spec s = {.method = SW_METHOD_RANDOM};
    sw_search *r;
    sw_trial t;
    char(*ids)[17] = sw_calloc(1000, sizeof(*ids));
    int i, j;

    (void)state;
    fx_range(&s, "x", SW_DIST_UNIFORM, 0, 1);
    assert_int_equal(sw_search_new(&r, &s, 5), SW_OK);
    sw_trial_init(&t);
    for (i = 0; i < 1000; i++) {
        assert_int_equal(sw_search_next(r, &t), SW_OK);
        memcpy(ids[i], t.id, 17);
        for (j = 0; j < i; j++)
            assert_string_not_equal(ids[i], ids[j]);
    }
    free(ids);
    sw_trial_dispose(&t);
    sw_search_free(r);
    fx_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_seed_same_trials),
        cmocka_unit_test(test_trial_is_independent_of_order),
        cmocka_unit_test(test_shapes_and_types),
        cmocka_unit_test(test_pinned_first_trial),
        cmocka_unit_test(test_unbounded_unless_capped),
        cmocka_unit_test(test_ids_distinct),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
