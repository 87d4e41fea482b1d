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

#include "orchestrator/store/store_internal.h"

/* Every table that holds rows of a sweep, children first, each with the
 * condition that selects the sweep ?1's rows. A table added to the schema
 * that refers to a sweep or a run goes here too (tests/cli/test_verbs.c
 * lists the schema's tables and fails on one it does not know). */
static const char *const removals[] = {
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
