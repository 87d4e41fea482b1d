/*
 * attempts.c - the record of every attempt's end (the `attempts` table),
 * for `sweep report`: runs keep only their last attempt, and the GPU
 * time of a failed attempt that was retried is counted from here.
 *
 * A consumer of the engine's events: told an attempt's end with the
 * state change finish() (lifecycle.c) decided for its run, so the
 * outcome follows from the state the run went to, and from how the
 * attempt ended (it could not start; it was lost; it ran out of time). The row
 * is keyed by (run, attempt), so an end recorded twice (a resume that finds it
 * again) is one row.
 */
#include <string.h>

#include "orchestrator/engine/engine_internal.h"

/* What the attempt came to, as finish() decided it: the run's state for
 * a stopped, canceled or finished one; else how it ended. */
static sw_outcome outcome(const sw_run_rec *r, const sw_attempt_end *end)
{
    switch (r->state) {
    case SW_RUN_FINISHED:
        return SW_OUTCOME_FINISHED;
    case SW_RUN_STOPPED:
        return SW_OUTCOME_STOPPED;
    case SW_RUN_CANCELED:
        return SW_OUTCOME_CANCELED;
    case SW_RUN_PAUSED:
        return SW_OUTCOME_PAUSED;
    default:
        break;
    }
    if (!end->started)
        return SW_OUTCOME_NOT_STARTED;
    if (end->timeout)
        return SW_OUTCOME_TIMEOUT;
    if (end->disk)
        return SW_OUTCOME_DISK;
    if (end->lost)
        return SW_OUTCOME_LOST;
    return SW_OUTCOME_FAILED;
}

void sw_engine__first_step(sw_slot *s, int64_t step)
{
    if (s->first_step == -1 && step >= 0)
        s->first_step = step;
}

int sw_engine__attempts_event(void *engine, const sw_event *ev)
{
    const sw_run_rec *r = ev->run;
    sw_engine *e = engine;
    sw_attempt_rec a;

    if (ev->kind != SW_EV_RUN || !ev->end)
        return SW_OK;
    memset(&a, 0, sizeof(a));
    a.run_id = r->id;
    a.attempt = r->attempts;
    a.started_at = r->started_at;
    a.ended_at = r->ended_at;
    a.outcome = (char *)sw_outcome_name(outcome(r, ev->end));
    a.reason = r->reason;
    a.has_exit = r->has_exit;
    a.exit_code = r->exit_code;
    a.signal = r->signal;
    a.gpus = r->gpus;
    a.gpu = ev->end->gpu;
    a.has_first_step = ev->end->first_step >= 0;
    a.first_step = ev->end->first_step;
    a.job = r->job;
    a.has_queued = r->has_queued;
    a.queued_seconds = r->queued_seconds;
    return sw_store_put_attempt(e->st, &a);
}
