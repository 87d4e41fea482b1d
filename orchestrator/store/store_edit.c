/*
 * store_edit.c - what people change in the record after the fact, from
 * commands other than the engine: removing a whole sweep (`sweep rm`),
 * and a run's labels (`sweep tag`, `sweep note`).
 *
 * Removal is one transaction over every table that holds a row of the
 * sweep, so a store is never left with half a sweep; the caller holds
 * the sweep's lock, so no engine writes it meanwhile. Labels live in
 * tables of their own, which the engine never writes, so a label added
 * while the sweep runs never races a run's update. Statements are
 * prepared per call: these are one-off commands.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "orchestrator/store/store_internal.h"

/* Every table that holds rows of a sweep, children first, each with the
 * condition that selects the sweep ?1's rows. A table added to the schema
 * that refers to a sweep or a run goes here too (tests/cli/test_verbs.c
 * lists the schema's tables and fails on one it does not know). */
static const char *const removals[] = {
    "DELETE FROM tags WHERE run_id IN"
    " (SELECT id FROM runs WHERE sweep_id = ?1)",
    "DELETE FROM notes WHERE run_id IN"
    " (SELECT id FROM runs WHERE sweep_id = ?1)",
    "DELETE FROM metrics WHERE run_id IN"
    " (SELECT id FROM runs WHERE sweep_id = ?1)",
    "DELETE FROM attempts WHERE run_id IN"
    " (SELECT id FROM runs WHERE sweep_id = ?1)",
    "DELETE FROM exports WHERE sweep_id = ?1",
    "DELETE FROM gpu_samples WHERE sweep_id = ?1",
    "DELETE FROM runs WHERE sweep_id = ?1",
    "DELETE FROM sweeps WHERE id = ?1",
};

/* Runs `sql` with ?1 bound to `id`. */
static int exec_with(sw_store *st, const char *sql, const char *id,
                     const char *what)
{
    sqlite3_stmt *s = NULL;
    int error = sw_store__prepare(st, sql, &s, what);

    if (error)
        return error;
    if (sw_store__bind_str(s, 1, id) || sqlite3_step(s) != SQLITE_DONE)
        error = sw_store__fail(st, "%s", what);
    sqlite3_finalize(s);
    return error;
}

int sw_store_delete_sweep(sw_store *st, const char *id)
{
    int error = sw_store_begin(st);
    size_t i;

    for (i = 0; !error && i < sizeof(removals) / sizeof(removals[0]); i++)
        error = exec_with(st, removals[i], id, "remove sweep");
    if (!error)
        error = sw_store_commit(st);
    if (error)
        sw_store_rollback(st);
    return error;
}

/* ---- labels ----------------------------------------------------------- */

/* Runs `sql` with ?1 the run, ?2 `text` and ?3 now, as far as it has
 * parameters. */
static int exec_label(sw_store *st, const char *sql, const char *run_id,
                      const char *text, const char *what)
{
    sqlite3_stmt *s = NULL;
    int error = sw_store__prepare(st, sql, &s, what), params;

    if (error)
        return error;
    params = sqlite3_bind_parameter_count(s);

    if (sw_store__bind_str(s, 1, run_id) ||
        (params >= 2 && sw_store__bind_str(s, 2, text)) ||
        (params >= 3 && sqlite3_bind_double(s, 3, (double)time(NULL))) ||
        sqlite3_step(s) != SQLITE_DONE)
        error = sw_store__fail(st, "%s of run '%s'", what, run_id);
    sqlite3_finalize(s);
    return error;
}

int sw_store_tag_run(sw_store *st, const char *run_id, char *const *tags,
                     size_t n, bool remove)
{
    const char *sql = remove ? "DELETE FROM tags WHERE run_id = ?1 AND"
                               " tag = ?2"
                             : "INSERT OR IGNORE INTO tags (run_id, tag,"
                               " created_at) VALUES (?1, ?2, ?3)";
    int error = sw_store_begin(st);
    size_t i;

    for (i = 0; !error && i < n; i++)
        error = exec_label(st, sql, run_id, tags[i], "tag");
    if (!error)
        error = sw_store_commit(st);
    if (error)
        sw_store_rollback(st);
    return error;
}

int sw_store_note_run(sw_store *st, const char *run_id, const char *text)
{
    if (!text || !*text)
        return exec_label(st, "DELETE FROM notes WHERE run_id = ?1", run_id,
                          NULL, "note");
    return exec_label(st,
                      "INSERT INTO notes (run_id, text, updated_at)"
                      " VALUES (?1, ?2, ?3) ON CONFLICT (run_id) DO UPDATE"
                      " SET text = excluded.text,"
                      " updated_at = excluded.updated_at",
                      run_id, text, "note");
}

/* Reads the run's tags, oldest first, into a NULL-terminated list. */
static int read_tags(sw_store *st, const char *run_id, char ***out, size_t *n)
{
    sqlite3_stmt *s = st->stmt[Q_TAGS];
    size_t cap = 0;
    int error = SW_OK, rc;

    *out = NULL;
    *n = 0;
    rc = sw_store__bind_str(s, 1, run_id) == SQLITE_OK ? sqlite3_step(s)
                                                       : SQLITE_ERROR;
    for (; rc == SQLITE_ROW; rc = sqlite3_step(s)) {
        sw_grow(out, &cap, *n + 2, sizeof(char *));
        (*out)[(*n)++] = sw_store__col_str(s, 0);
        (*out)[*n] = NULL;
    }
    if (rc != SQLITE_DONE)
        error = sw_store__fail(st, "read tags of run '%s'", run_id);
    sqlite3_reset(s);
    sqlite3_clear_bindings(s);
    return error;
}

/* Reads the run's note into *out (NULL: none). */
static int read_note(sw_store *st, const char *run_id, char **out)
{
    sqlite3_stmt *s = st->stmt[Q_NOTE];
    int error = SW_OK, rc;

    *out = NULL;
    rc = sw_store__bind_str(s, 1, run_id) == SQLITE_OK ? sqlite3_step(s)
                                                       : SQLITE_ERROR;
    if (rc == SQLITE_ROW)
        *out = sw_store__col_str(s, 0);
    else if (rc != SQLITE_DONE)
        error = sw_store__fail(st, "read note of run '%s'", run_id);
    sqlite3_reset(s);
    sqlite3_clear_bindings(s);
    return error;
}

int sw_store_run_labels(sw_store *st, const char *run_id, sw_labels *out)
{
    int error;

    memset(out, 0, sizeof(*out));
    if ((error = read_tags(st, run_id, &out->tags, &out->n_tags)) == SW_OK)
        error = read_note(st, run_id, &out->note);
    if (error)
        sw_labels_dispose(out);
    return error;
}

/* The runs of the sweep with a tag or a note, by idx: one statement, so
 * a listing reads the labels of those runs alone. It starts from the
 * labels (few) and looks each run up, never walking the sweep's runs. */
int sw_store_labeled_runs(sw_store *st, const char *sweep_id, char ***out,
                          size_t *n)
{
    static const char sql[] =
        "SELECT r.id FROM (SELECT run_id FROM tags UNION SELECT run_id"
        " FROM notes) AS l CROSS JOIN runs r ON r.id = l.run_id"
        " WHERE r.sweep_id = ?1 ORDER BY r.idx";
    sqlite3_stmt *s = NULL;
    size_t cap = 0;
    int error = sw_store__prepare(st, sql, &s, "labeled runs"), rc;

    *out = NULL;
    *n = 0;
    if (error)
        return error;
    rc = sw_store__bind_str(s, 1, sweep_id) == SQLITE_OK ? sqlite3_step(s)
                                                         : SQLITE_ERROR;
    for (; rc == SQLITE_ROW; rc = sqlite3_step(s)) {
        sw_grow(out, &cap, *n + 1, sizeof(char *));
        (*out)[(*n)++] = sw_store__col_str(s, 0);
    }
    if (rc != SQLITE_DONE) {
        error = sw_store__fail(st, "labeled runs of '%s'", sweep_id);
        while (*n > 0)
            free((*out)[--*n]);
        free(*out);
        *out = NULL;
    }
    sqlite3_finalize(s);
    return error;
}

void sw_labels_dispose(sw_labels *l)
{
    if (!l)
        return;
    for (size_t i = 0; i < l->n_tags; i++)
        free(l->tags[i]);
    free(l->tags);
    free(l->note);
    memset(l, 0, sizeof(*l));
}
