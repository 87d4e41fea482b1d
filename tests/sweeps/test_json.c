/*
 * test_json.c - JSON text to values: integers and floats kept apart as
 * Python's json keeps them, and bad text refused with a message.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "sweeps/json.h"

static sw_value *parse_ok(const char *text)
{
    sw_value *v = NULL;

    assert_int_equal(sw_json_parse(&v, text, strlen(text)), SW_OK);
    assert_non_null(v);
    return v;
}

static void test_numbers_keep_their_type(void **state)
{
    sw_value *v = parse_ok("{\"a\": 3, \"b\": 3.0, \"c\": [1e3, -7, 0.5]}");
    const sw_value *c = sw_value_map_get(v, "c");

    (void)state;
    assert_int_equal(sw_value_map_get(v, "a")->type, SW_INT);
    assert_int_equal(sw_value_map_get(v, "b")->type, SW_FLOAT);
    assert_int_equal(c->u.list.items[0]->type, SW_FLOAT);
    assert_int_equal(c->u.list.items[1]->u.i, -7);
    assert_true(c->u.list.items[2]->u.f == 0.5);
    sw_value_free(v);
}

static void test_round_trip_through_the_writer(void **state)
{
    const char *text = "{\"lr\": 0.001, \"n\": 3, \"x\": 3.0, \"opt\": "
                       "{\"name\": \"adam\", \"on\": true, \"z\": null}}";
    sw_value *v = parse_ok(text);
    sw_buf b = SW_BUF_INIT;

    (void)state;
    sw_value_write_json(&b, v, false);
    assert_string_equal(sw_buf_cstr(&b), text);
    sw_buf_dispose(&b);
    sw_value_free(v);
}

static void test_bad_text_is_refused(void **state)
{
    static const char *const bad[] = {"",      "{",   "{\"a\": }",   "[1, 2",
                                      "{} {}", "NaN", "{\"a\": 1} x"};
    sw_value *v = NULL;
    size_t i;

    (void)state;
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        assert_int_equal(sw_json_parse(&v, bad[i], strlen(bad[i])),
                         SW_EINVALID);
        assert_null(v);
        assert_true(strlen(sw_error_last()) > 0);
    }
}

static void test_deep_nesting_is_refused(void **state)
{
    char text[200];
    sw_value *v = NULL;
    size_t i;

    (void)state;
    for (i = 0; i < 100; i++) {
        text[i] = '[';
        text[199 - i] = ']';
    }
    assert_int_equal(sw_json_parse(&v, text, sizeof(text)), SW_EINVALID);
    assert_null(v);
}

/* sw_json_valid() agrees with the parser, without building anything. */
static void test_valid_says_what_the_parser_says(void **state)
{
    static const char *const good[] = {
        "{}",
        "[]",
        "0",
        "-1.5e+3",
        "\"a\\u00e9\\n\"",
        " true ",
        "null",
        "{\"lr\": 0.001, \"n\": [1, 2, {\"x\": false}], \"s\": \"\\\"\"}"};
    static const char *const bad[] = {
        "",        "{",         "{\"a\": }", "[1, 2",  "{} {}",   "NaN",
        "01",      "1.",        "-",         ".5",     "[1,]",    "{\"a\" 1}",
        "\"\\x\"", "\"\\u12\"", "tru",       "{1: 2}", "\"a\tb\""};
    char deep[200];
    sw_value *v = NULL;
    size_t i;

    (void)state;
    for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        assert_true(sw_json_valid(good[i], strlen(good[i])));
        assert_int_equal(sw_json_parse(&v, good[i], strlen(good[i])), SW_OK);
        sw_value_free(v);
        v = NULL;
    }
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        assert_false(sw_json_valid(bad[i], strlen(bad[i])));
    for (i = 0; i < 100; i++) {
        deep[i] = '[';
        deep[199 - i] = ']';
    }
    assert_false(sw_json_valid(deep, sizeof(deep)));
    assert_true(sw_json_valid(deep + 40, sizeof(deep) - 80)); /* 60 deep */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_numbers_keep_their_type),
        cmocka_unit_test(test_round_trip_through_the_writer),
        cmocka_unit_test(test_bad_text_is_refused),
        cmocka_unit_test(test_deep_nesting_is_refused),
        cmocka_unit_test(test_valid_says_what_the_parser_says),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
