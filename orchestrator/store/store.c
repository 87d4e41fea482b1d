/*
 * store.c - the sweep's system of record.
 *
 * One SQLite file per sweep home, written only by the orchestrator and read
 * by anyone. The writer runs in WAL mode with synchronous=NORMAL: readers
 * never block the writer or each other, and a committed transaction survives
 * a crash of the process (a power loss may lose the last few commits). Every
 * connection waits up to SW_STORE_BUSY_MS for a lock instead of failing
 * with "database is locked". The schema is versioned by PRAGMA user_version
 * and brought up to date, one step at a time inside one transaction, when a
 * writer opens the file; a file from a newer sweep is refused. Statements
 * are prepared once at open and reset after every use.
 *
 * The schema and its migrations are in store_schema.c; the read-only
 * query guard (sw_store_query) is in store_query.c.
 */
#include "orchestrator/store/store.h"

#include <fcntl.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "orchestrator/store/store_internal.h"

#define SWEEP_COLS                                                             \
    "id, name, file, config, method, metric, goal, state, cwd, seed,"          \
    " parallel, created_at, ended_at, git_commit, git_dirty, git, backend,"    \
    " command, gpus, backend_args, run_cap"
#define RUN_COLS                                                               \
    "id, sweep_id, idx, cell, params, argv, state, reason, exit_code,"         \
    " signal, attempts, created_at, started_at, ended_at, job,"                \
    " stdout_offset, value, git_commit, git_dirty, git, lost, gpus,"           \
    " queued_seconds, pending_reason, member, parent, parent_iter,"            \
    " json_valid(params)"

/* put_run and update_run share ?1..?14 and ?21..?24 (the id and the
 * mutable fields), so one function binds both; ?15..?20 and ?25..?27
 * are put_run's alone. */
static const char *const stmt_sql[Q_COUNT] = {
    [Q_BEGIN] = "BEGIN IMMEDIATE",
    [Q_COMMIT] = "COMMIT",
    [Q_ROLLBACK] = "ROLLBACK",
    /* a begin() and commit() inside a hold: one per metric batch of a
     * simulation, too many to parse each time */
    [Q_SAVEPOINT] = "SAVEPOINT sw_tx",
    [Q_RELEASE] = "RELEASE sw_tx",
    [Q_PUT_SWEEP] = "INSERT INTO sweeps (" SWEEP_COLS ") VALUES"
                    " (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13,"
                    " ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21)",
    [Q_GET_SWEEP] = "SELECT " SWEEP_COLS " FROM sweeps WHERE id = ?1",
    [Q_SWEEP_PREFIX] = "SELECT id FROM sweeps"
                       " WHERE substr(id, 1, length(?1)) = ?1"
                       " ORDER BY id LIMIT 3",
    [Q_SWEEP_BY_NAME] = "SELECT " SWEEP_COLS " FROM sweeps WHERE name = ?1"
                        " ORDER BY created_at DESC, rowid DESC LIMIT 1",
    [Q_LATEST_SWEEP] = "SELECT " SWEEP_COLS " FROM sweeps"
                       " ORDER BY created_at DESC, rowid DESC LIMIT 1",
    [Q_SET_SWEEP_STATE] = "UPDATE sweeps SET state = ?2, ended_at = ?3"
                          " WHERE id = ?1",
    [Q_LIST_SWEEPS] = "SELECT " SWEEP_COLS " FROM sweeps"
                      " ORDER BY created_at DESC, rowid DESC",
    [Q_PUT_RUN] = "INSERT INTO runs (id, state, reason, exit_code, signal,"
                  " attempts, started_at, ended_at, job, stdout_offset,"
                  " value, git_commit, git_dirty, git, sweep_id, idx, cell,"
                  " params, argv, created_at, lost, gpus, queued_seconds,"
                  " pending_reason, member, parent, parent_iter)"
                  " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12,"
                  " ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23,"
                  " ?24, ?25, ?26, ?27)",
    [Q_UPDATE_RUN] = "UPDATE runs SET state = ?2, reason = ?3, exit_code = ?4,"
                     " signal = ?5, attempts = ?6, started_at = ?7,"
                     " ended_at = ?8, job = ?9,"
                     " stdout_offset = ?10, value = ?11, git_commit = ?12,"
                     " git_dirty = ?13, git = ?14, lost = ?21, gpus = ?22,"
                     " queued_seconds = ?23, pending_reason = ?24"
                     " WHERE id = ?1",
    [Q_UPDATE_PROGRESS] = "UPDATE runs SET stdout_offset = ?2, value = ?3"
                          " WHERE id = ?1",
    [Q_GET_RUN] = "SELECT " RUN_COLS " FROM runs WHERE id = ?1",
    [Q_LIST_RUNS] = "SELECT " RUN_COLS " FROM runs WHERE sweep_id = ?1"
                    " ORDER BY idx",
    [Q_PUT_METRIC] = "INSERT INTO metrics (run_id, step, name, value, time)"
                     " VALUES (?1, ?2, ?3, ?4, ?5)",
    /* a NULL step never equals: a report without one always counts. Not
     * one INSERT ... SELECT ... WHERE NOT EXISTS: an insert that reads
     * its own table builds a temporary table each time */
    [Q_HAS_METRIC] = "SELECT 1 FROM metrics WHERE run_id = ?1 AND"
                     " step = ?2 AND name = ?3",
    [Q_COUNT_RUNS] = "SELECT state, count(*) FROM runs WHERE sweep_id = ?1"
                     " GROUP BY state",
    /* rowid is the order of reporting: each name's last row, ordered by
     * the name's first row */
    [Q_LAST_METRICS] = "SELECT name, value FROM (SELECT name, value,"
                       " rowid AS at, min(rowid) OVER w AS first,"
                       " max(rowid) OVER w AS last FROM metrics"
                       " WHERE run_id = ?1 WINDOW w AS (PARTITION BY name))"
                       " WHERE at = last ORDER BY first",
    /* a run's labels (store_edit.c): `sweep ls` reads them for each run */
    [Q_TAGS] = "SELECT tag FROM tags WHERE run_id = ?1"
               " ORDER BY created_at, rowid",
    [Q_NOTE] = "SELECT text FROM notes WHERE run_id = ?1",
};

/* Frees the strings of `r` and zeroes it; accepts NULL and zeroed structs. */
void sw_sweep_rec_dispose(sw_sweep_rec *r)
{
    if (!r)
        return;
    free(r->id);
    free(r->name);
    free(r->file);
    free(r->config);
    free(r->method);
    free(r->metric);
    free(r->goal);
    free(r->state);
    free(r->cwd);
    free(r->git_commit);
    free(r->git);
    free(r->backend);
    free(r->command);
    free(r->gpus);
    free(r->backend_args);
    memset(r, 0, sizeof(*r));
}

/* Frees the strings of `r` and zeroes it; accepts NULL and zeroed structs. */
void sw_run_rec_dispose(sw_run_rec *r)
{
    if (!r)
        return;
    free(r->id);
    free(r->sweep_id);
    free(r->cell);
    free(r->params);
    free(r->argv);
    free(r->reason);
    free(r->job);
    free(r->pending_reason);
    free(r->git_commit);
    free(r->git);
    free(r->gpus);
    free(r->parent);
    memset(r, 0, sizeof(*r));
}

/* ---- errors and small helpers ---------------------------------------- */

static int code_of(int rc)
{
    switch (rc & 0xff) {
    case SQLITE_CONSTRAINT:
    case SQLITE_MISMATCH:
    case SQLITE_TOOBIG:
        return SW_EINVALID;
    case SQLITE_IOERR:
    case SQLITE_FULL:
    case SQLITE_CANTOPEN:
    case SQLITE_READONLY:
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
        return SW_EIO;
    default:
        return SW_ERROR;
    }
}

int sw_store__fail(const sw_store *st, const char *fmt, ...)
{
    char what[256];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(what, sizeof(what), fmt, ap);
    va_end(ap);
    if (st->r_late)
        return sw_store__fail_io(st, what);
    return sw_error_set(code_of(sqlite3_errcode(st->db)), "store %s: %s: %s",
                        st->path, what, sqlite3_errmsg(st->db));
}

int sw_store__fail_io(const sw_store *st, const char *what)
{
    if (st->r_late)
        return sw_error_set(SW_EINVALID,
                            "stopped: it ran past %g s (--timeout; 0 for "
                            "no limit)",
                            st->r_limit);
    return sw_error_set(SW_EIO, "store %s: %s: %s", st->path, what,
                        sqlite3_errmsg(st->db));
}

double sw_store__now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Non-zero (SQLite then interrupts the statement) past the deadline. */
static int read_progress(void *ud)
{
    sw_store *st = ud;

    if (sw_store__now() > st->r_deadline)
        st->r_late = true;
    return st->r_late;
}

void sw_store_read_limit(sw_store *st, double seconds)
{
    st->r_late = false;
    st->r_limit = seconds > 0 ? seconds : 0;
    st->r_deadline = sw_store__now() + st->r_limit;
    sqlite3_progress_handler(st->db, seconds > 0 ? 1000 : 0,
                             seconds > 0 ? read_progress : NULL, st);
}

int sw_store__prepare(const sw_store *st, const char *sql, sqlite3_stmt **s,
                      const char *what)
{
    if (sqlite3_prepare_v2(st->db, sql, -1, s, NULL) != SQLITE_OK)
        return sw_store__fail_io(st, what);
    return SW_OK;
}

static void finish(sqlite3_stmt *s)
{
    sqlite3_reset(s);
    sqlite3_clear_bindings(s);
}

int sw_store__exec(const sw_store *st, const char *sql, const char *what)
{
    if (sqlite3_exec(st->db, sql, NULL, NULL, NULL) != SQLITE_OK)
        return sw_store__fail(st, "%s", what);
    return SW_OK;
}

int sw_store__bind_str(sqlite3_stmt *s, int i, const char *v)
{
    return v ? sqlite3_bind_text(s, i, v, -1, SQLITE_STATIC)
             : sqlite3_bind_null(s, i);
}

/* Times and optional numbers: 0 or !has is NULL in the table. */
static int bind_time(sqlite3_stmt *s, int i, double t)
{
    return t != 0 ? sqlite3_bind_double(s, i, t) : sqlite3_bind_null(s, i);
}

static int bind_opt(sqlite3_stmt *s, int i, bool has, double v)
{
    return has ? sqlite3_bind_double(s, i, v) : sqlite3_bind_null(s, i);
}

/* The git columns at ?i, ?i+1, ?i+2: commit, dirty flag, JSON. Without
 * provenance (no JSON) the dirty flag is NULL too. */
static int bind_git(sqlite3_stmt *s, int i, const char *commit, bool dirty,
                    const char *json)
{
    return sw_store__bind_str(s, i, commit) ||
           (json ? sqlite3_bind_int(s, i + 1, dirty)
                 : sqlite3_bind_null(s, i + 1)) ||
           sw_store__bind_str(s, i + 2, json);
}

char *sw_store__col_str(sqlite3_stmt *s, int i)
{
    const unsigned char *t = sqlite3_column_text(s, i);

    return t ? sw_strndup((const char *)t, (size_t)sqlite3_column_bytes(s, i))
             : NULL;
}

static double col_time(sqlite3_stmt *s, int i)
{
    return sqlite3_column_type(s, i) == SQLITE_NULL
               ? 0
               : sqlite3_column_double(s, i);
}

/* ---- open, close ---------------------------------------------------- */

/* A new store is created 0600 whatever the umask: it holds every run's
 * argv and config. SQLite gives the -wal and -shm files it creates later
 * the database file's own mode, so this one file is enough. A failure is
 * left to sqlite3_open_v2, which says it with SQLite's words. */
static void create_private(const char *path)
{
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);

    if (fd >= 0)
        close(fd);
}

/* A reader's connection is NOMUTEX: a read-only store is one thread's at
 * a time (its statements are shared state), so SQLite's mutex around each
 * call buys nothing there. The writer keeps it. */
static int open_db(sw_store *st)
{
    int flags = st->writer ? SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE
                           : SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX;

    if (st->writer)
        create_private(st->path);

    if (sqlite3_open_v2(st->path, &st->db, flags, NULL) != SQLITE_OK) {
        int rc = st->db ? sqlite3_errcode(st->db) : SQLITE_NOMEM;

        return sw_error_set(rc == SQLITE_CANTOPEN && !st->writer ? SW_ENOTFOUND
                                                                 : code_of(rc),
                            "store %s: open: %s", st->path,
                            st->db ? sqlite3_errmsg(st->db) : "out of memory");
    }
    sqlite3_busy_timeout(st->db, SW_STORE_BUSY_MS);
    return SW_OK;
}

/* After each commit of the writer: the WAL's size, for the engine to
 * decide when to checkpoint. Installing it turns SQLite's own
 * checkpoint-on-commit off: that fsync would stall the engine's loop. */
static int on_wal(void *ctx, sqlite3 *db, const char *name, int pages)
{
    (void)db;
    (void)name;
    ((sw_store *)ctx)->wal_pages = pages;
    return SQLITE_OK;
}

int sw_store_wal_pages(const sw_store *st)
{
    return st->wal_pages;
}

const char *sw_store_path(const sw_store *st)
{
    return st->path;
}

/* A connection of its own, so any thread may run it; PASSIVE: it never
 * waits for readers, and what it cannot copy now it copies next time. */
int sw_store_checkpoint(const char *path)
{
    sqlite3 *db = NULL;
    int rc = sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL);

    /* a first read opens the WAL; until then the file looks WAL-less */
    if (rc == SQLITE_OK)
        rc = sqlite3_exec(db, "PRAGMA schema_version", NULL, NULL, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_wal_checkpoint_v2(db, NULL, SQLITE_CHECKPOINT_PASSIVE,
                                       NULL, NULL);
    if (rc != SQLITE_OK && rc != SQLITE_BUSY)
        rc = sw_error_set(SW_EIO, "store %s: checkpoint: %s", path,
                          db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
    else
        rc = SW_OK;
    sqlite3_close(db);
    return rc;
}

/* WAL, synchronous=NORMAL and foreign keys for the writer. */
static int configure(sw_store *st)
{
    sqlite3_stmt *s = NULL;
    int error = SW_OK;
    const char *mode;

    if (!st->writer)
        return sw_store__exec(st, "PRAGMA trusted_schema = OFF", "open");
    if (sqlite3_prepare_v2(st->db, "PRAGMA journal_mode = WAL", -1, &s, NULL) !=
            SQLITE_OK ||
        sqlite3_step(s) != SQLITE_ROW) {
        error = sw_store__fail(st, "open: journal_mode = WAL");
        goto done;
    }
    mode = (const char *)sqlite3_column_text(s, 0);
    if (!mode || strcasecmp(mode, "wal") != 0) {
        error = sw_error_set(SW_EIO,
                             "store %s: open: WAL mode refused "
                             "(journal mode is %s)",
                             st->path, mode ? mode : "unknown");
        goto done;
    }
    error = sw_store__exec(
        st,
        "PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON;"
        " PRAGMA trusted_schema = OFF; PRAGMA cache_size = -65536",
        "open");
    sqlite3_wal_hook(st->db, on_wal, st);
done:
    sqlite3_finalize(s);
    return error;
}

static int prepare_all(sw_store *st)
{
    for (int i = 0; i < Q_COUNT; i++) {
        const char *sql = i == Q_BEGIN && !st->writer ? "BEGIN" : stmt_sql[i];

        if (sqlite3_prepare_v3(st->db, sql, -1, SQLITE_PREPARE_PERSISTENT,
                               &st->stmt[i], NULL) != SQLITE_OK)
            return sw_store__fail(st, "open: prepare");
    }
    return SW_OK;
}

/* Opens the store at `path`; a writer creates, configures and migrates it.
 * On failure *out is NULL and the error names the path. */
int sw_store_open(sw_store **out, const char *path, bool writer)
{
    sw_store *st = sw_calloc(1, sizeof(*st));
    int error;

    *out = NULL;
    st->path = sw_strdup(path);
    st->writer = writer;
    if ((error = open_db(st)) < 0 || (error = configure(st)) < 0 ||
        (error = sw_store__check_schema(st)) < 0 ||
        (error = prepare_all(st)) < 0)
        goto done;
    *out = st;
    st = NULL;
done:
    sw_store_close(st);
    return error;
}

/* Closes the store; an open transaction is rolled back. Accepts NULL. */
void sw_store_close(sw_store *st)
{
    if (!st)
        return;
    for (int i = 0; i < Q_COUNT; i++)
        sqlite3_finalize(st->stmt[i]);
    sqlite3_close(st->qdb);
    sqlite3_close(st->db);
    free(st->path);
    free(st);
}

/* ---- transactions ----------------------------------------------------- */

static int step_done(const sw_store *st, sqlite3_stmt *s, const char *what)
{
    int error = SW_OK;

    if (sqlite3_step(s) != SQLITE_DONE)
        error = sw_store__fail(st, "%s", what);
    finish(s);
    return error;
}

/* Opens a transaction (BEGIN IMMEDIATE for a writer, so it never has to
 * wait for the write lock halfway through); nesting is refused. Inside a
 * hold, a savepoint. */
int sw_store_begin(sw_store *st)
{
    if (!sqlite3_get_autocommit(st->db) && (!st->held || st->nested))
        return sw_error_set(SW_EINVALID,
                            "store %s: begin: a transaction is already open",
                            st->path);
    if (st->held) {
        st->nested = true;
        return step_done(st, st->stmt[Q_SAVEPOINT], "begin");
    }
    return step_done(st, st->stmt[Q_BEGIN], "begin");
}

/* Commits the open transaction; once this returns 0 it is on disk (inside
 * a hold: once the hold is released). */
int sw_store_commit(sw_store *st)
{
    if (sqlite3_get_autocommit(st->db) || (st->held && !st->nested))
        return sw_error_set(SW_EINVALID, "store %s: commit: no transaction",
                            st->path);
    if (st->held) {
        st->nested = false;
        return step_done(st, st->stmt[Q_RELEASE], "commit");
    }
    return step_done(st, st->stmt[Q_COMMIT], "commit");
}

/* Abandons the open transaction, if any (then it does nothing). */
int sw_store_rollback(sw_store *st)
{
    if (st->held && st->nested) {
        st->nested = false;
        return sw_store__exec(st, "ROLLBACK TO sw_tx; RELEASE sw_tx",
                              "rollback");
    }
    st->held = false;
    if (sqlite3_get_autocommit(st->db))
        return SW_OK;
    return step_done(st, st->stmt[Q_ROLLBACK], "rollback");
}

int sw_store_hold(sw_store *st)
{
    int error;

    if (st->held)
        return sw_error_set(SW_EINVALID,
                            "store %s: hold: a transaction is already open",
                            st->path);
    if ((error = sw_store_begin(st)) == SW_OK)
        st->held = true;
    return error;
}

int sw_store_release(sw_store *st)
{
    if (!st->held)
        return SW_OK;
    st->held = st->nested = false;
    return step_done(st, st->stmt[Q_COMMIT], "commit");
}

/* ---- sweeps ----------------------------------------------------------- */

static void read_sweep(sqlite3_stmt *s, sw_sweep_rec *r)
{
    r->id = sw_store__col_str(s, 0);
    r->name = sw_store__col_str(s, 1);
    r->file = sw_store__col_str(s, 2);
    r->config = sw_store__col_str(s, 3);
    r->method = sw_store__col_str(s, 4);
    r->metric = sw_store__col_str(s, 5);
    r->goal = sw_store__col_str(s, 6);
    r->state = sw_store__col_str(s, 7);
    r->cwd = sw_store__col_str(s, 8);
    r->seed = (uint64_t)sqlite3_column_int64(s, 9);
    r->parallel = sqlite3_column_int64(s, 10);
    r->created_at = col_time(s, 11);
    r->ended_at = col_time(s, 12);
    r->git_commit = sw_store__col_str(s, 13);
    r->git_dirty = sqlite3_column_int(s, 14) != 0;
    r->git = sw_store__col_str(s, 15);
    r->backend = sw_store__col_str(s, 16);
    r->command = sw_store__col_str(s, 17);
    r->gpus = sw_store__col_str(s, 18);
    r->backend_args = sw_store__col_str(s, 19);
    r->run_cap = sqlite3_column_int64(s, 20); /* NULL: 0, the file's */
}

/* Inserts a new sweep; a duplicate id or a missing required field is
 * SW_EINVALID. The seed is stored as its two's-complement int64. */
int sw_store_put_sweep(sw_store *st, const sw_sweep_rec *r)
{
    sqlite3_stmt *s = st->stmt[Q_PUT_SWEEP];
    int error = SW_OK;

    if (sw_store__bind_str(s, 1, r->id) || sw_store__bind_str(s, 2, r->name) ||
        sw_store__bind_str(s, 3, r->file) ||
        sw_store__bind_str(s, 4, r->config) ||
        sw_store__bind_str(s, 5, r->method) ||
        sw_store__bind_str(s, 6, r->metric) ||
        sw_store__bind_str(s, 7, r->goal) ||
        sw_store__bind_str(s, 8, r->state) ||
        sw_store__bind_str(s, 9, r->cwd) ||
        sqlite3_bind_int64(s, 10, (sqlite3_int64)r->seed) ||
        sqlite3_bind_int64(s, 11, r->parallel) ||
        bind_time(s, 12, r->created_at) || bind_time(s, 13, r->ended_at) ||
        bind_git(s, 14, r->git_commit, r->git_dirty, r->git) ||
        sw_store__bind_str(s, 17, r->backend ? r->backend : "local") ||
        sw_store__bind_str(s, 18, r->command) ||
        sw_store__bind_str(s, 19, r->gpus) ||
        sw_store__bind_str(s, 20, r->backend_args) ||
        bind_opt(s, 21, r->run_cap > 0, (double)r->run_cap) ||
        sqlite3_step(s) != SQLITE_DONE)
        error = sw_store__fail(st, "put sweep '%s'", r->id ? r->id : "(null)");
    finish(s);
    return error;
}

/* Steps a statement expected to give at most one sweep, bound to `key`:
 * SW_ENOTFOUND (message not set) when it gives none. */
static int fetch_sweep(sw_store *st, int q, const char *key, sw_sweep_rec *out)
{
    sqlite3_stmt *s = st->stmt[q];
    int error = SW_OK;
    int rc;

    if (key && sw_store__bind_str(s, 1, key) != SQLITE_OK) {
        error = sw_store__fail(st, "get sweep '%s'", key);
        goto done;
    }
    rc = sqlite3_step(s);
    if (rc == SQLITE_ROW)
        read_sweep(s, out);
    else if (rc == SQLITE_DONE)
        error = SW_ENOTFOUND;
    else
        error = sw_store__fail(st, "get sweep '%s'", key ? key : "(latest)");
done:
    finish(s);
    return error;
}

/* The ids that start with `prefix`, at most 3 (enough to tell "one" from
 * "ambiguous" and name a couple); *n gets how many. */
static int sweep_prefix(sw_store *st, const char *prefix, char *ids[3], int *n)
{
    sqlite3_stmt *s = st->stmt[Q_SWEEP_PREFIX];
    int error = SW_OK;
    int rc;

    *n = 0;
    if (sw_store__bind_str(s, 1, prefix) != SQLITE_OK) {
        error = sw_store__fail(st, "get sweep '%s'", prefix);
        goto done;
    }
    while (*n < 3 && (rc = sqlite3_step(s)) == SQLITE_ROW)
        ids[(*n)++] = sw_store__col_str(s, 0);
    if (*n < 3 && rc != SQLITE_DONE)
        error = sw_store__fail(st, "get sweep '%s'", prefix);
done:
    finish(s);
    return error;
}

static int ambiguous(const sw_store *st, const char *key, char *ids[3], int n)
{
    return sw_error_set(SW_EINVALID,
                        "store %s: sweep '%s' is ambiguous: it starts "
                        "'%s', '%s'%s",
                        st->path, key, ids[0], ids[1],
                        n > 2 ? " and more" : "");
}

/* Looks up by exact id, then by unique id prefix, then by name (the
 * latest of that name). A name wins over an ambiguous prefix. */
int sw_store_get_sweep(sw_store *st, const char *key, sw_sweep_rec *out)
{
    char *ids[3] = {NULL, NULL, NULL};
    int n = 0;
    int error;

    memset(out, 0, sizeof(*out));
    error = fetch_sweep(st, Q_GET_SWEEP, key, out);
    if (error != SW_ENOTFOUND || !key[0])
        goto done;
    if ((error = sweep_prefix(st, key, ids, &n)) < 0)
        goto done;
    if (n == 1)
        error = fetch_sweep(st, Q_GET_SWEEP, ids[0], out);
    else
        error = fetch_sweep(st, Q_SWEEP_BY_NAME, key, out);
    if (error == SW_ENOTFOUND && n > 1)
        error = ambiguous(st, key, ids, n);
done:
    if (error == SW_ENOTFOUND)
        error =
            sw_error_set(SW_ENOTFOUND, "no sweep '%s' in %s", key, st->path);
    for (int i = 0; i < n; i++)
        free(ids[i]);
    return error;
}

/* The sweep created last; SW_ENOTFOUND when the store has none. */
int sw_store_latest_sweep(sw_store *st, sw_sweep_rec *out)
{
    int error;

    memset(out, 0, sizeof(*out));
    error = fetch_sweep(st, Q_LATEST_SWEEP, NULL, out);
    if (error == SW_ENOTFOUND)
        error = sw_error_set(SW_ENOTFOUND, "no sweep in %s", st->path);
    return error;
}

/* Sets a sweep's state and end time (0: not ended, NULL in the table). */
int sw_store_set_sweep_state(sw_store *st, const char *id, const char *state,
                             double ended_at)
{
    sqlite3_stmt *s = st->stmt[Q_SET_SWEEP_STATE];
    int error = SW_OK;

    if (sw_store__bind_str(s, 1, id) || sw_store__bind_str(s, 2, state) ||
        bind_time(s, 3, ended_at) || sqlite3_step(s) != SQLITE_DONE)
        error = sw_store__fail(st, "set sweep '%s' %s", id,
                               state ? state : "(null)");
    else if (sqlite3_changes(st->db) == 0)
        error = sw_error_set(SW_ENOTFOUND, "no sweep '%s' in %s", id, st->path);
    finish(s);
    return error;
}

int sw_store_set_run_cap(sw_store *st, const char *id, int64_t run_cap)
{
    sqlite3_stmt *s = NULL;
    int error = sw_store__prepare(
        st, "UPDATE sweeps SET run_cap = ?2 WHERE id = ?1", &s, "set run_cap");

    if (error)
        return error;
    if (sw_store__bind_str(s, 1, id) || sqlite3_bind_int64(s, 2, run_cap) ||
        sqlite3_step(s) != SQLITE_DONE)
        error = sw_store__fail(st, "set sweep '%s' run_cap", id);
    else if (sqlite3_changes(st->db) == 0)
        error = sw_error_set(SW_ENOTFOUND, "no sweep '%s' in %s", id, st->path);
    sqlite3_finalize(s);
    return error;
}

/* All sweeps, newest first; the caller disposes each and frees *out. */
int sw_store_list_sweeps(sw_store *st, sw_sweep_rec **out, size_t *n)
{
    sqlite3_stmt *s = st->stmt[Q_LIST_SWEEPS];
    sw_sweep_rec *recs = NULL;
    size_t len = 0, cap = 0;
    int error = SW_OK;
    int rc;

    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        sw_grow(&recs, &cap, len + 1, sizeof(*recs));
        memset(&recs[len], 0, sizeof(*recs));
        read_sweep(s, &recs[len++]);
    }
    if (rc != SQLITE_DONE) {
        error = sw_store__fail(st, "list sweeps");
        while (len > 0)
            sw_sweep_rec_dispose(&recs[--len]);
        free(recs);
        recs = NULL;
    }
    finish(s);
    *out = recs;
    *n = len;
    return error;
}

/* ---- runs and metrics ------------------------------------------------- */

/* ?1 and the mutable fields, ?2..?14: shared by put_run and update_run. */
static int bind_run_state(sqlite3_stmt *s, const sw_run_rec *r)
{
    return sw_store__bind_str(s, 1, r->id) ||
           sw_store__bind_str(s, 2, sw_run_state_name(r->state)) ||
           sw_store__bind_str(s, 3, r->reason) ||
           (r->has_exit ? sqlite3_bind_int(s, 4, r->exit_code)
                        : sqlite3_bind_null(s, 4)) ||
           sqlite3_bind_int(s, 5, r->signal) ||
           sqlite3_bind_int64(s, 6, r->attempts) ||
           bind_time(s, 7, r->started_at) || bind_time(s, 8, r->ended_at) ||
           sw_store__bind_str(s, 9, r->job) ||
           sqlite3_bind_int64(s, 10, r->stdout_offset) ||
           bind_opt(s, 11, r->has_value, r->value) ||
           bind_git(s, 12, r->git_commit, r->git_dirty, r->git) ||
           sqlite3_bind_int64(s, 21, r->lost) || /* ?15..?20: put_run's */
           sw_store__bind_str(s, 22, r->gpus) ||
           bind_opt(s, 23, r->has_queued, r->queued_seconds) ||
           sw_store__bind_str(s, 24, r->pending_reason);
}

static int read_run(sqlite3_stmt *s, sw_run_rec *r)
{
    r->id = sw_store__col_str(s, 0);
    r->sweep_id = sw_store__col_str(s, 1);
    r->idx = sqlite3_column_int64(s, 2);
    r->cell = sw_store__col_str(s, 3);
    r->params = sw_store__col_str(s, 4);
    r->argv = sw_store__col_str(s, 5);
    r->reason = sw_store__col_str(s, 7);
    r->has_exit = sqlite3_column_type(s, 8) != SQLITE_NULL;
    r->exit_code = sqlite3_column_int(s, 8);
    r->signal = sqlite3_column_int(s, 9);
    r->attempts = sqlite3_column_int64(s, 10);
    r->created_at = col_time(s, 11);
    r->started_at = col_time(s, 12);
    r->ended_at = col_time(s, 13);
    r->job = sw_store__col_str(s, 14);
    r->stdout_offset = sqlite3_column_int64(s, 15);
    r->has_value = sqlite3_column_type(s, 16) != SQLITE_NULL;
    r->value = sqlite3_column_double(s, 16);
    r->git_commit = sw_store__col_str(s, 17);
    r->git_dirty = sqlite3_column_int(s, 18) != 0;
    r->git = sw_store__col_str(s, 19);
    r->lost = sqlite3_column_int64(s, 20);
    r->gpus = sw_store__col_str(s, 21);
    r->has_queued = sqlite3_column_type(s, 22) != SQLITE_NULL;
    r->queued_seconds = sqlite3_column_double(s, 22);
    r->pending_reason = sw_store__col_str(s, 23);
    r->has_member = sqlite3_column_type(s, 24) != SQLITE_NULL;
    r->member = sqlite3_column_int64(s, 24);
    r->parent = sw_store__col_str(s, 25);
    r->parent_iter = sqlite3_column_int64(s, 26);
    return sw_run_state_parse(&r->state,
                              (const char *)sqlite3_column_text(s, 6));
}

/* Inserts a new run. A NaN value is stored as NULL (SQLite has no NaN). */
int sw_store_put_run(sw_store *st, const sw_run_rec *r)
{
    sqlite3_stmt *s = st->stmt[Q_PUT_RUN];
    int error = SW_OK;

    if (bind_run_state(s, r) || sw_store__bind_str(s, 15, r->sweep_id) ||
        sqlite3_bind_int64(s, 16, r->idx) ||
        sw_store__bind_str(s, 17, r->cell) ||
        sw_store__bind_str(s, 18, r->params) ||
        sw_store__bind_str(s, 19, r->argv) || bind_time(s, 20, r->created_at) ||
        (r->has_member ? sqlite3_bind_int64(s, 25, r->member)
                       : sqlite3_bind_null(s, 25)) ||
        sw_store__bind_str(s, 26, r->parent) ||
        (r->parent ? sqlite3_bind_int64(s, 27, r->parent_iter)
                   : sqlite3_bind_null(s, 27)) ||
        sqlite3_step(s) != SQLITE_DONE)
        error = sw_store__fail(st, "put run '%s'", r->id ? r->id : "(null)");
    finish(s);
    return error;
}

/* Steps the update `s` of the run `id`, its binding's result `bound`
 * (0: bound); SW_ENOTFOUND when no row changed. */
static int update_one_run(sw_store *st, sqlite3_stmt *s, int bound,
                          const char *id)
{
    int error = SW_OK;

    if (bound || sqlite3_step(s) != SQLITE_DONE)
        error = sw_store__fail(st, "update run '%s'", id ? id : "(null)");
    else if (sqlite3_changes(st->db) == 0)
        error = sw_error_set(SW_ENOTFOUND,
                             "store %s: update run '%s': no "
                             "such run",
                             st->path, id ? id : "(null)");
    finish(s);
    return error;
}

/* Writes the mutable fields (state through git) of the run `r->id`;
 * SW_ENOTFOUND when there is no such run. */
int sw_store_update_run(sw_store *st, const sw_run_rec *r)
{
    sqlite3_stmt *s = st->stmt[Q_UPDATE_RUN];

    return update_one_run(st, s, bind_run_state(s, r), r->id);
}

/* Writes what reading the output of the run `r->id` moves: how far it is
 * read, and its latest value. SW_ENOTFOUND when there is no such run. */
int sw_store_update_progress(sw_store *st, const sw_run_rec *r)
{
    sqlite3_stmt *s = st->stmt[Q_UPDATE_PROGRESS];

    return update_one_run(st, s,
                          sw_store__bind_str(s, 1, r->id) ||
                              sqlite3_bind_int64(s, 2, r->stdout_offset) ||
                              bind_opt(s, 3, r->has_value, r->value),
                          r->id);
}

/* Reads the run `id` into *out (overwritten, not disposed first). */
int sw_store_get_run(sw_store *st, const char *id, sw_run_rec *out)
{
    sqlite3_stmt *s = st->stmt[Q_GET_RUN];
    int error = SW_OK;
    int rc;

    memset(out, 0, sizeof(*out));
    if (sw_store__bind_str(s, 1, id) != SQLITE_OK) {
        error = sw_store__fail(st, "get run '%s'", id);
        goto done;
    }
    rc = sqlite3_step(s);
    if (rc == SQLITE_ROW && (error = read_run(s, out)) < 0)
        sw_run_rec_dispose(out);
    else if (rc == SQLITE_DONE)
        error = sw_error_set(SW_ENOTFOUND, "no run '%s' in %s", id, st->path);
    else if (rc != SQLITE_ROW)
        error = sw_store__fail(st, "get run '%s'", id);
done:
    finish(s);
    return error;
}

/* Reads every row of `s` (bound, not yet stepped) as a run into *out. */
static int collect_runs(sw_store *st, sqlite3_stmt *s, const char *sweep_id,
                        sw_run_rec **out, size_t *n)
{
    sw_run_rec *recs = NULL;
    size_t len = 0, cap = 0;
    int error = SW_OK;
    int rc;

    while (error == SW_OK && (rc = sqlite3_step(s)) == SQLITE_ROW) {
        sw_grow(&recs, &cap, len + 1, sizeof(*recs));
        memset(&recs[len], 0, sizeof(*recs));
        error = read_run(s, &recs[len++]);
    }
    if (error == SW_OK && rc != SQLITE_DONE)
        error = sw_store__fail(st, "list runs of '%s'", sweep_id);
    if (error < 0) {
        while (len > 0)
            sw_run_rec_dispose(&recs[--len]);
        free(recs);
        recs = NULL;
    }
    *out = recs;
    *n = len;
    return error;
}

/* What a listing shows of a run (sw_store_list_shown). */
#define SHOWN_COLS                                                             \
    "id, params, state, exit_code, attempts, started_at, ended_at, value,"     \
    " pending_reason, member, parent, parent_iter"

static int read_shown(sqlite3_stmt *s, sw_run_rec *r)
{
    r->id = sw_store__col_str(s, 0);
    r->params = sw_store__col_str(s, 1);
    r->has_exit = sqlite3_column_type(s, 3) != SQLITE_NULL;
    r->exit_code = sqlite3_column_int(s, 3);
    r->attempts = sqlite3_column_int64(s, 4);
    r->started_at = col_time(s, 5);
    r->ended_at = col_time(s, 6);
    r->has_value = sqlite3_column_type(s, 7) != SQLITE_NULL;
    r->value = sqlite3_column_double(s, 7);
    r->pending_reason = sw_store__col_str(s, 8);
    r->has_member = sqlite3_column_type(s, 9) != SQLITE_NULL;
    r->member = sqlite3_column_int64(s, 9);
    r->parent = sw_store__col_str(s, 10);
    r->parent_iter = sqlite3_column_int64(s, 11);
    return sw_run_state_parse(&r->state,
                              (const char *)sqlite3_column_text(s, 2));
}

/* The runs of a sweep by idx, with only what a listing shows: one
 * statement prepared for the call, twelve columns copied instead of
 * twenty-seven. */
int sw_store_list_shown(sw_store *st, const char *sweep_id, sw_run_rec **out,
                        size_t *n)
{
    static const char sql[] = "SELECT " SHOWN_COLS " FROM runs"
                              " WHERE sweep_id = ?1 ORDER BY idx";
    sqlite3_stmt *s = NULL;
    sw_run_rec *recs = NULL;
    size_t len = 0, cap = 0;
    int error = SW_OK, rc = SQLITE_ERROR;

    if (sqlite3_prepare_v2(st->db, sql, -1, &s, NULL) == SQLITE_OK &&
        sw_store__bind_str(s, 1, sweep_id) == SQLITE_OK)
        while (error == SW_OK && (rc = sqlite3_step(s)) == SQLITE_ROW) {
            sw_grow(&recs, &cap, len + 1, sizeof(*recs));
            memset(&recs[len], 0, sizeof(*recs));
            error = read_shown(s, &recs[len++]);
        }
    if (error == SW_OK && rc != SQLITE_DONE)
        error = sw_store__fail(st, "list runs of '%s'", sweep_id);
    if (error < 0) {
        while (len > 0)
            sw_run_rec_dispose(&recs[--len]);
        free(recs);
        recs = NULL;
    }
    sqlite3_finalize(s);
    *out = recs;
    *n = len;
    return error;
}

/* The runs of a sweep by idx; the caller disposes each and frees *out. */
int sw_store_list_runs(sw_store *st, const char *sweep_id, sw_run_rec **out,
                       size_t *n)
{
    sqlite3_stmt *s = st->stmt[Q_LIST_RUNS];
    int error;

    *out = NULL;
    *n = 0;
    if (sw_store__bind_str(s, 1, sweep_id) != SQLITE_OK)
        error = sw_store__fail(st, "list runs of '%s'", sweep_id);
    else
        error = collect_runs(st, s, sweep_id, out, n);
    finish(s);
    return error;
}

/* Ranked: finished runs, stopped ones, and the runs canceled because one
 * reached the metric's target (the one that reached it among them: its
 * run was canceled with the rest); never a failed run. */
#define BEST_SQL(order)                                                        \
    "SELECT " RUN_COLS " FROM runs WHERE sweep_id = ?1"                        \
    " AND (state IN (?3, ?4) OR (state = 'canceled' AND"                       \
    " reason = 'target reached')) AND value IS NOT NULL"                       \
    " ORDER BY state <> ?3, value " order ", idx LIMIT ?2"

/* The `limit` best finished or stopped runs of a sweep with a value:
 * finished ones first, then stopped ones (whose value is from an earlier
 * step), each best first (ties by idx), ranked by SQLite so only they
 * are read; prepared
 * here, not at open, as only `sweep best` asks. The caller disposes each
 * and frees *out. */
int sw_store_best_runs(sw_store *st, const char *sweep_id, bool maximize,
                       uint64_t limit, sw_run_rec **out, size_t *n)
{
    const char *text = maximize ? BEST_SQL("DESC") : BEST_SQL("ASC");
    sqlite3_stmt *s = NULL;
    int error;

    *out = NULL;
    *n = 0;
    if (sqlite3_prepare_v2(st->db, text, -1, &s, NULL) != SQLITE_OK ||
        sw_store__bind_str(s, 1, sweep_id) != SQLITE_OK ||
        sqlite3_bind_int64(s, 2,
                           limit > INT64_MAX ? INT64_MAX : (int64_t)limit) ||
        sw_store__bind_str(s, 3, sw_run_state_name(SW_RUN_FINISHED)) ||
        sw_store__bind_str(s, 4, sw_run_state_name(SW_RUN_STOPPED)))
        error = sw_store__fail(st, "best runs of '%s'", sweep_id);
    else
        error = collect_runs(st, s, sweep_id, out, n);
    sqlite3_finalize(s);
    return error;
}

/* Zeroes counts[] and counts the runs of `sweep_id` by state. */
int sw_store_count_runs(sw_store *st, const char *sweep_id,
                        int64_t counts[SW_RUN_N_STATES])
{
    sqlite3_stmt *s = st->stmt[Q_COUNT_RUNS];
    sw_run_state state = SW_RUN_PENDING;
    int error = SW_OK;
    int rc = sw_store__bind_str(s, 1, sweep_id);

    memset(counts, 0, SW_RUN_N_STATES * sizeof(counts[0]));
    while (rc == SQLITE_OK && (rc = sqlite3_step(s)) == SQLITE_ROW) {
        error =
            sw_run_state_parse(&state, (const char *)sqlite3_column_text(s, 0));
        if (error < 0)
            goto done;
        counts[state] = sqlite3_column_int64(s, 1);
        rc = SQLITE_OK;
    }
    if (rc != SQLITE_DONE)
        error = sw_store__fail(st, "count runs of '%s'",
                               sweep_id ? sweep_id : "(null)");
done:
    finish(s);
    return error;
}

static int put_metric(sw_store *st, int q, const char *run_id, int64_t step,
                      const char *name, double value, double time)
{
    sqlite3_stmt *s = st->stmt[q];
    int error = SW_OK;

    if (sw_store__bind_str(s, 1, run_id) ||
        (step >= 0 ? sqlite3_bind_int64(s, 2, step)
                   : sqlite3_bind_null(s, 2)) ||
        sw_store__bind_str(s, 3, name) || sqlite3_bind_double(s, 4, value) ||
        sqlite3_bind_double(s, 5, time) || sqlite3_step(s) != SQLITE_DONE)
        error =
            sw_store__fail(st, "put metric '%s' of run '%s'",
                           name ? name : "(null)", run_id ? run_id : "(null)");
    finish(s);
    return error;
}

/* Whether the run has a value of `name` at `step` (never at no step);
 * a negative SW_E... code on failure. */
static int has_metric(sw_store *st, const char *run_id, int64_t step,
                      const char *name)
{
    sqlite3_stmt *s = st->stmt[Q_HAS_METRIC];
    int rc = SQLITE_DONE, error;

    if (step >= 0 &&
        (sw_store__bind_str(s, 1, run_id) || sqlite3_bind_int64(s, 2, step) ||
         sw_store__bind_str(s, 3, name) ||
         ((rc = sqlite3_step(s)) != SQLITE_ROW && rc != SQLITE_DONE)))
        rc = SQLITE_ERROR;
    error = rc == SQLITE_ROW    ? 1
            : rc == SQLITE_DONE ? 0
                                : sw_store__fail(st, "metric '%s' of run '%s'",
                                                 name ? name : "(null)",
                                                 run_id ? run_id : "(null)");
    finish(s);
    return error;
}

/* Records one metric value; step < 0 is NULL, and so is a NaN value. */
int sw_store_put_metric(sw_store *st, const char *run_id, int64_t step,
                        const char *name, double value, double time)
{
    return put_metric(st, Q_PUT_METRIC, run_id, step, name, value, time);
}

int sw_store_put_metric_once(sw_store *st, const char *run_id, int64_t step,
                             const char *name, double value, double time)
{
    int has = has_metric(st, run_id, step, name);

    if (has != 0)
        return has < 0 ? has : 0;
    has = put_metric(st, Q_PUT_METRIC, run_id, step, name, value, time);
    return has < 0 ? has : 1;
}

/* Calls `fn` once per metric name of `run_id` with its last value, in
 * the order the names were first reported; stops at the first non-zero
 * answer of `fn` and returns it. */
int sw_store_last_metrics(sw_store *st, const char *run_id,
                          sw_store_metric_fn fn, void *ctx)
{
    sqlite3_stmt *s = st->stmt[Q_LAST_METRICS];
    int error = SW_OK;
    int rc = sw_store__bind_str(s, 1, run_id);

    while (rc == SQLITE_OK && error == SW_OK &&
           (rc = sqlite3_step(s)) == SQLITE_ROW) {
        error = fn(ctx, (const char *)sqlite3_column_text(s, 0),
                   sqlite3_column_type(s, 1) != SQLITE_NULL,
                   sqlite3_column_double(s, 1));
        rc = SQLITE_OK;
    }
    if (error == SW_OK && rc != SQLITE_DONE)
        error = sw_store__fail(st, "metrics of run '%s'",
                               run_id ? run_id : "(null)");
    finish(s);
    return error;
}

int sw_store_best_logged(sw_store *st, const char *run_id, const char *name,
                         bool maximize, bool *has, double *value, int64_t *step)
{
    static const char asc[] =
        "SELECT value, step FROM metrics WHERE run_id = ?1 AND name = ?2"
        " AND value IS NOT NULL ORDER BY value ASC, rowid LIMIT 1";
    static const char desc[] =
        "SELECT value, step FROM metrics WHERE run_id = ?1 AND name = ?2"
        " AND value IS NOT NULL ORDER BY value DESC, rowid LIMIT 1";
    sqlite3_stmt *s = NULL;
    int rc = sqlite3_prepare_v2(st->db, maximize ? desc : asc, -1, &s, NULL);

    *has = false;
    if (rc == SQLITE_OK)
        rc = sw_store__bind_str(s, 1, run_id);
    if (rc == SQLITE_OK)
        rc = sw_store__bind_str(s, 2, name);
    if (rc == SQLITE_OK && (rc = sqlite3_step(s)) == SQLITE_ROW) {
        *has = true;
        *value = sqlite3_column_double(s, 0);
        *step = sqlite3_column_type(s, 1) == SQLITE_NULL
                    ? -1
                    : sqlite3_column_int64(s, 1);
        rc = SQLITE_DONE;
    }
    sqlite3_finalize(s);
    return rc == SQLITE_DONE ? SW_OK
                             : sw_store__fail(st, "best value of run '%s'",
                                              run_id ? run_id : "(null)");
}

int sw_store_metric_history(sw_store *st, const char *sweep_id,
                            const char *name, sw_store_history_fn fn, void *ctx)
{
    static const char sql[] =
        "SELECT r.idx, m.value FROM metrics m JOIN runs r ON r.id = m.run_id"
        " WHERE r.sweep_id = ?1 AND m.name = ?2 ORDER BY m.rowid";
    sqlite3_stmt *s = NULL;
    int error = SW_OK;
    int rc = sqlite3_prepare_v2(st->db, sql, -1, &s, NULL);

    if (rc == SQLITE_OK)
        rc = sw_store__bind_str(s, 1, sweep_id);
    if (rc == SQLITE_OK)
        rc = sw_store__bind_str(s, 2, name);
    while (rc == SQLITE_OK && error == SW_OK &&
           (rc = sqlite3_step(s)) == SQLITE_ROW) {
        error = fn(ctx, sqlite3_column_int64(s, 0),
                   sqlite3_column_type(s, 1) == SQLITE_NULL
                       ? NAN
                       : sqlite3_column_double(s, 1));
        rc = SQLITE_OK;
    }
    if (error == SW_OK && rc != SQLITE_DONE)
        error = sw_store__fail(st, "history of metric '%s'",
                               name ? name : "(null)");
    sqlite3_finalize(s);
    return error;
}
