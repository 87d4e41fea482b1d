/*
 * report_load.c - the rows `sweep report` computes from, read from the
 * store: a sweep's runs, every attempt of each, its metric's values and
 * the inventory it packed on, as plain data (report.h).
 *
 * Attempts come from the attempts table (schema 10). A run's last attempt
 * that has no row there (a store from before the table, or an attempt
 * still running) is made from the run's own row, its GPUs counted from
 * runs.gpus. How much of a GPU a device is (a MIG slice is its slices'
 * fraction of its GPU) comes from the declared inventory, else from
 * what the attempts table recorded of it.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "orchestrator/report.h"
#include "sweeps/diag.h"
#include "sweeps/gpus.h"
#include "sweeps/json.h"
#include "sweeps/spec.h"

/* How much of a GPU each known device is. */
typedef struct {
    char **keys;
    double *frac;
    size_t n, cap, cap2;
} fractions;

static void frac_set(fractions *f, const char *key, double v)
{
    size_t i;

    for (i = 0; i < f->n; i++)
        if (strcmp(f->keys[i], key) == 0)
            return;
    sw_grow(&f->keys, &f->cap, f->n + 1, sizeof(*f->keys));
    sw_grow(&f->frac, &f->cap2, f->n + 1, sizeof(*f->frac));
    f->keys[f->n] = sw_strdup(key);
    f->frac[f->n++] = v;
}

/* A device's fraction of its GPU: known, else 1 for a whole GPU and the
 * smallest slice for an unknown MIG slice. */
static double frac_get(const fractions *f, const char *key)
{
    size_t i;

    for (i = 0; i < f->n; i++)
        if (strcmp(f->keys[i], key) == 0)
            return f->frac[i];
    return strncmp(key, "MIG-", 4) == 0 || strchr(key, '/')
               ? 1.0 / SW_GPUS_MAX_SLICES
               : 1.0;
}

static void frac_dispose(fractions *f)
{
    size_t i;

    for (i = 0; i < f->n; i++)
        free(f->keys[i]);
    free(f->keys);
    free(f->frac);
}

/* The sweep's file as recorded, read again; NULL when it no longer
 * reads. */
static sw_spec *spec_of(const sw_sweep_rec *s)
{
    sw_spec *spec = NULL; /* stays NULL on failure */
    sw_diags diags;

    sw_diags_init(&diags, s->file);
    if (s->config)
        (void)sw_spec_parse(&spec, s->file, s->config, strlen(s->config),
                            &diags);
    sw_diags_dispose(&diags);
    return spec;
}

/* The inventory declared for the sweep (`--gpus`, else the file's
 * `gpus:`), into *inv; false when there is none. */
static bool declared(const sw_sweep_rec *s, const sw_spec *spec,
                     sw_gpu_inventory *inv)
{
    const char *text = s->gpus ? s->gpus : spec ? spec->gpus : NULL;

    return text && sw_gpus_declare(inv, text) == SW_OK && inv->n_devices > 0;
}

/* The declared GPUs, each whole: a GPU in MIG mode is held whole
 * however it is split. *unused is the part of them no slice covers (in
 * GPUs: 2/7 for a 3g + 2 x 1g split). */
static double declared_gpus(const sw_gpu_inventory *inv, fractions *f,
                            double *unused)
{
    double v, *sliced = sw_calloc(inv->n_gpus + 1, sizeof(*sliced));
    char *key;
    size_t i;

    *unused = 0;
    for (i = 0; i < inv->n_devices; i++) {
        v = inv->devices[i].mig >= 0
                ? (double)inv->devices[i].slices / SW_GPUS_MAX_SLICES
                : 1.0;
        key = sw_gpus_device_key(inv, i);
        frac_set(f, key, v);
        free(key);
        if (inv->devices[i].mig >= 0 && inv->devices[i].gpu < inv->n_gpus)
            sliced[inv->devices[i].gpu] += v;
    }
    for (i = 0; i < inv->n_gpus; i++)
        if (inv->gpus[i].mig)
            *unused += fmax(0, 1 - sliced[i]);
    free(sliced);
    return (double)inv->n_gpus;
}

/* The parsed runs.gpus JSON in *out (the caller frees it), its share in
 * *share; false when it is not one (a list of device names and a
 * share). */
/* The list of device names of a parsed runs.gpus; NULL if not one. */
static const sw_value *devs_of(const sw_value *v)
{
    const sw_value *d = sw_value_map_get(v, "devices");
    size_t i;

    if (!d || d->type != SW_LIST)
        return NULL;
    for (i = 0; i < d->u.list.len; i++)
        if (d->u.list.items[i]->type != SW_STR)
            return NULL;
    return d;
}

static bool grant_devices(const char *json, double *share, sw_value **out)
{
    sw_value *v = NULL, *sh;

    *out = NULL;
    if (!json || sw_json_parse(&v, json, strlen(json)) != SW_OK)
        return false;
    sh = sw_value_map_get(v, "share");
    if (!sh || !sw_value_number(sh, share) || !devs_of(v)) {
        sw_value_free(v);
        return false;
    }
    *out = v;
    return true;
}

/* What an attempt row says of its devices' fractions. */
static void learn(fractions *f, const sw_attempt_rec *a)
{
    const sw_value *devs;
    sw_value *v;
    double share;
    size_t i, n;

    if (!grant_devices(a->gpus, &share, &v))
        return;
    devs = devs_of(v);
    n = devs->u.list.len;
    for (i = 0; i < n && share > 0 && a->gpu > 0; i++)
        frac_set(f, devs->u.list.items[i]->u.s,
                 a->gpu / ((double)n * fmin(1, share)));
    sw_value_free(v);
}

static double held(const fractions *f, const char *json)
{
    const sw_value *devs;
    sw_value *v;
    double share, total = 0;
    size_t i;

    if (!grant_devices(json, &share, &v))
        return 0;
    devs = devs_of(v);
    for (i = 0; i < devs->u.list.len; i++)
        total += frac_get(f, devs->u.list.items[i]->u.s) * fmin(1, share);
    sw_value_free(v);
    return total;
}

static sw_report_outcome outcome_parse(const char *s)
{
    sw_report_outcome o;

    for (o = SW_ATT_FINISHED; o < SW_ATT_RUNNING; o++)
        if (s && strcmp(s, sw_report_outcome_name(o)) == 0)
            return o;
    return SW_ATT_FAILED;
}

/* How a run's last attempt ended, from the run's row. */
static sw_report_outcome outcome_of_run(const sw_run_rec *r)
{
    const char *why = r->reason ? r->reason : "";

    switch (r->state) {
    case SW_RUN_FINISHED:
        return SW_ATT_FINISHED;
    case SW_RUN_STOPPED:
        return SW_ATT_STOPPED;
    case SW_RUN_CANCELED:
        return SW_ATT_CANCELED;
    case SW_RUN_RUNNING:
        return SW_ATT_RUNNING;
    default:
        break;
    }
    if (strncmp(why, "timeout", 7) == 0)
        return SW_ATT_TIMEOUT;
    if (sw_reason_is_lost(why))
        return SW_ATT_LOST;
    if (strncmp(why, "disk:", 5) == 0)
        return SW_ATT_DISK;
    if (strncmp(why, "cannot start", 12) == 0)
        return SW_ATT_NOT_STARTED;
    return SW_ATT_FAILED;
}

static sw_report_attempt *add_attempt(sw_report_data *d, size_t *cap)
{
    sw_report_attempt *a;

    sw_grow(&d->attempts, cap, d->n_attempts + 1, sizeof(*d->attempts));
    a = &d->attempts[d->n_attempts++];
    memset(a, 0, sizeof(*a));
    return a;
}

/* Run `run`'s attempts: its rows in `rows` from *next on, then its last
 * attempt from its own row when the table has none of it. */
static void run_attempts(sw_report_data *d, size_t *cap, size_t run,
                         const sw_run_rec *r, const sw_attempt_rec *rows,
                         size_t n_rows, size_t *next, const fractions *f,
                         double now)
{
    bool has_last = false;
    sw_report_attempt *a;

    for (; *next < n_rows && strcmp(rows[*next].run_id, r->id) == 0;
         (*next)++) {
        const sw_attempt_rec *x = &rows[*next];

        a = add_attempt(d, cap);
        a->run = run;
        a->start = x->started_at;
        a->end = x->ended_at > 0 ? x->ended_at : x->started_at;
        a->outcome = outcome_parse(x->outcome);
        a->gpu = x->gpu;
        a->devices = x->gpus ? sw_strdup(x->gpus) : NULL;
        a->has_first_step = x->has_first_step;
        a->first_step = x->first_step;
        a->has_queued = x->has_queued;
        a->queued = x->queued_seconds;
        has_last |= x->attempt == r->attempts;
    }
    /* a job still waiting in Slurm's queue has not started: no run time,
     * no GPU (its started_at is its submission) */
    if (has_last || !(r->started_at > 0) || r->pending_reason)
        return;
    a = add_attempt(d, cap);
    a->run = run;
    a->start = r->started_at;
    a->outcome = outcome_of_run(r);
    a->end = r->ended_at > 0                ? r->ended_at
             : a->outcome == SW_ATT_RUNNING ? fmax(now, r->started_at)
                                            : r->started_at;
    a->gpu = held(f, r->gpus);
    a->devices = r->gpus ? sw_strdup(r->gpus) : NULL;
    a->has_queued = r->has_queued;
    a->queued = r->queued_seconds;
}

typedef struct {
    sw_report_data *d;
    const sw_run_rec *runs;
    size_t cap;
} points_ctx;

/* Run ids are "<sweep>-<idx + 1>"; runs are listed by idx. */
static int add_point(void *ctx, const char *run_id, int64_t step,
                     bool has_value, double value, double time)
{
    points_ctx *c = ctx;
    const char *dash = strrchr(run_id, '-');
    size_t lo = 0, hi = c->d->n_runs, mid;
    sw_report_point *p;
    int64_t idx;

    if (!has_value || !isfinite(value) || !dash)
        return 0;
    idx = strtoll(dash + 1, NULL, 10) - 1;
    while (lo < hi) {
        mid = lo + (hi - lo) / 2;
        if (c->runs[mid].idx < idx)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == c->d->n_runs || strcmp(c->runs[lo].id, run_id) != 0)
        return 0;
    sw_grow(&c->d->points, &c->cap, c->d->n_points + 1, sizeof(*p));
    p = &c->d->points[c->d->n_points++];
    p->run = lo;
    p->step = step;
    p->value = value;
    p->time = time;
    return 0;
}

/* The GPUs that were sampled, by NVML index: how much of each the
 * sampled MIG slices cover (a whole GPU: 1). */
typedef struct {
    const fractions *f;
    int64_t *gpu;
    double *covered;
    bool *mig;
    size_t n, cap, cap2, cap3;
} sampled_ctx;

static int add_sampled(void *ctx, const char *device, int64_t gpu, bool mig)
{
    sampled_ctx *c = ctx;
    size_t i;

    for (i = 0; i < c->n && c->gpu[i] != gpu; i++)
        ;
    if (i == c->n) {
        sw_grow(&c->gpu, &c->cap, c->n + 1, sizeof(*c->gpu));
        sw_grow(&c->covered, &c->cap2, c->n + 1, sizeof(*c->covered));
        sw_grow(&c->mig, &c->cap3, c->n + 1, sizeof(*c->mig));
        c->gpu[i] = gpu, c->covered[i] = 0, c->mig[i] = mig;
        c->n++;
    }
    c->covered[i] += mig ? frac_get(c->f, device) : 1;
    return 0;
}

/* Each sampled GPU whole, and in *unused what its slices left over. */
static double sampled_gpus(sampled_ctx *c, double *unused)
{
    size_t i;

    *unused = 0;
    for (i = 0; i < c->n; i++)
        if (c->mig[i])
            *unused += fmax(0, 1 - c->covered[i]);
    free(c->gpu);
    free(c->covered);
    free(c->mig);
    return (double)c->n;
}

static int load_rows(sw_store *st, const sw_sweep_rec *s, const sw_spec *spec,
                     double now, sw_report_data *d)
{
    sw_attempt_rec *rows = NULL;
    sw_run_rec *runs = NULL;
    sw_gpu_inventory inv;
    fractions f = {0};
    size_t n_rows = 0, n = 0, i, next = 0, cap = 0;
    points_ctx pc = {d, NULL, 0};
    sampled_ctx sc = {&f, NULL, NULL, NULL, 0, 0, 0, 0};
    double unused = 0;
    bool decl;
    int error;

    sw_gpus_init(&inv);
    decl = declared(s, spec, &inv);
    d->gpus = decl ? declared_gpus(&inv, &f, &d->mig_unused) : -1;
    error = sw_store_list_runs(st, s->id, &runs, &n);
    if (!error)
        error = sw_store_list_attempts(st, s->id, &rows, &n_rows);
    for (i = 0; !error && i < n_rows; i++)
        learn(&f, &rows[i]);
    if (!error)
        error = sw_store_sampled_devices(st, s->id, add_sampled, &sc, &d->util);
    if (!error && !decl && sc.n > 0)
        d->gpus = sampled_gpus(&sc, &d->mig_unused);
    else
        (void)sampled_gpus(&sc, &unused);
    d->runs = sw_calloc(n + 1, sizeof(*d->runs));
    for (i = 0; !error && i < n; i++) {
        d->runs[i].id = sw_strdup(runs[i].id);
        d->runs[i].state = runs[i].state;
        d->runs[i].replaced = runs[i].state == SW_RUN_STOPPED &&
                              sw_reason_is_replaced(runs[i].reason);
        d->runs[i].target = runs[i].state == SW_RUN_CANCELED &&
                            runs[i].reason &&
                            strcmp(runs[i].reason, "target reached") == 0;
        d->runs[i].has_value = runs[i].has_value && isfinite(runs[i].value);
        d->runs[i].value = runs[i].value;
        d->n_runs++;
        run_attempts(d, &cap, i, &runs[i], rows, n_rows, &next, &f, now);
    }
    pc.runs = runs;
    if (!error && s->metric)
        error = sw_store_sweep_points(st, s->id, s->metric, add_point, &pc);
    for (i = 0; i < n; i++)
        sw_run_rec_dispose(&runs[i]);
    for (i = 0; i < n_rows; i++)
        sw_attempt_rec_dispose(&rows[i]);
    free(runs);
    free(rows);
    frac_dispose(&f);
    sw_gpus_dispose(&inv);
    return error;
}

int sw_report_load(sw_store *st, const char *key, double price, double now,
                   sw_report_data *out)
{
    sw_sweep_rec s;
    sw_spec *spec = NULL;
    int error;

    memset(out, 0, sizeof(*out));
    memset(&s, 0, sizeof(s));
    out->price = price;
    out->util = NAN;
    error =
        key ? sw_store_get_sweep(st, key, &s) : sw_store_latest_sweep(st, &s);
    if (error == SW_ENOTFOUND && !key)
        error = sw_error_set(SW_ENOTFOUND, "the store has no sweep yet");
    if (!error) {
        spec = spec_of(&s);
        if (spec)
            out->budget = spec->budget;
        out->sweep_id = sw_strdup(s.id);
        out->metric = s.metric ? sw_strdup(s.metric) : NULL;
        out->maximize = s.goal && strcmp(s.goal, "maximize") == 0;
        error = load_rows(st, &s, spec, now, out);
    }
    sw_spec_free(spec);
    sw_sweep_rec_dispose(&s);
    if (error)
        sw_report_data_dispose(out);
    return error;
}
