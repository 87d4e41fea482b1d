/*
 * test_metrics.c - metric reports as trials write them: `@metrics` lines,
 * objects or arrays of them, Python's NaN and Infinity, and refusals that
 * add nothing.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "orchestrator/metrics.h"
#include "sweeps/buf.h"
#include "sweeps/error.h"

static int parse(sw_metric_batch *b, const char *json)
{
    return sw_metrics_parse(b, json, strlen(json));
}

static void test_one_report(void **state)
{
    sw_metric_batch b;

    (void)state;
    sw_metric_batch_init(&b);
    assert_int_equal(parse(&b, "{\"step\": 3, \"loss\": 0.41, \"acc\": 1, "
                               "\"best\": true, \"tag\": \"x\"}"),
                     SW_OK);
    assert_int_equal(b.len, 3);
    assert_string_equal(b.items[0].name, "loss");
    assert_int_equal(b.items[0].step, 3);
    assert_true(b.items[0].value == 0.41);
    assert_true(b.items[2].value == 1.0);
    sw_metric_batch_dispose(&b);
}

static void test_arrays_and_no_step(void **state)
{
    sw_metric_batch b;

    (void)state;
    sw_metric_batch_init(&b);
    assert_int_equal(parse(&b, "[{\"step\": 1, \"a\": 1}, {\"a\": 2.5}]"),
                     SW_OK);
    assert_int_equal(b.len, 2);
    assert_int_equal(b.items[0].step, 1);
    assert_int_equal(b.items[1].step, -1);
    sw_metric_batch_dispose(&b);
}

/* `_timestamp` is when the trial logged the values, not a metric; one
 * that is not a time refuses a strict report and is ignored otherwise. */
static void test_timestamps(void **state)
{
    sw_metric_batch b;

    (void)state;
    sw_metric_batch_init(&b);
    assert_int_equal(parse(&b, "[{\"step\": 1, \"a\": 1, \"_timestamp\": "
                               "1796000000.25}, {\"a\": 2}]"),
                     SW_OK);
    assert_int_equal(b.len, 2);
    assert_string_equal(b.items[0].name, "a");
    assert_true(b.items[0].time == 1796000000.25);
    assert_true(b.items[1].time == 0);
    sw_metric_batch_dispose(&b);
    sw_metric_batch_init(&b);
    b.strict = true;
    assert_int_equal(parse(&b, "{\"a\": 1, \"_timestamp\": \"now\"}"),
                     SW_EINVALID);
    assert_int_equal(parse(&b, "{\"a\": 1, \"_timestamp\": -3}"), SW_EINVALID);
    assert_int_equal(b.len, 0);
    b.strict = false;
    assert_int_equal(parse(&b, "{\"a\": 1, \"_timestamp\": \"now\"}"), SW_OK);
    assert_int_equal(b.len, 1);
    assert_true(b.items[0].time == 0);
    sw_metric_batch_dispose(&b);
}

static void test_python_non_finite(void **state)
{
    sw_metric_batch b;

    (void)state;
    sw_metric_batch_init(&b);
    assert_int_equal(parse(&b, "{\"loss\": NaN, \"up\": Infinity, "
                               "\"down\": -Infinity, \"note\": \"NaN here\", "
                               "\"s\": \"NaN\"}"),
                     SW_OK);
    assert_int_equal(b.len, 4);
    assert_true(isnan(b.items[0].value));
    assert_true(isinf(b.items[1].value) && b.items[1].value > 0);
    assert_true(isinf(b.items[2].value) && b.items[2].value < 0);
    assert_true(isnan(b.items[3].value));
    sw_metric_batch_dispose(&b);
}

static void test_bad_reports_add_nothing(void **state)
{
    static const char *const bad[] = {"{\"step\": -1, \"a\": 1}",
                                      "{\"step\": 1.5, \"a\": 1}",
                                      "[{\"a\": 1}, 3]",
                                      "{\"a\": 1",
                                      "42",
                                      "{\"a\": 1} trailing"};
    sw_metric_batch b;
    size_t i;

    (void)state;
    sw_metric_batch_init(&b);
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        assert_int_equal(parse(&b, bad[i]), SW_EINVALID);
        assert_int_equal(b.len, 0);
    }
    sw_metric_batch_dispose(&b);
}

/* Names are printed as JSON later: a name that is not UTF-8 or holds a
 * control character is skipped, and the rest of the report kept. */
static void test_bad_names_are_refused(void **state)
{
    static const char *const bad[] = {"a\xff",        "\xc0\xaf", "a\\nb",
                                      "\xed\xa0\x80", "\\u007f",  "\xc2\x85"};
    sw_metric_batch b;
    char *json;
    size_t i;

    (void)state;
    sw_metric_batch_init(&b);
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        json = sw_aprintf("{\"%s\": 1, \"ok\\u00e9\": 2}", bad[i]);
        assert_int_equal(parse(&b, json), SW_OK);
        free(json);
        assert_int_equal(b.len, 1);
        assert_string_equal(b.items[0].name, "ok\xc3\xa9");
        assert_int_equal(b.refused, 1);
        sw_metric_batch_dispose(&b);
    }
}

/* A name is 1 to SW_METRICS_NAME_MAX bytes: an empty one or a longer one
 * is skipped (refused over HTTP), the longest allowed kept. */
static void test_name_length(void **state)
{
    char longest[SW_METRICS_NAME_MAX + 2], *json;
    sw_metric_batch b;

    (void)state;
    memset(longest, 'n', sizeof(longest) - 2);
    longest[SW_METRICS_NAME_MAX] = '\0';
    sw_metric_batch_init(&b);
    json = sw_aprintf("{\"\": 1, \"%s\": 2, \"%sx\": 3}", longest, longest);
    assert_int_equal(parse(&b, json), SW_OK);
    assert_int_equal(b.len, 1);
    assert_int_equal(strlen(b.items[0].name), SW_METRICS_NAME_MAX);
    assert_int_equal(b.refused, 2);
    sw_metric_batch_dispose(&b);
    b.strict = true;
    assert_int_equal(parse(&b, "{\"\": 1}"), SW_EINVALID);
    free(json);
    json = sw_aprintf("{\"%sx\": 3}", longest);
    assert_int_equal(parse(&b, json), SW_EINVALID);
    assert_non_null(strstr(sw_error_last(), "1 to 256 bytes"));
    free(json);
    sw_metric_batch_dispose(&b);
}

/* `n` values named k0, k1, ... in one object, or one object each. */
static char *many(size_t n, bool split)
{
    sw_buf b = SW_BUF_INIT;
    size_t i;

    sw_buf_puts(&b, split ? "[" : "{");
    for (i = 0; i < n; i++)
        sw_buf_printf(&b, split ? "%s{\"k%zu\": %zu}" : "%s\"k%zu\": %zu",
                      i ? ", " : "", i, i);
    sw_buf_puts(&b, split ? "]" : "}");
    return sw_buf_detach(&b);
}

/* A report holds at most SW_METRICS_VALUES_MAX values, in one object or
 * across an array; one more refuses the whole report. */
static void test_values_per_report(void **state)
{
    sw_metric_batch b;
    char *json;
    int split;

    (void)state;
    sw_metric_batch_init(&b);
    for (split = 0; split < 2; split++) {
        json = many(SW_METRICS_VALUES_MAX, split);
        assert_int_equal(parse(&b, json), SW_OK);
        assert_int_equal(b.len, SW_METRICS_VALUES_MAX);
        assert_string_equal(b.items[SW_METRICS_VALUES_MAX - 1].name, "k9999");
        free(json);
        sw_metric_batch_dispose(&b);
        json = many(SW_METRICS_VALUES_MAX + 1, split);
        assert_int_equal(parse(&b, json), SW_EOVERFLOW);
        assert_int_equal(b.len, 0);
        free(json);
    }
    sw_metric_batch_dispose(&b);
}

/* A repeated name keeps its first place and takes the last value, as a
 * Python dict does, whatever the report's size. */
static void test_repeated_names(void **state)
{
    sw_metric_batch b;
    char *json = many(2000, false), *dup;

    (void)state;
    json[strlen(json) - 1] = '\0';
    dup = sw_aprintf("%s, \"k7\": -1, \"k1999\": -2}", json);
    sw_metric_batch_init(&b);
    assert_int_equal(parse(&b, dup), SW_OK);
    assert_int_equal(b.len, 2000);
    assert_string_equal(b.items[7].name, "k7");
    assert_true(b.items[7].value == -1);
    assert_true(b.items[1999].value == -2);
    sw_metric_batch_dispose(&b);
    free(dup);
    free(json);
}

/* The JSON reader stops at a NUL: a cut key or value must not be read
 * as if it were whole. */
static void test_a_nul_refuses_the_report(void **state)
{
    static const char raw[] = "{\"a\0b\": 1, \"c\": 2}";
    sw_metric_batch b;

    (void)state;
    sw_metric_batch_init(&b);
    assert_int_equal(parse(&b, "{\"a\\u0000b\": 1, \"c\": 2}"), SW_EINVALID);
    assert_int_equal(b.len, 0);
    assert_int_equal(parse(&b, "{\"c\": \"NaN\\u0000x\"}"), SW_EINVALID);
    assert_int_equal(sw_metrics_parse(&b, raw, sizeof(raw) - 1), SW_EINVALID);
    assert_int_equal(sw_metrics_parse(&b, "{\"c\": 2}\0", 10), SW_EINVALID);
    assert_int_equal(b.len, 0);
    assert_int_equal(parse(&b, "{\"a\\\\u0000\": 1}"), SW_OK);
    assert_string_equal(b.items[0].name, "a\\u0000");
    sw_metric_batch_dispose(&b);
}

static void test_metrics_lines(void **state)
{
    const char *line = "@metrics {\"a\": 1}";

    (void)state;
    assert_string_equal(sw_metrics_line(line, strlen(line)), "{\"a\": 1}");
    assert_null(sw_metrics_line("@metricsx {}", 12));
    assert_null(sw_metrics_line("epoch 3 loss 0.4", 16));
    assert_null(sw_metrics_line("@metrics", 8));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_report),
        cmocka_unit_test(test_arrays_and_no_step),
        cmocka_unit_test(test_python_non_finite),
        cmocka_unit_test(test_bad_reports_add_nothing),
        cmocka_unit_test(test_bad_names_are_refused),
        cmocka_unit_test(test_name_length),
        cmocka_unit_test(test_values_per_report),
        cmocka_unit_test(test_repeated_names),
        cmocka_unit_test(test_a_nul_refuses_the_report),
        cmocka_unit_test(test_metrics_lines),
        cmocka_unit_test(test_timestamps),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
