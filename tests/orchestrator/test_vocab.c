/*
 * test_vocab.c - the run vocabulary (vocab.h) and the store's CHECKs made
 * from it: every word parses back to its value and every value names its
 * word; the CHECKs of runs.state and attempts.outcome in a real store hold
 * exactly the lists' words; and a store of schema 11, with rows, migrates
 * to 12 with every row as it was, whether its CHECKs held the same words
 * (every store today) or fewer (a list that has grown since).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "orchestrator/store/store.h"

static const sw_vocab all[] = {SW_VOCAB_RUN_STATES, SW_VOCAB_OUTCOMES,
                               SW_VOCAB_SWEEP_STATES, SW_VOCAB_CANCELS};

/* The name of value v of list `l`, through its own function. */
static const char *name_of(sw_vocab l, int v)
{
    switch (l) {
    case SW_VOCAB_RUN_STATES:
        return sw_run_state_name((sw_run_state)v);
    case SW_VOCAB_OUTCOMES:
        return sw_outcome_name((sw_outcome)v);
    case SW_VOCAB_SWEEP_STATES:
        return sw_sweep_state_name((sw_sweep_state)v);
    case SW_VOCAB_CANCELS:
        return sw_cancel_name((sw_cancel)v);
    }
    return NULL;
}

/* The value of `word` in list `l`, through its own function; -1 when it
 * does not parse. */
static int parse_of(sw_vocab l, const char *word)
{
    sw_run_state r;
    sw_outcome o;
    sw_sweep_state s;
    sw_cancel c;

    switch (l) {
    case SW_VOCAB_RUN_STATES:
        return sw_run_state_parse(&r, word) == SW_OK ? (int)r : -1;
    case SW_VOCAB_OUTCOMES:
        return sw_outcome_parse(&o, word) == SW_OK ? (int)o : -1;
    case SW_VOCAB_SWEEP_STATES:
        return sw_sweep_state_parse(&s, word) == SW_OK ? (int)s : -1;
    case SW_VOCAB_CANCELS:
        return sw_cancel_parse(&c, word) == SW_OK ? (int)c : -1;
    }
    return -1;
}

static void test_round_trip(void **state)
{
    (void)state;
    for (size_t l = 0; l < sizeof(all) / sizeof(all[0]); l++) {
        size_t n = sw_vocab_count(all[l]);
        int first = all[l] == SW_VOCAB_CANCELS ? 1 : 0;

        assert_true(n > 0);
        assert_null(sw_vocab_word(all[l], n));
        assert_string_equal(name_of(all[l], first + (int)n), "unknown");
        assert_string_equal(name_of(all[l], -1), "unknown");
        assert_int_equal(parse_of(all[l], "no such word"), -1);
        assert_int_equal(parse_of(all[l], NULL), -1);
        for (size_t i = 0; i < n; i++) {
            const char *w = sw_vocab_word(all[l], i);

            assert_string_equal(name_of(all[l], first + (int)i), w);
            assert_int_equal(parse_of(all[l], w), first + (int)i);
            for (size_t j = 0; j < i; j++) /* no word twice in a list */
                assert_string_not_equal(sw_vocab_word(all[l], j), w);
        }
    }
    assert_int_equal(sw_vocab_count(SW_VOCAB_RUN_STATES), SW_RUN_N_STATES);
    assert_int_equal(sw_vocab_count(SW_VOCAB_OUTCOMES), SW_N_OUTCOMES);
    assert_int_equal(sw_vocab_count(SW_VOCAB_SWEEP_STATES), SW_SWEEP_N_STATES);
    assert_int_equal(sw_vocab_count(SW_VOCAB_CANCELS), SW_N_CANCELS);
    assert_string_equal(sw_cancel_name(SW_CANCEL_NONE), "unknown");
    assert_int_equal(sw_outcome_parse(&(sw_outcome){0}, "done"), SW_EINVALID);
    assert_string_equal(sw_error_last(), "unknown attempt outcome 'done'");
}

/* The words the engine stores, as it stored them before vocab.h. */
static void test_stored_words(void **state)
{
    sw_buf b = SW_BUF_INIT;

    (void)state;
    assert_string_equal(sw_outcome_name(SW_OUTCOME_NOT_STARTED), "not started");
    assert_string_equal(sw_cancel_name(SW_CANCEL_STOPPED),
                        "stopped early by the stopping rule");
    assert_string_equal(sw_cancel_name(SW_CANCEL_TARGET), "target reached");
    assert_true(sw_reason_is_lost("lost: its supervisor died"));
    assert_true(sw_reason_is_lost("lost 4 times: node failed"));
    assert_false(sw_reason_is_lost("exit 1"));
    assert_false(sw_reason_is_lost(NULL));
    assert_string_equal(sw_cancel_name(SW_CANCEL_REPLACED), "replaced");
    assert_true(sw_reason_is_replaced(
        "replaced by run s-5, from run s-3's checkpoint at iteration 3"));
    assert_false(sw_reason_is_replaced("replacedby"));
    assert_false(sw_reason_is_replaced("stopped by hand"));
    assert_false(sw_reason_is_replaced(NULL));
    assert_true(sw_sweep_state_is("failed", SW_SWEEP_FAILED));
    assert_false(sw_sweep_state_is("failed", SW_SWEEP_FINISHED));
    assert_false(sw_sweep_state_is(NULL, SW_SWEEP_FINISHED));
    sw_vocab_sql_list(&b, SW_VOCAB_OUTCOMES);
    assert_string_equal(sw_buf_cstr(&b),
                        "('finished', 'failed', 'timeout', 'lost', 'stopped', "
                        "'canceled', 'not started', 'disk', 'paused')");
    sw_buf_dispose(&b);
}

/* ---- the store's CHECKs ------------------------------------------------ */

typedef struct {
    char dir[64];
    char path[128];
} fixture;

static int setup(void **state)
{
    fixture *f = sw_calloc(1, sizeof(*f));

    snprintf(f->dir, sizeof(f->dir), "/tmp/sweep-vocab-XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    snprintf(f->path, sizeof(f->path), "%s/sweep.db", f->dir);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    const char *ext[] = {"", "-wal", "-shm"};
    char p[160];

    for (size_t i = 0; i < 3; i++) {
        snprintf(p, sizeof(p), "%s%s", f->path, ext[i]);
        unlink(p);
    }
    rmdir(f->dir);
    free(f);
    return 0;
}

static void raw_exec(const char *path, const char *sql)
{
    sqlite3 *db;
    char *err = NULL;

    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    if (sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK)
        fail_msg("%s", err);
    sqlite3_close(db);
}

/* The rows of `sql` on the file itself: columns joined by '|', rows
 * ended by '\n' (NULL as "NULL"); the caller frees it. */
static char *dump(const char *path, const char *sql)
{
    sqlite3 *db;
    sqlite3_stmt *s;
    sw_buf b = SW_BUF_INIT;

    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &s, NULL), SQLITE_OK);
    while (sqlite3_step(s) == SQLITE_ROW) {
        for (int i = 0; i < sqlite3_column_count(s); i++) {
            const char *t = (const char *)sqlite3_column_text(s, i);

            sw_buf_printf(&b, "%s%s", i ? "|" : "", t ? t : "NULL");
        }
        sw_buf_putc(&b, '\n');
    }
    sqlite3_finalize(s);
    sqlite3_close(db);
    return sw_buf_detach(&b);
}

/* The words of the CHECK (column IN (...)) of `table`, as the store
 * holds it, each on a line of its own. */
static char *check_words(const char *path, const char *table,
                         const char *column)
{
    char *sql = sw_aprintf("select sql from sqlite_master where type = "
                           "'table' and name = '%s'",
                           table);
    char *create = dump(path, sql);
    char *needle = sw_aprintf("CHECK (%s IN (", column);
    const char *p = strstr(create, needle);
    sw_buf b = SW_BUF_INIT;

    assert_non_null(p);
    p += strlen(needle);
    while (*p == '\'') {
        const char *end = strchr(p + 1, '\'');

        assert_non_null(end);
        sw_buf_put(&b, p + 1, (size_t)(end - p - 1));
        sw_buf_putc(&b, '\n');
        p = end + 1;
        if (strncmp(p, ", ", 2) == 0)
            p += 2;
    }
    assert_int_equal(*p, ')');
    free(sql);
    free(create);
    free(needle);
    return sw_buf_detach(&b);
}

/* The words of list `v`, each on a line of its own. */
static char *list_words(sw_vocab v)
{
    sw_buf b = SW_BUF_INIT;

    for (size_t i = 0; i < sw_vocab_count(v); i++)
        sw_buf_printf(&b, "%s\n", sw_vocab_word(v, i));
    return sw_buf_detach(&b);
}

static void expect_checks_follow_vocab(const char *path)
{
    char *got = check_words(path, "runs", "state");
    char *want = list_words(SW_VOCAB_RUN_STATES);

    assert_string_equal(got, want);
    free(got);
    free(want);
    got = check_words(path, "attempts", "outcome");
    want = list_words(SW_VOCAB_OUTCOMES);
    assert_string_equal(got, want);
    free(got);
    free(want);
}

static void test_checks_follow_vocab(void **state)
{
    fixture *f = *state;
    sw_store *st;

    assert_int_equal(sw_store_open(&st, f->path, true), SW_OK);
    sw_store_close(st);
    expect_checks_follow_vocab(f->path);
}

/* runs and attempts as version 11 left them (and versions 1 to 10 made
 * them), but with the CHECK lists given. */
#define RUNS_11(CHECK)                                                         \
    "CREATE TABLE runs ( id TEXT PRIMARY KEY NOT NULL, sweep_id TEXT NOT "     \
    "NULL REFERENCES sweeps (id), idx INTEGER NOT NULL, cell TEXT NOT NULL, "  \
    "params TEXT NOT NULL, argv TEXT NOT NULL, state TEXT NOT NULL CHECK "     \
    "(state IN " CHECK "), reason TEXT, exit_code INTEGER, signal INTEGER "    \
    "NOT NULL DEFAULT 0, attempts INTEGER NOT NULL DEFAULT 0, created_at "     \
    "REAL, started_at REAL, ended_at REAL, stdout_offset INTEGER NOT NULL "    \
    "DEFAULT 0, value REAL, gpus TEXT, git_commit TEXT, git_dirty INTEGER, "   \
    "git TEXT, job TEXT, lost INTEGER NOT NULL DEFAULT 0, UNIQUE (sweep_id, "  \
    "idx));"
#define ATTEMPTS_11(CHECK)                                                     \
    "CREATE TABLE attempts ( run_id TEXT NOT NULL REFERENCES runs (id), "      \
    "attempt INTEGER NOT NULL, started_at REAL, ended_at REAL, outcome TEXT "  \
    "NOT NULL CHECK (outcome IN " CHECK "), reason TEXT, exit_code INTEGER, "  \
    "signal INTEGER NOT NULL DEFAULT 0, gpus TEXT, gpu REAL NOT NULL DEFAULT " \
    "0, first_step INTEGER, PRIMARY KEY (run_id, attempt));"
#define ROWS_11                                                                \
    "INSERT INTO sweeps (id, file, config, method, state, cwd, seed,"          \
    " parallel) VALUES ('s1', 'f.yaml', 'x', 'grid', 'interrupted', '/',"      \
    " 1, 2);"                                                                  \
    "INSERT INTO runs (rowid, id, sweep_id, idx, cell, params, argv, state,"   \
    " reason, exit_code, signal, attempts, created_at, started_at, ended_at,"  \
    " stdout_offset, value, gpus, git_commit, git_dirty, git, job, lost)"      \
    " VALUES (7, 's1-1', 's1', 0, 'c1', '{\"x\": 1}', '[\"t\"]', 'failed',"    \
    " 'lost: its supervisor died', 1, 9, 3, 10.5, 11.5, 12.5, 40, 0.25,"       \
    " '{\"devices\":[\"0\"]}', 'abc', 1, '{}', '1 2 3', 1),"                   \
    " (3, 's1-2', 's1', 1, 'c2', '{}', '[]', 'pending', NULL, NULL, 0, 0,"     \
    " 13, NULL, NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL, 0);"              \
    "INSERT INTO attempts VALUES ('s1-1', 1, 11.5, 12, 'lost',"                \
    " 'lost: its supervisor died', NULL, 0, NULL, 0.5, 4),"                    \
    " ('s1-1', 2, 12, 12.5, 'failed', 'exit 1', 1, 0, NULL, 0, NULL);"         \
    "INSERT INTO metrics VALUES ('s1-1', 4, 'loss', 0.25, 12.1);"              \
    "PRAGMA user_version = 11;"

#define V11_RUNS                                                               \
    "('pending', 'running', 'finished', 'failed', 'stopped', 'canceled')"
#define V11_ATTEMPTS                                                           \
    "('finished', 'failed', 'timeout', 'lost', 'stopped', 'canceled', "        \
    "'not started')"

/* Every row of runs and attempts, with its rowid, and the tables'
 * columns (name, type, NOT NULL, default, key) and indexes. */
static char *rows_and_shape(const char *path)
{
    static const char *const sql[] = {
        "select 'runs', rowid, * from runs order by rowid",
        "select 'attempts', rowid, * from attempts order by rowid",
        "select * from pragma_table_info('runs')",
        "select * from pragma_table_info('attempts')",
        "select name, tbl_name from sqlite_master where type = 'index'"
        " and tbl_name in ('runs', 'attempts') order by name",
        "select * from pragma_index_list('runs') order by name",
        "select * from pragma_index_list('attempts') order by name",
        "select * from pragma_foreign_key_list('attempts')",
        "select * from pragma_foreign_key_list('metrics')",
        "select * from metrics",
    };
    sw_buf b = SW_BUF_INIT;

    for (size_t i = 0; i < sizeof(sql) / sizeof(sql[0]); i++) {
        char *d = dump(path, sql[i]);

        sw_buf_printf(&b, "%s--\n", d);
        free(d);
    }
    return sw_buf_detach(&b);
}

/* The columns versions 13 and 18 add, taken away again so that a
 * migrated store can be compared with what it was. */
#define DROP_13                                                                \
    "ALTER TABLE attempts DROP COLUMN job;"                                    \
    "ALTER TABLE attempts DROP COLUMN queued_seconds;"                         \
    "ALTER TABLE runs DROP COLUMN queued_seconds;"                             \
    "ALTER TABLE runs DROP COLUMN pending_reason;"                             \
    "ALTER TABLE runs DROP COLUMN member;"                                     \
    "ALTER TABLE runs DROP COLUMN parent;"                                     \
    "ALTER TABLE runs DROP COLUMN parent_iter;"

/* Makes a new store one of schema 11 by running `v11` on it (its runs and
 * attempts remade, a sweep, two runs, two attempts and a metric put in);
 * migrates it, and checks that nothing but the CHECKs (and version 13's
 * new columns) changed. */
static void migrate_11(const fixture *f, const char *v11)
{
    sw_store *st;
    char *before, *after, *version;
    sw_run_rec r;

    assert_int_equal(sw_store_open(&st, f->path, true), SW_OK);
    sw_store_close(st);
    raw_exec(f->path, v11);
    before = rows_and_shape(f->path);
    assert_int_equal(sw_store_open(&st, f->path, true), SW_OK);
    assert_int_equal(sw_store_get_run(st, "s1-1", &r), SW_OK);
    assert_int_equal(r.state, SW_RUN_FAILED);
    assert_string_equal(r.job, "1 2 3");
    sw_run_rec_dispose(&r);
    sw_store_close(st);
    version = dump(f->path, "pragma user_version");
    assert_string_equal(version, "18\n");
    raw_exec(f->path, DROP_13);
    after = rows_and_shape(f->path);
    assert_string_equal(after, before);
    free(version);
    expect_checks_follow_vocab(f->path);
    free(before);
    free(after);
    before = dump(f->path, "pragma integrity_check");
    assert_string_equal(before, "ok\n");
    free(before);
    before = dump(f->path, "pragma foreign_key_check");
    assert_string_equal(before, "");
    free(before);
}

/* What versions 15 and 16 add elsewhere, taken away so that the store is
 * one of schema 11 again. */
#define DROP_15_16                                                             \
    "DROP TABLE tags; DROP TABLE notes;"                                       \
    "ALTER TABLE sweeps DROP COLUMN run_cap;"                                  \
    "ALTER TABLE exports DROP COLUMN labels;"

/* Every store of schema 11 has the same words as the lists today. */
static void test_migration_from_11(void **state)
{
    fixture *f = *state;

    migrate_11(f, DROP_15_16 "DROP TABLE attempts; DROP TABLE runs;" RUNS_11(
                      V11_RUNS) ATTEMPTS_11(V11_ATTEMPTS) ROWS_11);
}

/* A list that has grown since the store was made: the table is rebuilt
 * with the new words, its rows and everything else as they were, and
 * the new word is accepted while others are still refused. */
static void test_migration_adds_words(void **state)
{
    fixture *f = *state;
    char *got;

    migrate_11(f, DROP_15_16 "DROP TABLE attempts; DROP TABLE runs;" RUNS_11(
                      "('pending', 'running', 'finished', 'failed')")
                      ATTEMPTS_11("('finished', 'failed', 'lost')") ROWS_11);
    got = dump(f->path, "select sql like 'CREATE TABLE \"runs\" (%' from "
                        "sqlite_master where name = 'runs'");
    assert_string_equal(got, "1\n");
    free(got);
    raw_exec(f->path, "UPDATE runs SET state = 'canceled' WHERE id = 's1-2';"
                      "UPDATE attempts SET outcome = 'not started';");
    got = dump(f->path, "select state from runs order by rowid");
    assert_string_equal(got, "canceled\nfailed\n");
    free(got);
    {
        sqlite3 *db;

        assert_int_equal(sqlite3_open(f->path, &db), SQLITE_OK);
        assert_int_equal(sqlite3_exec(db,
                                      "UPDATE runs SET state = 'done'"
                                      " WHERE id = 's1-2'",
                                      NULL, NULL, NULL),
                         SQLITE_CONSTRAINT);
        assert_int_equal(sqlite3_exec(db,
                                      "INSERT INTO runs (id, sweep_id, idx,"
                                      " cell, params, argv, state) VALUES"
                                      " ('s1-3', 's1', 0, 'c', '{}', '[]',"
                                      " 'pending')",
                                      NULL, NULL, NULL),
                         SQLITE_CONSTRAINT); /* UNIQUE (sweep_id, idx) */
        sqlite3_close(db);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip), cmocka_unit_test(test_stored_words),
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
        T(test_checks_follow_vocab),       T(test_migration_from_11),
        T(test_migration_adds_words),
#undef T
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
