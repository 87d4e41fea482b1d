/*
 * test_promote.c - promotion ASHA (search/promote.c) against cases worked
 * out by hand from Li et al.'s Algorithm 2: rungs min_iter * eta^k below
 * max_iter, then max_iter; at a rung of n runs the best floor(n / eta)
 * go on, the top rung first, a new configuration only when none is due.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "search/promote.h"
#include "sweeps/error.h"

static sw_promoter *make(int64_t min_iter, double eta, int64_t max_iter,
                         bool maximize)
{
    sw_promoter *p = NULL;

    assert_int_equal(sw_promoter_new(&p, min_iter, eta, max_iter, maximize),
                     SW_OK);
    return p;
}

static void expect_next(sw_promoter *p, int64_t run, size_t to)
{
    int64_t got = -1;
    size_t k = 99;

    assert_true(sw_promoter_next(p, &got, &k));
    assert_int_equal(got, run);
    assert_int_equal(k, to);
}

static void expect_none(sw_promoter *p)
{
    int64_t got;
    size_t k;

    assert_false(sw_promoter_next(p, &got, &k));
}

static void test_rungs(void **state)
{
    sw_promoter *p = make(1, 3, 9, false), *q = make(1, 2, 10, false),
                *r = make(5, 3, 5, false);

    (void)state;
    assert_int_equal(sw_promoter_rungs(p), 3);
    assert_int_equal(sw_promoter_rung_iter(p, 0), 1);
    assert_int_equal(sw_promoter_rung_iter(p, 1), 3);
    assert_int_equal(sw_promoter_rung_iter(p, 2), 9);
    assert_int_equal(sw_promoter_rung_of(p, 0), -1);
    assert_int_equal(sw_promoter_rung_of(p, 1), 0);
    assert_int_equal(sw_promoter_rung_of(p, 2), 0);
    assert_int_equal(sw_promoter_rung_of(p, 3), 1);
    assert_int_equal(sw_promoter_rung_of(p, 8), 1);
    assert_int_equal(sw_promoter_rung_of(p, 9), 2);
    assert_int_equal(sw_promoter_rung_of(p, 100), 2);
    /* 1, 2, 4, 8 below 10, then 10 */
    assert_int_equal(sw_promoter_rungs(q), 5);
    assert_int_equal(sw_promoter_rung_iter(q, 3), 8);
    assert_int_equal(sw_promoter_rung_iter(q, 4), 10);
    /* min_iter = max_iter: one rung, nothing to promote to */
    assert_int_equal(sw_promoter_rungs(r), 1);
    sw_promoter_record(r, 1, 0, 0.5);
    expect_none(r);
    sw_promoter_free(p);
    sw_promoter_free(q);
    sw_promoter_free(r);
}

static void test_bad_parameters(void **state)
{
    sw_promoter *p = NULL;

    (void)state;
    assert_int_equal(sw_promoter_new(&p, 0, 3, 9, false), SW_EINVALID);
    assert_int_equal(sw_promoter_new(&p, 1, 1, 9, false), SW_EINVALID);
    assert_int_equal(sw_promoter_new(&p, 1, NAN, 9, false), SW_EINVALID);
    assert_int_equal(sw_promoter_new(&p, 9, 3, 3, false), SW_EINVALID);
    assert_int_equal(sw_promoter_new(&p, 1, 1.0001, 1000000, false),
                     SW_EINVALID); /* too many rungs */
    assert_null(p);
}

/* eta 3, rungs 1, 3, 9: the worked case. */
static void test_worked_case(void **state)
{
    sw_promoter *p = make(1, 3, 9, false);
    size_t k;

    (void)state;
    sw_promoter_record(p, 1, 0, 5);
    sw_promoter_record(p, 2, 0, 3);
    expect_none(p); /* 2 at rung 0: floor(2/3) = 0 go on: a new one */
    sw_promoter_record(p, 3, 0, 4);
    expect_next(p, 2, 1); /* 3 there: the best 1, run 2 (3) */
    expect_none(p);       /* it is promoted once */
    assert_false(sw_promoter_waiting(p, 2, &k));
    assert_true(sw_promoter_waiting(p, 1, &k));
    assert_int_equal(k, 0);

    sw_promoter_record(p, 4, 0, 1);
    sw_promoter_record(p, 5, 0, 6);
    sw_promoter_record(p, 6, 0, 7);
    /* 6 there: [4 (1), 2 (3), 3 (4), 1, 5, 6]: the best 2; 2 went on */
    expect_next(p, 4, 1);
    expect_none(p);

    sw_promoter_record(p, 2, 1, 2.5);
    sw_promoter_record(p, 4, 1, 0.9);
    expect_none(p); /* rung 1 has 2: none; rung 0's best 2 went on */

    sw_promoter_record(p, 7, 0, 0.5);
    sw_promoter_record(p, 8, 0, 8);
    sw_promoter_record(p, 9, 0, 9);
    /* rung 1 first (2 there: none), then rung 0: 9 there, best 3 are
     * 7 (0.5), 4, 2: run 7 */
    expect_next(p, 7, 1);
    expect_none(p);

    sw_promoter_record(p, 7, 1, 0.7);
    /* rung 1: [7 (0.7), 4 (0.9), 2 (2.5)]: the best 1, run 7, to the last */
    expect_next(p, 7, 2);
    sw_promoter_record(p, 7, 2, 0.6);
    assert_false(sw_promoter_waiting(p, 7, &k)); /* at the last: done */
    expect_none(p);
    assert_true(sw_promoter_waiting(p, 3, &k));
    sw_promoter_free(p);
}

/* The top rung goes first: a promotion to the last rung before one from
 * rung 0, when both are due. */
static void test_top_rung_first(void **state)
{
    sw_promoter *p = make(1, 2, 4, true);

    (void)state;
    sw_promoter_record(p, 1, 0, 0.1);
    sw_promoter_record(p, 2, 0, 0.9); /* maximize: 2 is best */
    expect_next(p, 2, 1);
    sw_promoter_record(p, 2, 1, 0.95);
    sw_promoter_record(p, 3, 0, 0.5);
    sw_promoter_record(p, 4, 0, 0.6);
    /* rung 0: [2, 4 (0.6), 3, 1]: best 2 go on: 2 (done), then 4 */
    sw_promoter_record(p, 5, 0, 0.2);
    /* rung 1 has [2]: none; rung 0 [2, 4, 3, 5, 1]: best 2: 4 */
    expect_next(p, 4, 1);
    sw_promoter_record(p, 4, 1, 0.3);
    /* rung 1 [2 (0.95), 4 (0.3)]: best 1: 2, to rung 2 */
    expect_next(p, 2, 2);
    expect_none(p);
    sw_promoter_free(p);
}

/* A fits() that accepts the runs listed in ctx (-1 ends the list) and
 * notes each run it was asked about, in order. */
typedef struct {
    int64_t accept[8];
    int64_t asked[16];
    size_t n_asked;
} fits_ctx;

static bool fits_listed(void *ctx, int64_t run, size_t k)
{
    fits_ctx *c = ctx;
    size_t i;

    (void)k;
    if (c->n_asked < 16)
        c->asked[c->n_asked++] = run;
    for (i = 0; i < 8 && c->accept[i] >= 0; i++)
        if (c->accept[i] == run)
            return true;
    return false;
}

/* Past the quota (a drained sweep): the waiting runs are offered from
 * the top rung down, best first, never a promoted one, a NaN or the
 * last rung's; the first that fits is promoted and marked. */
static void test_beyond_the_quota(void **state)
{
    sw_promoter *p = make(1, 3, 9, false); /* rungs 1, 3, 9 */
    fits_ctx c = {{-1}, {0}, 0};
    int64_t run = -1;
    size_t to = 0;

    (void)state;
    sw_promoter_record(p, 1, 0, 0.5);
    sw_promoter_record(p, 2, 0, 0.4);
    sw_promoter_record(p, 3, 0, 0.3);
    sw_promoter_record(p, 4, 0, NAN);
    expect_next(p, 3, 1); /* 4 at rung 0: the top 1 */
    expect_none(p);
    sw_promoter_record(p, 3, 1, 0.2);
    sw_promoter_record(p, 5, 2, 0.1); /* at the last rung: done */
    /* none fits: each waiting run asked, rung 1 first, best first */
    assert_false(sw_promoter_next_beyond(p, fits_listed, &c, &run, &to));
    assert_int_equal(c.n_asked, 3);
    assert_int_equal(c.asked[0], 3); /* rung 1, waiting there */
    assert_int_equal(c.asked[1], 2); /* rung 0: 0.4, then 0.5 */
    assert_int_equal(c.asked[2], 1);
    /* the best at the highest rung that fits */
    c = (fits_ctx){{1, 2, -1}, {0}, 0};
    assert_true(sw_promoter_next_beyond(p, fits_listed, &c, &run, &to));
    assert_int_equal(run, 2);
    assert_int_equal(to, 1);
    assert_true(sw_promoter_beyond(p, 2));  /* its latest promotion */
    assert_false(sw_promoter_beyond(p, 3)); /* the quota's, then waits */
    assert_false(sw_promoter_beyond(p, 9)); /* never recorded */
    c.n_asked = 0;
    assert_true(sw_promoter_next_beyond(p, fits_listed, &c, &run, &to));
    assert_int_equal(run, 1);
    assert_true(sw_promoter_waiting(p, 3, &to) && to == 1);
    assert_false(sw_promoter_waiting(p, 2, &to)); /* promoted */
    c.n_asked = 0;
    assert_false(sw_promoter_next_beyond(p, fits_listed, &c, &run, &to));
    assert_int_equal(c.n_asked, 1); /* only 3 is left to ask */
    expect_none(p);                 /* what the quota allows is unchanged */
    sw_promoter_free(p);
}

/* A run promoted past the quota is outside the quota at its next rung:
 * two drained runs at rung 1 leave its quota at 1 (of the 2 that came by
 * it), where counting them, as a rebuilt promoter does, makes a second
 * one due; and one that ends best there is not due, though the drain
 * may take it on. */
static void test_beyond_adds_no_quota(void **state)
{
    static const double at0[] = {0.1, 0.2, 0.3, 0.4};
    static const double at1[] = {0.05, 0.06, 0.07, 0.08};
    sw_promoter *p = make(1, 2, 4, false); /* rungs 1, 2, 4 */
    fits_ctx c = {{3, 4, -1}, {0}, 0};
    int64_t run = -1;
    size_t to = 0, i;

    (void)state;
    for (i = 0; i < 4; i++)
        sw_promoter_record(p, (int64_t)i + 1, 0, at0[i]);
    expect_next(p, 1, 1);
    expect_next(p, 2, 1);
    expect_none(p);
    sw_promoter_record(p, 1, 1, at1[0]);
    sw_promoter_record(p, 2, 1, at1[1]);
    expect_next(p, 1, 2); /* the top 1 of 2 */
    assert_true(sw_promoter_next_beyond(p, fits_listed, &c, &run, &to));
    assert_int_equal(run, 3);
    assert_true(sw_promoter_next_beyond(p, fits_listed, &c, &run, &to));
    assert_int_equal(run, 4);
    sw_promoter_record(p, 3, 1, at1[2]);
    sw_promoter_record(p, 4, 1, at1[3]);
    expect_none(p); /* rung 1's quota: 1 of the 2 that came by it */
    /* one more, past the quota, that ends best at rung 1: not due */
    sw_promoter_record(p, 5, 0, 0.5); /* rung 0: quota 2, both went */
    expect_none(p);
    c = (fits_ctx){{5, -1}, {0}, 0};
    assert_true(sw_promoter_next_beyond(p, fits_listed, &c, &run, &to));
    assert_int_equal(run, 5);
    sw_promoter_record(p, 5, 1, 0.01);
    expect_none(p);
    assert_true(sw_promoter_next_beyond(p, fits_listed, &c, &run, &to));
    assert_int_equal(run, 5);
    assert_int_equal(to, 2);
    sw_promoter_free(p);

    /* rebuilt from the records and marks: all 4 at rung 1 count */
    p = make(1, 2, 4, false);
    for (i = 0; i < 4; i++)
        sw_promoter_record(p, (int64_t)i + 1, 0, at0[i]);
    for (i = 0; i < 4; i++) {
        sw_promoter_mark(p, (int64_t)i + 1, 0);
        sw_promoter_record(p, (int64_t)i + 1, 1, at1[i]);
    }
    sw_promoter_mark(p, 1, 1);
    expect_next(p, 2, 2);
    sw_promoter_free(p);
}

/* Ties go by arrival; a second record of a run at a rung is ignored;
 * a NaN ranks last and is never promoted; replayed marks are kept. */
static void test_ties_repeats_nan_marks(void **state)
{
    sw_promoter *p = make(1, 2, 4, false), *q = make(1, 2, 4, false);
    sw_buf b = SW_BUF_INIT;

    (void)state;
    sw_promoter_record(p, 1, 0, NAN);
    sw_promoter_record(p, 2, 0, NAN);
    expect_none(p); /* the best 1 of 2 is a NaN: nobody */
    sw_promoter_record(p, 3, 0, 1.0);
    sw_promoter_record(p, 4, 0, 1.0);
    sw_promoter_record(p, 3, 0, 0.0); /* ignored */
    expect_next(p, 3, 1);             /* tie with 4: 3 came first */
    expect_next(p, 4, 1);
    expect_none(p);

    sw_promoter_record(q, 3, 0, 1.0);
    sw_promoter_record(q, 4, 0, 2.0);
    sw_promoter_mark(q, 3, 0); /* as the store says it went */
    expect_none(q);
    sw_promoter_explain(q, 4, &b);
    assert_string_equal(sw_buf_cstr(&b),
                        "rung 0 (iteration 1): value 2, 2nd of 2, the top 1 "
                        "go on: waits");
    sw_buf_dispose(&b);
    sw_promoter_free(p);
    sw_promoter_free(q);
}

/* The first `n` runs from 1 up in bracket b, into out. */
static void runs_in(const sw_promoter *p, size_t b, int64_t *out, size_t n)
{
    int64_t run;
    size_t i = 0;

    for (run = 1; i < n; run++)
        if (sw_promoter_bracket(p, run) == b)
            out[i++] = run;
}

/* Hyperband's weights: with rungs 1, 3, 9 (L = 2) bracket b gets
 * eta^(L-b) / (L-b+1) parts: 9/3, 3/2, 1/1 = 3 : 1.5 : 1 of 5.5, i.e.
 * 54.5 %, 27.3 %, 18.2 % of new runs; two brackets: 3 : 1.5, 2/3 and
 * 1/3. The same seed draws the same brackets. */
static void test_bracket_shares(void **state)
{
    sw_promoter *p = make(1, 3, 9, false), *q = make(1, 3, 9, false),
                *r = make(1, 3, 9, false);
    size_t n[3] = {0}, two[2] = {0}, same = 0;
    int64_t run;

    (void)state;
    assert_int_equal(sw_promoter_set_brackets(p, 3, 7), SW_OK);
    assert_int_equal(sw_promoter_set_brackets(q, 3, 7), SW_OK);
    assert_int_equal(sw_promoter_set_brackets(r, 2, 8), SW_OK);
    for (run = 0; run < 11000; run++) {
        n[sw_promoter_bracket(p, run)]++;
        two[sw_promoter_bracket(r, run)]++;
        same += sw_promoter_bracket(p, run) == sw_promoter_bracket(q, run);
    }
    assert_int_equal(same, 11000);
    assert_in_range(n[0], 6000 - 250, 6000 + 250);
    assert_in_range(n[1], 3000 - 200, 3000 + 200);
    assert_in_range(n[2], 2000 - 200, 2000 + 200);
    assert_in_range(two[0], 7333 - 250, 7333 + 250);
    assert_in_range(two[1], 3667 - 250, 3667 + 250);
    assert_int_equal(sw_promoter_set_brackets(p, 0, 7), SW_EINVALID);
    assert_int_equal(sw_promoter_set_brackets(p, 4, 7), SW_EINVALID);
    sw_promoter_free(p);
    sw_promoter_free(q);
    sw_promoter_free(r);
}

/* Rungs 1, 3, 9 by eta 3, two brackets. A run of bracket 1 starts at
 * rung 1 (iteration 3) and is compared there only with bracket 1's: a
 * bracket-0 run promoted to rung 1 with the best value of all waits
 * until bracket 0 has 3 runs at rung 1. */
static void test_brackets_compare_apart(void **state)
{
    sw_promoter *p = make(1, 3, 9, false);
    int64_t a[4], x[3];
    sw_buf b = SW_BUF_INIT;
    size_t k;

    (void)state;
    assert_int_equal(sw_promoter_set_brackets(p, 2, 1), SW_OK);
    runs_in(p, 0, a, 4);
    runs_in(p, 1, x, 3);
    assert_int_equal(sw_promoter_target(p, a[0]), 1);
    assert_int_equal(sw_promoter_target(p, x[0]), 3);
    sw_promoter_record(p, x[0], 0, 0.0); /* below its bracket: ignored */
    assert_false(sw_promoter_waiting(p, x[0], &k));

    sw_promoter_record(p, a[0], 0, 0.5);
    sw_promoter_record(p, a[1], 0, 0.6);
    expect_none(p); /* 2 of bracket 0 at rung 0: the top 0 */
    sw_promoter_record(p, x[0], 1, 0.9);
    sw_promoter_record(p, x[1], 1, 0.8);
    expect_none(p);
    sw_promoter_record(p, x[2], 1, 0.7);
    expect_next(p, x[2], 2); /* the top 1 of bracket 1's 3 */
    expect_none(p);
    sw_promoter_record(p, a[2], 0, 0.4);
    expect_next(p, a[2], 1);
    sw_promoter_record(p, a[2], 1, 0.1); /* the best at rung 1, but */
    expect_none(p);                      /* bracket 0 has 1 there */
    sw_promoter_explain(p, a[2], &b);
    assert_string_equal(sw_buf_cstr(&b),
                        "rung 1 (iteration 3): value 0.1, 1st of 1, the top 0 "
                        "of bracket 0 go on: waits");
    sw_buf_dispose(&b);
    sw_promoter_free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rungs),
        cmocka_unit_test(test_bad_parameters),
        cmocka_unit_test(test_worked_case),
        cmocka_unit_test(test_top_rung_first),
        cmocka_unit_test(test_beyond_the_quota),
        cmocka_unit_test(test_beyond_adds_no_quota),
        cmocka_unit_test(test_ties_repeats_nan_marks),
        cmocka_unit_test(test_bracket_shares),
        cmocka_unit_test(test_brackets_compare_apart),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
