/*
 * test_run.c - `sweep run` end to end with real processes and a real
 * SQLite store: a 24-trial grid 4 at a time, literal argv, retries from a
 * checkpoint, timeouts, read-only queries, and a chaos test that kills
 * the orchestrator with SIGKILL again and again, resuming after each.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "testutil.h"
#include "search/rng.h"
#include "sweeps/buf.h"

static char *toy_sweep(const sw_h *h, const char *extra, const char *params)
{
    char *text = sw_aprintf("program: %s\nmethod: grid\nmetric:\n  name: "
                            "loss\n  goal: minimize\ncommand:\n  - ${program}\n"
                            "  - ${args}\n%s\nparameters:\n%s",
                            sw_h_toy(), extra, params);
    char *path = sw_h_file(h, "sweep.yaml", text);

    free(text);
    return path;
}

static void test_grid_of_24_runs_to_the_end(void **state)
{
    sw_h h;
    char *file, *out = NULL;

    (void)state;
    sw_h_init(&h);
    file = toy_sweep(&h, "parallel: 4",
                     "  x: {values: [0, 1, 2, 3, 4, 5]}\n"
                     "  y: {values: [-2, -1, 0, 1]}\n"
                     "  steps: {value: 3}\n  sleep: {value: 0.01}\n");
    const char *run[] = {"run", file, "--quiet", NULL};
    assert_int_equal(sw_h_run(&h, run, NULL), 0);
    assert_int_equal(sw_h_count(&h, "select count(*) from runs"), 24);
    assert_int_equal(sw_h_count(&h, "select count(*) from runs where state "
                                    "= 'finished' and exit_code = 0 and "
                                    "started_at <= ended_at"),
                     24);
    assert_int_equal(sw_h_count(&h, "select count(*) from metrics where "
                                    "name = 'loss'"),
                     72);
    const char *best[] = {"best", "--json", NULL};
    assert_int_equal(sw_h_run(&h, best, &out), 0);
    assert_non_null(strstr(out, "\"x\": 3, \"y\": -1"));
    free(out);
    const char *q[] = {"query", "select count(*) from runs", NULL};
    assert_int_equal(sw_h_run(&h, q, &out), 0);
    assert_non_null(strstr(out, "24"));
    free(out);
    free(file);
    sw_h_dispose(&h);
}

static void test_values_reach_the_trial_literally(void **state)
{
    sw_h h;
    char *file, *runs, *path, *text;
    sw_buf b = SW_BUF_INIT;
    struct dirent *e;
    DIR *d;

    (void)state;
    sw_h_init(&h);
    file = sw_h_file(
        &h, "inj.yaml",
        "method: grid\ncommand:\n  - /usr/bin/printf\n"
        "  - '%s\\n'\n  - ${args_no_hyphens}\nparameters:\n  cmd:\n    values: "
        "['x; rm -rf ~', '$(reboot)', '`id`']\n");
    const char *run[] = {"run", file, "--quiet", NULL};
    assert_int_equal(sw_h_run(&h, run, NULL), 0);
    runs = sw_aprintf("%s/runs", h.home);
    d = opendir(runs);
    assert_non_null(d);
    while ((e = readdir(d)) != NULL) { /* every run's output, together */
        path = sw_aprintf("%s/%s/stdout.log", runs, e->d_name);
        if ((text = sw_test_slurp(path, NULL)) != NULL)
            sw_buf_puts(&b, text);
        free(text);
        free(path);
    }
    closedir(d);
    assert_non_null(strstr(sw_buf_cstr(&b), "cmd=x; rm -rf ~\n"));
    assert_non_null(strstr(sw_buf_cstr(&b), "cmd=$(reboot)\n"));
    assert_non_null(strstr(sw_buf_cstr(&b), "cmd=`id`\n"));
    sw_buf_dispose(&b);
    free(runs);
    free(file);
    sw_h_dispose(&h);
}

static void test_query_is_read_only(void **state)
{
    static const char *const refused[] = {
        "delete from runs",
        "drop table runs",
        "insert into sweeps(id) "
        "values ('x')",
        "attach database '/tmp/sweep-evil.db' as e",
        "pragma journal_mode=delete",
        "select 1; delete from runs",
        "update runs set state = 'failed'"};
    sw_h h;
    char *file;
    size_t i;

    (void)state;
    sw_h_init(&h);
    file = toy_sweep(&h, "", "  x: {values: [1, 2]}\n  steps: {value: 1}\n");
    const char *run[] = {"run", file, "--quiet", NULL};
    assert_int_equal(sw_h_run(&h, run, NULL), 0);
    for (i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
        const char *q[] = {"query", refused[i], NULL};
        assert_int_equal(sw_h_run(&h, q, NULL), 1);
    }
    const char *bad[] = {"query", "selec 1", NULL};
    assert_int_equal(sw_h_run(&h, bad, NULL), 1);
    assert_int_equal(sw_h_count(&h, "select count(*) from runs where state "
                                    "= 'finished'"),
                     2);
    assert_int_equal(access("/tmp/sweep-evil.db", F_OK), -1);
    free(file);
    sw_h_dispose(&h);
}

static void test_retry_resumes_from_checkpoint(void **state)
{
    sw_h h;
    char *file;

    (void)state;
    sw_h_init(&h);
    file = toy_sweep(&h, "retries: 1",
                     "  x: {value: 3}\n  steps: {value: 4}\n"
                     "  fail: {value: 3}\n  sleep: {value: 0.01}\n");
    const char *run[] = {"run", file, "--quiet", NULL};
    assert_int_equal(sw_h_run(&h, run, NULL), 0);
    assert_int_equal(sw_h_count(&h, "select attempts from runs"), 2);
    assert_int_equal(sw_h_count(&h, "select count(*) from runs where state "
                                    "= 'finished'"),
                     1);
    /* steps 1, 2 before the failure; 3, 4 after: nothing run twice */
    assert_int_equal(sw_h_count(&h, "select count(*) from metrics"), 4);
    assert_int_equal(sw_h_count(&h, "select count(distinct step) from "
                                    "metrics"),
                     4);
    free(file);
    sw_h_dispose(&h);
}

static void test_timeout_cancels_and_says_why(void **state)
{
    sw_h h;
    char *file;

    (void)state;
    sw_h_init(&h);
    file = toy_sweep(&h, "timeout: 0.5",
                     "  steps: {value: 100}\n  sleep: {value: 0.1}\n");
    const char *run[] = {"run", file, "--quiet", NULL};
    /* its one run failed: the sweep did not do its job (exit 1) */
    assert_int_equal(sw_h_run(&h, run, NULL), 1);
    assert_int_equal(sw_h_count(&h, "select count(*) from runs where state "
                                    "= 'failed' and reason like 'timeout%'"),
                     1);
    assert_int_equal(
        sw_h_count(&h, "select count(*) from sweeps where state = 'failed'"),
        1);
    free(file);
    sw_h_dispose(&h);
}

/* Waits (10 s at most) until the sweep has a run in `state`, so that
 * what the test does next happens mid-sweep however loaded the machine
 * is. */
static void wait_state(const sw_h *h, const char *state)
{
    struct timespec ts = {0, 20 * 1000 * 1000};
    char *sql =
        sw_aprintf("select count(*) from runs where state = '%s'", state);
    int i;

    for (i = 0; i < 500; i++) {
        if (sw_h_count(h, sql) > 0) {
            free(sql);
            return;
        }
        nanosleep(&ts, NULL);
    }
    fail_msg("no run %s in 10 s", state);
}

static void wait_running(const sw_h *h)
{
    wait_state(h, "running");
}

/* Two orchestrators never run one sweep: a resume while `sweep run` is
 * still going is refused, and changes nothing. */
static void test_one_orchestrator_per_sweep(void **state)
{
    const char *resume[] = {"resume", "--quiet", NULL};
    sw_h h;
    char *file;
    pid_t pid;

    (void)state;
    sw_h_init(&h);
    file = toy_sweep(&h, "parallel: 2",
                     "  x: {values: [1, 2, 3, 4]}\n  steps: {value: 3}\n"
                     "  sleep: {value: 0.1}\n");
    const char *run[] = {"run", file, "--quiet", NULL};
    pid = sw_h_start(&h, run);
    wait_running(&h);
    assert_int_equal(sw_h_run(&h, resume, NULL), 1);
    assert_int_equal(sw_h_wait(pid, 60), 0);
    assert_int_equal(sw_h_count(&h, "select count(*) from runs where state"
                                    " = 'finished' and attempts = 1"),
                     4);
    free(file);
    sw_h_dispose(&h);
}

/* An unknown backend is a usage error, and no sweep is made. */
static void test_unknown_backend_is_refused(void **state)
{
    sw_h h;
    char *file;

    (void)state;
    sw_h_init(&h);
    file = sw_h_file(&h, "s.yaml",
                     "method: grid\ncommand: [/bin/true]\n"
                     "parameters:\n  x: {values: [1, 2]}\n");
    const char *run[] = {"run", file, "--backend", "nope", "--quiet", NULL};
    assert_int_equal(sw_h_run(&h, run, NULL), 2);
    assert_true(sw_h_count(&h, "select count(*) from sweeps") <= 0);
    free(file);
    /* a grid the search cannot hold: refused before anything is made,
     * not left `running` (issue 13, item 12) */
    file = sw_h_file(&h, "big.yaml",
                     "method: grid\ncommand: [/bin/true]\nparameters:\n"
                     "  x: {distribution: q_uniform, min: 0, max: 1.0e+30,"
                     " q: 1.0e-10}\n");
    const char *big[] = {"run", file, "--quiet", NULL};
    assert_int_equal(sw_h_run(&h, big, NULL), 2);
    assert_true(sw_h_count(&h, "select count(*) from sweeps") <= 0);
    free(file);
    sw_h_dispose(&h);
}

/* A file written for wandb.agent(function=...) has neither program nor
 * command: it runs with the command given after --, and a resume after a
 * crash runs the rest with that same command. */
static void test_command_after_double_dash(void **state)
{
    const char *resume[] = {"resume", "--quiet", NULL};
    sw_h h;
    char *file;
    pid_t pid;

    (void)state;
    sw_h_init(&h);
    file = sw_h_file(&h, "agent.yaml",
                     "method: grid\nparameters:\n  x: {values: [1, 2, 3]}\n");
    const char *bare[] = {"run", file, "--quiet", NULL};
    assert_int_equal(sw_h_run(&h, bare, NULL), 2);
    const char *run[] = {"run",
                         file,
                         "--quiet",
                         "--",
                         "/bin/sh",
                         "-c",
                         "sleep 0.3; echo \"$0\" > x",
                         NULL};
    pid = sw_h_start(&h, run);
    assert_true(pid > 0);
    wait_state(&h, "finished");
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    assert_int_equal(sw_h_run(&h, resume, NULL), 0);
    assert_int_equal(sw_h_count(&h, "select count(*) from runs where state"
                                    " = 'finished' and argv ->> '$[0]' ="
                                    " '/bin/sh' and argv ->> '$[3]' like"
                                    " '--x=_'"),
                     3);
    free(file);
    sw_h_dispose(&h);
}

/* A command that cannot work stops a sweep after its first five runs,
 * not after a night of them; once it is fixed, resume runs them again. */
static void test_first_failures_stop_the_sweep(void **state)
{
    const char *resume[] = {"resume", "--quiet", NULL};
    sw_h h;
    char *file, *text, *flag;

    (void)state;
    sw_h_init(&h);
    flag = sw_aprintf("%s/fixed", h.dir);
    text = sw_aprintf("method: grid\nparallel: 2\ncommand: [/bin/sh, -c, "
                      "'test -f %s || exit 2']\nparameters:\n  x: {values: "
                      "[1, 2, 3, 4, 5, 6, 7, 8]}\n",
                      flag);
    file = sw_h_file(&h, "bad.yaml", text);
    const char *run[] = {"run", file, "--quiet", NULL};
    assert_int_equal(sw_h_run(&h, run, NULL), 1);
    /* the fifth failure stops launching; the run beside it may end too */
    assert_in_range(sw_h_count(&h, "select count(*) from runs"), 5, 6);
    assert_int_equal(sw_h_count(&h, "select count(*) from runs where state"
                                    " != 'failed'"),
                     0);
    assert_int_equal(sw_h_count(&h, "select count(*) from sweeps where state"
                                    " = 'failed'"),
                     1);
    free(sw_h_file(&h, "fixed", ""));
    assert_int_equal(sw_h_run(&h, resume, NULL), 0);
    assert_int_equal(sw_h_count(&h, "select count(*) from runs where state"
                                    " = 'finished'"),
                     8);
    free(flag);
    free(text);
    free(file);
    sw_h_dispose(&h);
}

/* Ctrl-C once: nothing new starts, running trials finish, the sweep is
 * left interrupted; twice: running trials are canceled. Resume finishes
 * either way. */
static void interrupt(const sw_h *h, const char *file, int times)
{
    const char *run[] = {"run", file, "--quiet", NULL};
    struct timespec ts = {0, 50 * 1000 * 1000};
    pid_t pid = sw_h_start(h, run);
    int i;

    assert_true(pid > 0);
    wait_running(h);
    for (i = 0; i < times; i++) {
        kill(pid, SIGINT);
        nanosleep(&ts, NULL);
    }
    /* interrupted, as a shell reports a command Ctrl-C ended */
    assert_int_equal(sw_h_wait(pid, 60), 130);
}

static void test_ctrl_c_leaves_a_resumable_sweep(void **state)
{
    static const char params[] = "  x: {values: [0, 1, 2, 3, 4, 5]}\n"
                                 "  steps: {value: 4}\n"
                                 "  sleep: {value: 0.1}\n";
    const char *resume[] = {"resume", "--quiet", NULL};
    sw_h h;
    char *file;
    int times;

    (void)state;
    for (times = 1; times <= 2; times++) {
        sw_h_init(&h);
        file = toy_sweep(&h, "parallel: 2", params);
        interrupt(&h, file, times);
        assert_int_equal(sw_h_count(&h, "select count(*) from sweeps where "
                                        "state = 'interrupted'"),
                         1);
        assert_true(sw_h_count(&h, "select count(*) from runs") < 6);
        if (times == 1)
            assert_int_equal(sw_h_count(&h, "select count(*) from runs "
                                            "where state != 'finished'"),
                             0);
        else
            assert_true(sw_h_count(&h, "select count(*) from runs where "
                                       "state = 'canceled' and reason = "
                                       "'interrupted'") > 0);
        assert_int_equal(sw_h_run(&h, resume, NULL), 0);
        assert_int_equal(sw_h_count(&h, "select count(*) from runs where "
                                        "state = 'finished'"),
                         6);
        assert_int_equal(sw_h_count(&h, "select count(*) from sweeps where "
                                        "state = 'finished'"),
                         1);
        free(file);
        sw_h_dispose(&h);
    }
}

/* The supervisor dies mid-sweep (OOM killer, a stray kill): its trials
 * go on under their shims, which record their ends; none is lost or
 * rerun, and the next launches start a new supervisor. */
static void test_supervisor_killed_loses_nothing(void **state)
{
    const char *sup = "select cast(substr(job, 1, instr(job, ' ') - 1) as"
                      " integer) from runs where state = 'running' and job"
                      " is not null limit 1";
    sw_h h;
    char *file;
    pid_t pid;
    long supervisor;

    (void)state;
    sw_h_init(&h);
    file = toy_sweep(&h, "parallel: 2",
                     "  x: {values: [0, 1, 2, 3, 4, 5]}\n"
                     "  steps: {value: 3}\n  sleep: {value: 0.3}\n");
    const char *run[] = {"run", file, "--quiet", NULL};
    pid = sw_h_start(&h, run);
    assert_true(pid > 0);
    wait_running(&h);
    supervisor = sw_h_count(&h, sup);
    assert_true(supervisor > 1);
    assert_int_equal(kill((pid_t)supervisor, SIGKILL), 0);
    assert_int_equal(sw_h_wait(pid, 60), 0);
    assert_int_equal(sw_h_count(&h, "select count(*) from runs where state"
                                    " = 'finished'"),
                     6);
    assert_int_equal(sw_h_count(&h, "select sum(lost) from runs"), 0);
    assert_int_equal(sw_h_count(&h, "select sum(attempts) from runs"), 6);
    free(file);
    sw_h_dispose(&h);
}

/* Bayesian and TPE sweeps run end to end, learn from each result, and
 * resume after a SIGKILL without repeating or losing a run. */
static void test_adaptive_methods_run_and_resume(void **state)
{
    static const char *const methods[] = {"bayes", "tpe"};
    const char *resume[] = {"resume", "--quiet", NULL};
    char *file, *text;
    sw_h h;
    pid_t pid;
    size_t i;

    (void)state;
    for (i = 0; i < 2; i++) {
        sw_h_init(&h);
        text = sw_aprintf(
            "program: %s\nmethod: %s\nrun_cap: 10\nparallel: 2\nseed: 3\n"
            "metric: {name: loss, goal: minimize}\ncommand:\n"
            "  - ${program}\n  - ${args}\nparameters:\n"
            "  x: {min: -5.0, max: 5.0}\n  y: {min: -5.0, max: 5.0}\n"
            "  steps: {value: 2}\n  sleep: {value: 0.05}\n",
            sw_h_toy(), methods[i]);
        file = sw_h_file(&h, "adaptive.yaml", text);
        const char *run[] = {"run", file, "--quiet", NULL};
        pid = sw_h_start(&h, run);
        wait_state(&h, "finished"); /* it has learned something */
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        assert_int_equal(sw_h_run(&h, resume, NULL), 0);
        assert_int_equal(sw_h_count(&h, "select count(*) from runs"), 10);
        assert_int_equal(sw_h_count(&h, "select count(*) from runs where "
                                        "state = 'finished' and value is "
                                        "not null"),
                         10);
        assert_int_equal(sw_h_count(&h, "select count(distinct params) from "
                                        "runs"),
                         10);
        free(text);
        free(file);
        sw_h_dispose(&h);
    }
}

/* Kills the orchestrator at random moments, resuming after each kill. */
/* Waits (30 s at most) until the store holds the sweep: a `sweep run`
 * killed before that leaves nothing to resume. */
static void wait_sweep(const sw_h *h)
{
    struct timespec ts = {0, 10 * 1000 * 1000};

    for (int i = 0; i < 3000; i++) {
        if (sw_h_count(h, "select count(*) from sweeps") > 0)
            return;
        nanosleep(&ts, NULL);
    }
    fail_msg("the sweep was never stored");
}

static void test_chaos_sigkill_and_resume(void **state)
{
    sw_h h;
    sw_rng rng;
    char *file;
    pid_t pid;
    int i;

    (void)state;
    sw_h_init(&h);
    sw_rng_seed(&rng, 2026, 0);
    file = toy_sweep(&h, "parallel: 3",
                     "  x: {values: [0, 1, 2, 3]}\n  y: {values: [0, 1, 2]}\n"
                     "  steps: {value: 4}\n  sleep: {value: 0.05}\n");
    for (i = 0; i < 12; i++) {
        const char *run[] = {"run", file, "--quiet", NULL};
        const char *resume[] = {"resume", "--quiet", NULL};
        struct timespec ts = {0,
                              (long)(50 + sw_rng_below(&rng, 450)) * 1000000L};
        pid = sw_h_start(&h, i == 0 ? run : resume);
        assert_true(pid > 0);
        if (i == 0) /* killed once it is a sweep, however slow the build */
            wait_sweep(&h);
        nanosleep(&ts, NULL);
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
    }
    const char *resume[] = {"resume", "--quiet", NULL};
    assert_int_equal(sw_h_run(&h, resume, NULL), 0);
    assert_int_equal(sw_h_count(&h, "select count(*) from runs"), 12);
    assert_int_equal(sw_h_count(&h, "select count(distinct cell) from runs "
                                    "where state = 'finished'"),
                     12);
    assert_int_equal(sw_h_count(&h, "select count(*) from runs where state "
                                    "= 'finished'"),
                     12);
    /* every run reported its last step */
    assert_int_equal(sw_h_count(&h, "select count(distinct run_id) from "
                                    "metrics where step = 4"),
                     12);
    free(file);
    sw_h_dispose(&h);
}

/* The permission bits of `path`; -1 when it does not exist. */
static int mode_of(const char *path)
{
    struct stat st;

    return stat(path, &st) == 0 ? (int)(st.st_mode & 07777) : -1;
}

/* The store and every run's files may hold secrets (argv, config,
 * whatever a trial prints): under the usual umask 022 nobody else may
 * read them. -wal and -shm exist while a writer is open, so only the
 * mode of those that remain is checked. */
static void test_home_is_private_under_umask_022(void **state)
{
    sw_h h;
    char *file, *path;
    const char *wal[] = {"sweep.db", "sweep.db-wal", "sweep.db-shm"};
    const char *per_run[] = {"stdout.log", "stderr.log", "params.json"};
    struct dirent *e;
    size_t n = 0;
    mode_t old = umask(022);
    DIR *d;

    (void)state;
    sw_h_init(&h);
    file = toy_sweep(&h, "", "  x: {values: [1, 2]}\n  steps: {value: 1}\n");
    const char *run[] = {"run", file, "--quiet", NULL};
    assert_int_equal(sw_h_run(&h, run, NULL), 0);
    assert_int_equal(mode_of(h.home), 0700);
    path = sw_aprintf("%s/runs", h.home);
    assert_int_equal(mode_of(path), 0700);
    d = opendir(path);
    assert_non_null(d);
    free(path);
    for (size_t i = 0; i < 3; i++) {
        path = sw_aprintf("%s/%s", h.home, wal[i]);
        assert_true(i > 0 || mode_of(path) == 0600);
        assert_true(mode_of(path) == -1 || mode_of(path) == 0600);
        free(path);
    }
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        path = sw_aprintf("%s/runs/%s", h.home, e->d_name);
        assert_int_equal(mode_of(path), 0700);
        free(path);
        for (size_t i = 0; i < 3; i++) {
            path = sw_aprintf("%s/runs/%s/%s", h.home, e->d_name, per_run[i]);
            assert_int_equal(mode_of(path), 0600);
            free(path);
        }
        n++;
    }
    closedir(d);
    assert_int_equal(n, 2);
    umask(old);
    free(file);
    sw_h_dispose(&h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_grid_of_24_runs_to_the_end),
        cmocka_unit_test(test_values_reach_the_trial_literally),
        cmocka_unit_test(test_query_is_read_only),
        cmocka_unit_test(test_retry_resumes_from_checkpoint),
        cmocka_unit_test(test_timeout_cancels_and_says_why),
        cmocka_unit_test(test_one_orchestrator_per_sweep),
        cmocka_unit_test(test_unknown_backend_is_refused),
        cmocka_unit_test(test_command_after_double_dash),
        cmocka_unit_test(test_first_failures_stop_the_sweep),
        cmocka_unit_test(test_ctrl_c_leaves_a_resumable_sweep),
        cmocka_unit_test(test_supervisor_killed_loses_nothing),
        cmocka_unit_test(test_adaptive_methods_run_and_resume),
        cmocka_unit_test(test_chaos_sigkill_and_resume),
        cmocka_unit_test(test_home_is_private_under_umask_022),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
