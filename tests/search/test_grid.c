/*
 * test_grid.c - the grid strategy against W&B's own grid tests
 * (wandb/sweeps tests/test_grid_search.py): order, constants, nested
 * parameters, bounded ranges; and the things W&B never had to face: a
 * grid of 10^12 points, one past 2^64, run_cap, stable ids.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <cmocka.h>

#include "fixture.h"

static sw_value *I(int64_t i)
{
    return sw_value_int(i);
}

static sw_value *S(const char *s)
{
    return sw_value_str(s);
}

/* The whole grid, as Python str() of each trial's params, joined by ' '. */
static char *walk(const sw_spec *spec)
{
    sw_search *s;
    sw_trial t;
    sw_buf b = SW_BUF_INIT;

    assert_int_equal(sw_search_new(&s, spec, 0), SW_OK);
    sw_trial_init(&t);
    while (sw_search_next(s, &t) == SW_OK) {
        if (b.len)
            sw_buf_putc(&b, ' ');
        sw_value_write_py(&b, t.params);
    }
    sw_trial_dispose(&t);
    sw_search_free(s);
    return sw_buf_detach(&b);
}

static void expect_walk(const sw_spec *spec, const char *want)
{
    char *got = walk(spec);

    assert_string_equal(got, want);
    free(got);
}

static void test_two_params_last_fastest(void **state)
{
    sw_spec s = {.method = SW_METHOD_GRID};

    (void)state;
    fx_values(&s, "v1", 3, (sw_value *[]){I(1), I(2), I(3)});
    fx_values(&s, "v2", 2, (sw_value *[]){I(4), I(5)});
    expect_walk(&s, "{'v1': 1, 'v2': 4} {'v1': 1, 'v2': 5} "
                    "{'v1': 2, 'v2': 4} {'v1': 2, 'v2': 5} "
                    "{'v1': 3, 'v2': 4} {'v1': 3, 'v2': 5}");
    fx_free(&s);
}

static void test_list_values(void **state)
{
    sw_spec s = {.method = SW_METHOD_GRID};
    sw_value *l = sw_value_list();

    (void)state;
    sw_value_list_push(l, I(9));
    sw_value_list_push(l, I(5));
    fx_values(&s, "v1", 2, (sw_value *[]){S(""), l});
    fx_values(&s, "v2", 2, (sw_value *[]){I(256), I(512)});
    expect_walk(&s, "{'v1': '', 'v2': 256} {'v1': '', 'v2': 512} "
                    "{'v1': [9, 5], 'v2': 256} {'v1': [9, 5], 'v2': 512}");
    fx_free(&s);
}

/* W&B's anaconda1_order: values [a, b, c, a]; the loader collapses the
 * repeat, and the grid keeps the first position. */
static void test_collapsed_duplicates_keep_order(void **state)
{
    sw_spec s = {.method = SW_METHOD_GRID};

    (void)state;
    fx_values(&s, "v1", 3, (sw_value *[]){S("a"), S("b"), S("c")});
    fx_values(&s, "v2", 3, (sw_value *[]){I(1), I(2), I(3)});
    expect_walk(&s, "{'v1': 'a', 'v2': 1} {'v1': 'a', 'v2': 2} "
                    "{'v1': 'a', 'v2': 3} {'v1': 'b', 'v2': 1} "
                    "{'v1': 'b', 'v2': 2} {'v1': 'b', 'v2': 3} "
                    "{'v1': 'c', 'v2': 1} {'v1': 'c', 'v2': 2} "
                    "{'v1': 'c', 'v2': 3}");
    fx_free(&s);
}

/* W&B's duplicated_values: [None, 2, 3, "a", (2, 3), 3] x [a, b, c'] is
 * 15 runs once the repeated 3 is collapsed. */
static void test_duplicated_values_count(void **state)
{
    sw_spec s = {.method = SW_METHOD_GRID};
    sw_value *l = sw_value_list();
    uint64_t n;
    bool sat;

    (void)state;
    sw_value_list_push(l, I(2));
    sw_value_list_push(l, I(3));
    fx_values(&s, "v1", 5,
              (sw_value *[]){sw_value_null(), I(2), I(3), S("a"), l});
    fx_values(&s, "v2", 3, (sw_value *[]){S("a"), S("b"), S("c'")});
    assert_int_equal(sw_grid_size(&s, &n, &sat), SW_OK);
    assert_true(n == 15 && !sat);
    fx_free(&s);
}

static void test_constants(void **state)
{
    sw_spec s = {.method = SW_METHOD_GRID};
    sw_spec c = {.method = SW_METHOD_GRID};

    (void)state;
    fx_values(&s, "v1", 3, (sw_value *[]){S("a"), S("b"), S("c'")});
    fx_const(&s, "v2", I(1));
    expect_walk(&s, "{'v1': 'a', 'v2': 1} {'v1': 'b', 'v2': 1} "
                    "{'v1': \"c'\", 'v2': 1}");
    fx_const(&c, "v1", S("a"));
    fx_const(&c, "v2", S("b"));
    expect_walk(&c, "{'v1': 'a', 'v2': 'b'}"); /* exactly one run */
    fx_free(&s);
    fx_free(&c);
}

static void test_int_uniform_bounded(void **state)
{
    sw_spec s = {.method = SW_METHOD_GRID};
    sw_search *g;
    sw_trial t;
    int64_t i;

    (void)state;
    fx_int(&s, "v1", -52, 10);
    fx_const(&s, "v2", S("test"));
    assert_int_equal(sw_search_new(&g, &s, 0), SW_OK);
    sw_trial_init(&t);
    for (i = -52; i <= 10; i++) {
        const sw_value *v;

        assert_int_equal(sw_search_next(g, &t), SW_OK);
        v = fx_get(t.params, "v1");
        assert_int_equal(v->type, SW_INT);
        assert_true(v->u.i == i);
    }
    assert_int_equal(sw_search_next(g, &t), SW_EDONE); /* 63 runs */
    sw_trial_dispose(&t);
    sw_search_free(g);
    fx_free(&s);
}

static void test_q_uniform_is_numpy_arange(void **state)
{
    sw_spec s = {.method = SW_METHOD_GRID};
    sw_param *p = fx_range(&s, "v1", SW_DIST_Q_UNIFORM, -9.211, 23.23);
    double delta = (-9.211 + 2.341) - -9.211;

    (void)state;
    p->q = 2.341;
    {
        sw_search *g;
        sw_trial t;
        uint64_t i;

        assert_int_equal(sw_search_new(&g, &s, 0), SW_OK);
        sw_trial_init(&t);
        for (i = 0; sw_search_next(g, &t) == SW_OK; i++) {
            const sw_value *v = fx_get(t.params, "v1");
            double want = i == 0   ? -9.211
                          : i == 1 ? -9.211 + 2.341
                                   : -9.211 + (double)i * delta;

            assert_int_equal(v->type, SW_FLOAT);
            assert_true(v->u.f == want);
            assert_true(v->u.f < 23.23);
        }
        assert_true(i == 14);
        sw_trial_dispose(&t);
        sw_search_free(g);
    }
    fx_free(&s);
}

static void test_q_uniform_ints_and_floats(void **state)
{
    sw_spec s = {.method = SW_METHOD_GRID};
    sw_param *p = fx_range(&s, "x", SW_DIST_Q_UNIFORM, 0, 10);

    (void)state;
    p->q = 3;
    expect_walk(&s, "{'x': 0.0} {'x': 3.0} {'x': 6.0} {'x': 9.0}");
    p->q_int = true; /* np.arange(0, 10, 3): int64 */
    expect_walk(&s, "{'x': 0} {'x': 3} {'x': 6} {'x': 9}");
    p->max = 9; /* max excluded */
    expect_walk(&s, "{'x': 0} {'x': 3} {'x': 6}");
    fx_free(&s);
}

/* W&B's nested_grid_search_advances: p1, p2.n1, p2.n3 vary, n3 fastest. */
static void test_nested(void **state)
{
    sw_spec s = {.method = SW_METHOD_GRID};
    sw_search *g;
    sw_trial t;

    (void)state;
    fx_values(&s, "p1", 3, (sw_value *[]){S("a"), S("b"), S("c")});
    fx_values(&s, "p2.n1", 2,
              (sw_value *[]){sw_value_float(0.01), sw_value_float(0.001)});
    fx_const(&s, "p2.n2", sw_value_float(0.9));
    fx_values(&s, "p2.n3", 3, (sw_value *[]){I(1), I(2), I(3)});
    assert_int_equal(sw_search_new(&g, &s, 0), SW_OK);
    sw_trial_init(&t);
    assert_int_equal(sw_search_at(g, 1, &t), SW_OK);
    {
        char *py = sw_value_to_py(t.params);

        assert_string_equal(py, "{'p1': 'a', 'p2': {'n1': 0.01, 'n2': 0.9, "
                                "'n3': 2}}");
        free(py);
    }
    assert_int_equal(sw_search_at(g, 17, &t), SW_OK);
    assert_string_equal(fx_get(t.params, "p1")->u.s, "c");
    assert_true(fx_get(t.params, "p2.n1")->u.f == 0.001);
    assert_true(fx_get(t.params, "p2.n3")->u.i == 3);
    assert_int_equal(sw_search_at(g, 18, &t), SW_EDONE);
    sw_trial_dispose(&t);
    sw_search_free(g);
    fx_free(&s);
}

static void test_trillion_points_cost_nothing(void **state)
{
    sw_spec s = {.method = SW_METHOD_GRID};
    const uint64_t T = UINT64_C(1000000000000);
    sw_search *g;
    sw_trial t;
    uint64_t n;
    bool bounded, sat;

    (void)state;
    fx_int(&s, "a", 1, 1000);
    fx_int(&s, "b", 1, 1000);
    fx_int(&s, "c", 1, 1000);
    fx_int(&s, "d", 1, 1000);
    assert_int_equal(sw_search_new(&g, &s, 0), SW_OK);
    sw_search_size(g, &n, &bounded, &sat);
    assert_true(n == T && bounded && !sat);
    sw_trial_init(&t);
    assert_int_equal(sw_search_at(g, T - 1, &t), SW_OK);
    assert_true(fx_get(t.params, "a")->u.i == 1000);
    assert_true(fx_get(t.params, "d")->u.i == 1000);
    assert_int_equal(sw_search_at(g, UINT64_C(123456789012), &t), SW_OK);
    assert_true(fx_get(t.params, "a")->u.i == 124); /* digits 123 456 789 12 */
    assert_true(fx_get(t.params, "b")->u.i == 457);
    assert_true(fx_get(t.params, "c")->u.i == 790);
    assert_true(fx_get(t.params, "d")->u.i == 13);
    assert_int_equal(sw_search_at(g, T, &t), SW_EDONE);
    sw_trial_dispose(&t);
    sw_search_free(g);
    fx_free(&s);
}

static void test_saturation_past_2_64(void **state)
{
    sw_spec s = {.method = SW_METHOD_GRID};
    sw_spec full = {.method = SW_METHOD_GRID};
    sw_search *g;
    sw_trial t;
    uint64_t n;
    bool sat;
    int i;

    (void)state;
    for (i = 0; i < 5; i++) { /* (2^20)^5 = 2^100 points */
        char name[2] = {(char)('a' + i), 0};

        fx_int(&s, name, 0, (1 << 20) - 1);
    }
    assert_int_equal(sw_grid_size(&s, &n, &sat), SW_OK);
    assert_true(n == UINT64_MAX && sat);
    assert_int_equal(sw_search_new(&g, &s, 0), SW_OK);
    sw_trial_init(&t);
    assert_int_equal(sw_search_at(g, UINT64_MAX - 1, &t), SW_OK);
    assert_true(fx_get(t.params, "e")->u.i == (1 << 20) - 2);
    assert_true(fx_get(t.params, "d")->u.i == (1 << 20) - 1);
    assert_true(fx_get(t.params, "b")->u.i == 15); /* (2^64 - 2) >> 60 */
    assert_true(fx_get(t.params, "a")->u.i == 0);
    sw_search_free(g);
    /* one axis of exactly 2^64 values: the whole int64 range */
    fx_int(&full, "x", INT64_MIN, INT64_MAX);
    assert_int_equal(sw_grid_size(&full, &n, &sat), SW_OK);
    assert_true(n == UINT64_MAX && sat);
    assert_int_equal(sw_search_new(&g, &full, 0), SW_OK);
    assert_int_equal(sw_search_at(g, 5, &t), SW_OK);
    assert_true(fx_get(t.params, "x")->u.i == INT64_MIN + 5);
    assert_int_equal(sw_search_at(g, UINT64_MAX, &t), SW_OK);
    assert_true(fx_get(t.params, "x")->u.i == INT64_MAX);
    sw_trial_dispose(&t);
    sw_search_free(g);
    fx_free(&s);
    fx_free(&full);
}

static void test_continuous_is_refused(void **state)
{
    sw_spec s = {.method = SW_METHOD_GRID};
    sw_search *g = NULL;
    uint64_t n;
    bool sat;

    (void)state;
    fx_values(&s, "batch", 2, (sw_value *[]){I(16), I(32)});
    fx_range(&s, "lr", SW_DIST_UNIFORM, 0.001, 0.1);
    assert_int_equal(sw_search_new(&g, &s, 0), SW_EINVALID);
    assert_null(g);
    assert_string_equal(sw_error_last(),
                        "parameters.lr: grid search needs discrete values; "
                        "uniform is continuous (use values, int_uniform or "
                        "q_uniform)");
    assert_int_equal(sw_grid_size(&s, &n, &sat), SW_EINVALID);
    s.file = "sweep.yaml";
    s.params[1].line = 12;
    s.params[1].col = 5;
    s.params[1].dist = SW_DIST_LOG_UNIFORM_VALUES;
    assert_int_equal(sw_search_new(&g, &s, 0), SW_EINVALID);
    assert_string_equal(sw_error_last(),
                        "sweep.yaml:12:5: parameters.lr: grid search needs "
                        "discrete values; log_uniform_values is continuous "
                        "(use values, int_uniform or q_uniform)");
    s.file = NULL;
    fx_free(&s);
}

static void test_probabilities_are_refused(void **state)
{
    sw_spec s = {.method = SW_METHOD_GRID};
    sw_param *p;
    sw_search *g = NULL;

    (void)state;
    p = fx_values(&s, "c", 2, (sw_value *[]){I(1), I(2)});
    p->probs = sw_calloc(2, sizeof(double));
    p->probs[0] = p->probs[1] = 0.5;
    assert_int_equal(sw_search_new(&g, &s, 0), SW_EINVALID);
    assert_non_null(strstr(sw_error_last(), "parameters.c: grid search"));
    fx_free(&s);
}

static void test_run_cap(void **state)
{
    sw_spec s = {.method = SW_METHOD_GRID, .run_cap = 4};
    sw_search *g;
    sw_trial t;
    uint64_t n;
    bool bounded, sat;
    int i;

    (void)state;
    fx_values(&s, "v1", 3, (sw_value *[]){I(1), I(2), I(3)});
    fx_values(&s, "v2", 2, (sw_value *[]){I(4), I(5)});
    assert_int_equal(sw_search_new(&g, &s, 0), SW_OK);
    sw_search_size(g, &n, &bounded, &sat);
    assert_true(n == 4 && bounded && !sat);
    sw_trial_init(&t);
    for (i = 0; i < 4; i++)
        assert_int_equal(sw_search_next(g, &t), SW_OK);
    assert_int_equal(sw_search_next(g, &t), SW_EDONE);
    assert_int_equal(sw_search_at(g, 4, &t), SW_EDONE);
    sw_search_free(g);
    s.run_cap = 10; /* a cap above the grid changes nothing */
    assert_int_equal(sw_search_new(&g, &s, 0), SW_OK);
    sw_search_size(g, &n, &bounded, &sat);
    assert_true(n == 6);
    for (i = 0; i < 6; i++)
        assert_int_equal(sw_search_next(g, &t), SW_OK);
    assert_int_equal(sw_search_next(g, &t), SW_EDONE);
    sw_trial_dispose(&t);
    sw_search_free(g);
    fx_free(&s);
}

static void test_ids_are_stable_and_distinct(void **state)
{
    sw_spec s = {.method = SW_METHOD_GRID};
    sw_search *a, *b;
    sw_trial t, u;
    char ids[6][17];
    int i, j;

    (void)state;
    fx_values(&s, "v1", 3, (sw_value *[]){I(1), I(2), I(3)});
    fx_values(&s, "v2", 2, (sw_value *[]){I(4), I(5)});
    assert_int_equal(sw_search_new(&a, &s, 1), SW_OK);
    assert_int_equal(sw_search_new(&b, &s, 2), SW_OK); /* seed: no effect */
    sw_trial_init(&t);
    sw_trial_init(&u);
    for (i = 0; i < 6; i++) {
        assert_int_equal(sw_search_next(a, &t), SW_OK);
        assert_int_equal(sw_search_at(b, (uint64_t)i, &u), SW_OK);
        assert_true(t.index == (uint64_t)i);
        assert_string_equal(t.id, u.id);
        assert_int_equal(strlen(t.id), 16);
        assert_int_equal(strspn(t.id, "0123456789abcdef"), 16);
        memcpy(ids[i], t.id, 17);
        for (j = 0; j < i; j++)
            assert_string_not_equal(ids[i], ids[j]);
    }
    /* the id is the params' hash: the same params built by hand agree */
    sw_trial_dispose(&u);
    u.params = sw_value_map();
    sw_value_map_set(u.params, "v2", I(5)); /* key order is irrelevant */
    sw_value_map_set(u.params, "v1", I(3));
    sw_trial_set_id(&u);
    assert_string_equal(u.id, ids[5]);
    assert_int_equal(sw_search_observe(a, &t, 0.5), SW_OK);
    sw_trial_dispose(&t);
    sw_trial_dispose(&u);
    sw_search_free(a);
    sw_search_free(b);
    fx_free(&s);
}

/* As W&B's: bayes needs something to search. */
static void test_bayes_needs_a_parameter(void **state)
{
    sw_spec s = {.method = SW_METHOD_BAYES};
    sw_search *g = NULL;

    (void)state;
    fx_const(&s, "x", sw_value_int(3));
    assert_int_equal(sw_search_new(&g, &s, 0), SW_EINVALID);
    assert_string_equal(sw_error_last(),
                        "bayes needs at least one parameter that is not a "
                        "constant");
    assert_null(g);
    fx_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_two_params_last_fastest),
        cmocka_unit_test(test_list_values),
        cmocka_unit_test(test_collapsed_duplicates_keep_order),
        cmocka_unit_test(test_duplicated_values_count),
        cmocka_unit_test(test_constants),
        cmocka_unit_test(test_int_uniform_bounded),
        cmocka_unit_test(test_q_uniform_is_numpy_arange),
        cmocka_unit_test(test_q_uniform_ints_and_floats),
        cmocka_unit_test(test_nested),
        cmocka_unit_test(test_trillion_points_cost_nothing),
        cmocka_unit_test(test_saturation_past_2_64),
        cmocka_unit_test(test_continuous_is_refused),
        cmocka_unit_test(test_probabilities_are_refused),
        cmocka_unit_test(test_run_cap),
        cmocka_unit_test(test_ids_are_stable_and_distinct),
        cmocka_unit_test(test_bayes_needs_a_parameter),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
