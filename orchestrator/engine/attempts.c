/*
 * attempts.c - the record of every attempt's end (the `attempts` table),
 * for `sweep report`: runs keep only their last attempt, and the GPU
 * time of a failed attempt that was retried is counted from here.
 *
 * Called by finish() (lifecycle.c) once it has decided what the end
 * means for the run, so the outcome follows from the state the run went
 * to, and from how the attempt ended (it could not start; it was lost;
 * it ran out of time). The row is keyed by (run, attempt), so an
 * end recorded twice (a resume that finds it again) is one row.
 */
#include <string.h>

#include "orchestrator/engine/engine_internal.h"

/* What the attempt came to, as finish() decided it: the run's state for
 * a stopped, canceled or finished one; else how it ended. */
static const char *outcome(const sw_slot *s, bool started, bool lost)
{
    switch (s->rec.state) {
    case SW_RUN_FINISHED:
        return "finished";
    case SW_RUN_STOPPED:
        return "stopped";
    case SW_RUN_CANCELED:
        return "canceled";
    default:
        break;
    }
    if (!started)
        return "not started";
    if (s->why && strcmp(s->why, "timeout") == 0)
        return "timeout";
    if (lost)
        return "lost";
    return "failed";
}

void sw_engine__first_step(sw_slot *s, int64_t step)
{
    if (s->first_step == -1 && step >= 0)
        s->first_step = step;
}

int sw_engine__put_attempt(sw_engine *e, const sw_slot *s, bool started,
                           bool lost)
{
    sw_attempt_rec a;

    memset(&a, 0, sizeof(a));
    a.run_id = s->rec.id;
    a.attempt = s->rec.attempts;
    a.started_at = s->rec.started_at;
    a.ended_at = s->rec.ended_at;
    a.outcome = (char *)outcome(s, started, lost);
    a.reason = s->rec.reason;
    a.has_exit = s->rec.has_exit;
    a.exit_code = s->rec.exit_code;
    a.signal = s->rec.signal;
    a.gpus = s->rec.gpus;
    a.gpu = sw_engine__gpus_held(e, s);
    a.has_first_step = s->first_step >= 0;
    a.first_step = s->first_step;
    sw_engine__budget_count(e, a.started_at, a.ended_at, a.gpu);
    return sw_store_put_attempt(e->st, &a);
}
