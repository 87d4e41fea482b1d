/*
 * test_value.c - values and their renderings, above all Python's str(),
 * which is what W&B puts on a trial's command line.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "sweeps/value.h"

static void expect_py(sw_value *v, const char *want)
{
    char *got = sw_value_to_py(v);

    assert_string_equal(got, want);
    free(got);
    sw_value_free(v);
}

static void test_floats_render_as_python(void **state)
{
    (void)state;
    expect_py(sw_value_float(1e-5), "1e-05");
    expect_py(sw_value_float(0.0001), "0.0001");
    expect_py(sw_value_float(3.0), "3.0");
    expect_py(sw_value_float(0.1), "0.1");
    expect_py(sw_value_float(1e16), "1e+16");
    expect_py(sw_value_float(1e15), "1000000000000000.0");
    expect_py(sw_value_float(123456789.123), "123456789.123");
    expect_py(sw_value_float(-2.5e-7), "-2.5e-07");
    expect_py(sw_value_float(1.7976931348623157e308),
              "1.7976931348623157e+308");
    expect_py(sw_value_float(-0.0), "-0.0");
    expect_py(sw_value_float(NAN), "nan");
    expect_py(sw_value_float(-INFINITY), "-inf");
    expect_py(sw_value_float(0.30000000000000004), "0.30000000000000004");
    expect_py(sw_value_float(5e-324), "5e-324");
    expect_py(sw_value_float(12345678901234567.0), "1.2345678901234568e+16");
}

static void test_scalars_render_as_python(void **state)
{
    (void)state;
    expect_py(sw_value_bool(true), "True");
    expect_py(sw_value_bool(false), "False");
    expect_py(sw_value_null(), "None");
    expect_py(sw_value_int(-42), "-42");
    expect_py(sw_value_str("x; rm -rf ~"), "x; rm -rf ~");
}

static void test_containers_render_as_python(void **state)
{
    sw_value *l = sw_value_list(), *m = sw_value_map(), *inner;

    (void)state;
    sw_value_list_push(l, sw_value_int(1));
    sw_value_list_push(l, sw_value_str("a"));
    sw_value_list_push(l, sw_value_str("it's"));
    sw_value_list_push(l, sw_value_str("q'\"\n"));
    sw_value_list_push(l, sw_value_null());
    expect_py(l, "[1, 'a', \"it's\", 'q\\'\"\\n', None]");

    inner = sw_value_map();
    sw_value_map_set(inner, "lr", sw_value_float(0.01));
    sw_value_map_set(m, "b", sw_value_int(1));
    sw_value_map_set(m, "opt", inner);
    expect_py(m, "{'b': 1, 'opt': {'lr': 0.01}}");
}

static void test_json_canonical_sorts_keys(void **state)
{
    sw_value *m = sw_value_map();
    sw_buf b = SW_BUF_INIT;

    (void)state;
    sw_value_map_set(m, "z", sw_value_float(1.0));
    sw_value_map_set(m, "a", sw_value_str("q\"\\"));
    sw_value_write_json(&b, m, false);
    assert_string_equal(sw_buf_cstr(&b), "{\"z\": 1.0, \"a\": \"q\\\"\\\\\"}");
    b.len = 0;
    sw_value_write_json(&b, m, true);
    assert_string_equal(sw_buf_cstr(&b), "{\"a\": \"q\\\"\\\\\", \"z\": 1.0}");
    sw_buf_dispose(&b);
    sw_value_free(m);
}

static void test_equal_is_typed(void **state)
{
    sw_value *i = sw_value_int(1), *f = sw_value_float(1.0);
    sw_value *t = sw_value_bool(true), *c;

    (void)state;
    assert_false(sw_value_equal(i, f));
    assert_false(sw_value_equal(i, t));
    c = sw_value_clone(f);
    assert_true(sw_value_equal(c, f));
    sw_value_free(i);
    sw_value_free(f);
    sw_value_free(t);
    sw_value_free(c);
}

static void expect_g6(double f)
{
    sw_buf b = SW_BUF_INIT;
    char want[64];

    snprintf(want, sizeof(want), "%.6g", f);
    sw_float_write_g6(&b, f);
    if (strcmp(sw_buf_cstr(&b), want) != 0)
        fail_msg("%.17g: \"%s\", printf \"%s\"", f, sw_buf_cstr(&b), want);
    sw_buf_dispose(&b);
}

/* sw_float_write_g6 writes what printf's "%.6g" does, byte for byte: at
 * the edges of its fast path, on halves at the sixth digit (decimal and
 * binary), and on two million values spread over 24 orders of magnitude,
 * either sign, and on round decimals of 1 to 8 digits. */
static void test_g6_is_printf_s(void **state)
{
    static const double edges[] = {
        1e-4,     9.99999e-5, 9.999995e-5, 0.0001000005,
        1e6,      999999.5,   999999.4,    999999.49999999,
        99999.95, 9999995,    0.1234565,   1.234565,
        12.5,     0.5,        2.5,         1234565,
        123456.5, 100000,     1,           10,
        0,        -0.0,       1e-300,      1e300,
        INFINITY, -INFINITY,  NAN,         5e-324,
        0.3,      1.0 / 3};
    unsigned long long x = 88172645463325252ULL;
    size_t i;
    int k;

    (void)state;
    for (i = 0; i < sizeof(edges) / sizeof(edges[0]); i++) {
        expect_g6(edges[i]);
        expect_g6(-edges[i]);
        expect_g6(nextafter(edges[i], 0));
        expect_g6(nextafter(edges[i], INFINITY));
    }
    for (i = 0; i < 2000000; i++) {
        double u;

        x ^= x << 13, x ^= x >> 7, x ^= x << 17; /* xorshift64 */
        u = (double)(x >> 11) / 9007199254740992.0;
        expect_g6((x & 1 ? -1 : 1) * pow(10, u * 24 - 12));
    }
    for (k = 1; k <= 8; k++)
        for (i = 0; i < 20000; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            expect_g6((double)(x % 100000000) / pow(10, k));
            expect_g6((double)(x % 10000000) + 0.5);
        }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_floats_render_as_python),
        cmocka_unit_test(test_scalars_render_as_python),
        cmocka_unit_test(test_containers_render_as_python),
        cmocka_unit_test(test_json_canonical_sorts_keys),
        cmocka_unit_test(test_equal_is_typed),
        cmocka_unit_test(test_g6_is_printf_s),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
