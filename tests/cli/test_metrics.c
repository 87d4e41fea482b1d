/*
 * test_metrics.c - live metrics and early stopping end to end: trials
 * (real processes) post scripted curves to the real `sweep` binary's
 * metrics server, and Hyperband stops exactly the runs W&B's rule stops,
 * after exactly the reports at which it stops them; a trial that only
 * prints is stopped by SIGTERM; a `sweep` killed with SIGKILL mid-sweep
 * and resumed loses no acknowledged value and decides the same.
 *
 * The curves (val_loss, minimized; hyperband min_iter 2, eta 2: bands 2,
 * 4, 8; run one at a time, so the order is fixed):
 *   r1: 8 7 6 5 4 3 2 1        never worse than a threshold: finishes
 *   r2: 9 8.5 8 7.5 7 6.5 6 5.5  band 2: [7, 8.5] -> index 1 = 8.5, equal
 *                                goes on; band 4 and 8 likewise
 *   r3: 10 9 ...               band 2: [7, 8.5, 9] -> index 1 = 8.5 < 9:
 *                              stopped in the answer to its 2nd report
 *   r4: 2 1 0.5 ...            always the best: finishes
 *   r5: 6 6 8 8 ...            band 2: [1, 6, 7, 8.5, 9] -> index 2 = 7,
 *                              goes on; band 4: [0.4, 5, 7.5, 8] ->
 *                              index 2 = 7.5 < 8: stopped at its 4th
 * (docs/stopping.md has the rule; W&B's hyperband_stop_runs gives these.)
 */
#define _GNU_SOURCE /* memmem */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <ftw.h>
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
#include "sweeps/buf.h"

static const char *const curves[5] = {
    "8,7,6,5,4,3,2,1", "9,8.5,8,7.5,7,6.5,6,5.5", "10,9,8.8,8.6,8.4,8.2,8,7.8",
    "2,1,0.5,0.4,0.3,0.2,0.1,0.05", "6,6,8,8,8,8,8,8"};
/* what each run must hold at the end: state, values stored */
static const char *const states[5] = {"finished", "finished", "stopped",
                                      "finished", "stopped"};
static const long stored[5] = {8, 8, 2, 8, 4};

static char *trial_path(void)
{
    return sw_aprintf("%s/cli/hb_trial.py", getenv("SW_TEST_DATA"));
}

/* The sweep file: the five curves, one run at a time. */
static char *hb_sweep(const sw_h *h, const char *mode, double pause)
{
    char *trial = trial_path(), *text, *path;

    text = sw_aprintf(
        "method: grid\nparallel: 1\n"
        "metric: {name: val_loss, goal: minimize}\n"
        "early_terminate: {type: hyperband, min_iter: 2, eta: 2, grace: 30}\n"
        "command: [/usr/bin/python3, %s]\n"
        "parameters:\n"
        "  curve: {values: ['%s', '%s', '%s', '%s', '%s']}\n"
        "  mode: {value: %s}\n  pause: {value: %g}\n",
        trial, curves[0], curves[1], curves[2], curves[3], curves[4], mode,
        pause);
    path = sw_h_file(h, "sweep.yaml", text);
    free(trial);
    free(text);
    return path;
}

/* Run k (1-based) holds the state and the values the rule says. */
static void expect_decisions(const sw_h *h)
{
    char *sql;
    int k;

    for (k = 1; k <= 5; k++) {
        sql = sw_aprintf("select count(*) from runs where idx = %d and "
                         "state = '%s'",
                         k - 1, states[k - 1]);
        if (sw_h_count(h, sql) != 1)
            fail_msg("run %d is not %s", k, states[k - 1]);
        free(sql);
        sql = sw_aprintf("select count(*) from metrics m join runs r on "
                         "r.id = m.run_id where r.idx = %d and m.name = "
                         "'val_loss'",
                         k - 1);
        if (sw_h_count(h, sql) != stored[k - 1])
            fail_msg("run %d holds %ld values, not %ld", k, sw_h_count(h, sql),
                     stored[k - 1]);
        free(sql);
    }
}

/* Every value a trial saw acknowledged is in the store, once. */
static void expect_acked_stored(const sw_h *h)
{
    char *sql, *path, line[256];
    long lines;
    FILE *f;
    int k;

    for (k = 1; k <= 5; k++) {
        sql = sw_aprintf("select id from runs where idx = %d", k - 1);
        char *out = NULL;
        const char *q[] = {"query", "--csv", sql, NULL};
        assert_int_equal(sw_h_run(h, q, &out), 0);
        char *id = strchr(out, '\n') + 1;
        id[strcspn(id, "\r\n")] = '\0';
        path = sw_aprintf("%s/runs/%s/acked", h->home, id);
        f = fopen(path, "r");
        assert_non_null(f);
        for (lines = 0; fgets(line, sizeof(line), f); lines++) {
            long step;
            assert_int_equal(sscanf(line, "%ld", &step), 1);
            char *one = sw_aprintf("select count(*) from metrics where "
                                   "run_id = '%s' and step = %ld",
                                   id, step);
            if (sw_h_count(h, one) != 1)
                fail_msg("run %s: acknowledged step %ld is not stored once", id,
                         step);
            free(one);
        }
        fclose(f);
        assert_int_equal(lines, stored[k - 1]);
        free(path);
        free(out);
        free(sql);
    }
}

static void test_hyperband_stops_what_wandb_stops(void **state)
{
    sw_h h;
    char *file, *out = NULL;

    (void)state;
    sw_h_init(&h);
    file = hb_sweep(&h, "http", 0);
    const char *run[] = {"run", file, NULL};
    assert_int_equal(sw_h_run(&h, run, &out), 0);
    expect_decisions(&h);
    expect_acked_stored(&h);
    /* the trial itself was told, in the answer to that report */
    assert_non_null(strstr(out, "-3 stops early: iteration 2, band 2"));
    assert_non_null(strstr(out, "-5 stops early: iteration 4, band 4"));
    assert_int_equal(sw_h_count(&h, "select count(*) from runs where "
                                    "state = 'stopped' and reason like "
                                    "'stopped early%'"),
                     2);
    free(out);
    free(file);
    sw_h_dispose(&h);
}

/* The same through the Python client of examples/clients. */
static void test_python_client_is_told_to_stop(void **state)
{
    sw_h h;
    char *file;

    (void)state;
    sw_h_init(&h);
    file = hb_sweep(&h, "client", 0);
    const char *run[] = {"run", file, "--quiet", NULL};
    assert_int_equal(sw_h_run(&h, run, NULL), 0);
    expect_decisions(&h);
    expect_acked_stored(&h);
    free(file);
    sw_h_dispose(&h);
}

/* A trial that only prints cannot be answered: SIGTERM at once, and its
 * run is stopped, not failed; it printed nothing after that. */
static void test_printing_trial_is_sent_sigterm(void **state)
{
    sw_h h;
    char *file;

    (void)state;
    sw_h_init(&h);
    file = hb_sweep(&h, "stdout", 0.4);
    const char *run[] = {"run", file, "--quiet", NULL};
    assert_int_equal(sw_h_run(&h, run, NULL), 0);
    assert_int_equal(sw_h_count(&h, "select count(*) from runs where "
                                    "state = 'stopped' and idx in (2, 4)"),
                     2);
    assert_int_equal(sw_h_count(&h, "select count(*) from runs where "
                                    "state = 'finished'"),
                     3);
    /* r3 was told after its 2nd line, r5 after its 4th: at most the line
     * in flight came after (0.4 s apart) */
    assert_in_range(sw_h_count(&h, "select count(*) from metrics m join "
                                   "runs r on r.id = m.run_id where r.idx "
                                   "= 2"),
                    2, 3);
    assert_in_range(sw_h_count(&h, "select count(*) from metrics m join "
                                   "runs r on r.id = m.run_id where r.idx "
                                   "= 4"),
                    4, 5);
    free(file);
    sw_h_dispose(&h);
}

/* SIGKILL of `sweep` while trials post (they retry meanwhile), then
 * `sweep resume`, twice: nothing acknowledged is lost, nothing is stored
 * twice, and the rule decides as if nothing had happened. */
static void test_resume_keeps_values_and_decisions(void **state)
{
    struct timespec pause = {0, 700 * 1000 * 1000};
    sw_h h;
    char *file;
    pid_t pid;
    int i;

    (void)state;
    sw_h_init(&h);
    file = hb_sweep(&h, "http", 0.15);
    for (i = 0; i < 3; i++) {
        const char *run[] = {"run", file, "--quiet", NULL};
        const char *resume[] = {"resume", "--quiet", NULL};
        pid = sw_h_start(&h, i == 0 ? run : resume);
        nanosleep(&pause, NULL);
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        nanosleep(&pause, NULL); /* trials retry against nobody */
    }
    const char *resume[] = {"resume", "--quiet", NULL};
    assert_int_equal(sw_h_run(&h, resume, NULL), 0);
    expect_decisions(&h);
    expect_acked_stored(&h);
    free(file);
    sw_h_dispose(&h);
}

/* Waits until `n` runs have a value stored. */
static void wait_reporting(const sw_h *h, long n)
{
    struct timespec tick = {0, 20 * 1000 * 1000};
    int i;

    for (i = 0; i < 1500; i++) {
        if (sw_h_count(h, "select count(distinct run_id) from metrics") >= n)
            return;
        nanosleep(&tick, NULL);
    }
    fail_msg("%ld runs did not report in 30 s", n);
}

/* `sweep` is killed while its trials post without pause, and resumed:
 * the first post each adopted trial makes the instant the new server
 * listens must be answered 200, never 401 (issue 21: the Python client
 * takes a 401 as final and reports on stdout for the rest of the run). */
static void test_resume_knows_adopted_tokens_at_once(void **state)
{
    const char *resume[] = {"resume", "--quiet", NULL};
    char *file, *ledger, *killed, *text, *trial;
    sw_h h;
    pid_t pid;
    int fd;

    (void)state;
    sw_h_init(&h);
    ledger = sw_aprintf("%s/ledger", h.dir);
    killed = sw_aprintf("%s/killed", h.dir);
    trial = sw_aprintf("%s/cli/storm_trial.py", getenv("SW_TEST_DATA"));
    text = sw_aprintf("method: grid\nparallel: 6\n"
                      "command: [/usr/bin/python3, %s]\n"
                      "parameters:\n  x: {values: [1, 2, 3, 4, 5, 6]}\n"
                      "  ledger: {value: '%s'}\n"
                      "  killed: {value: '%s'}\n",
                      trial, ledger, killed);
    file = sw_h_file(&h, "sweep.yaml", text);
    const char *run[] = {"run", file, "--quiet", NULL};
    pid = sw_h_start(&h, run);
    assert_true(pid > 0);
    wait_reporting(&h, 6);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    fd = open(killed, O_WRONLY | O_CREAT | O_EXCL, 0600);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(sw_h_run(&h, resume, NULL), 0);
    if (access(ledger, F_OK) == 0) {
        char *refused = sw_test_slurp(ledger, NULL);
        fail_msg("posts refused after resume:\n%s", refused);
    }
    assert_int_equal(sw_h_count(&h, "select count(*) from runs where state"
                                    " = 'finished'"),
                     6);
    free(trial);
    free(text);
    free(file);
    free(ledger);
    free(killed);
    sw_h_dispose(&h);
}

static const char *const *found_tokens; /* for has_token(), by nftw */
static char found_in[4096];

/* nftw: a file under the sweep home holds one of found_tokens. */
static int has_token(const char *path, const struct stat *st, int type,
                     struct FTW *ftw)
{
    size_t len = 0, i;
    char *text;

    (void)st;
    (void)ftw;
    if (type != FTW_F || !(text = sw_test_slurp(path, &len)))
        return 0;
    for (i = 0; found_tokens[i]; i++)
        if (memmem(text, len, found_tokens[i], strlen(found_tokens[i]))) {
            snprintf(found_in, sizeof(found_in), "%s", path);
            free(text);
            return 1;
        }
    free(text);
    return 0;
}

/* Trials of one sweep run as one user and can read each other's run
 * folders: what they find there must not let one post as another (only
 * a hash of each token is kept, issue 21), while each posts with its
 * own; and no file of the sweep home, the store included, holds a
 * token in clear. */
static void test_run_folder_holds_no_token(void **state)
{
    char *file, *out, *text, *trial, *codes, *line, *tokens, *next;
    const char *list[3] = {NULL, NULL, NULL};
    int own = 0, probes = 0, n = 0;
    sw_h h;

    (void)state;
    sw_h_init(&h);
    out = sw_aprintf("%s/out", h.dir);
    assert_int_equal(mkdir(out, 0700), 0);
    trial = sw_aprintf("%s/cli/token_trial.py", getenv("SW_TEST_DATA"));
    text = sw_aprintf("method: grid\nparallel: 2\n"
                      "command: [/usr/bin/python3, %s]\n"
                      "parameters:\n  x: {values: [1, 2]}\n"
                      "  out: {value: '%s'}\n",
                      trial, out);
    file = sw_h_file(&h, "sweep.yaml", text);
    const char *run[] = {"run", file, "--quiet", NULL};
    assert_int_equal(sw_h_run(&h, run, NULL), 0);
    assert_int_equal(sw_h_count(&h, "select count(*) from runs where state"
                                    " = 'finished'"),
                     2);
    free(text);
    text = sw_aprintf("%s/codes", out);
    codes = sw_test_slurp(text, NULL);
    assert_non_null(codes);
    for (line = codes; *line; line = next + 1) {
        next = strchr(line, '\n');
        assert_non_null(next);
        *next = '\0';
        if (strstr(line, " own own ")) {
            own++;
            if (!strstr(line, " 200"))
                fail_msg("its own token refused: %s", line);
        } else {
            probes += strstr(line, " token.sha256 theirs ") != NULL;
            if (!strstr(line, " 401"))
                fail_msg("posted as another run: %s", line);
        }
    }
    assert_int_equal(own, 2);
    assert_int_equal(probes, 2);
    free(text);
    text = sw_aprintf("%s/tokens", out);
    tokens = sw_test_slurp(text, NULL);
    assert_non_null(tokens);
    for (line = tokens; n < 2 && (next = strchr(line, '\n')); line = next + 1) {
        *next = '\0';
        list[n++] = line;
    }
    assert_int_equal(n, 2);
    found_tokens = list;
    if (nftw(h.home, has_token, 16, FTW_PHYS) != 0)
        fail_msg("a token in clear in %s", found_in);
    free(tokens);
    free(codes);
    free(text);
    free(trial);
    free(file);
    free(out);
    sw_h_dispose(&h);
}

/* Lines printed in one burst keep the time the trial logged each
 * (`_timestamp`): the first, logged half a second before it was printed,
 * is stored then; one in the future, or none, is stored when it came. */
static void test_a_trial_s_timestamps_are_kept(void **state)
{
    static const char trial[] =
        "#!/bin/sh\n"
        "t0=$(date +%s.%N)\nsleep 0.5\n"
        "echo \"@metrics {\\\"step\\\": 1, \\\"loss\\\": 1, "
        "\\\"_timestamp\\\": $t0}\"\n"
        "echo '@metrics {\"step\": 2, \"loss\": 0.5, \"_timestamp\": "
        "4000000000}'\n"
        "echo '@metrics {\"step\": 3, \"loss\": 0.4}'\n";
    char *file, *script, *text;
    sw_h h;

    (void)state;
    sw_h_init(&h);
    script = sw_h_file(&h, "ts.sh", trial);
    chmod(script, 0755);
    text = sw_aprintf("method: grid\nmetric: {name: loss}\n"
                      "command: [%s]\nparameters: {x: {values: [1]}}\n",
                      script);
    file = sw_h_file(&h, "sweep.yaml", text);
    const char *run[] = {"run", file, "--quiet", NULL};
    assert_int_equal(sw_h_run(&h, run, NULL), 0);
    assert_int_equal(sw_h_count(&h, "select count(*) from metrics m join "
                                    "runs r on r.id = m.run_id where step = "
                                    "1 and m.time >= r.started_at and m.time "
                                    "< r.ended_at - 0.4"),
                     1);
    assert_int_equal(sw_h_count(&h, "select count(*) from metrics m join "
                                    "runs r on r.id = m.run_id where step > "
                                    "1 and m.time > r.ended_at - 0.2 and "
                                    "m.time <= r.ended_at"),
                     2);
    assert_int_equal(sw_h_count(&h, "select count(*) from metrics where name "
                                    "= '_timestamp'"),
                     0);
    free(text);
    free(script);
    free(file);
    sw_h_dispose(&h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hyperband_stops_what_wandb_stops),
        cmocka_unit_test(test_python_client_is_told_to_stop),
        cmocka_unit_test(test_printing_trial_is_sent_sigterm),
        cmocka_unit_test(test_resume_keeps_values_and_decisions),
        cmocka_unit_test(test_resume_knows_adopted_tokens_at_once),
        cmocka_unit_test(test_run_folder_holds_no_token),
        cmocka_unit_test(test_a_trial_s_timestamps_are_kept),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
