/*
 * store_schema.c - the store's schema, one migration step per version,
 * and bringing a file up to date: a writer migrates an older file inside
 * one transaction; a reader reads only a current one; a file from a
 * newer sweep, or some other program's database, is refused. The meaning
 * of every table and column is in docs/schema.md.
 */
#include <stdbool.h>
#include <stdio.h>

#include "orchestrator/store/store_internal.h"

static int checks_from_vocab(const sw_store *st);

/* The schema, one step per version. A step is never edited once released:
 * changes go in a new step. Each runs inside the migration transaction,
 * with foreign keys off. */
static const struct {
    int version;
    const char *sql;
} migrations[] = {
    {1, "CREATE TABLE sweeps ("
        " id TEXT PRIMARY KEY NOT NULL, name TEXT, file TEXT NOT NULL,"
        " config TEXT NOT NULL, method TEXT NOT NULL, metric TEXT,"
        " goal TEXT CHECK (goal IN ('minimize', 'maximize')),"
        " state TEXT NOT NULL, cwd TEXT NOT NULL, seed INTEGER NOT NULL,"
        " parallel INTEGER NOT NULL, created_at REAL, ended_at REAL,"
        " git_commit TEXT, git_dirty INTEGER);"
        "CREATE INDEX sweeps_name ON sweeps (name);"
        "CREATE TABLE runs ("
        " id TEXT PRIMARY KEY NOT NULL,"
        " sweep_id TEXT NOT NULL REFERENCES sweeps (id),"
        " idx INTEGER NOT NULL, cell TEXT NOT NULL, params TEXT NOT NULL,"
        " argv TEXT NOT NULL, state TEXT NOT NULL CHECK (state IN"
        " ('pending', 'running', 'finished', 'failed', 'stopped',"
        " 'canceled')),"
        " reason TEXT, exit_code INTEGER, signal INTEGER NOT NULL DEFAULT 0,"
        " attempts INTEGER NOT NULL DEFAULT 0, created_at REAL,"
        " started_at REAL, ended_at REAL, pid INTEGER NOT NULL DEFAULT 0,"
        " pgid INTEGER NOT NULL DEFAULT 0,"
        " stdout_offset INTEGER NOT NULL DEFAULT 0, value REAL, gpus TEXT,"
        " git_commit TEXT, git_dirty INTEGER,"
        " UNIQUE (sweep_id, idx));"
        "CREATE TABLE metrics ("
        " run_id TEXT NOT NULL REFERENCES runs (id), step INTEGER,"
        " name TEXT NOT NULL, value REAL, time REAL NOT NULL);"
        "CREATE INDEX metrics_run_name_step ON metrics (run_id, name, step);"},
    /* git provenance beyond the commit and the dirty flag (JSON) */
    {2, "ALTER TABLE sweeps ADD COLUMN git TEXT;"
        "ALTER TABLE runs ADD COLUMN git TEXT;"},
    /* executors beyond local processes: the sweep's backend, and each
     * run's job handle (opaque, the executor's own) instead of the local
     * executor's pid and process group; a local attempt's handle is
     * "SUPERVISOR_PID TRIAL_PGID" */
    {3, "ALTER TABLE sweeps ADD COLUMN backend TEXT NOT NULL"
        " DEFAULT 'local';"
        "ALTER TABLE runs ADD COLUMN job TEXT;"
        "UPDATE runs SET job = pid || ' ' || pgid WHERE pid > 0;"
        "ALTER TABLE runs DROP COLUMN pid;"
        "ALTER TABLE runs DROP COLUMN pgid;"},
    /* attempts that were lost (their supervisor died, or their end could
     * not be recorded): not the trial's failure, so not one of its
     * retries */
    {4, "ALTER TABLE runs ADD COLUMN lost INTEGER NOT NULL DEFAULT 0;"},
    /* the trial's command given on the command line (`sweep run FILE --
     * COMMAND...`), for files with neither program nor command */
    {5, "ALTER TABLE sweeps ADD COLUMN command TEXT;"},
    /* metrics arrive a step at a time from many runs at once: keyed by
     * step before name, the index takes one step's values of a run in
     * one page, so a commit of many runs' reports writes a page or so a
     * run instead of one per run and metric (4x fewer index pages per
     * commit of 4-metric reports); a run's history still reads in one
     * range, now in step order */
    {6, "DROP INDEX metrics_run_name_step;"
        "CREATE INDEX metrics_run_step ON metrics (run_id, step, name);"},
    /* what each export sent where (store_export.c): one row per
     * destination and sweep (run_id NULL) or run, so an export that is
     * run again sends only what is new, and one that was killed goes on
     * from where it stopped */
    {7, "CREATE TABLE exports ("
        " target TEXT NOT NULL, dest TEXT NOT NULL,"
        " sweep_id TEXT NOT NULL REFERENCES sweeps (id),"
        " run_id TEXT REFERENCES runs (id),"
        " remote_id TEXT, remote_node TEXT,"
        " history INTEGER NOT NULL DEFAULT 0,"
        " summary INTEGER NOT NULL DEFAULT -1,"
        " state TEXT, files TEXT, exported_at REAL);"
        "CREATE UNIQUE INDEX exports_key"
        " ON exports (target, dest, sweep_id, ifnull(run_id, ''));"},
    /* GPU packing: how busy each device was while a sweep's trials ran,
     * sampled every few seconds (runs.gpus, reserved since version 1,
     * now holds each run's devices) */
    {8, "CREATE TABLE gpu_samples ("
        " sweep_id TEXT NOT NULL REFERENCES sweeps (id),"
        " time REAL NOT NULL, device TEXT NOT NULL,"
        " gpu INTEGER NOT NULL, mig INTEGER, utilization INTEGER,"
        " memory_used INTEGER, memory_total INTEGER,"
        " memory_trials INTEGER, trials INTEGER NOT NULL);"
        "CREATE INDEX gpu_samples_sweep_time ON gpu_samples"
        " (sweep_id, time);"
        "ALTER TABLE sweeps ADD COLUMN gpus TEXT;"},
    /* the backend's own arguments given on the command line (`sweep run
     * --backend slurm --slurm-arg ARG...`, a JSON array), so `sweep
     * resume` submits its jobs as `sweep run` did */
    {9, "ALTER TABLE sweeps ADD COLUMN backend_args TEXT;"},
    /* `sweep report`: every attempt of a run as it ended (runs keep only
     * the last), with the GPU share it held, so the GPU time of failed
     * and retried attempts is counted (store_report.c) */
    {10, "CREATE TABLE attempts ("
         " run_id TEXT NOT NULL REFERENCES runs (id),"
         " attempt INTEGER NOT NULL, started_at REAL, ended_at REAL,"
         " outcome TEXT NOT NULL CHECK (outcome IN ('finished', 'failed',"
         " 'timeout', 'lost', 'stopped', 'canceled', 'not started')),"
         " reason TEXT, exit_code INTEGER, signal INTEGER NOT NULL DEFAULT 0,"
         " gpus TEXT, gpu REAL NOT NULL DEFAULT 0,"
         " PRIMARY KEY (run_id, attempt));"},
    /* the first step each attempt reported, whether the store kept it or
     * had it already: where a retry resumed from, so the time a failed
     * attempt spent past that point is what was lost (report.c) */
    {11, "ALTER TABLE attempts ADD COLUMN first_step INTEGER;"},
    /* the CHECKs of runs.state and attempts.outcome made from the lists
     * of vocab.h (checks_from_vocab(), in C): the same words as versions
     * 1 and 10 wrote by hand. A word added to a list is one more step
     * like this one. */
    {12, NULL},
    /* a scheduler's queue (Slurm): how long each attempt waited before
     * it started (its started_at is then when it started), the job of
     * every attempt (runs.job keeps only the last), and why a run's job
     * waits, while it does */
    {13, "ALTER TABLE attempts ADD COLUMN job TEXT;"
         "ALTER TABLE attempts ADD COLUMN queued_seconds REAL;"
         "ALTER TABLE runs ADD COLUMN queued_seconds REAL;"
         "ALTER TABLE runs ADD COLUMN pending_reason TEXT;"},
    /* attempts.outcome `disk`: the machine's disk failed the attempt (a
     * write of its output refused, or it failed with the home full), to
     * be rerun without using a retry */
    {14, NULL},
    /* runs.state and attempts.outcome `paused`: promotion ASHA pauses a
     * run at a rung (its devices freed) until it is promoted */
    {15, NULL},
    /* `sweep resume SWEEP --run-cap N`: more trials for a sweep, recorded
     * so that a later resume keeps them (NULL: the file's run_cap) */
    {16, "ALTER TABLE sweeps ADD COLUMN run_cap INTEGER;"},
    /* `sweep tag` and `sweep note`: a run's labels, in tables of their
     * own (the engine rewrites a run's row, never these), and which of
     * them an export sent (a JSON object; NULL: none yet) */
    {17, "CREATE TABLE tags ("
         " run_id TEXT NOT NULL REFERENCES runs (id),"
         " tag TEXT NOT NULL, created_at REAL,"
         " PRIMARY KEY (run_id, tag));"
         "CREATE TABLE notes ("
         " run_id TEXT PRIMARY KEY NOT NULL REFERENCES runs (id),"
         " text TEXT NOT NULL, updated_at REAL);"
         "ALTER TABLE exports ADD COLUMN labels TEXT;"},
    /* method pbt: a run's lineage. Its place in the population (member),
     * and for a run made by an exploit, the run whose checkpoint folder
     * it started from (parent) and the iteration that checkpoint was at
     * (parent_iter); NULL for the others. parent is a runs.id of the same
     * sweep, without a REFERENCES clause: SQLite cannot drop or rebuild
     * around a column that has one as simply, and sweep rm deletes a
     * sweep's runs together */
    {18, "ALTER TABLE runs ADD COLUMN member INTEGER;"
         "ALTER TABLE runs ADD COLUMN parent TEXT;"
         "ALTER TABLE runs ADD COLUMN parent_iter INTEGER;"},
};

/* The steps written in C, by version, for what SQL alone cannot say:
 * run where migrations[] has no SQL, inside the same transaction. */
static int (*const in_c[])(const sw_store *st) = {
    [12] = checks_from_vocab,
    [14] = checks_from_vocab,
    [15] = checks_from_vocab,
};

#define N_MIGRATIONS (sizeof(migrations) / sizeof(migrations[0]))
#define SCHEMA_VERSION (migrations[N_MIGRATIONS - 1].version)

/* Runs a one-row, one-column PRAGMA and gives its integer. */
static int pragma_int(const sw_store *st, const char *sql, int *out)
{
    sqlite3_stmt *s = NULL;
    int error = SW_OK;

    if (sqlite3_prepare_v2(st->db, sql, -1, &s, NULL) != SQLITE_OK ||
        sqlite3_step(s) != SQLITE_ROW) {
        error = sw_store__fail(st, "open: %s", sql);
        goto done;
    }
    *out = sqlite3_column_int(s, 0);
done:
    sqlite3_finalize(s);
    return error;
}

static int newer_schema(const sw_store *st, int version)
{
    return sw_error_set(SW_EINVALID,
                        "store %s: schema version %d is newer than this "
                        "sweep knows (%d); use a newer sweep",
                        st->path, version, SCHEMA_VERSION);
}

/* Version 0 is a new file only if it holds nothing: anything else is some
 * other program's database, and is left alone. */
static int check_empty(const sw_store *st)
{
    int tables = 0;
    int error = pragma_int(st, "SELECT count(*) FROM sqlite_master", &tables);

    if (error == SW_OK && tables > 0)
        error = sw_error_set(SW_EINVALID,
                             "store %s: not a sweep store (it has tables "
                             "but no schema version)",
                             st->path);
    return error;
}

/* The steps that follow a list of vocab.h: each rebuilds the tables whose
 * CHECK holds the list's words. */
static int checks_from_vocab(const sw_store *st)
{
    int error =
        sw_store__rebuild_check(st, "runs", "state", SW_VOCAB_RUN_STATES);

    return error ? error
                 : sw_store__rebuild_check(st, "attempts", "outcome",
                                           SW_VOCAB_OUTCOMES);
}

/* Runs migration step i: its SQL, or its function in in_c[]. */
static int run_step(const sw_store *st, size_t i)
{
    int v = migrations[i].version;

    if (migrations[i].sql)
        return sw_store__exec(st, migrations[i].sql, "migrate");
    if ((size_t)v < sizeof(in_c) / sizeof(in_c[0]) && in_c[v])
        return in_c[v](st);
    return sw_error_set(SW_ERROR,
                        "store %s: migrate: step %d has no SQL "
                        "and no function",
                        st->path, v);
}

/* SW_OK when no row breaks a foreign key, as PRAGMA foreign_key_check
 * finds them. */
static int check_foreign_keys(const sw_store *st)
{
    sqlite3_stmt *s = NULL;
    int rc =
        sqlite3_prepare_v2(st->db, "PRAGMA foreign_key_check", -1, &s, NULL);
    int error = SW_OK;

    if (rc == SQLITE_OK)
        rc = sqlite3_step(s);
    if (rc == SQLITE_ROW)
        error = sw_error_set(SW_EINVALID,
                             "store %s: migrate: a row of %s breaks a "
                             "foreign key",
                             st->path, sqlite3_column_text(s, 0));
    else if (rc != SQLITE_DONE)
        error = sw_store__fail(st, "migrate: foreign keys");
    sqlite3_finalize(s);
    return error;
}

/* Applies every step above the file's version, in one transaction; the
 * version is read again under the write lock, as another writer may have
 * migrated the file meanwhile. With `fk` (foreign keys were on, now off
 * for the rebuilds) the rows are checked against them before commit. */
static int migrate_locked(const sw_store *st, bool fk)
{
    char sql[64];
    int version = 0;
    int error = sw_store__exec(st, "BEGIN IMMEDIATE", "migrate: begin");

    if (error < 0)
        return error;
    if ((error = pragma_int(st, "PRAGMA user_version", &version)) < 0)
        goto done;
    if (version > SCHEMA_VERSION) {
        error = newer_schema(st, version);
        goto done;
    }
    if (version == 0 && (error = check_empty(st)) < 0)
        goto done;
    for (size_t i = 0; i < N_MIGRATIONS; i++) {
        if (migrations[i].version <= version)
            continue;
        snprintf(sql, sizeof(sql), "PRAGMA user_version = %d",
                 migrations[i].version);
        if ((error = run_step(st, i)) < 0 ||
            (error = sw_store__exec(st, sql, "migrate")) < 0)
            goto done;
    }
    if (fk && (error = check_foreign_keys(st)) < 0)
        goto done;
    error = sw_store__exec(st, "COMMIT", "migrate: commit");
done:
    if (error < 0)
        sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
    return error;
}

/* Migrates with foreign keys off, as a table rebuild needs (dropping a
 * referenced table would otherwise delete or refuse), and as they were
 * after. The store never turns them on; a SQLite built to have them on
 * by default does. They can only be changed outside a transaction. */
static int migrate(const sw_store *st)
{
    int fk = 0;
    int error = pragma_int(st, "PRAGMA foreign_keys", &fk);

    if (error == SW_OK && fk)
        error = sw_store__exec(st, "PRAGMA foreign_keys = OFF",
                               "migrate: foreign keys");
    if (error == SW_OK)
        error = migrate_locked(st, fk != 0);
    if (fk)
        sqlite3_exec(st->db, "PRAGMA foreign_keys = ON", NULL, NULL, NULL);
    return error;
}

/* A writer migrates an old file; a reader can only read a current one. */
int sw_store__check_schema(const sw_store *st)
{
    int version = 0;
    int error = pragma_int(st, "PRAGMA user_version", &version);

    if (error < 0 || version == SCHEMA_VERSION)
        return error;
    if (version > SCHEMA_VERSION)
        return newer_schema(st, version);
    if (st->writer)
        return migrate(st);
    if (version == 0)
        return sw_error_set(SW_EINVALID, "store %s: not a sweep store",
                            st->path);
    return sw_error_set(SW_EINVALID,
                        "store %s: schema version %d is older than this "
                        "sweep's (%d); run a command that writes, such as "
                        "`sweep resume`, to upgrade it",
                        st->path, version, SCHEMA_VERSION);
}
