/*
 * test_events.c - the engine's one event call, seen from outside: a
 * consumer of the test's own, subscribed as a dashboard would be, watches
 * a real sweep (real trial processes on the local executor, reporting
 * over HTTP to the real metrics server and in @metrics lines on stdout,
 * Hyperband stopping some) and must have seen every state change and
 * every stored value, in the order the store holds them, and nothing the
 * store does not hold.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "orchestrator/engine/engine_internal.h"
#include "sweeps/buf.h"
#include "testutil.h"

/* What the consumer saw, one line an event, and the state changes of
 * each run as "from>to" words. */
typedef struct {
    sw_buf values; /* "run step name value\n", in order */
    sw_buf runs;   /* "run from>to [end]\n", in order */
    size_t notices, ticks, sweeps;
    bool out_of_order; /* a value of a run not running at the time */
} watcher;

static int watch(void *ctx, const sw_event *ev)
{
    watcher *w = ctx;

    switch (ev->kind) {
    case SW_EV_RUN:
        sw_buf_printf(&w->runs, "%s %s>%s%s\n", ev->run->id,
                      sw_run_state_name(ev->from),
                      sw_run_state_name(ev->run->state), ev->end ? " end" : "");
        break;
    case SW_EV_VALUE:
        w->out_of_order = w->out_of_order || ev->run->state != SW_RUN_RUNNING;
        sw_buf_printf(&w->values, "%s %lld %s %.17g\n", ev->run->id,
                      (long long)ev->step, ev->name, ev->value);
        break;
    case SW_EV_NOTICE:
        w->notices++;
        break;
    case SW_EV_TICK:
        w->ticks++;
        break;
    case SW_EV_SWEEP:
        w->sweeps++;
        break;
    }
    return SW_OK;
}

/* The rows of `sql` (columns joined by spaces, values as %.17g), one a
 * line. */
static char *rows(const char *db, const char *sql)
{
    sw_buf b = SW_BUF_INIT;
    sqlite3 *h = NULL;
    sqlite3_stmt *st = NULL;
    int i;

    assert_int_equal(sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL),
                     SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(h, sql, -1, &st, NULL), SQLITE_OK);
    while (sqlite3_step(st) == SQLITE_ROW) {
        for (i = 0; i < sqlite3_column_count(st); i++) {
            if (i)
                sw_buf_puts(&b, " ");
            if (sqlite3_column_type(st, i) == SQLITE_FLOAT)
                sw_buf_printf(&b, "%.17g", sqlite3_column_double(st, i));
            else
                sw_buf_puts(&b, (const char *)sqlite3_column_text(st, i));
        }
        sw_buf_puts(&b, "\n");
    }
    sqlite3_finalize(st);
    sqlite3_close(h);
    return sw_buf_detach(&b);
}

static long count(const char *db, const char *sql)
{
    char *text = rows(db, sql);
    long n = atol(text);

    free(text);
    return n;
}

static char *write_sweep(const char *dir)
{
    char *path = sw_aprintf("%s/sweep.yaml", dir);
    FILE *f = fopen(path, "w");

    assert_non_null(f);
    /* curves of test_metrics.c: the first never worse than a threshold,
     * the second stopped by Hyperband when it runs after the first */
    fprintf(f,
            "method: grid\nparallel: 2\n"
            "metric: {name: val_loss, goal: minimize}\n"
            "early_terminate: {type: hyperband, min_iter: 2, eta: 2}\n"
            "command: [/usr/bin/python3, %s/cli/hb_trial.py]\n"
            "parameters:\n"
            "  mode: {values: [http, stdout]}\n"
            "  curve: {values: ['8,7,6,5,4,3,2,1', '10,9,8.8,8.6,8.4']}\n"
            "  pause: {value: 0.02}\n",
            getenv("SW_TEST_DATA"));
    fclose(f);
    return path;
}

/* The changes the consumer saw of run `id`, in the order it saw them. */
static char *changes_of(const watcher *w, const char *id)
{
    sw_buf b = SW_BUF_INIT;
    const char *line = sw_buf_cstr(&w->runs), *nl;
    size_t n = strlen(id);

    for (; *line; line = nl + 1) {
        nl = strchr(line, '\n');
        if (strncmp(line, id, n) == 0 && line[n] == ' ')
            sw_buf_put(&b, line, (size_t)(nl - line + 1));
    }
    return sw_buf_detach(&b);
}

/* Each run's state changes, exactly and in order, as the store's final
 * word and attempts count say they must have been: each attempt a
 * pending>running and one ending change, back to pending for one that
 * is retried, to the run's state for the last; and no change of a run
 * the store does not hold. */
static void expect_run_changes(const watcher *w, const char *db)
{
    char *runs = rows(db, "SELECT id, state, attempts FROM runs ORDER BY idx");
    char id[64], state[32], *got;
    const char *line = runs;
    long attempts, k;
    size_t told = 0, seen = 0;
    sw_buf want = SW_BUF_INIT;

    while (sscanf(line, "%63s %31s %ld", id, state, &attempts) == 3) {
        assert_true(attempts > 0);
        sw_buf_dispose(&want);
        sw_buf_init(&want);
        for (k = 1; k <= attempts; k++)
            sw_buf_printf(&want, "%s pending>running\n%s running>%s end\n", id,
                          id, k < attempts ? "pending" : state);
        got = changes_of(w, id);
        assert_string_equal(got, sw_buf_cstr(&want));
        told += 2 * (size_t)attempts;
        free(got);
        line = strchr(line, '\n') + 1;
    }
    for (line = sw_buf_cstr(&w->runs); (line = strchr(line, '\n')); line++)
        seen++;
    assert_int_equal(seen, told);
    sw_buf_dispose(&want);
    free(runs);
}

static void test_a_consumer_sees_every_change_and_value(void **state)
{
    char dir[] = "/tmp/sw-events-XXXXXX", *home, *path, *db, *stored;
    sw_engine_opts o = SW_ENGINE_OPTS_INIT;
    watcher w = {SW_BUF_INIT, SW_BUF_INIT, 0, 0, 0, false};
    sw_engine e;
    int error;

    (void)state;
    setenv("SWEEP_NVML_LIBRARY", "", 1);
    setenv("SWEEP_GIT", "off", 1); /* the trial lives in sweep's own tree */
    assert_non_null(mkdtemp(dir));
    home = sw_aprintf("%s/home", dir);
    path = write_sweep(dir);
    assert_int_equal(chdir(dir), 0);
    o.home = home;
    o.quiet = true;
    sw_engine__init(&e);
    sw_engine__subscribe(&e, watch, &w);
    error = sw_engine__prepare_run(&e, path, &o);
    if (!error)
        error = sw_engine__setup(&e, &o);
    if (!error) {
        e.serve = true;
        error = sw_engine__run_uv(&e);
    }
    if (error)
        fail_msg("the sweep: %s", sw_error_last());
    assert_int_equal(e.done + e.stopped, 4);
    sw_engine__dispose(&e);

    db = sw_aprintf("%s/sweep.db", home);
    /* every value the store holds, in the order it holds them */
    stored = rows(db, "SELECT run_id, ifnull(step, -1), name, value FROM "
                      "metrics ORDER BY rowid");
    assert_string_equal(sw_buf_cstr(&w.values), stored);
    free(stored);
    assert_false(w.out_of_order);
    /* from both ways in: HTTP and stdout runs each stored values */
    assert_true(count(db, "SELECT count(*) FROM metrics m JOIN runs r "
                          "ON r.id = m.run_id WHERE r.params LIKE "
                          "'%\"http\"%'") > 0);
    assert_true(count(db, "SELECT count(*) FROM metrics m JOIN runs r "
                          "ON r.id = m.run_id WHERE r.params LIKE "
                          "'%\"stdout\"%'") > 0);
    expect_run_changes(&w, db);
    assert_true(w.ticks > 0);
    assert_int_equal(w.sweeps, 1);
    assert_true(w.notices > 0); /* the sweep's first line, at least */

    sw_buf_dispose(&w.values);
    sw_buf_dispose(&w.runs);
    free(db);
    free(path);
    free(home);
    sw_test_rm_tree(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_consumer_sees_every_change_and_value),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
