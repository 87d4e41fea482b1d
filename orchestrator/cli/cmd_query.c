/*
 * cmd_query.c - `sweep query SQL [--json|--csv]`: read-only SQL over the
 * store. The store's query connection is read-only by construction
 * (SQLite refuses writes, ATTACH and extensions), so a refused statement
 * leaves the store as it was.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "orchestrator/cli/cli.h"
#include "orchestrator/cli/table.h"

static const char help[] =
    "usage: sweep query SQL [--json|--csv]\n\n"
    "Runs one read-only SQL statement over the store ($SWEEP_HOME/sweep.db)\n"
    "and prints the rows: a table, CSV, or one JSON object per line.\n"
    "Tables: sweeps, runs, metrics (see docs/schema.md).\n";

static int add_row(void *ctx, int64_t row, int ncols, const char *const *names,
                   const sw_value *const *values)
{
    sw_table *t = ctx;
    sw_value **cells;
    int i;

    if (row < 0) {
        sw_table_init(t, (size_t)ncols, names);
        return SW_OK;
    }
    cells = sw_calloc((size_t)ncols, sizeof(sw_value *));
    for (i = 0; i < ncols; i++)
        cells[i] = sw_value_clone(values[i]);
    sw_table_add(t, cells);
    free(cells);
    return SW_OK;
}

int sw_cmd_query(int argc, char **argv)
{
    sw_table_format fmt = SW_TABLE_HUMAN;
    sw_table t;
    sw_store *st = NULL;
    bool helped = false;
    int status, error;

    status = sw_cli_format(argc, argv, "query", help, &fmt, &helped);
    if (status != SW_EXIT_OK || helped)
        return status;
    if (optind != argc - 1)
        return sw_cli_usage("query", "expected one SQL statement");
    if ((status = sw_cli_open_store(&st)) != SW_EXIT_OK)
        return status;
    memset(&t, 0, sizeof(t));
    error = sw_store_query(st, argv[optind], add_row, &t);
    if (error)
        fprintf(stderr, "sweep query: %s\n", sw_error_last());
    else
        sw_table_print(&t, fmt, stdout);
    sw_table_dispose(&t);
    sw_store_close(st);
    return error ? SW_EXIT_FAIL : SW_EXIT_OK;
}
