/*
 * budget.c - the sweep file's `budget` (docs/sweep-file.md): what the
 * sweep has spent, counted as `sweep report` counts it, so that no trial
 * starts once it is spent. Trials already running finish: what they
 * spend past the budget is the overshoot, at most one attempt per slot.
 *
 * Spending is what ended attempts spent (the `attempts` table, read back
 * on resume, then counted as each attempt ends) plus what the running
 * ones have spent so far, on the engine's clock (virtual under
 * --backend sim).
 */
#include <math.h>
#include <stdlib.h>

#include "orchestrator/engine/engine_internal.h"

static bool has_budget(const sw_engine *e)
{
    return !isnan(sw_budget_spent(&e->spec->budget, 0, 0, 0, NULL, NULL));
}

static void first_start(sw_engine *e, double t)
{
    if (t > 0 && (e->spent.first == 0 || t < e->spent.first))
        e->spent.first = t;
}

/* One ended attempt's spending. */
static void count(sw_engine *e, double started_at, double ended_at, double gpu)
{
    double d = ended_at - started_at;

    if (!(started_at > 0) || !(d > 0))
        return;
    first_start(e, started_at);
    e->spent.trial_s += d;
    e->spent.gpu_s += d * gpu;
}

int sw_engine__budget_load(sw_engine *e)
{
    sw_attempt_rec *a = NULL;
    size_t n = 0, i;
    int error;

    if (!has_budget(e) || !e->resuming)
        return SW_OK;
    if ((error = sw_store_list_attempts(e->st, e->sweep.id, &a, &n)))
        return error;
    for (i = 0; i < n; i++)
        count(e, a[i].started_at, a[i].ended_at, a[i].gpu);
    for (i = 0; i < n; i++)
        sw_attempt_rec_dispose(&a[i]);
    free(a);
    return SW_OK;
}

int sw_engine__budget_event(void *engine, const sw_event *ev)
{
    if (ev->kind == SW_EV_RUN && ev->end)
        count(engine, ev->run->started_at, ev->run->ended_at, ev->end->gpu);
    return SW_OK;
}

/* What is spent now, ended and running attempts together, and (each
 * may be NULL) at what rate the running ones spend: GPUs held, and
 * attempts running. */
static void spent_now(sw_engine *e, double now, double *gpu_s, double *trial_s,
                      double *gpu_rate, double *trial_rate)
{
    double d, held, gr = 0, tr = 0;
    size_t i;
    sw_slot *s;

    *gpu_s = e->spent.gpu_s;
    *trial_s = e->spent.trial_s;
    for (i = 0; i < e->n_slots; i++) {
        s = e->slots[i];
        if (!sw_engine__started(s) || s->queued || !(s->rec.started_at > 0))
            continue; /* a job waiting in Slurm's queue spends nothing */
        first_start(e, s->rec.started_at);
        held = sw_engine__gpus_held(e, s);
        gr += held;
        tr += 1;
        d = now - s->rec.started_at;
        if (d > 0) {
            *trial_s += d;
            *gpu_s += d * held;
        }
    }
    if (gpu_rate)
        *gpu_rate = gr;
    if (trial_rate)
        *trial_rate = tr;
}

bool sw_engine__budget_lasts(sw_engine *e, double seconds)
{
    double now = sw_clock_wall(e->clock), gpu_s, trial_s, gr, tr, wall;

    if (!has_budget(e))
        return true;
    if (e->spent.over)
        return false;
    spent_now(e, now, &gpu_s, &trial_s, &gr, &tr);
    wall = e->spent.first > 0 ? now - e->spent.first : 0;
    return sw_budget_spent(&e->spec->budget, gpu_s + seconds * gr,
                           trial_s + seconds * (tr + 1), wall + seconds, NULL,
                           NULL) < 1;
}

bool sw_engine__budget_spent(sw_engine *e)
{
    double now = sw_clock_wall(e->clock), gpu_s, trial_s, limit;
    const char *unit;

    if (e->spent.over)
        return true;
    if (!has_budget(e))
        return false;
    spent_now(e, now, &gpu_s, &trial_s, NULL, NULL);
    if (!(sw_budget_spent(&e->spec->budget, gpu_s, trial_s,
                          e->spent.first > 0 ? now - e->spent.first : 0, &unit,
                          &limit) >= 1))
        return false;
    e->spent.over = true;
    sw_engine__notice(e, SW_NOTICE_RESULT,
                      "sweep %s: the budget of %g %s is spent: no new trials; "
                      "the %zu running finish",
                      e->sweep.id, limit, unit, sw_engine__count_started(e));
    return true;
}
