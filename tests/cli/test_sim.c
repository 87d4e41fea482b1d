/*
 * test_sim.c - `sweep run --backend sim` end to end: the real binary, a
 * real store, and trials that print their whole curve at once (a shell
 * script running one awk). Checked through the store, in virtual time:
 * 16 one-hour trials on 4 declared GPUs (--gpus 4) make 4 hours of wall
 * time and 16 busy, in seconds of real time, and half-GPU trials pack two
 * a GPU; Hyperband cuts simulated runs at the
 * virtual time of the report that crossed its line; a target cancels runs
 * at its virtual time; Ctrl-C and `sweep resume` continue one timeline;
 * --sim-fail-rate fails the same attempts for the same seed, and retries
 * rerun them; a budget ends the starting of trials at its virtual time,
 * and counts what a sweep spent before `sweep resume`.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "harness.h"
#include "testutil.h"
#include "sweeps/buf.h"

/* A surrogate: `--lr=X --steps=N --secs=A --slope=B` prints N @metrics
 * lines of loss X + 1/i, each A + B X virtual seconds long (after
 * $SIM_NAP real seconds, when set); it refuses to run outside a
 * simulation. */
static const char trial_sh[] =
    "#!/bin/sh\n"
    "[ \"$SWEEP_SIMULATE\" = 1 ] || { echo 'not simulated' >&2; exit 3; }\n"
    "for a in \"$@\"; do case $a in\n"
    "  --lr=*) lr=${a#--lr=};; --steps=*) steps=${a#--steps=};;\n"
    "  --secs=*) secs=${a#--secs=};; --slope=*) slope=${a#--slope=};;\n"
    "esac; done\n"
    "echo \"training lr=$lr\"\n"
    "[ -z \"$SIM_NAP\" ] || sleep \"$SIM_NAP\"\n"
    "exec awk -v lr=\"$lr\" -v n=\"$steps\" -v a=\"$secs\" -v b=\"$slope\" "
    "-f \"${0%/*}/curve.awk\"\n";

static const char curve_awk[] =
    "BEGIN {\n"
    "    s = a + b * lr\n"
    "    for (i = 1; i <= n; i++)\n"
    "        printf \"@metrics {\\\"step\\\": %d, \\\"loss\\\": %.6f, "
    "\\\"_seconds\\\": %.6f}\\n\", i, lr + 1 / i, s\n"
    "}\n";

/* A grid over `n_lr` learning rates 0.1, 0.2, ... of the surrogate, `steps`
 * steps of secs + slope * lr seconds; `metric` goes into the metric's
 * mapping, `extra` at the top level. Without a `sim:` in `extra`, trials
 * start and are read at once (no start-up, no reading delay), so the
 * tests' times are round. */
static char *sim_sweep(const sw_h *h, const char *metric, const char *extra,
                       int n_lr, int steps, double secs, double slope)
{
    sw_buf b = SW_BUF_INIT;
    char *script = sw_h_file(h, "trial.sh", trial_sh), *path;
    int i;

    free(sw_h_file(h, "curve.awk", curve_awk));
    chmod(script, 0755);
    sw_buf_printf(&b,
                  "method: grid\nmetric: {name: loss, goal: minimize%s}\n"
                  "command: [%s, \"${args}\"]\n%s\n%sparameters:\n"
                  "  steps: {value: %d}\n  secs: {value: %g}\n"
                  "  slope: {value: %g}\n  lr: {values: [",
                  metric, script, extra,
                  strstr(extra, "sim:") ? ""
                                        : "sim: {startup: 0, read_delay: 0}\n",
                  steps, secs, slope);
    for (i = 0; i < n_lr; i++)
        sw_buf_printf(&b, "%s%.1f", i ? ", " : "", 0.1 * (i + 1));
    sw_buf_puts(&b, "]}\n");
    path = sw_h_file(h, "sweep.yaml", sw_buf_cstr(&b));
    sw_buf_dispose(&b);
    free(script);
    return path;
}

static double real_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The one line `sweep query SQL --csv` prints after its header. */
static char *query_row(const sw_h *h, const char *sql)
{
    const char *q[] = {"query", sql, "--csv", NULL};
    char *out = NULL, *nl;

    assert_int_equal(sw_h_run(h, q, &out), 0);
    nl = strchr(out, '\n');
    assert_non_null(nl);
    memmove(out, nl + 1, strlen(nl + 1) + 1);
    return out;
}

static void test_sixteen_hours_on_four_in_four_virtual_hours(void **state)
{
    sw_h h;
    char *file;
    double t0, real;

    (void)state;
    sw_h_init(&h);
    file = sim_sweep(&h, "", "", 16, 60, 60, 0);
    const char *run[] = {"run",    file, "--backend", "sim",
                         "--gpus", "4",  "--quiet",   NULL};
    t0 = real_now();
    assert_int_equal(sw_h_run(&h, run, NULL), 0);
    real = real_now() - t0;
    print_message("16 one-hour trials on 4: %.2f s of real time\n", real);
    assert_true(real < 10);
    assert_int_equal(sw_h_count(&h, "select count(*) from runs where state "
                                    "= 'finished' and exit_code = 0"),
                     16);
    /* wall: first start to last end; busy: the sum of attempts */
    assert_int_equal(sw_h_count(&h, "select abs(max(ended_at) - "
                                    "min(started_at) - 14400) <= 144 from "
                                    "runs"),
                     1);
    assert_int_equal(sw_h_count(&h, "select abs(sum(ended_at - started_at) "
                                    "- 57600) <= 576 from runs"),
                     1);
    /* never more than 4 at once: each start finds at most 3 others */
    assert_int_equal(sw_h_count(&h, "select max((select count(*) from runs "
                                    "o where o.started_at <= r.started_at "
                                    "and o.ended_at > r.started_at)) from "
                                    "runs r"),
                     4);
    /* each on one whole GPU of the 4 declared */
    assert_int_equal(sw_h_count(&h, "select count(distinct gpus) from runs "
                                    "where gpus like '%\"share\": 1,%'"),
                     4);
    /* every value, each at the virtual time its step ended */
    assert_int_equal(sw_h_count(&h, "select count(*) from metrics m join "
                                    "runs r on r.id = m.run_id where m.name "
                                    "= 'loss' and abs(m.time - r.started_at "
                                    "- 60 * m.step) < 1e-3"),
                     960);
    free(file);
    sw_h_dispose(&h);
}

/* `--gpus 64` beside the file's `parallel: 4` says both: what fits, and
 * what runs (it said "64 trials at once" and ran 4 at a time). */
static void test_parallel_below_the_devices_is_said(void **state)
{
    sw_h h;
    char *file, *out = NULL;

    (void)state;
    sw_h_init(&h);
    file = sim_sweep(&h, "", "parallel: 4", 8, 2, 60, 0);
    const char *run[] = {"run", file, "--backend", "sim", "--gpus", "64", NULL};
    assert_int_equal(sw_h_run(&h, run, &out), 0);
    assert_non_null(strstr(out, "64 GPU devices (declared), room for 64 "
                                "trials at once, 4 at a time by parallel"));
    assert_null(strstr(out, "64 trials at once\n"));
    assert_int_equal(sw_h_count(&h, "select max((select count(*) from runs "
                                    "o where o.started_at <= r.started_at "
                                    "and o.ended_at > r.started_at)) from "
                                    "runs r"),
                     4);
    free(out);
    free(file);
    sw_h_dispose(&h);
}

/* Half-GPU trials: 8 at once on 4 GPUs, so 16 one-hour trials take 2
 * virtual hours, and hold 8 GPU-hours between them. */
static void test_half_gpu_trials_pack_two_a_gpu(void **state)
{
    sw_h h;
    char *file;

    (void)state;
    sw_h_init(&h);
    file = sim_sweep(&h, "", "resources: {gpus: 0.5}", 16, 60, 60, 0);
    const char *run[] = {"run",    file, "--backend", "sim",
                         "--gpus", "4",  "--quiet",   NULL};
    assert_int_equal(sw_h_run(&h, run, NULL), 0);
    assert_int_equal(sw_h_count(&h, "select abs(max(ended_at) - "
                                    "min(started_at) - 7200) <= 72 from "
                                    "runs"),
                     1);
    assert_int_equal(sw_h_count(&h, "select abs(sum((ended_at - started_at) "
                                    "* json_extract(gpus, '$.share')) - "
                                    "28800) <= 288 from runs"),
                     1);
    assert_int_equal(sw_h_count(&h, "select max((select count(*) from runs "
                                    "o where o.started_at <= r.started_at "
                                    "and o.ended_at > r.started_at)) from "
                                    "runs r"),
                     8);
    free(file);
    sw_h_dispose(&h);
}

/* Hyperband on runs whose steps last 30 + 200 lr virtual seconds, so
 * they report at different instants: every stopped run ended at the
 * virtual time of its last report, which is at one of the bands. */
static void test_hyperband_cuts_at_the_virtual_step(void **state)
{
    sw_h h;
    char *file;

    (void)state;
    sw_h_init(&h);
    file = sim_sweep(&h, "",
                     "early_terminate: {type: hyperband, min_iter: 3, eta: "
                     "3}",
                     12, 30, 30, 200);
    const char *run[] = {"run", file, "--backend", "sim",
                         "-p",  "4",  "--quiet",   NULL};
    assert_int_equal(sw_h_run(&h, run, NULL), 0);
    assert_true(sw_h_count(&h, "select count(*) from runs where state = "
                               "'stopped'") > 0);
    assert_int_equal(sw_h_count(&h, "select count(*) from runs where state "
                                    "not in ('stopped', 'finished')"),
                     0);
    /* a stopped run has 3 or 9 values, and ended when the last came */
    assert_int_equal(sw_h_count(&h, "select count(*) from runs r where "
                                    "state = 'stopped' and ((select "
                                    "count(*) from metrics where run_id = "
                                    "r.id and name = 'loss') not in (3, 9) "
                                    "or abs(r.ended_at - r.started_at - "
                                    "(select max(step) from metrics where "
                                    "run_id = r.id and name = 'loss') * (30 "
                                    "+ 200 * json_extract(r.params, "
                                    "'$.lr'))) > 1e-3 or abs(r.ended_at - "
                                    "(select max(time) from metrics where "
                                    "run_id = r.id)) > 1e-3)"),
                     0);
    /* finished ones ran their whole 30 steps */
    assert_int_equal(sw_h_count(&h, "select count(*) from runs r where "
                                    "state = 'finished' and (select "
                                    "count(*) from metrics where run_id = "
                                    "r.id and name = 'loss') != 30"),
                     0);
    free(file);
    sw_h_dispose(&h);
}

/* A target reached at virtual minute 10 cancels the runs then: no value
 * after it reaches the store. */
static void test_target_cancels_at_its_virtual_time(void **state)
{
    sw_h h;
    char *file;

    (void)state;
    sw_h_init(&h);
    /* lr 0.1: loss 0.1 + 1/i reaches 0.2 at step 10, minute 10 */
    file = sim_sweep(&h, ", target: 0.2", "", 8, 60, 60, 0);
    const char *run[] = {"run", file, "--backend", "sim",
                         "-p",  "2",  "--quiet",   NULL};
    assert_int_equal(sw_h_run(&h, run, NULL), 0);
    assert_int_equal(sw_h_count(&h, "select count(*) from runs"), 2);
    assert_int_equal(sw_h_count(&h, "select count(*) from runs where state "
                                    "= 'canceled' and signal = 15 and "
                                    "abs(ended_at - started_at - 600) < "
                                    "1e-3"),
                     2);
    assert_int_equal(sw_h_count(&h, "select count(*) from metrics where "
                                    "name = 'loss'"),
                     20);
    free(file);
    sw_h_dispose(&h);
}

/* Ctrl-C stops a simulation as it stops a real sweep (no new trials, the
 * running ones to their end), and `sweep resume` goes on from the virtual
 * time the runs reached, not from the real time it was started at. */
/* Runs `run` with each surrogate taking `sim_nap` real seconds, and
 * interrupts it (SIGINT) after `nap_ms`: it ends with 130. */
static void run_interrupted(const sw_h *h, const char *const *run,
                            const char *sim_nap, long nap_ms)
{
    struct timespec nap = {nap_ms / 1000, (nap_ms % 1000) * 1000000L};
    pid_t pid;

    setenv("SIM_NAP", sim_nap, 1);
    pid = sw_h_start(h, run);
    assert_true(pid > 0); /* never kill(0) */
    nanosleep(&nap, NULL);
    kill(pid, SIGINT);
    assert_int_equal(sw_h_wait(pid, 60), 130);
    unsetenv("SIM_NAP");
}

static void test_interrupt_and_resume_continue_the_timeline(void **state)
{
    sw_h h;
    char *file;

    (void)state;
    sw_h_init(&h);
    file = sim_sweep(&h, "", "", 16, 60, 60, 0);
    const char *run[] = {"run", file, "--backend", "sim",
                         "-p",  "2",  "--quiet",   NULL};
    const char *resume[] = {"resume", "--quiet", NULL};
    run_interrupted(&h, run, "0.1", 300); /* each surrogate takes 0.1 s */
    assert_true(sw_h_count(&h, "select count(*) from runs where state = "
                               "'finished'") < 16);
    assert_int_equal(sw_h_run(&h, resume, NULL), 0);
    assert_int_equal(sw_h_count(&h, "select count(*) from runs where state "
                                    "= 'finished'"),
                     16);
    /* one timeline: never more than 2 at once, and every run but the
     * first two started when another ended (no gap, no overlap) */
    assert_int_equal(sw_h_count(&h, "select max((select count(*) from runs "
                                    "o where o.started_at <= r.started_at "
                                    "and o.ended_at > r.started_at)) from "
                                    "runs r"),
                     2);
    assert_int_equal(sw_h_count(&h, "select count(*) from runs r where "
                                    "started_at > (select min(started_at) "
                                    "from runs) + 1e-3 and not exists "
                                    "(select 1 from runs o where "
                                    "abs(o.ended_at - r.started_at) < "
                                    "1e-3)"),
                     0);
    free(file);
    sw_h_dispose(&h);
}

/* `budget:` ends the starting of trials once any one limit is spent,
 * counted on the virtual clock; running trials finish. 16 one-hour
 * trials on 4 GPUs start 4 an hour. */
static void budget_runs(const char *budget, const char *extra, int runs,
                        double gpu_hours, const char *report)
{
    sw_h h;
    sw_buf b = SW_BUF_INIT;
    char *file, *sql;

    sw_h_init(&h);
    sw_buf_printf(&b, "budget: %s\n%s", budget, extra);
    file = sim_sweep(&h, "", sw_buf_cstr(&b), 16, 60, 60, 0);
    const char *run[] = {"run",    file, "--backend", "sim",
                         "--gpus", "4",  "--quiet",   NULL};
    char *out = NULL;
    assert_int_equal(sw_h_run(&h, run, &out), 0);
    assert_non_null(strstr(out, "is spent: no new trials"));
    assert_int_equal(sw_h_count(&h, "select count(*) from runs"), runs);
    assert_int_equal(sw_h_count(&h, "select count(*) from runs where state "
                                    "= 'finished'"),
                     runs);
    sql = sw_aprintf("select abs(sum((ended_at - started_at) * gpu) - %g) "
                     "< 1 from attempts",
                     gpu_hours * 3600);
    assert_int_equal(sw_h_count(&h, sql), 1);
    free(sql);
    free(out);
    /* sweep report says what was spent of it */
    const char *rep[] = {"report", "--json", NULL};
    assert_int_equal(sw_h_run(&h, rep, &out), 0);
    if (!strstr(out, report))
        fail_msg("no '%s' in %s", report, out);
    free(out);
    free(file);
    sw_buf_dispose(&b);
    sw_h_dispose(&h);
}

static void test_budget_stops_new_trials(void **state)
{
    (void)state;
    /* 4 GPU-hours spent at 1 h, 8 at 2 h: the 6th is reached there */
    budget_runs("{gpu_hours: 6}", "", 8, 8,
                "\"gpu_hours\": 6,\n    \"trial_hours\": null,\n    "
                "\"hours\": null,\n    \"spent\": 1.33333333333333\n");
    /* 1 h of wall time at the first ends, 2 h at the second */
    budget_runs("{hours: 1.5}", "", 8, 8, "\"spent\": 1.33333333333333\n");
    /* trial-hours count whole trials; GPU-hours their share: 8
     * half-GPU trials an hour, 4 GPU-hours an hour */
    budget_runs("{trial_hours: 12}", "resources: {gpus: 0.5}\n", 16, 8,
                "\"spent\": 1.33333333333333\n");
    budget_runs("{gpu_hours: 3.9}", "resources: {gpus: 0.5}\n", 8, 4,
                "\"spent\": 1.02564102564103\n");
}

/* Under promotion ASHA a budget also ends promotions: once it is spent
 * no attempt starts, new or promoted, and before that a promotion starts
 * only if the budget, spent as it is then (every running attempt going
 * on), lasts until the run reaches its rung (its pace is exact here: no
 * start-up, steps of 60 s). The runs left paused end stopped, saying why.
 * 16 runs of loss lr + 1/i, rungs 1, 3, 9 of 60 s steps, on 4 GPUs. */
static void test_budget_ends_promotions(void **state)
{
    sw_h h;
    char *file, *out = NULL;
    const char *spend_at = /* GPU-seconds spent at a's start */
        "(select sum(max(0, min(b.ended_at, a.started_at) - b.started_at) *"
        " b.gpu) from attempts b)";

    (void)state;
    sw_h_init(&h);
    file = sim_sweep(&h, "",
                     "budget: {gpu_hours: 0.4}\n"
                     "early_terminate: {type: asha, promote: true, "
                     "min_iter: 1, eta: 3, max_iter: 9}",
                     16, 9, 60, 0);
    const char *run[] = {"run",    file, "--backend", "sim",
                         "--gpus", "4",  "--quiet",   NULL};
    assert_int_equal(sw_h_run(&h, run, &out), 0);
    assert_non_null(strstr(out, "is spent: no new trials"));
    free(out);
    /* no attempt started once 1,440 GPU-seconds were spent */
    char *sql = sw_aprintf("select count(*) from attempts a where %s >= "
                           "1440 - 1e-6",
                           spend_at);
    assert_int_equal(sw_h_count(&h, sql), 0);
    free(sql);
    /* each promotion's attempt, its length at the rate of the attempts
     * running as it started, ended within the budget */
    sql = sw_aprintf(
        "select count(*) from attempts a where a.attempt > 1 and %s + "
        "(a.ended_at - a.started_at) * (select coalesce(sum(b.gpu), 0) from "
        "attempts b where b.started_at < a.started_at and b.ended_at > "
        "a.started_at) >= 1440 + 1e-6",
        spend_at);
    assert_int_equal(sw_h_count(&h, sql), 0);
    free(sql);
    assert_true(sw_h_count(&h, "select count(*) from attempts where attempt "
                               "> 1") >= 2);
    assert_true(sw_h_count(&h, "select count(*) from runs where state = "
                               "'stopped' and reason like '%not promoted: "
                               "the budget was spent'") >= 1);
    assert_int_equal(sw_h_count(&h, "select count(*) from runs where state "
                                    "in ('paused', 'pending', 'running')"),
                     0);
    free(file);
    sw_h_dispose(&h);
}

/* Promotion ASHA's drain, on a space drawn whole (16 runs of loss
 * lr + 1/i, rungs 1, 3, 9 of 60 s steps, 4 GPUs; paces exact: no
 * start-up): the same sweep with and without it. With it, paused runs
 * train further while the quota's last runs train, only once the last
 * run has started, and the sweep ends when the one without it does;
 * the quota's own promotions are the same. */
typedef struct {
    long steps, wall, at_last, early;
} drain_figures;

static drain_figures drain_run(const char *drain)
{
    sw_h h;
    drain_figures f;
    char *extra = sw_aprintf("early_terminate: {type: asha, promote: true, "
                             "min_iter: 1, eta: 3, max_iter: 9, drain: %s}",
                             drain);
    char *file;

    sw_h_init(&h);
    file = sim_sweep(&h, "", extra, 16, 9, 60, 0);
    const char *run[] = {"run",    file, "--backend", "sim",
                         "--gpus", "4",  "--quiet",   NULL};
    assert_int_equal(sw_h_run(&h, run, NULL), 0);
    f.steps = sw_h_count(&h, "select count(*) from metrics");
    f.wall = sw_h_count(&h, "select cast(round(max(ended_at) - "
                            "min(started_at)) as int) from attempts");
    f.at_last = sw_h_count(&h, "select count(*) from runs r where (select "
                               "max(step) from metrics m where m.run_id = "
                               "r.id) = 9");
    /* promotions before the last new run started: the quota's only */
    f.early = sw_h_count(&h, "select count(*) from attempts where attempt "
                             "> 1 and started_at < (select max(started_at) "
                             "from attempts where attempt = 1)");
    free(file);
    free(extra);
    sw_h_dispose(&h);
    return f;
}

static void test_drain_fills_idle_devices(void **state)
{
    drain_figures off = drain_run("false"), on = drain_run("true");

    (void)state;
    assert_true(on.steps > off.steps);
    assert_int_equal(on.wall, off.wall);
    assert_int_equal(on.at_last, off.at_last);
    assert_int_equal(on.early, off.early);
    print_message("drain: %ld steps against %ld, both in %ld s, %ld runs "
                  "to the last rung\n",
                  on.steps, off.steps, on.wall, on.at_last);
}

/* What a sweep spent before `sweep resume` counts against its budget:
 * the resumed sweep starts no more than one that was never stopped. */
static void test_budget_counts_across_resume(void **state)
{
    sw_h h;
    char *file;

    (void)state;
    sw_h_init(&h);
    file = sim_sweep(&h, "", "budget: {gpu_hours: 6}", 16, 60, 60, 0);
    const char *run[] = {"run",    file, "--backend", "sim",
                         "--gpus", "2",  "--quiet",   NULL};
    const char *resume[] = {"resume", "--quiet", NULL};
    run_interrupted(&h, run, "0.3", 450); /* one pair done, one started */
    assert_true(sw_h_count(&h, "select count(*) from runs where state = "
                               "'finished'") < 6);
    assert_int_equal(sw_h_run(&h, resume, NULL), 0);
    /* pairs of one-hour trials: 2, 4, then 6 GPU-hours spent */
    assert_int_equal(sw_h_count(&h, "select count(*) from runs where state "
                                    "= 'finished'"),
                     6);
    assert_int_equal(sw_h_count(&h, "select count(*) from runs where state "
                                    "<> 'finished'"),
                     0);
    free(file);
    sw_h_dispose(&h);
}

/* The runs' outcome under failures, as one line: idx:state:attempts. */
static char *outcome(const sw_h *h)
{
    return query_row(h, "select group_concat(idx || ':' || state || ':' || "
                        "attempts, ' ') from (select * from runs order by "
                        "idx)");
}

static void test_failures_are_seeded_and_retried(void **state)
{
    sw_h h;
    char *file, *first, *second;

    (void)state;
    sw_h_init(&h);
    file = sim_sweep(&h, "", "retries: 1", 16, 60, 60, 0);
    const char *run[] = {
        "run",    file, "--backend",       "sim", "-p",      "4",
        "--seed", "11", "--sim-fail-rate", "0.4", "--quiet", NULL};
    assert_int_equal(sw_h_run(&h, run, NULL), 0);
    first = outcome(&h);
    /* some attempts failed: retried runs, and runs out of retries */
    assert_true(sw_h_count(&h, "select count(*) from runs where attempts "
                               "= 2") > 0);
    assert_true(sw_h_count(&h, "select count(*) from runs where state = "
                               "'failed' and exit_code = 1 and "
                               "ended_at - started_at < 3600") > 0);
    sw_h_dispose(&h);
    sw_h_init(&h);
    free(file);
    file = sim_sweep(&h, "", "retries: 1", 16, 60, 60, 0);
    run[1] = file;
    assert_int_equal(sw_h_run(&h, run, NULL), 0);
    second = outcome(&h);
    assert_string_equal(first, second);
    free(second);
    /* the sweep file's `sim: {fail_rate}` draws the same */
    sw_h_dispose(&h);
    sw_h_init(&h);
    free(file);
    file = sim_sweep(&h, "", "retries: 1\nsim: {fail_rate: 0.4, startup: 0}",
                     16, 60, 60, 0);
    const char *by_file[] = {"run", file,     "--backend", "sim",     "-p",
                             "4",   "--seed", "11",        "--quiet", NULL};
    assert_int_equal(sw_h_run(&h, by_file, NULL), 0);
    second = outcome(&h);
    assert_string_equal(first, second);
    free(first);
    free(second);
    free(file);
    sw_h_dispose(&h);
}

static void test_usage_errors_make_no_sweep(void **state)
{
    sw_h h;
    char *file;

    (void)state;
    sw_h_init(&h);
    file = sim_sweep(&h, "", "", 2, 3, 1, 0);
    const char *local[] = {"run", file, "--sim-fail-rate", "0.1", NULL};
    const char *range[] = {"run", file, "--backend", "sim", "--sim-fail-rate",
                           "1.5", NULL};
    assert_int_equal(sw_h_run(&h, local, NULL), 2);
    assert_int_equal(sw_h_run(&h, range, NULL), 2);
    assert_true(sw_h_count(&h, "select count(*) from sweeps") <= 0);
    free(file);
    sw_h_dispose(&h);
}

/* A start-up and a reading delay, the file's and a trial's own: each
 * attempt holds its device for its start-up and its steps; each value
 * is stored its delay after its step, the last one at the trial's exit;
 * the control keys are the simulation's, not metrics. */
static void test_startup_and_reading_delay(void **state)
{
    sw_h h;
    char *file;

    (void)state;
    sw_h_init(&h);
    file = sim_sweep(&h, "", "sim: {startup: 30, read_delay: 5}", 2, 4, 60, 0);
    const char *run[] = {"run", file, "--backend", "sim", "--quiet", NULL};
    assert_int_equal(sw_h_run(&h, run, NULL), 0);
    assert_int_equal(sw_h_count(&h, "select count(*) from runs where "
                                    "abs(ended_at - started_at - 270) < 1e-3"),
                     2);
    assert_int_equal(sw_h_count(&h, "select count(*) from metrics m join "
                                    "runs r on r.id = m.run_id where "
                                    "abs(m.time - r.started_at - 30 - 60 * "
                                    "m.step - (m.step < 4) * 5) < 1e-3"),
                     8);
    assert_int_equal(sw_h_count(&h, "select count(*) from metrics where name "
                                    "like '\\_%' escape '\\'"),
                     0);
    free(file);
    sw_h_dispose(&h);
}

/* A trial that declares its own start-up: `_startup` in its first line
 * (a line of control keys only, which stores nothing), after the
 * launch's measured 0.021 s. */
static void test_a_trial_declares_its_startup(void **state)
{
    sw_h h;
    char *file, *script;
    static const char trial[] =
        "#!/bin/sh\n"
        "echo '@metrics {\"_startup\": 12.5}'\n"
        "echo '@metrics {\"step\": 1, \"loss\": 1, \"_seconds\": 10}'\n";
    sw_buf b = SW_BUF_INIT;

    (void)state;
    sw_h_init(&h);
    script = sw_h_file(&h, "own.sh", trial);
    chmod(script, 0755);
    sw_buf_printf(&b,
                  "method: grid\nmetric: {name: loss}\n"
                  "parameters: {x: {values: [1, 2]}}\ncommand: [%s]\n",
                  script);
    file = sw_h_file(&h, "own.yaml", sw_buf_cstr(&b));
    sw_buf_dispose(&b);
    free(script);
    const char *run[] = {"run", file, "--backend", "sim", "--quiet", NULL};
    assert_int_equal(sw_h_run(&h, run, NULL), 0);
    assert_int_equal(sw_h_count(&h, "select count(*) from runs where state = "
                                    "'finished' and abs(ended_at - "
                                    "started_at - 22.521) < 1e-6"),
                     2);
    assert_int_equal(sw_h_count(&h, "select count(*) from metrics"), 2);
    free(file);
    sw_h_dispose(&h);
}

/* Promotion ASHA on surrogates that print their whole curve from step 1:
 * the simulator cuts each attempt at its SWEEP_TRAIN_UNTIL and resumes a
 * promoted run after the step it paused at, so every attempt after the
 * first begins where the one before ended, no step is stored twice, and
 * a paused run holds no device (never more than 2 attempts at once). */
static void test_promotion_pauses_and_resumes(void **state)
{
    sw_h h;
    char *file, *svg, *text;

    (void)state;
    sw_h_init(&h);
    file = sim_sweep(&h, "",
                     "parallel: 2\nearly_terminate: {type: asha, promote: "
                     "true, min_iter: 1, eta: 3, max_iter: 9}",
                     9, 9, 60, 0);
    const char *run[] = {"run", file, "--backend", "sim", "--quiet", NULL};
    assert_int_equal(sw_h_run(&h, run, NULL), 0);
    assert_true(sw_h_count(&h, "select count(*) from attempts where outcome "
                               "= 'paused'") >= 9 + 3);
    assert_true(sw_h_count(&h, "select count(*) from runs where state = "
                               "'finished'") >= 1);
    assert_int_equal(sw_h_count(&h, "select count(*) from (select run_id, "
                                    "step from metrics group by run_id, step "
                                    "having count(*) > 1)"),
                     0);
    assert_int_equal(sw_h_count(&h, "select count(*) from (select max(step) "
                                    "s from metrics group by run_id) where s "
                                    "not in (1, 3, 9)"),
                     0);
    /* each attempt: 60 s a step, from the step after the last one before */
    assert_int_equal(sw_h_count(&h, "select count(*) from attempts a where "
                                    "abs(a.ended_at - a.started_at - 60 * "
                                    "((select max(step) from metrics m where "
                                    "m.run_id = a.run_id and m.time <= "
                                    "a.ended_at + 1e-6) - coalesce((select "
                                    "max(step) from metrics m where m.run_id "
                                    "= a.run_id and m.time < a.started_at), "
                                    "0))) > 1e-3"),
                     0);
    assert_int_equal(sw_h_count(&h, "select max((select count(*) from "
                                    "attempts o where o.started_at <= "
                                    "a.started_at and o.ended_at > "
                                    "a.started_at)) from attempts a"),
                     2);
    /* the report's plot draws paused attempts as paused, not failed */
    svg = sw_aprintf("%s/plot.svg", h.dir);
    const char *plot[] = {"report", "--plot", svg, NULL};
    assert_int_equal(sw_h_run(&h, plot, NULL), 0);
    text = sw_test_slurp(svg, NULL);
    assert_non_null(text);
    assert_non_null(strstr(text, ": paused, "));
    assert_non_null(strstr(text, "fill=\"#8a6cc1\""));
    assert_null(strstr(text, ": failed, "));
    free(text);
    free(svg);
    free(file);
    sw_h_dispose(&h);
}

/* Runs that paused at their rung show the command works: failures
 * after them are a trial's bad luck, not a command that cannot run, so
 * the first-failures rule does not give up while nothing has finished
 * yet (with promotion, nothing finishes for a long time). */
static void test_paused_runs_count_as_working(void **state)
{
    sw_h h;
    char *file, *out = NULL;

    (void)state;
    sw_h_init(&h);
    file = sim_sweep(&h, "",
                     "parallel: 4\nrun_cap: 24\nsim: {fail_rate: 0.5, "
                     "startup: 0}\nearly_terminate: {type: asha, promote: "
                     "true, min_iter: 1, eta: 3, max_iter: 27}",
                     24, 27, 60, 0);
    /* the seed fixes which attempts fail (the draw hashes it) */
    const char *run[] = {"run",    file, "--backend", "sim",
                         "--seed", "3",  "--quiet",   NULL};
    sw_h_run(&h, run, &out);
    assert_null(strstr(out, "all failed"));
    assert_int_equal(sw_h_count(&h, "select count(*) from runs where state "
                                    "= 'failed'") > 5,
                     1);
    assert_int_equal(sw_h_count(&h, "select count(*) from runs where state "
                                    "in ('pending', 'paused')"),
                     0);
    free(out);
    free(file);
    sw_h_dispose(&h);
}

/* PBT under the simulator: a child run's checkpoint folder is a copy of
 * its parent's, so it goes on from the step the parent trained to (the
 * step the simulated checkpoint holds), not from step 1; every attempt
 * lasts the steps it trained, 60 s each. */
static void test_pbt_children_go_on_from_their_parent(void **state)
{
    sw_h h;
    char *file, *script;
    sw_buf b = SW_BUF_INIT;

    (void)state;
    sw_h_init(&h);
    free(sim_sweep(&h, "", "", 1, 1, 1, 0)); /* the surrogate's files */
    script = sw_h_file(&h, "trial.sh", trial_sh);
    chmod(script, 0755);
    sw_buf_printf(&b,
                  "method: pbt\nmetric: {name: loss, goal: minimize}\n"
                  "pbt: {population: 4, interval: 3, max_iter: 9}\n"
                  "command: [%s, \"${args}\"]\nsim: {startup: 0}\n"
                  "parameters:\n  steps: {value: 9}\n  secs: {value: 60}\n"
                  "  slope: {value: 0}\n  lr: {min: 0.1, max: 0.9}\n",
                  script);
    file = sw_h_file(&h, "pbt.yaml", sw_buf_cstr(&b));
    sw_buf_dispose(&b);
    free(script);
    const char *run[] = {"run", file, "--backend", "sim", "--quiet", NULL};
    assert_int_equal(sw_h_run(&h, run, NULL), 0);
    assert_true(sw_h_count(&h, "select count(*) from runs where parent is "
                               "not null") >= 2);
    /* a child's first step is its parent's iteration + 1 */
    assert_int_equal(sw_h_count(&h, "select count(*) from runs r where "
                                    "parent is not null and (select "
                                    "min(step) from metrics m where m.run_id "
                                    "= r.id) != r.parent_iter + 1"),
                     0);
    assert_int_equal(sw_h_count(&h, "select count(*) from attempts a where "
                                    "abs(a.ended_at - a.started_at - 60 * "
                                    "(select count(*) from metrics m where "
                                    "m.run_id = a.run_id and m.name = 'loss' "
                                    "and m.time > a.started_at and m.time <= "
                                    "a.ended_at + 1e-6)) > 1e-3"),
                     0);
    free(file);
    sw_h_dispose(&h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sixteen_hours_on_four_in_four_virtual_hours),
        cmocka_unit_test(test_parallel_below_the_devices_is_said),
        cmocka_unit_test(test_half_gpu_trials_pack_two_a_gpu),
        cmocka_unit_test(test_hyperband_cuts_at_the_virtual_step),
        cmocka_unit_test(test_target_cancels_at_its_virtual_time),
        cmocka_unit_test(test_interrupt_and_resume_continue_the_timeline),
        cmocka_unit_test(test_failures_are_seeded_and_retried),
        cmocka_unit_test(test_budget_stops_new_trials),
        cmocka_unit_test(test_budget_counts_across_resume),
        cmocka_unit_test(test_budget_ends_promotions),
        cmocka_unit_test(test_drain_fills_idle_devices),
        cmocka_unit_test(test_usage_errors_make_no_sweep),
        cmocka_unit_test(test_startup_and_reading_delay),
        cmocka_unit_test(test_a_trial_declares_its_startup),
        cmocka_unit_test(test_promotion_pauses_and_resumes),
        cmocka_unit_test(test_paused_runs_count_as_working),
        cmocka_unit_test(test_pbt_children_go_on_from_their_parent),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
