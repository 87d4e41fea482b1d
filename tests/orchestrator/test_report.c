/*
 * test_report.c - `sweep report`'s figures (report.c) on hand-made rows,
 * every key checked against a value computed by hand in the comments;
 * and sw_report_load on a store made here: attempts from the table, a
 * run's last attempt from its own row, MIG slices as their fraction of
 * their GPU.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "orchestrator/report.h"
#include "sweeps/json.h"
#include "testutil.h"

/* a == b in doubles, within a relative 1e-9 (cmocka's own compares
 * floats) */
#define assert_near(a, b)                                                      \
    do {                                                                       \
        double a_ = (a), b_ = (b);                                             \
        if (!(fabs(a_ - b_) <= 1e-12 * fmax(1, fabs(b_))))                     \
            fail_msg("%.17g != %.17g", a_, b_);                                \
    } while (0)

static sw_report_attempt att(size_t run, double start, double end,
                             sw_report_outcome o, double gpu)
{
    sw_report_attempt a = {run, start, end, o, gpu, NULL, false, 0, false, 0};

    return a;
}

static sw_report_point pt(size_t run, int64_t step, double value, double t)
{
    sw_report_point p = {run, step, value, t};

    return p;
}

/* The scenario of the comments below, in rows that the test owns:
 *   r0 finished: one attempt 1000..1100 on a whole GPU, loss 1/step at
 *      steps 1..10, at 1010, 1020, ..., 1100;
 *   r1 failed at 1040 after steps 1..3 (1010, 1020, 1030) on half a GPU,
 *      retried 1050..1110 from its checkpoint: steps 4..10 (1050 + 8k);
 *   r2 stopped: 1040..1060 on half a GPU, steps 1, 2 at 1050, 1060.
 * Declared: 2 GPUs; price 3 USD per GPU-hour; mean utilisation 55. */
typedef struct {
    sw_report_run runs[3];
    sw_report_attempt attempts[4];
    sw_report_point points[32];
    sw_report_data d;
} scenario;

static void make(scenario *s)
{
    size_t n = 0;
    int64_t i;

    memset(s, 0, sizeof(*s));
    /* each run's value is the last it reported (below) */
    s->runs[0] =
        (sw_report_run){"r0", SW_RUN_FINISHED, false, false, true, 0.1};
    s->runs[1] =
        (sw_report_run){"r1", SW_RUN_FINISHED, false, false, true, 1.0};
    s->runs[2] = (sw_report_run){"r2", SW_RUN_STOPPED, false, false, true, 5.5};
    s->attempts[0] = att(0, 1000, 1100, SW_ATT_FINISHED, 1);
    s->attempts[1] = att(1, 1000, 1040, SW_ATT_FAILED, 0.5);
    s->attempts[2] = att(1, 1050, 1110, SW_ATT_FINISHED, 0.5);
    s->attempts[3] = att(2, 1040, 1060, SW_ATT_STOPPED, 0.5);
    for (i = 1; i <= 10; i++)
        s->points[n++] = pt(0, i, 1.0 / (double)i, 1000 + 10.0 * (double)i);
    for (i = 1; i <= 3; i++)
        s->points[n++] = pt(1, i, 2 - 0.1 * (double)i, 1000 + 10.0 * (double)i);
    for (i = 4; i <= 10; i++)
        s->points[n++] =
            pt(1, i, 2 - 0.1 * (double)i, 1050 + 8.0 * (double)(i - 3));
    s->points[n++] = pt(2, 1, 5, 1050);
    s->points[n++] = pt(2, 2, 5.5, 1060);
    s->d.sweep_id = "s1";
    s->d.metric = "loss";
    s->d.runs = s->runs;
    s->d.n_runs = 3;
    s->d.attempts = s->attempts;
    s->d.n_attempts = 4;
    s->d.points = s->points;
    s->d.n_points = n;
    s->d.gpus = 2;
    s->d.util = 55;
    s->d.price = 3;
}

static void test_every_figure_by_hand(void **state)
{
    scenario s;
    sw_report r;

    (void)state;
    make(&s);
    sw_report_compute(&r, &s.d);
    assert_int_equal(r.runs, 3);
    assert_int_equal(r.finished, 2);
    assert_int_equal(r.stopped, 1);
    assert_int_equal(r.failed, 0);
    assert_int_equal(r.attempts, 4);
    assert_int_equal(r.failed_attempts, 1);
    /* 1000 .. 1110 */
    assert_near(r.wall_seconds, 110);
    assert_near(r.gpus, 2);
    assert_near(r.gpu_seconds_capacity, 220);
    /* 100 x 1 + 40 x 0.5 + 60 x 0.5 + 20 x 0.5 */
    assert_near(r.gpu_seconds_busy, 160);
    assert_near(r.gpu_seconds_idle, 60);
    assert_near(r.occupancy, 160.0 / 220.0);
    /* finished runs are 10 iterations long; r2 did 2, at 20 s / 2 = 10 s
     * an iteration: 8 more x 10 s = 80 trial-seconds, x 0.5 GPU */
    assert_near(r.trial_seconds_saved_by_stopping, 80);
    assert_near(r.gpu_seconds_saved_by_stopping, 40);
    /* the retry began at step 4: steps 1..3 (to 1030) were kept, 1030 ..
     * 1040 lost: 10 trial-seconds, x 0.5 GPU */
    assert_near(r.trial_seconds_lost_to_failures, 10);
    assert_near(r.gpu_seconds_lost_to_failures, 5);
    assert_near(r.trial_seconds, 220);
    /* 0.1, r0's step 10 at 1100 */
    assert_near(r.best_value, 0.1);
    assert_near(r.time_to_best_seconds, 100);
    assert_near(r.mean_gpu_utilization, 55);
    /* 220 GPU-seconds = 0.0611 GPU-hours x 3 USD; 2 finished runs */
    assert_near(r.cost, 220.0 / 3600 * 3);
    assert_near(r.cost_per_finished_run, 220.0 / 3600 * 3 / 2);
}

/* A run a PBT exploit replaced saved nothing (its place trained on, in
 * the run that took it) and is counted as replaced; another stopped run
 * still saves its remaining iterations. */
static void test_replaced_saves_nothing(void **state)
{
    sw_buf b = SW_BUF_INIT;
    scenario s;
    sw_report r;

    (void)state;
    make(&s);
    s.runs[2].replaced = true;
    sw_report_compute(&r, &s.d);
    assert_int_equal(r.stopped, 1);
    assert_int_equal(r.replaced, 1);
    assert_near(r.trial_seconds_saved_by_stopping, 0);
    assert_near(r.gpu_seconds_saved_by_stopping, 0);
    assert_near(r.gpu_seconds_busy, 160); /* spent all the same */
    sw_report_write_text(&b, &s.d, &r);
    assert_non_null(
        strstr(sw_buf_cstr(&b), "runs replaced by exploits      1"));
    b.len = 0;
    sw_report_write_json(&b, &s.d, &r);
    assert_non_null(strstr(sw_buf_cstr(&b), "\"replaced\": 1,"));
    sw_buf_dispose(&b);
}

/* Without an inventory, the GPUs are the most held at once: at 1050,
 * r0 (1) + r1's retry (0.5) + r2 (0.5) = 2 (at 1040 only 1.5: r1's first
 * attempt ended as r2 started); with the retry starting at 1061, after
 * r2 ended, never more than 1.5. */
static void test_gpus_from_the_peak(void **state)
{
    scenario s;
    sw_report r;

    (void)state;
    make(&s);
    s.d.gpus = -1;
    s.attempts[2].start = 1061;
    sw_report_compute(&r, &s.d);
    assert_near(r.gpus, 1.5);
    make(&s);
    s.d.gpus = -1;
    sw_report_compute(&r, &s.d);
    assert_near(r.gpus, 2);
    /* an inventory smaller than what was held (resumed with more
     * devices): what was held */
    make(&s);
    s.d.gpus = 1;
    sw_report_compute(&r, &s.d);
    assert_near(r.gpus, 2);
    assert_true(r.occupancy <= 1);
}

/* A retry that redid everything (its first step is 1) kept nothing: the
 * failed attempt's 40 s are lost; a failed attempt without a retry too. */
static void test_lost_when_nothing_was_kept(void **state)
{
    scenario s;
    sw_report r;
    size_t i;

    (void)state;
    make(&s);
    for (i = 0; i < s.d.n_points; i++)
        if (s.points[i].run == 1 && s.points[i].time >= 1050)
            s.points[i].step -= 3; /* steps 1..7 again */
    sw_report_compute(&r, &s.d);
    assert_near(r.trial_seconds_lost_to_failures, 40);
    assert_near(r.gpu_seconds_lost_to_failures, 20);
    make(&s);
    s.runs[1].state = SW_RUN_FAILED;
    s.attempts[1].outcome = SW_ATT_TIMEOUT;
    s.d.n_attempts = 3; /* keep r1's first attempt only: r2 moves up */
    s.attempts[2] = s.attempts[3];
    sw_report_compute(&r, &s.d);
    assert_near(r.trial_seconds_lost_to_failures, 40);
    assert_int_equal(r.failed, 1);
    /* the sweep now ends at 1100: 2 GPUs x 100 s, one finished run */
    assert_near(r.cost_per_finished_run, 200.0 / 3600 * 3);
}

/* r1's retry starts again from scratch, as the store keeps it: it
 * reports steps 1..10 at 1060, 1070, ..., but steps 1..3 are kept once
 * (the first attempt's values), so the store shows its steps 4..10 only,
 * from 1090 on. At the first attempt's pace (10 s a report) the 40 s
 * before step 4 were three reports done again: nothing was kept, the
 * whole first attempt (40 s on half a GPU) was lost. */
static void test_lost_when_the_retry_started_again(void **state)
{
    scenario s;
    sw_report r;
    size_t i;

    (void)state;
    make(&s);
    s.attempts[2].end = 1150;
    for (i = 0; i < s.d.n_points; i++)
        if (s.points[i].run == 1 && s.points[i].step >= 4)
            s.points[i].time = 1050 + 10.0 * (double)s.points[i].step;
    sw_report_compute(&r, &s.d);
    assert_near(r.trial_seconds_lost_to_failures, 40);
    assert_near(r.gpu_seconds_lost_to_failures, 20);
    /* resumed from step 2's checkpoint instead: step 3 done again */
    for (i = 0; i < s.d.n_points; i++)
        if (s.points[i].run == 1 && s.points[i].step >= 4)
            s.points[i].time = 1050 + 10.0 * (double)(s.points[i].step - 2);
    sw_report_compute(&r, &s.d);
    assert_near(r.trial_seconds_lost_to_failures, 20); /* kept to 1020 */
}

/* The first step an attempt reported is recorded (attempts.first_step),
 * stored or not: r1's retry, on a device five times as fast, resumed
 * from step 1's checkpoint and did steps 2 and 3 again (the store kept
 * the first attempt's values of those) before its first new step, 4, at
 * 1052. Recorded, the first attempt kept work to step 1 (1010) and lost
 * 1010 .. 1040; without the record the estimate, at the first attempt's
 * pace, takes the 2 s before step 4 for no step done again and counts
 * 1030 .. 1040 only. */
static void test_lost_from_the_recorded_first_step(void **state)
{
    scenario s;
    sw_report r;
    size_t i;

    (void)state;
    make(&s);
    for (i = 0; i < s.d.n_points; i++)
        if (s.points[i].run == 1 && s.points[i].step >= 4)
            s.points[i].time = 1050 + 2.0 * (double)(s.points[i].step - 3);
    sw_report_compute(&r, &s.d);
    assert_near(r.trial_seconds_lost_to_failures, 10); /* the estimate */
    s.attempts[2].has_first_step = true;
    s.attempts[2].first_step = 2;
    sw_report_compute(&r, &s.d);
    assert_near(r.trial_seconds_lost_to_failures, 30);
    assert_near(r.gpu_seconds_lost_to_failures, 15);
    s.attempts[2].first_step = 4; /* resumed after step 3: 1030 .. 1040 */
    sw_report_compute(&r, &s.d);
    assert_near(r.trial_seconds_lost_to_failures, 10);
    s.attempts[2].first_step = 1; /* from scratch: all 40 s */
    sw_report_compute(&r, &s.d);
    assert_near(r.trial_seconds_lost_to_failures, 40);
    s.attempts[2].first_step = 0; /* steps counted from 0: the same */
    sw_report_compute(&r, &s.d);
    assert_near(r.trial_seconds_lost_to_failures, 40);
}

/* CPU trials only: no GPU figure is made up; trial-seconds carry the
 * same facts. Without a metric there is no best value, and without a
 * price no cost. */
static void test_cpu_only_and_no_metric(void **state)
{
    scenario s;
    sw_report r;
    size_t i;

    (void)state;
    make(&s);
    for (i = 0; i < 4; i++)
        s.attempts[i].gpu = 0;
    s.d.gpus = -1;
    s.d.util = NAN;
    s.d.price = -1;
    sw_report_compute(&r, &s.d);
    assert_near(r.gpus, 0);
    assert_near(r.gpu_seconds_capacity, 0);
    assert_near(r.gpu_seconds_busy, 0);
    assert_true(isnan(r.occupancy));
    assert_near(r.trial_seconds, 220);
    assert_near(r.trial_seconds_saved_by_stopping, 80);
    assert_near(r.gpu_seconds_saved_by_stopping, 0);
    assert_true(isnan(r.mean_gpu_utilization));
    assert_true(isnan(r.cost) && isnan(r.cost_per_finished_run));
    s.d.metric = NULL;
    s.d.n_points = 0;
    sw_report_compute(&r, &s.d);
    assert_true(isnan(r.best_value) && isnan(r.time_to_best_seconds));
    assert_near(r.trial_seconds_saved_by_stopping, 0);
}

/* Values reported without a step count one iteration each; maximize
 * takes the greatest run's value, finished runs first as `sweep best`
 * ranks them: r1's 1.0 (its last report, at 1106), not r2's 5.5, as r2
 * was stopped. */
static void test_stepless_values_and_maximize(void **state)
{
    scenario s;
    sw_report r;
    size_t i;

    (void)state;
    make(&s);
    for (i = 0; i < s.d.n_points; i++)
        if (s.points[i].run == 2)
            s.points[i].step = -1;
    s.d.maximize = true;
    sw_report_compute(&r, &s.d);
    assert_near(r.trial_seconds_saved_by_stopping, 80);
    assert_near(r.best_value, 1.0);
    assert_near(r.time_to_best_seconds, 106);
}

/* The JSON has every key of docs/report.md, null for what is not
 * defined; the SVG is one document (its well-formedness is checked
 * through the real binary, tests/cli/test_report.c). */
static void test_json_keys(void **state)
{
    static const char *const keys[] = {"wall_seconds",
                                       "gpus",
                                       "gpu_seconds_capacity",
                                       "gpu_seconds_busy",
                                       "gpu_seconds_idle",
                                       "occupancy",
                                       "gpu_seconds_saved_by_stopping",
                                       "gpu_seconds_lost_to_failures",
                                       "time_to_best_seconds",
                                       "best_value",
                                       "mean_gpu_utilization",
                                       "cost",
                                       "cost_per_finished_run",
                                       "trial_seconds",
                                       "trial_seconds_saved_by_stopping",
                                       "trial_seconds_lost_to_failures"};
    sw_buf b = SW_BUF_INIT;
    sw_value *v = NULL;
    scenario s;
    sw_report r;
    double x;
    size_t i;

    (void)state;
    make(&s);
    s.d.util = NAN;
    sw_report_compute(&r, &s.d);
    sw_report_write_json(&b, &s.d, &r);
    assert_int_equal(sw_json_parse(&v, b.ptr, b.len), SW_OK);
    for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
        assert_non_null(sw_value_map_get(v, keys[i]));
    assert_int_equal(sw_value_map_get(v, "mean_gpu_utilization")->type,
                     SW_NULL);
    assert_true(sw_value_number(sw_value_map_get(v, "occupancy"), &x));
    assert_near(x, 160.0 / 220.0);
    sw_value_free(v);
    b.len = 0;
    sw_report_write_svg(&b, &s.d, &r);
    assert_non_null(strstr(sw_buf_cstr(&b), "<svg "));
    assert_non_null(strstr(sw_buf_cstr(&b), "</svg>"));
    sw_buf_dispose(&b);
}

/* Bars are stacked in the order their attempts started, not by run:
 * run 0 failed (0..10) and was retried (20..30); run 1 ran 5..15 and
 * run 2 12..25, each on half of GPU "0". Never more than two ran at
 * once, so every bar lies within the lane (y from 40 on); placed run by
 * run, run 2 would meet the retry (at 0) and run 1 (at 0.5) and go on
 * top of them, above the lane. */
static void test_plot_stacks_in_start_order(void **state)
{
    static char dev[] = "{\"devices\": [\"0\"], \"share\": 0.5}";
    sw_report_run runs[3] = {{"r0", SW_RUN_FINISHED, false, false, false, 0},
                             {"r1", SW_RUN_FINISHED, false, false, false, 0},
                             {"r2", SW_RUN_FINISHED, false, false, false, 0}};
    sw_report_attempt at[4] = {att(0, 0, 10, SW_ATT_FAILED, 0.5),
                               att(0, 20, 30, SW_ATT_FINISHED, 0.5),
                               att(1, 5, 15, SW_ATT_FINISHED, 0.5),
                               att(2, 12, 25, SW_ATT_FINISHED, 0.5)};
    sw_report_data d = {0};
    sw_buf b = SW_BUF_INIT;
    sw_report r;
    const char *p;
    size_t i, bars = 0;

    (void)state;
    for (i = 0; i < 4; i++)
        at[i].devices = dev;
    d.sweep_id = "s1";
    d.runs = runs;
    d.n_runs = 3;
    d.attempts = at;
    d.n_attempts = 4;
    d.gpus = 1;
    sw_report_compute(&r, &d);
    sw_report_write_svg(&b, &d, &r);
    for (p = sw_buf_cstr(&b); (p = strstr(p, "fill-opacity=\"0.85\"")); p++) {
        const char *y = p;

        while (y > b.ptr && strncmp(y, " y=\"", 4) != 0)
            y--;
        assert_true(strtod(y + 4, NULL) >= 40);
        bars++;
    }
    assert_int_equal(bars, 4);
    sw_buf_dispose(&b);
}

static sw_run_rec a_run(char *id, int64_t idx, sw_run_state state, double start,
                        double end, char *gpus)
{
    sw_run_rec r = {.id = id,
                    .sweep_id = "s1",
                    .idx = idx,
                    .cell = "c",
                    .params = "{}",
                    .argv = "[\"t\"]",
                    .state = state,
                    .attempts = idx + 1,
                    .started_at = start,
                    .ended_at = end,
                    .gpus = gpus};
    return r;
}

/* A store from before the attempts table (run s1-1 has no row in it), a
 * run whose second attempt is still running (up to `now`), and an
 * inventory of a GPU and a GPU in MIG mode split 3 + 4 slices: 1 + 3/7
 * + 4/7 = 2 GPUs; s1-1 held the 3-slice MIG device, 3/7 of a GPU. */
static void test_load_from_a_store(void **state)
{
    char dir[] = "/tmp/sw_report_XXXXXX", *path;
    sw_sweep_rec s = {.id = "s1",
                      .file = "sweep.yaml",
                      .config = "method: grid\n",
                      .method = "grid",
                      .metric = "loss",
                      .goal = "minimize",
                      .state = "running",
                      .cwd = "/",
                      .parallel = 2,
                      .gpus = "1,1:mig=3g.40gb+4g.40gb"};
    sw_run_rec r1 = a_run("s1-1", 0, SW_RUN_FINISHED, 100, 200,
                          "{\"devices\": [\"1/0\"], \"share\": 1}");
    sw_run_rec r2 = a_run("s1-2", 1, SW_RUN_RUNNING, 160, 0,
                          "{\"devices\": [\"0\"], \"share\": 0.5}");
    sw_attempt_rec a = {.run_id = "s1-2",
                        .attempt = 1,
                        .started_at = 100,
                        .ended_at = 150,
                        .outcome = "failed",
                        .gpus = r2.gpus,
                        .gpu = 0.5};
    sw_report_data d;
    sw_store *st;
    sw_report r;

    (void)state;
    assert_non_null(mkdtemp(dir));
    path = sw_aprintf("%s/sweep.db", dir);
    assert_int_equal(sw_store_open(&st, path, true), SW_OK);
    assert_int_equal(sw_store_put_sweep(st, &s), SW_OK);
    assert_int_equal(sw_store_put_run(st, &r1), SW_OK);
    assert_int_equal(sw_store_put_run(st, &r2), SW_OK);
    assert_int_equal(sw_store_put_attempt(st, &a), SW_OK);
    assert_int_equal(sw_store_put_attempt(st, &a), SW_OK); /* replaced */
    assert_int_equal(sw_report_load(st, NULL, -1, 300, &d), SW_OK);
    assert_int_equal(d.n_attempts, 3);
    assert_int_equal(d.attempts[2].outcome, SW_ATT_RUNNING);
    sw_report_compute(&r, &d);
    assert_near(r.gpus, 2);
    assert_near(r.wall_seconds, 200);
    /* 100 s x 3/7 + 50 s x 0.5 + (300 - 160) s x 0.5 */
    assert_near(r.gpu_seconds_busy, 100.0 * 3 / 7 + 25 + 70);
    assert_near(r.trial_seconds, 290);
    /* the running retry reported nothing: the failed 50 s are lost */
    assert_near(r.gpu_seconds_lost_to_failures, 25);
    sw_report_data_dispose(&d);
    assert_int_equal(sw_report_load(st, "nope", -1, 300, &d), SW_ENOTFOUND);
    sw_store_close(st);
    sw_test_rm_tree(dir);
    free(path);
}

/* Issue 38: an attempt the disk failed (outcome `disk`) spent its time
 * for nothing, as a failed one did: it counts among failed_attempts and
 * in the time lost to failures, whether given as rows or loaded from a
 * store (where the word `disk` was read as an outcome the report did not
 * know, neither failed nor lost). */
static void test_disk_attempt_counts(void **state)
{
    char dir[] = "/tmp/sw_report_XXXXXX", *path;
    sw_sweep_rec sw = {.id = "s1",
                       .file = "sweep.yaml",
                       .config = "method: grid\n",
                       .method = "grid",
                       .metric = "loss",
                       .goal = "minimize",
                       .state = "finished",
                       .cwd = "/",
                       .parallel = 1};
    sw_run_rec run = a_run("s1-1", 1, SW_RUN_FINISHED, 200, 300, NULL);
    sw_attempt_rec a = {.run_id = "s1-1",
                        .attempt = 1,
                        .started_at = 100,
                        .ended_at = 150,
                        .outcome = "disk"};
    sw_report_data d;
    sw_report failed, disk;
    sw_store *st;
    scenario s;

    (void)state;
    assert_int_equal((int)SW_ATT_DISK, (int)SW_OUTCOME_DISK);
    assert_string_equal(sw_report_outcome_name(SW_ATT_DISK), "disk");
    make(&s);
    sw_report_compute(&failed, &s.d);
    s.attempts[1].outcome = SW_ATT_DISK; /* r1's first attempt */
    sw_report_compute(&disk, &s.d);
    assert_int_equal(disk.failed_attempts, 1);
    assert_int_equal(disk.failed_attempts, failed.failed_attempts);
    assert_true(failed.gpu_seconds_lost_to_failures > 0);
    assert_near(disk.gpu_seconds_lost_to_failures,
                failed.gpu_seconds_lost_to_failures);
    assert_near(disk.trial_seconds_lost_to_failures,
                failed.trial_seconds_lost_to_failures);

    assert_non_null(mkdtemp(dir));
    path = sw_aprintf("%s/sweep.db", dir);
    assert_int_equal(sw_store_open(&st, path, true), SW_OK);
    assert_int_equal(sw_store_put_sweep(st, &sw), SW_OK);
    assert_int_equal(sw_store_put_run(st, &run), SW_OK);
    assert_int_equal(sw_store_put_attempt(st, &a), SW_OK);
    a.attempt = 2;
    a.started_at = 200;
    a.ended_at = 300;
    a.outcome = "finished";
    assert_int_equal(sw_store_put_attempt(st, &a), SW_OK);
    assert_int_equal(sw_report_load(st, NULL, -1, 400, &d), SW_OK);
    assert_int_equal(d.n_attempts, 2);
    assert_int_equal(d.attempts[0].outcome, SW_ATT_DISK);
    sw_report_compute(&disk, &d);
    assert_int_equal(disk.attempts, 2);
    assert_int_equal(disk.failed_attempts, 1);
    assert_near(disk.trial_seconds_lost_to_failures, 50);
    sw_report_data_dispose(&d);
    sw_store_close(st);
    sw_test_rm_tree(dir);
    free(path);
}

/* A GPU in MIG mode split 3g + 1g + 1g (5 of its 7 slices) is held
 * whole: 2 GPUs of capacity, not 1 + 5/7, and the 2/7 no slice covers
 * are idle the whole time, a figure of their own (and in the cost). */
static void test_mig_partly_split(void **state)
{
    char dir[] = "/tmp/sw_report_XXXXXX", *path;
    sw_sweep_rec s = {.id = "s1",
                      .file = "sweep.yaml",
                      .config = "method: grid\n",
                      .method = "grid",
                      .metric = "loss",
                      .goal = "minimize",
                      .state = "finished",
                      .cwd = "/",
                      .parallel = 2,
                      .gpus = "1,1:mig=3g.40gb+1g.10gb+1g.10gb"};
    sw_run_rec r1 = a_run("s1-1", 0, SW_RUN_FINISHED, 100, 170,
                          "{\"devices\": [\"0\"], \"share\": 1}");
    sw_run_rec r2 = a_run("s1-2", 1, SW_RUN_FINISHED, 100, 170,
                          "{\"devices\": [\"1/0\"], \"share\": 1}");
    sw_report_data d;
    sw_store *st;
    sw_report r;
    sw_buf b = SW_BUF_INIT;

    (void)state;
    assert_non_null(mkdtemp(dir));
    path = sw_aprintf("%s/sweep.db", dir);
    assert_int_equal(sw_store_open(&st, path, true), SW_OK);
    assert_int_equal(sw_store_put_sweep(st, &s), SW_OK);
    assert_int_equal(sw_store_put_run(st, &r1), SW_OK);
    assert_int_equal(sw_store_put_run(st, &r2), SW_OK);
    assert_int_equal(sw_report_load(st, NULL, 2.0, 300, &d), SW_OK);
    sw_report_compute(&r, &d);
    assert_near(r.gpus, 2);
    assert_near(r.wall_seconds, 70);
    assert_near(r.gpu_seconds_capacity, 140);
    /* 70 s x 1 + 70 s x 3/7 */
    assert_near(r.gpu_seconds_busy, 70 + 30);
    assert_near(r.gpu_seconds_idle, 40);
    /* 2/7 of a GPU for 70 s, never sliced; the unused 1g slices' 20 s
     * are idle too, but in slices that exist */
    assert_near(r.gpu_seconds_mig_unused, 20);
    assert_near(r.cost, 140.0 / 3600 * 2.0);
    sw_report_write_text(&b, &d, &r);
    assert_non_null(strstr(sw_buf_cstr(&b), "of it, MIG slices unused"));
    sw_buf_dispose(&b);
    sw_report_data_dispose(&d);
    sw_store_close(st);
    sw_test_rm_tree(dir);
    free(path);
}

/* A stopped run's pace is the time between its reports, not its
 * attempt's length over its reports: 15 s of start-up before its first
 * report is not training time it would have spent again. */
static void test_pace_without_startup(void **state)
{
    scenario s;
    sw_report r;
    size_t i;

    (void)state;
    make(&s);
    /* r2 ran 1040 .. 1060 and reported steps 1 and 2 at 1055 and 1058 */
    for (i = 0; i < s.d.n_points; i++)
        if (s.points[i].run == 2)
            s.points[i].time = s.points[i].step == 1 ? 1055 : 1058;
    sw_report_compute(&r, &s.d);
    /* 8 more iterations x 3 s (not x 10 s: 20 s over 2) */
    assert_near(r.trial_seconds_saved_by_stopping, 24);
    assert_near(r.gpu_seconds_saved_by_stopping, 12);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_figure_by_hand),
        cmocka_unit_test(test_replaced_saves_nothing),
        cmocka_unit_test(test_gpus_from_the_peak),
        cmocka_unit_test(test_lost_when_nothing_was_kept),
        cmocka_unit_test(test_lost_when_the_retry_started_again),
        cmocka_unit_test(test_lost_from_the_recorded_first_step),
        cmocka_unit_test(test_cpu_only_and_no_metric),
        cmocka_unit_test(test_stepless_values_and_maximize),
        cmocka_unit_test(test_json_keys),
        cmocka_unit_test(test_plot_stacks_in_start_order),
        cmocka_unit_test(test_load_from_a_store),
        cmocka_unit_test(test_disk_attempt_counts),
        cmocka_unit_test(test_mig_partly_split),
        cmocka_unit_test(test_pace_without_startup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
