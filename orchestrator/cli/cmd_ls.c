/*
 * cmd_ls.c - `sweep ls [SWEEP]`: the sweeps of the store, newest first,
 * or the runs of one sweep.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "orchestrator/cli/cli.h"
#include "orchestrator/report.h"
#include "orchestrator/cli/table.h"

static const char help[] =
    "usage: sweep ls [SWEEP] [--json|--csv]\n\n"
    "Without SWEEP: every sweep of the store, newest first, with when it\n"
    "was made, its state, method, run counts and best value. With SWEEP\n"
    "(id, id prefix or name): its runs; for a PBT sweep, with each run's\n"
    "place in the population and the run its checkpoint came from.\n";

static sw_value *str_or_null(const char *s)
{
    return s ? sw_value_str(s) : sw_value_null();
}

/* When a sweep was made: a local date for people, ISO 8601 (UTC) for
 * scripts. */
static sw_value *created(const sw_sweep_rec *s, sw_table_format fmt)
{
    char text[32];

    if (fmt != SW_TABLE_HUMAN)
        return sw_cli_iso_time(s->created_at);
    if (!sw_cli_local_time(text, sizeof(text), s->created_at, false))
        return sw_value_null();
    return sw_value_str(text);
}

/* The sweep's best value as `sweep best` ranks it; null: none yet. */
static sw_value *best_value(sw_store *st, const sw_sweep_rec *s, int *error)
{
    sw_run_rec *top = NULL;
    size_t n = 0;
    sw_value *v;

    *error = sw_store_best_runs(
        st, s->id, s->goal && strcmp(s->goal, "maximize") == 0, 1, &top, &n);
    v = !*error && n && top[0].has_value ? sw_value_float(top[0].value)
                                         : sw_value_null();
    for (size_t i = 0; i < n; i++)
        sw_run_rec_dispose(&top[i]);
    free(top);
    return v;
}

static int take_number(void *ctx, int64_t row, int ncols,
                       const char *const *names, const sw_value *const *values)
{
    double *out = ctx;

    (void)names;
    if (row == 0 && ncols == 1)
        (void)sw_value_number(values[0], out);
    return SW_OK;
}

/* The GPU-hours its attempts held: ended ones from `attempts` (MIG slices
 * as their fraction, as sweep report counts them), running ones up to
 * now from their devices and share. */
static sw_value *gpu_hours(sw_store *st, const sw_sweep_rec *s,
                           sw_table_format fmt, int *error)
{
    sw_buf b = SW_BUF_INIT;
    sw_value *out;
    char *sql = sw_aprintf(
        "select (select ifnull(sum((a.ended_at - a.started_at) * a.gpu), 0)"
        " from attempts a join runs r on r.id = a.run_id where r.sweep_id ="
        " '%s' and a.started_at is not null and a.ended_at is not null) +"
        " (select ifnull(sum(((julianday('now') - 2440587.5) * 86400 -"
        " started_at) *"
        " json_array_length(gpus, '$.devices') * json_extract(gpus,"
        " '$.share')), 0) from runs where sweep_id = '%s' and state ="
        " 'running' and started_at is not null and gpus is not null)",
        s->id, s->id);
    double v = 0;

    *error = sw_store_query(st, sql, take_number, &v);
    free(sql);
    if (fmt != SW_TABLE_HUMAN)
        return sw_value_float(v / 3600.0);
    sw_report_put_duration(&b, v, false); /* as sweep report says it */
    out = sw_value_str(sw_buf_cstr(&b));
    sw_buf_dispose(&b);
    return out;
}

static int add_sweep(sw_table *t, sw_store *st, const sw_sweep_rec *s,
                     sw_table_format fmt)
{
    int64_t counts[SW_RUN_N_STATES], runs = 0;
    sw_value *row[11];
    int error = sw_store_count_runs(st, s->id, counts);

    if (error)
        return error;
    for (int i = 0; i < SW_RUN_N_STATES; i++)
        runs += counts[i];
    row[0] = sw_value_str(s->id);
    row[1] = str_or_null(s->name);
    row[2] = sw_value_str(s->state);
    row[3] = sw_value_str(s->method);
    row[4] = sw_value_int(runs);
    row[5] = sw_value_int(counts[SW_RUN_FINISHED]);
    row[6] = sw_value_int(counts[SW_RUN_STOPPED]);
    row[7] = sw_value_int(counts[SW_RUN_FAILED]);
    row[8] = best_value(st, s, &error);
    row[9] = error ? sw_value_null() : gpu_hours(st, s, fmt, &error);
    row[10] = created(s, fmt);
    sw_table_add(t, row);
    return error;
}

static int list_sweeps(sw_store *st, sw_table_format fmt)
{
    const char *const cols[] = {
        "id",
        "name",
        "state",
        "method",
        "runs",
        sw_run_state_name(SW_RUN_FINISHED),
        sw_run_state_name(SW_RUN_STOPPED),
        sw_run_state_name(SW_RUN_FAILED),
        "best",
        fmt == SW_TABLE_HUMAN ? "GPU time" : "gpu_hours",
        fmt == SW_TABLE_HUMAN ? "created" : "created_at"};
    sw_sweep_rec *s = NULL;
    size_t n = 0, i;
    sw_table t;
    int error = sw_store_list_sweeps(st, &s, &n);

    if (error)
        return error;
    sw_table_init(&t, 11, cols);
    for (i = 0; i < n; i++) {
        if (!error)
            error = add_sweep(&t, st, &s[i], fmt);
        sw_sweep_rec_dispose(&s[i]);
    }
    free(s);
    if (!error)
        sw_table_print(&t, fmt, stdout);
    sw_table_dispose(&t);
    return error;
}

/* A run's params as stored (a JSON column, SW_CLI_PARAMS_COL): their
 * text for people and CSV; in JSON the text, or for a value that is not
 * JSON, the text as a JSON string. Nothing is parsed: shown as stored.
 * Takes r->params (NULL after). */
static sw_value *params_cell(sw_run_rec *r, sw_table_format fmt)
{
    sw_buf b = SW_BUF_INIT;
    char *text = r->params ? r->params : sw_strdup("");

    r->params = NULL;
    if (fmt != SW_TABLE_JSON || sw_json_valid(text, strlen(text)))
        return sw_value_str_take(text);
    sw_json_write_string(&b, text);
    free(text);
    return sw_value_str_take(sw_buf_detach(&b));
}

void sw_cli_run_row(sw_value **row, sw_run_rec *r, sw_table_format fmt)
{
    row[0] = sw_value_str(r->id);
    row[1] = sw_value_str(sw_run_state_name(r->state));
    row[2] = r->has_value ? sw_value_float(r->value) : sw_value_null();
    row[3] = sw_value_int(r->attempts);
    row[4] = r->has_exit ? sw_value_int(r->exit_code) : sw_value_null();
    row[5] = r->ended_at > 0 && r->started_at > 0
                 ? sw_value_float(r->ended_at - r->started_at)
                 : sw_value_null();
    row[SW_CLI_PARAMS_COL] = params_cell(r, fmt);
}

const char *const sw_cli_run_cols[7] = {"run",  "state",   "value", "attempts",
                                        "exit", "seconds", "params"};

/* The columns of `sweep ls SWEEP`: sweep best's, and while a run's job
 * waits in Slurm's queue, why and for how long ("Resources, 42s"); its
 * state then reads `queued`, for it has not started; then its tags and
 * note (`sweep tag`, `sweep note`). */
#define LS_COLS 10
#define PBT_COLS 3 /* a PBT sweep's: member, from, from_iter */
static const char *const ls_cols[LS_COLS + PBT_COLS] = {
    "run",     "state", "value", "attempts", "exit", "seconds",  "params",
    "waiting", "tags",  "note",  "member",   "from", "from_iter"};

#define NOTE_SHOWN 40 /* characters of a note a table shows */

/* The run's tags: a list for scripts, words for people. */
static sw_value *tags_value(const sw_labels *l, sw_table_format fmt)
{
    sw_value *list = sw_value_list();
    sw_buf b = SW_BUF_INIT;

    if (fmt == SW_TABLE_JSON) {
        for (size_t i = 0; i < l->n_tags; i++)
            sw_value_list_push(list, sw_value_str(l->tags[i]));
        return list;
    }
    sw_value_free(list);
    if (l->n_tags == 0)
        return sw_value_null();
    for (size_t i = 0; i < l->n_tags; i++)
        sw_buf_printf(&b, "%s%s", i ? "," : "", l->tags[i]);
    list = sw_value_str(sw_buf_cstr(&b));
    sw_buf_dispose(&b);
    return list;
}

/* The run's note: whole for scripts, its first line cut short for
 * people. */
static sw_value *note_value(const sw_labels *l, sw_table_format fmt)
{
    sw_buf b = SW_BUF_INIT;
    size_t n = 0;
    const char *p;
    sw_value *v;

    if (!l->note)
        return sw_value_null();
    if (fmt != SW_TABLE_HUMAN)
        return sw_value_str(l->note);
    for (p = l->note; *p && *p != '\n' && n < NOTE_SHOWN; p++) {
        n += ((unsigned char)*p & 0xc0) != 0x80;
        sw_buf_putc(&b, *p);
    }
    while (((unsigned char)*p & 0xc0) == 0x80) /* the rest of a character */
        sw_buf_putc(&b, *p++);
    if (*p)
        sw_buf_puts(&b, "...");
    v = sw_value_str(sw_buf_cstr(&b));
    sw_buf_dispose(&b);
    return v;
}

/* A run's row; its labels are read when it has some (`labeled`). */
static void ls_row(sw_store *st, sw_value **row, sw_run_rec *r, bool labeled,
                   sw_table_format fmt)
{
    double waited = sw_cli_waited(r);
    sw_labels l;
    char *w;

    sw_cli_run_row(row, r, fmt);
    row[7] = sw_value_null();
    memset(&l, 0, sizeof(l));
    if (labeled && sw_store_run_labels(st, r->id, &l) != SW_OK)
        memset(&l, 0, sizeof(l)); /* shown without */
    row[8] = tags_value(&l, fmt);
    row[9] = note_value(&l, fmt);
    sw_labels_dispose(&l);
    if (waited < 0)
        return;
    sw_value_free(row[1]);
    row[1] = sw_value_str("queued");
    w = sw_aprintf("%s, %.0fs", r->pending_reason, waited);
    sw_value_free(row[7]);
    row[7] = sw_value_str(w);
    free(w);
}

/* A PBT sweep's run: its place in the population and the run its
 * checkpoint came from, at which iteration ("3f2a-1@8" for people). */
static void lineage_cells(sw_value **row, const sw_run_rec *r,
                          sw_table_format fmt)
{
    char *from;

    row[0] = r->has_member ? sw_value_int(r->member) : sw_value_null();
    if (!r->parent) {
        row[1] = sw_value_null();
        if (fmt != SW_TABLE_HUMAN) /* people have no from_iter column */
            row[2] = sw_value_null();
    } else if (fmt == SW_TABLE_HUMAN) {
        from = sw_aprintf("%s@%lld", r->parent, (long long)r->parent_iter);
        row[1] = sw_value_str(from);
        free(from);
    } else {
        row[1] = sw_value_str(r->parent);
        row[2] = sw_value_int(r->parent_iter);
    }
}

/* The columns of the sweep's runs: PBT's lineage too for a PBT sweep
 * (for people, `from` holds the iteration). */
static size_t runs_cols(const sw_sweep_rec *s, sw_table_format fmt)
{
    if (!s->method || strcmp(s->method, "pbt") != 0)
        return LS_COLS;
    return LS_COLS + (fmt == SW_TABLE_HUMAN ? PBT_COLS - 1 : PBT_COLS);
}

static int list_runs(sw_store *st, const char *key, sw_table_format fmt)
{
    sw_sweep_rec s;
    sw_run_rec *runs = NULL;
    sw_value *row[LS_COLS + PBT_COLS];
    char **labeled = NULL;
    size_t n = 0, i, ncols, n_labeled = 0, j = 0;
    bool has;
    sw_table t;
    int error;

    memset(&s, 0, sizeof(s));
    if ((error = sw_store_get_sweep(st, key, &s)) != SW_OK)
        return error;
    error = sw_store_list_shown(st, s.id, &runs, &n);
    if (!error && sw_store_labeled_runs(st, s.id, &labeled, &n_labeled))
        n_labeled = 0; /* shown without */
    ncols = runs_cols(&s, fmt);
    sw_table_init(&t, ncols, ls_cols);
    t.json_cols = 1u << SW_CLI_PARAMS_COL;
    for (i = 0; i < n; i++) { /* both by idx */
        has = j < n_labeled && strcmp(labeled[j], runs[i].id) == 0;
        j += has;
        ls_row(st, row, &runs[i], has, fmt);
        if (ncols > LS_COLS)
            lineage_cells(row + LS_COLS, &runs[i], fmt);
        sw_table_add(&t, row);
        sw_run_rec_dispose(&runs[i]);
    }
    free(runs);
    for (j = 0; j < n_labeled; j++)
        free(labeled[j]);
    free(labeled);
    if (!error)
        sw_table_print(&t, fmt, stdout);
    sw_table_dispose(&t);
    sw_sweep_rec_dispose(&s);
    return error;
}

int sw_cmd_ls(int argc, char **argv)
{
    sw_table_format fmt = SW_TABLE_HUMAN;
    sw_store *st = NULL;
    bool helped = false;
    int status, error;

    status = sw_cli_format(argc, argv, "ls", help, &fmt, &helped);
    if (status != SW_EXIT_OK || helped)
        return status;
    if (optind < argc - 1)
        return sw_cli_usage("ls", "expected at most one sweep");
    if ((status = sw_cli_open_store(&st)) != SW_EXIT_OK)
        return status;
    /* one read transaction: one snapshot, and SQLite takes its locks
     * once instead of for each of the runs' statements */
    if ((error = sw_store_begin(st)) == SW_OK)
        error = optind < argc ? list_runs(st, argv[optind], fmt)
                              : list_sweeps(st, fmt);
    sw_store_rollback(st);
    if (error)
        fprintf(stderr, "sweep ls: %s\n", sw_error_last());
    sw_store_close(st);
    return error ? SW_EXIT_FAIL : SW_EXIT_OK;
}
