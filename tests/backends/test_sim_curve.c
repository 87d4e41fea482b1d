/*
 * test_sim_curve.c - a surrogate's output made into timed lines
 * (backends/sim_curve.c): control keys out wherever they stand, a
 * start-up and reading delay (the file's or the trial's own), and the
 * cut of a paused or promoted attempt (SWEEP_TRAIN_UNTIL and the step
 * its checkpoint holds).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "backends/sim_curve.h"

static const char *line(const sw_sim_curve *c, size_t i, char *out, size_t n)
{
    size_t from = i ? c->ends[i - 1] : 0, len = c->ends[i] - from - 1;

    assert_true(len < n);
    memcpy(out, c->text + from, len);
    out[len] = '\0';
    return out;
}

static void shape(sw_sim_curve *c, const char *raw, double startup,
                  double delay, int64_t from, int64_t until)
{
    sw_sim_shape sh = {100, startup, delay, from, until};

    sw_sim__shape(c, raw, strlen(raw), &sh);
    sw_sim__read_times(c);
}

static void test_control_keys_come_out_wherever_they_stand(void **state)
{
    sw_sim_curve c;
    char buf[128];

    (void)state;
    shape(&c,
          "@metrics {\"_seconds\": 2, \"step\": 1, \"loss\": 0.5}\n"
          "@metrics {\"step\": 2, \"_seconds\": 3.5, \"loss\": 0.4}\n"
          "@metrics {\"step\": 3, \"loss\": 0.3 , \"_seconds\":1e1 }\n"
          "@metrics {\"note\": \"\\\"_seconds\\\": 9\", \"step\": 4}\n"
          "hello\n",
          0, 0, 0, 0);
    assert_int_equal(c.n, 5);
    assert_string_equal(line(&c, 0, buf, sizeof(buf)),
                        "@metrics {\"step\": 1, \"loss\": 0.5}");
    assert_string_equal(line(&c, 1, buf, sizeof(buf)),
                        "@metrics {\"step\": 2, \"loss\": 0.4}");
    assert_string_equal(line(&c, 2, buf, sizeof(buf)),
                        "@metrics {\"step\": 3, \"loss\": 0.3 }");
    /* a key inside a string stays, and the line takes the default 1 s */
    assert_string_equal(line(&c, 3, buf, sizeof(buf)),
                        "@metrics {\"note\": \"\\\"_seconds\\\": 9\", "
                        "\"step\": 4}");
    assert_float_equal(c.at[0], 102, 1e-9);
    assert_float_equal(c.at[1], 105.5, 1e-9);
    assert_float_equal(c.at[2], 115.5, 1e-9);
    assert_float_equal(c.at[3], 116.5, 1e-9);
    assert_float_equal(c.at[4], 116.5, 1e-9); /* a plain line: no time */
    assert_float_equal(c.end_at, 116.5, 1e-9);
    sw_sim__curve_dispose(&c);
}

static void test_startup_and_delay(void **state)
{
    sw_sim_curve c;

    (void)state;
    shape(&c,
          "@metrics {\"loss\": 1, \"_seconds\": 10}\n"
          "@metrics {\"loss\": 2, \"_seconds\": 10}\n",
          5, 3, 0, 0);
    assert_float_equal(c.at[0], 115, 1e-9);
    assert_float_equal(c.seen[0], 118, 1e-9);
    assert_float_equal(c.seen[1], 125, 1e-9); /* read at its exit */
    sw_sim__curve_dispose(&c);
    /* the trial's own, after the launch's, in a line of control keys
     * only (not replayed) */
    shape(&c,
          "@metrics {\"_startup\": 7.5, \"_read_delay\": 0}\n"
          "@metrics {\"loss\": 1, \"_seconds\": 10}\n",
          5, 3, 0, 0);
    assert_int_equal(c.n, 1);
    assert_float_equal(c.at[0], 122.5, 1e-9);
    assert_float_equal(c.seen[0], 122.5, 1e-9);
    sw_sim__curve_dispose(&c);
}

static void test_paused_and_resumed_attempts_are_cut(void **state)
{
    static const char curve[] = "@metrics {\"step\": 1, \"loss\": 1}\n"
                                "tick\n"
                                "@metrics {\"step\": 2, \"loss\": 2}\n"
                                "tock\n"
                                "@metrics {\"step\": 3, \"loss\": 3}\n"
                                "@metrics {\"step\": 4, \"loss\": 4}\n";
    sw_sim_curve c;
    char buf[64];

    (void)state;
    shape(&c, curve, 0, 0, 0, 2); /* trains to 2, then exits */
    assert_int_equal(c.n, 4);
    assert_string_equal(line(&c, 3, buf, sizeof(buf)), "tock");
    assert_float_equal(c.end_at, 102, 1e-9);
    sw_sim__curve_dispose(&c);
    shape(&c, curve, 0, 0, 2, 4); /* resumed after 2, to 4 */
    assert_int_equal(c.n, 3);
    assert_string_equal(line(&c, 0, buf, sizeof(buf)), "tock"); /* of 3 */
    assert_string_equal(line(&c, 1, buf, sizeof(buf)),
                        "@metrics {\"step\": 3, \"loss\": 3}");
    assert_float_equal(c.end_at, 102, 1e-9);
    sw_sim__curve_dispose(&c);
}

static void test_last_step_of_a_log(void **state)
{
    static const char log[] = "@metrics {\"step\": 3, \"loss\": 1}\n"
                              "x\n@metrics {\"step\": 6, \"loss\": 1}\n";
    static const char plain[] = "@metrics {\"loss\": 1}\n"
                                "@metrics {\"loss\": 1}";

    (void)state;
    assert_int_equal(sw_sim__last_step(log, strlen(log)), 6);
    assert_int_equal(sw_sim__last_step(plain, strlen(plain)), 2);
    assert_int_equal(sw_sim__last_step("", 0), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_control_keys_come_out_wherever_they_stand),
        cmocka_unit_test(test_startup_and_delay),
        cmocka_unit_test(test_paused_and_resumed_attempts_are_cut),
        cmocka_unit_test(test_last_step_of_a_log),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
