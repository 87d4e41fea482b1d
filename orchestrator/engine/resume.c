/*
 * resume.c - picking a sweep up where it stopped: the store's runs are
 * replayed into the engine's counts and the search (so an adaptive search
 * knows every result), attempts that kept running while `sweep` was down
 * are handed back to the executor through their job handles, and runs
 * that never started or were interrupted are queued to run again. Nothing
 * finished runs twice, and nothing here waits: what the executor finds
 * comes back as events.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "orchestrator/engine/contract.h"
#include "orchestrator/engine/engine_internal.h"

/* A run id from <dir>/NAME (lifecycle.c writes them): "worker", the run
 * whose process a long-lived worker's attempt runs in (NULL: its own);
 * "asked_from", the run that worker asked from for it. */
static char *run_file(const char *dir, const char *name)
{
    char *path = sw_aprintf("%s/%s", dir, name), buf[256];
    FILE *f = fopen(path, "re");
    size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;

    if (f)
        fclose(f);
    free(path);
    buf[n] = '\0';
    return n > 0 && !memchr(buf, '/', n) ? sw_strdup(buf) : NULL;
}

/* Resume: what to do with each run the store holds that has not ended.
 * A pending run goes on the queue; a running one is handed to the
 * executor with its job handle (none when its launch was never
 * answered: the executor then finds out whether it started). */
static int adopt_or_queue(sw_engine *e, sw_run_rec *r)
{
    sw_slot *s;
    char *dir, *worker, *wdir;
    int error;

    if (r->state == SW_RUN_PENDING) {
        sw_engine__enqueue(e, r);
        return SW_OK;
    }
    dir = sw_contract_run_dir(e->home, r->id);
    worker = run_file(dir, "worker");
    if (worker && !r->job) { /* handed to a worker that never heard */
        free(worker);
        free(dir);
        sw_engine__enqueue(e, r);
        return SW_OK;
    }
    wdir = worker ? sw_contract_run_dir(e->home, worker) : NULL;
    error = sw_executor_adopt(e->ex, worker ? worker : r->id,
                              worker ? wdir : dir, r->job);
    free(wdir);
    if (error) {
        /* a handle this executor cannot read: run it again */
        sw_engine__notice(e, SW_NOTICE_ERROR,
                          "sweep: run %s cannot be adopted: %s", r->id,
                          sw_error_last());
        free(worker);
        free(dir);
        sw_engine__enqueue(e, r);
        return SW_OK;
    }
    s = sw_engine__new_slot(e);
    s->rec = *r;
    memset(r, 0, sizeof(*r));
    sw_engine__slot_named(e, s);
    s->run_dir = dir;
    s->job_key = worker; /* it runs in that run's process */
    if (worker) /* a kill may have come before the worker heard of it */
        s->asked_from = run_file(dir, "asked_from");
    e->job_keys = e->job_keys || worker;
    s->adopted = true;
    s->first_step = -2;
    s->proven = true; /* it ran before: no probation (lifecycle.c) */
    s->phase = s->rec.job ? SW_SLOT_RUNNING : SW_SLOT_LAUNCHING;
    /* a job still in Slurm's queue has not started: no deadline yet */
    s->queued = s->rec.pending_reason != NULL;
    s->deadline = s->queued ? 0 : sw_engine__deadline(e, &s->rec);
    sw_engine__gpus_adopt(e, s);      /* its devices count again */
    sw_engine__promote_adopted(e, s); /* at its rung: it pauses */
    return SW_OK;
}

/* Whether run `r` ended failed because its last attempt was lost. */
bool sw_engine__was_lost(const sw_run_rec *r)
{
    return r->state == SW_RUN_FAILED && sw_reason_is_lost(r->reason);
}

/* Whether the sweep has runs to finish although it is marked finished:
 * runs whose last attempt was lost. */
bool sw_engine__has_lost_runs(sw_engine *e)
{
    sw_run_rec *runs = NULL;
    size_t i, n = 0;
    bool lost = false;

    if (sw_store_list_runs(e->st, e->sweep.id, &runs, &n) != SW_OK)
        return false;
    for (i = 0; i < n; i++) {
        lost = lost || sw_engine__was_lost(&runs[i]);
        sw_run_rec_dispose(&runs[i]);
    }
    free(runs);
    return lost;
}

/* Resume: the store's runs, replayed into the counts, the search (so it
 * goes on from where it was, knowing every result) and the slots;
 * *rerun is how many of them go again (said by the caller, after the
 * dashboard's line). */
int sw_engine__restore(sw_engine *e, size_t *rerun_out)
{
    sw_run_rec *runs = NULL, *r;
    size_t i, n = 0, rerun = 0;
    bool gave_up = sw_sweep_state_is(e->sweep.state, SW_SWEEP_FAILED);
    int error = sw_store_list_runs(e->st, e->sweep.id, &runs, &n);
    bool interrupted;

    for (i = 0; !error && i < n; i++) {
        r = &runs[i];
        if ((uint64_t)r->idx + 1 > e->next_idx)
            e->next_idx = (uint64_t)r->idx + 1;
        interrupted =
            r->state == SW_RUN_CANCELED && r->reason &&
            strcmp(r->reason, sw_cancel_name(SW_CANCEL_INTERRUPTED)) == 0;
        /* A sweep that gave up (its first runs all failed) is resumed
         * once its command is fixed: those runs go again; so do runs
         * whose last attempt was lost, whatever the sweep's state. */
        if (interrupted || sw_engine__was_lost(r) ||
            (gave_up && r->state == SW_RUN_FAILED)) {
            r->state = SW_RUN_PENDING;
            interrupted = false;
            rerun++;
        }
        sw_engine__tally(e, r->state, false);
        if (r->state == SW_RUN_FINISHED)
            sw_engine__note_value(e, r);
        sw_engine__gpus_recall(e, r);
        sw_engine__tell_search(
            e, r,
            r->state == SW_RUN_FINISHED || r->state == SW_RUN_FAILED ||
                r->state == SW_RUN_STOPPED || r->state == SW_RUN_PAUSED);
        if (r->state == SW_RUN_PENDING || r->state == SW_RUN_RUNNING)
            error = adopt_or_queue(e, r);
        sw_run_rec_dispose(r);
    }
    free(runs);
    *rerun_out = rerun;
    return error;
}
