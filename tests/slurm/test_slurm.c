/*
 * test_slurm.c - `sweep run --backend slurm` end to end: the real `sweep`
 * binary against a real single-node Slurm cluster (cluster.sh: munged,
 * slurmctld, slurmd, 8 CPUs and 4 fake GPUs) that this test starts and
 * stops. The same sweep gives the same runs, values and best run as
 * locally; GPU requests are honoured and impossible ones refused; a job
 * scancel'ed from outside is retried; `sweep resume` after SIGKILL adopts
 * queued and running jobs without submitting any twice; early stopping
 * works through the metrics server. Exit 77 (skipped) when Slurm cannot
 * be installed or started here.
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
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "sweeps/buf.h"
#include "testutil.h"

static char cluster[] = "/tmp/sweep-slurm-XXXXXX";
static pid_t background; /* a `sweep` a test started, killed if it fails */

static int kill_background(void **state)
{
    (void)state;
    if (background > 0) {
        kill(background, SIGKILL);
        sw_h_wait(background, 10);
    }
    background = 0;
    /* what a failed test may leave: a DOWN partition, jobs queued */
    if (system("scontrol update partitionname=short state=up; "
               "scancel -u \"$(id -un)\" 2>/dev/null") != 0)
        return 0;
    return 0;
}

/* Runs `cmd` through the shell (tests only): its stdout, or NULL. */
static char *sh(const char *cmd)
{
    sw_buf b = SW_BUF_INIT;
    char chunk[4096];
    size_t n;
    FILE *p = popen(cmd, "r");

    if (!p)
        return NULL;
    while ((n = fread(chunk, 1, sizeof(chunk), p)) > 0)
        sw_buf_put(&b, chunk, n);
    if (pclose(p) != 0) {
        sw_buf_dispose(&b);
        return NULL;
    }
    return sw_buf_detach(&b);
}

static int sh_status(const char *cmd)
{
    int rc = system(cmd);

    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

static void nap(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (time_t)s) * 1e9)};

    nanosleep(&ts, NULL);
}

/* The CSV answer of `sweep query SQL` (caller frees). */
static char *query(const sw_h *h, const char *sql)
{
    const char *q[] = {"query", "--csv", sql, NULL};
    char *out = NULL, *copy;
    int rc = sw_h_run(h, q, &out);

    if (rc != 0)
        fail_msg("sweep query failed (%d): %s", rc, sql);
    /* a copy: gcc 12 -O3 otherwise takes the result for a pointer to
     * `out` itself (-Wdangling-pointer) */
    copy = sw_strdup(out ? out : "");
    free(out);
    return copy;
}

static char *toy_sweep(const sw_h *h, const char *extra)
{
    char *text = sw_aprintf("program: %s\nmethod: grid\nmetric:\n  name: "
                            "loss\n  goal: minimize\ncommand:\n  - ${program}\n"
                            "  - ${args}\n%s\nparameters:\n"
                            "  x: {values: [1, 2, 3, 4]}\n"
                            "  y: {values: [-1, 0, 1]}\n"
                            "  steps: {value: 3}\n  sleep: {value: 0.01}\n",
                            sw_h_toy(), extra);
    char *path = sw_h_file(h, "sweep.yaml", text);

    free(text);
    return path;
}

static const char results_sql[] =
    "select idx, params, state, exit_code, attempts, value,"
    " (select count(*) from metrics where run_id = runs.id) from runs"
    " order by idx";
static const char best_sql[] = "select params from runs where state = "
                               "'finished' order by value, idx limit 1";

/* One sweep file, locally and on Slurm: the same runs, values, best. */
static void test_same_results_as_local(void **state)
{
    sw_h h;
    char *file, *local, *local_best, *slurm, *slurm_best;

    (void)state;
    sw_h_init(&h);
    file = toy_sweep(&h, "parallel: 4");
    const char *run_local[] = {"run", file, "--quiet", NULL};
    assert_int_equal(sw_h_run(&h, run_local, NULL), 0);
    local = query(&h, results_sql);
    local_best = query(&h, best_sql);
    sw_test_rm_tree(h.home);
    const char *run_slurm[] = {"run",       file,    "--quiet",
                               "--backend", "slurm", NULL};
    assert_int_equal(sw_h_run(&h, run_slurm, NULL), 0);
    slurm = query(&h, results_sql);
    slurm_best = query(&h, best_sql);
    assert_string_equal(local, slurm);
    assert_string_equal(local_best, slurm_best);
    assert_non_null(strstr(local_best, "\"\"x\"\": 3, \"\"y\"\": -1"));
    assert_int_equal(sw_h_count(&h, "select count(*) from runs where state = "
                                    "'finished' and job glob '[0-9]*'"),
                     12);
    free(local);
    free(local_best);
    free(slurm);
    free(slurm_best);
    free(file);
    sw_h_dispose(&h);
}

/* A trial that logs when it starts and ends, and the devices it saw. */
static char *gpu_sweep(const sw_h *h, const char *gpus, const char *values)
{
    char *script = sw_h_file(h, "gpu_trial.sh",
                             "#!/bin/sh\n"
                             "echo \"start $(date +%s.%N) "
                             "${CUDA_VISIBLE_DEVICES-none}\"\n"
                             "sleep 1\n"
                             "echo \"end $(date +%s.%N)\"\n");
    char *text = sw_aprintf("method: grid\nparallel: 8\n"
                            "command: [/bin/sh, %s]\n"
                            "resources: {gpus: %s}\n"
                            "parameters:\n  i: {values: [%s]}\n",
                            script, gpus, values);
    char *path = sw_h_file(h, "gpus.yaml", text);

    free(text);
    free(script);
    return path;
}

typedef struct {
    double start, end;
    char devices[64];
} span;

/* Reads the spans of every run's stdout.log. */
static size_t read_spans(const sw_h *h, span *out, size_t max)
{
    char *ids = query(h, "select id from runs order by idx"), *line, *save;
    size_t n = 0;

    line = strtok_r(ids, "\n", &save); /* the header */
    while ((line = strtok_r(NULL, "\n", &save)) != NULL && n < max) {
        char *path = sw_aprintf("%s/runs/%s/stdout.log", h->home, line);
        char *text = sw_test_slurp(path, NULL);

        assert_non_null(text);
        assert_int_equal(sscanf(text, "start %lf %63s\nend %lf", &out[n].start,
                                out[n].devices, &out[n].end),
                         3);
        n++;
        free(text);
        free(path);
    }
    free(ids);
    return n;
}

/* The most spans that overlap at once. */
static int most_at_once(const span *s, size_t n)
{
    int most = 0, here;
    size_t i, j;

    for (i = 0; i < n; i++) {
        for (here = 0, j = 0; j < n; j++)
            here += s[j].start <= s[i].start && s[i].start < s[j].end;
        most = here > most ? here : most;
    }
    return most;
}

/* gpus: 1 with parallel 8 on a node of 4 GPUs (and 8 CPUs): never more
 * than 4 at once, each with one of the node's devices, never the
 * submitter's CUDA_VISIBLE_DEVICES; the same for gpus: 0.75, as GPU
 * shards. */
/* Runs 8 trials of `gpus` GPUs each on the cluster (after the last
 * sweep's home is cleared): never more than its 4 GPUs' worth at once,
 * each on one of the node's devices, each attempt recorded as holding
 * `gpus` (sweep report, budget:). */
static void eight_on_the_node(sw_h *h, const char *gpus)
{
    char *file = gpu_sweep(h, gpus, "1,2,3,4,5,6,7,8"), *sql;
    const char *run[] = {"run", file, "--quiet", "--backend", "slurm", NULL};
    span s[8];
    size_t i;

    sw_test_rm_tree(h->home);
    assert_int_equal(sw_h_run(h, run, NULL), 0);
    assert_int_equal(read_spans(h, s, 8), 8);
    assert_in_range(most_at_once(s, 8), 2, 4);
    for (i = 0; i < 8; i++)
        assert_non_null(strchr("0123", s[i].devices[0]));
    sql = sw_aprintf("select count(*) from attempts where gpu = %s", gpus);
    assert_int_equal(sw_h_count(h, sql), 8);
    free(sql);
    free(file);
}

static void test_gpu_requests_are_honoured(void **state)
{
    sw_h h;
    span s[8];
    char *file;

    (void)state;
    sw_h_init(&h);
    setenv("CUDA_VISIBLE_DEVICES", "7", 1);
    eight_on_the_node(&h, "1");
    /* a trial without GPUs sees none, not the submitter's */
    sw_test_rm_tree(h.home);
    file = gpu_sweep(&h, "0", "1,2");
    const char *run[] = {"run", file, "--quiet", "--backend", "slurm", NULL};
    assert_int_equal(sw_h_run(&h, run, NULL), 0);
    assert_int_equal(read_spans(&h, s, 8), 2);
    assert_string_equal(s[0].devices, "none");
    assert_int_equal(sw_h_count(&h, "select count(*) from attempts where "
                                    "gpu = 0"),
                     2);
    unsetenv("CUDA_VISIBLE_DEVICES");
    free(file);
    /* three quarters of a GPU: 3 of a GPU's 4 shards, one trial a GPU */
    eight_on_the_node(&h, "0.75");
    sw_h_dispose(&h);
}

/* The only run's stderr.log holds `text`. */
static void expect_in_run_log(const sw_h *h, const char *text)
{
    char *ids = query(h, "select id from runs"), *id, *path, *log;

    id = strchr(ids, '\n') + 1;
    id[strcspn(id, "\r\n")] = '\0';
    path = sw_aprintf("%s/runs/%s/stderr.log", h->home, id);
    log = sw_test_slurp(path, NULL);
    assert_non_null(log);
    if (!strstr(log, text))
        fail_msg("%s does not say '%s':\n%s", path, text, log);
    free(log);
    free(path);
    free(ids);
}

/* 5 GPUs on a node of 4: refused at submit time, said, never pending
 * (a share where no node has shards: tests/backends/test_slurm.c); a
 * time limit above the partition's, which sbatch takes: cancelled as soon
 * as Slurm says why it waits, and said in the run's log. */
static void test_impossible_requests_are_refused(void **state)
{
    sw_h h;
    char *file, *err;

    (void)state;
    sw_h_init(&h);
    file = gpu_sweep(&h, "5", "1");
    const char *run[] = {"run", file, "--quiet", "--backend", "slurm", NULL};
    assert_int_equal(sw_h_run(&h, run, NULL), 1); /* nothing could start */
    assert_int_equal(sw_h_count(&h, "select count(*) from runs where state "
                                    "= 'failed' and reason like 'cannot "
                                    "start: sbatch: error: %'"),
                     1);
    err = sw_aprintf("%s/stderr.txt", h.dir);
    char *text = sw_test_slurp(err, NULL);
    assert_non_null(strstr(text, "Requested node configuration is not "
                                 "available"));
    free(text);
    free(err);
    free(file);
    /* accepted by sbatch, but pending for a reason time will not change:
     * a time limit above the partition's */
    sw_test_rm_tree(h.home);
    file = gpu_sweep(&h, "0", "1");
    const char *run_short[] = {"run",
                               file,
                               "--quiet",
                               "--backend",
                               "slurm",
                               "--slurm-arg=--partition=short",
                               "--slurm-arg=--time=5",
                               NULL};
    /* its only run failed: the sweep fails too */
    assert_int_equal(sw_h_run(&h, run_short, NULL), 1);
    assert_int_equal(sw_h_count(&h, "select count(*) from runs where state "
                                    "= 'failed'"),
                     1);
    expect_in_run_log(&h, "can never start (Partition");
    free(file);
    sw_h_dispose(&h);
}

/* The job id of the only run of the sweep, once Slurm runs it. */
static char *running_job(const sw_h *h, double secs)
{
    char *out, *cmd;

    for (; secs > 0; secs -= 0.1, nap(0.1)) {
        const char *q[] = {"query", "--csv",
                           "select job from runs where job is not null", NULL};
        if (sw_h_run(h, q, &out) != 0) { /* no store yet */
            free(out);
            continue;
        }
        char *id = strchr(out, '\n');
        if (id && id[1]) {
            id[1 + strcspn(id + 1, "\r\n")] = '\0';
            cmd = sw_aprintf("squeue -h -j %s -t running -o %%i", id + 1);
            char *sq = sh(cmd);
            free(cmd);
            if (sq && sq[0]) {
                free(out);
                sq[strcspn(sq, "\n")] = '\0';
                return sq;
            }
            free(sq);
        }
        free(out);
    }
    return NULL;
}

/* A running job scancel'ed from outside: the attempt fails with the
 * signal, and the run goes again (retries: 1) and finishes. */
static void test_scancel_from_outside_is_retried(void **state)
{
    int rc;
    sw_h h;
    char *file, *job, *cmd;
    pid_t pid;

    (void)state;
    sw_h_init(&h);
    file = sw_h_file(&h, "cancel.yaml",
                     "method: grid\nretries: 1\n"
                     "command: [/bin/sh, -c, 'test $SWEEP_ATTEMPT = 1 && "
                     "sleep 60; echo done']\n"
                     "parameters:\n  i: {value: 1}\n");
    const char *run[] = {"run", file, "--quiet", "--backend", "slurm", NULL};
    pid = background = sw_h_start(&h, run);
    job = running_job(&h, 30);
    assert_non_null(job);
    cmd = sw_aprintf("scancel %s", job);
    assert_int_equal(sh_status(cmd), 0);
    rc = sw_h_wait(pid, 60);
    background = 0;
    assert_int_equal(rc, 0);
    assert_int_equal(sw_h_count(&h, "select count(*) from runs where state "
                                    "= 'finished' and attempts = 2"),
                     1);
    free(cmd);
    free(job);
    free(file);
    sw_h_dispose(&h);
}

/* The node dies under a running job (scontrol: state down), and comes
 * back: the attempt is lost (Slurm's doing, said in the run's
 * stderr.log), and the run goes again without using a retry. */
static void test_node_failure_reruns_the_trial(void **state)
{
    int rc;
    sw_h h;
    char *file, *job;
    pid_t pid;

    (void)state;
    sw_h_init(&h);
    file = sw_h_file(&h, "node.yaml",
                     "method: grid\nretries: 0\n"
                     "command: [/bin/sh, -c, 'test $SWEEP_ATTEMPT = 1 && "
                     "sleep 60; echo done']\n"
                     "parameters:\n  i: {value: 1}\n");
    const char *run[] = {"run", file, "--quiet", "--backend", "slurm", NULL};
    pid = background = sw_h_start(&h, run);
    job = running_job(&h, 30);
    assert_non_null(job);
    assert_int_equal(sh_status("scontrol update nodename=sweepnode "
                               "state=down reason=sweep-test"),
                     0);
    nap(1);
    sh_status("scontrol update nodename=sweepnode state=resume");
    rc = sw_h_wait(pid, 60);
    background = 0;
    assert_int_equal(rc, 0);
    assert_int_equal(sw_h_count(&h, "select count(*) from runs where state "
                                    "= 'finished' and attempts = 2 and "
                                    "lost = 1"),
                     1);
    expect_in_run_log(&h, "ended NODE_FAIL: its node failed");
    free(job);
    free(file);
    sw_h_dispose(&h);
}

/* How many jobs Slurm ran under the names of the runs of the sweep in
 * `h`, by the cluster's job-completion log. */
static long jobs_of_sweep(const sw_h *h)
{
    char *ids = query(h, "select id from runs"), *line, *save, *name;
    char *path = sw_aprintf("%s/jobcomp.log", cluster);
    char *log = sw_test_slurp(path, NULL), *p;
    long n = 0;

    assert_non_null(log);
    line = strtok_r(ids, "\n", &save); /* the header */
    while ((line = strtok_r(NULL, "\n", &save)) != NULL) {
        name = sw_aprintf(" Name=%s ", line);
        for (p = log; (p = strstr(p, name)) != NULL; p++)
            n++;
        free(name);
    }
    free(log);
    free(path);
    free(ids);
    return n;
}

/* SIGKILL of `sweep` while 2 jobs run and 2 wait (each asks half the
 * node's CPUs, through --slurm-arg, which resume must remember), resumed
 * once Slurm has purged some of them: resume adopts all four, reads the
 * ends of the purged ones from the completion log, submits nothing
 * twice, and finishes the sweep. */
static void test_resume_after_sigkill_adopts_jobs(void **state)
{
    sw_h h;
    char *file, *out, *names, *cmd;
    pid_t pid;
    double waited;

    (void)state;
    sw_h_init(&h);
    file = sw_h_file(&h, "resume.yaml",
                     "method: grid\nparallel: 4\n"
                     "command: [/bin/sh, -c, 'sleep 3; echo ok']\n"
                     "parameters:\n  i: {values: [1, 2, 3, 4, 5, 6]}\n");
    const char *run[] = {"run",       file,    "--quiet",
                         "--backend", "slurm", "--slurm-arg=--cpus-per-task=4",
                         NULL};
    pid = background = sw_h_start(&h, run);
    for (waited = 0; waited < 30; waited += 0.1, nap(0.1)) {
        out = sh("squeue -h -t pending,running -o %T | sort | uniq -c | "
                 "tr -s ' \\n' ' '");
        if (out && strstr(out, " 2 PENDING") && strstr(out, " 2 RUNNING")) {
            free(out);
            break;
        }
        free(out);
    }
    assert_true(waited < 30);
    kill(pid, SIGKILL);
    sw_h_wait(pid, 10);
    background = 0;
    /* until the controller has forgotten some (MinJobAge): their ends
     * are then only in the completion log */
    names = query(&h, "select group_concat(id) from runs");
    out = strchr(names, '\n') + 1;
    out[strcspn(out, "\r\n")] = '\0';
    cmd = sw_aprintf("squeue -h -t all -o %%i -n %s | wc -l", out);
    for (waited = 0; waited < 40; waited += 0.2, nap(0.2)) {
        out = sh(cmd);
        if (out && strtol(out, NULL, 10) < 4) {
            free(out);
            break;
        }
        free(out);
    }
    assert_true(waited < 40);
    free(cmd);
    free(names);
    const char *resume[] = {"resume", "--quiet", NULL};
    assert_int_equal(sw_h_run(&h, resume, NULL), 0);
    assert_int_equal(sw_h_count(&h, "select count(*) from runs where state "
                                    "= 'finished' and attempts = 1"),
                     6);
    assert_int_equal(jobs_of_sweep(&h), 6);
    free(file);
    sw_h_dispose(&h);
}

/* Hyperband through the metrics server (`--listen`): the trials of a
 * Slurm job report over HTTP and are told to stop. */
static void test_early_stopping_through_the_metrics_server(void **state)
{
    sw_h h;
    char *file, *text, *trial;

    (void)state;
    sw_h_init(&h);
    trial = sw_aprintf("%s/cli/hb_trial.py", getenv("SW_TEST_DATA"));
    text = sw_aprintf(
        "method: grid\nparallel: 1\n"
        "metric: {name: val_loss, goal: minimize}\n"
        "early_terminate: {type: hyperband, min_iter: 2, eta: 2, grace: 30}\n"
        "command: [/usr/bin/python3, %s]\n"
        "parameters:\n"
        "  curve: {values: ['8,7,6,5,4,3,2,1', '9,8.5,8,7.5,7,6.5,6,5.5',"
        " '10,9,8.8,8.6,8.4,8.2,8,7.8']}\n"
        "  mode: {value: http}\n",
        trial);
    file = sw_h_file(&h, "hb.yaml", text);
    const char *run[] = {"run",   file,       "--quiet",     "--backend",
                         "slurm", "--listen", "127.0.0.1:0", NULL};
    assert_int_equal(sw_h_run(&h, run, NULL), 0);
    assert_int_equal(sw_h_count(&h, "select count(*) from runs where idx = 2 "
                                    "and state = 'stopped'"),
                     1);
    assert_int_equal(sw_h_count(&h, "select count(*) from runs where state "
                                    "= 'finished'"),
                     2);
    assert_int_equal(sw_h_count(&h, "select count(*) from metrics m join runs "
                                    "r on r.id = m.run_id where r.idx = 2"),
                     2);
    free(text);
    free(trial);
    free(file);
    sw_h_dispose(&h);
}

/* ---- issue 23: the queue, Slurm's words, the controller ---- */

/* `sweep`'s stderr in h, from the start (then cleared). */
static char *take_stderr(const sw_h *h)
{
    char *path = sw_aprintf("%s/stderr.txt", h->dir);
    char *text = sw_test_slurp(path, NULL);

    unlink(path);
    free(path);
    return text ? text : sw_strdup("");
}

/* Polls `cmd` (through the shell) until its output holds `needle`:
 * true, or false after `secs`. */
static bool wait_output(const char *cmd, const char *needle, double secs)
{
    for (; secs > 0; secs -= 0.2, nap(0.2)) {
        char *out = sh(cmd);
        bool found = out && strstr(out, needle);

        free(out);
        if (found)
            return true;
    }
    return false;
}

/* Jobs from outside the sweep that hold all 4 GPUs for `secs` seconds
 * (started once the controller says they run). */
static void hold_all_gpus(int secs)
{
    char *cmd = sw_aprintf("sbatch --parsable --gres=gpu:4 --output=/dev/null"
                           " --job-name=blocker --wrap 'sleep %d'",
                           secs);

    assert_int_equal(sh_status(cmd), 0);
    free(cmd);
    assert_true(
        wait_output("squeue -h -n blocker -t running -o %T", "RUNNING", 30));
}

/* The GPU-seconds sacct (the completion log) gives the jobs of the
 * sweep's attempts: the sum of (End - Start) x GPUs, 1 GPU each. */
static double sacct_gpu_seconds(const sw_h *h)
{
    char *jobs = query(h, "select ',' || group_concat(job) || ',' from "
                          "attempts");
    char *list = strchr(jobs, '\n') + 1, *out, *line, *save, id[32];
    double total = 0, start, end;
    long long job;

    list[strcspn(list, "\r\n")] = '\0';
    out = sh("SLURM_TIME_FORMAT=%s sacct -c -n -P -o JobID,Start,End");
    assert_non_null(out);
    /* the completion log holds every job: those of the attempts count */
    for (line = strtok_r(out, "\n", &save); line;
         line = strtok_r(NULL, "\n", &save)) {
        if (sscanf(line, "%lld|%lf|%lf", &job, &start, &end) != 3)
            continue;
        snprintf(id, sizeof(id), ",%lld,", job);
        if (strstr(list, id))
            total += end - start;
    }
    free(out);
    free(jobs);
    return total;
}

/* Two 3 s trials queued ~8 s behind jobs that hold every GPU, with
 * `timeout: 6`: their run time starts when Slurm starts them, so none
 * times out; the wait is recorded apart (attempts.queued_seconds,
 * report's queue_seconds), the report's GPU time is sacct's within 5 %,
 * and it never counts more GPUs than the node has. */
static void test_queue_wait_is_not_run_time(void **state)
{
    sw_h h;
    char *file, *out = NULL, *text;
    double busy, queue, gpus, truth;

    (void)state;
    sw_h_init(&h);
    file = sw_h_file(&h, "queued.yaml",
                     "method: grid\nparallel: 2\ntimeout: 6\nretries: 0\n"
                     "resources: {gpus: 1}\n"
                     "command: [/bin/sh, -c, 'sleep 3; echo done']\n"
                     "parameters:\n  i: {values: [1, 2]}\n");
    const char *run[] = {"run", file, "--quiet", "--backend", "slurm", NULL};
    hold_all_gpus(8);
    assert_int_equal(sw_h_run(&h, run, NULL), 0);
    assert_int_equal(sw_h_count(&h, "select count(*) from attempts where "
                                    "outcome = 'finished' and "
                                    "queued_seconds >= 3 and job glob "
                                    "'[0-9]*'"),
                     2);
    assert_int_equal(sw_h_count(&h, "select count(*) from attempts a join "
                                    "runs r on r.id = a.run_id where "
                                    "a.job = r.job"),
                     2);
    const char *report[] = {"report", "--json", NULL};
    assert_int_equal(sw_h_run(&h, report, &out), 0);
    text = strstr(out, "\"gpu_seconds_busy\"");
    assert_non_null(text);
    busy = strtod(strchr(text, ':') + 1, NULL);
    text = strstr(out, "\"queue_seconds\"");
    assert_non_null(text);
    queue = strtod(strchr(text, ':') + 1, NULL);
    text = strstr(out, "\"gpus\"");
    gpus = strtod(strchr(text, ':') + 1, NULL);
    truth = sacct_gpu_seconds(&h);
    fprintf(stderr,
            "queued sweep: report %.2f GPU-s, sacct %.2f GPU-s, queue wait "
            "%.1f s, gpus %g\n",
            busy, truth, queue, gpus);
    assert_true(truth > 5);
    assert_true(busy >= truth * 0.95 && busy <= truth * 1.05);
    assert_true(queue >= 6);
    assert_true(gpus <= 4);
    free(out);
    out = NULL;
    const char *text_report[] = {"report", NULL};
    assert_int_equal(sw_h_run(&h, text_report, &out), 0);
    assert_non_null(strstr(out, "queue wait"));
    free(out);
    free(file);
    sw_h_dispose(&h);
}

/* A job held by a DOWN partition: `sweep ls` says it is queued and why,
 * `sweep show --json` gives pending_reason, the wait is said once past
 * the sweep file's pending_notice, and one Ctrl-C cancels it at once. */
static void test_pending_job_says_why(void **state)
{
    sw_h h;
    char *file, *out = NULL, *id, *err, *p;
    pid_t pid;
    int rc, said = 0;

    (void)state;
    sw_h_init(&h);
    assert_int_equal(sh_status("scontrol update partitionname=short "
                               "state=down"),
                     0);
    file = sw_h_file(&h, "down.yaml",
                     "method: grid\n"
                     "slurm: {partition: short, pending_notice: 2}\n"
                     "command: [/bin/sh, -c, 'echo ran']\n"
                     "parameters:\n  i: {value: 1}\n");
    const char *run[] = {"run",       file,    "--listen", "0.0.0.0:0",
                         "--backend", "slurm", NULL};
    pid = background = sw_h_start(&h, run);
    for (int i = 0; i < 100 && sw_h_count(&h, "select count(*) from runs "
                                              "where job is not null") != 1;
         i++)
        nap(0.2);
    id = query(&h, "select id from runs");
    p = strchr(id, '\n') + 1;
    p[strcspn(p, "\r\n")] = '\0';
    char *sweep_id = sw_strndup(p, (size_t)(strrchr(p, '-') - p));
    for (int i = 0; i < 100; i++, nap(0.2)) {
        free(out);
        out = NULL;
        const char *ls[] = {"ls", sweep_id, NULL};
        if (sw_h_run(&h, ls, &out) == 0 && strstr(out, "PartitionDown"))
            break;
    }
    if (!strstr(out, "queued") || !strstr(out, "PartitionDown"))
        fail_msg("sweep ls does not say why:\n%s", out);
    free(out);
    out = NULL;
    const char *show[] = {"show", p, "--json", NULL};
    assert_int_equal(sw_h_run(&h, show, &out), 0);
    assert_non_null(strstr(out, "\"pending_reason\": \"PartitionDown\""));
    nap(3);
    kill(pid, SIGINT);
    rc = sw_h_wait(pid, 10);
    background = 0;
    assert_int_equal(rc, 130); /* interrupted by SIGINT */
    err = take_stderr(&h);
    for (char *q = err; (q = strstr(q, "waited")) != NULL; q++)
        said++;
    if (said != 1 || !strstr(err, "PartitionDown"))
        fail_msg("the wait is not said once:\n%s", err);
    assert_non_null(strstr(err, "canceling 1 jobs still queued"));
    char *cmd = sw_aprintf("squeue -h -n %s -t pending,running -o %%i", p);
    assert_true(wait_output(cmd, "", 1));
    char *left = sh(cmd);
    assert_string_equal(left ? left : "", "");
    free(left);
    free(cmd);
    assert_int_equal(sw_h_count(&h, "select count(*) from runs where state "
                                    "= 'canceled' and reason = "
                                    "'interrupted'"),
                     1);
    sh_status("scontrol update partitionname=short state=up");
    free(err);
    free(id);
    free(sweep_id);
    free(out);
    free(file);
    sw_h_dispose(&h);
}

/* Slurm's own words: sbatch's whole error (the line that names the bad
 * option), and a Slurm time limit's end named TIMEOUT in the run's
 * reason, with its status; every submit failing is a failure (exit 1). */
static void test_slurms_words_are_kept(void **state)
{
    sw_h h;
    char *file, *err;

    (void)state;
    sw_h_init(&h);
    file = gpu_sweep(&h, "0", "1,2,3");
    const char *bad[] = {"run",       file,    "--quiet",
                         "--backend", "slurm", "--slurm-arg=--no-such-opt",
                         NULL};
    assert_int_equal(sw_h_run(&h, bad, NULL), 1);
    err = take_stderr(&h);
    if (!strstr(err, "unrecognized option") || !strstr(err, "no-such-opt"))
        fail_msg("sbatch's words are lost:\n%s", err);
    free(err);
    assert_int_equal(sw_h_count(&h, "select count(*) from runs where reason "
                                    "like '%unrecognized option%'"),
                     3);
    free(file);
    /* Slurm's time limit (1 minute) ends the job: TIMEOUT, said */
    sw_test_rm_tree(h.home);
    file = sw_h_file(&h, "limit.yaml",
                     "method: grid\nretries: 0\nslurm: {time: 1}\n"
                     "command: [/bin/sleep, '300']\n"
                     "parameters:\n  i: {value: 1}\n");
    const char *limit[] = {"run", file, "--quiet", "--backend", "slurm", NULL};
    sw_h_run(&h, limit, NULL);
    assert_int_equal(sw_h_count(&h, "select count(*) from attempts where "
                                    "reason like 'Slurm job % ended "
                                    "TIMEOUT%, %' and job glob '[0-9]*'"),
                     1);
    free(file);
    sw_h_dispose(&h);
}

/* GPUs asked in slurm.extra beside resources are refused, with the
 * reason; --array's refusal says why it cannot be used. */
static void test_gpu_options_are_refused(void **state)
{
    sw_h h;
    char *file, *err;

    (void)state;
    sw_h_init(&h);
    file = sw_h_file(&h, "extra.yaml",
                     "method: grid\nresources: {gpus: 1}\n"
                     "slurm: {extra: [--gres=gpu:2, --array=1-3]}\n"
                     "command: [/bin/true]\n"
                     "parameters:\n  i: {value: 1}\n");
    const char *run[] = {"run", file, "--backend", "slurm", NULL};
    assert_int_equal(sw_h_run(&h, run, NULL), 2);
    err = take_stderr(&h);
    if (!strstr(err, "'--gres=gpu:2': ask for GPUs with `resources") ||
        !strstr(err, "--array cannot be used") ||
        strstr(err, "sets --array itself"))
        fail_msg("not refused as it should be:\n%s", err);
    free(err);
    free(file);
    sw_h_dispose(&h);
}

/* Submissions paced (slurm: submit_rate: 1, five trials at once: at
 * least 3 s from the first sbatch to the last, by Slurm's SubmitTime), cancels
 * of a wave in one scancel (a logging scancel first on PATH, the real one
 * behind it), and the warning that trials on other nodes cannot reach a
 * loopback metrics server. */
static void test_gentle_on_the_controller(void **state)
{
    sw_h h;
    char *file, *bin, *wrapper, *path, *log, *err, *out;
    double first = 0, last = 0, t;
    long scancels = 0;
    pid_t pid;

    (void)state;
    sw_h_init(&h);
    bin = sw_aprintf("%s/bin", h.dir);
    mkdir(bin, 0755);
    wrapper = sw_aprintf("#!/bin/sh\necho \"$@\" >> %s/scancel.log\n"
                         "exec %s \"$@\"\n",
                         h.dir, "/usr/bin/scancel");
    free(sw_h_file(&h, "bin/scancel", wrapper));
    path = sw_aprintf("chmod +x %s/scancel", bin);
    sh_status(path);
    free(path);
    path = sw_aprintf("%s:%s", bin, getenv("PATH"));
    char *old_path = sw_strdup(getenv("PATH"));
    setenv("PATH", path, 1); /* setenv copies it */
    free(path);
    file = sw_h_file(&h, "paced.yaml",
                     "method: grid\nparallel: 10\nresources: {gpus: 1}\n"
                     "slurm: {submit_rate: 1}\n"
                     "command: [/bin/sh, -c, 'sleep 30']\n"
                     "parameters:\n"
                     "  i: {values: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]}\n");
    const char *run[] = {"run", file, "--backend", "slurm", NULL};
    hold_all_gpus(60);
    pid = background = sw_h_start(&h, run);
    /* five submitted (the first-failures rule lets five unproven
     * attempts start before a run finishes): each waits behind the
     * blocker */
    char *names = sw_aprintf("squeue -h -t pending -o %%j | grep -c -- -");
    for (int i = 0; i < 150; i++, nap(0.2)) {
        out = sh(names);
        long n = out ? strtol(out, NULL, 10) : 0;
        free(out);
        if (n >= 5)
            break;
    }
    free(names);
    char *ids = query(&h, "select group_concat(id) from runs");
    char *list = strchr(ids, '\n') + 1; /* CSV: quoted, for its commas */

    list += *list == '"';
    list[strcspn(list, "\"\r\n")] = '\0';
    char *submits = sw_aprintf("SLURM_TIME_FORMAT=%%s squeue -h -t pending "
                               "-n %s -O SubmitTime:0",
                               list);
    out = sh(submits);
    free(submits);
    free(ids);
    assert_non_null(out);
    for (char *line = out; *line; line = strchr(line, '\n') + 1) {
        t = strtod(line, NULL);
        if (t > 0 && (first == 0 || t < first))
            first = t;
        if (t > last)
            last = t;
        if (!strchr(line, '\n'))
            break;
    }
    free(out);
    fprintf(stderr,
            "5 submissions at submit_rate 1: %.0f s first to "
            "last\n",
            last - first);
    assert_true(last - first >= 3);
    /* one Ctrl-C: the five queued jobs are cancelled in one scancel */
    kill(pid, SIGINT);
    assert_int_equal(sw_h_wait(pid, 20), 130);
    background = 0;
    path = sw_aprintf("%s/scancel.log", h.dir);
    log = sw_test_slurp(path, NULL);
    assert_non_null(log);
    for (char *q = log; (q = strchr(q, '\n')) != NULL; q++)
        scancels++;
    fprintf(stderr, "5 queued jobs cancelled with %ld scancel(s)\n", scancels);
    assert_int_equal(scancels, 1);
    free(log);
    free(path);
    setenv("PATH", old_path, 1);
    sh_status("scancel -n blocker");
    err = take_stderr(&h);
    if (!strstr(err, "loopback") || !strstr(err, "--listen 0.0.0.0:"))
        fail_msg("no warning about the loopback server:\n%s", err);
    free(err);
    free(old_path);
    free(file);
    free(wrapper);
    free(bin);
    sw_h_dispose(&h);
}

static char *cluster_cmd(const char *what)
{
    return sw_aprintf("bash '%s/slurm/cluster.sh' %s '%s'",
                      getenv("SW_TEST_DATA"), what, cluster);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_results_as_local),
        cmocka_unit_test(test_gpu_requests_are_honoured),
        cmocka_unit_test(test_impossible_requests_are_refused),
        cmocka_unit_test_teardown(test_scancel_from_outside_is_retried,
                                  kill_background),
        cmocka_unit_test_teardown(test_node_failure_reruns_the_trial,
                                  kill_background),
        cmocka_unit_test_teardown(test_resume_after_sigkill_adopts_jobs,
                                  kill_background),
        cmocka_unit_test(test_early_stopping_through_the_metrics_server),
        cmocka_unit_test(test_queue_wait_is_not_run_time),
        cmocka_unit_test_teardown(test_pending_job_says_why, kill_background),
        cmocka_unit_test(test_slurms_words_are_kept),
        cmocka_unit_test(test_gpu_options_are_refused),
        cmocka_unit_test_teardown(test_gentle_on_the_controller,
                                  kill_background),
    };
    char *cmd, *conf;
    int rc;

    if (!mkdtemp(cluster))
        return 1;
    cmd = cluster_cmd("start");
    rc = sh_status(cmd);
    free(cmd);
    if (rc != 0) {
        fprintf(stderr,
                "test_slurm: no Slurm cluster (cluster.sh start: "
                "exit %d): skipped\n",
                rc);
        sw_test_rm_tree(cluster);
        return rc == 77 ? 77 : 1;
    }
    conf = sw_aprintf("%s/slurm.conf", cluster);
    setenv("SLURM_CONF", conf, 1);
    setenv("SWEEP_GIT", "off", 1);
    rc = cmocka_run_group_tests(tests, NULL, NULL);
    cmd = cluster_cmd("stop");
    sh_status(cmd);
    free(cmd);
    free(conf);
    sw_test_rm_tree(cluster);
    return rc;
}
