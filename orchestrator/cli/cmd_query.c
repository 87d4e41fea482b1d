/*
 * cmd_query.c - `sweep query SQL [--json|--csv] [--timeout SECONDS]`:
 * read-only SQL over the store, bounded in time and memory. The store's query
 * connection is read-only by construction (SQLite refuses writes, ATTACH and
 * extensions), so a refused statement leaves the store as it was.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "orchestrator/cli/cli.h"
#include "orchestrator/cli/table.h"

static const char help[] =
    "usage: sweep query SQL [--json|--csv] [--timeout SECONDS]\n\n"
    "Runs one read-only SQL statement over the store ($SWEEP_HOME/sweep.db)\n"
    "and prints the rows: a table, CSV, or one JSON object per line.\n"
    "Tables: sweeps, runs, metrics (see docs/schema.md).\n\n"
    "  --timeout SECONDS  stop the query after this long (default 10;\n"
    "                     0: no limit). A string or blob is limited to\n"
    "                     64 MiB.\n";

/* Parses --timeout's argument: a number of seconds, 0 or more. */

/* The options; *timeout is set only when given. */
static int parse_options(int argc, char **argv, sw_table_format *fmt,
                         double *timeout, bool *helped)
{
    static const struct option opts[] = {
        {"help", no_argument, NULL, 'h'},
        {"json", no_argument, NULL, 'j'},
        {"csv", no_argument, NULL, 'c'},
        {"timeout", required_argument, NULL, 't'},
        {NULL, 0, NULL, 0}};
    int c;

    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        if (c == 'h') {
            fputs(help, stdout);
            *helped = true;
            return SW_EXIT_OK;
        } else if (c == 'j' || c == 'c') {
            *fmt = c == 'j' ? SW_TABLE_JSON : SW_TABLE_CSV;
        } else if (c != 't') {
            return sw_cli_usage("query", "unknown option");
        } else if (!sw_cli_parse_seconds(optarg, timeout)) {
            return sw_cli_usage("query",
                                "--timeout wants seconds (0 for no limit), "
                                "not '%s'",
                                optarg);
        }
    }
    return SW_EXIT_OK;
}

static int add_row(void *ctx, int64_t row, int ncols, const char *const *names,
                   const sw_value *const *values)
{
    sw_table *t = ctx;
    sw_value **cells;
    int i;

    if (row < 0) {
        sw_table_init(t, (size_t)ncols, names);
        t->exact = true; /* numbers as SQLite holds them, for people too */
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
    double timeout = SW_STORE_QUERY_TIMEOUT_S;
    bool helped = false;
    int status, error;

    status = parse_options(argc, argv, &fmt, &timeout, &helped);
    if (status != SW_EXIT_OK || helped)
        return status;
    if (optind != argc - 1)
        return sw_cli_usage("query", "expected one SQL statement");
    if ((status = sw_cli_open_store(&st)) != SW_EXIT_OK)
        return status;
    memset(&t, 0, sizeof(t));
    sw_store_query_timeout(st, timeout);
    error = sw_store_query(st, argv[optind], add_row, &t);
    if (error)
        fprintf(stderr, "sweep query: %s\n", sw_error_last());
    else
        sw_table_print(&t, fmt, stdout);
    sw_table_dispose(&t);
    sw_store_close(st);
    return error ? SW_EXIT_FAIL : SW_EXIT_OK;
}
