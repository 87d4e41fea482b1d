/*
 * test_engine.c - the engine's decisions, driven by hand: a fake executor
 * (fake_executor.h) whose attempts are scripted, a clock that moves only
 * when the test moves it to the engine's next wake-up, slow work done at
 * once, and a real store in a temporary folder. No processes, no sleeps.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fake_executor.h"
#include "orchestrator/engine/engine_internal.h"
#include "testutil.h"

typedef struct {
    char dir[64];
    char *home;
    fake_clock clock;
    fake_executor *fx;
    sw_engine *e;
    /* the script: what the first attempt of a run does, the second and
     * later ones, and (when has_third) the third and later ones */
    fake_plan plan;
    fake_plan second;
    fake_plan third;
    bool has_third;
    const char *star; /* this run's suffix ("-1") gets star_output */
    const char *star_output;
    /* when n_each: attempt k does each[k - 1] (the last one thereafter),
     * its output each_out(run, k) */
    fake_plan each[4];
    int n_each;
    char each_out[8][4][128];
} fixture;

static void script(void *ctx, const char *key, int attempt, fake_plan *p)
{
    fixture *f = ctx;
    size_t n = strlen(key), m = f->star ? strlen(f->star) : 0;

    *p = attempt > 2 && f->has_third ? f->third
         : attempt > 1               ? f->second
                                     : f->plan;
    if (f->n_each > 0) {
        const char *dash = strrchr(key, '-');
        long run = dash ? strtol(dash + 1, NULL, 10) : 0;
        int k = attempt < f->n_each ? attempt : f->n_each;

        *p = f->each[k - 1];
        if (run >= 1 && run < 8)
            p->output = f->each_out[run][k - 1];
    }
    if (f->star && n >= m && strcmp(key + n - m, f->star) == 0)
        p->output = f->star_output;
}

static void sync_submit(void *ctx, sw_engine_work *w)
{
    w->run(w);
    sw_engine__work_done(ctx, w);
}

static int setup(void **state)
{
    fixture *f = sw_calloc(1, sizeof(*f));

    setenv("SWEEP_NVML_LIBRARY", "", 1); /* the same on a GPU machine */
    snprintf(f->dir, sizeof(f->dir), "/tmp/sw-engine-XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    f->home = sw_aprintf("%s/home", f->dir);
    fake_clock_init(&f->clock);
    f->plan = (fake_plan){false, 10, 0, false, 0, NULL, false, false};
    f->second = f->plan;
    *state = f;
    return 0;
}

static void drop_engine(fixture *f)
{
    if (!f->e)
        return;
    sw_engine__dispose(f->e); /* frees the executor */
    free(f->e);
    f->e = NULL;
    f->fx = NULL;
}

static int teardown(void **state)
{
    fixture *f = *state;

    drop_engine(f);
    sw_test_rm_tree(f->dir);
    free(f->home);
    free(f);
    return 0;
}

static void attach(fixture *f)
{
    f->fx = fake_executor_new(script, f);
    f->e = sw_calloc(1, sizeof(sw_engine));
    f->e->ex = &f->fx->base;
    f->e->clock = &f->clock.base;
}

static void ready(fixture *f, const sw_engine_opts *o)
{
    if (sw_engine__setup(f->e, o) != SW_OK)
        fail_msg("setup: %s", sw_error_last());
    f->e->host = (sw_engine_host){sync_submit, f->e};
    f->e->quiet = true;
}

/* A sweep of `yaml` (program, method and parameters given), ready. */
static void start_sweep(fixture *f, const char *yaml, double grace)
{
    sw_engine_opts o = SW_ENGINE_OPTS_INIT;
    char *path = sw_aprintf("%s/sweep.yaml", f->dir);
    FILE *fp = fopen(path, "w");

    assert_non_null(fp);
    fputs(yaml, fp);
    fclose(fp);
    o.home = f->home;
    o.quiet = true;
    o.grace = grace;
    attach(f);
    if (sw_engine__prepare_run(f->e, path, &o) != SW_OK)
        fail_msg("prepare: %s", sw_error_last());
    free(path);
    ready(f, &o);
}

/* Pumps, moving the clock to each wake-up, until the engine is done or
 * `until` (monotonic) has come; returns sw_engine__end()'s result, or 1
 * when stopped at `until`. */
static int drive_until(fixture *f, double until)
{
    sw_engine *e = f->e;
    double w;
    int steps;

    for (steps = 0; steps < 100000; steps++) {
        sw_engine__pump(e);
        if (e->finished)
            return sw_engine__end(e);
        if (e->finished_work)
            continue;
        w = sw_engine__next_wake(e);
        if (w <= 0)
            fail_msg("the engine waits for nothing: it would hang");
        if (until > 0 && w >= until) {
            f->clock.now = until;
            return 1;
        }
        if (w > f->clock.now)
            f->clock.now = w;
    }
    fail_msg("the engine did not finish");
    return -1;
}

static int drive(fixture *f)
{
    if (sw_engine__begin(f->e) != SW_OK)
        fail_msg("begin: %s", sw_error_last());
    return drive_until(f, 0);
}

static sw_run_rec get_run(fixture *f, int n)
{
    sw_run_rec r;
    char *id = sw_aprintf("%s-%d", f->e->sweep.id, n);

    if (sw_store_get_run(f->e->st, id, &r) != SW_OK)
        fail_msg("%s", sw_error_last());
    free(id);
    return r;
}

/* The outcomes of run n's attempts (the attempts table), comma-joined,
 * into buf; *gpu and *secs of its last one. */
static const char *outcomes(fixture *f, int n, double *gpu, double *secs)
{
    static char buf[256];
    char *id = sw_aprintf("%s-%d", f->e->sweep.id, n);
    sw_attempt_rec *a;
    size_t na, i, len = 0;

    buf[0] = 0;
    assert_int_equal(sw_store_list_attempts(f->e->st, f->e->sweep.id, &a, &na),
                     SW_OK);
    for (i = 0; i < na; i++) {
        if (strcmp(a[i].run_id, id) == 0) {
            len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%s",
                                    len ? "," : "", a[i].outcome);
            *gpu = a[i].gpu;
            *secs = a[i].ended_at - a[i].started_at;
        }
        sw_attempt_rec_dispose(&a[i]);
    }
    free(a);
    free(id);
    return buf;
}

static int64_t count_runs(fixture *f, const char *state)
{
    sw_run_rec *runs;
    size_t n, i;
    int64_t c = 0;

    assert_int_equal(sw_store_list_runs(f->e->st, f->e->sweep.id, &runs, &n),
                     SW_OK);
    for (i = 0; i < n; i++) {
        c += !state || strcmp(sw_run_state_name(runs[i].state), state) == 0;
        sw_run_rec_dispose(&runs[i]);
    }
    free(runs);
    return c;
}

static const char *sweep_state(fixture *f)
{
    static char buf[32];
    sw_sweep_rec s;

    assert_int_equal(sw_store_get_sweep(f->e->st, f->e->sweep.id, &s), SW_OK);
    snprintf(buf, sizeof(buf), "%s", s.state);
    sw_sweep_rec_dispose(&s);
    return buf;
}

#define GRID3                                                                  \
    "program: train.py\nmethod: grid\n"                                        \
    "parameters:\n  x:\n    values: [1, 2, 3]\n"

static void test_grid_runs_to_its_end(void **state)
{
    fixture *f = *state;

    start_sweep(f, GRID3 "parallel: 2\n", 0);
    assert_int_equal(drive(f), SW_OK);
    assert_int_equal(count_runs(f, "finished"), 3);
    assert_int_equal(count_runs(f, NULL), 3);
    assert_string_equal(sweep_state(f), "finished");
    assert_int_equal(f->fx->launches, 3);
    /* two at a time, 10 s each: 20 s of the fake clock */
    assert_true(f->clock.now == 1020);
    sw_run_rec r = get_run(f, 1);
    assert_non_null(strstr(r.job, "fake "));
    sw_run_rec_dispose(&r);
}

/* A secret passed as ${envvar:NAME} reaches the trial but never the
 * store (nor `sweep show`, which prints the stored argv). */
static void test_envvar_is_expanded_only_at_launch(void **state)
{
    fixture *f = *state;

    setenv("SW_TEST_SECRET", "hunter2", 1);
    start_sweep(f,
                "program: train.py\nmethod: grid\ncommand:\n  - ${program}\n"
                "  - --key=${envvar:SW_TEST_SECRET}\n  - ${args}\n"
                "parameters:\n  x:\n    values: [1]\n",
                0);
    assert_int_equal(drive(f), SW_OK);
    unsetenv("SW_TEST_SECRET");
    sw_run_rec r = get_run(f, 1);
    const fake_job *j = fake_executor_job(f->fx, r.id);
    assert_non_null(j);
    assert_string_equal(r.argv,
                        "[\"train.py\", \"--key=${envvar:SW_TEST_SECRET}\", "
                        "\"--x=1\"]");
    assert_string_equal(j->argv[0], "train.py");
    assert_string_equal(j->argv[1], "--key=hunter2");
    assert_string_equal(j->argv[2], "--x=1");
    assert_null(j->argv[3]);
    sw_run_rec_dispose(&r);
}

#define RANDOM                                                                 \
    "program: train.py\nmethod: random\n"                                      \
    "parameters:\n  x:\n    min: 0.0\n    max: 1.0\n"

/* Defect: a launch that failed was not counted toward "the first runs all
 * failed", had no back-off, and the fill loop never went back to the
 * signal check: 481,096 failed runs in 10 minutes. */
static void test_launch_failures_count_and_back_off(void **state)
{
    fixture *f = *state;

    f->plan.fail_launch = true;
    start_sweep(f, RANDOM, 0);
    assert_int_not_equal(drive(f), SW_OK);
    assert_string_equal(sweep_state(f), "failed");
    assert_int_equal(count_runs(f, NULL), 5);
    assert_int_equal(count_runs(f, "failed"), 5);
    sw_run_rec r = get_run(f, 5);
    assert_string_equal(r.reason, "cannot start: fake: cannot start");
    sw_run_rec_dispose(&r);
    double gpu, secs;
    assert_string_equal(outcomes(f, 5, &gpu, &secs), "not started");
    /* backed off 0.1 + 0.2 + 0.4 + 0.8 s between the five */
    assert_true(f->clock.now - 1000 >= 1.5 - 1e-9);
}

static void test_interrupt_stops_failing_launches(void **state)
{
    fixture *f = *state;
    int64_t n;

    setenv("SWEEP_MAX_INITIAL_FAILURES", "0", 1); /* no limit */
    f->plan.fail_launch = true;
    start_sweep(f, RANDOM, 0);
    assert_int_equal(sw_engine__begin(f->e), SW_OK);
    assert_int_equal(drive_until(f, 1060), 1);
    n = count_runs(f, NULL);
    /* a minute of failing launches is a handful of runs, not thousands */
    assert_in_range(n, 5, 12);
    unsetenv("SWEEP_MAX_INITIAL_FAILURES");
    sw_engine__interrupt(f->e, 2);
    assert_int_equal(drive_until(f, 0), SW_EINTR);
    assert_string_equal(sweep_state(f), "interrupted");
    assert_int_equal(count_runs(f, NULL), n);
    unsetenv("SWEEP_MAX_INITIAL_FAILURES");
}

#define ONE "program: train.py\nmethod: grid\nparameters:\n  x:\n    value: 1\n"

/* Defect: a trial that checkpoints and exits 0 on SIGTERM after its
 * timeout was recorded finished, and its partial value taught the
 * search. */
static void test_timeout_with_exit_0_is_a_failure(void **state)
{
    fixture *f = *state;

    f->plan = (fake_plan){
        false, 100, 0, false, 0, "@metrics {\"loss\": 0.5}\n", false, false};
    start_sweep(f, ONE "timeout: 5\nmetric: {name: loss}\n", 0);
    assert_int_equal(drive(f), SW_ERROR); /* its only run failed */
    sw_run_rec r = get_run(f, 1);
    assert_string_equal(sw_run_state_name(r.state), "failed");
    assert_string_equal(r.reason, "timeout after 5s");
    assert_true(r.has_exit);
    assert_int_equal(r.exit_code, 0);
    assert_int_equal(f->fx->terms, 1);
    sw_run_rec_dispose(&r);
    double gpu, secs;
    assert_string_equal(outcomes(f, 1, &gpu, &secs), "timeout");
    assert_true(gpu == 0);
}

static void test_sigkill_after_the_grace_period(void **state)
{
    fixture *f = *state;
    const fake_job *j;
    char *key;

    f->plan = (fake_plan){false, -1,   0,     false,
                          -1,    NULL, false, false}; /* ignores TERM */
    start_sweep(f, ONE "timeout: 5\n", 3);
    assert_int_equal(drive(f), SW_ERROR); /* its only run failed */
    key = sw_aprintf("%s-1", f->e->sweep.id);
    j = fake_executor_job(f->fx, key);
    free(key);
    assert_true(j->term_at == 1005);
    assert_true(j->kill_at == 1008);
    assert_int_equal(f->fx->kills, 1);
    sw_run_rec r = get_run(f, 1);
    assert_string_equal(sw_run_state_name(r.state), "failed");
    assert_int_equal(r.signal, 9);
    sw_run_rec_dispose(&r);
}

/* Defect: timeouts were measured on the wall clock, so a clock step (or
 * a suspend) fired them early or never. */
static void test_wall_clock_steps_change_no_timeout(void **state)
{
    fixture *f = *state;

    f->plan.runtime = 4;
    start_sweep(f, ONE "timeout: 5\n", 0);
    assert_int_equal(sw_engine__begin(f->e), SW_OK);
    assert_int_equal(drive_until(f, 1002), 1);
    f->clock.wall_skew = 3600; /* NTP, or a resume from suspend */
    assert_int_equal(drive_until(f, 0), SW_OK);
    sw_run_rec r = get_run(f, 1);
    assert_string_equal(sw_run_state_name(r.state), "finished");
    assert_int_equal(f->fx->terms, 0);
    sw_run_rec_dispose(&r);
}

static void test_metric_target_cancels_the_rest(void **state)
{
    fixture *f = *state;

    f->plan = (fake_plan){false, 100,  0, false, 0, "@metrics {\"loss\": 1}\n",
                          false, false};
    f->star = "-2";
    f->star_output = "@metrics {\"loss\": 0.05}\n";
    start_sweep(f,
                GRID3 "parallel: 3\n"
                      "metric: {name: loss, goal: minimize, target: 0.1}\n",
                0);
    assert_int_equal(drive(f), SW_OK);
    assert_string_equal(sweep_state(f), "finished");
    /* run 2's line is read as it starts, before the third point is drawn:
     * the two runs made are canceled, and no third is launched */
    assert_int_equal(count_runs(f, "canceled"), 2);
    assert_int_equal(f->fx->launches, 2);
    sw_run_rec r = get_run(f, 1);
    assert_string_equal(r.reason, "target reached");
    sw_run_rec_dispose(&r);
    sw_engine__best(f->e); /* as the progress line reads it */
    assert_true(f->e->has_best && f->e->best == 0.05);
    assert_true(f->clock.now < 1001); /* at once, not after 100 s */
}

/* A trial that only prints cannot be answered: when the stopping rule
 * stops its run, it gets SIGTERM at once, and the run ends stopped
 * (whatever it exits with), its last value counting for the best.
 * Hyperband, min_iter 1, eta 3, one run at a time: band 1 holds 1, 1
 * and 3 when run 3 reports; index int(3/3) = 1, threshold 1 < 3. */
static void test_the_rule_stops_a_printing_trial_at_once(void **state)
{
    fixture *f = *state;
    double t0;

    f->plan = (fake_plan){
        false, 100, 0, false, 143, "@metrics {\"loss\": 1}\n", false, false};
    start_sweep(f,
                "program: train.py\nmethod: grid\nparallel: 1\n"
                "parameters:\n  x:\n    values: [1, 2, 3]\n"
                "metric: {name: loss, goal: minimize}\n"
                "early_terminate: {type: hyperband, min_iter: 1, eta: 3}\n",
                5);
    f->star = "-3";
    f->star_output = "@metrics {\"loss\": 3}\n";
    t0 = f->clock.now;
    assert_int_equal(drive(f), SW_OK);
    sw_run_rec r = get_run(f, 3);
    assert_string_equal(sw_run_state_name(r.state), "stopped");
    /* the rule's word, then its verdict, as the notice said it */
    assert_true(strncmp(r.reason, "stopped early by the stopping rule: ", 36) ==
                0);
    assert_non_null(strstr(r.reason, "threshold"));
    assert_true(r.has_value && r.value == 3);
    sw_run_rec_dispose(&r);
    assert_int_equal(count_runs(f, "finished"), 2);
    assert_int_equal(f->fx->terms, 1);
    assert_int_equal(f->fx->kills, 0);
    /* run 3 ended at its first read, not after its 100 s */
    assert_true(f->clock.now - t0 < 201);
    assert_int_equal(f->e->stopped, 1);
}

static void test_two_interrupts_cancel_running_trials(void **state)
{
    fixture *f = *state;

    f->plan = (fake_plan){false, 100, 0, false, 143, NULL, false, false};
    start_sweep(f, GRID3 "parallel: 2\n", 0);
    assert_int_equal(sw_engine__begin(f->e), SW_OK);
    assert_int_equal(drive_until(f, 1001), 1);
    sw_engine__interrupt(f->e, 2); /* Ctrl-C: launch nothing more */
    assert_int_equal(drive_until(f, 1050), 1);
    assert_int_equal(f->fx->terms, 0);
    sw_engine__interrupt(f->e, 2); /* again: cancel them */
    assert_int_equal(drive_until(f, 0), SW_EINTR);
    assert_int_equal(f->fx->terms, 2);
    assert_int_equal(count_runs(f, "canceled"), 2);
    assert_int_equal(count_runs(f, NULL), 2);
    assert_string_equal(sweep_state(f), "interrupted");
}

static void test_one_interrupt_waits_for_running_trials(void **state)
{
    fixture *f = *state;

    start_sweep(f, GRID3 "parallel: 2\n", 0);
    assert_int_equal(sw_engine__begin(f->e), SW_OK);
    assert_int_equal(drive_until(f, 1001), 1);
    sw_engine__interrupt(f->e, 2);
    assert_int_equal(drive_until(f, 0), SW_EINTR);
    assert_int_equal(count_runs(f, "finished"), 2);
    assert_int_equal(f->fx->launches, 2);
    assert_string_equal(sweep_state(f), "interrupted");
}

/* A lost attempt was not the trial's failure: the run goes again
 * without using a retry (issue 13: 40-79 grid points of 300 were lost for
 * good when supervisors died). */
static void test_lost_attempt_is_rerun_without_a_retry(void **state)
{
    fixture *f = *state;

    f->plan = (fake_plan){false, 1, 0, true, 0, NULL, false, false};
    start_sweep(f, ONE, 0);
    assert_int_equal(drive(f), SW_OK);
    sw_run_rec r = get_run(f, 1);
    assert_string_equal(sw_run_state_name(r.state), "finished");
    assert_int_equal(r.attempts, 2);
    assert_int_equal(r.lost, 1);
    sw_run_rec_dispose(&r);
}

/* Lost, then failed, then finished: the failure used the one retry, the
 * loss none. */
static void test_lost_attempt_leaves_the_retries(void **state)
{
    fixture *f = *state;

    f->plan = (fake_plan){false, 1, 0, true, 0, NULL, false, false};
    f->second = (fake_plan){false, 1, 1, false, 0, NULL, false, false};
    f->third = (fake_plan){false, 1, 0, false, 0, NULL, false, false};
    f->has_third = true;
    start_sweep(f, ONE "retries: 1\n", 0);
    assert_int_equal(drive(f), SW_OK);
    sw_run_rec r = get_run(f, 1);
    assert_string_equal(sw_run_state_name(r.state), "finished");
    assert_int_equal(r.attempts, 3);
    sw_run_rec_dispose(&r);
    double gpu, secs;
    assert_string_equal(outcomes(f, 1, &gpu, &secs), "lost,failed,finished");
}

#define ONE_LOSS                                                               \
    "program: train.py\nmethod: grid\n"                                        \
    "parameters:\n  x:\n    values: [1]\n"                                     \
    "metric: {name: loss, goal: minimize}\n"

/* Issue 38: promotion ASHA (eta 2, rungs 1, 2 and 4) over four runs,
 * run 1 the best: it pauses at rung 1 and at rung 2, promoted from each,
 * then fails on its way to 4. The pauses were not failures, so under
 * `retries: 1` the failure still has its retry, which finishes. (Before,
 * the two pauses had used up the retry and the run ended failed.) */
static void test_pauses_leave_the_retries(void **state)
{
    static const int steps[4][2] = {{1, 1}, {2, 2}, {3, 3}, {3, 4}};
    fixture *f = *state;
    int run, k;

    for (k = 0; k < 4; k++)
        f->each[k] = (fake_plan){false, -1, 0, false, 0, NULL, false, false};
    f->each[2].runtime = f->each[3].runtime = 1; /* ends by itself: */
    f->each[2].exit_code = 1;                    /* failed, then finished */
    for (run = 1; run < 8; run++)
        for (k = 0; k < 4; k++)
            snprintf(f->each_out[run][k], sizeof(f->each_out[run][k]),
                     "@metrics {\"step\": %d, \"loss\": %d}\n"
                     "@metrics {\"step\": %d, \"loss\": %d}\n",
                     steps[k][0], run, steps[k][1], run);
    f->n_each = 4;
    start_sweep(f,
                "program: train.py\nmethod: grid\nretries: 1\n"
                "parameters:\n  x:\n    values: [1, 2, 3, 4]\n"
                "metric: {name: loss, goal: minimize}\n"
                "early_terminate: {type: asha, min_iter: 1, eta: 2,"
                " max_iter: 4, promote: true, drain: false}\n",
                0);
    assert_int_equal(drive(f), SW_OK);
    double gpu, secs;
    assert_string_equal(outcomes(f, 1, &gpu, &secs),
                        "paused,paused,failed,finished");
    sw_run_rec r = get_run(f, 1);
    assert_string_equal(sw_run_state_name(r.state), "finished");
    assert_int_equal(r.attempts, 4);
    sw_run_rec_dispose(&r);
}

/* A run lost again and again ends, failed, after its fourth loss. */
static void test_always_lost_fails_in_the_end(void **state)
{
    fixture *f = *state;

    f->plan = (fake_plan){false, 1, 0, true, 0, NULL, false, false};
    f->second = f->plan;
    start_sweep(f, ONE, 0);
    assert_int_equal(drive(f), SW_ERROR); /* its only run failed */
    sw_run_rec r = get_run(f, 1);
    assert_string_equal(sw_run_state_name(r.state), "failed");
    assert_string_equal(r.reason, "lost 4 times: fake: its supervisor died");
    assert_int_equal(r.attempts, 4);
    sw_run_rec_dispose(&r);
}

static void test_retry_after_a_failure(void **state)
{
    fixture *f = *state;

    f->plan.exit_code = 1;
    start_sweep(f, GRID3 "retries: 2\n", 0);
    assert_int_equal(drive(f), SW_OK);
    assert_int_equal(count_runs(f, "finished"), 3);
    sw_run_rec r = get_run(f, 2);
    assert_int_equal(r.attempts, 2);
    assert_int_equal(f->fx->launches, 6);
    sw_run_rec_dispose(&r);
}

static void test_first_failures_stop_the_sweep(void **state)
{
    fixture *f = *state;

    f->plan.exit_code = 2;
    start_sweep(f, RANDOM "parallel: 2\n", 0);
    assert_int_equal(drive(f), SW_ERROR);
    assert_string_equal(sweep_state(f), "failed");
    assert_int_equal(count_runs(f, NULL), 5);
    assert_int_equal(count_runs(f, "failed"), 5);
    assert_int_equal(f->fx->launches, 5);
}

/* Issue 12: at --parallel 64 the rule cost 64 failed runs. Until a run
 * has finished, no more attempts are unproven at once than the failures
 * the rule has left. */
static void test_first_failures_cost_five_at_any_parallel(void **state)
{
    fixture *f = *state;

    f->plan.exit_code = 2;
    f->plan.runtime = 3;
    start_sweep(f, RANDOM "parallel: 64\n", 0);
    assert_int_equal(drive(f), SW_ERROR);
    assert_int_equal(count_runs(f, NULL), 5);
    assert_int_equal(f->fx->launches, 5);
}

/* ... and a command that works fills every slot as soon as a trial has
 * reported a metric, or after PROBATION_S without failing. */
static void test_working_trials_fill_every_slot(void **state)
{
    fixture *f = *state;

    f->plan.runtime = 100;
    start_sweep(f, RANDOM "parallel: 8\n", 0);
    assert_int_equal(sw_engine__begin(f->e), SW_OK);
    assert_int_equal(drive_until(f, 1010), 1);
    assert_int_equal(f->fx->launches, 5);
    assert_int_equal(drive_until(f, 1031), 1);
    assert_int_equal(f->fx->launches, 8);
}

static void test_a_metric_ends_the_probation(void **state)
{
    fixture *f = *state;

    f->plan = (fake_plan){false, 100,  0, false, 0, "@metrics {\"loss\": 1}\n",
                          false, false};
    start_sweep(f, RANDOM "parallel: 8\n", 0);
    assert_int_equal(sw_engine__begin(f->e), SW_OK);
    assert_int_equal(drive_until(f, 1001), 1);
    assert_int_equal(f->fx->launches, 8);
}

/* A report, then a 3 MiB log line whose text at 1 MiB read boundaries
 * (counted from the line's start) is a report, the last one running to
 * the line's end: it is no report. */
static void test_a_long_line_is_skipped_whole(void **state)
{
    static const char head[] = "@metrics {\"loss\": 0.7}\n";
    static const char fake[] = "@metrics {\"loss\": -1000}";
    fixture *f = *state;
    size_t n = sizeof(head) - 1, mib = (size_t)1 << 20, line = 3 * mib - 64;
    size_t k = sizeof(fake) - 1;
    char *out = sw_malloc(n + line + 2);

    memcpy(out, head, n);
    memset(out + n, 'x', line);
    memcpy(out + n + mib, fake, k);
    memcpy(out + n + 2 * mib, fake, k);
    memset(out + n + 2 * mib + k, ' ', line - 2 * mib - k);
    memcpy(out + n + line, "\n", 2);
    f->plan = (fake_plan){false, 10, 0, false, 0, out, false, false};
    start_sweep(f, ONE_LOSS, 0);
    assert_int_equal(drive(f), SW_OK);
    sw_run_rec r = get_run(f, 1);
    assert_true(r.has_value && r.value == 0.7);
    assert_int_equal(r.stdout_offset, (int64_t)(n + line + 1));
    sw_run_rec_dispose(&r);
    sw_engine__best(f->e); /* as the progress line reads it */
    assert_true(f->e->has_best && f->e->best == 0.7);
    free(out);
}

/* A @metrics line too long to read is dropped; the lines after it count,
 * and so does a last line without its newline once the trial has ended. */
static void test_the_last_line_counts_without_a_newline(void **state)
{
    static const char head[] = "@metrics {\"loss\": 0.1}";
    static const char tail[] = "\n@metrics {\"loss\": 0.9}\n"
                               "@metrics {\"loss\": 0.5}";
    fixture *f = *state;
    size_t line = (size_t)2 << 20;
    char *out = sw_malloc(line + sizeof(tail));

    memset(out, ' ', line);
    memcpy(out, head, sizeof(head) - 1);
    memcpy(out + line, tail, sizeof(tail));
    f->plan = (fake_plan){false, 10, 0, false, 0, out, false, false};
    start_sweep(f, ONE_LOSS, 0);
    assert_int_equal(drive(f), SW_OK);
    sw_run_rec r = get_run(f, 1);
    assert_string_equal(sw_run_state_name(r.state), "finished");
    assert_true(r.has_value && r.value == 0.5);
    assert_int_equal(r.stdout_offset, (int64_t)(line + sizeof(tail) - 1));
    sw_run_rec_dispose(&r);
    sw_engine__best(f->e); /* as the progress line reads it */
    assert_true(f->e->has_best && f->e->best == 0.5);
    free(out);
}

/* `sweep` dies with two trials running; a new one adopts both through
 * their handles and runs only the third. */
static void crash_midway_with(fixture *f, const char *extra)
{
    char *yaml = sw_aprintf("%s%s", GRID3 "parallel: 2\n", extra);

    start_sweep(f, yaml, 0);
    free(yaml);
    assert_int_equal(sw_engine__begin(f->e), SW_OK);
    assert_int_equal(drive_until(f, 1005), 1);
    assert_int_equal(count_runs(f, "running"), 2);
    drop_engine(f); /* no end: the store says running */
}

static void crash_midway(fixture *f)
{
    crash_midway_with(f, "");
}

static void resume(fixture *f)
{
    sw_engine_opts o = SW_ENGINE_OPTS_INIT;
    bool done;

    o.home = f->home;
    o.quiet = true;
    attach(f);
    if (sw_engine__prepare_resume(f->e, NULL, &o, &done) != SW_OK)
        fail_msg("resume: %s", sw_error_last());
    assert_false(done);
    ready(f, &o);
}

static void test_resume_adopts_running_trials(void **state)
{
    fixture *f = *state;

    crash_midway(f);
    resume(f);
    assert_int_equal(drive(f), SW_OK);
    assert_int_equal(count_runs(f, "finished"), 3);
    assert_int_equal(count_runs(f, NULL), 3);
    assert_int_equal(f->fx->launches, 1);
    sw_run_rec r = get_run(f, 1);
    assert_int_equal(r.attempts, 1);
    sw_run_rec_dispose(&r);
}

/* A resumed sweep still enforces the timeout of the attempts it adopts,
 * from when they started, not from when it adopted them. */
static void test_resume_keeps_timeouts(void **state)
{
    fixture *f = *state;
    sw_run_rec r;

    f->plan.runtime = 100;
    crash_midway_with(f, "timeout: 7\n");
    resume(f);
    assert_int_equal(drive(f), SW_ERROR); /* its only run failed */
    r = get_run(f, 1);
    assert_string_equal(sw_run_state_name(r.state), "failed");
    assert_string_equal(r.reason, "timeout after 7s");
    assert_true(r.ended_at - r.started_at < 7.5);
    sw_run_rec_dispose(&r);
}

/* A sweep the old engine finished with a run lost for good (failed,
 * "lost: ...") is resumed, and that run goes again. */
static void test_resume_reruns_lost_runs_of_a_finished_sweep(void **state)
{
    fixture *f = *state;
    sw_run_rec r;

    start_sweep(f, GRID3, 0);
    assert_int_equal(drive(f), SW_OK);
    r = get_run(f, 2);
    r.state = SW_RUN_FAILED;
    free(r.reason);
    r.reason = sw_strdup("lost: its supervisor died");
    assert_int_equal(sw_store_update_run(f->e->st, &r), SW_OK);
    sw_run_rec_dispose(&r);
    drop_engine(f);
    resume(f);
    assert_int_equal(drive(f), SW_OK);
    assert_int_equal(count_runs(f, "finished"), 3);
    assert_int_equal(f->fx->launches, 1);
    r = get_run(f, 2);
    assert_int_equal(r.attempts, 2);
    sw_run_rec_dispose(&r);
    assert_string_equal(sweep_state(f), "finished");
}

/* The launch was committed but its answer never was: the executor finds
 * that it never started, and the run goes again. */
static void test_resume_relaunches_an_unanswered_launch(void **state)
{
    fixture *f = *state;
    sw_run_rec r;

    crash_midway(f);
    resume(f);
    r = get_run(f, 1);
    free(r.job);
    r.job = NULL;
    assert_int_equal(sw_store_update_run(f->e->st, &r), SW_OK);
    sw_run_rec_dispose(&r);
    f->fx->adopt_started = false;
    assert_int_equal(drive(f), SW_OK);
    assert_int_equal(count_runs(f, "finished"), 3);
    r = get_run(f, 1);
    assert_int_equal(r.attempts, 2);
    sw_run_rec_dispose(&r);
}

/* An attempt whose supervisor died before starting it never ran
 * (SW_JOB_NOT_STARTED): the machinery failed, not the trial, so the run
 * goes again at once without using a retry (issue 13). */
static void test_an_attempt_that_never_ran_uses_no_retry(void **state)
{
    fixture *f = *state;
    sw_run_rec r;

    f->plan.not_started = true;
    f->second.exit_code = 1;
    f->third = (fake_plan){false, 10, 0, false, 0, NULL, false, false};
    f->has_third = true;
    start_sweep(f, ONE "retries: 1\n", 0);
    assert_int_equal(drive(f), SW_OK);
    r = get_run(f, 1);
    assert_string_equal(sw_run_state_name(r.state), "finished");
    assert_int_equal(r.attempts, 3);
    assert_int_equal(r.lost, 1);
    sw_run_rec_dispose(&r);
}

/* A full disk is no trial's failure: the first launch it breaks stops
 * the sweep (one line, no run failed, nothing more launched), and a
 * resume once there is space finishes every run. */
static void test_a_full_disk_stops_launching(void **state)
{
    fixture *f = *state;
    sw_run_rec r;

    start_sweep(f, GRID3 "parallel: 1\n", 0);
    assert_int_equal(sw_engine__begin(f->e), SW_OK);
    assert_int_equal(drive_until(f, 1005), 1); /* 1-1 runs */
    f->plan.fail_launch = f->plan.disk_full = true;
    assert_int_equal(drive_until(f, 0), SW_ESTORAGE);
    assert_non_null(strstr(sw_error_last(), "No space left on device"));
    assert_non_null(strstr(sw_error_last(), "sweep resume"));
    assert_int_equal(f->fx->launches, 2);
    assert_int_equal(count_runs(f, "finished"), 1);
    assert_int_equal(count_runs(f, "failed"), 0);
    drop_engine(f);
    f->plan.fail_launch = f->plan.disk_full = false;
    resume(f);
    f->fx->adopt_started = false; /* the broken launch never ran */
    assert_int_equal(drive(f), SW_OK);
    assert_int_equal(count_runs(f, "finished"), 3);
    r = get_run(f, 2);
    assert_int_equal(r.attempts, 2);
    assert_int_equal(r.lost, 1);
    sw_run_rec_dispose(&r);
}

static int64_t sql_int(const char *db, const char *sql)
{
    sqlite3 *h;
    sqlite3_stmt *s;
    int64_t v = -1;

    assert_int_equal(sqlite3_open(db, &h), SQLITE_OK);
    if (sqlite3_prepare_v2(h, sql, -1, &s, NULL) != SQLITE_OK)
        fail_msg("%s", sqlite3_errmsg(h));
    if (sqlite3_step(s) == SQLITE_ROW)
        v = sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
    sqlite3_close(h);
    return v;
}

/* Defect: an error in the middle of recording metrics left the
 * transaction open; nothing rolled back outside the tests. A trigger
 * makes the store refuse the second metric of a batch. */
static void test_a_store_error_rolls_back(void **state)
{
    fixture *f = *state;
    char *db = sw_aprintf("%s/sweep.db", f->home);

    f->plan.output = "@metrics {\"loss\": 0.5, \"poison\": 1}\n";
    start_sweep(f, ONE, 0);
    assert_int_equal(sql_int(db,
                             "CREATE TRIGGER poison BEFORE INSERT ON metrics"
                             " WHEN NEW.name = 'poison'"
                             " BEGIN SELECT RAISE(ABORT, 'injected'); END"),
                     -1);
    assert_int_not_equal(drive(f), SW_OK);
    assert_int_equal(sql_int(db, "select count(*) from metrics"), 0);
    assert_int_equal(sql_int(db, "select stdout_offset from runs"), 0);
    /* no transaction was left open */
    assert_int_equal(sw_store_begin(f->e->st), SW_OK);
    assert_int_equal(sw_store_rollback(f->e->st), SW_OK);
    free(db);
}

/* ---- GPUs (devices.c) ------------------------------------------------ */

/* The most jobs that ran at once with `dev` among their devices (NULL:
 * any), from the fake executor's start and end times. */
static int jobs_at_once(const fake_executor *fx, const char *dev)
{
    const fake_job *a, *b;
    int best = 0, now;
    size_t i, k;

    for (i = 0; i < fx->n_jobs; i++) {
        a = &fx->jobs[i];
        if (dev && (!a->devices || !strstr(a->devices, dev)))
            continue;
        now = 0;
        for (k = 0; k < fx->n_jobs; k++) {
            b = &fx->jobs[k];
            now += (!dev || (b->devices && strstr(b->devices, dev))) &&
                   b->started_at <= a->started_at &&
                   (b->ended_at == 0 || b->ended_at > a->started_at);
        }
        best = now > best ? now : best;
    }
    return best;
}

#define PACKED                                                                 \
    "program: train.py\nmethod: random\nrun_cap: 30\nparallel: 20\n"           \
    "parameters:\n  x: {min: 0.0, max: 1.0}\n"                                 \
    "gpus: 80GiB,80GiB:mig=3g.40gb+3g.40gb\n"

/* Quarter-GPU trials on a declared GPU and two MIG slices: at most four
 * on each at once whatever parallel says, each given its device (the
 * GPU's index: a declared inventory has no UUIDs), recorded with its
 * run. */
static void test_gpus_pack_and_never_oversubscribe(void **state)
{
    fixture *f = *state;
    size_t i;

    f->plan.runtime = 10;
    f->second = f->plan;
    start_sweep(f, PACKED "resources:\n  gpus: 0.25\n", 0);
    assert_int_equal(f->e->parallel, 20);
    assert_int_equal(drive(f), SW_OK);
    assert_int_equal(count_runs(f, "finished"), 30);
    for (i = 0; i < f->fx->n_jobs; i++)
        assert_true(strcmp(f->fx->jobs[i].devices, "0") == 0 ||
                    strcmp(f->fx->jobs[i].devices, "1") == 0);
    assert_int_equal(jobs_at_once(f->fx, "0"), 4);
    assert_int_equal(jobs_at_once(f->fx, NULL), 12); /* the GPUs cap */
    sw_run_rec r = get_run(f, 1);
    assert_string_equal(r.gpus, "{\"devices\": [\"0\"], \"share\": 0.25,"
                                " \"memory\": 0}");
    sw_run_rec_dispose(&r);
    /* each attempt's GPUs: a quarter of GPU 0, or of a 3-slice MIG
     * device (3/7 of GPU 1), for its 10 s on the fake clock */
    double gpu, secs;
    for (i = 1; i <= 30; i++) {
        r = get_run(f, (int)i);
        assert_string_equal(outcomes(f, (int)i, &gpu, &secs), "finished");
        assert_true(
            fabs(gpu - (strstr(r.gpus, "\"0\"") ? 0.25 : 0.25 * 3 / 7)) <
            1e-12);
        assert_true(fabs(secs - 10) < 1e-6);
        sw_run_rec_dispose(&r);
    }
}

/* Without parallel, as many trials as the devices hold; 2-GPU trials
 * never land on MIG slices. */
static void test_gpus_default_parallel(void **state)
{
    fixture *f = *state;

    f->plan.runtime = 10;
    start_sweep(
        f,
        "program: train.py\nmethod: grid\ngpus: 4x80GiB,1:mig=7x1g.10gb\n"
        "parameters:\n  x: {values: [1, 2, 3, 4, 5]}\n"
        "resources:\n  gpus: 2\n",
        0);
    assert_int_equal(f->e->parallel, 2);
    assert_int_equal(drive(f), SW_OK);
    assert_int_equal(count_runs(f, "finished"), 5);
    assert_int_equal(jobs_at_once(f->fx, NULL), 2);
    for (size_t i = 0; i < f->fx->n_jobs; i++)
        assert_null(strchr(f->fx->jobs[i].devices, '4'));
}

/* Without GPUs and resources nothing is set, as before packing; trials
 * on CPU only get an empty CUDA_VISIBLE_DEVICES. */
static void test_gpus_none(void **state)
{
    fixture *f = *state;

    start_sweep(f, GRID3, 0);
    assert_null(f->e->gpus);
    assert_int_equal(drive(f), SW_OK);
    assert_null(f->fx->jobs[0].devices);
    drop_engine(f);
    start_sweep(f, GRID3 "gpus: none\n", 0);
    assert_int_equal(drive(f), SW_OK);
    assert_string_equal(f->fx->jobs[0].devices, "");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
#define T(t) cmocka_unit_test_setup_teardown(t, setup, teardown)
        T(test_grid_runs_to_its_end),
        T(test_envvar_is_expanded_only_at_launch),
        T(test_launch_failures_count_and_back_off),
        T(test_interrupt_stops_failing_launches),
        T(test_timeout_with_exit_0_is_a_failure),
        T(test_sigkill_after_the_grace_period),
        T(test_wall_clock_steps_change_no_timeout),
        T(test_metric_target_cancels_the_rest),
        T(test_the_rule_stops_a_printing_trial_at_once),
        T(test_two_interrupts_cancel_running_trials),
        T(test_one_interrupt_waits_for_running_trials),
        T(test_lost_attempt_is_rerun_without_a_retry),
        T(test_lost_attempt_leaves_the_retries),
        T(test_pauses_leave_the_retries),
        T(test_always_lost_fails_in_the_end),
        T(test_retry_after_a_failure),
        T(test_first_failures_stop_the_sweep),
        T(test_first_failures_cost_five_at_any_parallel),
        T(test_working_trials_fill_every_slot),
        T(test_a_long_line_is_skipped_whole),
        T(test_the_last_line_counts_without_a_newline),
        T(test_a_metric_ends_the_probation),
        T(test_resume_adopts_running_trials),
        T(test_resume_keeps_timeouts),
        T(test_resume_reruns_lost_runs_of_a_finished_sweep),
        T(test_resume_relaunches_an_unanswered_launch),
        T(test_a_store_error_rolls_back),
        T(test_an_attempt_that_never_ran_uses_no_retry),
        T(test_a_full_disk_stops_launching),
        T(test_gpus_pack_and_never_oversubscribe),
        T(test_gpus_default_parallel),
        T(test_gpus_none),
    };

    setenv("SWEEP_GIT", "off", 1);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
