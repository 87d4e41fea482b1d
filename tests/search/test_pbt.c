/*
 * test_pbt.c - population-based training's decisions (search/pbt.c)
 * against cases worked out by hand: the rounds, the quota Ray Tune
 * counts (ceil(population * quantile), at most half), truncation
 * selection with ended members ranked last, ties by place, and each
 * perturbation of explore (factors, bounds, ints and q moved at least a
 * step, neighbouring categoricals, constants, resampling, nested
 * parameters); the same seed gives the same decisions in any order.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "search/pbt.h"
#include "sweeps/error.h"
#include "sweeps/json.h"

static double two[] = {2.0}, half[] = {0.5}, ray[] = {0.8, 1.2};

static sw_pbt_spec spec_of(int64_t population, int64_t interval,
                           int64_t max_iter, double quantile)
{
    sw_pbt_spec s = {population, interval, max_iter, quantile, ray, 2, 0.0};

    return s;
}

static sw_pbt *make(const sw_pbt_spec *s, bool maximize)
{
    sw_pbt *p = NULL;

    assert_int_equal(sw_pbt_new(&p, s, maximize, 42), SW_OK);
    return p;
}

static void test_rounds(void **state)
{
    sw_pbt_spec s = spec_of(4, 4, 10, 0.25);
    sw_pbt *p = make(&s, false);

    (void)state;
    /* rounds at 4, 8 and 10 (max_iter, the last) */
    assert_int_equal(sw_pbt_rounds(p), 3);
    assert_int_equal(sw_pbt_round_iter(p, 0), 0);
    assert_int_equal(sw_pbt_round_iter(p, 1), 4);
    assert_int_equal(sw_pbt_round_iter(p, 2), 8);
    assert_int_equal(sw_pbt_round_iter(p, 3), 10);
    assert_int_equal(sw_pbt_round_iter(p, 9), 10);
    assert_int_equal(sw_pbt_round_at(p, 4), 1);
    assert_int_equal(sw_pbt_round_at(p, 8), 2);
    assert_int_equal(sw_pbt_round_at(p, 10), 3);
    assert_int_equal(sw_pbt_round_at(p, 5), 0);
    assert_int_equal(sw_pbt_round_at(p, 0), 0);
    assert_int_equal(sw_pbt_round(p), 1);
    sw_pbt_start_at(p, 7);
    assert_int_equal(sw_pbt_round(p), 3); /* no round past the last */
    sw_pbt_free(p);
}

static void test_bad_parameters(void **state)
{
    sw_pbt_spec s[] = {spec_of(1, 4, 10, 0.25), spec_of(4, 0, 10, 0.25),
                       spec_of(4, 4, 4, 0.25),  spec_of(4, 4, 10, 0.0),
                       spec_of(4, 4, 10, 0.75), spec_of(4, 4, 10, NAN)};
    sw_pbt_spec none = spec_of(4, 4, 10, 0.25);
    sw_pbt *p = NULL;

    (void)state;
    for (size_t i = 0; i < sizeof(s) / sizeof(*s); i++)
        assert_int_equal(sw_pbt_new(&p, &s[i], false, 1), SW_EINVALID);
    none.n_factors = 0;
    assert_int_equal(sw_pbt_new(&p, &none, false, 1), SW_EINVALID);
    assert_null(p);
}

/* ceil(population * quantile), at most population / 2, at least 1 */
static void test_quota(void **state)
{
    static const struct {
        int64_t population;
        double quantile;
        size_t quota;
    } cases[] = {
        {4, 0.25, 1}, {8, 0.25, 2}, {5, 0.5, 2},
        {2, 0.1, 1},  {10, 0.3, 3}, /* 10 * 0.3 is 3.0000000000000004: still 3
                                     */
        {7, 0.2, 2},  {3, 0.5, 1},  {16, 0.5, 8},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
        sw_pbt_spec s = spec_of(cases[i].population, 2, 8, cases[i].quantile);
        sw_pbt *p = make(&s, false);

        assert_int_equal(sw_pbt_quota(p), cases[i].quota);
        sw_pbt_free(p);
    }
}

/* Population 4, quantile 0.25: the worst copies the best. */
static void test_truncation(void **state)
{
    sw_pbt_spec s = spec_of(4, 4, 12, 0.25);
    sw_pbt *p = make(&s, false), *q = make(&s, true);
    sw_pbt_exploit x[4];
    double v;

    (void)state;
    /* loss 0.5, 0.2, 0.9, 0.4: ranked 1, 3, 0, 2 */
    sw_pbt_record(p, 2, 1, 0.9);
    sw_pbt_record(p, 0, 1, 0.5);
    sw_pbt_record(p, 3, 1, 0.4);
    sw_pbt_record(p, 1, 1, 0.2);
    assert_int_equal(sw_pbt_decide(p, x), 1);
    assert_int_equal(x[0].member, 2);
    assert_int_equal(x[0].parent, 1);
    /* maximize: ranked 2, 0, 3, 1: member 1 copies member 2 */
    for (size_t i = 0; i < 4; i++)
        sw_pbt_record(q, i, 1, (double[]){0.5, 0.2, 0.9, 0.4}[i]);
    assert_int_equal(sw_pbt_decide(q, x), 1);
    assert_int_equal(x[0].member, 1);
    assert_int_equal(x[0].parent, 2);

    /* decide() changes nothing; advance() goes on, nothing recorded */
    assert_int_equal(sw_pbt_decide(p, x), 1);
    assert_true(sw_pbt_reached(p, 1, &v));
    assert_true(v == 0.2);
    sw_pbt_advance(p);
    assert_int_equal(sw_pbt_round(p), 2);
    assert_false(sw_pbt_reached(p, 1, NULL));
    /* a record of another round is ignored, and a second one */
    sw_pbt_record(p, 0, 1, 0.1);
    assert_false(sw_pbt_reached(p, 0, NULL));
    sw_pbt_record(p, 0, 2, 0.3);
    sw_pbt_record(p, 0, 2, 0.0);
    assert_true(sw_pbt_reached(p, 0, &v));
    assert_true(v == 0.3);
    sw_pbt_free(p);
    sw_pbt_free(q);
}

/* Ended members rank below all others and are always replaced; ties go
 * by place; a NaN ranks last; nothing at the last round, nothing when
 * none reached it. */
static void test_ended_ties_nan(void **state)
{
    sw_pbt_spec s4 = spec_of(4, 4, 12, 0.25), s8 = spec_of(8, 4, 12, 0.25);
    sw_pbt *p = make(&s4, false), *q = make(&s8, false);
    sw_pbt_exploit x[8];

    (void)state;
    /* member 2 ended: it is the bottom one, and the only loser */
    sw_pbt_record(p, 0, 1, 0.5);
    sw_pbt_record(p, 1, 1, 0.2);
    sw_pbt_record(p, 3, 1, 0.9);
    assert_int_equal(sw_pbt_decide(p, x), 1);
    assert_int_equal(x[0].member, 2);
    assert_int_equal(x[0].parent, 1);
    sw_pbt_advance(p);
    /* all equal: ranked by place, 3 copies 0 */
    for (size_t i = 0; i < 4; i++)
        sw_pbt_record(p, i, 2, 1.0);
    assert_int_equal(sw_pbt_decide(p, x), 1);
    assert_int_equal(x[0].member, 3);
    assert_int_equal(x[0].parent, 0);
    sw_pbt_advance(p);
    assert_int_equal(sw_pbt_round(p), 3); /* the last: it finishes */
    for (size_t i = 0; i < 4; i++)
        sw_pbt_record(p, i, 3, 1.0);
    assert_int_equal(sw_pbt_decide(p, x), 0);

    /* quota 2 of 8; three ended (1, 4, 6), all replaced, from the top
     * 2 (members 0 and 7); a NaN (member 5) survives the bottom then */
    assert_int_equal(sw_pbt_decide(q, x), 0); /* none reached */
    sw_pbt_record(q, 0, 1, 0.1);
    sw_pbt_record(q, 2, 1, 0.6);
    sw_pbt_record(q, 3, 1, 0.5);
    sw_pbt_record(q, 5, 1, NAN);
    sw_pbt_record(q, 7, 1, 0.2);
    assert_int_equal(sw_pbt_decide(q, x), 3);
    assert_int_equal(x[0].member, 1);
    assert_int_equal(x[1].member, 4);
    assert_int_equal(x[2].member, 6);
    for (size_t i = 0; i < 3; i++)
        assert_true(x[i].parent == 0 || x[i].parent == 7);
    sw_pbt_free(q);

    /* one ended of 8: it and the NaN are the bottom 2 */
    q = make(&s8, false);
    for (size_t i = 0; i < 8; i++)
        if (i != 4)
            sw_pbt_record(q, i, 1, i == 5 ? NAN : (double)i);
    assert_int_equal(sw_pbt_decide(q, x), 2);
    assert_int_equal(x[0].member, 4);
    assert_int_equal(x[1].member, 5);
    for (size_t i = 0; i < 2; i++)
        assert_true(x[i].parent == 0 || x[i].parent == 1);
    sw_pbt_free(q);
    sw_pbt_free(p);
}

/* The parents drawn from a top of 4 are the same whatever order the
 * records came in, and every one of the top is drawn sometime. */
static void test_parents_replayable(void **state)
{
    sw_pbt_spec s = spec_of(16, 2, 400, 0.25);
    sw_pbt *p = make(&s, false), *q = make(&s, false);
    sw_pbt_exploit x[16], y[16];
    bool drawn[16] = {false};
    size_t n, i, k;

    (void)state;
    for (k = 1; k < 100; k++) {
        for (i = 0; i < 16; i++) {
            sw_pbt_record(p, i, k, (double)((i * 7 + k) % 16));
            sw_pbt_record(q, 15 - i, k, (double)(((15 - i) * 7 + k) % 16));
        }
        n = sw_pbt_decide(p, x);
        assert_int_equal(n, 4);
        assert_int_equal(sw_pbt_decide(q, y), 4);
        assert_memory_equal(x, y, n * sizeof(*x));
        for (i = 0; i < n; i++) {
            /* the top 4 are those whose value is 0, 1, 2, 3 */
            assert_true((x[i].parent * 7 + k) % 16 < 4);
            assert_true((x[i].member * 7 + k) % 16 >= 12);
            drawn[(x[i].parent * 7 + k) % 16] = true;
        }
        sw_pbt_advance(p);
        sw_pbt_advance(q);
    }
    for (i = 0; i < 4; i++)
        assert_true(drawn[i]);
    sw_pbt_free(p);
    sw_pbt_free(q);
}

/* ---- explore ---------------------------------------------------------- */

static const char space[] =
    "method: pbt\n"
    "metric: {name: loss}\n"
    "pbt: {population: 4, interval: 2, max_iter: 6}\n"
    "parameters:\n"
    "  lr: {distribution: log_uniform_values, min: 0.0001, max: 0.1}\n"
    "  x: {min: 0.0, max: 6.0}\n"
    "  n: {min: 1, max: 10}\n"
    "  q: {distribution: q_uniform, min: 0, max: 10, q: 1}\n"
    "  opt: {values: [sgd, adam, rmsprop]}\n"
    "  c: {value: 7}\n"
    "  net: {parameters: {width: {values: [64, 128]}}}\n";

static sw_spec *load_space(void)
{
    sw_spec *spec = NULL;
    sw_diags d;

    sw_diags_init(&d, "space.yaml");
    assert_int_equal(
        sw_spec_parse(&spec, "space.yaml", space, strlen(space), &d), SW_OK);
    sw_diags_dispose(&d);
    return spec;
}

static sw_value *json(const char *text)
{
    sw_value *v = NULL;

    assert_int_equal(sw_json_parse(&v, text, strlen(text)), SW_OK);
    return v;
}

/* The perturbed params as canonical JSON, for comparing. */
static char *perturbed(const sw_pbt *p, const sw_spec *spec, const char *from,
                       size_t k, size_t member)
{
    sw_value *in = json(from), *out = NULL;
    sw_buf b = SW_BUF_INIT;

    assert_int_equal(sw_pbt_perturb(p, spec, in, k, member, &out), SW_OK);
    sw_value_write_json(&b, out, true);
    sw_value_free(in);
    sw_value_free(out);
    return sw_buf_detach(&b);
}

static void expect(const sw_pbt *p, const sw_spec *spec, const char *from,
                   const char *want)
{
    char *got = perturbed(p, spec, from, 1, 0);

    assert_string_equal(got, want);
    free(got);
}

/* One factor, no resampling: every value as worked out by hand. */
static void test_perturb_by_hand(void **state)
{
    sw_spec *spec = load_space();
    sw_pbt_spec s = spec->pbt, t;
    sw_pbt *up, *down;

    (void)state;
    s.resample_probability = 0;
    s.n_factors = 1;
    t = s; /* borrowed by the pbt: one each */
    s.factors = two;
    t.factors = half;
    up = make(&s, false);
    down = make(&t, false);
    /* x2: lr 0.01 -> 0.02; x 2.5 -> 5; n 3 -> 6; q 2 -> 4; sgd -> adam
     * (its one neighbour); 128 -> 64; the constant stays */
    expect(up, spec,
           "{\"lr\": 0.01, \"x\": 2.5, \"n\": 3, \"q\": 2, \"opt\": \"sgd\","
           " \"c\": 7, \"net\": {\"width\": 128}}",
           "{\"c\": 7, \"lr\": 0.02, \"n\": 6, \"net\": {\"width\": 64}, "
           "\"opt\": \"adam\", \"q\": 4, \"x\": 5.0}");
    /* x2 past the bounds: clipped to them; rmsprop -> adam */
    expect(up, spec,
           "{\"lr\": 0.08, \"x\": 5, \"n\": 9, \"q\": 7, \"opt\": \"rmsprop\","
           " \"c\": 7, \"net\": {\"width\": 64}}",
           "{\"c\": 7, \"lr\": 0.1, \"n\": 10, \"net\": {\"width\": 128}, "
           "\"opt\": \"adam\", \"q\": 10, \"x\": 6.0}");
    /* x0.5: n 3 -> 1.5 -> 2; n 1 -> 0.5 rounds to 0, below min: 1; q 1
     * -> 0.5 rounds (half to even) to 0; lr at its floor stays */
    expect(down, spec,
           "{\"lr\": 0.0001, \"x\": 3, \"n\": 3, \"q\": 1, \"opt\": \"sgd\","
           " \"c\": 7, \"net\": {\"width\": 64}}",
           "{\"c\": 7, \"lr\": 0.0001, \"n\": 2, \"net\": {\"width\": 128}, "
           "\"opt\": \"adam\", \"q\": 0, \"x\": 1.5}");
    expect(down, spec,
           "{\"lr\": 0.001, \"x\": 0, \"n\": 1, \"q\": 0, \"opt\": \"sgd\","
           " \"c\": 7, \"net\": {\"width\": 64}}",
           "{\"c\": 7, \"lr\": 0.0005, \"n\": 1, \"net\": {\"width\": 128}, "
           "\"opt\": \"adam\", \"q\": 0, \"x\": 0.0}");
    sw_pbt_free(up);
    sw_pbt_free(down);
    sw_spec_free(spec);
}

/* Ints and q-values that a factor would round back to themselves move
 * a step: 1 x 1.2 = 1.2 -> 2; q 2 x 1.2 = 2.4 -> 3; 4 x 0.8 = 3.2 -> 3. */
static void test_perturb_moves_a_step(void **state)
{
    sw_spec *spec = load_space();
    sw_pbt_spec s = spec->pbt, t;
    double f12[] = {1.2}, f08[] = {0.8};
    sw_pbt *up, *down;

    (void)state;
    s.resample_probability = 0;
    s.n_factors = 1;
    t = s;
    s.factors = f12;
    t.factors = f08;
    up = make(&s, false);
    down = make(&t, false);
    expect(up, spec,
           "{\"lr\": 0.01, \"x\": 1, \"n\": 1, \"q\": 2, \"opt\": \"sgd\","
           " \"c\": 7, \"net\": {\"width\": 64}}",
           "{\"c\": 7, \"lr\": 0.012, \"n\": 2, \"net\": {\"width\": 128}, "
           "\"opt\": \"adam\", \"q\": 3, \"x\": 1.2}");
    expect(down, spec,
           "{\"lr\": 0.01, \"x\": 1, \"n\": 4, \"q\": 4, \"opt\": \"sgd\","
           " \"c\": 7, \"net\": {\"width\": 64}}",
           "{\"c\": 7, \"lr\": 0.008, \"n\": 3, \"net\": {\"width\": 128}, "
           "\"opt\": \"adam\", \"q\": 3, \"x\": 0.8}");
    sw_pbt_free(up);
    sw_pbt_free(down);
    sw_spec_free(spec);
}

/* Ray's factors: each value is one of x0.8 or x1.2, adam goes to either
 * neighbour; the same (round, member) gives the same params, and many
 * give every choice. Resampling always: values of the space. */
static void test_perturb_random(void **state)
{
    sw_spec *spec = load_space();
    sw_pbt_spec s = spec->pbt, t = spec->pbt;
    sw_pbt *p, *r;
    const char *from = "{\"lr\": 0.01, \"x\": 2.5, \"n\": 5, \"q\": 5, "
                       "\"opt\": \"adam\", \"c\": 7, \"net\": {\"width\": 64}}";
    bool sgd = false, rms = false, lo = false, hi = false;
    sw_value *v;
    double x, lr;

    (void)state;
    s.resample_probability = 0;
    p = make(&s, false);
    for (size_t m = 0; m < 64; m++) {
        char *a = perturbed(p, spec, from, 3, m);
        char *b = perturbed(p, spec, from, 3, m);

        assert_string_equal(a, b);
        v = json(a);
        sw_value_number(sw_value_map_get(v, "x"), &x);
        sw_value_number(sw_value_map_get(v, "lr"), &lr);
        assert_true(fabs(x - 2.0) < 1e-12 || fabs(x - 3.0) < 1e-12);
        assert_true(fabs(lr - 0.008) < 1e-15 || fabs(lr - 0.012) < 1e-15);
        lo = lo || x < 2.5;
        hi = hi || x > 2.5;
        sgd = sgd || strstr(a, "\"sgd\"");
        rms = rms || strstr(a, "\"rmsprop\"");
        sw_value_free(v);
        free(a);
        free(b);
    }
    assert_true(sgd && rms && lo && hi);

    t.resample_probability = 1.0;
    r = make(&t, false);
    for (size_t m = 0; m < 64; m++) {
        char *a = perturbed(r, spec, from, 1, m);
        double n, q;

        v = json(a);
        sw_value_number(sw_value_map_get(v, "x"), &x);
        sw_value_number(sw_value_map_get(v, "lr"), &lr);
        sw_value_number(sw_value_map_get(v, "n"), &n);
        sw_value_number(sw_value_map_get(v, "q"), &q);
        assert_true(x >= 0 && x <= 6 && lr >= 0.0001 && lr <= 0.1);
        assert_true(n >= 1 && n <= 10 && n == floor(n));
        assert_true(q >= 0 && q <= 10 && q == floor(q));
        assert_true(strstr(a, "\"c\": 7") != NULL);
        sw_value_free(v);
        free(a);
    }
    sw_pbt_free(r);
    sw_pbt_free(p);
    sw_spec_free(spec);
}

/* A leaf missing from the params is an error naming it; a value outside
 * a categorical's list is drawn again. */
static void test_perturb_missing(void **state)
{
    sw_spec *spec = load_space();
    sw_pbt *p = make(&spec->pbt, false);
    sw_value *in = json("{\"lr\": 0.01, \"x\": 1, \"n\": 2, \"q\": 2, "
                        "\"opt\": \"sgd\", \"c\": 7}"),
             *out = NULL;
    char *got;

    (void)state;
    assert_int_equal(sw_pbt_perturb(p, spec, in, 1, 0, &out), SW_EINVALID);
    assert_non_null(strstr(sw_error_last(), "net.width"));
    assert_null(out);
    got = perturbed(p, spec,
                    "{\"lr\": 0.01, \"x\": 1, \"n\": 2, \"q\": 2, \"opt\": "
                    "\"lbfgs\", \"c\": 7, \"net\": {\"width\": 64}}",
                    1, 0);
    assert_true(strstr(got, "\"sgd\"") || strstr(got, "\"adam\"") ||
                strstr(got, "\"rmsprop\""));
    free(got);
    sw_value_free(in);
    sw_pbt_free(p);
    sw_spec_free(spec);
}

static void test_explain(void **state)
{
    sw_pbt_spec s = spec_of(4, 4, 12, 0.25);
    sw_pbt *p = make(&s, false);
    sw_buf b = SW_BUF_INIT;

    (void)state;
    sw_pbt_record(p, 0, 1, 0.5);
    sw_pbt_record(p, 3, 1, 0.25);
    sw_pbt_record(p, 1, 1, 0.75);
    sw_pbt_explain(p, 0, &b);
    assert_string_equal(sw_buf_cstr(&b),
                        "round 1 (iteration 4): value 0.5, 2nd of the 3 "
                        "there so far");
    b.len = 0;
    sw_pbt_explain(p, 2, &b);
    assert_string_equal(sw_buf_cstr(&b),
                        "round 1 (iteration 4): not reached yet");
    sw_buf_dispose(&b);
    sw_pbt_free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rounds),
        cmocka_unit_test(test_bad_parameters),
        cmocka_unit_test(test_quota),
        cmocka_unit_test(test_truncation),
        cmocka_unit_test(test_ended_ties_nan),
        cmocka_unit_test(test_parents_replayable),
        cmocka_unit_test(test_perturb_by_hand),
        cmocka_unit_test(test_perturb_moves_a_step),
        cmocka_unit_test(test_perturb_random),
        cmocka_unit_test(test_perturb_missing),
        cmocka_unit_test(test_explain),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
