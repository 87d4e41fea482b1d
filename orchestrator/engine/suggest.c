/*
 * suggest.c - the engine's side of the search: a suggestion runs on the
 * worker pool, one at a time, and while it does the search is not
 * touched: what the engine learns meanwhile (a run's end, a run in
 * flight) is held and told to it when the suggestion is back, in order.
 * The search itself (search/) is pure and knows nothing of this.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "orchestrator/engine/engine_internal.h"
#include "sweeps/json.h"

/* The run as the search knows it: its index and parameters. */
static int trial_of(const sw_run_rec *r, sw_trial *t)
{
    sw_trial_init(t);
    if (sw_json_parse(&t->params, r->params, strlen(r->params)) != SW_OK)
        return sw_error_set(SW_EIO,
                            "run %s: its stored params are not JSON: %s", r->id,
                            sw_error_last());
    t->index = (uint64_t)r->idx;
    snprintf(t->id, sizeof(t->id), "%s", r->cell);
    return SW_OK;
}

static void apply_tell(sw_engine *e, sw_tell *t)
{
    int error = t->ended ? sw_search_observe(e->search, &t->trial, t->value)
                         : sw_search_pending(e->search, &t->trial);

    if (error)
        sw_engine__notice(e, SW_NOTICE_ERROR, "sweep: trial %llu: %s",
                          (unsigned long long)t->trial.index, sw_error_last());
    sw_trial_dispose(&t->trial);
}

/* Tells the search how a run ended (`ended`: its value, NaN for a failed
 * run or one without one) or that it is in flight; held while the search
 * is busy with a suggestion. A search that cannot take it (a run from
 * outside its space) is warned about, not fatal. */
void sw_engine__tell_search(sw_engine *e, const sw_run_rec *r, bool ended)
{
    sw_tell t;

    sw_engine__fidelity_replay(e, r); /* its rung values, from the store */
    t.ended = ended;
    t.value = r->state == SW_RUN_FINISHED || r->state == SW_RUN_STOPPED ||
                      r->state == SW_RUN_PAUSED
                  ? (r->has_value ? r->value : NAN)
                  : NAN;
    if (trial_of(r, &t.trial) != SW_OK) {
        sw_engine__notice(e, SW_NOTICE_ERROR, "sweep: %s", sw_error_last());
        sw_trial_dispose(&t.trial);
        return;
    }
    if (!e->suggesting) {
        apply_tell(e, &t);
        return;
    }
    sw_grow(&e->tells, &e->cap_tells, e->n_tells + 1, sizeof(sw_tell));
    e->tells[e->n_tells++] = t;
}

void sw_engine__read_size(sw_engine *e)
{
    sw_search_size(e->search, &e->size_count, &e->size_bounded,
                   &e->size_saturated);
}

/* On a worker thread: the search's next trial. */
static void suggest_run(sw_engine_work *w)
{
    sw_suggest_work *sg = (sw_suggest_work *)w;

    sg->error = sw_search_next(sg->e->search, &sg->trial);
    sg->message =
        sg->error && sg->error != SW_EDONE ? sw_strdup(sw_error_last()) : NULL;
}

static void suggest_done(sw_engine *e, sw_engine_work *w)
{
    sw_suggest_work *sg = (sw_suggest_work *)w;
    size_t i;

    e->suggesting = false;
    for (i = 0; i < e->n_tells; i++)
        apply_tell(e, &e->tells[i]);
    e->n_tells = 0;
    sw_engine__fidelity_flush(e);
    sw_engine__read_size(e);
    if (sg->error == SW_EDONE)
        e->search_done = true;
    else if (sg->error)
        sw_engine__fatal(
            e, sw_error_set(sg->error, "the search: %s", sg->message));
    else if (!sw_engine__stopping(e))
        e->suggested = true; /* lifecycle.c makes it a run, and disposes */
    if (!e->suggested)
        sw_trial_dispose(&sg->trial);
    free(sg->message);
    sg->message = NULL;
}

void sw_engine__suggest(sw_engine *e)
{
    sw_suggest_work *sg = &e->suggest;

    memset(sg, 0, sizeof(*sg));
    sg->work.run = suggest_run;
    sg->work.done = suggest_done;
    sg->e = e;
    sw_trial_init(&sg->trial);
    e->suggesting = true;
    e->host.submit(e->host.ctx, &sg->work);
}
