/*
 * store_internal.h - what the store's files share: the store's state
 * and its lock timeout. store.c is the system of record (open, sweeps, runs,
 * metrics); store_schema.c its schema and migrations; store_query.c is the
 * read-only query guard; store_rebuild.c rebuilds a table whose CHECK
 * follows a vocabulary list (vocab.h); store_export.c records what exports
 * sent; store_report.c the attempts and what `sweep report` reads. Nothing
 * outside the store includes this header (nor <sqlite3.h>).
 */
#ifndef SW_STORE_INTERNAL_H
#define SW_STORE_INTERNAL_H

#include <sqlite3.h>
#include <stdbool.h>

#include "orchestrator/store/store.h"

/* How long every connection waits for a lock before "database is locked". */
#define SW_STORE_BUSY_MS 5000

/* The statements prepared at open, indexes of sw_store.stmt; their SQL is
 * stmt_sql in store.c. */
enum {
    Q_BEGIN,
    Q_COMMIT,
    Q_ROLLBACK,
    Q_SAVEPOINT,
    Q_RELEASE,
    Q_PUT_SWEEP,
    Q_GET_SWEEP,
    Q_SWEEP_PREFIX,
    Q_SWEEP_BY_NAME,
    Q_LATEST_SWEEP,
    Q_SET_SWEEP_STATE,
    Q_LIST_SWEEPS,
    Q_PUT_RUN,
    Q_UPDATE_RUN,
    Q_UPDATE_PROGRESS,
    Q_GET_RUN,
    Q_LIST_RUNS,
    Q_PUT_METRIC,
    Q_HAS_METRIC,
    Q_COUNT_RUNS,
    Q_LAST_METRICS,
    Q_TAGS,
    Q_NOTE,
    Q_COUNT
};

struct sw_store {
    sqlite3 *db;
    sqlite3 *qdb; /* read-only connection of sw_store_query; opened lazily */
    char *path;
    bool writer;
    sqlite3_stmt *stmt[Q_COUNT];
    char refused[160]; /* why the authorizer denied the query; "" if not */
    char stopped[160]; /* why a guarded function stopped it; "" if not */
    double q_timeout;  /* seconds a query may run; 0: the default */
    double q_deadline; /* CLOCK_MONOTONIC seconds; 0 while none runs */
    bool q_late;       /* the progress handler stopped the query */
    double r_limit;    /* sw_store_read_limit()'s seconds; 0: none */
    double r_deadline; /* CLOCK_MONOTONIC seconds it sets */
    bool r_late;       /* its progress handler stopped a statement */
    int wal_pages;     /* the WAL's size after the last commit */
    bool held;         /* sw_store_hold(): one transaction until release */
    bool nested;       /* inside it, a begin()'s savepoint is open */
};

/* store.c, for the store's other files: a text bound as TEXT (NULL as
 * NULL), a column as a new string (NULL for NULL), and the error
 * "store <path>: <what>: <sqlite's message>" as SW_EIO, also for a
 * statement that cannot be prepared. */
int sw_store__bind_str(sqlite3_stmt *s, int i, const char *v);
char *sw_store__col_str(sqlite3_stmt *s, int i);
int sw_store__fail_io(const sw_store *st, const char *what);
/* CLOCK_MONOTONIC in seconds, for the deadlines of reads and queries. */
double sw_store__now(void);
int sw_store__prepare(const sw_store *st, const char *sql, sqlite3_stmt **s,
                      const char *what);
/* The same error with SQLite's code mapped to SW_E* (a constraint is
 * SW_EINVALID, an I/O error SW_EIO, ...), `what` formatted; and one
 * statement run on the writer connection, failing as that. */
int sw_store__fail(const sw_store *st, const char *fmt, ...) SW_PRINTF(2, 3);
int sw_store__exec(const sw_store *st, const char *sql, const char *what);
/* store_schema.c: brings the file to the current schema (a writer), or
 * checks that it is current (a reader). */
int sw_store__check_schema(const sw_store *st);
/* store_guard.c: sets the limits of a query connection (docs/cli.md);
 * takes over, on `db`, the built-in functions whose work one call could
 * make unbounded (printf, instr, replace, trim, like, glob: each call is
 * checked, then run by SQLite itself); and a watchdog that interrupts
 * `db` `seconds` from now (NULL for none) until it is stopped. */
void sw_store__query_limits(sqlite3 *db);
int sw_store__guard(sw_store *st, sqlite3 *db);
typedef struct sw_store__watch sw_store__watch;
sw_store__watch *sw_store__watch_start(sqlite3 *db, double seconds);
void sw_store__watch_stop(sw_store__watch *w);
/* store_rebuild.c: rebuilds `table` with its CHECK (column IN (...))
 * holding the words of `v`, all else as it was, rows kept. Inside the
 * migration's transaction, with foreign keys off. */
int sw_store__rebuild_check(const sw_store *st, const char *table,
                            const char *column, sw_vocab v);

#endif
