/*
 * store_report.c - what `sweep report` reads and the engine writes for
 * it: every attempt of every run (the `attempts` table), a sweep's
 * values of its metric in the order they arrived, and what gpu_samples
 * say of the devices.
 *
 * An attempt is written once, when it ends, keyed by (run, attempt): an
 * end recorded again (a resume that finds it a second time) replaces
 * the row instead of adding one. Statements are prepared per call: one
 * attempt ends at a time, and a report reads each table once.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "orchestrator/store/store_internal.h"

static int bind_time(sqlite3_stmt *s, int i, double t)
{
    return t > 0 ? sqlite3_bind_double(s, i, t) : sqlite3_bind_null(s, i);
}

void sw_attempt_rec_dispose(sw_attempt_rec *r)
{
    if (!r)
        return;
    free(r->run_id);
    free(r->outcome);
    free(r->reason);
    free(r->gpus);
    free(r->job);
    memset(r, 0, sizeof(*r));
}

int sw_store_put_attempt(sw_store *st, const sw_attempt_rec *a)
{
    sqlite3_stmt *s = NULL;
    int error;

    error = sw_store__prepare(
        st,
        "INSERT OR REPLACE INTO attempts (run_id, attempt,"
        " started_at, ended_at, outcome, reason, exit_code,"
        " signal, gpus, gpu, first_step, job, queued_seconds) VALUES (?1,"
        " ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
        &s, "put attempt");
    if (error < 0)
        return error;
    if (sw_store__bind_str(s, 1, a->run_id) ||
        sqlite3_bind_int64(s, 2, a->attempt) ||
        bind_time(s, 3, a->started_at) || bind_time(s, 4, a->ended_at) ||
        sw_store__bind_str(s, 5, a->outcome) ||
        sw_store__bind_str(s, 6, a->reason) ||
        (a->has_exit ? sqlite3_bind_int(s, 7, a->exit_code)
                     : sqlite3_bind_null(s, 7)) ||
        sqlite3_bind_int(s, 8, a->signal) ||
        sw_store__bind_str(s, 9, a->gpus) ||
        sqlite3_bind_double(s, 10, a->gpu) ||
        (a->has_first_step ? sqlite3_bind_int64(s, 11, a->first_step)
                           : sqlite3_bind_null(s, 11)) ||
        sw_store__bind_str(s, 12, a->job) ||
        (a->has_queued ? sqlite3_bind_double(s, 13, a->queued_seconds)
                       : sqlite3_bind_null(s, 13)) ||
        sqlite3_step(s) != SQLITE_DONE)
        error = sw_store__fail_io(st, "put attempt");
    sqlite3_finalize(s);
    return error;
}

int sw_store_count_attempts(sw_store *st, const char *run_id,
                            const char *outcome, int64_t *n)
{
    sqlite3_stmt *s = NULL;
    int error;

    *n = 0;
    error = sw_store__prepare(st,
                              "SELECT count(*) FROM attempts WHERE run_id = ?1"
                              " AND outcome = ?2",
                              &s, "count attempts");
    if (error < 0)
        return error;
    if (sw_store__bind_str(s, 1, run_id) || sw_store__bind_str(s, 2, outcome) ||
        sqlite3_step(s) != SQLITE_ROW)
        error = sw_store__fail_io(st, "count attempts");
    else
        *n = sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
    return error;
}

static void read_attempt(sqlite3_stmt *s, sw_attempt_rec *a)
{
    a->run_id = sw_store__col_str(s, 0);
    a->attempt = sqlite3_column_int64(s, 1);
    a->started_at = sqlite3_column_double(s, 2);
    a->ended_at = sqlite3_column_double(s, 3);
    a->outcome = sw_store__col_str(s, 4);
    a->reason = sw_store__col_str(s, 5);
    a->has_exit = sqlite3_column_type(s, 6) != SQLITE_NULL;
    a->exit_code = sqlite3_column_int(s, 6);
    a->signal = sqlite3_column_int(s, 7);
    a->gpus = sw_store__col_str(s, 8);
    a->gpu = sqlite3_column_double(s, 9);
    a->has_first_step = sqlite3_column_type(s, 10) != SQLITE_NULL;
    a->first_step = sqlite3_column_int64(s, 10);
    a->job = sw_store__col_str(s, 11);
    a->has_queued = sqlite3_column_type(s, 12) != SQLITE_NULL;
    a->queued_seconds = sqlite3_column_double(s, 12);
}

int sw_store_list_attempts(sw_store *st, const char *sweep_id,
                           sw_attempt_rec **out, size_t *n)
{
    sqlite3_stmt *s = NULL;
    size_t cap = 0;
    int error, rc = SQLITE_DONE;

    *out = NULL;
    *n = 0;
    error = sw_store__prepare(
        st,
        "SELECT a.run_id, a.attempt, a.started_at, a.ended_at,"
        " a.outcome, a.reason, a.exit_code, a.signal, a.gpus,"
        " a.gpu, a.first_step, a.job, a.queued_seconds FROM attempts a JOIN "
        "runs r ON r.id = a.run_id"
        " WHERE r.sweep_id = ?1 ORDER BY r.idx, a.attempt",
        &s, "list attempts");
    if (error < 0)
        return error;
    if (sw_store__bind_str(s, 1, sweep_id) != SQLITE_OK)
        error = sw_store__fail_io(st, "list attempts");
    while (!error && (rc = sqlite3_step(s)) == SQLITE_ROW) {
        sw_grow(out, &cap, *n + 1, sizeof(**out));
        memset(&(*out)[*n], 0, sizeof(**out));
        read_attempt(s, &(*out)[(*n)++]);
    }
    if (!error && rc != SQLITE_DONE)
        error = sw_store__fail_io(st, "list attempts");
    sqlite3_finalize(s);
    return error;
}

int sw_store_sweep_points(sw_store *st, const char *sweep_id, const char *name,
                          sw_store_point_fn fn, void *ctx)
{
    sqlite3_stmt *s = NULL;
    int error, rc = SQLITE_DONE;

    error = sw_store__prepare(
        st,
        "SELECT m.run_id, m.step, m.value, m.time FROM metrics m"
        " JOIN runs r ON r.id = m.run_id WHERE r.sweep_id = ?1"
        " AND m.name = ?2 ORDER BY m.rowid",
        &s, "read metric values");
    if (error < 0)
        return error;
    if (sw_store__bind_str(s, 1, sweep_id) || sw_store__bind_str(s, 2, name))
        error = sw_store__fail_io(st, "read metric values");
    while (!error && (rc = sqlite3_step(s)) == SQLITE_ROW) {
        bool has = sqlite3_column_type(s, 2) != SQLITE_NULL;

        error = fn(ctx, (const char *)sqlite3_column_text(s, 0),
                   sqlite3_column_type(s, 1) == SQLITE_NULL
                       ? -1
                       : sqlite3_column_int64(s, 1),
                   has, has ? sqlite3_column_double(s, 2) : NAN,
                   sqlite3_column_double(s, 3));
    }
    if (!error && rc != SQLITE_DONE)
        error = sw_store__fail_io(st, "read metric values");
    sqlite3_finalize(s);
    return error;
}

static int mean_util(sw_store *st, const char *sweep_id, double *util)
{
    sqlite3_stmt *s = NULL;
    int error;

    *util = NAN;
    error = sw_store__prepare(st,
                              "SELECT avg(utilization) FROM gpu_samples WHERE"
                              " sweep_id = ?1 AND utilization IS NOT NULL",
                              &s, "read gpu samples");
    if (error < 0)
        return error;
    if (sw_store__bind_str(s, 1, sweep_id) || sqlite3_step(s) != SQLITE_ROW)
        error = sw_store__fail_io(st, "read gpu samples");
    else if (sqlite3_column_type(s, 0) != SQLITE_NULL)
        *util = sqlite3_column_double(s, 0);
    sqlite3_finalize(s);
    return error;
}

int sw_store_sampled_devices(sw_store *st, const char *sweep_id,
                             sw_store_device_fn fn, void *ctx, double *util)
{
    sqlite3_stmt *s = NULL;
    int error, rc = SQLITE_DONE;

    if ((error = mean_util(st, sweep_id, util)) < 0)
        return error;
    error =
        sw_store__prepare(st,
                          "SELECT device, max(mig IS NOT NULL), min(gpu) FROM"
                          " gpu_samples"
                          " WHERE sweep_id = ?1 GROUP BY device ORDER BY"
                          " min(gpu), min(ifnull(mig, -1))",
                          &s, "read gpu samples");
    if (error < 0)
        return error;
    if (sw_store__bind_str(s, 1, sweep_id))
        error = sw_store__fail_io(st, "read gpu samples");
    while (!error && (rc = sqlite3_step(s)) == SQLITE_ROW)
        error = fn(ctx, (const char *)sqlite3_column_text(s, 0),
                   sqlite3_column_int64(s, 2), sqlite3_column_int(s, 1) != 0);
    if (!error && rc != SQLITE_DONE)
        error = sw_store__fail_io(st, "read gpu samples");
    sqlite3_finalize(s);
    return error;
}
