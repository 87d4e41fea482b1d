/*
 * store_export.c - the store's record of exports: what each export sent
 * where, per sweep and per run (the `exports` table), and a run's metric
 * rows in the order they arrived, for building its history.
 *
 * A record is written after each request the destination accepted, in its
 * own statement (a transaction of one), so an export killed at any moment
 * finds, on its next start, at most one request it had not recorded; the
 * exporter learns that one from the destination itself. Statements here
 * are prepared per call: an export makes a few per run, not per row.
 */
#include <stdlib.h>
#include <string.h>

#include "orchestrator/store/store_internal.h"

#define EXPORT_COLS                                                            \
    "target, dest, sweep_id, run_id, remote_id, remote_node, history,"         \
    " summary, state, files, exported_at, labels"

void sw_export_rec_dispose(sw_export_rec *r)
{
    if (!r)
        return;
    free(r->target);
    free(r->dest);
    free(r->sweep_id);
    free(r->run_id);
    free(r->remote_id);
    free(r->remote_node);
    free(r->state);
    free(r->files);
    free(r->labels);
    memset(r, 0, sizeof(*r));
}

/* ?1..?4: the key; run_id NULL matches the sweep's own record. */
static int bind_key(sqlite3_stmt *s, const char *target, const char *dest,
                    const char *sweep_id, const char *run_id)
{
    return sw_store__bind_str(s, 1, target) || sw_store__bind_str(s, 2, dest) ||
           sw_store__bind_str(s, 3, sweep_id) ||
           sw_store__bind_str(s, 4, run_id);
}

static void read_export(sqlite3_stmt *s, sw_export_rec *r)
{
    r->target = sw_store__col_str(s, 0);
    r->dest = sw_store__col_str(s, 1);
    r->sweep_id = sw_store__col_str(s, 2);
    r->run_id = sw_store__col_str(s, 3);
    r->remote_id = sw_store__col_str(s, 4);
    r->remote_node = sw_store__col_str(s, 5);
    r->history = sqlite3_column_int64(s, 6);
    r->summary = sqlite3_column_int64(s, 7);
    r->state = sw_store__col_str(s, 8);
    r->files = sw_store__col_str(s, 9);
    r->exported_at = sqlite3_column_double(s, 10);
    r->labels = sw_store__col_str(s, 11);
}

int sw_store_get_export(sw_store *st, const char *target, const char *dest,
                        const char *sweep_id, const char *run_id,
                        sw_export_rec *out)
{
    sqlite3_stmt *s = NULL;
    int error, rc;

    memset(out, 0, sizeof(*out));
    out->summary = -1;
    error = sw_store__prepare(
        st,
        "SELECT " EXPORT_COLS " FROM exports WHERE target = ?1"
        " AND dest = ?2 AND sweep_id = ?3 AND run_id IS ?4",
        &s, "get export");
    if (error < 0)
        return error;
    if (bind_key(s, target, dest, sweep_id, run_id) != SQLITE_OK) {
        error = sw_store__fail_io(st, "get export");
        goto done;
    }
    rc = sqlite3_step(s);
    if (rc == SQLITE_ROW)
        read_export(s, out);
    else if (rc == SQLITE_DONE)
        error = SW_ENOTFOUND;
    else
        error = sw_store__fail_io(st, "get export");
done:
    sqlite3_finalize(s);
    return error;
}

/* ?5..?12: what was sent. */
static int bind_sent(sqlite3_stmt *s, const sw_export_rec *r)
{
    return sw_store__bind_str(s, 5, r->remote_id) ||
           sw_store__bind_str(s, 6, r->remote_node) ||
           sqlite3_bind_int64(s, 7, r->history) ||
           sqlite3_bind_int64(s, 8, r->summary) ||
           sw_store__bind_str(s, 9, r->state) ||
           sw_store__bind_str(s, 10, r->files) ||
           sqlite3_bind_double(s, 11, r->exported_at) ||
           sw_store__bind_str(s, 12, r->labels);
}

/* Runs the UPDATE or INSERT `sql` bound to `r`; *changed: a row was. */
static int write_export(sw_store *st, const char *sql, const sw_export_rec *r,
                        bool *changed)
{
    sqlite3_stmt *s = NULL;
    int error = sw_store__prepare(st, sql, &s, "put export");

    if (error < 0)
        return error;
    if (bind_key(s, r->target, r->dest, r->sweep_id, r->run_id) ||
        bind_sent(s, r) || sqlite3_step(s) != SQLITE_DONE)
        error = sw_store__fail_io(st, "put export");
    else
        *changed = sqlite3_changes(st->db) > 0;
    sqlite3_finalize(s);
    return error;
}

int sw_store_put_export(sw_store *st, const sw_export_rec *r)
{
    bool changed = false;
    int error = write_export(
        st,
        "UPDATE exports SET remote_id = ?5, remote_node = ?6, history = ?7,"
        " summary = ?8, state = ?9, files = ?10, exported_at = ?11,"
        " labels = ?12"
        " WHERE target = ?1 AND dest = ?2 AND sweep_id = ?3 AND run_id IS ?4",
        r, &changed);

    if (error == SW_OK && !changed)
        error = write_export(st,
                             "INSERT INTO exports (" EXPORT_COLS ") VALUES"
                             " (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11,"
                             " ?12)",
                             r, &changed);
    return error;
}

/* Where the run's rows lie: how many, and the smallest and largest
 * rowid (from the index on run_id alone). */
static int rows_span(sw_store *st, const char *run_id, int64_t span[3])
{
    sqlite3_stmt *s = NULL;
    int error =
        sw_store__prepare(st,
                          "SELECT count(*), min(rowid), max(rowid) FROM metrics"
                          " WHERE run_id = ?1",
                          &s, "metric rows");

    if (error < 0)
        return error;
    if (sw_store__bind_str(s, 1, run_id) != SQLITE_OK ||
        sqlite3_step(s) != SQLITE_ROW)
        error = sw_store__fail_io(st, "metric rows");
    for (int i = 0; error == SW_OK && i < 3; i++)
        span[i] = sqlite3_column_int64(s, i);
    sqlite3_finalize(s);
    return error;
}

/* A run's rows are usually close together (a few runs report at once):
 * then a scan of that rowid range, which comes in order, is several times
 * faster than fetching each row from the index and sorting. When the
 * range holds mostly other runs' rows, the index it is. */
int sw_store_metric_rows(sw_store *st, const char *run_id,
                         sw_store_row_metric_fn fn, void *ctx)
{
    static const char *const by_range =
        "SELECT step, name, value, time FROM metrics"
        " WHERE rowid BETWEEN ?2 AND ?3 AND +run_id = ?1";
    static const char *const by_index =
        "SELECT step, name, value, time FROM metrics"
        " WHERE run_id = ?1 AND ?2 <= ?3 ORDER BY rowid";
    sqlite3_stmt *s = NULL;
    int64_t span[3];
    int error = rows_span(st, run_id, span);
    int rc = SQLITE_OK;

    if (error < 0 || span[0] == 0)
        return error;
    error = sw_store__prepare(
        st, span[2] - span[1] < 8 * span[0] ? by_range : by_index, &s,
        "metric rows");
    if (error < 0)
        return error;
    if (sw_store__bind_str(s, 1, run_id) || sqlite3_bind_int64(s, 2, span[1]) ||
        sqlite3_bind_int64(s, 3, span[2]))
        rc = SQLITE_ERROR;
    while (rc == SQLITE_OK && error == SW_OK &&
           (rc = sqlite3_step(s)) == SQLITE_ROW) {
        error = fn(ctx,
                   sqlite3_column_type(s, 0) == SQLITE_NULL
                       ? -1
                       : sqlite3_column_int64(s, 0),
                   (const char *)sqlite3_column_text(s, 1),
                   sqlite3_column_type(s, 2) != SQLITE_NULL,
                   sqlite3_column_double(s, 2), sqlite3_column_double(s, 3));
        rc = SQLITE_OK;
    }
    if (error == SW_OK && rc != SQLITE_DONE)
        error = sw_store__fail_io(st, "metric rows");
    sqlite3_finalize(s);
    return error;
}
