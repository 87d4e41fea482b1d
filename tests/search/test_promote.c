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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rungs),
        cmocka_unit_test(test_bad_parameters),
        cmocka_unit_test(test_worked_case),
        cmocka_unit_test(test_top_rung_first),
        cmocka_unit_test(test_ties_repeats_nan_marks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
