/*
 * cmd_show.c - `sweep show RUN [--json]`: one run: its parameters, state,
 * attempts, exit, times, command line, folder, the code it started with
 * (git commit, dirty flag, branch, remote, snapshot, patch, files left
 * out), its lineage under PBT (its place in the population, the run its
 * checkpoint came from), and the last value of each metric it reported.
 * Its times are local dates for people and ISO 8601 (UTC) in --json.
 */
#include <getopt.h>
#include <string.h>
#include <time.h>

#include "orchestrator/cli/cli.h"

#define KEY_W 14 /* the widest key, pending_reason */

static const char help[] =
    "usage: sweep show RUN [--json]\n\n"
    "Everything recorded about one run (RUN is an id such as 3fa2c1d0-12).\n";

/* Adds one metric's last value to the map `ctx`. */
static int on_metric(void *ctx, const char *name, bool has_value, double value)
{
    sw_value_map_set(ctx, name,
                     has_value ? sw_value_float(value) : sw_value_null());
    return SW_OK;
}

/* The run's git facts (docs/provenance.md), or null outside git. */
static sw_value *git_value(const sw_run_rec *r)
{
    sw_value *v = NULL;

    if (!r->git || sw_json_parse(&v, r->git, strlen(r->git)) != SW_OK) {
        sw_value_free(v);
        return sw_value_null();
    }
    return v;
}

/* method pbt: its place in the population, and the run (and iteration)
 * its checkpoint came from; null for other methods. */
static sw_value *lineage_value(const sw_run_rec *r)
{
    sw_value *v;

    if (!r->has_member)
        return sw_value_null();
    v = sw_value_map();
    sw_value_map_set(v, "member", sw_value_int(r->member));
    sw_value_map_set(v, "parent",
                     r->parent ? sw_value_str(r->parent) : sw_value_null());
    sw_value_map_set(v, "parent_iter",
                     r->parent ? sw_value_int(r->parent_iter)
                               : sw_value_null());
    return v;
}

/* A recorded time: Unix seconds for the view below (which writes it as
 * a local date), ISO 8601 in --json; null when not recorded. */
static sw_value *time_value(double t, sw_table_format fmt)
{
    if (fmt != SW_TABLE_HUMAN)
        return sw_cli_iso_time(t);
    return t > 0 ? sw_value_float(t) : sw_value_null();
}

/* The best value of the sweep's metric the run logged, and its step: a
 * figure of its own beside the run's value (its last, docs/metrics.md);
 * null without a metric or a value. */
static sw_value *best_logged_value(sw_store *st, const sw_run_rec *r)
{
    sw_sweep_rec s;
    sw_value *v = NULL;
    bool has = false;
    double value = 0;
    int64_t step = -1;

    memset(&s, 0, sizeof(s));
    if (sw_store_get_sweep(st, r->sweep_id, &s) == SW_OK && s.metric &&
        sw_store_best_logged(st, r->id, s.metric,
                             s.goal && strcmp(s.goal, "maximize") == 0, &has,
                             &value, &step) == SW_OK &&
        has) {
        v = sw_value_map();
        sw_value_map_set(v, "value", sw_value_float(value));
        sw_value_map_set(v, "step",
                         step >= 0 ? sw_value_int(step) : sw_value_null());
    }
    sw_sweep_rec_dispose(&s);
    return v ? v : sw_value_null();
}

static sw_value *run_value(sw_store *st, const sw_run_rec *r,
                           sw_table_format fmt)
{
    sw_value *v = sw_value_map(), *params = NULL, *argv = NULL;
    sw_value *metrics = sw_value_map(), *tags = sw_value_list();
    sw_labels labels;

    if (sw_json_parse(&params, r->params, strlen(r->params)) != SW_OK)
        params = sw_value_str(r->params);
    if (!r->argv || sw_json_parse(&argv, r->argv, strlen(r->argv)) != SW_OK)
        argv = sw_value_null();
    sw_store_last_metrics(st, r->id, on_metric, metrics);
    if (sw_store_run_labels(st, r->id, &labels) != SW_OK)
        memset(&labels, 0, sizeof(labels)); /* shown without */
    for (size_t i = 0; i < labels.n_tags; i++)
        sw_value_list_push(tags, sw_value_str(labels.tags[i]));
    sw_value_map_set(v, "id", sw_value_str(r->id));
    sw_value_map_set(v, "sweep", sw_value_str(r->sweep_id));
    sw_value_map_set(v, "state", sw_value_str(sw_run_state_name(r->state)));
    sw_value_map_set(v, "reason",
                     r->reason ? sw_value_str(r->reason) : sw_value_null());
    sw_value_map_set(v, "attempts", sw_value_int(r->attempts));
    sw_value_map_set(v, "exit_code",
                     r->has_exit ? sw_value_int(r->exit_code)
                                 : sw_value_null());
    sw_value_map_set(v, "signal",
                     r->signal ? sw_value_int(r->signal) : sw_value_null());
    sw_value_map_set(v, "started_at", time_value(r->started_at, fmt));
    sw_value_map_set(v, "ended_at", time_value(r->ended_at, fmt));
    /* Slurm: why its job waits (started_at is then its submission), and
     * how long its attempt waited before it started */
    sw_value_map_set(v, "pending_reason",
                     r->pending_reason ? sw_value_str(r->pending_reason)
                                       : sw_value_null());
    sw_value_map_set(v, "queue_seconds",
                     sw_cli_waited(r) >= 0 ? sw_value_float(sw_cli_waited(r))
                     : r->has_queued       ? sw_value_float(r->queued_seconds)
                                           : sw_value_null());
    sw_value_map_set(v, "value",
                     r->has_value ? sw_value_float(r->value) : sw_value_null());
    sw_value_map_set(v, "best_logged", best_logged_value(st, r));
    sw_value_map_set(v, "params", params);
    sw_value_map_set(v, "lineage", lineage_value(r));
    sw_value_map_set(v, "argv", argv);
    sw_value_map_set(v, "commit",
                     r->git_commit ? sw_value_str(r->git_commit)
                                   : sw_value_null());
    sw_value_map_set(v, "dirty",
                     r->git ? sw_value_bool(r->git_dirty) : sw_value_null());
    sw_value_map_set(v, "git", git_value(r));
    sw_value_map_set(v, "tags", tags);
    sw_value_map_set(v, "note",
                     labels.note ? sw_value_str(labels.note) : sw_value_null());
    sw_value_map_set(v, "metrics", metrics);
    sw_labels_dispose(&labels);
    return v;
}

static const char *git_str(const sw_value *git, const char *key)
{
    const sw_value *x = sw_value_map_get(git, key);

    return x && x->type == SW_STR ? x->u.s : NULL;
}

/* The git facts a person wants, one per line; the rest is in --json. */
static void print_git(const sw_value *git)
{
    static const char *const keys[] = {"branch", "head", "snapshot", "remote",
                                       "patch"};
    const sw_value *list;

    if (git->type != SW_MAP)
        return;
    list = sw_value_map_get(git, "skipped");
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
        if (git_str(git, keys[i]))
            printf("%-*s %s\n", KEY_W, keys[i], git_str(git, keys[i]));
    if (!git_str(git, "head"))
        printf("%-*s %s\n", KEY_W, "head", "none (no commit yet)");
    for (size_t i = 0; list && list->type == SW_LIST && i < list->u.list.len;
         i++)
        printf("%-*s %s (%s)\n", KEY_W, i ? "" : "left out",
               git_str(list->u.list.items[i], "path"),
               git_str(list->u.list.items[i], "why"));
}

/* "2026-12-01 23:10:56" in local time, for a person. */
static void put_time(sw_buf *b, double t)
{
    char text[64];

    if (sw_cli_local_time(text, sizeof(text), t, true))
        sw_buf_puts(b, text);
    else
        sw_buf_printf(b, "%.3f", t);
}

/* "member 2, from run 3f2a-1's checkpoint at iteration 8", or "member
 * 0, from the start". */
static void put_lineage(sw_buf *b, const sw_value *x)
{
    const sw_value *member = sw_value_map_get(x, "member");
    const sw_value *parent = sw_value_map_get(x, "parent");
    const sw_value *iter = sw_value_map_get(x, "parent_iter");

    sw_buf_printf(b, "member %lld", (long long)member->u.i);
    if (parent->type == SW_STR)
        sw_buf_printf(b, ", from run %s's checkpoint at iteration %lld",
                      parent->u.s, (long long)iter->u.i);
    else
        sw_buf_puts(b, ", from the start");
}

/* One value as a person reads it: times as dates, a wait in seconds, a
 * value that is not there as "-", lists and maps as JSON. */
static void put_field(sw_buf *b, const sw_value *run, const char *key,
                      const sw_value *x)
{
    const sw_value *start = sw_value_map_get(run, "started_at");

    if (x->type == SW_NULL) {
        sw_buf_puts(b, "-");
    } else if (x->type == SW_FLOAT && (strcmp(key, "started_at") == 0 ||
                                       strcmp(key, "ended_at") == 0)) {
        put_time(b, x->u.f);
        if (strcmp(key, "ended_at") == 0 && start && start->type == SW_FLOAT)
            sw_buf_printf(b, " (after %.1f s)", x->u.f - start->u.f);
    } else if (x->type == SW_FLOAT && strcmp(key, "queue_seconds") == 0) {
        sw_buf_printf(b, "%.1f s", x->u.f);
    } else if (x->type == SW_LIST && strcmp(key, "tags") == 0) {
        for (size_t i = 0; i < x->u.list.len; i++)
            sw_buf_printf(b, "%s%s", i ? ", " : "", x->u.list.items[i]->u.s);
        if (x->u.list.len == 0)
            sw_buf_puts(b, "-");
    } else if (x->type == SW_MAP && strcmp(key, "lineage") == 0) {
        put_lineage(b, x);
    } else if (x->type == SW_MAP && strcmp(key, "best_logged") == 0) {
        sw_value_write_py(b, sw_value_map_get(x, "value"));
        if (sw_value_map_get(x, "step")->type == SW_INT)
            sw_buf_printf(b, " at step %lld",
                          (long long)sw_value_map_get(x, "step")->u.i);
        sw_buf_puts(b, " (the best it logged; its value is its last)");
    } else if (x->type == SW_LIST || x->type == SW_MAP) {
        sw_value_write_json(b, x, false);
    } else {
        sw_value_write_py(b, x);
    }
}

static void print_human(const sw_value *v)
{
    sw_buf b = SW_BUF_INIT;
    size_t i;

    for (i = 0; i < v->u.map.len; i++) {
        const char *key = v->u.map.keys[i];

        b.len = 0;
        if (strcmp(key, "git") == 0) {
            print_git(v->u.map.vals[i]);
            continue;
        }
        if (strcmp(key, "lineage") == 0 && v->u.map.vals[i]->type == SW_NULL)
            continue; /* not a PBT run */
        put_field(&b, v, key, v->u.map.vals[i]);
        printf("%-*s %s\n", KEY_W,
               strcmp(key, "queue_seconds") == 0 ? "queue wait"
               : strcmp(key, "best_logged") == 0 ? "best logged"
                                                 : key,
               sw_buf_cstr(&b));
    }
    sw_buf_dispose(&b);
}

int sw_cmd_show(int argc, char **argv)
{
    sw_table_format fmt = SW_TABLE_HUMAN;
    sw_store *st = NULL;
    sw_run_rec r;
    sw_value *v;
    bool helped = false;
    int status, error;

    status = sw_cli_format(argc, argv, "show", help, &fmt, &helped);
    if (status != SW_EXIT_OK || helped)
        return status;
    if (optind != argc - 1)
        return sw_cli_usage("show", "expected one run id");
    if ((status = sw_cli_open_store(&st)) != SW_EXIT_OK)
        return status;
    memset(&r, 0, sizeof(r));
    /* one read transaction: one snapshot, SQLite's locks taken once */
    if ((error = sw_store_begin(st)) == SW_OK)
        error = sw_store_get_run(st, argv[optind], &r);
    if (error) {
        fprintf(stderr, "sweep show: %s\n", sw_error_last());
    } else {
        v = run_value(st, &r, fmt);
        if (fmt == SW_TABLE_HUMAN) {
            print_human(v);
        } else {
            sw_buf b = SW_BUF_INIT;
            sw_value_write_json(&b, v, false);
            printf("%s\n", sw_buf_cstr(&b));
            sw_buf_dispose(&b);
        }
        sw_value_free(v);
    }
    sw_store_rollback(st);
    sw_run_rec_dispose(&r);
    sw_store_close(st);
    return error ? SW_EXIT_FAIL : SW_EXIT_OK;
}
