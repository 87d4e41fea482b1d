/*
 * test_flood.c - one trial that prints as fast as it can must not stall
 * the engine: through the real binary, a trial printing a million
 * @metrics lines runs beside a calm one with a timeout. The calm run's
 * end is recorded when it exits (not once the flood is read), so it
 * finishes instead of "timing out" behind the flood; and every line of
 * the flood is still stored, once. (Against a sweep that read the whole
 * flood at once, both runs end failed (timeout).) And a flood that
 * outlives its timeout has its end recorded within 1 s of its process's
 * end, its unread backlog skipped past `metrics_backlog` (issue 35).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "harness.h"
#include "testutil.h"
#include "sweeps/buf.h"

#define FLOOD_LINES 1000000
#define SW_TEST_BACKLOG (4 << 20) /* metrics_backlog's default */

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
                      "  lines: {value: %d}\n  sleep: {value: 1}\n"
                      "metrics_backlog: 0\n", /* read it all */
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

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};

    nanosleep(&ts, NULL);
}

/* Whether process `pid` is gone (or a zombie). */
static bool gone(long pid)
{
    char path[64], *text, *p;
    bool dead;

    snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
    text = sw_test_slurp(path, NULL);
    p = text ? strrchr(text, ')') : NULL;
    dead = !text || (p && (p[2] == 'Z' || p[2] == 'X'));
    free(text);
    return dead;
}

/* The flood's pid, once its trial has written it; 0 before. */
static long flood_pid(const sw_h *h)
{
    char *runs = sw_aprintf("%s/runs", h->home), *path, *text = NULL;
    struct dirent *d;
    DIR *dir = opendir(runs);
    long pid = 0;

    while (dir && !text && (d = readdir(dir))) {
        path = sw_aprintf("%s/%s/trial_pid", runs, d->d_name);
        text = sw_test_slurp(path, NULL);
        free(path);
    }
    if (text)
        pid = strtol(text, NULL, 10);
    if (dir)
        closedir(dir);
    free(text);
    free(runs);
    return pid;
}

/* Issue 35: a trial printing @metrics lines as fast as it can until its
 * `timeout: 3` kills it, beside a calm one. The flood's end is in the
 * store within 1 s of its process's end, however much of its output is
 * unread then: past `metrics_backlog` (default 4 MiB) the rest is
 * skipped, said once (naming the run and the bytes), and stays in its
 * log. The calm run's value and end are recorded as they would be
 * alone. (Before, the flood's end waited on tens of MiB of backlog,
 * seconds after its process had gone.) */
static void test_a_timed_out_flood_ends_on_time(void **state)
{
    char *trial, *text, *file, *at, *sql, *err, *log, *p;
    double gone_at = 0, recorded_at = 0, t0;
    long pid = 0, late_ms, skipped, offset;
    int notices = 0;
    sw_h h;
    pid_t sweep;

    (void)state;
    sw_h_init(&h);
    trial = sw_aprintf("%s/cli/flood_trial.py", getenv("SW_TEST_DATA"));
    text = sw_aprintf("method: grid\nparallel: 2\ntimeout: 3\n"
                      "log_limit: 64MiB\n" /* the flood's output, bounded */
                      "command: [/usr/bin/python3, %s]\n"
                      "parameters:\n"
                      "  role: {values: [flood, calm]}\n"
                      "  lines: {value: -1}\n  sleep: {value: 1}\n",
                      trial);
    file = sw_h_file(&h, "sweep.yaml", text);
    const char *run[] = {"run", file, NULL}; /* notices shown */
    sweep = sw_h_start(&h, run);
    for (t0 = now_s(); !pid && now_s() < t0 + 30; sleep_ms(20))
        pid = flood_pid(&h);
    assert_true(pid > 1);
    /* the process's end, then its run's end in the store: each polled
     * every 20 ms (a poll of the store is a `sweep query` process, tens
     * of ms on a loaded machine: inside the 1 s) */
    while (!gone_at && now_s() < t0 + 30) {
        if (gone(pid))
            gone_at = now_s();
        else
            sleep_ms(20);
    }
    assert_true(gone_at > 0);
    while (!recorded_at && now_s() < gone_at + 30) {
        if (sw_h_count(&h, "select count(*) from runs where params like "
                           "'%flood%' and state != 'running'") == 1)
            recorded_at = now_s();
        else
            sleep_ms(20);
    }
    assert_true(recorded_at > 0);
    print_message("the flood's end recorded %.0f ms after its process's\n",
                  (recorded_at - gone_at) * 1000);
    if (recorded_at - gone_at > 1.0)
        fail_msg("the flood's end was recorded %.0f ms after its process "
                 "ended",
                 (recorded_at - gone_at) * 1000);
    assert_int_equal(sw_h_wait(sweep, 60), 0);
    assert_int_equal(sw_h_count(&h, "select count(*) from runs where params "
                                    "like '%flood%' and state = 'failed' and "
                                    "reason like 'timeout%'"),
                     1);

    /* said once, naming the run and the bytes skipped, which stay in its
     * log: the offset read to is the log's end */
    err = sw_aprintf("%s/stderr.txt", h.dir);
    log = sw_test_slurp(err, NULL);
    assert_non_null(log);
    for (p = log; (p = strstr(p, "bytes of output unread at its end")); p++)
        notices++;
    assert_int_equal(notices, 1);
    p = strstr(log, ": skipped ");
    assert_non_null(p);
    skipped = strtol(p + 10, NULL, 10);
    assert_true(skipped > SW_TEST_BACKLOG);
    assert_true(p - log > 20 && strstr(p - 20, "-1: skipped ") != NULL);
    offset = sw_h_count(&h, "select stdout_offset from runs where params "
                            "like '%flood%'");
    assert_true(offset >= skipped);
    free(log);
    free(err);

    /* the calm one: its value and its end, when it exited */
    assert_int_equal(sw_h_count(&h, "select count(*) from runs r join "
                                    "metrics m on m.run_id = r.id where "
                                    "r.params like '%calm%' and r.state = "
                                    "'finished' and m.name = 'loss' and "
                                    "m.step = 1 and m.value = 0.1"),
                     1);
    at = calm_exit(&h);
    sql = sw_aprintf("select cast((max(r.ended_at, m.time) - %s) * 1000 as "
                     "integer) from runs r join metrics m on m.run_id = r.id"
                     " where r.params like '%%calm%%'",
                     at);
    late_ms = sw_h_count(&h, sql);
    if (late_ms < 0 || late_ms > 1500) /* generous: a loaded machine */
        fail_msg("the calm run's value or end was recorded %ld ms after it "
                 "exited",
                 late_ms);
    free(sql);
    free(at);
    free(trial);
    free(text);
    free(file);
    sw_h_dispose(&h);
}

/* The devices of an attempt whose process is gone are free at once, for
 * the next trial, while its output is still read: on one GPU (the fake
 * NVML), a flood of 300,000 lines, read whole (`metrics_backlog: 0`:
 * seconds of reading after it exits), then a calm trial that needs the
 * whole GPU. The calm one starts within 1 s of the flood's end, not once
 * the flood is read. (Before, the GPU was held until its last line was
 * stored.) */
static void test_devices_free_when_the_process_is_gone(void **state)
{
    char *trial, *text, *file, *conf;
    long gap_ms;
    sw_h h;

    (void)state;
    if (!getenv("FAKE_NVML_LIB"))
        skip();
    sw_h_init(&h);
    conf = sw_h_file(&h, "nvml.conf",
                     "driver 580.159.04\n"
                     "gpu GPU-a0 150754820096 0 0 0 NVIDIA H200\n");
    setenv("FAKE_NVML_CONFIG", conf, 1);
    setenv("SWEEP_NVML_LIBRARY", getenv("FAKE_NVML_LIB"), 1);
    trial = sw_aprintf("%s/cli/flood_trial.py", getenv("SW_TEST_DATA"));
    text = sw_aprintf("method: grid\nparallel: 2\nmetrics_backlog: 0\n"
                      "resources: {gpus: 1}\n"
                      "command: [/usr/bin/python3, %s]\n"
                      "parameters:\n"
                      "  role: {values: [flood, calm]}\n"
                      "  lines: {value: 300000}\n  sleep: {value: 0}\n",
                      trial);
    file = sw_h_file(&h, "sweep.yaml", text);
    const char *run[] = {"run", file, "--quiet", NULL};
    assert_int_equal(sw_h_run(&h, run, NULL), 0);
    unsetenv("SWEEP_NVML_LIBRARY");
    unsetenv("FAKE_NVML_CONFIG");
    assert_int_equal(sw_h_count(&h, "select count(*) from runs where state "
                                    "= 'finished'"),
                     2);
    /* the flood was read whole, after its end */
    assert_int_equal(sw_h_count(&h, "select count(distinct step) from "
                                    "metrics m join runs r on r.id = "
                                    "m.run_id where r.params like "
                                    "'%flood%'"),
                     300000);
    gap_ms = sw_h_count(&h, "select cast((c.started_at - f.ended_at) * 1000"
                            " as integer) from runs f, runs c where f.params"
                            " like '%flood%' and c.params like '%calm%'");
    print_message("the calm trial started %ld ms after the flood ended\n",
                  gap_ms);
    if (gap_ms < -100 || gap_ms > 1000) /* 1 s: a loaded machine's turn */
        fail_msg("the calm trial started %ld ms after the flood ended", gap_ms);
    free(conf);
    free(trial);
    free(text);
    free(file);
    sw_h_dispose(&h);
}

/* The folder of the sweep's only run (caller frees). */
static char *only_run_dir(const sw_h *h)
{
    char *runs = sw_aprintf("%s/runs", h->home), *dir = NULL;
    struct dirent *d;
    DIR *dp = opendir(runs);

    assert_non_null(dp);
    while (!dir && (d = readdir(dp)))
        if (d->d_name[0] != '.')
            dir = sw_aprintf("%s/%s", runs, d->d_name);
    closedir(dp);
    free(runs);
    assert_non_null(dir);
    return dir;
}

/* Lines of `text` that start with `prefix`. */
static int lines_starting(const char *text, const char *prefix)
{
    size_t n = strlen(prefix);
    int count = 0;
    const char *p;

    for (p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
        count += strncmp(p, prefix, n) == 0;
    return count;
}

/* A run's logs stop at `log_limit`: a trial printing 300 kB to each of
 * stdout and stderr under a 100,000-byte limit leaves each log at the
 * limit and one marker line, `sweep` says so once, the rest (an
 * @metrics line among it) is dropped, and the trial goes on to its end,
 * finished. (Before, the logs took all it printed.) */
static void test_log_limit(void **state)
{
    static const char *mark = "@sweep log_limit: ";
    char *ledger, *script, *trial, *text, *file, *dir, *path, *log, *err;
    size_t len = 0;
    int i;
    sw_h h;

    (void)state;
    sw_h_init(&h);
    ledger = sw_aprintf("%s/ledger", h.dir);
    script = sw_aprintf("yes 'a line of output, printed again and again' |"
                        " head -c 300000\n"
                        "yes 'a line of errors' | head -c 300000 >&2\n"
                        "echo '@metrics {\"step\": 1, \"late\": 1}'\n"
                        "echo done >> '%s'\n",
                        ledger);
    trial = sw_h_file(&h, "trial.sh", script);
    text = sw_aprintf("method: grid\nlog_limit: 100000\n"
                      "command: [/bin/sh, %s]\n"
                      "parameters:\n  x: {value: 1}\n",
                      trial);
    file = sw_h_file(&h, "sweep.yaml", text);
    const char *run[] = {"run", file, NULL}; /* notices shown */
    assert_int_equal(sw_h_run(&h, run, NULL), 0);
    assert_int_equal(sw_h_count(&h, "select count(*) from runs where state "
                                    "= 'finished'"),
                     1);
    log = sw_test_slurp(ledger, NULL);
    assert_string_equal(log, "done\n");
    free(log);
    assert_int_equal(sw_h_count(&h, "select count(*) from metrics"), 0);
    dir = only_run_dir(&h);
    for (i = 0; i < 2; i++) {
        path = sw_aprintf("%s/%s", dir, i ? "stderr.log" : "stdout.log");
        log = sw_test_slurp(path, &len);
        assert_non_null(log);
        if (len < 100000 || len > 100300)
            fail_msg("%s holds %zu bytes, limit 100000", path, len);
        assert_int_equal(lines_starting(log, mark), 1);
        assert_non_null(strstr(log, i ? "stderr.log reached its limit of "
                                        "100000 bytes"
                                      : "stdout.log reached its limit of "
                                        "100000 bytes"));
        free(log);
        free(path);
    }
    err = sw_aprintf("%s/stderr.txt", h.dir);
    log = sw_test_slurp(err, NULL);
    assert_non_null(log);
    assert_non_null(strstr(log, "stdout.log reached its limit"));
    free(log);
    free(err);
    free(dir);
    free(file);
    free(text);
    free(trial);
    free(script);
    free(ledger);
    sw_h_dispose(&h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_flood_stalls_no_other_run),
        cmocka_unit_test(test_a_timed_out_flood_ends_on_time),
        cmocka_unit_test(test_devices_free_when_the_process_is_gone),
        cmocka_unit_test(test_log_limit),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
