/*
 * test_faults.c - the real `sweep` binary against the faults a machine
 * sees (issue 13): its supervisor killed in the middle of a launch, and a
 * full disk, injected (SWEEP_FAULT_NOSPACE, test builds) and, where this
 * process may mount one, a real small tmpfs that fills up. In each, every
 * grid point must run to its end exactly once (each trial appends its
 * run id to a ledger outside the sweep home when it is done), nothing
 * may fail for the machine's fault, and `sweep` must end, saying why,
 * rather than hang; and no run may end `finished` without the value its
 * trial printed (issue 35).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "testutil.h"
#include "sweeps/buf.h"
#include "sweeps/error.h"

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};

    nanosleep(&ts, NULL);
}

/* A grid of n points whose trial sleeps `secs`, then appends its run id
 * to the ledger `ledger`. */
static char *ledger_sweep(const sw_h *h, int n, int parallel, double secs,
                          const char *ledger)
{
    char *script =
        sw_aprintf("sleep %g; echo \"$SWEEP_RUN_ID\" >> '%s'\n", secs, ledger);
    char *trial = sw_h_file(h, "trial.sh", script), *path;
    sw_buf b = SW_BUF_INIT;
    int i;

    sw_buf_printf(&b,
                  "program: %s\nmethod: grid\nparallel: %d\n"
                  "command: [/bin/sh, '${program}']\n"
                  "parameters:\n  x:\n    values: [",
                  trial, parallel);
    for (i = 0; i < n; i++)
        sw_buf_printf(&b, "%s%d", i ? ", " : "", i);
    sw_buf_puts(&b, "]\n");
    path = sw_h_file(h, "sweep.yaml", sw_buf_cstr(&b));
    sw_buf_dispose(&b);
    free(script);
    free(trial);
    return path;
}

/* Asserts that the ledger holds `n` lines, all different: every point
 * ran to its end exactly once. */
static void assert_each_once(const char *ledger, int n)
{
    char *text = sw_test_slurp(ledger, NULL), *line, *next, *seen;
    int lines = 0;

    assert_non_null(text);
    for (line = text; *line; line = next + 1) {
        next = strchr(line, '\n');
        assert_non_null(next);
        *next = '\0';
        seen = strstr(next + 1, line);
        if (seen && (seen[-1] == '\n' || seen[-1] == '\0') &&
            seen[strlen(line)] == '\n')
            fail_msg("%s ran to its end twice", line);
        *next = '\n';
        lines++;
    }
    assert_int_equal(lines, n);
    free(text);
}

/* Process `parent`'s child in state `st` (any state when 0); 0 when it
 * has none. */
static long child_in(long parent, char st)
{
    char path[64], *text, *p;
    long pid, found = 0;

    for (pid = 2; pid < 4194304 && !found; pid++) {
        snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
        if (access(path, F_OK) != 0 || !(text = sw_test_slurp(path, NULL)))
            continue;
        p = strrchr(text, ')');
        if (p && strtol(p + 4, NULL, 10) == parent && (!st || p[2] == st))
            found = pid;
        free(text);
    }
    return found;
}

/* Gone, or a zombie. */
static bool gone(long pid)
{
    char path[64], *text, *p;
    bool dead;
    int i;

    snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
    for (i = 0; i < 300; i++) {
        text = sw_test_slurp(path, NULL);
        p = text ? strrchr(text, ')') : NULL;
        dead = !text || (p && (p[2] == 'Z' || p[2] == 'X'));
        free(text);
        if (dead)
            return true;
        sleep_ms(10);
    }
    return false;
}

/* The supervisor is killed after forking a trial and before its pid
 * file: `sweep` finds the attempt never ran, runs it again under a new
 * supervisor (no retry configured), and every point runs exactly once. */
static void test_supervisor_killed_mid_launch(void **state)
{
    char *flag, *ledger, *file;
    long supervisor = 0, trial;
    sw_h h;
    pid_t pid;
    int i;

    (void)state;
#ifndef SW_FAULT_INJECTION
    skip(); /* a Release build has no fault points */
#endif
    sw_h_init(&h);
    ledger = sw_aprintf("%s/ledger", h.dir);
    flag = sw_h_file(&h, "stop", "");
    file = ledger_sweep(&h, 3, 1, 0.1, ledger);
    setenv("SWEEP_FAULT_LAUNCH_STOP", flag, 1);
    const char *run[] = {"run", file, "--quiet", NULL};
    pid = sw_h_start(&h, run);
    unsetenv("SWEEP_FAULT_LAUNCH_STOP");
    assert_true(pid > 0);
    for (i = 0; i < 1000 && !supervisor; i++) {
        if (access(flag, F_OK) != 0)
            supervisor = child_in(pid, 'T');
        if (!supervisor)
            sleep_ms(10);
    }
    assert_true(supervisor > 0);
    trial = child_in(supervisor, 0); /* held at its gate */
    assert_true(trial > 0);
    assert_int_equal(kill((pid_t)supervisor, SIGKILL), 0);
    assert_int_equal(sw_h_wait(pid, 60), 0);
    assert_true(gone(trial));
    assert_int_equal(sw_h_count(&h, "select count(*) from runs where state"
                                    " = 'finished'"),
                     3);
    assert_int_equal(sw_h_count(&h, "select sum(lost) from runs"), 1);
    assert_each_once(ledger, 3);
    free(file);
    free(flag);
    free(ledger);
    sw_h_dispose(&h);
}

/* Waits until n attempts have started. */
static void wait_started(const sw_h *h, long n)
{
    int i;

    for (i = 0; i < 500; i++) {
        if (sw_h_count(h, "select count(*) from runs where state = "
                          "'running' and job is not null") >= n)
            return;
        sleep_ms(20);
    }
    fail_msg("%ld attempts did not start in 10 s", n);
}

/* How many lines of `path` hold `what`. */
static int lines_with(const char *path, const char *what)
{
    char *text = sw_test_slurp(path, NULL), *p;
    int n = 0;

    for (p = text; p && (p = strstr(p, what)); p++)
        n++;
    free(text);
    return n;
}

/* The disk fills while trials run: the trials' ends are still recorded,
 * `sweep` says so in one line and ends (exit 1) rather than failing runs
 * or waiting, and `sweep resume` finishes every point once there is
 * space. */
static void test_full_disk_injected(void **state)
{
    const char *resume[] = {"resume", "--quiet", NULL};
    char *flag, *ledger, *file, *err;
    sw_h h;
    pid_t pid;

    (void)state;
#ifndef SW_FAULT_INJECTION
    skip(); /* a Release build has no fault points */
#endif
    sw_h_init(&h);
    ledger = sw_aprintf("%s/ledger", h.dir);
    flag = sw_aprintf("%s/full", h.dir);
    err = sw_aprintf("%s/stderr.txt", h.dir);
    file = ledger_sweep(&h, 6, 2, 0.5, ledger);
    setenv("SWEEP_FAULT_NOSPACE", flag, 1);
    const char *run[] = {"run", file, "--quiet", NULL};
    pid = sw_h_start(&h, run);
    unsetenv("SWEEP_FAULT_NOSPACE"); /* its supervisor has it */
    assert_true(pid > 0);
    wait_started(&h, 2);
    free(sw_h_file(&h, "full", ""));
    assert_int_equal(sw_h_wait(pid, 30), 1);
    assert_int_equal(lines_with(err, "No space left on device"), 1);
    assert_int_equal(lines_with(err, "sweep resume"), 1);
    assert_int_equal(sw_h_count(&h, "select count(*) from runs where state"
                                    " = 'failed'"),
                     0);
    /* the first trial to end was recorded; the next launch met the disk */
    assert_true(sw_h_count(&h, "select count(*) from runs where state = "
                               "'finished'") >= 1);
    assert_int_equal(unlink(flag), 0);
    assert_int_equal(sw_h_run(&h, resume, NULL), 0);
    assert_int_equal(sw_h_count(&h, "select count(*) from runs where state"
                                    " = 'finished'"),
                     6);
    assert_each_once(ledger, 6);
    free(file);
    free(flag);
    free(err);
    free(ledger);
    sw_h_dispose(&h);
}

typedef struct {
    sw_h h;
    char *mnt; /* the tmpfs, mounted when `mounted` */
    bool mounted;
} tmpfs_fixture;

/* A 4 MiB tmpfs in a fresh test folder, where this process may mount. */
static int tmpfs_setup(void **state)
{
    tmpfs_fixture *fx = calloc(1, sizeof(*fx));

    sw_h_init(&fx->h);
    fx->mnt = sw_aprintf("%s/mnt", fx->h.dir);
    fx->mounted = mkdir(fx->mnt, 0700) == 0 &&
                  mount("tmpfs", fx->mnt, "tmpfs", 0, "size=4m") == 0;
    *state = fx;
    return 0;
}

/* Unmounts whatever the test left, even after a failure. */
static int tmpfs_teardown(void **state)
{
    tmpfs_fixture *fx = *state;

    if (fx->mounted)
        umount2(fx->mnt, MNT_DETACH);
    setenv("SWEEP_HOME", fx->h.home, 1);
    sw_h_dispose(&fx->h);
    free(fx->mnt);
    free(fx);
    return 0;
}

/* A real full disk: the sweep home on the tmpfs, filled up while trials
 * run. Skipped where this process may not mount. */
static void test_full_disk_tmpfs(void **state)
{
    const char *resume[] = {"resume", "--quiet", NULL};
    tmpfs_fixture *fx = *state;
    char *ledger, *file, *filler, *home, block[65536];
    sw_h *h = &fx->h;
    int fd, rc;
    pid_t pid;

    if (!fx->mounted)
        skip();
    home = sw_aprintf("%s/home", fx->mnt);
    setenv("SWEEP_HOME", home, 1);
    ledger = sw_aprintf("%s/ledger", h->dir);
    filler = sw_aprintf("%s/filler", fx->mnt);
    file = ledger_sweep(h, 8, 2, 0.5, ledger);
    const char *run[] = {"run", file, "--quiet", NULL};
    pid = sw_h_start(h, run);
    wait_started(h, 2);
    fd = open(filler, O_WRONLY | O_CREAT, 0600);
    memset(block, 'x', sizeof(block));
    while (write(fd, block, sizeof(block)) > 0)
        ;
    assert_int_equal(errno, ENOSPC);
    close(fd);
    rc = sw_h_wait(pid, 30); /* it ends, or finishes first: never hangs */
    assert_true(rc == 0 || rc == 1);
    assert_int_equal(unlink(filler), 0);
    if (rc == 1)
        assert_int_equal(sw_h_run(h, resume, NULL), 0);
    assert_int_equal(sw_h_count(h, "select count(*) from runs where state"
                                   " = 'finished'"),
                     8);
    assert_each_once(ledger, 8);
    sleep_ms(300); /* the shims' last exit files */
    free(file);
    free(filler);
    free(ledger);
    free(home);
}

/* The shim of a running trial is SIGKILLed (a stray kill, the OOM
 * killer) while `sweep` and the supervisor live: the trial's end was
 * never recorded, so its attempt is lost, not failed with the shim's
 * signal 9, and the run is run again (no retry configured) to its end. */
static void test_shim_killed_is_rerun(void **state)
{
    const char *q[] = {"query", "--csv",
                       "select job from runs where state = 'running'", NULL};
    char *ledger, *file, *out = NULL, *job;
    long shim, supervisor;
    sw_h h;
    pid_t pid;

    (void)state;
    sw_h_init(&h);
    ledger = sw_aprintf("%s/ledger", h.dir);
    file = ledger_sweep(&h, 2, 1, 2, ledger);
    const char *run[] = {"run", file, "--quiet", NULL};
    pid = sw_h_start(&h, run);
    assert_true(pid > 0);
    wait_started(&h, 1);
    assert_int_equal(sw_h_run(&h, q, &out), 0);
    job = strchr(out, '\n'); /* "SUPERVISOR_PID TRIAL_PGID STARTTIME" */
    assert_non_null(job);
    assert_int_equal(sscanf(job + 1, "%ld %ld", &supervisor, &shim), 2);
    assert_true(shim > 1 && supervisor > 1);
    assert_int_equal(kill((pid_t)shim, SIGKILL), 0);
    assert_int_equal(sw_h_wait(pid, 60), 0);
    assert_int_equal(sw_h_count(&h, "select count(*) from runs where state"
                                    " = 'finished'"),
                     2);
    assert_int_equal(sw_h_count(&h, "select sum(lost) from runs"), 1);
    assert_int_equal(sw_h_count(&h, "select count(*) from attempts where"
                                    " outcome = 'lost'"),
                     1);
    assert_int_equal(sw_h_count(&h, "select count(*) from attempts where"
                                    " outcome = 'failed'"),
                     0);
    assert_each_once(ledger, 2);
    free(out);
    free(file);
    free(ledger);
    sw_h_dispose(&h);
}

/* Trials themselves fill the disk (the sweep home on a 4 MiB tmpfs,
 * each trial writing a 1.5 MB checkpoint, three at a time): a trial that
 * fails with the disk full is not the trial's failure. Its attempt ends
 * `disk`, its run goes back to pending without using a retry, `sweep`
 * launches nothing more and says why (exit 1); once space is freed,
 * `sweep resume` reruns those runs, and every point finishes once.
 * (Before, such runs stayed failed and resume never reran them.) */
static void test_trials_fill_the_disk(void **state)
{
    const char *resume[] = {"resume", "--quiet", NULL};
    tmpfs_fixture *fx = *state;
    char *ledger, *script, *trial, *text, *file, *home, *err, *log, *rm;
    sw_h *h = &fx->h;
    int rc = 1, rounds;

    if (!fx->mounted)
        skip();
    home = sw_aprintf("%s/home", fx->mnt);
    setenv("SWEEP_HOME", home, 1);
    ledger = sw_aprintf("%s/ledger", h->dir);
    err = sw_aprintf("%s/stderr.txt", h->dir);
    script = sw_aprintf("head -c 1500000 /dev/zero > "
                        "\"$SWEEP_CHECKPOINT_DIR/ckpt\" || exit 1\n"
                        "sleep 0.3\nrm -f \"$SWEEP_CHECKPOINT_DIR/ckpt\"\n"
                        "echo \"$SWEEP_RUN_ID\" >> '%s'\n",
                        ledger);
    trial = sw_h_file(h, "trial.sh", script);
    text = sw_aprintf("method: grid\nparallel: 3\n"
                      "command: [/bin/sh, %s]\n"
                      "parameters:\n  x: {values: [1, 2, 3, 4, 5, 6]}\n",
                      trial);
    file = sw_h_file(h, "sweep.yaml", text);
    const char *run[] = {"run", file, "--quiet", NULL};
    assert_int_equal(sw_h_run(h, run, NULL), 1);
    log = sw_test_slurp(err, NULL);
    assert_non_null(log);
    /* a trial's end or the store's own write: whichever met it first */
    if (!strstr(log, "the disk failed its trial") &&
        !strstr(log, "database or disk is full"))
        fail_msg("sweep did not say the disk failed: %s", log);
    free(log);
    assert_int_equal(sw_h_count(h, "select count(*) from runs where state"
                                   " = 'failed'"),
                     0);
    /* space freed (the checkpoints the failed ones left), then resumed
     * until done: each round finishes at least the trials that fit */
    rm = sw_aprintf("rm -f %s/runs/*/checkpoint/ckpt", home);
    for (rounds = 0; rounds < 8 && rc != 0; rounds++) {
        sleep_ms(500); /* the trials left running end */
        assert_int_equal(system(rm), 0);
        rc = sw_h_run(h, resume, NULL);
        assert_true(rc == 0 || rc == 1);
    }
    assert_int_equal(rc, 0);
    assert_int_equal(sw_h_count(h, "select count(*) from runs where state"
                                   " = 'finished'"),
                     6);
    assert_int_equal(sw_h_count(h, "select count(*) from attempts where"
                                   " outcome = 'failed'"),
                     0);
    assert_true(sw_h_count(h, "select count(*) from attempts where"
                              " outcome = 'disk'") >= 1);
    assert_each_once(ledger, 6);
    sleep_ms(300); /* the shims' last exit files */
    free(rm);
    free(file);
    free(text);
    free(trial);
    free(script);
    free(err);
    free(ledger);
    free(home);
}

/* How many lines of `text` are exactly `line`. */
static int count_line(const char *text, const char *line)
{
    size_t n = strlen(line);
    const char *p;
    int count = 0;

    for (p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
        if (strncmp(p, line, n) == 0 && (p[n] == '\n' || p[n] == '\0'))
            count++;
    return count;
}

/* Issue 35: trials print 1 MiB each, then their one value, into a sweep
 * home on an 8 MiB tmpfs. Where the disk took a trial's log but not its
 * value (or the store did not take it), the run must not end `finished`
 * without it: its attempt is `disk`, it runs again after `sweep resume`
 * (without using a retry), and once the tmpfs has grown every run is
 * finished with its own value, stored once. A trial appends its run id
 * to a ledger (outside the home) after printing its value: a run ran to
 * its end once for its finished attempt and once for each disk attempt,
 * never more. (Before, some runs ended `finished` with no value, and no
 * resume ran them again.) */
static void test_values_survive_full_disk(void **state)
{
    const char *resume[] = {"resume", "--quiet", NULL};
    tmpfs_fixture *fx = *state;
    char *ledger, *script, *trial, *text, *file, *home, *remount, *sql, *log;
    char *ids = NULL, *line, *next;
    const char *q[] = {"query", "--csv", "select id from runs", NULL};
    sw_h *h = &fx->h;
    int rc, runs = 0;
    long ran, ends;

    if (!fx->mounted)
        skip();
    remount = sw_aprintf("mount -o remount,size=8m '%s'", fx->mnt);
    assert_int_equal(system(remount), 0);
    free(remount);
    home = sw_aprintf("%s/home", fx->mnt);
    setenv("SWEEP_HOME", home, 1);
    ledger = sw_aprintf("%s/ledger", h->dir);
    script = sw_aprintf("yes 0123456789abcdef0123456789abcde | head -c 1048576"
                        "\necho \"@metrics {\\\"loss\\\": ${1#--x=}}\"\n"
                        "echo \"$SWEEP_RUN_ID\" >> '%s'\n",
                        ledger);
    trial = sw_h_file(h, "trial.sh", script);
    text = sw_aprintf("method: grid\nparallel: 3\nretries: 0\n"
                      "metric: {name: loss, goal: minimize}\n"
                      "command: [/bin/sh, %s, '${args}']\n"
                      "parameters:\n  x: {values: [0, 1, 2, 3, 4, 5, 6, 7, 8, "
                      "9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22,"
                      " 23, 24, 25, 26, 27, 28, 29]}\n",
                      trial);
    file = sw_h_file(h, "sweep.yaml", text);
    const char *run[] = {"run", file, "--quiet", NULL};
    rc = sw_h_run(h, run, NULL);
    assert_int_equal(rc, 1); /* 30 MiB of output cannot fit in 8 */
    sleep_ms(500);           /* the trials left running end */
    remount = sw_aprintf("mount -o remount,size=96m '%s'", fx->mnt);
    assert_int_equal(system(remount), 0);
    assert_int_equal(sw_h_run(h, resume, NULL), 0);
    assert_int_equal(sw_h_count(h, "select count(*) from runs where state"
                                   " = 'finished'"),
                     30);
    /* each run has one value, its own x */
    assert_int_equal(sw_h_count(h, "select count(*) from metrics where name"
                                   " = 'loss'"),
                     30);
    assert_int_equal(
        sw_h_count(h, "select count(*) from runs r join metrics m on"
                      " m.run_id = r.id and m.name = 'loss' where m.value ="
                      " json_extract(r.params, '$.x') and r.value = m.value"),
        30);
    assert_int_equal(sw_h_count(h, "select count(*) from attempts where"
                                   " outcome = 'failed'"),
                     0);
    /* none ran to its end more often than its attempts say it did */
    log = sw_test_slurp(ledger, NULL);
    assert_non_null(log);
    assert_int_equal(sw_h_run(h, q, &ids), 0);
    for (line = strchr(ids, '\n'); line && line[1]; line = next) {
        next = strchr(line + 1, '\n');
        if (next)
            *next = '\0';
        sql = sw_aprintf("select count(*) from attempts where run_id = '%s'"
                         " and outcome in ('finished', 'disk')",
                         line + 1);
        ends = sw_h_count(h, sql);
        ran = count_line(log, line + 1);
        if (ran < 1 || ran > ends)
            fail_msg("run %s ran to its end %ld times for %ld attempts",
                     line + 1, ran, ends);
        free(sql);
        runs++;
        if (!next)
            break;
    }
    assert_int_equal(runs, 30);
    sleep_ms(300); /* the shims' last exit files */
    free(ids);
    free(log);
    free(remount);
    free(file);
    free(text);
    free(trial);
    free(script);
    free(ledger);
    free(home);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_supervisor_killed_mid_launch),
        cmocka_unit_test(test_full_disk_injected),
        cmocka_unit_test(test_shim_killed_is_rerun),
        cmocka_unit_test_setup_teardown(test_full_disk_tmpfs, tmpfs_setup,
                                        tmpfs_teardown),
        cmocka_unit_test_setup_teardown(test_trials_fill_the_disk, tmpfs_setup,
                                        tmpfs_teardown),
        cmocka_unit_test_setup_teardown(test_values_survive_full_disk,
                                        tmpfs_setup, tmpfs_teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
