/*
 * cmd_compare.c - `sweep compare SWEEP SWEEP... [--json] [--price USD]`:
 * sweeps side by side: method and metric, runs by state, the best value
 * and its params, GPU time, occupancy and spend.
 *
 * Read-only. The best run is the one `sweep best` puts first; every time
 * and cost figure is the report module's (report.c, docs/report.md), so
 * `compare` and `report` never disagree.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "orchestrator/cli/cli.h"
#include "orchestrator/report.h"
#include "orchestrator/vocab.h"

#define MAX_SWEEPS 8

static const char help[] =
    "usage: sweep compare SWEEP SWEEP... [--json] [--price USD_PER_GPU_HOUR]\n"
    "                     [--timeout SECONDS]\n\n"
    "Two sweeps (up to 8) side by side: method, metric, runs by state, the\n"
    "best value and its params (as `sweep best` ranks them), wall time, GPU\n"
    "time busy, occupancy, and the spend: with --price what the GPUs cost,\n"
    "as `sweep report` computes it. --json prints one object.\n";

/* What compare shows of one sweep. */
typedef struct {
    sw_sweep_rec s;
    int64_t counts[SW_RUN_N_STATES], runs;
    sw_run_rec best; /* best.id NULL: no run has a value */
    sw_report r;
} column;

typedef struct {
    bool json;
    double price, timeout;
} compare_opts;

static int load_column(sw_store *st, const char *key, double price, column *c)
{
    sw_report_data d;
    sw_run_rec *top = NULL;
    struct timespec now;
    size_t n = 0;
    int error;

    if ((error = sw_store_get_sweep(st, key, &c->s)) != SW_OK ||
        (error = sw_store_count_runs(st, c->s.id, c->counts)) != SW_OK)
        return error;
    for (int i = 0; i < SW_RUN_N_STATES; i++)
        c->runs += c->counts[i];
    error = sw_store_best_runs(st, c->s.id,
                               c->s.goal && strcmp(c->s.goal, "maximize") == 0,
                               1, &top, &n);
    if (!error && n > 0 && top[0].has_value) {
        c->best = top[0];
        memset(&top[0], 0, sizeof(top[0]));
    }
    for (size_t i = 0; i < n; i++)
        sw_run_rec_dispose(&top[i]);
    free(top);
    clock_gettime(CLOCK_REALTIME, &now);
    if (!error && (error = sw_report_load(
                       st, c->s.id, price,
                       (double)now.tv_sec + now.tv_nsec / 1e9, &d)) == SW_OK) {
        sw_report_compute(&c->r, &d);
        sw_report_data_dispose(&d);
    }
    return error;
}

static sw_value *num_or_null(double v)
{
    return isfinite(v) ? sw_value_float(v) : sw_value_null();
}

static sw_value *column_value(const column *c)
{
    sw_value *v = sw_value_map(), *runs = sw_value_map(), *best, *params;

    sw_value_map_set(v, "id", sw_value_str(c->s.id));
    sw_value_map_set(v, "name",
                     c->s.name ? sw_value_str(c->s.name) : sw_value_null());
    sw_value_map_set(v, "method", sw_value_str(c->s.method));
    sw_value_map_set(v, "metric",
                     c->s.metric ? sw_value_str(c->s.metric) : sw_value_null());
    sw_value_map_set(v, "goal",
                     c->s.goal ? sw_value_str(c->s.goal) : sw_value_null());
    sw_value_map_set(v, "state", sw_value_str(c->s.state));
    sw_value_map_set(runs, "total", sw_value_int(c->runs));
    for (int i = 0; i < SW_RUN_N_STATES; i++)
        sw_value_map_set(runs, sw_run_state_name((sw_run_state)i),
                         sw_value_int(c->counts[i]));
    sw_value_map_set(v, "runs", runs);
    best = sw_value_null();
    if (c->best.id) {
        sw_value_free(best);
        best = sw_value_map();
        if (sw_json_parse(&params, c->best.params, strlen(c->best.params)))
            params = sw_value_str(c->best.params);
        sw_value_map_set(best, "run", sw_value_str(c->best.id));
        sw_value_map_set(best, "state",
                         sw_value_str(sw_run_state_name(c->best.state)));
        sw_value_map_set(best, "value", sw_value_float(c->best.value));
        sw_value_map_set(best, "params", params);
    }
    sw_value_map_set(v, "best", best);
    sw_value_map_set(v, "wall_seconds", num_or_null(c->r.wall_seconds));
    sw_value_map_set(v, "gpu_seconds_busy", num_or_null(c->r.gpu_seconds_busy));
    sw_value_map_set(v, "trial_seconds", num_or_null(c->r.trial_seconds));
    sw_value_map_set(v, "occupancy", num_or_null(c->r.occupancy));
    sw_value_map_set(v, "cost", num_or_null(c->r.cost));
    return v;
}

/* One line of the table: `what`, then each column's text. */
static void line(const char *what, char **cells, size_t n, const size_t *w)
{
    printf("%-12s", what);
    for (size_t i = 0; i < n; i++) /* the last unpadded: no blank tail */
        printf("  %-*s", i + 1 < n ? (int)w[i] : 0, cells[i]);
    printf("\n");
}

/* The table's cells, row by row: cells[row * n + col]. */
#define ROWS 13
static const char *const row_names[ROWS] = {
    "sweep", "method", "metric", "state", "runs",     NULL,   NULL,
    NULL,    "best",   "params", "wall",  "GPU time", "spend"};

/* Row i's name; the counts of runs by state take the vocabulary's words. */
static const char *row_name(size_t i)
{
    static const sw_run_state counted[] = {SW_RUN_FINISHED, SW_RUN_STOPPED,
                                           SW_RUN_FAILED};

    return row_names[i] ? row_names[i] : sw_run_state_name(counted[i - 5]);
}

static char *duration(double s)
{
    sw_buf b = SW_BUF_INIT;

    if (!isfinite(s))
        return sw_strdup("-");
    sw_report_put_duration(&b, s, false);
    return sw_buf_detach(&b);
}

static void column_cells(const column *c, char *out[ROWS])
{
    const sw_sweep_rec *s = &c->s;
    char *gpu = duration(c->r.gpu_seconds_busy);

    out[0] = sw_aprintf("%s%s%s%s", s->id, s->name ? " (" : "",
                        s->name ? s->name : "", s->name ? ")" : "");
    out[1] = sw_strdup(s->method);
    out[2] =
        s->metric ? sw_aprintf("%s (%s)", s->metric, s->goal) : sw_strdup("-");
    out[3] = sw_strdup(s->state);
    out[4] = sw_aprintf("%lld", (long long)c->runs);
    out[5] = sw_aprintf("%lld", (long long)c->counts[SW_RUN_FINISHED]);
    out[6] = sw_aprintf("%lld", (long long)c->counts[SW_RUN_STOPPED]);
    out[7] = sw_aprintf("%lld", (long long)c->counts[SW_RUN_FAILED]);
    out[8] =
        c->best.id
            ? sw_aprintf("%.6g (%s%s)", c->best.value, c->best.id,
                         c->best.state == SW_RUN_STOPPED ? ", stopped" : "")
            : sw_strdup("-");
    out[9] = sw_strdup(c->best.id ? c->best.params : "-");
    out[10] = duration(c->r.wall_seconds);
    out[11] = isfinite(c->r.occupancy) ? sw_aprintf("%s, occupancy %.1f %%",
                                                    gpu, c->r.occupancy * 100)
                                       : sw_strdup(gpu);
    out[12] = isfinite(c->r.cost) ? sw_aprintf("%.4g USD", c->r.cost)
              : isfinite(c->r.trial_seconds)
                  ? sw_aprintf("%.4g trial-hours (--price for USD)",
                               c->r.trial_seconds / 3600)
                  : sw_strdup("-");
    free(gpu);
}

static void print_table(const column *cols, size_t n)
{
    char **cells = sw_calloc(ROWS * n, sizeof(char *));
    char **row = sw_calloc(n, sizeof(char *));
    size_t w[MAX_SWEEPS] = {0}, i, j;

    for (j = 0; j < n; j++) {
        char *col[ROWS];

        column_cells(&cols[j], col);
        for (i = 0; i < ROWS; i++) {
            cells[i * n + j] = col[i];
            if (strlen(col[i]) > w[j])
                w[j] = strlen(col[i]);
        }
    }
    for (i = 0; i < ROWS; i++) {
        for (j = 0; j < n; j++)
            row[j] = cells[i * n + j];
        line(row_name(i), row, n, w);
    }
    for (i = 0; i < ROWS * n; i++)
        free(cells[i]);
    free(cells);
    free(row);
}

static void print_json(const column *cols, size_t n)
{
    sw_value *v = sw_value_map(), *list = sw_value_list();
    sw_buf b = SW_BUF_INIT;

    for (size_t i = 0; i < n; i++)
        sw_value_list_push(list, column_value(&cols[i]));
    sw_value_map_set(v, "sweeps", list);
    sw_value_write_json(&b, v, false);
    printf("%s\n", sw_buf_cstr(&b));
    sw_buf_dispose(&b);
    sw_value_free(v);
}

static int parse(int argc, char **argv, compare_opts *o, bool *helped)
{
    static const struct option opts[] = {
        {"help", no_argument, NULL, 'h'},
        {"json", no_argument, NULL, 'j'},
        {"price", required_argument, NULL, 'p'},
        {"timeout", required_argument, NULL, 't'},
        {NULL, 0, NULL, 0}};
    int c;

    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        if (c == 'h') {
            fputs(help, stdout);
            *helped = true;
            return SW_EXIT_OK;
        } else if (c == 'j') {
            o->json = true;
        } else if (c == 'p') {
            if (!sw_cli_parse_price(optarg, &o->price))
                return sw_cli_usage("compare",
                                    "--price wants US dollars per GPU-hour "
                                    "(such as 2.5), not '%s'",
                                    optarg);
        } else if (c == 't') {
            if (!sw_cli_parse_seconds(optarg, &o->timeout))
                return sw_cli_usage("compare",
                                    "--timeout wants seconds (0 for no "
                                    "limit), not '%s'",
                                    optarg);
        } else {
            return sw_cli_usage("compare", "unknown option");
        }
    }
    if (argc - optind < 2 || argc - optind > MAX_SWEEPS)
        return sw_cli_usage("compare", "expected 2 to %d sweeps", MAX_SWEEPS);
    return SW_EXIT_OK;
}

int sw_cmd_compare(int argc, char **argv)
{
    compare_opts o = {false, -1, SW_STORE_READ_TIMEOUT_S};
    column cols[MAX_SWEEPS];
    sw_store *st = NULL;
    bool helped = false;
    size_t n = 0, i;
    int status = parse(argc, argv, &o, &helped), error = SW_OK;

    if (status != SW_EXIT_OK || helped)
        return status;
    if ((status = sw_cli_open_store_as(&st, "compare", false)) != SW_EXIT_OK)
        return status;
    sw_store_read_limit(st, o.timeout);
    memset(cols, 0, sizeof(cols));
    for (n = 0; !error && optind + (int)n < argc; n++)
        error = load_column(st, argv[optind + (int)n], o.price, &cols[n]);
    if (error)
        fprintf(stderr, "sweep compare: %s\n", sw_error_last());
    else if (o.json)
        print_json(cols, n);
    else
        print_table(cols, n);
    for (i = 0; i < n; i++) {
        sw_sweep_rec_dispose(&cols[i].s);
        sw_run_rec_dispose(&cols[i].best);
    }
    sw_store_close(st);
    return error ? SW_EXIT_FAIL : SW_EXIT_OK;
}
