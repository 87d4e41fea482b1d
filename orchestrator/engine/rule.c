/*
 * rule.c - the engine's side of early stopping: the sweep's stopping
 * rule (search/stopping.c, pure) is shown every committed value of the
 * sweep's metric, in the order they were committed (the metrics table's
 * rowid), so `sweep resume` rebuilds it from the store and goes on
 * deciding exactly as before a crash; it is asked about a run on every
 * value, and about every run when a value moved a line (a threshold, a
 * median).
 *
 * A verdict is kept in the slot: every later answer to the run's reports
 * says stop. A trial that reports over HTTP has early_terminate.grace
 * seconds to exit on its own; one that only writes @metrics lines cannot
 * be answered and gets SIGTERM at once. Either way its run ends
 * `stopped` (lifecycle.c).
 */
#include <stdlib.h>

#include "orchestrator/engine/engine_internal.h"
#include "search/stopping.h"

static int replay(void *ctx, int64_t idx, double value)
{
    sw_stopper_observe(ctx, idx, value);
    return 0;
}

int sw_engine__make_stopper(sw_engine *e)
{
    const sw_early_terminate *et = &e->spec->early_terminate;
    int error;

    if ((error = sw_engine__make_promoter(e)) != SW_OK || e->promoter)
        return error; /* promotion ASHA: its rungs decide, no stopper */
    if ((error = sw_engine__make_pbt(e)) != SW_OK || e->pbt)
        return error; /* PBT: its rounds decide (no early_terminate) */
    if (et->rule == SW_STOP_NONE || !e->spec->metric.name || e->stopper)
        return SW_OK;
    error = sw_stopper_new(&e->stopper, et,
                           e->spec->metric.goal == SW_GOAL_MAXIMIZE);
    if (!error && e->resuming)
        error = sw_store_metric_history(
            e->st, e->sweep.id, e->spec->metric.name, replay, e->stopper);
    e->stop_generation = e->stopper ? sw_stopper_generation(e->stopper) : 0;
    return error;
}

void sw_engine__decide(sw_engine *e, sw_slot *s)
{
    sw_buf why = SW_BUF_INIT;
    double grace = e->spec->early_terminate.grace;

    if (sw_engine__promote_decide(e, s) || sw_engine__pbt_decide(e, s))
        return;
    if (!e->stopper || s->stop || s->phase == SW_SLOT_CAPTURE ||
        !sw_stopper_should_stop(e->stopper, s->rec.idx))
        return;
    s->stop = true;
    /* a trial that only prints cannot be answered: SIGTERM at once */
    s->stop_at = sw_clock_mono(e->clock) + (s->http ? grace : 0);
    sw_stopper_explain(e->stopper, s->rec.idx, &why);
    sw_engine__notice(e, SW_NOTICE_INFO, "sweep %s: run %s stops early: %s",
                      e->sweep.id, s->rec.id, sw_buf_cstr(&why));
    free(s->stop_verdict);
    s->stop_verdict = sw_buf_detach(&why);
}

/* Asks about every running attempt when a value may have moved another
 * run's line (a threshold, a median). */
void sw_engine__decide_others(sw_engine *e)
{
    uint64_t g;
    size_t i;

    if (!e->stopper ||
        (g = sw_stopper_generation(e->stopper)) == e->stop_generation)
        return;
    e->stop_generation = g;
    for (i = 0; i < e->n_slots; i++)
        sw_engine__decide(e, e->slots[i]);
}

void sw_engine__observe(sw_engine *e, sw_slot *s, int64_t step, double value)
{
    s->values++;
    sw_engine__promote_observe(e, s, step, value);
    sw_engine__pbt_observe(e, s, step, value);
    if (e->stopper) {
        sw_stopper_observe(e->stopper, s->rec.idx, value);
        sw_engine__fidelity_value(e, &s->rec, value); /* at a rung: told */
    }
}

void sw_engine__decide_all(sw_engine *e)
{
    sw_engine__decide_others(e);
    for (size_t i = 0; i < e->n_slots; i++)
        sw_engine__decide(e, e->slots[i]);
}
