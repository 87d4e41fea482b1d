/*
 * test_yaml11.c - YAML 1.1 scalars read exactly as PyYAML's SafeLoader
 * reads them (the expectations were produced by PyYAML 6.0).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "sweeps/error.h"
#include "sweeps/yaml11.h"

/* Resolves `text` as a plain scalar and compares Python's repr with its
 * type: "int 8", "str '1e-3'", or "ERR" when PyYAML raises. */
static void expect_plain(const char *text, const char *want)
{
    static const char *const types[] = {"NoneType", "bool", "int", "float",
                                        "str"};
    sw_value *v = NULL;
    sw_buf b = SW_BUF_INIT;

    if (sw_yaml11__plain(&v, text, strlen(text)) != SW_OK) {
        sw_buf_puts(&b, "ERR");
    } else {
        sw_buf_printf(&b, "%s ", types[v->type]);
        sw_value_write_pyrepr(&b, v);
    }
    if (strcmp(sw_buf_cstr(&b), want) != 0)
        fail_msg("'%s': got %s, want %s", text, sw_buf_cstr(&b), want);
    sw_buf_dispose(&b);
    sw_value_free(v);
}

static void test_floats_need_a_dot(void **state)
{
    (void)state;
    expect_plain("1e-3", "str '1e-3'");
    expect_plain("1E5", "str '1E5'");
    expect_plain("1.0e3", "str '1.0e3'"); /* exponent needs a sign */
    expect_plain("1.0e-3", "float 0.001");
    expect_plain("1.e+3", "float 1000.0");
    expect_plain("1.", "float 1.0");
    expect_plain(".5", "float 0.5");
    expect_plain("-.5", "str '-.5'");
    expect_plain("._5", "str '._5'");
    expect_plain("1_000.5", "float 1000.5");
    expect_plain("190:20:30.15", "float 685230.15");
    expect_plain(".inf", "float inf");
    expect_plain("-.Inf", "float -inf");
    expect_plain(".NaN", "float nan");
    expect_plain("-.nan", "str '-.nan'");
    expect_plain("inf", "str 'inf'");
    expect_plain("1.5e+400", "float inf");
}

static void test_ints(void **state)
{
    (void)state;
    expect_plain("0", "int 0");
    expect_plain("-0", "int 0");
    expect_plain("010", "int 8");
    expect_plain("09", "str '09'");
    expect_plain("0x1F", "int 31");
    expect_plain("-0x1F", "int -31");
    expect_plain("0b101", "int 5");
    expect_plain("0o17", "str '0o17'");
    expect_plain("1_000", "int 1000");
    expect_plain("1:30", "int 90");
    expect_plain("1:60", "str '1:60'");
    expect_plain("0b_", "ERR");
    expect_plain("0x_", "ERR");
    expect_plain("0_", "int 0");
    expect_plain("9223372036854775807", "int 9223372036854775807");
    expect_plain("-9223372036854775808", "int -9223372036854775808");
}

static void test_big_ints_are_refused(void **state)
{
    sw_value *v = NULL;

    (void)state;
    assert_int_equal(sw_yaml11__plain(&v, "9223372036854775808", 19),
                     SW_EOVERFLOW);
    assert_null(v);
    assert_non_null(strstr(sw_error_last(), "64 bits"));
}

static void test_bools_and_nulls(void **state)
{
    (void)state;
    expect_plain("yes", "bool True");
    expect_plain("No", "bool False");
    expect_plain("ON", "bool True");
    expect_plain("off", "bool False");
    expect_plain("yEs", "str 'yEs'");
    expect_plain("y", "str 'y'");
    expect_plain("TRUE", "bool True");
    expect_plain("tRue", "str 'tRue'");
    expect_plain("", "NoneType None");
    expect_plain("~", "NoneType None");
    expect_plain("Null", "NoneType None");
    expect_plain("nULL", "str 'nULL'");
    expect_plain("=", "ERR");
    expect_plain("<<", "ERR");
    expect_plain("2001-01-01", "str '2001-01-01'");
}

static void expect_tagged(const char *tag, const char *text, const char *want)
{
    sw_value *v = NULL;
    sw_buf b = SW_BUF_INIT;

    if (sw_yaml11__tagged(&v, tag, text, strlen(text)) != SW_OK)
        sw_buf_puts(&b, "ERR");
    else
        sw_value_write_pyrepr(&b, v);
    if (strcmp(sw_buf_cstr(&b), want) != 0)
        fail_msg("!%s '%s': got %s, want %s", tag, text, sw_buf_cstr(&b), want);
    sw_buf_dispose(&b);
    sw_value_free(v);
}

static void test_explicit_tags(void **state)
{
    (void)state;
    expect_tagged("tag:yaml.org,2002:str", "yes", "'yes'");
    expect_tagged("tag:yaml.org,2002:float", "1e-3", "0.001");
    expect_tagged("tag:yaml.org,2002:int", "0x10", "16");
    expect_tagged("tag:yaml.org,2002:int", "1.5", "ERR");
    expect_tagged("tag:yaml.org,2002:bool", "Off", "False");
    expect_tagged("tag:yaml.org,2002:bool", "maybe", "ERR");
    expect_tagged("tag:yaml.org,2002:null", "anything", "None");
    expect_tagged("!", "yes", "True"); /* PyYAML resolves `!` as plain */
    expect_tagged("tag:yaml.org,2002:binary", "AAAA", "ERR");
    expect_tagged("!custom", "x", "ERR");
}

static void test_numeric_looking_strings(void **state)
{
    char *s;

    (void)state;
    assert_true(sw_yaml11__looks_numeric("1e-3"));
    assert_true(sw_yaml11__looks_numeric("1E5"));
    assert_true(sw_yaml11__looks_numeric("-.5"));
    assert_false(sw_yaml11__looks_numeric("abc"));
    assert_false(sw_yaml11__looks_numeric("1-2"));
    assert_false(sw_yaml11__looks_numeric("e"));
    assert_false(sw_yaml11__looks_numeric("1.0e-3")); /* already a float */
    s = sw_yaml11__float_spelling("1e-3");
    assert_string_equal(s, "1.0e-3");
    free(s);
    s = sw_yaml11__float_spelling("1E5");
    assert_string_equal(s, "1.0E+5");
    free(s);
    s = sw_yaml11__float_spelling("-.5");
    assert_string_equal(s, "-0.5");
    free(s);
    assert_true(sw_yaml11__word_bool("yes", 3));
    assert_true(sw_yaml11__word_bool("OFF", 3));
    assert_false(sw_yaml11__word_bool("true", 4));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_floats_need_a_dot),
        cmocka_unit_test(test_ints),
        cmocka_unit_test(test_big_ints_are_refused),
        cmocka_unit_test(test_bools_and_nulls),
        cmocka_unit_test(test_explicit_tags),
        cmocka_unit_test(test_numeric_looking_strings),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
