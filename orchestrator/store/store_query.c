/*
 * store_query.c - read-only SQL over the store, for `sweep query`.
 *
 * sw_store_query runs user SQL on a second, read-only connection guarded
 * five ways (read-only open, query_only, no extensions, an authorizer that
 * admits reads and a list of pure functions, sqlite3_stmt_readonly), so no
 * statement given to it can change the store or touch another file. The
 * connection is opened on first use and closed by sw_store_close.
 *
 * A query is also bounded in time and memory, on that connection only, so
 * the writer is never affected. Its limits (sw_store__query_limits, in
 * store_guard.c) cap every string and blob at SW_STORE_QUERY_MAX_BYTES,
 * checked before SQLite allocates it, and the statement's size; a
 * watchdog thread interrupts it at its deadline (and a progress handler
 * checks the deadline every PROGRESS_STEPS steps, should the thread not
 * start); the built-ins that could loop for long inside one call
 * (printf('%.*c', 2000000000, 'x'), instr of two huge values) are checked
 * before each call. The page cache is capped by cache_size and sorts
 * spill to temp files, so what is left is bounded by the time limit. A
 * process-wide sqlite3_hard_heap_limit64 would also fail the writer's
 * statements, in the engine, so it is not used.
 */
#include "orchestrator/store/store.h"

#include <ctype.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "orchestrator/store/store_internal.h"

#define BLOB_HEX_MAX 32     /* longer blobs are shown as "<blob N bytes>" */
#define PROGRESS_STEPS 1000 /* VM steps between checks of the deadline */

/* Functions a query may call, each between spaces: pure ones, without
 * side effects, that can't reach a file, load code or allocate at will
 * (zeroblob, randomblob). Anything else (load_extension, fts3_tokenizer,
 * ...) is refused. json_* and jsonb_* are allowed by prefix. */
static const char safe_functions[] =
    " abs changes char coalesce concat concat_ws format glob hex ifnull iif"
    " instr last_insert_rowid length like likelihood likely lower ltrim max"
    " min nullif octet_length printf quote random replace round rtrim sign"
    " soundex sqlite_version substr substring total_changes trim typeof"
    " unhex unicode unlikely upper"
    " avg count group_concat string_agg sum total"
    " row_number rank dense_rank percent_rank cume_dist ntile lag lead"
    " first_value last_value nth_value"
    " date time datetime julianday unixepoch strftime timediff current_date"
    " current_time current_timestamp"
    " acos acosh asin asinh atan atan2 atanh ceil ceiling cos cosh degrees"
    " exp floor ln log log10 log2 mod pi pow power radians sin sinh sqrt tan"
    " tanh trunc"
    " json jsonb -> ->> ";

static bool safe_function(const char *name)
{
    char key[64];
    size_t n = name ? strlen(name) : 0;

    if (n == 0 || n + 2 >= sizeof(key))
        return false;
    if (strncasecmp(name, "json_", 5) == 0 ||
        strncasecmp(name, "jsonb_", 6) == 0)
        return true;
    key[0] = ' ';
    for (size_t i = 0; i < n; i++)
        key[i + 1] = (char)tolower((unsigned char)name[i]);
    key[n + 1] = ' ';
    key[n + 2] = '\0';
    return strstr(safe_functions, key) != NULL;
}

/* The authorizer of the query connection: reads only. The first reason
 * to refuse is kept for the error message. */
static int query_auth(void *ud, int action, const char *a, const char *b,
                      const char *db, const char *trigger)
{
    sw_store *st = ud;
    char why[sizeof(st->refused)];

    (void)a, (void)db, (void)trigger;
    switch (action) {
    case SQLITE_SELECT:
    case SQLITE_READ:
    case SQLITE_RECURSIVE:
        return SQLITE_OK;
    case SQLITE_FUNCTION:
        if (safe_function(b))
            return SQLITE_OK;
        snprintf(why, sizeof(why), "function %s() is not allowed", b ? b : "?");
        break;
    case SQLITE_ATTACH:
    case SQLITE_DETACH:
        snprintf(why, sizeof(why), "ATTACH and DETACH are not allowed");
        break;
    case SQLITE_PRAGMA:
        snprintf(why, sizeof(why), "PRAGMA is not allowed");
        break;
    default:
        snprintf(why, sizeof(why), "not a read-only statement");
        break;
    }
    if (!st->refused[0])
        memcpy(st->refused, why, sizeof(why));
    return SQLITE_DENY;
}

/* The first use of an eponymous virtual table on a connection compiles an
 * internal UPDATE of sqlite_master, which the authorizer would refuse; the
 * JSON table functions are pure, so they are set up before it is on. */
static void warm_up(sqlite3 *db)
{
    static const char *const sql[] = {"SELECT * FROM json_each('[]')",
                                      "SELECT * FROM json_tree('[]')"};

    for (size_t i = 0; i < sizeof(sql) / sizeof(sql[0]); i++) {
        sqlite3_stmt *s = NULL;

        sqlite3_prepare_v2(db, sql[i], -1, &s, NULL);
        sqlite3_finalize(s);
    }
}

/* The progress handler: non-zero (SQLite then interrupts the statement)
 * once the running query is past its deadline. */
static int query_progress(void *ud)
{
    sw_store *st = ud;

    if (st->q_deadline > 0 && sw_store__now() > st->q_deadline)
        st->q_late = true;
    return st->q_late;
}

/* Opens the read-only query connection on first use. */
static int query_open(sw_store *st)
{
    sqlite3 *db = NULL;
    int error = SW_OK;

    if (st->qdb)
        return SW_OK;
    if (sqlite3_open_v2(st->path, &db,
                        SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL) ||
        sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 0, NULL) ||
        sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, NULL) ||
        sqlite3_db_config(db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, NULL) ||
        sqlite3_exec(db, "PRAGMA query_only = 1", NULL, NULL, NULL)) {
        error = sw_error_set(SW_EIO, "store %s: query: open: %s", st->path,
                             db ? sqlite3_errmsg(db) : "out of memory");
        goto done;
    }
    sqlite3_busy_timeout(db, SW_STORE_BUSY_MS);
    sw_store__query_limits(db);
    if ((error = sw_store__guard(st, db)) < 0)
        goto done;
    /* SQLite's default 2 MiB: a query's scan of the whole store faults in
     * every fresh page of a larger cache (16 MiB made count(*) over 1M
     * metrics 3x the sqlite3 shell's time); the OS caches the file. */
    sqlite3_exec(db, "PRAGMA cache_size = -2000", NULL, NULL, NULL);
    sqlite3_progress_handler(db, PROGRESS_STEPS, query_progress, st);
    warm_up(db);
    sqlite3_set_authorizer(db, query_auth, st);
    st->qdb = db;
    db = NULL;
done:
    sqlite3_close(db);
    return error;
}

static int refuse(const char *why)
{
    return sw_error_set(SW_EINVALID, "query refused: %s", why);
}

/* After the first statement only blanks, ';' and comments may follow. */
static int only_one(sw_store *st, const char *tail)
{
    while (*tail) {
        sqlite3_stmt *next = NULL;
        const char *rest = tail;
        int rc;

        if (isspace((unsigned char)*tail) || *tail == ';') {
            tail++;
            continue;
        }
        rc = sqlite3_prepare_v2(st->qdb, tail, -1, &next, &rest);
        sqlite3_finalize(next);
        if (rc != SQLITE_OK || next || rest == tail)
            return refuse("one statement at a time");
        tail = rest;
    }
    return SW_OK;
}

/* The error of a statement that failed on the query connection. */
static int query_error(sw_store *st, double limit)
{
    int rc = sqlite3_errcode(st->qdb);

    if (st->refused[0])
        return refuse(st->refused);
    if (st->stopped[0])
        return sw_error_set(SW_EINVALID, "query stopped: %s", st->stopped);
    if (st->q_late || rc == SQLITE_INTERRUPT)
        return sw_error_set(
            SW_EINVALID, "query stopped: it ran past %g s (--timeout)", limit);
    if (rc == SQLITE_TOOBIG || rc == SQLITE_NOMEM)
        return sw_error_set(SW_EINVALID,
                            "query stopped: a value would take more than "
                            "%d MiB of memory (the limit of a query)",
                            SW_STORE_QUERY_MAX_BYTES / (1024 * 1024));
    return sw_error_set(SW_EINVALID, "SQL error: %s", sqlite3_errmsg(st->qdb));
}

/* The time limit of a query, in seconds; 0 for none. */
static double query_limit(const sw_store *st)
{
    if (st->q_timeout == 0)
        return SW_STORE_QUERY_TIMEOUT_S;
    return st->q_timeout < 0 ? 0 : st->q_timeout;
}

void sw_store_query_timeout(sw_store *st, double seconds)
{
    st->q_timeout = seconds > 0 ? seconds : -1;
}

static int query_prepare(sw_store *st, const char *sql, sqlite3_stmt **out)
{
    const char *tail = NULL;

    st->refused[0] = '\0';
    st->stopped[0] = '\0';
    if (sqlite3_prepare_v2(st->qdb, sql, -1, out, &tail) != SQLITE_OK)
        return query_error(st, query_limit(st));
    if (!*out)
        return refuse("no statement");
    if (!sqlite3_stmt_readonly(*out))
        return refuse("not a read-only statement");
    return only_one(st, tail);
}

/* A result column as a value: BLOBs become hex, or "<blob N bytes>". */
static sw_value *col_value(sqlite3_stmt *s, int i)
{
    const unsigned char *p;
    int n = sqlite3_column_bytes(s, i);
    sw_buf b = SW_BUF_INIT;
    sw_value *v;

    switch (sqlite3_column_type(s, i)) {
    case SQLITE_INTEGER:
        return sw_value_int(sqlite3_column_int64(s, i));
    case SQLITE_FLOAT:
        return sw_value_float(sqlite3_column_double(s, i));
    case SQLITE_TEXT:
        p = sqlite3_column_text(s, i);
        return sw_value_strn((const char *)p,
                             (size_t)sqlite3_column_bytes(s, i));
    case SQLITE_BLOB:
        break;
    default:
        return sw_value_null();
    }
    p = sqlite3_column_blob(s, i);
    if (n > BLOB_HEX_MAX)
        sw_buf_printf(&b, "<blob %d bytes>", n);
    for (int k = 0; n <= BLOB_HEX_MAX && k < n; k++)
        sw_buf_printf(&b, "%02x", p[k]);
    v = sw_value_str(sw_buf_cstr(&b));
    sw_buf_dispose(&b);
    return v;
}

/* Calls `row` with the names, then with each row; stops at the first
 * non-zero answer and returns it. */
static int query_rows(sw_store *st, sqlite3_stmt *s, sw_store_row_fn row,
                      void *ctx)
{
    int ncols = sqlite3_column_count(s);
    char **names = sw_calloc((size_t)ncols, sizeof(*names));
    sw_value **vals = sw_calloc((size_t)ncols, sizeof(*vals));
    int rc = SQLITE_DONE;
    int error;

    for (int i = 0; i < ncols; i++) {
        const char *name = sqlite3_column_name(s, i);

        names[i] = sw_strdup(name ? name : "");
    }
    error = row(ctx, -1, ncols, (const char *const *)names, NULL);
    for (int64_t r = 0; error == 0 && (rc = sqlite3_step(s)) == SQLITE_ROW;
         r++) {
        for (int i = 0; i < ncols; i++)
            vals[i] = col_value(s, i);
        error = row(ctx, r, ncols, (const char *const *)names,
                    (const sw_value *const *)vals);
        for (int i = 0; i < ncols; i++)
            sw_value_free(vals[i]);
    }
    if (error == 0 && rc != SQLITE_DONE)
        error = query_error(st, query_limit(st));
    for (int i = 0; i < ncols; i++)
        free(names[i]);
    free(names);
    free(vals);
    return error;
}

/* Runs one read-only statement on the committed state of the store. A
 * refused or failing statement is SW_EINVALID with one line ("query
 * refused: ...", "SQL error: ..."); a non-zero answer of `row` stops the
 * query and is returned as is. For the header row, `values` is NULL. */
int sw_store_query(sw_store *st, const char *sql, sw_store_row_fn row,
                   void *ctx)
{
    sqlite3_stmt *s = NULL;
    sw_store__watch *w;
    int error;

    if ((error = query_open(st)) < 0)
        return error;
    st->q_late = false;
    st->q_deadline =
        query_limit(st) > 0 ? sw_store__now() + query_limit(st) : 0;
    w = sw_store__watch_start(st->qdb, query_limit(st));
    if ((error = query_prepare(st, sql, &s)) < 0)
        goto done;
    error = query_rows(st, s, row, ctx);
done:
    sw_store__watch_stop(w);
    sqlite3_finalize(s);
    st->q_deadline = 0;
    return error;
}
