/*
 * test_stopping.c - the stopping rules. Hyperband against W&B's own
 * tests (wandb/sweeps tests/test_hyperband_stopping.py): the same runs,
 * states and configs, and the same runs stopped; the values W&B's
 * thresholds come to, worked out by hand from its hyperband_stop_runs.
 * ASHA and the median rule against cases computed by hand (the numbers
 * are in docs/stopping.md's terms). Hyperband and the median rule are
 * also set against their definitions computed from whole histories, on
 * random cases with ties. Runs W&B marks finished are observed but never
 * asked about: only running runs are candidates.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "search/rng.h"
#include "search/stopping.h"
#include "sweeps/error.h"

#define END 1e300 /* ends a history */

typedef struct {
    bool running;
    double v[128]; /* values, up to END */
} run_t;

static sw_early_terminate hyperband(int64_t min_iter, int64_t max_iter,
                                    int64_t s, double eta, bool strict)
{
    sw_early_terminate et = {.rule = SW_STOP_HYPERBAND,
                             .min_iter = min_iter,
                             .max_iter = max_iter,
                             .s = s,
                             .eta = eta,
                             .strict = strict};
    return et;
}

static size_t hist_len(const run_t *r)
{
    size_t n = 0;

    while (n < 128 && r->v[n] != END)
        n++;
    return n;
}

/* Observes every run's history, run after run (or, interleaved, one value
 * of each in turn), and returns the running runs to stop as a bit set. */
static unsigned feed(sw_stopper *s, const run_t *runs, size_t n,
                     bool interleaved)
{
    size_t i, t, len, longest = 0;
    unsigned stop = 0;

    for (i = 0; i < n; i++)
        longest = hist_len(&runs[i]) > longest ? hist_len(&runs[i]) : longest;
    for (t = 0; interleaved && t < longest; t++)
        for (i = 0; i < n; i++)
            if (t < hist_len(&runs[i]))
                sw_stopper_observe(s, (int64_t)i + 100, runs[i].v[t]);
    for (i = 0; !interleaved && i < n; i++)
        for (t = 0, len = hist_len(&runs[i]); t < len; t++)
            sw_stopper_observe(s, (int64_t)i + 100, runs[i].v[t]);
    for (i = 0; i < n; i++)
        if (runs[i].running && sw_stopper_should_stop(s, (int64_t)i + 100))
            stop |= 1u << i;
    return stop;
}

/* The runs to stop; Hyperband's answer must not depend on the order the
 * runs' values came in, so both orders are checked. */
static unsigned stops(const sw_early_terminate *et, bool maximize,
                      const run_t *runs, size_t n)
{
    sw_stopper *a, *b;
    unsigned x, y;

    assert_int_equal(sw_stopper_new(&a, et, maximize), SW_OK);
    assert_int_equal(sw_stopper_new(&b, et, maximize), SW_OK);
    x = feed(a, runs, n, false);
    y = feed(b, runs, n, true);
    assert_int_equal(x, y);
    sw_stopper_free(a);
    sw_stopper_free(b);
    return x;
}

static void expect_levels(const sw_early_terminate *et, size_t n,
                          const int64_t *want, size_t total)
{
    sw_stopper *s;
    const int64_t *at;
    size_t i;

    assert_int_equal(sw_stopper_new(&s, et, false), SW_OK);
    assert_int_equal(sw_stopper_levels(s, &at), total);
    for (i = 0; i < n; i++)
        assert_int_equal(at[i], want[i]);
    sw_stopper_free(s);
}

/* W&B's two-run setup: a flat run of 4 and a falling run of 10. */
static void two_runs(run_t r[2], double base, double step)
{
    int i;

    memset(r, 0, 2 * sizeof(*r));
    r[0].running = r[1].running = true;
    for (i = 0; i < 128; i++) {
        r[0].v[i] = i < 4 ? base : END;
        r[1].v[i] = i < 10 ? base + step * i : END;
    }
}

static void test_wandb_min_iter_bands(void **state)
{
    sw_early_terminate et = hyperband(3, 0, -1, 3, true);
    run_t r[2];

    (void)state;
    /* 3^1 .. 3^39, below 2^62 (no run gets further): 39 of W&B's 100 */
    expect_levels(&et, 3, (int64_t[]){3, 9, 27}, 39);
    two_runs(r, 10, -1);
    assert_int_equal(stops(&et, false, r, 2), 1u << 0);
    /* test_hyperband_min_iter_bands_max: accuracy to maximize */
    two_runs(r, 10, +1);
    assert_int_equal(stops(&et, true, r, 2), 1u << 0);
}

static void test_wandb_max_iter_bands(void **state)
{
    sw_early_terminate et = hyperband(0, 81, 3, 3, true);
    run_t r[2];

    (void)state;
    expect_levels(&et, 3, (int64_t[]){3, 9, 27}, 3);
    two_runs(r, 10, -1);
    assert_int_equal(stops(&et, false, r, 2), 1u << 0);
    /* test_init_from_max_iter */
    et = hyperband(0, 18, 2, 3, true);
    expect_levels(&et, 2, (int64_t[]){2, 6}, 2);
    assert_int_equal(stops(&et, false, r, 2), 1u << 0);
}

static void test_wandb_single_run_and_band1_pass(void **state)
{
    sw_early_terminate et = hyperband(0, 18, 2, 3, false);
    run_t r[2];

    (void)state;
    two_runs(r, 10, -1);
    assert_int_equal(stops(&et, false, &r[1], 1), 0); /* test_single_run */
    /* test_2runs_band1_pass: 10, 10, 6 has best 6 under band 2's 9 */
    r[0].v[2] = 6;
    r[0].v[3] = END;
    assert_int_equal(stops(&et, false, r, 2), 0);
}

/* W&B's five runs a..e, max_iter 5, eta 2, s 2: bands 1 and 2. */
static void test_wandb_5runs_band1_stop_2(void **state)
{
    sw_early_terminate et = hyperband(0, 5, 2, 2, true);
    run_t r[5] = {
        {false, {10, 9, END}},    {true, {10, 10, END}},
        {true, {10, 8, 8, END}},  {true, {10, 7, 7, END}},
        {false, {10, 6, 6, END}},
    };
    sw_stopper *s;
    double thr;

    (void)state;
    expect_levels(&et, 2, (int64_t[]){1, 2}, 2);
    assert_int_equal(stops(&et, false, r, 5), 1u << 1);
    /* band 1: index int(5 / 2) of 10 10 10 10 10; band 2: of 6 7 8 9 10 */
    assert_int_equal(sw_stopper_new(&s, &et, false), SW_OK);
    feed(s, r, 5, false);
    assert_true(sw_stopper_threshold(s, 0, &thr) && thr == 10);
    assert_true(sw_stopper_threshold(s, 1, &thr) && thr == 8);
    sw_stopper_free(s);
}

static void test_wandb_5runs_band1_stop_2_1stnoband(void **state)
{
    sw_early_terminate et = hyperband(0, 5, 2, 2, true);
    run_t r[5] = {
        {false, {10, END}},       {true, {11, END}},
        {true, {10, 8, 8, END}},  {true, {10, 7, 7, END}},
        {false, {10, 6, 6, END}},
    };

    (void)state;
    /* b is over band 1's 10; c over band 2's 7 (of 6 7 8, index 1) */
    assert_int_equal(stops(&et, false, r, 5), 1u << 1 | 1u << 2);
}

static void test_wandb_eta_3(void **state)
{
    sw_early_terminate et = hyperband(0, 9, 2, 3, false);
    run_t r[5] = {
        {false, {9, 8, END}},    {true, {11, 11, END}},
        {true, {10, 8, 3, END}}, {true, {10, 7, 4, END}},
        {true, {10, 6, 6, END}},
    };
    sw_stopper *s;
    double thr;

    (void)state;
    expect_levels(&et, 2, (int64_t[]){1, 3}, 2);
    assert_int_equal(stops(&et, false, r, 5), 1u << 1 | 1u << 4);
    /* W&B's comment says 7 and 4; its code gives 10 (index int(5/3) = 1
     * of 9 10 10 10 11) and 4 (index 1 of 3 4 6). d's best, 4, ties
     * the threshold and goes on. */
    assert_int_equal(sw_stopper_new(&s, &et, false), SW_OK);
    feed(s, r, 5, true);
    assert_true(sw_stopper_threshold(s, 0, &thr) && thr == 10);
    assert_true(sw_stopper_threshold(s, 1, &thr) && thr == 4);
    sw_stopper_free(s);
}

static void test_wandb_eta_3_max(void **state)
{
    sw_early_terminate et = hyperband(0, 9, 2, 3, false);
    run_t r[5] = {
        {false, {-10, -9, END}},        {true, {-11, -11, END}},
        {true, {-10, -8, -5, -3, END}}, {true, {-10, -6, -2, END}},
        {true, {-10, -6, -6, -6, END}},
    };
    sw_stopper *s;
    double thr;

    (void)state;
    assert_int_equal(stops(&et, true, r, 5), 1u << 1 | 1u << 4);
    assert_int_equal(sw_stopper_new(&s, &et, true), SW_OK);
    feed(s, r, 5, false);
    assert_true(sw_stopper_threshold(s, 0, &thr) && thr == -10);
    assert_true(sw_stopper_threshold(s, 1, &thr) && thr == -5);
    sw_stopper_free(s);
}

/* test_hyperband_runs_with_nan_metrics: a run whose values after the
 * first are NaN has one iteration, short of the first band (33). */
static void test_wandb_nan_metrics(void **state)
{
    sw_early_terminate et = hyperband(0, 300, 2, 3, true);
    run_t r[3] = {{true, {19.68895149230957}}, {false, {0}}, {false, {0}}};
    sw_stopper *s;
    int i;

    (void)state;
    expect_levels(&et, 2, (int64_t[]){33, 100}, 2);
    for (i = 1; i < 57; i++)
        r[0].v[i] = NAN;
    r[0].v[57] = END;
    for (i = 0; i < 61; i++) { /* two finished runs, falling from 6 to 4 */
        r[1].v[i] = 6.2 - 2.0 * i / 60 + 0.1 * sin(i);
        r[2].v[i] = 6.8 - 2.5 * i / 60 + 0.2 * cos(i);
    }
    r[1].v[61] = r[2].v[61] = END;
    assert_int_equal(stops(&et, false, r, 3), 0);
    assert_int_equal(sw_stopper_new(&s, &et, false), SW_OK);
    feed(s, r, 3, false);
    sw_stopper_observe(s, 100, INFINITY);
    sw_stopper_observe(s, 100, -INFINITY);
    assert_int_equal(sw_stopper_iterations(s, 100), 1);
    assert_int_equal(sw_stopper_iterations(s, 101), 61);
    sw_stopper_free(s);
}

/* test_hyperband_extensive_strict and _relaxed, on curves of our own
 * (W&B's use a data file): 116 runs that rise fast and plateau, min_iter
 * 30 and eta 1.5, so bands 30, 45, 67. At each band the survivors go on,
 * and strict stops the n - int(n / 1.5) - 1 runs above the threshold
 * (W&B asserts int(n * (1 - 1 / eta)), give or take 1). Relaxed judges
 * each run by its best, never worse than its value at the band, so it
 * stops a subset of what strict stops. */
static void test_wandb_extensive(void **state)
{
    sw_early_terminate st = hyperband(30, 0, -1, 1.5, true);
    sw_early_terminate rl = hyperband(30, 0, -1, 1.5, false);
    static const int64_t bands[] = {30, 45, 67};
    bool out[116] = {false};
    double curve[116][72];
    size_t n = 116, b, i, t, stopped, idx;
    sw_stopper *s, *r;
    sw_rng g;

    (void)state;
    sw_rng_seed(&g, 7, 0);
    for (i = 0; i < n; i++)
        for (t = 0; t < 72; t++)
            curve[i][t] = (0.3 + 0.1 * sw_rng_uniform(&g)) *
                              (1 - exp(-(double)(t + 1) / 3)) +
                          0.01 * sw_rng_uniform(&g);
    for (b = 0; b < 3; b++, n -= stopped) {
        assert_int_equal(sw_stopper_new(&s, &st, true), SW_OK);
        assert_int_equal(sw_stopper_new(&r, &rl, true), SW_OK);
        for (i = 0; i < 116; i++)
            for (t = 0; !out[i] && t < (size_t)bands[b] + 5; t++) {
                sw_stopper_observe(s, (int64_t)i, curve[i][t]);
                sw_stopper_observe(r, (int64_t)i, curve[i][t]);
            }
        idx = (size_t)((1.0 / 1.5) * (double)n);
        for (i = 0, stopped = 0; i < 116; i++) {
            if (out[i])
                continue;
            assert_true(!sw_stopper_should_stop(r, (int64_t)i) ||
                        sw_stopper_should_stop(s, (int64_t)i));
            if (sw_stopper_should_stop(s, (int64_t)i)) {
                out[i] = true;
                stopped++;
            }
        }
        assert_int_equal(stopped, n - idx - 1);
        assert_true(labs((long)stopped - (long)(n * (1 - 1 / 1.5))) <= 1);
        sw_stopper_free(s);
        sw_stopper_free(r);
    }
}

/* Thresholds move as runs reach a band: the generation says when to ask
 * the other runs again, and the answers follow. */
static void test_hyperband_thresholds_move(void **state)
{
    sw_early_terminate et = hyperband(2, 0, -1, 2, true);
    sw_buf b = SW_BUF_INIT;
    sw_stopper *s;
    uint64_t g;

    (void)state;
    assert_int_equal(sw_stopper_new(&s, &et, false), SW_OK);
    assert_false(sw_stopper_should_stop(s, 1)); /* never observed */
    sw_stopper_observe(s, 1, 5);
    sw_stopper_observe(s, 1, 5); /* band 2: alone, its own threshold */
    assert_false(sw_stopper_should_stop(s, 1));
    g = sw_stopper_generation(s);
    sw_stopper_observe(s, 2, 1);
    sw_stopper_observe(s, 2, 1); /* 1 5: index int(2 / 2) is 5 still */
    assert_int_equal(sw_stopper_generation(s), g);
    sw_stopper_observe(s, 3, 1);
    sw_stopper_observe(s, 3, 2); /* 1 2 5: index 1, threshold 2 */
    assert_true(sw_stopper_generation(s) > g);
    assert_true(sw_stopper_should_stop(s, 1));
    assert_false(sw_stopper_should_stop(s, 2));
    assert_false(sw_stopper_should_stop(s, 3));
    sw_stopper_explain(s, 1, &b);
    assert_string_equal(sw_buf_cstr(&b), "iteration 2, band 2: value 5.0, "
                                         "threshold 2.0: stop");
    sw_buf_dispose(&b);
    sw_stopper_explain(s, 4, &b);
    assert_string_equal(sw_buf_cstr(&b), "no value yet: go on");
    sw_buf_dispose(&b);
    sw_stopper_free(s);
}

static void test_hyperband_refuses_too_many_bands(void **state)
{
    sw_early_terminate et = hyperband(0, 100000, 1000000000, 1.00001, true);
    sw_stopper *s = NULL;

    (void)state;
    assert_int_equal(sw_stopper_new(&s, &et, false), SW_EINVALID);
    assert_null(s);
    assert_non_null(strstr(sw_error_last(), "too close to 1"));
    et = hyperband(0, 2, 1000000000, 1 + 1e-12, true);
    assert_int_equal(sw_stopper_new(&s, &et, false), SW_EINVALID);
    et = hyperband(0, 2, 0, 3, true); /* no band: valid, stops nothing */
    assert_int_equal(sw_stopper_new(&s, &et, false), SW_OK);
    sw_stopper_observe(s, 1, 1);
    assert_false(sw_stopper_should_stop(s, 1));
    sw_stopper_free(s);
    et.rule = SW_STOP_NONE;
    assert_int_equal(sw_stopper_new(&s, &et, false), SW_EINVALID);
}

/* ASHA, min_iter 1, eta 2, max_iter 8: rungs 1, 2, 4. */
static void test_asha_by_hand(void **state)
{
    sw_early_terminate et = {
        .rule = SW_STOP_ASHA, .min_iter = 1, .max_iter = 8, .eta = 2};
    static const double v1[] = {5, 3, 4, 2, 3}; /* runs 1..5 at rung 1 */
    static const bool cut1[] = {0, 0, 1, 0, 0};
    sw_buf b = SW_BUF_INIT;
    sw_stopper *s;
    const int64_t *at;
    double thr;
    int i;

    (void)state;
    assert_int_equal(sw_stopper_new(&s, &et, false), SW_OK);
    assert_int_equal(sw_stopper_levels(s, &at), 3);
    assert_true(at[0] == 1 && at[1] == 2 && at[2] == 4);
    /* keep max(1, floor(n / 2)): n 1 and 2 keep the best one (5, then
     * 3); at n 3 the cutoff is 3 and run 3's 4 is out; n 4 and 5 keep 2,
     * cutoff 3, and run 5's 3 ties it and goes on. */
    for (i = 0; i < 5; i++) {
        sw_stopper_observe(s, i + 1, v1[i]);
        assert_int_equal(sw_stopper_should_stop(s, i + 1), cut1[i]);
    }
    assert_false(sw_stopper_should_stop(s, 1)); /* ranked once, for good */
    sw_stopper_explain(s, 3, &b);
    assert_string_equal(sw_buf_cstr(&b), "iteration 1, rung 1: value 4.0, "
                                         "cutoff 3.0: stop");
    sw_buf_dispose(&b);
    assert_true(sw_stopper_threshold(s, 0, &thr) && thr == 3);
    /* rung 2: 4 (run 1), 1 (run 2), 2 (run 4: cutoff 1, out), 0.5 */
    sw_stopper_observe(s, 1, 4);
    sw_stopper_observe(s, 2, 1);
    sw_stopper_observe(s, 4, 2);
    sw_stopper_observe(s, 5, 0.5);
    assert_false(sw_stopper_should_stop(s, 1));
    assert_false(sw_stopper_should_stop(s, 2));
    assert_true(sw_stopper_should_stop(s, 4));
    assert_false(sw_stopper_should_stop(s, 5));
    sw_stopper_observe(s, 3, 0.1); /* stopped stays stopped */
    assert_true(sw_stopper_should_stop(s, 3));
    for (i = 0; i < 8; i++) /* run 2 to iteration 10: rung 4, alone */
        sw_stopper_observe(s, 2, 9);
    assert_false(sw_stopper_should_stop(s, 2));
    assert_int_equal(sw_stopper_generation(s), 0);
    sw_stopper_free(s);
}

static void test_asha_maximize(void **state)
{
    sw_early_terminate et = {.rule = SW_STOP_ASHA, .min_iter = 2, .eta = 3};
    static const double v[] = {0.5, 0.7, 0.6, 0.9};
    static const bool cut[] = {0, 0, 1, 0};
    sw_stopper *s;
    int i;

    (void)state;
    assert_int_equal(sw_stopper_new(&s, &et, true), SW_OK);
    /* rung 2, eta 3: n <= 5 keep the best; 0.6 is under 0.7 */
    for (i = 0; i < 4; i++) {
        sw_stopper_observe(s, i, 0);
        assert_false(sw_stopper_should_stop(s, i)); /* before rung 2 */
        sw_stopper_observe(s, i, v[i]);
        assert_int_equal(sw_stopper_should_stop(s, i), cut[i]);
    }
    sw_stopper_free(s);
}

/* The median rule, warmup 1, min_runs 2; the t-th values:
 *   t=1: A 10, B 9, C 12, D 11, E 20
 *   t=2: A 8,  B 7, C 11, D 9
 *   t=3: A 6,  B 5, C 10
 *   t=4: A 4 */
static void test_median_by_hand(void **state)
{
    sw_early_terminate et = {
        .rule = SW_STOP_MEDIAN, .warmup = 1, .min_runs = 2};
    run_t r[5] = {
        {true, {10, 8, 6, 4, END}}, {true, {9, 7, 5, END}},
        {true, {12, 11, 10, END}},  {true, {11, 9, END}},
        {true, {20, END}},
    };
    sw_stopper *s;
    sw_buf b = SW_BUF_INIT;

    (void)state;
    /* A: t=4 has no other run; at t=3 its best, 6, is under the median
     * of 5 and 10 (7.5). B: 5 under 8 (6 and 10). C: 10 over 5.5 (5 and
     * 6). D, at t=2: 9 over 8 (7 8 11). E: in its warmup. */
    assert_int_equal(stops(&et, false, r, 5), 1u << 2 | 1u << 3);
    assert_int_equal(sw_stopper_new(&s, &et, false), SW_OK);
    feed(s, r, 5, false);
    sw_stopper_explain(s, 102, &b);
    assert_string_equal(sw_buf_cstr(&b), "iteration 3, iteration 3: best 10.0, "
                                         "median of the others 5.5: stop");
    sw_buf_dispose(&b);
    sw_stopper_explain(s, 104, &b);
    assert_string_equal(sw_buf_cstr(&b), "iteration 1: not judged yet: go on");
    sw_buf_dispose(&b);
    sw_stopper_free(s);
}

static void test_median_ties_and_min_runs(void **state)
{
    sw_early_terminate et = {.rule = SW_STOP_MEDIAN, .min_runs = 2};
    run_t r[3] = {{true, {5, END}}, {true, {4, END}}, {true, {6, END}}};
    run_t best[2] = {{true, {1, 100, 100, END}}, {true, {50, 50, END}}};

    (void)state;
    /* X's 5 ties the median of 4 and 6 and goes on; Z's 6 is over 4.5 */
    assert_int_equal(stops(&et, false, r, 3), 1u << 2);
    assert_int_equal(stops(&et, true, r, 3), 1u << 1); /* maximize: Y */
    et.min_runs = 3; /* two others at most: nobody is judged */
    assert_int_equal(stops(&et, false, r, 3), 0);
    /* a run is held to its best over its first t values: G's 1, not its
     * 100, at t=2, against H's 50; H's 50 is under G's 100 */
    et.min_runs = 1;
    assert_int_equal(stops(&et, false, best, 2), 0);
    /* to maximize: G's best at t=2 is 100, over H's 50; H's 50 is under
     * G's 100, and H stops */
    assert_int_equal(stops(&et, true, best, 2), 1u << 1);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

/* The median rule as docs/stopping.md words it, from whole histories. */
static bool median_naive(double h[][40], const size_t *len, size_t n,
                         size_t run, int64_t warmup, int64_t min_runs)
{
    double others[16], best = INFINITY, med;
    size_t t, o, m;

    for (t = len[run]; t > (size_t)warmup; t--) {
        for (o = 0, m = 0; o < n; o++)
            if (o != run && len[o] >= t)
                others[m++] = h[o][t - 1];
        if ((int64_t)m < min_runs)
            continue;
        qsort(others, m, sizeof(double), cmp_double);
        med = (others[(m - 1) / 2] + others[m / 2]) / 2;
        for (o = 0; o < t; o++)
            best = h[run][o] < best ? h[run][o] : best;
        return best > med;
    }
    return false;
}

/* Random histories of uneven lengths, with ties: the incremental median
 * rule answers as the definition computed from scratch. */
static void test_median_against_definition(void **state)
{
    sw_early_terminate et = {.rule = SW_STOP_MEDIAN};
    double h[16][40];
    size_t len[16], n, i, t, round, stops = 0;
    double level;
    sw_stopper *s;
    bool want;
    sw_rng g;

    (void)state;
    sw_rng_seed(&g, 3, 0);
    for (round = 0; round < 300; round++) {
        n = 1 + (size_t)sw_rng_below(&g, 16);
        et.warmup = (int64_t)sw_rng_below(&g, 4);
        et.min_runs = 1 + (int64_t)sw_rng_below(&g, 5);
        assert_int_equal(sw_stopper_new(&s, &et, false), SW_OK);
        for (i = 0; i < n; i++) { /* a level per run, and noise */
            len[i] = (size_t)sw_rng_below(&g, 40);
            level = (double)sw_rng_below(&g, 8);
            for (t = 0; t < len[i]; t++) {
                h[i][t] = level + (double)sw_rng_below(&g, 3);
                sw_stopper_observe(s, (int64_t)i, h[i][t]);
            }
        }
        for (i = 0; i < n; i++) {
            want = median_naive(h, len, n, i, et.warmup, et.min_runs);
            assert_int_equal(sw_stopper_should_stop(s, (int64_t)i), want);
            stops += want;
        }
        sw_stopper_free(s);
    }
    print_message("%zu runs stop\n", stops);
    assert_true(stops > 100); /* the cases do stop runs */
}

/* Hyperband as W&B's hyperband_stop_runs computes it, from whole
 * histories (bands given). */
static bool hyperband_naive(double h[][40], const size_t *len, size_t n,
                            size_t run, const int64_t *bands, size_t n_bands,
                            double eta, bool strict)
{
    double vals[16], thr = 0, best = INFINITY;
    size_t b, o, m, t;
    int64_t closest = 0;

    for (b = 0; b < n_bands && bands[b] <= (int64_t)len[run]; b++) {
        for (o = 0, m = 0; o < n; o++)
            if ((int64_t)len[o] >= bands[b])
                vals[m++] = h[o][bands[b] - 1];
        qsort(vals, m, sizeof(double), cmp_double);
        thr = vals[(size_t)((1.0 / eta) * (double)m)];
        closest = bands[b];
    }
    if (!closest)
        return false;
    for (t = 0; t < len[run]; t++)
        best = h[run][t] < best ? h[run][t] : best;
    return (strict ? h[run][closest - 1] : best) > thr;
}

static void test_hyperband_against_definition(void **state)
{
    static const double etas[] = {2, 3, 1.5, 2.5};
    sw_early_terminate et;
    double h[16][40], level;
    size_t len[16], n, i, t, round, nb, stops = 0;
    const int64_t *bands;
    sw_stopper *s;
    sw_rng g;
    bool want;

    (void)state;
    sw_rng_seed(&g, 5, 0);
    for (round = 0; round < 300; round++) {
        et = hyperband(1 + (int64_t)sw_rng_below(&g, 4), 0, -1,
                       etas[sw_rng_below(&g, 4)], sw_rng_below(&g, 2));
        if (round % 2)
            et = hyperband(0, 1 + (int64_t)sw_rng_below(&g, 40),
                           (int64_t)sw_rng_below(&g, 5), et.eta, et.strict);
        assert_int_equal(sw_stopper_new(&s, &et, false), SW_OK);
        nb = sw_stopper_levels(s, &bands);
        n = 1 + (size_t)sw_rng_below(&g, 16);
        for (i = 0; i < n; i++) {
            len[i] = (size_t)sw_rng_below(&g, 40);
            level = (double)sw_rng_below(&g, 8);
            for (t = 0; t < len[i]; t++) {
                h[i][t] = level + (double)sw_rng_below(&g, 3);
                sw_stopper_observe(s, (int64_t)i, h[i][t]);
            }
        }
        for (i = 0; i < n; i++) {
            want = hyperband_naive(h, len, n, i, bands, nb, et.eta, et.strict);
            assert_int_equal(sw_stopper_should_stop(s, (int64_t)i), want);
            stops += want;
        }
        sw_stopper_free(s);
    }
    print_message("%zu runs stop\n", stops);
    assert_true(stops > 100);
}

/* The same values in the same order give the same answers, whatever
 * the rule: what `sweep resume` relies on. */
static void test_replay_is_deterministic(void **state)
{
    sw_early_terminate ets[3] = {
        {.rule = SW_STOP_HYPERBAND, .min_iter = 1, .eta = 3, .s = -1},
        {.rule = SW_STOP_ASHA, .min_iter = 1, .eta = 2},
        {.rule = SW_STOP_MEDIAN, .warmup = 2, .min_runs = 3},
    };
    sw_stopper *a, *b;
    sw_rng g, h;
    int k, i, run;

    (void)state;
    for (k = 0; k < 3; k++) {
        assert_int_equal(sw_stopper_new(&a, &ets[k], false), SW_OK);
        assert_int_equal(sw_stopper_new(&b, &ets[k], false), SW_OK);
        sw_rng_seed(&g, 11, (uint64_t)k);
        for (i = 0; i < 5000; i++) {
            run = (int)sw_rng_below(&g, 40);
            sw_stopper_observe(a, run, sw_rng_uniform(&g) / (1 + i / 40.0));
        }
        sw_rng_seed(&h, 11, (uint64_t)k);
        for (i = 0; i < 5000; i++) {
            run = (int)sw_rng_below(&h, 40);
            sw_stopper_observe(b, run, sw_rng_uniform(&h) / (1 + i / 40.0));
        }
        assert_int_equal(sw_stopper_generation(a), sw_stopper_generation(b));
        for (run = 0; run < 40; run++) {
            assert_int_equal(sw_stopper_should_stop(a, run),
                             sw_stopper_should_stop(b, run));
            assert_int_equal(sw_stopper_iterations(a, run),
                             sw_stopper_iterations(b, run));
        }
        sw_stopper_free(a);
        sw_stopper_free(b);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_wandb_min_iter_bands),
        cmocka_unit_test(test_wandb_max_iter_bands),
        cmocka_unit_test(test_wandb_single_run_and_band1_pass),
        cmocka_unit_test(test_wandb_5runs_band1_stop_2),
        cmocka_unit_test(test_wandb_5runs_band1_stop_2_1stnoband),
        cmocka_unit_test(test_wandb_eta_3),
        cmocka_unit_test(test_wandb_eta_3_max),
        cmocka_unit_test(test_wandb_nan_metrics),
        cmocka_unit_test(test_wandb_extensive),
        cmocka_unit_test(test_hyperband_thresholds_move),
        cmocka_unit_test(test_hyperband_refuses_too_many_bands),
        cmocka_unit_test(test_hyperband_against_definition),
        cmocka_unit_test(test_asha_by_hand),
        cmocka_unit_test(test_asha_maximize),
        cmocka_unit_test(test_median_by_hand),
        cmocka_unit_test(test_median_ties_and_min_runs),
        cmocka_unit_test(test_median_against_definition),
        cmocka_unit_test(test_replay_is_deterministic),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
