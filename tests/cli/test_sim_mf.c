/*
 * test_sim_mf.c - multi-fidelity bayes through the real binary, under
 * `--backend sim`: promotion ASHA (rungs 1, 3, 9) pauses most runs at
 * rung 1, where they never end; bayes fitted on the rung values
 * suggests at the best (x, y) = (0.3, 0.7) before any run has reached
 * the last rung, and says which rung it models; the same sweep with
 * `multi_fidelity: false`, which takes each run's latest value as its
 * result (a paused run's at rung 1 beside a finished one's at 9), gets
 * there at least twice as late. `sweep resume --run-cap`
 * replays the rung values from the store: the search models a rung
 * again at once.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "harness.h"
#include "testutil.h"
#include "sweeps/buf.h"

/* A surrogate: `--x=X --y=Y` prints 9 steps of loss (x - 0.3)^2 +
 * (y - 0.7)^2 + 0.5 / t, a minute each; it refuses to run outside a
 * simulation. */
static const char trial_sh[] =
    "#!/bin/sh\n"
    "[ \"$SWEEP_SIMULATE\" = 1 ] || { echo 'not simulated' >&2; exit 3; }\n"
    "for a in \"$@\"; do case $a in\n"
    "  --x=*) x=${a#--x=};; --y=*) y=${a#--y=};;\n"
    "esac; done\n"
    "exec awk -v x=\"$x\" -v y=\"$y\" 'BEGIN { for (t = 1; t <= 9; t++) "
    "printf "
    "\"@metrics {\\\"step\\\": %d, \\\"loss\\\": %.6f, \\\"_seconds\\\": "
    "60}\\n\", t, (x - 0.3) ^ 2 + (y - 0.7) ^ 2 + 0.5 / t }'\n";

/* The sweep file: bayes under promotion ASHA, 4 at a time, `run_cap`
 * trials; `extra` at the top level. */
static char *mf_sweep(const sw_h *h, int run_cap, const char *extra)
{
    sw_buf b = SW_BUF_INIT;
    char *script = sw_h_file(h, "trial.sh", trial_sh), *path;

    chmod(script, 0755);
    sw_buf_printf(&b,
                  "method: bayes\nmetric: {name: loss, goal: minimize}\n"
                  "command: [%s, \"${args}\"]\n"
                  "sim: {startup: 0, read_delay: 0}\n"
                  "early_terminate: {type: asha, min_iter: 1, eta: 3, "
                  "max_iter: 9, promote: true}\n"
                  "run_cap: %d\nparallel: 4\nseed: 1\n%s"
                  "parameters:\n  x: {min: 0.0, max: 1.0}\n"
                  "  y: {min: 0.0, max: 1.0}\n",
                  script, run_cap, extra);
    path = sw_h_file(h, "sweep.yaml", sw_buf_cstr(&b));
    sw_buf_dispose(&b);
    free(script);
    return path;
}

/* Within 0.03 of the best, by the square of the distance. */
#define NEAR                                                                   \
    "(json_extract(params, '$.x') - 0.3) * (json_extract(params, '$.x') - "    \
    "0.3) + (json_extract(params, '$.y') - 0.7) * (json_extract(params, "      \
    "'$.y') - 0.7) < 0.0009"

/* Whether the first trial suggested near the best was made a run before
 * any run reached the last rung (iteration 9). */
static long near_before_the_top(const sw_h *h)
{
    return sw_h_count(h, "select coalesce((select min(created_at) from runs "
                         "where " NEAR "), 1e18) < (select min(time) from "
                         "metrics where name = 'loss' and step = 9)");
}

/* The index of that trial; -1: none. */
static long first_near(const sw_h *h)
{
    return sw_h_count(h, "select coalesce(min(idx), -1) from runs where " NEAR);
}

/* Runs `sweep run FILE --backend sim`; its stdout into *out. */
static void run_sim(const sw_h *h, const char *file, char **out)
{
    const char *run[] = {"run", file, "--backend", "sim", NULL};

    assert_int_equal(sw_h_run(h, run, out), 0);
}

typedef struct {
    long first_near; /* the first trial within 0.03 of the best; -1 */
    long before_top; /* it came before any run reached the last rung */
    bool models;     /* the search said it models a rung */
} outcome;

/* 30 trials of the sweep, with `extra` in its file, in a home of their
 * own (the harness's home is the process's: one at a time). */
static outcome play(const char *extra)
{
    outcome o;
    char *out = NULL, *file;
    sw_h h;

    sw_h_init(&h);
    file = mf_sweep(&h, 30, extra);
    run_sim(&h, file, &out);
    o.first_near = first_near(&h);
    o.before_top = near_before_the_top(&h);
    o.models = strstr(out, "bayes models the runs' values at iteration");
    free(file);
    free(out);
    sw_h_dispose(&h);
    return o;
}

static void test_rung_values_bring_suggestions_near_the_best(void **state)
{
    outcome mf = play(""), plain = play("multi_fidelity: false\n");

    (void)state;
    print_message("the first trial within 0.03 of the best: %ld with rung "
                  "values, %ld without\n",
                  mf.first_near, plain.first_near);
    assert_true(mf.models);
    assert_false(plain.models);
    /* with rung values it is there before any run could finish; without,
     * later (measured: trial 9 against 24) */
    assert_int_equal(mf.before_top, 1);
    assert_true(mf.first_near >= 0);
    assert_true(plain.first_near < 0 || plain.first_near >= 2 * mf.first_near);
}

/* `sweep resume --run-cap` of a finished sweep: the search is rebuilt
 * from the store, rung values too (without them the runs paused at
 * rung 1, ended `stopped` when the sweep ended, would count only by
 * their last value), and models a rung from its first suggestion on. */
static void test_resume_replays_the_rung_values(void **state)
{
    sw_h h;
    char *out = NULL, *file;

    (void)state;
    sw_h_init(&h);
    file = mf_sweep(&h, 12, "");
    run_sim(&h, file, NULL);
    free(file);
    const char *resume[] = {"resume", "--run-cap", "16", NULL};
    assert_int_equal(sw_h_run(&h, resume, &out), 0);
    assert_int_equal(sw_h_count(&h, "select count(*) from runs"), 16);
    assert_non_null(strstr(out, "bayes models the runs' values at iteration"));
    free(out);
    sw_h_dispose(&h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rung_values_bring_suggestions_near_the_best),
        cmocka_unit_test(test_resume_replays_the_rung_values),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
