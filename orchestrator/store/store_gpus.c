/*
 * store_gpus.c - the store's GPU tables: a sweep's utilisation samples
 * (gpu_samples) and the runs that hold devices now (runs.gpus), for
 * `sweep gpus` and for reports on how busy the GPUs really were.
 *
 * A sample is written every few seconds at most, so its statement is
 * prepared at each call rather than at open: the store's hot statements
 * (store.c) stay the ones prepared once.
 */
#include <sqlite3.h>
#include <stdlib.h>

#include "orchestrator/store/store_internal.h"

static int failed(const sw_store *st, const char *what)
{
    return sw_error_set(SW_EIO, "store %s: %s: %s", st->path, what,
                        sqlite3_errmsg(st->db));
}

/* Binds v at i, NULL when negative (unknown). */
static int bind_known(sqlite3_stmt *s, int i, int64_t v)
{
    return v < 0 ? sqlite3_bind_null(s, i) : sqlite3_bind_int64(s, i, v);
}

int sw_store_put_gpu_sample(sw_store *st, const sw_gpu_sample *g)
{
    static const char sql[] =
        "INSERT INTO gpu_samples (sweep_id, time, device, gpu, mig,"
        " utilization, memory_used, memory_total, memory_trials, trials)"
        " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)";
    sqlite3_stmt *s = NULL;
    int error = SW_OK;

    if (sqlite3_prepare_v2(st->db, sql, -1, &s, NULL) != SQLITE_OK ||
        sqlite3_bind_text(s, 1, g->sweep_id, -1, SQLITE_STATIC) ||
        sqlite3_bind_double(s, 2, g->time) ||
        sqlite3_bind_text(s, 3, g->device, -1, SQLITE_STATIC) ||
        sqlite3_bind_int64(s, 4, g->gpu) || bind_known(s, 5, g->mig) ||
        bind_known(s, 6, g->util) || bind_known(s, 7, g->memory_used) ||
        bind_known(s, 8, g->memory_total) ||
        bind_known(s, 9, g->memory_trials) ||
        sqlite3_bind_int64(s, 10, g->trials) || sqlite3_step(s) != SQLITE_DONE)
        error = failed(st, "put a GPU sample");
    sqlite3_finalize(s);
    return error;
}

int sw_store_gpu_holders(sw_store *st, sw_store_holder_fn fn, void *ctx)
{
    static const char sql[] =
        "SELECT id, gpus FROM runs WHERE state = ?1"
        " AND gpus IS NOT NULL ORDER BY started_at, rowid";
    sqlite3_stmt *s = NULL;
    int error = SW_OK;
    int rc = sqlite3_prepare_v2(st->db, sql, -1, &s, NULL);

    if (rc == SQLITE_OK)
        rc = sqlite3_bind_text(s, 1, sw_run_state_name(SW_RUN_RUNNING), -1,
                               SQLITE_STATIC);
    while (rc == SQLITE_OK && error == SW_OK &&
           (rc = sqlite3_step(s)) == SQLITE_ROW) {
        error = fn(ctx, (const char *)sqlite3_column_text(s, 0),
                   (const char *)sqlite3_column_text(s, 1));
        rc = SQLITE_OK;
    }
    if (error == SW_OK && rc != SQLITE_DONE)
        error = failed(st, "runs holding GPUs");
    sqlite3_finalize(s);
    return error;
}
