/*
 * test_flood.c - one trial that prints as fast as it can must not stall
 * the engine: through the real binary, a trial printing a million
 * @metrics lines runs beside a calm one with a timeout. The calm run's
 * end is recorded when it exits (not once the flood is read), so it
 * finishes instead of "timing out" behind the flood; and every line of
 * the flood is still stored, once. (Against a sweep that read the whole
 * flood at once, both runs end failed (timeout).)
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "testutil.h"
#include "sweeps/buf.h"

#define FLOOD_LINES 1000000

/* The time the calm trial says it exited (its run folder's exited_at),
 * as written (caller frees). */
static char *calm_exit(const sw_h *h)
{
    char *runs = sw_aprintf("%s/runs", h->home), *path, *text = NULL;
    struct dirent *d;
    DIR *dir = opendir(runs);

    assert_non_null(dir);
    while (!text && (d = readdir(dir))) {
        path = sw_aprintf("%s/%s/exited_at", runs, d->d_name);
        text = sw_test_slurp(path, NULL);
        free(path);
    }
    closedir(dir);
    free(runs);
    assert_non_null(text);
    text[strcspn(text, "\n")] = '\0';
    return text;
}

static void test_a_flood_stalls_no_other_run(void **state)
{
    char *trial, *text, *file, *at, *sql;
    long late_ms;
    sw_h h;

    (void)state;
    sw_h_init(&h);
    trial = sw_aprintf("%s/cli/flood_trial.py", getenv("SW_TEST_DATA"));
    text = sw_aprintf("method: grid\nparallel: 2\ntimeout: 4\n"
                      "command: [/usr/bin/python3, %s]\n"
                      "parameters:\n"
                      "  role: {values: [flood, calm]}\n"
                      "  lines: {value: %d}\n  sleep: {value: 1}\n",
                      trial, FLOOD_LINES);
    file = sw_h_file(&h, "sweep.yaml", text);
    const char *run[] = {"run", file, "--quiet", NULL};
    assert_int_equal(sw_h_run(&h, run, NULL), 0);

    /* both finished: the calm one exited 0 well within its timeout */
    assert_int_equal(sw_h_count(&h, "select count(*) from runs where state "
                                    "= 'finished'"),
                     2);
    /* its end recorded when it exited, not after the flood was read */
    at = calm_exit(&h);
    sql = sw_aprintf("select cast((ended_at - %s) * 1000 as integer) from "
                     "runs where params like '%%calm%%'",
                     at);
    late_ms = sw_h_count(&h, sql);
    if (late_ms < 0 || late_ms > 1500) /* seconds, before: see above */
        fail_msg("the calm run's end was recorded %ld ms after it exited",
                 late_ms);
    free(sql);
    /* and the flood was read whole, each line once */
    sql = sw_aprintf("select count(distinct step) from metrics m join runs r "
                     "on r.id = m.run_id where r.params like '%%flood%%'");
    assert_int_equal(sw_h_count(&h, sql), FLOOD_LINES);
    free(sql);
    free(at);
    free(trial);
    free(text);
    free(file);
    sw_h_dispose(&h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_flood_stalls_no_other_run),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
