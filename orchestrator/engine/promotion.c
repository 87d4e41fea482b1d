/*
 * promotion.c - promotion ASHA in the engine (`early_terminate: {type:
 * asha, promote: true, min_iter, eta, max_iter}`; docs/stopping.md).
 *
 * Each attempt is told the iteration to train to (SWEEP_TRAIN_UNTIL, a
 * rung of search/promote.c). When the sweep's metric reaches it, the run
 * is recorded at that rung and told to pause: every answer to its
 * reports says {"stop": true, "pause": true} (a trial that only prints
 * gets SIGTERM), and once its attempt ends it is `paused`, its devices
 * given back. While slots are free, paused runs due a promotion go to
 * the queue before any new configuration is drawn, and start again from
 * their checkpoint folder, told the next rung. A run that reaches the
 * last rung (max_iter) finishes as any run does.
 *
 * The promoter is rebuilt from the store on resume: each run's values of
 * the metric put it at every rung it reached, and its state says whether
 * it waits at the highest one (paused) or went on. When the sweep ends,
 * the runs still paused end `stopped`: that rung is as far as they went.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "orchestrator/engine/engine_internal.h"
#include "search/extrapolate.h"
#include "search/promote.h"

/* ---- a run's curve --------------------------------------------------- */

/* The metric's values of one run so far, at their iterations (the step,
 * or the count of values when a report has none), for extrapolation. */
typedef struct {
    const char *metric;
    double *t, *y;
    size_t n, cap;
} curve;

static void curve_push(curve *c, int64_t iter, double value)
{
    size_t cap = c->cap;

    sw_grow(&c->t, &cap, c->n + 1, sizeof(double));
    sw_grow(&c->y, &c->cap, c->n + 1, sizeof(double));
    c->t[c->n] = (double)iter;
    c->y[c->n++] = value;
}

/* Takes a store row into the curve when it is a value of the metric;
 * whether it did. */
static bool curve_take(curve *c, int64_t step, const char *name, bool has_value,
                       double value)
{
    if (strcmp(name, c->metric) != 0 || !has_value)
        return false;
    curve_push(c, step >= 0 ? step : (int64_t)c->n + 1, value);
    return true;
}

static void curve_dispose(curve *c)
{
    free(c->t);
    free(c->y);
}

/* What run ranks by at rung k: its value there, or with extrapolate
 * (below the last rung, where the value is the end) its curve's value at
 * max_iter. The same points give the same rank live and on resume. */
static double rank_value(const sw_engine *e, const curve *c, size_t k,
                         double value)
{
    const sw_early_terminate *et = &e->spec->early_terminate;

    if (!et->extrapolate || k + 1 >= sw_promoter_rungs(e->promoter) || !c->n)
        return value;
    return sw_extrapolate(c->t, c->y, c->n, (double)et->max_iter,
                          e->spec->metric.goal != SW_GOAL_MAXIMIZE);
}

/* ---- rebuilding it from the store ----------------------------------- */

typedef struct {
    const sw_engine *e;
    sw_promoter *p;
    int64_t idx;
    size_t next;       /* the first rung not reached yet */
    double reached_at; /* when the highest rung reached was */
    curve seen;
} replay_ctx;

static int replay_row(void *ctx, int64_t step, const char *name, bool has_value,
                      double value, double time)
{
    replay_ctx *c = ctx;
    int64_t iter;

    if (!curve_take(&c->seen, step, name, has_value, value))
        return 0;
    iter = (int64_t)c->seen.t[c->seen.n - 1];
    while (c->next < sw_promoter_rungs(c->p) &&
           iter >= sw_promoter_rung_iter(c->p, c->next)) {
        sw_promoter_record(c->p, c->idx, c->next,
                           rank_value(c->e, &c->seen, c->next, value));
        c->next++;
        c->reached_at = time;
    }
    return 0;
}

/* One run: recorded at each rung it reached; promoted out of all but
 * the highest, and out of that one too unless it waits there: paused,
 * or running an attempt that reached it (it was told to train to it and
 * pauses there as its attempt ends). */
static int replay_run(sw_engine *e, const sw_run_rec *r)
{
    replay_ctx c = {e, e->promoter, r->idx,
                    0, 0,           {e->spec->metric.name, NULL, NULL, 0, 0}};
    size_t k;
    int error = sw_store_metric_rows(e->st, r->id, replay_row, &c);
    bool pausing;

    curve_dispose(&c.seen);
    if (error || c.next == 0)
        return error;
    for (k = 0; k + 1 < c.next; k++)
        sw_promoter_mark(e->promoter, r->idx, k);
    pausing = r->state == SW_RUN_RUNNING && r->started_at > 0 &&
              c.reached_at >= r->started_at;
    if (r->state != SW_RUN_PAUSED && !pausing)
        sw_promoter_mark(e->promoter, r->idx, c.next - 1);
    return SW_OK;
}

void sw_engine__promote_adopted(sw_engine *e, sw_slot *s)
{
    size_t k;

    if (!e->promoter || !sw_promoter_waiting(e->promoter, s->rec.idx, &k))
        return;
    s->target = sw_promoter_rung_iter(e->promoter, k);
    s->iter = s->target;
    sw_engine__pause(e, s,
                     sw_aprintf("it reached rung %zu (iteration %lld) "
                                "before the sweep was resumed",
                                k, (long long)s->target));
    s->pause = true;
}

static int rebuild(sw_engine *e)
{
    sw_run_rec *runs = NULL;
    size_t n = 0, i;
    int error = sw_store_list_runs(e->st, e->sweep.id, &runs, &n);

    for (i = 0; !error && i < n; i++)
        error = replay_run(e, &runs[i]);
    for (i = 0; i < n; i++)
        sw_run_rec_dispose(&runs[i]);
    free(runs);
    return error;
}

int sw_engine__make_promoter(sw_engine *e)
{
    const sw_early_terminate *et = &e->spec->early_terminate;
    int error;

    if (e->promoter || et->rule != SW_STOP_ASHA || !et->promote ||
        !e->spec->metric.name)
        return SW_OK;
    error = sw_promoter_new(&e->promoter, et->min_iter, et->eta, et->max_iter,
                            e->spec->metric.goal == SW_GOAL_MAXIMIZE);
    if (!error)
        error = sw_promoter_set_brackets(e->promoter, (size_t)et->brackets,
                                         e->sweep.seed);
    if (!error)
        sw_promoter_set_predicted(e->promoter, et->extrapolate);
    if (!error && e->resuming)
        error = rebuild(e);
    return error;
}

/* ---- deciding ------------------------------------------------------- */

int64_t sw_engine__train_until(const sw_engine *e, const sw_slot *s)
{
    if (e->pbt)
        return sw_engine__pbt_target(e);
    return e->promoter ? sw_promoter_target(e->promoter, s->rec.idx) : 0;
}

static int curve_row(void *ctx, int64_t step, const char *name, bool has_value,
                     double value, double time)
{
    (void)time;
    curve_take(ctx, step, name, has_value, value);
    return 0;
}

/* rank_value() of the run in slot s, reaching rung k with `value`: its
 * curve read from the store, which holds this value already (a store
 * that cannot be read ranks by the value). */
static double rank_now(const sw_engine *e, const sw_slot *s, size_t k,
                       double value)
{
    curve seen = {e->spec->metric.name, NULL, NULL, 0, 0};
    double v = value;

    if (e->spec->early_terminate.extrapolate &&
        k + 1 < sw_promoter_rungs(e->promoter) &&
        sw_store_metric_rows(e->st, s->rec.id, curve_row, &seen) == SW_OK)
        v = rank_value(e, &seen, k, value);
    curve_dispose(&seen);
    return v;
}

/* ---- paces, for the drain ------------------------------------------ */

/* The iterations the attempt in `s` trained so far (its first step to
 * its last, or the count of its values), and the seconds each took,
 * its start-up shared among them; 0 when it has reported none. */
static double slot_pace(const sw_engine *e, const sw_slot *s)
{
    int64_t n = s->first_step >= 0 && s->iter >= s->first_step
                    ? s->iter - s->first_step + 1
                    : s->values;
    double spent = sw_clock_mono(e->clock) - s->launched_at;

    return n > 0 && s->launched_at > 0 && spent > 0 ? spent / (double)n : 0;
}

/* The pace of the run in `s`, as its attempt reaches a rung. */
static void note_pace(sw_engine *e, const sw_slot *s)
{
    size_t idx = (size_t)s->rec.idx, cap = e->n_paces;
    double pace = slot_pace(e, s);

    if (s->rec.idx < 0 || pace <= 0)
        return;
    if (idx >= e->n_paces) {
        sw_grow(&e->paces, &cap, idx + 1, sizeof(double));
        memset(e->paces + e->n_paces, 0, (cap - e->n_paces) * sizeof(double));
        e->n_paces = cap;
    }
    e->paces[idx] = pace;
}

static double run_pace(const sw_engine *e, int64_t idx)
{
    return idx >= 0 && (size_t)idx < e->n_paces ? e->paces[idx] : 0;
}

/* How long the run in `s` will take to reach its rung: at its attempt's
 * pace once it has reported, else at its run's last pace from the rung
 * before, less the time it has run; 0 when neither is known. */
static double time_left(const sw_engine *e, const sw_slot *s)
{
    const sw_promoter *p = e->promoter;
    int64_t target =
        s->target > 0 ? s->target : sw_promoter_target(p, s->rec.idx);
    int k = sw_promoter_rung_of(p, target);
    int64_t from = k > 0 ? sw_promoter_rung_iter(p, (size_t)k - 1) : 0;
    double pace = slot_pace(e, s), ran;

    if (s->iter >= 0 && pace > 0)
        return (double)(target - s->iter) * pace;
    if ((pace = run_pace(e, s->rec.idx)) <= 0)
        return 0;
    ran = s->launched_at > 0 ? sw_clock_mono(e->clock) - s->launched_at : 0;
    return (double)(target - from) * pace - ran;
}

/* How long the runs the quota promoted (or new ones) will take to reach
 * their rungs: the longest of them (0: none training, or none with a
 * known pace). Runs in the drain do not count: what they take is
 * estimated, and a drain measured by the drain could only grow. */
static double drain_horizon(const sw_engine *e)
{
    double longest = 0, left;
    const sw_slot *s;
    size_t i;

    for (i = 0; i < e->n_slots; i++) {
        s = e->slots[i];
        if (s->phase > SW_SLOT_RUNNING || s->pause || s->drained)
            continue;
        left = time_left(e, s);
        longest = left > longest ? left : longest;
    }
    return longest;
}

/* Whether the budget, spent as it is now, lasts while the run waiting at
 * rung k trains to rung k + 1 at its own pace: near a budget's end a
 * promotion that would outlast it would keep a few devices busy, and all
 * the others paid for, long after it (true without a budget, or for a
 * run whose pace this process has not seen). */
/* Seconds the run waiting at rung k takes to rung k + 1 at its pace;
 * 0 when this process has not seen its pace. */
static double rung_time(const sw_engine *e, int64_t run, size_t k)
{
    int64_t more = sw_promoter_rung_iter(e->promoter, k + 1) -
                   sw_promoter_rung_iter(e->promoter, k);

    return (double)more * run_pace(e, run);
}

static bool budget_lasts_rung(sw_engine *e, int64_t run, size_t k)
{
    double t = rung_time(e, run, k);

    return t <= 0 || sw_engine__budget_lasts(e, t);
}

typedef struct {
    sw_engine *e;
    double horizon;
} drain_ctx;

/* Whether the run waiting at rung k reaches rung k + 1, at its own
 * pace, within the horizon. A run whose pace this process has not seen
 * (a sweep resumed since) does not. */
static bool drain_fits(void *ctx, int64_t run, size_t k)
{
    drain_ctx *c = ctx;
    double t = rung_time(c->e, run, k);

    return t > 0 && t <= c->horizon && budget_lasts_rung(c->e, run, k);
}

void sw_engine__promote_observe(sw_engine *e, sw_slot *s, int64_t step,
                                double value)
{
    int64_t iter;
    int k;

    if (!e->promoter || s->pause)
        return;
    if (s->target <= 0)
        s->target = sw_engine__train_until(e, s);
    iter = step >= 0 ? step : s->values;
    s->iter = iter;
    if (iter < s->target)
        return;
    k = sw_promoter_rung_of(e->promoter, s->target);
    if (k < 0)
        return;
    note_pace(e, s);
    sw_promoter_record(e->promoter, s->rec.idx, (size_t)k,
                       rank_now(e, s, (size_t)k, value));
    sw_engine__fidelity_rung(e, &s->rec, /* the search learns it too */
                             sw_promoter_rung_iter(e->promoter, (size_t)k),
                             value);
    if ((size_t)k + 1 < sw_promoter_rungs(e->promoter))
        s->pause = true; /* the last rung: it finishes as it is */
}

bool sw_engine__promote_decide(sw_engine *e, sw_slot *s)
{
    sw_buf why = SW_BUF_INIT;

    if (!e->promoter)
        return false;
    if (!s->pause || s->stop || s->phase == SW_SLOT_CAPTURE)
        return true;
    sw_promoter_explain(e->promoter, s->rec.idx, &why);
    sw_engine__pause(e, s, sw_buf_detach(&why));
    return true;
}

/* ---- promoting ------------------------------------------------------ */

/* Run `idx`, paused, goes back to the queue, pending, told why (past
 * the quota: in the drain); *later when it has not paused yet (it
 * reached its rung, its attempt is still ending): it is promoted once it
 * has. */
static int requeue(sw_engine *e, int64_t idx, size_t to, bool drain,
                   bool *later)
{
    char *id = sw_aprintf("%s-%lld", e->sweep.id, (long long)idx + 1);
    sw_event ev = {.kind = SW_EV_RUN, .from = SW_RUN_PAUSED};
    sw_run_rec r;
    int error = sw_store_get_run(e->st, id, &r);

    free(id);
    if (error)
        return error;
    if (r.state != SW_RUN_PAUSED) {
        *later = r.state == SW_RUN_RUNNING;
        sw_run_rec_dispose(&r);
        return SW_OK;
    }
    r.state = SW_RUN_PENDING;
    free(r.reason);
    r.reason = sw_aprintf("promoted to rung %zu (iteration %lld)%s", to,
                          (long long)sw_promoter_rung_iter(e->promoter, to),
                          drain ? ", past the quota: in the drain, a "
                                  "device would idle"
                                : "");
    if ((error = sw_store_update_run(e->st, &r)) == SW_OK) {
        ev.run = &r;
        error = sw_engine__emit(e, &ev);
        sw_engine__notice(e, SW_NOTICE_INFO, "sweep %s: run %s %s", e->sweep.id,
                          r.id, r.reason);
    }
    if (!error)
        sw_engine__enqueue(e, &r); /* takes r */
    sw_run_rec_dispose(&r);
    return error;
}

int sw_engine__promote_due(sw_engine *e)
{
    int64_t idx, wait[SW_PROMOTER_MAX_RUNGS * 4];
    size_t to, n_wait = 0, waits[SW_PROMOTER_MAX_RUNGS * 4], i;
    bool later;
    int error = SW_OK;

    if (e->promoter && sw_engine__budget_spent(e)) { /* as PBT's rounds */
        if (!e->paused_why)
            e->paused_why = sw_aprintf("paused at its rung, not promoted: "
                                       "the budget was spent");
        return SW_OK;
    }
    while (!error && e->promoter && !sw_engine__stopping(e) &&
           e->n_slots + e->qlen < (size_t)e->parallel &&
           n_wait < sizeof(wait) / sizeof(*wait) &&
           sw_promoter_next(e->promoter, &idx, &to)) {
        later = !budget_lasts_rung(e, idx, to - 1);
        if (!later)
            error = requeue(e, idx, to, false, &later);
        if (later) {
            wait[n_wait] = idx;
            waits[n_wait++] = to - 1;
        }
    }
    for (i = 0; i < n_wait; i++) /* due again once they have paused, or
                                    when the budget would last */
        sw_promoter_unmark(e->promoter, wait[i], waits[i]);
    return error;
}

bool sw_engine__promote_drained(const sw_engine *e, int64_t idx)
{
    return e->promoter && sw_promoter_beyond(e->promoter, idx);
}

bool sw_engine__promote_drain(sw_engine *e)
{
    drain_ctx c = {e, 0};
    int64_t idx;
    size_t to;
    bool later = false;
    int error;

    if (!e->promoter || !e->spec->early_terminate.drain || !e->search_done ||
        e->qlen > 0 || sw_engine__stopping(e) || sw_engine__budget_spent(e) ||
        (c.horizon = drain_horizon(e)) <= 0 ||
        !sw_promoter_next_beyond(e->promoter, drain_fits, &c, &idx, &to))
        return false;
    if ((error = requeue(e, idx, to, true, &later)) != SW_OK) {
        sw_engine__fatal(e, error);
        return false;
    }
    if (later) /* it has not paused yet: due again */
        sw_promoter_unmark(e->promoter, idx, to - 1);
    return e->qlen > 0;
}

int sw_engine__end_paused(sw_engine *e)
{
    sw_event ev = {.kind = SW_EV_RUN, .from = SW_RUN_PAUSED};
    sw_run_rec *runs = NULL;
    size_t n = 0, i;
    int error;

    if (!e->promoter && !e->pbt)
        return SW_OK;
    sw_engine__pbt_ending(e);
    error = sw_store_list_runs(e->st, e->sweep.id, &runs, &n);
    for (i = 0; !error && i < n; i++) {
        if (runs[i].state != SW_RUN_PAUSED)
            continue;
        runs[i].state = SW_RUN_STOPPED;
        free(runs[i].reason);
        runs[i].reason =
            sw_aprintf("%s: %s", sw_cancel_name(SW_CANCEL_STOPPED),
                       e->paused_why ? e->paused_why
                                     : "paused at its rung and never promoted");
        if ((error = sw_store_update_run(e->st, &runs[i])) == SW_OK) {
            sw_engine__tally(e, SW_RUN_STOPPED, false);
            ev.run = &runs[i];
            error = sw_engine__emit(e, &ev);
        }
    }
    for (i = 0; i < n; i++)
        sw_run_rec_dispose(&runs[i]);
    free(runs);
    return error;
}
