/*
 * resume.c - picking a sweep up where it stopped: the store's runs are
 * replayed into the engine's counts and the search (so an adaptive search
 * knows every result), attempts that kept running while `sweep` was down
 * are re-adopted from their pid files, and runs that never started or
 * were interrupted are queued to run again. Nothing finished runs twice.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "orchestrator/engine_internal.h"

/* Reads an attempt's pid file ("supervisor trial-pgid"); false when it
 * is not there (yet). */
static bool read_pidfile(const char *dir, int64_t *pid, int64_t *pgid)
{
    char *path = sw_aprintf("%s/pid", dir);
    long long a = 0, b = 0;
    FILE *f = fopen(path, "r");
    bool ok = false;

    free(path);
    if (!f)
        return false;
    if (fscanf(f, "%lld %lld", &a, &b) == 2 && a > 0 && b > 0) {
        *pid = a;
        *pgid = b;
        ok = true;
    }
    fclose(f);
    return ok;
}

/* The pid file of an attempt the store says was launching when `sweep`
 * stopped. Its supervisor may still be starting: wait for it a little. */
static bool find_supervisor(const sw_slot *s, int64_t *pid, int64_t *pgid)
{
    struct timespec ts = {0, 10 * 1000 * 1000};
    int i;

    for (i = 0; i < 200; i++) { /* 2 s */
        if (read_pidfile(s->run_dir, pid, pgid))
            return true;
        if (access(s->run_dir, F_OK) != 0)
            return false; /* the launch never got that far */
        nanosleep(&ts, NULL);
    }
    return false;
}

/* Resume: what to do with each run the store holds. */
static int adopt_or_queue(sw_engine *e, sw_run_rec *r)
{
    sw_slot *s;

    if (r->state == SW_RUN_PENDING ||
        (r->state == SW_RUN_CANCELED && r->reason &&
         strcmp(r->reason, "interrupted") == 0)) {
        r->state = SW_RUN_PENDING;
        sw_grow(&e->queue, &e->qcap, e->qlen + 1, sizeof(sw_run_rec));
        e->queue[e->qlen++] = *r;
        return SW_OK;
    }
    s = sw_engine__free_slot(e);
    s->rec = *r;
    s->active = true;
    sw_engine__slot_paths(e, s);
    if (!s->rec.pid || !s->rec.pgid)
        find_supervisor(s, &s->rec.pid, &s->rec.pgid);
    s->job.pid = s->rec.pid;
    s->job.pgid = s->rec.pgid;
    if (!s->job.pid) {
        /* Never started: no supervisor wrote its pid file in 2 s. The
         * next launch takes the next attempt number. */
        s->active = false;
        sw_engine__requeue(e, s);
        sw_engine__slot_clear(s);
    }
    return SW_OK;
}

/* Resume: the store's runs, replayed into the counts, the search (so it
 * goes on from where it was, knowing every result) and the slots. */
int sw_engine__restore(sw_engine *e)
{
    sw_run_rec *runs = NULL, *r;
    size_t i, n = 0, rerun = 0;
    bool gave_up = strcmp(e->sweep.state, "failed") == 0;
    int error = sw_store_list_runs(e->st, e->sweep.id, &runs, &n);
    bool interrupted;

    for (i = 0; !error && i < n; i++) {
        r = &runs[i];
        if ((uint64_t)r->idx + 1 > e->next_idx)
            e->next_idx = (uint64_t)r->idx + 1;
        interrupted = r->state == SW_RUN_CANCELED && r->reason &&
                      strcmp(r->reason, "interrupted") == 0;
        /* A sweep that gave up (its first runs all failed) is resumed
         * once its command is fixed: those runs go again. */
        if (interrupted || (gave_up && r->state == SW_RUN_FAILED)) {
            r->state = SW_RUN_PENDING;
            interrupted = false;
            rerun++;
        }
        e->done += r->state == SW_RUN_FINISHED;
        e->failed += r->state == SW_RUN_FAILED;
        e->stopped += r->state == SW_RUN_STOPPED;
        e->canceled += r->state == SW_RUN_CANCELED && !interrupted;
        if (r->state == SW_RUN_FINISHED)
            sw_engine__note_value(e, r);
        sw_engine__tell_search(e, r,
                               r->state == SW_RUN_FINISHED ||
                                   r->state == SW_RUN_FAILED ||
                                   r->state == SW_RUN_STOPPED);
        if (r->state == SW_RUN_PENDING || r->state == SW_RUN_RUNNING) {
            error = adopt_or_queue(e, r);
            memset(r, 0, sizeof(*r));
        }
        sw_run_rec_dispose(r);
    }
    free(runs);
    if (rerun && !e->quiet)
        printf("sweep %s: %zu interrupted or failed runs go again\n",
               e->sweep.id, rerun);
    return error;
}
