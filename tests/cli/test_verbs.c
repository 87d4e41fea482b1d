/*
 * test_verbs.c - the verbs that act on sweeps after `sweep run` made
 * them, through the real binary: `stop` (a run by hand, a sweep as
 * Ctrl-C, from a second process while `sweep run` runs), `resume
 * --run-cap`, `rm`, `tag` and `note`, `compare`; and a sweep none of
 * whose attempts could start. Each bad input is refused with one line
 * and changes nothing.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "sweeps/buf.h"
#include "sweeps/json.h"
#include "testutil.h"

static char *toy_sweep(const sw_h *h, const char *extra, const char *params)
{
    char *text = sw_aprintf("program: %s\nmetric:\n  name: "
                            "loss\n  goal: minimize\ncommand:\n  - ${program}\n"
                            "  - ${args}\n%s\nparameters:\n%s",
                            sw_h_toy(), extra, params);
    char *path = sw_h_file(h, "sweep.yaml", text);

    free(text);
    return path;
}

/* The first field of the first row of `sweep query SQL --csv` (the
 * caller frees; "" when there is none). */
static char *query1(const sw_h *h, const char *sql)
{
    const char *args[] = {"query", sql, "--csv", NULL};
    char *out = NULL, *nl, *v;

    sw_h_run(h, args, &out);
    nl = strchr(out, '\n');
    v = sw_strdup(nl ? nl + 1 : "");
    v[strcspn(v, "\r\n")] = '\0';
    free(out);
    return v;
}

/* Waits (20 s at most) until `sql` counts at least one row. */
static void wait_for(const sw_h *h, const char *sql)
{
    struct timespec ts = {0, 20 * 1000 * 1000};
    int i;

    for (i = 0; i < 1000; i++) {
        if (sw_h_count(h, sql) > 0)
            return;
        nanosleep(&ts, NULL);
    }
    fail_msg("timed out waiting for: %s", sql);
}

/* What the commands run so far wrote on stderr; the caller frees. */
static char *stderr_text(const sw_h *h)
{
    char *path = sw_aprintf("%s/stderr.txt", h->dir);
    char *text = sw_test_slurp(path, NULL);

    free(path);
    return text ? text : sw_strdup("");
}

/* Empties the stderr file, so the next check reads only what follows. */
static void stderr_clear(const sw_h *h)
{
    char *path = sw_aprintf("%s/stderr.txt", h->dir);

    truncate(path, 0);
    free(path);
}

/* ---- stop ------------------------------------------------------------ */

static void test_stop_a_run_by_hand_while_it_runs(void **state)
{
    sw_h h;
    char *file, *out = NULL, *id, *run1;
    pid_t pid;

    (void)state;
    sw_h_init(&h);
    file = toy_sweep(&h, "method: grid\nparallel: 3",
                     "  x: {values: [1, 2, 3]}\n  steps: {value: 400}\n"
                     "  sleep: {value: 0.02}\n");
    const char *run[] = {"run", file, "--quiet", NULL};
    pid = sw_h_start(&h, run);
    wait_for(&h, "select count(*) from runs where idx = 0 and state = "
                 "'running' and value is not null");
    id = query1(&h, "select id from sweeps");
    run1 = sw_aprintf("%s-1", id);
    const char *stop[] = {"stop", run1, NULL};
    assert_int_equal(sw_h_run(&h, stop, &out), 0);
    assert_non_null(strstr(out, "stopped: stopped by hand"));
    free(out);
    /* the sweep goes on to its end, the others finish */
    assert_int_equal(sw_h_wait(pid, 60), 0);
    assert_int_equal(sw_h_count(&h, "select count(*) from runs where idx = 0 "
                                    "and state = 'stopped' and reason = "
                                    "'stopped by hand' and value is not null"),
                     1);
    assert_int_equal(sw_h_count(&h, "select count(*) from attempts where "
                                    "outcome = 'stopped'"),
                     1);
    assert_int_equal(sw_h_count(&h, "select count(*) from runs where state = "
                                    "'finished'"),
                     2);
    assert_int_equal(sw_h_count(&h, "select count(*) from sweeps where state "
                                    "= 'finished'"),
                     1);
    /* a stopped run now: refused, nothing changes */
    stderr_clear(&h);
    assert_int_equal(sw_h_run(&h, stop, NULL), 1);
    out = stderr_text(&h);
    assert_non_null(strstr(out, "is stopped (stopped by hand): only a running "
                                "run can be stopped"));
    free(out);
    free(run1);
    free(id);
    free(file);
    sw_h_dispose(&h);
}

static void test_stop_a_sweep_is_ctrl_c(void **state)
{
    sw_h h;
    char *file, *out = NULL, *id;
    pid_t pid;

    (void)state;
    sw_h_init(&h);
    file = toy_sweep(&h, "method: grid\nparallel: 2",
                     "  x: {values: [1, 2, 3, 4]}\n  steps: {value: 20}\n"
                     "  sleep: {value: 0.05}\n");
    const char *run[] = {"run", file, "--quiet", NULL};
    pid = sw_h_start(&h, run);
    wait_for(&h, "select count(*) from runs where state = 'running'");
    id = query1(&h, "select id from sweeps");
    const char *stop[] = {"stop", id, NULL};
    assert_int_equal(sw_h_run(&h, stop, &out), 0);
    assert_non_null(strstr(out, "stopping"));
    free(out);
    /* as after Ctrl-C: running trials finish, nothing new, 130 */
    assert_int_equal(sw_h_wait(pid, 60), 130);
    assert_int_equal(sw_h_count(&h, "select count(*) from sweeps where state "
                                    "= 'interrupted'"),
                     1);
    assert_true(sw_h_count(&h, "select count(*) from runs") < 4);
    /* resumable */
    const char *resume[] = {"resume", id, "--quiet", NULL};
    assert_int_equal(sw_h_run(&h, resume, NULL), 0);
    assert_int_equal(sw_h_count(&h, "select count(*) from runs where state = "
                                    "'finished'"),
                     4);
    /* not running now: refused */
    stderr_clear(&h);
    assert_int_equal(sw_h_run(&h, stop, NULL), 1);
    out = stderr_text(&h);
    assert_non_null(strstr(out, "is not running"));
    free(out);
    free(id);
    free(file);
    sw_h_dispose(&h);
}

static void test_stop_refuses_bad_input(void **state)
{
    sw_h h;
    char *file, *out;

    (void)state;
    sw_h_init(&h);
    file = toy_sweep(&h, "method: grid",
                     "  x: {values: [1]}\n  steps: {value: 1}\n");
    const char *run[] = {"run", file, "--quiet", NULL};
    assert_int_equal(sw_h_run(&h, run, NULL), 0);
    const char *none[] = {"stop", NULL};
    assert_int_equal(sw_h_run(&h, none, NULL), 2);
    const char *bad_t[] = {"stop", "x", "--timeout", "soon", NULL};
    assert_int_equal(sw_h_run(&h, bad_t, NULL), 2);
    stderr_clear(&h);
    const char *nope[] = {"stop", "nope-1", NULL};
    assert_int_equal(sw_h_run(&h, nope, NULL), 1);
    out = stderr_text(&h);
    assert_non_null(strstr(out, "no run or sweep 'nope-1'"));
    assert_null(strchr(strchr(out, '\n') + 1, '\n')); /* one line */
    free(out);
    assert_int_equal(sw_h_count(&h, "select count(*) from runs where state = "
                                    "'finished'"),
                     1);
    free(file);
    sw_h_dispose(&h);
}

/* ---- resume --run-cap ------------------------------------------------ */

static const char bayes_params[] = "  x: {min: 0.0, max: 6.0}\n"
                                   "  y: {min: -3.0, max: 2.0}\n"
                                   "  steps: {value: 2}\n"
                                   "  sleep: {value: 0.01}\n";

/* Every run's idx and params, as CSV. */
static char *all_params(const sw_h *h)
{
    const char *q[] = {"query", "select idx, params from runs order by idx",
                       "--csv", NULL};
    char *out = NULL;

    assert_int_equal(sw_h_run(h, q, &out), 0);
    return out;
}

static void test_resume_run_cap_continues_a_finished_bayes_search(void **st)
{
    sw_h h, ref;
    char *file, *id, *want, *got, *err;

    (void)st;
    /* the reference: 8 trials in one go */
    sw_h_init(&ref);
    file = toy_sweep(&ref, "method: bayes\nseed: 3\nrun_cap: 8", bayes_params);
    const char *run_ref[] = {"run", file, "--quiet", NULL};
    assert_int_equal(sw_h_run(&ref, run_ref, NULL), 0);
    want = all_params(&ref);
    free(file);
    /* 4, finished, then 4 more: the search replayed from the runs picks
     * exactly what it would have picked without the stop */
    sw_h_init(&h);
    file = toy_sweep(&h, "method: bayes\nseed: 3\nrun_cap: 4", bayes_params);
    const char *run[] = {"run", file, "--quiet", NULL};
    assert_int_equal(sw_h_run(&h, run, NULL), 0);
    id = query1(&h, "select id from sweeps");
    const char *low[] = {"resume", id, "--run-cap", "4", NULL};
    stderr_clear(&h);
    assert_int_equal(sw_h_run(&h, low, NULL), 2);
    err = stderr_text(&h);
    assert_non_null(strstr(err, "has 4 runs already"));
    free(err);
    assert_int_equal(sw_h_count(&h, "select count(*) from sweeps where state "
                                    "= 'finished' and run_cap is null"),
                     1);
    const char *more[] = {"resume", id, "--run-cap", "8", "--quiet", NULL};
    assert_int_equal(sw_h_run(&h, more, NULL), 0);
    got = all_params(&h);
    assert_string_equal(got, want);
    /* nothing ran twice; the cap is kept; the sweep is finished again */
    assert_int_equal(sw_h_count(&h, "select count(*) from runs where "
                                    "attempts = 1 and state = 'finished'"),
                     8);
    assert_int_equal(sw_h_count(&h, "select count(*) from metrics where name "
                                    "= 'loss'"),
                     16);
    assert_int_equal(sw_h_count(&h, "select run_cap from sweeps where state "
                                    "= 'finished'"),
                     8);
    const char *again[] = {"resume", id, NULL};
    assert_int_equal(sw_h_run(&h, again, NULL), 0);
    assert_int_equal(sw_h_count(&h, "select count(*) from runs"), 8);
    free(got);
    free(want);
    free(id);
    free(file);
    sw_h_dispose(&h);
    sw_h_dispose(&ref);
}

static void test_resume_run_cap_refuses_an_exhausted_grid(void **st)
{
    sw_h h;
    char *file, *err, *id;

    (void)st;
    sw_h_init(&h);
    file = toy_sweep(&h, "method: grid",
                     "  x: {values: [1, 2]}\n  steps: {value: 1}\n");
    const char *run[] = {"run", file, "--quiet", NULL};
    assert_int_equal(sw_h_run(&h, run, NULL), 0);
    id = query1(&h, "select id from sweeps");
    const char *more[] = {"resume", id, "--run-cap", "5", NULL};
    stderr_clear(&h);
    assert_int_equal(sw_h_run(&h, more, NULL), 2);
    err = stderr_text(&h);
    assert_non_null(strstr(err, "has run all 2 trials of its grid"));
    free(err);
    assert_int_equal(sw_h_count(&h, "select count(*) from sweeps where state "
                                    "= 'finished' and run_cap is null"),
                     1);
    free(id);
    free(file);
    sw_h_dispose(&h);
}

/* ---- rm --------------------------------------------------------------- */

/* The store's tables and, for each, the column that ties its rows to a
 * sweep: its id, or a run's ("run_id": the sweep's id, then "-N"). A
 * table the schema gains must be added here (and to sweep rm,
 * store_edit.c): the test fails on one it does not know. */
static const char *const tables[][2] = {
    {"attempts", "run_id"},
    {"exports", "sweep_id"},
    {"gpu_samples", "sweep_id"},
    {"metrics", "run_id"},
    {"notes", "run_id"},
    {"runs", "sweep_id"},
    {"sweeps", "id"},
    {"tags", "run_id"},
};

/* How many rows of every table belong to sweep `id`. */
static long rows_of(const sw_h *h, const char *id)
{
    sw_buf b = SW_BUF_INIT;
    char *where, *sql;
    long n = 0, v;

    for (size_t i = 0; i < sizeof(tables) / sizeof(tables[0]); i++) {
        where = strcmp(tables[i][1], "run_id") == 0
                    ? sw_aprintf("run_id like '%s-%%'", id)
                    : sw_aprintf("%s = '%s'", tables[i][1], id);
        sql =
            sw_aprintf("select count(*) from %s where %s", tables[i][0], where);
        v = sw_h_count(h, sql);
        assert_true(v >= 0);
        n += v;
        free(sql);
        free(where);
    }
    /* every table of the schema is one of those */
    for (size_t i = 0; i < sizeof(tables) / sizeof(tables[0]); i++)
        sw_buf_printf(&b, "%s%s", i ? "/" : "", tables[i][0]);
    sql = query1(h, "select group_concat(name, '/') from (select name from "
                    "sqlite_master where type = 'table' order by name)");
    assert_string_equal(sql, sw_buf_cstr(&b));
    free(sql);
    sw_buf_dispose(&b);
    return n;
}

/* How many run folders of sweep `id` the home holds. */
static int folders_of(const sw_h *h, const char *id)
{
    char *path;
    int n = 0;

    for (int i = 1; i <= 8; i++) {
        path = sw_aprintf("%s/runs/%s-%d", h->home, id, i);
        n += access(path, F_OK) == 0;
        free(path);
    }
    return n;
}

static void test_rm_removes_rows_and_folders(void **st)
{
    sw_h h;
    char *file, *a, *b, *err;
    pid_t pid;

    (void)st;
    sw_h_init(&h);
    file = toy_sweep(&h, "method: grid\nretries: 1",
                     "  x: {values: [1, 2, 3]}\n  steps: {value: 3}\n"
                     "  fail: {value: 2}\n  sleep: {value: 0.01}\n");
    const char *run[] = {"run", file, "--quiet", NULL};
    assert_int_equal(sw_h_run(&h, run, NULL), 0);
    assert_int_equal(sw_h_run(&h, run, NULL), 0);
    a = query1(&h, "select id from sweeps order by created_at, rowid limit 1");
    b = query1(&h, "select id from sweeps order by created_at desc, rowid "
                   "desc limit 1");
    assert_string_not_equal(a, b);
    char *a1 = sw_aprintf("%s-1", a);
    const char *tag[] = {"tag", a1, "gone", NULL};
    assert_int_equal(sw_h_run(&h, tag, NULL), 0);
    const char *note[] = {"note", a1, "soon gone", NULL};
    assert_int_equal(sw_h_run(&h, note, NULL), 0);
    free(a1);
    assert_true(rows_of(&h, a) > 0);
    assert_int_equal(folders_of(&h, a), 3);
    /* not on a terminal, without --yes: refused, nothing changes */
    const char *ask[] = {"rm", a, NULL};
    assert_int_equal(sw_h_run(&h, ask, NULL), 2);
    const char *none[] = {"rm", NULL};
    assert_int_equal(sw_h_run(&h, none, NULL), 2);
    const char *nope[] = {"rm", "nope", "--yes", NULL};
    assert_int_equal(sw_h_run(&h, nope, NULL), 1);
    assert_int_equal(folders_of(&h, a), 3);
    const char *rm[] = {"rm", a, "--yes", NULL};
    assert_int_equal(sw_h_run(&h, rm, NULL), 0);
    assert_int_equal(rows_of(&h, a), 0);
    assert_int_equal(folders_of(&h, a), 0);
    /* the other sweep is whole */
    assert_int_equal(folders_of(&h, b), 3);
    assert_int_equal(sw_h_count(&h, "select count(*) from runs where state "
                                    "= 'finished'"),
                     3);
    /* a running sweep is refused */
    free(file);
    file = toy_sweep(&h, "method: grid",
                     "  x: {values: [1]}\n  steps: {value: 200}\n"
                     "  sleep: {value: 0.05}\n");
    const char *slow[] = {"run", file, "--quiet", NULL};
    pid = sw_h_start(&h, slow);
    wait_for(&h, "select count(*) from runs where state = 'running'");
    free(a);
    a = query1(&h, "select sweep_id from runs where state = 'running'");
    const char *busy[] = {"rm", a, "--yes", NULL};
    stderr_clear(&h);
    assert_int_equal(sw_h_run(&h, busy, NULL), 1);
    err = stderr_text(&h);
    assert_non_null(strstr(err, "is running: stop it first"));
    free(err);
    assert_int_equal(folders_of(&h, a), 1);
    kill(pid, SIGINT);
    usleep(200 * 1000);
    kill(pid, SIGINT);
    assert_int_equal(sw_h_wait(pid, 30), 130);
    free(file);
    free(a);
    free(b);
    sw_h_dispose(&h);
}

/* ---- tag and note ----------------------------------------------------- */

static void test_tag_and_note_are_stored_and_shown(void **st)
{
    sw_h h;
    char *file, *id, *r1, *out = NULL, *err;

    (void)st;
    sw_h_init(&h);
    file = toy_sweep(&h, "method: grid",
                     "  x: {values: [1, 2]}\n  steps: {value: 1}\n");
    const char *run[] = {"run", file, "--quiet", NULL};
    assert_int_equal(sw_h_run(&h, run, NULL), 0);
    id = query1(&h, "select id from sweeps");
    r1 = sw_aprintf("%s-1", id);
    const char *tag[] = {"tag", r1, "baseline", "v2", "baseline", NULL};
    assert_int_equal(sw_h_run(&h, tag, &out), 0);
    assert_non_null(strstr(out, "tags: baseline, v2"));
    free(out);
    const char *note[] = {"note", r1, "kept", "for", "the", "paper", NULL};
    assert_int_equal(sw_h_run(&h, note, NULL), 0);
    assert_int_equal(sw_h_count(&h, "select count(*) from tags"), 2);
    free(query1(&h, "select 1")); /* a reader of the new schema */
    const char *ls[] = {"ls", id, NULL};
    assert_int_equal(sw_h_run(&h, ls, &out), 0);
    assert_non_null(strstr(out, "baseline,v2"));
    assert_non_null(strstr(out, "kept for the paper"));
    free(out);
    const char *ls_json[] = {"ls", id, "--json", NULL};
    assert_int_equal(sw_h_run(&h, ls_json, &out), 0);
    assert_non_null(strstr(out, "\"tags\": [\"baseline\", \"v2\"], \"note\": "
                                "\"kept for the paper\""));
    assert_non_null(strstr(out, "\"tags\": [], \"note\": null"));
    free(out);
    const char *show[] = {"show", r1, NULL};
    assert_int_equal(sw_h_run(&h, show, &out), 0);
    assert_non_null(strstr(out, "tags           baseline, v2\n"));
    assert_non_null(strstr(out, "note           kept for the paper\n"));
    free(out);
    /* --rm, and an empty note removes it */
    const char *untag[] = {"tag", r1, "--rm", "baseline", NULL};
    assert_int_equal(sw_h_run(&h, untag, NULL), 0);
    const char *clear[] = {"note", r1, "", NULL};
    assert_int_equal(sw_h_run(&h, clear, NULL), 0);
    const char *show_json[] = {"show", r1, "--json", NULL};
    assert_int_equal(sw_h_run(&h, show_json, &out), 0);
    assert_non_null(strstr(out, "\"tags\": [\"v2\"], \"note\": null"));
    free(out);
    /* bad input: one line, exit 2 or 1, nothing changes */
    stderr_clear(&h);
    const char *bad[] = {"tag", r1, "ok", " padded", NULL};
    assert_int_equal(sw_h_run(&h, bad, NULL), 2);
    const char *none[] = {"tag", r1, NULL};
    assert_int_equal(sw_h_run(&h, none, NULL), 2);
    const char *nope[] = {"tag", "nope-1", "x", NULL};
    assert_int_equal(sw_h_run(&h, nope, NULL), 1);
    const char *nonote[] = {"note", "nope-1", "x", NULL};
    assert_int_equal(sw_h_run(&h, nonote, NULL), 1);
    err = stderr_text(&h);
    assert_non_null(strstr(err, "' padded' is not a tag"));
    assert_non_null(strstr(err, "no run 'nope-1'"));
    free(err);
    assert_int_equal(sw_h_count(&h, "select count(*) from tags"), 1);
    assert_int_equal(sw_h_count(&h, "select count(*) from notes"), 0);
    free(r1);
    free(id);
    free(file);
    sw_h_dispose(&h);
}

/* ---- compare ---------------------------------------------------------- */

/* The number at `key` of the map `v` (NaN for null). */
static double num_at(const sw_value *v, const char *key)
{
    const sw_value *x = sw_value_map_get(v, key);

    assert_non_null(x);
    if (x->type == SW_NULL)
        return NAN;
    assert_true(x->type == SW_FLOAT || x->type == SW_INT);
    return x->type == SW_FLOAT ? x->u.f : (double)x->u.i;
}

/* Whether a and b agree to the 15 digits `sweep report --json` prints. */
static bool same(double a, double b)
{
    return fabs(a - b) <= 1e-12 * fmax(fabs(a), fabs(b));
}

/* `sweep ARGS...` printed one JSON object: parsed (the caller frees). */
static sw_value *json_of(const sw_h *h, const char *const *args)
{
    char *out = NULL;
    sw_value *v = NULL;

    assert_int_equal(sw_h_run(h, args, &out), 0);
    assert_int_equal(sw_json_parse(&v, out, strlen(out)), SW_OK);
    free(out);
    return v;
}

static void test_compare_two_sweeps_side_by_side(void **st)
{
    sw_h h;
    char *file, *a, *b, *out = NULL;
    sw_value *cmp, *rep;
    const sw_value *list, *x, *best;

    (void)st;
    sw_h_init(&h);
    file = toy_sweep(&h, "method: grid\nparallel: 2",
                     "  x: {values: [1, 3]}\n  steps: {value: 3}\n"
                     "  sleep: {value: 0.05}\n");
    const char *run_a[] = {"run", file, "--gpus", "2", "--quiet", NULL};
    assert_int_equal(sw_h_run(&h, run_a, NULL), 0);
    free(file);
    file = toy_sweep(&h, "method: random\nrun_cap: 3\nseed: 1",
                     "  x: {min: 0.0, max: 6.0}\n  steps: {value: 2}\n"
                     "  sleep: {value: 0.01}\n");
    const char *run_b[] = {"run", file, "--quiet", NULL};
    assert_int_equal(sw_h_run(&h, run_b, NULL), 0);
    a = query1(&h, "select id from sweeps where method = 'grid'");
    b = query1(&h, "select id from sweeps where method = 'random'");
    const char *args[] = {"compare", a, b, "--json", "--price", "2", NULL};
    cmp = json_of(&h, args);
    list = sw_value_map_get(cmp, "sweeps");
    assert_int_equal(list->u.list.len, 2);
    x = list->u.list.items[0];
    assert_string_equal(sw_value_map_get(x, "id")->u.s, a);
    assert_string_equal(sw_value_map_get(x, "method")->u.s, "grid");
    assert_true(num_at(sw_value_map_get(x, "runs"), "finished") == 2);
    best = sw_value_map_get(x, "best");
    assert_true(fabs(num_at(best, "value") - 1.333333) < 1e-9); /* 1 + 1/3 */
    assert_true(num_at(sw_value_map_get(best, "params"), "x") == 3);
    /* the report module's own figures, to the digit */
    const char *report[] = {"report", a, "--json", "--price", "2", NULL};
    rep = json_of(&h, report);
    assert_true(num_at(x, "gpu_seconds_busy") > 0);
    assert_true(
        same(num_at(x, "gpu_seconds_busy"), num_at(rep, "gpu_seconds_busy")));
    assert_true(same(num_at(x, "occupancy"), num_at(rep, "occupancy")));
    assert_true(same(num_at(x, "cost"), num_at(rep, "cost")));
    sw_value_free(rep);
    x = list->u.list.items[1];
    assert_string_equal(sw_value_map_get(x, "method")->u.s, "random");
    assert_true(num_at(sw_value_map_get(x, "runs"), "total") == 3);
    assert_true(isnan(num_at(x, "occupancy"))); /* no GPUs */
    sw_value_free(cmp);
    /* for people: a line per figure, a column per sweep */
    const char *text[] = {"compare", a, b, NULL};
    assert_int_equal(sw_h_run(&h, text, &out), 0);
    assert_non_null(strstr(out, "method        grid"));
    assert_non_null(strstr(out, "random\n"));
    assert_non_null(strstr(out, "GPU time"));
    assert_non_null(strstr(out, "occupancy"));
    free(out);
    /* bad input */
    const char *one[] = {"compare", a, NULL};
    assert_int_equal(sw_h_run(&h, one, NULL), 2);
    const char *nope[] = {"compare", a, "nope", NULL};
    assert_int_equal(sw_h_run(&h, nope, NULL), 1);
    const char *price[] = {"compare", a, b, "--price", "-1", NULL};
    assert_int_equal(sw_h_run(&h, price, NULL), 2);
    free(a);
    free(b);
    free(file);
    sw_h_dispose(&h);
}

/* ---- a sweep none of whose attempts could start ----------------------- */

static void test_no_attempt_could_start_is_a_failure(void **st)
{
    sw_h h;
    char *file, *text, *prog, *err, *id, *cmd;

    (void)st;
    sw_h_init(&h);
    prog = sw_aprintf("%s/train.sh", h.dir); /* not there yet */
    text = sw_aprintf("program: %s\nmethod: grid\nmetric: {name: loss, "
                      "goal: minimize}\ncommand:\n  - ${program}\n  - "
                      "${args}\nparameters:\n  x: {values: [1, 2, 3, 4]}\n"
                      "  steps: {value: 1}\n",
                      prog);
    file = sw_h_file(&h, "sweep.yaml", text);
    const char *run[] = {"run", file, "--quiet", NULL};
    stderr_clear(&h);
    assert_int_equal(sw_h_run(&h, run, NULL), 1);
    err = stderr_text(&h);
    assert_non_null(strstr(err, "none of its 4 attempts could start"));
    assert_non_null(strstr(err, "No such file or directory"));
    free(err);
    assert_int_equal(sw_h_count(&h, "select count(*) from sweeps where state "
                                    "= 'failed'"),
                     1);
    assert_int_equal(sw_h_count(&h, "select count(*) from attempts where "
                                    "outcome = 'not started' and reason like "
                                    "'cannot start: cannot run %'"),
                     4);
    /* fixed, it resumes: the failed runs go again */
    cmd = sw_aprintf("cp '%s' '%s' && chmod +x '%s'", sw_h_toy(), prog, prog);
    assert_int_equal(system(cmd), 0);
    id = query1(&h, "select id from sweeps");
    const char *resume[] = {"resume", id, "--quiet", NULL};
    assert_int_equal(sw_h_run(&h, resume, NULL), 0);
    assert_int_equal(sw_h_count(&h, "select count(*) from runs where state = "
                                    "'finished'"),
                     4);
    free(id);
    free(cmd);
    free(file);
    free(text);
    free(prog);
    sw_h_dispose(&h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stop_a_run_by_hand_while_it_runs),
        cmocka_unit_test(test_stop_a_sweep_is_ctrl_c),
        cmocka_unit_test(test_stop_refuses_bad_input),
        cmocka_unit_test(test_resume_run_cap_continues_a_finished_bayes_search),
        cmocka_unit_test(test_resume_run_cap_refuses_an_exhausted_grid),
        cmocka_unit_test(test_rm_removes_rows_and_folders),
        cmocka_unit_test(test_tag_and_note_are_stored_and_shown),
        cmocka_unit_test(test_compare_two_sweeps_side_by_side),
        cmocka_unit_test(test_no_attempt_could_start_is_a_failure),
    };

    setenv("SWEEP_GIT", "off", 1);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
