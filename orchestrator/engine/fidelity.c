/*
 * fidelity.c - what the search learns of the rungs (multi-fidelity bayes
 * and tpe, sw_search_multi_fidelity; docs/search.md): each run's value
 * of the sweep's metric at each rung it reaches is told to the search as
 * the value is stored, at promotion ASHA's rungs (promotion.c) or at the
 * stopping rule's bands and rungs (rule.c), and a finished run's at its
 * last iteration too. Like the ends of runs (suggest.c), what comes
 * while a suggestion runs is held, and told once it is back.
 *
 * Nothing is stored apart: a run's rung values are its values of the
 * metric, so whenever the search hears of a run (its end, or every run
 * on `sweep resume`) its rows are replayed from the metrics table,
 * iterations counted as its rule counts them: promotion ASHA by step
 * (the count of values without one), the stopping rule by the count of
 * finite values. The search keeps one value per (run, rung), so telling
 * one twice changes nothing.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "orchestrator/engine/engine_internal.h"
#include "search/promote.h"
#include "search/stopping.h"
#include "sweeps/json.h"

/* Whether this sweep's search learns from rungs, and has rungs. */
static bool on(const sw_engine *e)
{
    return e->search && (e->promoter || e->stopper) &&
           sw_search_multi_fidelity(e->spec);
}

static void apply(sw_engine *e, sw_rung_tell *t)
{
    if (sw_search_observe_rung(e->search, &t->trial, t->iter, t->value))
        sw_engine__notice(e, SW_NOTICE_ERROR, "sweep: trial %llu: %s",
                          (unsigned long long)t->trial.index, sw_error_last());
    sw_trial_dispose(&t->trial);
}

void sw_engine__fidelity_rung(sw_engine *e, const sw_run_rec *r, int64_t iter,
                              double value)
{
    sw_rung_tell t = {.iter = iter, .value = value};

    if (!on(e))
        return;
    sw_trial_init(&t.trial);
    if (sw_json_parse(&t.trial.params, r->params, strlen(r->params))) {
        sw_engine__notice(e, SW_NOTICE_ERROR,
                          "sweep: run %s: its stored params are not JSON: %s",
                          r->id, sw_error_last());
        return;
    }
    t.trial.index = (uint64_t)r->idx;
    snprintf(t.trial.id, sizeof(t.trial.id), "%s", r->cell);
    if (!e->suggesting) {
        apply(e, &t);
        return;
    }
    sw_grow(&e->rung_tells, &e->cap_rung_tells, e->n_rung_tells + 1,
            sizeof(*e->rung_tells));
    e->rung_tells[e->n_rung_tells++] = t;
}

/* Whether `n` is one of the stopping rule's bands or rungs. */
static bool is_level(const sw_engine *e, int64_t n)
{
    const int64_t *at;
    size_t k = sw_stopper_levels(e->stopper, &at), i;

    for (i = 0; i < k && at[i] <= n; i++)
        if (at[i] == n)
            return true;
    return false;
}

void sw_engine__fidelity_value(sw_engine *e, const sw_run_rec *r, double value)
{
    int64_t n;

    if (!on(e) || !e->stopper || !isfinite(value))
        return;
    n = sw_stopper_iterations(e->stopper, r->idx);
    if (is_level(e, n))
        sw_engine__fidelity_rung(e, r, n, value);
}

/* ---- replaying a run from the store ---------------------------------- */

typedef struct {
    sw_engine *e;
    const sw_run_rec *r;
    int64_t values, finite; /* rows of the metric with a value; finite */
    size_t next;            /* promoter: the first rung not reached */
    int64_t last_iter;      /* the last finite value's iteration... */
    double last;            /* ...and the value */
} replay_ctx;

/* Promotion ASHA's count: as promotion.c rebuilds its rungs. */
static void promoter_row(replay_ctx *c, int64_t step, double value)
{
    const sw_promoter *p = c->e->promoter;
    int64_t iter = step >= 0 ? step : c->values;

    while (c->next < sw_promoter_rungs(p) &&
           iter >= sw_promoter_rung_iter(p, c->next))
        sw_engine__fidelity_rung(c->e, c->r,
                                 sw_promoter_rung_iter(p, c->next++), value);
    if (isfinite(value))
        c->last_iter = iter;
}

static int replay_row(void *ctx, int64_t step, const char *name, bool has_value,
                      double value, double time)
{
    replay_ctx *c = ctx;

    (void)time;
    if (strcmp(name, c->e->spec->metric.name) != 0 || !has_value)
        return 0;
    c->values++;
    if (c->e->promoter) {
        promoter_row(c, step, value);
    } else if (isfinite(value)) {
        c->last_iter = ++c->finite;
        if (is_level(c->e, c->finite))
            sw_engine__fidelity_rung(c->e, c->r, c->finite, value);
    }
    if (isfinite(value))
        c->last = value;
    return 0;
}

void sw_engine__fidelity_replay(sw_engine *e, const sw_run_rec *r)
{
    replay_ctx c = {e, r, 0, 0, 0, 0, NAN};
    int error;

    if (!on(e))
        return;
    error = sw_store_metric_rows(e->st, r->id, replay_row, &c);
    if (error) {
        sw_engine__fatal(e, error);
        return;
    }
    if (r->state == SW_RUN_FINISHED && c.last_iter > 0)
        sw_engine__fidelity_rung(e, r, c.last_iter, c.last);
}

/* ---- once the suggestion is back -------------------------------------- */

void sw_engine__fidelity_flush(sw_engine *e)
{
    int64_t level;
    size_t i;

    for (i = 0; i < e->n_rung_tells; i++)
        apply(e, &e->rung_tells[i]);
    e->n_rung_tells = 0;
    if (!on(e) || (level = sw_search_fitted(e->search)) == e->fitted)
        return;
    e->fitted = level;
    if (level > 0)
        sw_engine__notice(e, SW_NOTICE_INFO,
                          "sweep %s: %s models the runs' values at iteration "
                          "%lld (multi-fidelity)",
                          e->sweep.id, sw_method_name(e->spec->method),
                          (long long)level);
}

void sw_engine__fidelity_dispose(sw_engine *e)
{
    size_t i;

    for (i = 0; i < e->n_rung_tells; i++)
        sw_trial_dispose(&e->rung_tells[i].trial);
    free(e->rung_tells);
    e->rung_tells = NULL;
    e->n_rung_tells = e->cap_rung_tells = 0;
}
