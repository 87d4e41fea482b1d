/*
 * cli.h - the command-line tool: one file per subcommand (cmd_<name>.c),
 * registered in the table of main.c, plus the helpers they share.
 *
 * A command returns the process exit status: 0 when it did its job,
 * 2 for a usage error or an invalid sweep file, 1 for any other failure.
 * Errors go to stderr, one line each.
 */
#ifndef SW_CLI_H
#define SW_CLI_H

#include <stdio.h>

#include "search/search.h"
#include "orchestrator/cli/table.h"
#include "orchestrator/store/store.h"
#include "sweeps/command.h"
#include "sweeps/json.h"
#include "sweeps/spec.h"

enum { SW_EXIT_OK = 0, SW_EXIT_FAIL = 1, SW_EXIT_USAGE = 2 };

typedef struct {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *usage;   /* arguments, after the command's name */
    const char *summary; /* one line */
} sw_cli_command;

int sw_cmd_validate(int argc, char **argv);
int sw_cmd_plan(int argc, char **argv);
int sw_cmd_run(int argc, char **argv);
int sw_cmd_resume(int argc, char **argv);
int sw_cmd_ls(int argc, char **argv);
int sw_cmd_show(int argc, char **argv);
int sw_cmd_best(int argc, char **argv);
int sw_cmd_query(int argc, char **argv);
int sw_cmd_reproduce(int argc, char **argv);
int sw_cmd_gpus(int argc, char **argv);
int sw_cmd_export(int argc, char **argv);
int sw_cmd_report(int argc, char **argv);
int sw_cmd_ui(int argc, char **argv);
int sw_cmd_stop(int argc, char **argv);
int sw_cmd_rm(int argc, char **argv);
int sw_cmd_tag(int argc, char **argv);
int sw_cmd_note(int argc, char **argv);
int sw_cmd_compare(int argc, char **argv);

/* Parses the options of a table command (--json, --csv, --help, and
 * --top N when `top` is not NULL). */
int sw_cli_format(int argc, char **argv, const char *cmd, const char *help,
                  sw_table_format *fmt, bool *helped);
int sw_cli_format_top(int argc, char **argv, const char *cmd, const char *help,
                      sw_table_format *fmt, bool *helped, uint64_t *top);

/* Opens the store of the sweep home for reading; prints why not. */
int sw_cli_open_store(sw_store **out);
/* How long run `r`'s job has waited in Slurm's queue, while it waits
 * (runs.pending_reason set): seconds since its submission; else -1. */
double sw_cli_waited(const sw_run_rec *r);
/* The same for `sweep CMD` (its name in messages; NULL: none), for
 * writing when `writer`. */
int sw_cli_open_store_as(sw_store **out, const char *cmd, bool writer);

/* The columns and one row of a run table (7 values, consumed by the
 * table), as `fmt` prints it; the params, column SW_CLI_PARAMS_COL, are
 * the stored JSON text: a table printing them sets that bit of its
 * json_cols. Takes r->params (NULL after), to save a copy. */
#define SW_CLI_PARAMS_COL 6
extern const char *const sw_cli_run_cols[7];
void sw_cli_run_row(sw_value **row, sw_run_rec *r, sw_table_format fmt);

/* Prints a usage error for `cmd` to stderr; returns SW_EXIT_USAGE. */
int sw_cli_usage(const char *cmd, const char *fmt, ...) SW_PRINTF(2, 3);

/* Loads the sweep file at `path`, printing every problem and warning to
 * stderr. Returns SW_EXIT_OK with *out set, or the exit status to use. */
int sw_cli_load(sw_spec **out, const char *path);

/* Parses a non-negative integer argument; returns false when it is not. */
bool sw_cli_parse_u64(const char *s, uint64_t *out);

/* Parses a number of seconds, from 0 to 10^9 (fractions allowed);
 * returns false when it is not one. */
bool sw_cli_parse_seconds(const char *s, double *out);

/* Parses `--price`: US dollars per GPU-hour, finite and at least 0;
 * false when it is not one (report and compare say so alike). */
bool sw_cli_parse_price(const char *s, double *out);

/* Where `--` stands in argv (what follows is a trial's command), or argc
 * when it does not. */
int sw_cli_double_dash(int argc, char **argv);

/* Unix time `t` as a local date for a person, "2026-12-01 23:10" (with
 * `seconds`, ":56" too); false when it cannot be written. */
bool sw_cli_local_time(char *out, size_t n, double t, bool seconds);

/* Unix time `t` for --json (and --csv): ISO 8601 in UTC, to the
 * millisecond, "2026-12-01T23:10:56.303Z"; null when it is no time (0 or
 * less: not recorded). */
sw_value *sw_cli_iso_time(double t);

/* Writes a human description of the spec's search space. */
void sw_cli_describe(FILE *out, const sw_spec *spec);
/* The same as one map, for `sweep validate --json` (docs/cli.md); the
 * caller frees. */
sw_value *sw_cli_describe_value(const sw_spec *spec);

/* Appends argv as a shell would need it typed (quoted where needed). For
 * display only: trials are never started through a shell. */
void sw_cli_quote_argv(sw_buf *out, char *const *argv);

#endif
