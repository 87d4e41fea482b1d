/*
 * report.c - the figures of `sweep report`, computed from plain rows:
 * a sweep's runs, every attempt of each (when it ran, how it ended, the
 * GPUs it held) and the values of its metric as they arrived.
 *
 * Pure: no store, no clock; the same rows give the same figures. The
 * definitions are those of docs/report.md, which is the contract; a
 * figure that is not defined for a sweep (no GPU, no metric) is NaN,
 * written null.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "orchestrator/report.h"

const char *sw_report_outcome_name(sw_report_outcome o)
{
    if ((unsigned)o < SW_N_OUTCOMES)
        return sw_outcome_name((sw_outcome)o);
    return o == SW_ATT_RUNNING ? sw_run_state_name(SW_RUN_RUNNING) : "?";
}

void sw_report_data_dispose(sw_report_data *d)
{
    size_t i;

    if (!d)
        return;
    for (i = 0; i < d->n_runs; i++)
        free(d->runs[i].id);
    for (i = 0; i < d->n_attempts; i++)
        free(d->attempts[i].devices);
    free(d->runs);
    free(d->attempts);
    free(d->points);
    free(d->sweep_id);
    free(d->metric);
    memset(d, 0, sizeof(*d));
}

static double duration(const sw_report_attempt *a)
{
    return a->end > a->start ? a->end - a->start : 0;
}

/* An attempt whose time bought nothing: it failed, or the machinery
 * (its supervisor, the disk) failed it. */
static bool failure(sw_report_outcome o)
{
    return o == SW_ATT_FAILED || o == SW_ATT_TIMEOUT || o == SW_ATT_LOST ||
           o == SW_ATT_NOT_STARTED || o == SW_ATT_DISK;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

    return (x > y) - (x < y);
}

/* The points of each run: points[order[first[run] .. first[run + 1])],
 * in the order they arrived. */
typedef struct {
    const sw_report_data *d;
    size_t *order, *first;
} by_run;

static void index_points(by_run *ix, const sw_report_data *d)
{
    size_t i, *fill;

    ix->d = d;
    ix->order = sw_calloc(d->n_points + 1, sizeof(*ix->order));
    ix->first = sw_calloc(d->n_runs + 2, sizeof(*ix->first));
    fill = sw_calloc(d->n_runs + 1, sizeof(*fill));
    for (i = 0; i < d->n_points; i++)
        if (d->points[i].run < d->n_runs)
            ix->first[d->points[i].run + 1]++;
    for (i = 0; i < d->n_runs; i++)
        ix->first[i + 1] += ix->first[i];
    for (i = 0; i < d->n_points; i++) {
        size_t run = d->points[i].run;

        if (run < d->n_runs)
            ix->order[ix->first[run] + fill[run]++] = i;
    }
    free(fill);
}

static void index_dispose(by_run *ix)
{
    free(ix->order);
    free(ix->first);
}

/* The k-th point of run `run` (k from 0 to its count). */
#define RUN_POINT(ix, run, k)                                                  \
    (&(ix)->d->points[(ix)->order[(ix)->first[run] + (k)]])
#define RUN_POINTS(ix, run) ((ix)->first[(run) + 1] - (ix)->first[run])

/* The iterations run `run` reported between t0 and t1 (inclusive): its
 * distinct steps of the metric, each value without a step counting as
 * one. */
static size_t iterations(const by_run *ix, size_t run, double t0, double t1)
{
    size_t i, n = 0, k = 0, bare = 0, np = RUN_POINTS(ix, run);
    int64_t *steps = malloc((np + 1) * sizeof(*steps));

    for (i = 0; i < np; i++) {
        const sw_report_point *p = RUN_POINT(ix, run, i);

        if (p->time < t0 || p->time > t1)
            continue;
        if (p->step < 0)
            bare++;
        else
            steps[n++] = p->step;
    }
    qsort(steps, n, sizeof(*steps), cmp_i64);
    for (i = 0; i < n; i++)
        k += i == 0 || steps[i] != steps[i - 1];
    free(steps);
    return k + bare;
}

typedef struct {
    double t, g; /* g < 0: an end */
} edge;

/* Ends before starts at the same time: an attempt holds [start, end). */
static int cmp_edge(const void *a, const void *b)
{
    const edge *x = a, *y = b;

    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    return (x->g > y->g) - (x->g < y->g);
}

/* The most GPUs held at once. */
static double peak_gpus(const sw_report_data *d)
{
    edge *e = malloc((2 * d->n_attempts + 1) * sizeof(*e));
    double held = 0, peak = 0;
    size_t i, n = 0;

    for (i = 0; i < d->n_attempts; i++) {
        const sw_report_attempt *a = &d->attempts[i];

        if (!(a->gpu > 0) || !(a->end > a->start))
            continue;
        e[n++] = (edge){a->start, a->gpu};
        e[n++] = (edge){a->end, -a->gpu};
    }
    qsort(e, n, sizeof(*e), cmp_edge);
    for (i = 0; i < n; i++) {
        held += e[i].g;
        peak = fmax(peak, held);
    }
    free(e);
    return peak;
}

static void totals(sw_report *r, const sw_report_data *d)
{
    size_t i;

    r->start = r->end = NAN;
    r->queue_seconds = NAN;
    for (i = 0; i < d->n_attempts; i++) {
        const sw_report_attempt *a = &d->attempts[i];

        if (a->has_queued)
            r->queue_seconds =
                (isnan(r->queue_seconds) ? 0 : r->queue_seconds) +
                fmax(0, a->queued);
        if (!(a->start > 0))
            continue;
        r->start = isnan(r->start) ? a->start : fmin(r->start, a->start);
        r->end = isnan(r->end) ? a->end : fmax(r->end, a->end);
        r->trial_seconds += duration(a);
        r->gpu_seconds_busy += duration(a) * a->gpu;
        r->failed_attempts += failure(a->outcome);
    }
    r->wall_seconds = isnan(r->start) ? 0 : fmax(0, r->end - r->start);
    r->gpus = fmax(d->gpus, peak_gpus(d)); /* a resume may add devices */
    r->gpu_seconds_capacity = r->gpus * r->wall_seconds;
    r->gpu_seconds_idle =
        fmax(0, r->gpu_seconds_capacity - r->gpu_seconds_busy);
    r->gpu_seconds_mig_unused =
        fmin(r->gpu_seconds_idle, fmax(0, d->mig_unused) * r->wall_seconds);
    r->occupancy = r->gpu_seconds_capacity > 0
                       ? r->gpu_seconds_busy / r->gpu_seconds_capacity
                       : NAN;
}

/* The index of run `run`'s last attempt; n_attempts when none. */
static size_t last_attempt(const sw_report_data *d, size_t run)
{
    size_t i, last = d->n_attempts;

    for (i = 0; i < d->n_attempts; i++)
        if (d->attempts[i].run == run)
            last = i;
    return last;
}

/* The first and last times run `run` reported between t0 and t1; false
 * when it reported fewer than two values there. */
static bool report_span(const by_run *ix, size_t run, double t0, double t1,
                        double *first, double *last)
{
    size_t i, n = 0, np = RUN_POINTS(ix, run);

    for (i = 0; i < np; i++) {
        const sw_report_point *p = RUN_POINT(ix, run, i);

        if (p->time < t0 || p->time > t1)
            continue;
        *first = n == 0 ? p->time : fmin(*first, p->time);
        *last = n == 0 ? p->time : fmax(*last, p->time);
        n++;
    }
    return n >= 2 && *last > *first;
}

/* A stopped run would have gone on to the finished runs' length
 * (`full` iterations) at the pace of its last attempt: the time between
 * its first and last reports over the iterations between them, so its
 * start-up (before the first report) is not counted as training. With
 * fewer than two reports, its duration over its iterations. */
static void saved(sw_report *r, const by_run *ix, size_t run, size_t full)
{
    const sw_report_data *d = ix->d;
    size_t last = last_attempt(d, run), done, k, i;
    const sw_report_attempt *a;
    double pace, spent = 0, more, t_first = 0, t_last = 0;

    done = iterations(ix, run, -INFINITY, INFINITY);
    if (last == d->n_attempts || done == 0 || done >= full)
        return;
    a = &d->attempts[last];
    k = iterations(ix, run, a->start, a->end);
    for (i = 0; i < d->n_attempts; i++)
        spent += d->attempts[i].run == run ? duration(&d->attempts[i]) : 0;
    if (k >= 2 && report_span(ix, run, a->start, a->end, &t_first, &t_last))
        pace = (t_last - t_first) / (double)(k - 1);
    else
        pace = k > 0 ? duration(a) / (double)k : spent / (double)done;
    more = (double)(full - done) * pace;
    r->trial_seconds_saved_by_stopping += more;
    r->gpu_seconds_saved_by_stopping += more * a->gpu;
}

static void stopping(sw_report *r, const by_run *ix)
{
    const sw_report_data *d = ix->d;
    size_t i, full = 0, n;

    for (i = 0; i < d->n_runs; i++) {
        if (d->runs[i].state != SW_RUN_FINISHED)
            continue;
        n = iterations(ix, i, -INFINITY, INFINITY);
        full = n > full ? n : full;
    }
    /* a run a PBT exploit replaced saved nothing: its place trained on,
     * in the run that took it */
    for (i = 0; i < d->n_runs && full > 0; i++)
        if (d->runs[i].state == SW_RUN_STOPPED && !d->runs[i].replaced)
            saved(r, ix, i, full);
}

/* How many of its reports the attempt after `a` made again before its
 * first new step, which it reported at `t`: the store keeps a step's
 * first value only, so a retry that went back to an earlier step (from
 * scratch, or from an older checkpoint) shows from its first new step on,
 * after the time the steps it did again took. Counted at `a`'s pace (its
 * time over its reports), rounded: 0 for a retry that resumed. */
static size_t redone(const by_run *ix, const sw_report_attempt *a,
                     const sw_report_attempt *next, double t)
{
    size_t np = RUN_POINTS(ix, a->run), k = 0, i;
    double last = a->start, m;

    for (i = 0; i < np; i++) {
        const sw_report_point *p = RUN_POINT(ix, a->run, i);

        if (p->step >= 0 && p->time >= a->start && p->time <= a->end) {
            k++;
            last = fmax(last, p->time);
        }
    }
    if (k == 0 || !(last > a->start))
        return 0;
    m = floor((t - next->start) / ((last - a->start) / (double)k) + 0.5) - 1;
    return m > 0 ? (size_t)m : 0;
}

/* The time of the last value attempt `a` reported of a step below
 * `first`, less `skip` of them (its start when there is none): until
 * then its work was kept by a next attempt that resumed at `first`. */
static double kept_before(const by_run *ix, const sw_report_attempt *a,
                          int64_t first, size_t skip)
{
    size_t np = RUN_POINTS(ix, a->run), below = 0, i;
    double kept = a->start;

    for (i = 0; i < np; i++) {
        const sw_report_point *p = RUN_POINT(ix, a->run, i);

        below += p->step >= 0 && p->step < first && p->time >= a->start &&
                 p->time <= a->end;
    }
    for (i = 0; i < np && below > skip; i++) {
        const sw_report_point *p = RUN_POINT(ix, a->run, i);

        if (p->step >= 0 && p->step < first && p->time >= a->start &&
            p->time <= a->end) {
            kept = fmax(kept, p->time); /* the first below - skip */
            below--;
        }
    }
    return fmin(kept, a->end);
}

/* Until when attempt `a` (of index ai) did work that the next attempt
 * of its run kept (kept_before()): the next one resumed at the first
 * step it reported, recorded in its attempts row (schema 11). Without
 * that record (older stores, an attempt adopted by a resumed `sweep`),
 * the first step the store kept of the next one, less the reports the
 * next one made again (redone(): an estimate). Its start when the next
 * one redid everything, or when there is no next one. */
static double kept_until(const by_run *ix, size_t ai)
{
    const sw_report_data *d = ix->d;
    const sw_report_attempt *a = &d->attempts[ai], *next = NULL;
    size_t np = RUN_POINTS(ix, a->run), i;
    int64_t first = -1;
    double t_first = 0;

    if (ai + 1 < d->n_attempts && d->attempts[ai + 1].run == a->run)
        next = &d->attempts[ai + 1];
    if (!next)
        return a->start;
    if (next->has_first_step)
        return kept_before(ix, a, next->first_step, 0);
    for (i = 0; i < np; i++) {
        const sw_report_point *p = RUN_POINT(ix, a->run, i);

        if (p->step >= 0 && p->time >= next->start && p->time <= next->end &&
            (first < 0 || p->step < first)) {
            first = p->step;
            t_first = p->time;
        }
    }
    if (first < 0)
        return a->start;
    return kept_before(ix, a, first, redone(ix, a, next, t_first));
}

static void failures(sw_report *r, const by_run *ix)
{
    const sw_report_data *d = ix->d;
    double lost;
    size_t i;

    for (i = 0; i < d->n_attempts; i++) {
        const sw_report_attempt *a = &d->attempts[i];

        if (!failure(a->outcome) || !(a->start > 0))
            continue;
        lost = fmax(0, a->end - kept_until(ix, i));
        r->trial_seconds_lost_to_failures += lost;
        r->gpu_seconds_lost_to_failures += lost * a->gpu;
    }
}

/* Whether run `a` ranks before run `b` as `sweep best` ranks them
 * (sw_store_best_runs): finished before stopped, then by value. */
static bool ranks_before(const sw_report_data *d, const sw_report_run *a,
                         const sw_report_run *b)
{
    if (a->state != b->state)
        return a->state == SW_RUN_FINISHED;
    return d->maximize ? a->value > b->value : a->value < b->value;
}

/* The best run's value (docs/metrics.md: a run's value is the last it
 * reported), and when it reported that value. */
static void best(sw_report *r, const sw_report_data *d)
{
    const sw_report_run *top = NULL, *run;
    size_t i, at = d->n_points;

    for (i = 0; d->metric && i < d->n_runs; i++) {
        run = &d->runs[i];
        if (run->has_value &&
            (run->state == SW_RUN_FINISHED || run->state == SW_RUN_STOPPED ||
             run->target) &&
            (!top || ranks_before(d, run, top)))
            top = run;
    }
    for (i = 0; top && i < d->n_points; i++)
        if (&d->runs[d->points[i].run] == top)
            at = i; /* its last report */
    if (!top) {
        r->best_value = r->time_to_best_seconds = NAN;
        return;
    }
    r->best_value = top->value;
    r->time_to_best_seconds =
        at < d->n_points ? d->points[at].time - r->start : NAN;
}

static void counts(sw_report *r, const sw_report_data *d)
{
    size_t i;

    r->runs = d->n_runs;
    r->attempts = d->n_attempts;
    for (i = 0; i < d->n_runs; i++) {
        r->finished += d->runs[i].state == SW_RUN_FINISHED;
        r->stopped += d->runs[i].state == SW_RUN_STOPPED;
        r->failed += d->runs[i].state == SW_RUN_FAILED;
        r->replaced +=
            d->runs[i].state == SW_RUN_STOPPED && d->runs[i].replaced;
    }
}

void sw_report_compute(sw_report *r, const sw_report_data *d)
{
    by_run ix;

    memset(r, 0, sizeof(*r));
    index_points(&ix, d);
    counts(r, d);
    totals(r, d);
    stopping(r, &ix);
    failures(r, &ix);
    best(r, d);
    index_dispose(&ix);
    r->mean_gpu_utilization = d->util;
    r->budget_spent = sw_budget_spent(
        &d->budget, isnan(r->gpu_seconds_busy) ? 0 : r->gpu_seconds_busy,
        r->trial_seconds, r->wall_seconds, NULL, NULL);
    r->cost = r->cost_per_finished_run = NAN;
    if (d->price >= 0) {
        r->cost = r->gpu_seconds_capacity / 3600.0 * d->price;
        r->cost_per_finished_run =
            r->finished > 0 ? r->cost / (double)r->finished : NAN;
    }
}

/* ---- output --------------------------------------------------------- */

static void num(sw_buf *b, const char *key, double v, bool comma)
{
    if (isnan(v))
        sw_buf_printf(b, "  \"%s\": null%s\n", key, comma ? "," : "");
    else
        sw_buf_printf(b, "  \"%s\": %.15g%s\n", key, v, comma ? "," : "");
}

/* "budget": null, or its limits (hours; null: none) and how much of it
 * was spent. */
static void budget_json(sw_buf *b, const sw_budget *bu, const sw_report *r)
{
    if (isnan(r->budget_spent)) {
        sw_buf_puts(b, "  \"budget\": null\n");
        return;
    }
    sw_buf_puts(b, "  \"budget\": {\n  ");
    num(b, "gpu_hours", bu->gpu_hours > 0 ? bu->gpu_hours : NAN, true);
    sw_buf_puts(b, "  ");
    num(b, "trial_hours", bu->trial_hours > 0 ? bu->trial_hours : NAN, true);
    sw_buf_puts(b, "  ");
    num(b, "hours", bu->hours > 0 ? bu->hours : NAN, true);
    sw_buf_puts(b, "  ");
    num(b, "spent", r->budget_spent, false);
    sw_buf_puts(b, "  }\n");
}

void sw_report_write_json(sw_buf *b, const sw_report_data *d,
                          const sw_report *r)
{
    sw_buf_printf(b, "{\n  \"sweep\": \"%s\",\n", d->sweep_id);
    sw_buf_printf(b,
                  "  \"runs\": %zu,\n  \"finished\": %zu,\n"
                  "  \"stopped\": %zu,\n  \"failed\": %zu,\n"
                  "  \"attempts\": %zu,\n  \"failed_attempts\": %zu,\n"
                  "  \"replaced\": %zu,\n",
                  r->runs, r->finished, r->stopped, r->failed, r->attempts,
                  r->failed_attempts, r->replaced);
    num(b, "wall_seconds", r->wall_seconds, true);
    num(b, "gpus", r->gpus, true);
    num(b, "gpu_seconds_capacity", r->gpu_seconds_capacity, true);
    num(b, "gpu_seconds_busy", r->gpu_seconds_busy, true);
    num(b, "gpu_seconds_idle", r->gpu_seconds_idle, true);
    num(b, "gpu_seconds_mig_unused", r->gpu_seconds_mig_unused, true);
    num(b, "occupancy", r->occupancy, true);
    num(b, "gpu_seconds_saved_by_stopping", r->gpu_seconds_saved_by_stopping,
        true);
    num(b, "gpu_seconds_lost_to_failures", r->gpu_seconds_lost_to_failures,
        true);
    num(b, "trial_seconds", r->trial_seconds, true);
    num(b, "trial_seconds_saved_by_stopping",
        r->trial_seconds_saved_by_stopping, true);
    num(b, "trial_seconds_lost_to_failures", r->trial_seconds_lost_to_failures,
        true);
    num(b, "queue_seconds", r->queue_seconds, true);
    num(b, "time_to_best_seconds", r->time_to_best_seconds, true);
    num(b, "best_value", r->best_value, true);
    num(b, "mean_gpu_utilization", r->mean_gpu_utilization, true);
    num(b, "cost", r->cost, true);
    num(b, "cost_per_finished_run", r->cost_per_finished_run, true);
    budget_json(b, &d->budget, r);
    sw_buf_puts(b, "}\n");
}

void sw_report_put_duration(sw_buf *b, double s, bool short_form)
{
    if (s < 120)
        sw_buf_printf(b, short_form ? "%.3g s" : "%.1f s", s);
    else if (s < 7200)
        sw_buf_printf(b, short_form ? "%.3g min" : "%.1f min", s / 60);
    else
        sw_buf_printf(b, short_form ? "%.3g h" : "%.2f h", s / 3600);
}

/* One line: a duration (`unit` NULL) or a number and its unit. */
static void row(sw_buf *b, const char *what, double v, const char *unit)
{
    sw_buf_printf(b, "  %-30s ", what);
    if (isnan(v))
        sw_buf_puts(b, "-");
    else if (!unit)
        sw_report_put_duration(b, v, false);
    else
        sw_buf_printf(b, "%.4g%s", v, unit);
    sw_buf_putc(b, '\n');
}

static void gpu_rows(sw_buf *b, const sw_report *r)
{
    row(b, "GPUs", r->gpus, "");
    row(b, "GPU time, capacity", r->gpu_seconds_capacity, NULL);
    row(b, "GPU time, busy", r->gpu_seconds_busy, NULL);
    row(b, "GPU time, idle", r->gpu_seconds_idle, NULL);
    if (r->gpu_seconds_mig_unused > 0)
        row(b, "  of it, MIG slices unused", r->gpu_seconds_mig_unused, NULL);
    row(b, "occupancy", r->occupancy * 100, " %");
    row(b, "GPU time saved by stopping", r->gpu_seconds_saved_by_stopping,
        NULL);
    row(b, "GPU time lost to failures", r->gpu_seconds_lost_to_failures, NULL);
    row(b, "mean GPU utilisation", r->mean_gpu_utilization, " %");
}

void sw_report_write_text(sw_buf *b, const sw_report_data *d,
                          const sw_report *r)
{
    sw_buf_printf(b,
                  "sweep %s: %zu runs (%zu finished, %zu stopped, %zu "
                  "failed), %zu attempts (%zu failed)\n",
                  d->sweep_id, r->runs, r->finished, r->stopped, r->failed,
                  r->attempts, r->failed_attempts);
    row(b, "wall clock", r->wall_seconds, NULL);
    row(b, "trial time", r->trial_seconds, NULL);
    row(b, "trial time saved by stopping", r->trial_seconds_saved_by_stopping,
        NULL);
    row(b, "trial time lost to failures", r->trial_seconds_lost_to_failures,
        NULL);
    if (r->replaced > 0) /* PBT: not saved, trained on by another run */
        sw_buf_printf(b,
                      "  %-30s %zu (their places went on from better "
                      "runs' checkpoints)\n",
                      "runs replaced by exploits", r->replaced);
    if (!isnan(r->queue_seconds)) /* Slurm: waits are not trial time */
        row(b, "queue wait", r->queue_seconds, NULL);
    if (r->gpus > 0)
        gpu_rows(b, r);
    else
        sw_buf_puts(b, "  (no GPU: CPU trials only)\n");
    if (d->metric && !isnan(r->best_value)) {
        sw_buf_printf(b, "  %-30s %.6g (%s), after ", "best value",
                      r->best_value, d->metric);
        sw_report_put_duration(b, r->time_to_best_seconds, false);
        sw_buf_putc(b, '\n');
    }
    if (!isnan(r->cost)) {
        row(b, "cost", r->cost, " USD");
        row(b, "cost per finished run", r->cost_per_finished_run, " USD");
    }
    if (!isnan(r->budget_spent)) {
        sw_buf_printf(b, "  %-30s ", "budget");
        sw_budget_describe(b, &d->budget);
        sw_buf_printf(b, ": %.1f %% spent\n", r->budget_spent * 100);
    }
}
