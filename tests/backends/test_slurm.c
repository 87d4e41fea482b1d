/*
 * test_slurm.c - the Slurm executor without a cluster: what it reads in
 * squeue's and sacct's answers, the sbatch arguments and environment it
 * makes, the options it accepts, and, through its interface, how it
 * answers with fake sbatch, squeue, sacct and scancel first on PATH
 * (shell scripts that print what the test put in $FAKE_SLURM and log
 * their calls): a purged job read from the completion log, a job Slurm
 * forgot, a node failure, adoption without a handle, a failed submit.
 * tests/slurm/ runs the real thing.
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
#include <unistd.h>

#include "backends/executor.h"
#include "backends/slurm_internal.h"
#include "sweeps/error.h"
#include "testutil.h"

/* ---- parsing ---- */

static void test_squeue_lines(void **state)
{
    char a[] = "12|COMPLETED|None|768|run-1|";
    char b[] = "13|RUNNING|None|0|run-2|\n";
    char c[] = "14|FAILED|NonZeroExitCode|9|run-3|";
    char d[] = "15|PENDING|Resources|0|run-4|";
    char e[] = "slurm_load_jobs error: Invalid job id specified";
    sw_slurm__job j;
    char *name;

    (void)state;
    assert_true(sw_slurm__parse_squeue(a, &j, &name));
    assert_int_equal(j.id, 12);
    assert_int_equal(j.phase, SW_SLURM_ENDED);
    assert_true(j.has_status && j.exit.exited);
    assert_int_equal(j.exit.exit_code, 3);
    assert_string_equal(name, "run-1");
    assert_true(sw_slurm__parse_squeue(b, &j, &name));
    assert_int_equal(j.phase, SW_SLURM_ALIVE);
    assert_false(j.pending);
    assert_true(sw_slurm__parse_squeue(c, &j, &name));
    assert_false(j.exit.exited);
    assert_int_equal(j.exit.signal, 9);
    assert_string_equal(j.reason, "NonZeroExitCode");
    assert_true(sw_slurm__parse_squeue(d, &j, &name));
    assert_true(j.pending);
    assert_false(sw_slurm__parse_squeue(e, &j, &name));
}

static void test_sacct_lines(void **state)
{
    char a[] = "41|COMPLETED|0:0";
    char b[] = "41.batch|COMPLETED|0:0";
    char c[] = "42|CANCELLED by 0|0:15";
    char d[] = "43|FAILED|2:0\n";
    sw_slurm__job j;

    (void)state;
    assert_true(sw_slurm__parse_sacct(a, &j));
    assert_true(j.has_status && j.exit.exited && j.exit.exit_code == 0);
    assert_false(sw_slurm__parse_sacct(b, &j));
    assert_true(sw_slurm__parse_sacct(c, &j));
    assert_string_equal(j.state, "CANCELLED");
    assert_int_equal(j.exit.signal, 15);
    assert_true(sw_slurm__parse_sacct(d, &j));
    assert_int_equal(j.exit.exit_code, 2);
}

static void test_ends_that_are_slurms(void **state)
{
    sw_slurm__job j = {.id = 7};
    char *msg;

    (void)state;
    snprintf(j.state, sizeof(j.state), "NODE_FAIL");
    sw_slurm__classify(&j);
    msg = sw_slurm__machinery_end(&j, true);
    assert_non_null(
        strstr(msg, "Slurm job 7 ended NODE_FAIL: its node failed"));
    free(msg);
    snprintf(j.state, sizeof(j.state), "PREEMPTED");
    sw_slurm__classify(&j);
    msg = sw_slurm__machinery_end(&j, true);
    assert_non_null(strstr(msg, "preempted"));
    free(msg);
    snprintf(j.state, sizeof(j.state), "PENDING");
    sw_slurm__classify(&j);
    assert_null(sw_slurm__machinery_end(&j, false));
    msg = sw_slurm__machinery_end(&j, true);
    assert_non_null(strstr(msg, "requeued"));
    free(msg);
    snprintf(j.state, sizeof(j.state), "CANCELLED");
    sw_slurm__classify(&j);
    msg = sw_slurm__machinery_end(&j, false);
    assert_non_null(strstr(msg, "cancelled before it started"));
    free(msg);
    j.has_status = true;
    assert_null(sw_slurm__machinery_end(&j, true));
    snprintf(j.state, sizeof(j.state), "COMPLETED");
    sw_slurm__classify(&j);
    assert_null(sw_slurm__machinery_end(&j, true));
}

/* ---- what sbatch gets ---- */

static char *trial_argv[] = {"python3", "train.py", "--lr=0.1", NULL};
static char *trial_env[] = {"SWEEP_RUN_ID=s-1", "CUDA_VISIBLE_DEVICES=3", NULL};

static sw_launch a_launch(const char *dir)
{
    sw_launch l = {.key = "s-1",
                   .argv = trial_argv,
                   .env = trial_env,
                   .cwd = "/work",
                   .dir = dir,
                   .stdout_path = "/r/stdout.log",
                   .stderr_path = "/r/stderr.log"};

    return l;
}

static size_t index_of(char **v, const char *s)
{
    size_t i;

    for (i = 0; v[i]; i++)
        if (strcmp(v[i], s) == 0)
            return i;
    fail_msg("'%s' is not in sbatch's arguments", s);
    return 0;
}

static void test_sbatch_arguments(void **state)
{
    sw_launch l = a_launch("/r");
    char *extra[] = {"--partition=gpu", "--job-name=user", NULL};
    char **v = NULL;

    (void)state;
    l.resources.has_gpus = true;
    l.resources.gpus = 2;
    assert_int_equal(sw_slurm__sbatch_argv(&v, &l, extra, "/r/job.sh"), 0);
    assert_string_equal(v[0], "sbatch");
    index_of(v, "--parsable");
    index_of(v, "--gres=gpu:2");
    /* the user's first, then sweep's own: they cannot be overridden */
    assert_true(index_of(v, "--partition=gpu") < index_of(v, "--job-name=s-1"));
    assert_true(index_of(v, "--job-name=user") < index_of(v, "--job-name=s-1"));
    index_of(v, "--output=/r/stdout.log");
    index_of(v, "--error=/r/stderr.log");
    index_of(v, "--open-mode=append");
    index_of(v, "--chdir=/work");
    /* the script, then the trial's argv untouched */
    assert_int_equal(index_of(v, "python3"), index_of(v, "/r/job.sh") + 1);
    assert_string_equal(v[index_of(v, "python3") + 2], "--lr=0.1");
    assert_null(v[index_of(v, "python3") + 3]);
    sw_slurm__strv_free(v);
    /* a share of a GPU waits for the cluster's shards */
    l.resources.gpus = 0.5;
    assert_int_equal(sw_slurm__sbatch_argv(&v, &l, NULL, "/r/job.sh"), 0);
    for (size_t i = 0; v[i]; i++)
        assert_null(strstr(v[i], "--gres"));
    sw_slurm__strv_free(v);
}

static void test_shard_requests(void **state)
{
    char *arg = NULL;

    (void)state;
    assert_int_equal(sw_slurm__shard_request(&arg, 0.5, "gpu:4,shard:16\n"), 0);
    assert_string_equal(arg, "--gres=shard:2");
    free(arg);
    /* typed GPUs, socket lists; the node with the most shards a GPU wins,
     * so the share is never less than asked */
    assert_int_equal(sw_slurm__shard_request(&arg, 0.3,
                                             "gpu:a100:2(S:0,1),shard:20\n"
                                             "gpu:4,shard:8\n"),
                     0);
    assert_string_equal(arg, "--gres=shard:3");
    free(arg);
    assert_int_equal(sw_slurm__shard_request(&arg, 0.25, "gpu:4\n(null)\n"),
                     SW_EINVALID);
    assert_non_null(strstr(sw_error_last(), "no GPU shards"));
}

static void test_job_environment(void **state)
{
    sw_launch l = a_launch("/r");
    char **env;
    size_t i;
    bool run_id = false;

    (void)state;
    setenv("CUDA_VISIBLE_DEVICES", "0,1", 1);
    setenv("SWEEP_RUN_ID", "old", 1);
    env = sw_slurm__job_env(&l);
    for (i = 0; env[i]; i++) {
        assert_true(strncmp(env[i], "CUDA_VISIBLE_DEVICES=", 21) != 0);
        assert_string_not_equal(env[i], "SWEEP_RUN_ID=old");
        run_id = run_id || strcmp(env[i], "SWEEP_RUN_ID=s-1") == 0;
    }
    assert_true(run_id);
    sw_slurm__strv_free(env);
    unsetenv("CUDA_VISIBLE_DEVICES");
    unsetenv("SWEEP_RUN_ID");
}

static void test_options_accepted_and_refused(void **state)
{
    static const char *const good[][2] = {
        {"--partition=gpu", "--partition=gpu"},
        {"#SBATCH --mail-type END", "--mail-type=END"},
        {"  -p gpu ", "-pgpu"},
        {"--exclusive", "--exclusive"},
    };
    static const char *const bad[] = {
        "exclusive", "-", "--job-name=x", "-o out", "--array=1-3",
        "--wrap=ls", NULL};
    size_t i;
    char *s;

    (void)state;
    for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        s = sw_spec_slurm_arg(good[i][0]);
        assert_non_null(s);
        assert_string_equal(s, good[i][1]);
        free(s);
    }
    for (i = 0; bad[i]; i++)
        assert_null(sw_spec_slurm_arg(bad[i]));
    sw_executor *ex = NULL;
    char *args[] = {"--partition=gpu", "--output=x", NULL};
    assert_int_equal(sw_executor_new_with(&ex, "slurm", args), SW_EINVALID);
    assert_non_null(strstr(sw_error_last(), "--output"));
    assert_int_equal(sw_executor_new_with(&ex, "local", args), SW_EINVALID);
    assert_non_null(strstr(sw_error_last(), "--backend slurm"));
}

/* ---- the executor, with fake commands ---- */

typedef struct {
    char *dir;  /* the fake commands' answers and logs */
    char *bin;  /* the fake commands */
    char *run;  /* an attempt's folder */
    char *path; /* PATH before */
    sw_executor *ex;
} fake;

static void put(const fake *f, const char *name, const char *text)
{
    char *path = sw_aprintf("%s/%s", f->dir, name);
    FILE *o = fopen(path, "w");

    assert_non_null(o);
    fputs(text, o);
    fclose(o);
    free(path);
}

static char *get(const fake *f, const char *name)
{
    char *path = sw_aprintf("%s/%s", f->dir, name);
    char *text = sw_test_slurp(path, NULL);

    free(path);
    return text ? text : sw_strdup("");
}

/* Each fake prints $FAKE_SLURM/NAME.out (and NAME.err to stderr), logs
 * its arguments in calls.log, and exits with NAME.rc (default 0). sbatch
 * also logs its environment. */
static int setup(void **state)
{
    static const char *const names[] = {"sbatch", "squeue", "sacct", "scancel",
                                        "sinfo"};
    char tmpl[] = "/tmp/sweep-slurm-fake-XXXXXX";
    fake *f = calloc(1, sizeof(*f));
    size_t i;

    f->dir = sw_strdup(mkdtemp(tmpl));
    f->bin = sw_aprintf("%s/bin", f->dir);
    f->run = sw_aprintf("%s/run", f->dir);
    mkdir(f->bin, 0700);
    mkdir(f->run, 0700);
    for (i = 0; i < 5; i++) {
        char *path = sw_aprintf("%s/%s", f->bin, names[i]);
        FILE *o = fopen(path, "w");

        fprintf(o,
                "#!/bin/sh\nn=%s\necho \"$n $*\" >> \"$FAKE_SLURM/calls.log\"\n"
                "[ $n = sbatch ] && env > \"$FAKE_SLURM/sbatch.env\"\n"
                "[ -f \"$FAKE_SLURM/$n.hang\" ] && exec sleep 600\n"
                "cat \"$FAKE_SLURM/$n.out\" 2>/dev/null\n"
                "cat \"$FAKE_SLURM/$n.err\" >&2 2>/dev/null\n"
                "exit $(cat \"$FAKE_SLURM/$n.rc\" 2>/dev/null || echo 0)\n",
                names[i]);
        fclose(o);
        chmod(path, 0700);
        free(path);
    }
    f->path = sw_strdup(getenv("PATH"));
    char *path = sw_aprintf("%s:%s", f->bin, f->path);
    setenv("PATH", path, 1);
    free(path);
    setenv("FAKE_SLURM", f->dir, 1);
    assert_int_equal(sw_executor_new(&f->ex, "slurm"), 0);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fake *f = *state;

    sw_executor_free(f->ex);
    setenv("PATH", f->path, 1);
    sw_test_rm_tree(f->dir);
    free(f->dir);
    free(f->bin);
    free(f->run);
    free(f->path);
    free(f);
    return 0;
}

/* Drives the executor (its clock 0.2 s further each turn) until it gives
 * an event: 1, or 0 after `turns` turns of 10 ms. */
static int next_within(fake *f, sw_job_event *ev, int turns)
{
    static double now = 1;
    struct timespec ts = {0, 10 * 1000 * 1000};
    int i;

    for (i = 0; i < turns; i++) {
        assert_int_equal(sw_executor_process(f->ex, now += 0.2), 0);
        if (sw_executor_next_event(f->ex, ev) == 1)
            return 1;
        nanosleep(&ts, NULL);
    }
    return 0;
}

static int next(fake *f, sw_job_event *ev)
{
    return next_within(f, ev, 1000);
}

static void test_purged_job_from_the_completion_log(void **state)
{
    fake *f = *state;
    sw_job_event ev;

    put(f, "squeue.rc", "1");
    put(f, "squeue.err", "slurm_load_jobs error: Invalid job id specified\n");
    put(f, "sacct.out",
        "41|FAILED|3:0|1700000010|1700000025\n"
        "41.batch|FAILED|3:0|1700000010|1700000025\n");
    assert_int_equal(sw_executor_adopt(f->ex, "s-1", f->run, "41"), 0);
    /* it ran: from Slurm's start to Slurm's end */
    assert_int_equal(next(f, &ev), 1);
    assert_int_equal(ev.kind, SW_JOB_RUNNING);
    assert_true(ev.at == 1700000010);
    sw_job_event_dispose(&ev);
    assert_int_equal(next(f, &ev), 1);
    assert_int_equal(ev.kind, SW_JOB_ENDED);
    assert_true(ev.at == 1700000025);
    assert_non_null(strstr(ev.message, "Slurm job 41 ended FAILED"));
    assert_string_equal(ev.key, "s-1");
    assert_true(ev.exit.exited);
    assert_int_equal(ev.exit.exit_code, 3);
    sw_job_event_dispose(&ev);
    char *calls = get(f, "calls.log");
    assert_non_null(strstr(calls, "sacct -c -n -P -j 41 -o "
                                  "JobID,State,ExitCode,Start,End"));
    free(calls);
}

static void test_job_slurm_forgot_is_lost(void **state)
{
    fake *f = *state;
    sw_job_event ev;

    put(f, "squeue.rc", "1");
    put(f, "squeue.err", "slurm_load_jobs error: Invalid job id specified\n");
    assert_int_equal(sw_executor_adopt(f->ex, "s-1", f->run, "41"), 0);
    assert_int_equal(next(f, &ev), 1);
    assert_int_equal(ev.kind, SW_JOB_LOST);
    assert_non_null(strstr(ev.message, "no longer knows job 41"));
    sw_job_event_dispose(&ev);
    char *calls = get(f, "calls.log");
    assert_non_null(strstr(calls, "sacct -c"));
    assert_non_null(strstr(calls, "sacct -X"));
    free(calls);
}

static void test_node_failure_is_lost_and_said(void **state)
{
    fake *f = *state;
    sw_job_event ev;
    char *log, *path;

    put(f, "squeue.out", "42|NODE_FAIL|None|0|s-1|\n");
    assert_int_equal(sw_executor_adopt(f->ex, "s-1", f->run, "42"), 0);
    assert_int_equal(next(f, &ev), 1);
    assert_int_equal(ev.kind, SW_JOB_LOST);
    assert_non_null(strstr(ev.message, "its node failed"));
    sw_job_event_dispose(&ev);
    path = sw_aprintf("%s/stderr.log", f->run);
    log = sw_test_slurp(path, NULL);
    assert_non_null(log);
    assert_non_null(strstr(log, "sweep: Slurm job 42 ended NODE_FAIL"));
    free(log);
    free(path);
}

static void test_adopt_without_handle(void **state)
{
    fake *f = *state;
    sw_job_event ev;
    char *path = sw_aprintf("%s/pid", f->run);
    FILE *o = fopen(path, "w");

    /* the pid file names the job */
    fputs("slurm 43\n", o);
    fclose(o);
    assert_int_equal(sw_executor_adopt(f->ex, "s-1", f->run, NULL), 0);
    assert_int_equal(next(f, &ev), 1);
    assert_int_equal(ev.kind, SW_JOB_STARTED);
    assert_string_equal(ev.handle, "43");
    sw_job_event_dispose(&ev);
    /* waiting, until squeue says more */
    assert_int_equal(next(f, &ev), 1);
    assert_int_equal(ev.kind, SW_JOB_QUEUED);
    assert_string_equal(ev.message, "None");
    sw_job_event_dispose(&ev);
    /* without one: by its name in squeue, alive... */
    unlink(path);
    put(f, "squeue.out", "44|PENDING|Priority|0|s-2|\n");
    assert_int_equal(sw_executor_adopt(f->ex, "s-2", f->run, NULL), 0);
    assert_int_equal(next(f, &ev), 1);
    assert_int_equal(ev.kind, SW_JOB_STARTED);
    assert_string_equal(ev.handle, "44");
    sw_job_event_dispose(&ev);
    assert_int_equal(next(f, &ev), 1);
    assert_int_equal(ev.kind, SW_JOB_QUEUED);
    sw_job_event_dispose(&ev);
    unlink(path);
    /* ...or not there: it never started (s-1 and s-2 are watched, and
     * now lost: no record knows them) */
    put(f, "squeue.out", "");
    assert_int_equal(sw_executor_adopt(f->ex, "s-3", f->run, NULL), 0);
    while (next(f, &ev) == 1 && strcmp(ev.key, "s-3") != 0)
        sw_job_event_dispose(&ev);
    assert_int_equal(ev.kind, SW_JOB_NOT_STARTED);
    assert_string_equal(ev.key, "s-3");
    sw_job_event_dispose(&ev);
    free(path);
}

static void test_launch_and_cancel(void **state)
{
    fake *f = *state;
    sw_launch l = a_launch(f->run);
    sw_job_event ev;
    char *text;

    put(f, "sbatch.out", "45\n");
    put(f, "squeue.out", "45|RUNNING|None|0|s-1|1700000100|NONE|\n");
    setenv("CUDA_VISIBLE_DEVICES", "0", 1);
    assert_int_equal(sw_executor_launch(f->ex, &l), 0);
    unsetenv("CUDA_VISIBLE_DEVICES");
    assert_int_equal(sw_executor_launch(f->ex, &l), SW_EINVALID); /* in use */
    assert_int_equal(next(f, &ev), 1);
    assert_int_equal(ev.kind, SW_JOB_STARTED);
    assert_string_equal(ev.handle, "45");
    sw_job_event_dispose(&ev);
    text = get(f, "run/pid");
    assert_string_equal(text, "slurm 45\n");
    free(text);
    text = get(f, "sbatch.env");
    assert_non_null(strstr(text, "SWEEP_RUN_ID=s-1\n"));
    assert_null(strstr(text, "CUDA_VISIBLE_DEVICES"));
    free(text);
    /* queued at first, then seen running since Slurm's start time, then
     * canceled: the trial gets SIGTERM */
    assert_int_equal(next(f, &ev), 1);
    assert_int_equal(ev.kind, SW_JOB_QUEUED);
    sw_job_event_dispose(&ev);
    assert_int_equal(next(f, &ev), 1);
    assert_int_equal(ev.kind, SW_JOB_RUNNING);
    assert_true(ev.at == 1700000100);
    sw_job_event_dispose(&ev);
    assert_int_equal(next_within(f, &ev, 20), 0);
    assert_int_equal(sw_executor_cancel(f->ex, "s-1", false), 0);
    put(f, "squeue.out", "45|CANCELLED|None|15|s-1|\n");
    assert_int_equal(next(f, &ev), 1);
    assert_int_equal(ev.kind, SW_JOB_ENDED);
    assert_false(ev.exit.exited);
    assert_int_equal(ev.exit.signal, 15);
    sw_job_event_dispose(&ev);
    text = get(f, "calls.log");
    assert_non_null(strstr(text, "scancel --signal=TERM --full 45"));
    assert_non_null(strstr(text, "--job-name=s-1"));
    free(text);
    assert_int_equal(sw_executor_cancel(f->ex, "s-1", true), SW_ENOTFOUND);
}

static void test_failed_submit(void **state)
{
    fake *f = *state;
    sw_launch l = a_launch(f->run);
    sw_job_event ev;

    put(f, "sbatch.rc", "1");
    put(f, "sbatch.err",
        "sbatch: error: Batch job submission failed: "
        "Invalid partition name specified\n");
    assert_int_equal(sw_executor_launch(f->ex, &l), 0);
    assert_int_equal(next(f, &ev), 1);
    assert_int_equal(ev.kind, SW_JOB_START_FAILED);
    assert_string_equal(ev.message, "sbatch: error: Batch job submission "
                                    "failed: Invalid partition name "
                                    "specified");
    sw_job_event_dispose(&ev);
}

/* Pending for a reason time will not change: given up after a grace,
 * cancelled, a failed attempt, said in its log. */
static void test_job_that_can_never_start(void **state)
{
    fake *f = *state;
    sw_job_event ev;
    char *text;

    put(f, "squeue.out", "48|PENDING|PartitionTimeLimit|0|s-1|\n");
    assert_int_equal(sw_executor_adopt(f->ex, "s-1", f->run, "48"), 0);
    assert_int_equal(next(f, &ev), 1);
    assert_int_equal(ev.kind, SW_JOB_ENDED);
    assert_false(ev.exit.exited);
    assert_int_equal(ev.exit.signal, 0); /* it never ran */
    assert_non_null(strstr(ev.message, "Slurm job 48 ended CANCELLED before "
                                       "it started: "));
    sw_job_event_dispose(&ev);
    text = get(f, "run/stderr.log");
    assert_non_null(strstr(text, "Slurm job 48 can never start "
                                 "(PartitionTimeLimit: its time limit is "
                                 "above its partition's)"));
    free(text);
    sw_executor_free(f->ex); /* the scancel is left to finish */
    f->ex = NULL;
    for (int i = 0; i < 100; i++) {
        text = get(f, "calls.log");
        if (strstr(text, "scancel 48"))
            break;
        free(text);
        text = NULL;
        usleep(20000);
    }
    assert_non_null(text);
    free(text);
}

/* An sbatch that does not answer is killed; the job it may have
 * submitted is found by the run's name. */
static void test_sbatch_that_hangs(void **state)
{
    fake *f = *state;
    sw_launch l = a_launch(f->run);
    sw_job_event ev;

    put(f, "sbatch.hang", "");
    put(f, "squeue.out", "47|PENDING|Priority|0|s-1|\n");
    assert_int_equal(sw_executor_launch(f->ex, &l), 0);
    assert_int_equal(next(f, &ev), 1);
    assert_int_equal(ev.kind, SW_JOB_STARTED);
    assert_string_equal(ev.handle, "47");
    sw_job_event_dispose(&ev);
}

/* A share of a GPU: shards where the nodes have them, else refused. */
static void test_share_of_a_gpu(void **state)
{
    fake *f = *state;
    sw_launch l = a_launch(f->run);
    sw_job_event ev;
    char *calls;

    l.resources.has_gpus = true;
    l.resources.gpus = 0.5;
    put(f, "sinfo.out", "gpu:4\n");
    assert_int_equal(sw_executor_launch(f->ex, &l), 0);
    assert_int_equal(next(f, &ev), 1);
    assert_int_equal(ev.kind, SW_JOB_START_FAILED);
    assert_non_null(strstr(ev.message, "no GPU shards"));
    sw_job_event_dispose(&ev);
    sw_executor_free(f->ex); /* a new one asks sinfo again */
    assert_int_equal(sw_executor_new(&f->ex, "slurm"), 0);
    put(f, "sinfo.out", "gpu:4,shard:16\n");
    put(f, "sbatch.out", "46\n");
    assert_int_equal(sw_executor_launch(f->ex, &l), 0);
    assert_int_equal(next(f, &ev), 1);
    assert_int_equal(ev.kind, SW_JOB_STARTED);
    sw_job_event_dispose(&ev);
    calls = get(f, "calls.log");
    assert_non_null(strstr(calls, "sbatch --parsable --no-requeue "
                                  "--gres=shard:2 --job-name=s-1"));
    free(calls);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_squeue_lines),
        cmocka_unit_test(test_sacct_lines),
        cmocka_unit_test(test_ends_that_are_slurms),
        cmocka_unit_test(test_sbatch_arguments),
        cmocka_unit_test(test_shard_requests),
        cmocka_unit_test(test_job_environment),
        cmocka_unit_test(test_options_accepted_and_refused),
        cmocka_unit_test_setup_teardown(test_purged_job_from_the_completion_log,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_job_slurm_forgot_is_lost, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_node_failure_is_lost_and_said,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_adopt_without_handle, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_launch_and_cancel, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_failed_submit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_share_of_a_gpu, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sbatch_that_hangs, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_job_that_can_never_start, setup,
                                        teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
