/*
 * export.c - `sweep export wandb`'s work: the sweep and its runs read
 * from the store, shaped as the exporter's plain data, and what W&B
 * accepted recorded back, request by request.
 *
 * A run's history is its metric rows grouped into lines: one line per
 * step (per report time for values without a step), in the order each
 * line's first value arrived, each metric's last value in the line. That
 * order only ever grows at its end, so the lines already sent keep their
 * numbers on the next export and the exporter resumes at a line number.
 * Nothing is recorded in a dry run.
 */
#include "orchestrator/export.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sweeps/json.h"
#include "sweeps/spec.h"

#define TARGET "wandb"
#define PROGRESS_S 0.2

/* ---- a run's history --------------------------------------------------- */

typedef struct {
    int64_t step;
    double time;
    uint32_t row;  /* its line */
    uint32_t name; /* index in names */
    bool has_value;
    double value;
} entry;

typedef struct {
    int64_t step; /* -1: a line of values without a step, keyed by time */
    double time;
    uint32_t row;
    bool used;
} slot;

typedef struct {
    char **names;
    size_t n_names, cap_names;
    uint32_t last_name; /* the name the last lookup found */
    entry *entries;
    size_t n_entries, cap_entries;
    slot *slots; /* open addressing: a line's key to its number */
    size_t cap_slots;
    sw_wandb_row *rows;
    size_t n_rows, cap_rows;
    sw_wandb_value *values;
    sw_wandb_value *summary;
    size_t n_summary;
    double shift; /* added to each time: the sweep's (see exporter) */
} history;

static void history_dispose(history *h)
{
    for (size_t i = 0; i < h->n_names; i++)
        free(h->names[i]);
    free(h->names);
    free(h->entries);
    free(h->slots);
    free(h->rows);
    free(h->values);
    free(h->summary);
    memset(h, 0, sizeof(*h));
}

/* The index of `name` among the run's names, in the order they first
 * came; a new name starts its summary entry. */
static uint32_t intern(history *h, const char *name)
{
    size_t i = h->last_name + 1 < h->n_names ? h->last_name + 1 : 0;

    /* names mostly come in the same order, line after line */
    for (size_t k = 0; k < h->n_names; k++, i = i + 1 < h->n_names ? i + 1 : 0)
        if (strcmp(h->names[i], name) == 0)
            return h->last_name = (uint32_t)i;
    sw_grow(&h->names, &h->cap_names, h->n_names + 1, sizeof(char *));
    h->names[h->n_names] = sw_strdup(name);
    h->summary = sw_realloc(h->summary, h->cap_names * sizeof(*h->summary));
    h->n_summary = h->n_names + 1;
    return h->last_name = (uint32_t)h->n_names++;
}

static uint64_t key_hash(int64_t step, double time)
{
    uint64_t k = (uint64_t)step, t;

    memcpy(&t, &time, sizeof(t));
    k = (k ^ (t * 0x9e3779b97f4a7c15ULL)) * 0xff51afd7ed558ccdULL;
    return k ^ (k >> 29);
}

/* Doubles the slot table and places every line again. */
static void rehash(history *h)
{
    slot *old = h->slots;
    size_t n = h->cap_slots;

    h->cap_slots = n ? n * 2 : 1024;
    h->slots = sw_calloc(h->cap_slots, sizeof(slot));
    for (size_t i = 0; i < n; i++) {
        size_t j;
        if (!old[i].used)
            continue;
        j = key_hash(old[i].step, old[i].time) & (h->cap_slots - 1);
        while (h->slots[j].used)
            j = (j + 1) & (h->cap_slots - 1);
        h->slots[j] = old[i];
    }
    free(old);
}

/* The line of (step, time): an existing one, or the next new one. */
static uint32_t line_of(history *h, int64_t step, double time)
{
    size_t j;

    if (step >= 0)
        time = 0;
    if ((h->n_rows + 1) * 2 > h->cap_slots)
        rehash(h);
    j = key_hash(step, time) & (h->cap_slots - 1);
    while (h->slots[j].used) {
        if (h->slots[j].step == step && h->slots[j].time == time)
            return h->slots[j].row;
        j = (j + 1) & (h->cap_slots - 1);
    }
    h->slots[j] = (slot){step, time, (uint32_t)h->n_rows, true};
    sw_grow(&h->rows, &h->cap_rows, h->n_rows + 1, sizeof(sw_wandb_row));
    h->rows[h->n_rows] = (sw_wandb_row){step, 0, NULL, 0};
    return (uint32_t)h->n_rows++;
}

static int on_metric_row(void *ctx, int64_t step, const char *name,
                         bool has_value, double value, double time)
{
    history *h = ctx;
    uint32_t row, n;

    time += h->shift;
    row = line_of(h, step, time);
    n = intern(h, name);

    sw_grow(&h->entries, &h->cap_entries, h->n_entries + 1, sizeof(entry));
    h->entries[h->n_entries++] = (entry){step, time, row, n, has_value, value};
    /* the summary: each name's value that came last */
    h->summary[n] = (sw_wandb_value){h->names[n], has_value, value};
    if (time > h->rows[row].time)
        h->rows[row].time = time;
    return 0;
}

/* Lays the values out line by line (a counting sort by line, stable), a
 * name repeated within a line keeping its last value. */
static void lay_out(history *h)
{
    size_t *start = sw_calloc(h->n_rows + 1, sizeof(size_t));
    size_t i, k;

    for (i = 0; i < h->n_entries; i++)
        start[h->entries[i].row + 1]++;
    for (i = 0; i < h->n_rows; i++)
        start[i + 1] += start[i];
    h->values = sw_calloc(h->n_entries + 1, sizeof(sw_wandb_value));
    for (i = 0; i < h->n_entries; i++) {
        const entry *e = &h->entries[i];
        sw_wandb_row *r = &h->rows[e->row];
        sw_wandb_value *v = &h->values[start[e->row]];
        for (k = 0; k < r->n_values && v[k].name != h->names[e->name]; k++)
            ;
        v[k] = (sw_wandb_value){h->names[e->name], e->has_value, e->value};
        r->n_values += k == r->n_values;
    }
    for (i = 0; i < h->n_rows; i++)
        h->rows[i].values = &h->values[start[i]];
    free(start);
}

static int read_history(sw_store *st, const char *run_id, history *h)
{
    int error = sw_store_metric_rows(st, run_id, on_metric_row, h);

    if (error == SW_OK)
        lay_out(h);
    return error;
}

/* ---- a run, as the exporter sees it ------------------------------------ */

typedef struct {
    sw_store *st;
    const sw_export_opts *o;
    sw_wandb *w;
    char *dest;     /* "BASE/ENTITY/PROJECT" */
    char *sweep_id; /* ours */
    char *remote;   /* W&B's sweep id */
    char *program, *host;
    sw_export_stats *stats;
    sw_export_rec rec;     /* the run being exported */
    const char *end_state; /* its state, when it has ended */
    char *labels;          /* its tags and note as JSON, to record once sent */
    int64_t run_rows;      /* of the run being exported, sent so far */
    double shift;          /* added to every time: a simulated sweep's
                              virtual clock runs ahead of the wall's, and
                              W&B would show it in the future; it is moved
                              back to end by the export, durations kept */
    double last_draw;
    size_t done, total;
} exporter;

static double now_mono(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void draw(exporter *x, bool final)
{
    double now = now_mono();

    if (!x->o->progress || (!final && now < x->last_draw + PROGRESS_S))
        return;
    x->last_draw = now;
    fprintf(stderr, "\r\033[Kexport: %zu/%zu runs, %lld history rows sent%s",
            x->done, x->total, (long long)(x->stats->rows + x->run_rows),
            final ? "\n" : "");
    fflush(stderr);
}

static const char *str_member(const sw_value *v, const char *key)
{
    const sw_value *x = sw_value_map_get(v, key);

    return x && x->type == SW_STR ? x->u.s : NULL;
}

/* The exit code W&B's SDK sends for a run W&B stopped: its stop checker
 * (wandb/sdk/lib/run_stopping.py) sees the run's `stopped` flag and
 * interrupts the script (interrupt.interrupt_main: a KeyboardInterrupt),
 * which ExitHooks.exc_handler (wandb/sdk/lib/exit_hooks.py) records as
 * 255, the code Run._atexit_cleanup then sends in the run's end. */
#define WANDB_STOPPED_EXIT 255

/* How W&B shows our run states: its end, exit code and a tag. A stopped
 * run (by a stopping rule or by hand) ends as W&B ends the runs it stops
 * itself: its `stopped` flag set (StopRun), then its end with the SDK's
 * exit code for it; W&B shows it killed. */
static void end_of(const sw_run_rec *r, sw_wandb_run *run)
{
    run->ended = r->state == SW_RUN_FINISHED || r->state == SW_RUN_FAILED ||
                 r->state == SW_RUN_STOPPED || r->state == SW_RUN_CANCELED;
    run->exit_code = 0;
    if (r->state == SW_RUN_FAILED || r->state == SW_RUN_CANCELED)
        run->exit_code = r->has_exit && r->exit_code != 0 ? r->exit_code : 1;
    run->stopped = r->state == SW_RUN_STOPPED;
    if (run->stopped)
        run->exit_code = WANDB_STOPPED_EXIT;
    if (r->state == SW_RUN_STOPPED || r->state == SW_RUN_CANCELED)
        run->tag = sw_run_state_name(r->state);
}

/* The run's plain data; `git` (parsed, may be NULL) owns the strings it
 * lends. */
static void run_of(const exporter *x, const sw_run_rec *r, const sw_value *git,
                   const history *h, sw_wandb_run *run)
{
    const char *patch = str_member(git, "patch");

    memset(run, 0, sizeof(*run));
    run->id = r->id;
    run->sweep = x->remote;
    run->group = x->sweep_id;
    run->params = r->params;
    run->commit = r->git_commit;
    run->repo = str_member(git, "remote");
    run->program = x->program;
    run->host = x->host;
    run->patch = patch && access(patch, R_OK) == 0 ? patch : NULL;
    run->argv = r->argv;
    run->started_at =
        (r->created_at > 0 ? r->created_at : r->started_at) + x->shift;
    run->pbt = r->has_member;
    run->member = r->member;
    run->parent = r->parent;
    run->parent_iter = r->parent_iter;
    end_of(r, run);
    run->rows = h->rows;
    run->n_rows = h->n_rows;
    run->summary = h->summary;
    run->n_summary = h->n_summary;
}

/* The run's tags and note as one JSON text: what an export records as
 * sent, to send them again when they change (the caller frees). */
static char *labels_json(const sw_labels *l)
{
    sw_value *v = sw_value_map(), *tags = sw_value_list();
    sw_buf b = SW_BUF_INIT;

    for (size_t i = 0; i < l->n_tags; i++)
        sw_value_list_push(tags, sw_value_str(l->tags[i]));
    sw_value_map_set(v, "tags", tags);
    sw_value_map_set(v, "notes",
                     l->note ? sw_value_str(l->note) : sw_value_null());
    sw_value_write_json(&b, v, false);
    sw_value_free(v);
    return sw_buf_detach(&b);
}

/* What earlier exports sent of the run, as the exporter's mark; `labels`
 * is what its labels are now. */
static sw_wandb_mark mark_of(const sw_export_rec *rec, const sw_run_rec *r,
                             const char *labels)
{
    sw_wandb_mark m = {0, -1, false, false, false, 0, 0, false};

    m.labels = rec->labels && strcmp(rec->labels, labels) == 0;
    m.history = rec->history;
    m.summary = rec->summary;
    m.ended =
        rec->state && strcmp(rec->state, sw_run_state_name(r->state)) == 0;
    m.patch = rec->files && strstr(rec->files, "diff.patch") != NULL;
    m.meta = rec->files && strstr(rec->files, "wandb-metadata.json") != NULL;
    return m;
}

/* The exporter's callback: records the run's new mark. */
static int on_mark(void *ctx, const sw_wandb_mark *m)
{
    exporter *x = ctx;
    sw_export_rec *rec = &x->rec;
    int error = SW_OK;

    x->run_rows = m->rows_sent;
    if (!x->o->wandb.dry_run) {
        rec->history = m->history;
        rec->summary = m->summary;
        free(rec->files);
        rec->files =
            m->meta || m->patch
                ? sw_aprintf("%s%s%s", m->meta ? "wandb-metadata.json" : "",
                             m->meta && m->patch ? " " : "",
                             m->patch ? "diff.patch" : "")
                : NULL;
        if (m->labels && x->labels) {
            free(rec->labels);
            rec->labels = sw_strdup(x->labels);
        }
        if (m->ended && x->end_state) { /* the state whose end was sent */
            free(rec->state);
            rec->state = sw_strdup(x->end_state);
        }
        rec->exported_at = (double)time(NULL);
        error = sw_store_put_export(x->st, rec);
    }
    draw(x, false);
    return error;
}

static int export_run(exporter *x, const sw_run_rec *r)
{
    history h = {.shift = x->shift};
    sw_value *git = NULL;
    sw_labels labels = {NULL, 0, NULL};
    sw_wandb_run run;
    sw_wandb_mark m;
    char name[9];
    int error;

    if (r->git && sw_json_parse(&git, r->git, strlen(r->git)) != SW_OK)
        git = NULL;
    error = sw_store_get_export(x->st, TARGET, x->dest, x->sweep_id, r->id,
                                &x->rec);
    if (error == SW_ENOTFOUND) {
        x->rec.target = sw_strdup(TARGET);
        x->rec.dest = sw_strdup(x->dest);
        x->rec.sweep_id = sw_strdup(x->sweep_id);
        x->rec.run_id = sw_strdup(r->id);
        sw_wandb_run_name(name, r->id);
        x->rec.remote_id = sw_strdup(name);
        x->stats->new_runs++;
        error = SW_OK;
    }
    if (error == SW_OK)
        error = read_history(x->st, r->id, &h);
    if (error == SW_OK)
        error = sw_store_run_labels(x->st, r->id, &labels);
    if (error == SW_OK) {
        run_of(x, r, git, &h, &run);
        run.tags = labels.tags;
        run.n_tags = labels.n_tags;
        run.notes = labels.note;
        x->labels = labels_json(&labels);
        m = mark_of(&x->rec, r, x->labels);
        if (x->o->resend)
            m = (sw_wandb_mark){0, -1, false, false, false, 0, 0, false};
        x->run_rows = 0;
        x->stats->sent += !sw_wandb_run_done(&run, &m);
        x->end_state = run.ended ? sw_run_state_name(r->state) : NULL;
        if (!sw_wandb_run_done(&run, &m))
            error = sw_wandb_export_run(x->w, &run, &m, on_mark, x);
        x->stats->rows += m.rows_sent;
    }
    x->run_rows = 0;
    free(x->labels);
    x->labels = NULL;
    sw_labels_dispose(&labels);
    sw_export_rec_dispose(&x->rec);
    sw_value_free(git);
    history_dispose(&h);
    return error;
}

/* ---- the sweep --------------------------------------------------------- */

/* The sweep's own record: *rec holds it, found or new. */
static int sweep_rec(exporter *x, sw_export_rec *rec)
{
    int error =
        sw_store_get_export(x->st, TARGET, x->dest, x->sweep_id, NULL, rec);

    if (error != SW_ENOTFOUND)
        return error;
    rec->target = sw_strdup(TARGET);
    rec->dest = sw_strdup(x->dest);
    rec->sweep_id = sw_strdup(x->sweep_id);
    return SW_OK;
}

static int put_sweep_rec(exporter *x, sw_export_rec *rec)
{
    if (x->o->wandb.dry_run)
        return SW_OK;
    rec->exported_at = (double)time(NULL);
    return sw_store_put_export(x->st, rec);
}

/* Creates the W&B sweep the first time; x->remote gets its id. */
static int open_sweep(exporter *x, const sw_sweep_rec *s)
{
    sw_export_rec rec;
    int error = sweep_rec(x, &rec);

    if (error == SW_OK && x->o->resend) {
        free(rec.remote_id);
        free(rec.remote_node);
        free(rec.state);
        rec.remote_id = rec.remote_node = rec.state = NULL;
    }
    if (error == SW_OK && !rec.remote_id) {
        x->stats->new_sweep = true;
        error = sw_wandb_upsert_sweep(x->w, NULL, s->config,
                                      s->name ? s->name : s->id, NULL,
                                      &rec.remote_id, &rec.remote_node);
        if (error == SW_OK)
            error = put_sweep_rec(x, &rec);
    }
    if (error == SW_OK)
        x->remote = sw_strdup(rec.remote_id);
    sw_export_rec_dispose(&rec);
    return error;
}

/* Marks the W&B sweep FINISHED once ours has ended, once. */
static int close_sweep(exporter *x, const sw_sweep_rec *s)
{
    sw_export_rec rec;
    int error;

    if (!sw_sweep_state_is(s->state, SW_SWEEP_FINISHED) &&
        !sw_sweep_state_is(s->state, SW_SWEEP_CANCELED))
        return SW_OK;
    if ((error = sweep_rec(x, &rec)) == SW_OK &&
        (!rec.state || strcmp(rec.state, "FINISHED") != 0)) {
        error = sw_wandb_upsert_sweep(
            x->w, rec.remote_node ? rec.remote_node : "dry-run", s->config,
            s->name ? s->name : s->id, "FINISHED", NULL, NULL);
        free(rec.state);
        rec.state = sw_strdup("FINISHED");
        if (error == SW_OK)
            error = put_sweep_rec(x, &rec);
    }
    sw_export_rec_dispose(&rec);
    return error;
}

/* ---- which runs -------------------------------------------------------- */

/* A run that never started has nothing to show in W&B. */
static bool started(const sw_run_rec *r)
{
    return r->attempts > 0 || r->state == SW_RUN_RUNNING;
}

/* Whether `r` is one of the runs asked for ("3f2a9c01-7", or "7"). */
static bool asked(const sw_export_opts *o, const sw_run_rec *r,
                  const char *sweep_id)
{
    if (!o->runs)
        return true;
    for (size_t i = 0; i < o->n_runs; i++) {
        const char *a = o->runs[i];
        size_t n = strlen(sweep_id);
        if (strcmp(a, r->id) == 0 ||
            (strspn(a, "0123456789") == strlen(a) &&
             strncmp(r->id, sweep_id, n) == 0 && r->id[n] == '-' &&
             strcmp(r->id + n + 1, a) == 0))
            return true;
    }
    return false;
}

/* Every run asked for must be one of the sweep's: checked before
 * anything is sent. */
static int check_asked(const sw_export_opts *o, const sw_sweep_rec *s,
                       const sw_run_rec *runs, size_t n)
{
    for (size_t i = 0; o->runs && i < o->n_runs; i++) {
        sw_export_opts one = *o;
        size_t k;
        one.runs = &o->runs[i];
        one.n_runs = 1;
        for (k = 0; k < n && !asked(&one, &runs[k], s->id); k++)
            ;
        if (k == n)
            return sw_error_set(SW_EINVALID, "no run '%s' in sweep %s",
                                o->runs[i], s->id);
    }
    return SW_OK;
}

/* ---- the whole export -------------------------------------------------- */

/* The entity and project: the options, else the sweep file's, else
 * WANDB_ENTITY and WANDB_PROJECT; a dry run, which sends nothing, says
 * ENTITY and PROJECT for those it was not given. */
static int destination(sw_wandb_opts *w, const sw_spec *spec, bool *stand_in)
{
    const char *e = getenv("WANDB_ENTITY"), *p = getenv("WANDB_PROJECT");

    if (!w->entity)
        w->entity = spec && spec->entity ? spec->entity : e && *e ? e : NULL;
    if (!w->project)
        w->project = spec && spec->project ? spec->project : p && *p ? p : NULL;
    *stand_in = w->dry_run && (!w->entity || !w->project);
    if (w->dry_run && !w->entity)
        w->entity = "ENTITY";
    if (w->dry_run && !w->project)
        w->project = "PROJECT";
    if (!w->entity || !w->project)
        return sw_error_set(
            SW_EUSAGE,
            "the W&B %s is required: --%s, the sweep file's "
            "`%s`, or WANDB_%s",
            w->entity ? "project" : "entity", w->entity ? "project" : "entity",
            w->entity ? "project" : "entity", w->entity ? "PROJECT" : "ENTITY");
    return SW_OK;
}

static int export_runs(exporter *x, const sw_run_rec *runs, size_t n)
{
    int error = SW_OK;

    for (size_t i = 0; i < n; i++)
        x->total += started(&runs[i]) && asked(x->o, &runs[i], x->sweep_id);
    x->stats->runs = (int64_t)x->total;
    for (size_t i = 0; i < n && error == SW_OK; i++) {
        if (!started(&runs[i]) || !asked(x->o, &runs[i], x->sweep_id))
            continue;
        error = export_run(x, &runs[i]);
        x->done += error == SW_OK;
        draw(x, false);
    }
    return error;
}

/* How far back a simulated sweep's times go so that its last one is no
 * later than now; 0 for any other sweep. */
static double simulated_shift(const sw_sweep_rec *s, const sw_run_rec *runs,
                              size_t n)
{
    double latest = 0, now = (double)time(NULL);
    size_t i;

    if (!s->backend || strcmp(s->backend, "sim") != 0)
        return 0;
    for (i = 0; i < n; i++) {
        latest = runs[i].ended_at > latest ? runs[i].ended_at : latest;
        latest = runs[i].started_at > latest ? runs[i].started_at : latest;
    }
    return latest > now ? now - latest : 0;
}

static void set_host(exporter *x, const sw_sweep_rec *s)
{
    char host[256];

    if ((!s->backend || strcmp(s->backend, "local") == 0) &&
        gethostname(host, sizeof(host)) == 0) {
        host[sizeof(host) - 1] = 0;
        x->host = sw_strdup(host);
    }
}

static int run_export(exporter *x, const sw_sweep_rec *s, sw_spec *spec)
{
    sw_wandb_opts wo = x->o->wandb;
    sw_run_rec *runs = NULL;
    size_t n = 0;
    int error;

    if ((error = destination(&wo, spec, &x->stats->placeholder)) < 0 ||
        (error = sw_store_list_runs(x->st, s->id, &runs, &n)) < 0 ||
        (error = check_asked(x->o, s, runs, n)) < 0 ||
        (error = sw_wandb_open(&x->w, &wo)) < 0)
        goto done;
    x->dest =
        sw_aprintf("%s/%s/%s", sw_wandb_base_url(x->w), wo.entity, wo.project);
    x->sweep_id = sw_strdup(s->id);
    x->program = spec && spec->program ? sw_strdup(spec->program) : NULL;
    set_host(x, s);
    x->shift = simulated_shift(s, runs, n);
    if ((error = open_sweep(x, s)) == SW_OK &&
        (error = export_runs(x, runs, n)) == SW_OK)
        error = close_sweep(x, s);
    x->stats->remote_id = x->remote ? sw_strdup(x->remote) : NULL;
    x->stats->sweep_url =
        x->remote ? sw_wandb_sweep_url(x->w, x->remote) : NULL;
done:
    x->stats->requests = x->w ? sw_wandb_requests(x->w) : 0;
    if (x->w)
        sw_wandb_dry_totals(x->w, &x->stats->bytes, &x->stats->files);
    x->stats->dest = x->dest ? sw_strdup(x->dest) : NULL;
    for (size_t i = 0; i < n; i++)
        sw_run_rec_dispose(&runs[i]);
    free(runs);
    return error;
}

int sw_export_wandb(sw_store *st, const sw_export_opts *o,
                    sw_export_stats *stats)
{
    exporter x = {.st = st, .o = o, .stats = stats};
    sw_sweep_rec s;
    sw_spec *spec = NULL;
    sw_diags diags;
    int error;

    memset(stats, 0, sizeof(*stats));
    if ((error = sw_store_get_sweep(st, o->sweep, &s)) < 0)
        return error;
    sw_diags_init(&diags, s.file);
    if (sw_spec_parse(&spec, s.file, s.config, strlen(s.config), &diags) < 0)
        spec = NULL; /* it was valid when the sweep ran; be lenient */
    sw_diags_dispose(&diags);
    sw_error_clear();
    error = run_export(&x, &s, spec);
    if (x.total)
        draw(&x, true);
    sw_wandb_close(x.w);
    free(x.dest);
    free(x.sweep_id);
    free(x.remote);
    free(x.program);
    free(x.host);
    sw_spec_free(spec);
    sw_sweep_rec_dispose(&s);
    return error;
}

void sw_export_stats_dispose(sw_export_stats *stats)
{
    if (!stats)
        return;
    free(stats->sweep_url);
    free(stats->remote_id);
    free(stats->dest);
    memset(stats, 0, sizeof(*stats));
}
