/*
 * cmd_best.c - `sweep best SWEEP [--top N]`: the best runs by the sweep's
 * metric and goal. A run's value is the last value it reported for the
 * metric (as W&B's summary is); runs without one are not ranked. The store
 * ranks them (sw_store_best_runs), so only the N printed are read.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "orchestrator/cli/cli.h"

static const char help[] =
    "usage: sweep best [SWEEP] [--top N] [--json|--csv]\n\n"
    "The N best runs (default 1) of SWEEP (default: the latest) by the\n"
    "sweep's metric, finished runs first, then stopped ones.\n";

static int best(sw_store *st, const char *key, uint64_t top,
                sw_table_format fmt)
{
    sw_sweep_rec s;
    sw_run_rec *runs = NULL;
    sw_value *row[7];
    size_t n = 0, i;
    sw_table t;
    int error;

    memset(&s, 0, sizeof(s));
    error =
        key ? sw_store_get_sweep(st, key, &s) : sw_store_latest_sweep(st, &s);
    if (!error && !s.metric)
        error = sw_error_set(SW_EINVALID,
                             "sweep %s has no metric to rank "
                             "runs by",
                             s.id);
    if (!error)
        error = sw_store_best_runs(st, s.id,
                                   s.goal && strcmp(s.goal, "maximize") == 0,
                                   top, &runs, &n);
    if (!error) {
        sw_table_init(&t, 7, sw_cli_run_cols);
        t.json_cols = 1u << SW_CLI_PARAMS_COL;
        for (i = 0; i < n; i++) {
            sw_cli_run_row(row, &runs[i], fmt);
            sw_table_add(&t, row);
        }
        if (fmt == SW_TABLE_HUMAN)
            printf("sweep %s, %s (%s):\n", s.id, s.metric, s.goal);
        sw_table_print(&t, fmt, stdout);
        sw_table_dispose(&t);
    }
    for (i = 0; i < n; i++)
        sw_run_rec_dispose(&runs[i]);
    free(runs);
    sw_sweep_rec_dispose(&s);
    return error;
}

int sw_cmd_best(int argc, char **argv)
{
    sw_table_format fmt = SW_TABLE_HUMAN;
    sw_store *st = NULL;
    bool helped = false;
    uint64_t top = 1;
    int status, error;

    status = sw_cli_format_top(argc, argv, "best", help, &fmt, &helped, &top);
    if (status != SW_EXIT_OK || helped)
        return status;
    if (optind < argc - 1)
        return sw_cli_usage("best", "expected at most one sweep");
    if ((status = sw_cli_open_store(&st)) != SW_EXIT_OK)
        return status;
    if ((error = sw_store_begin(st)) == SW_OK) /* one snapshot */
        error = best(st, optind < argc ? argv[optind] : NULL, top, fmt);
    sw_store_rollback(st);
    if (error)
        fprintf(stderr, "sweep best: %s\n", sw_error_last());
    sw_store_close(st);
    return error ? SW_EXIT_FAIL : SW_EXIT_OK;
}
