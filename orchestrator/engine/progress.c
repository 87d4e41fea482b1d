/*
 * progress.c - what a person sees while a sweep runs, a consumer of the
 * engine's events: notices, on stdout or stderr by their level; on a
 * terminal one status line redrawn in place (finished, running, pending,
 * failed, the runs stopped early, the best value, the time); elsewhere
 * one plain line per ended attempt, and the status line once at the
 * end. --quiet leaves only the notices that are results and errors, and
 * that last line. The engine's only file that prints.
 */
#include <math.h>
#include <stdio.h>

#include "orchestrator/engine/engine_internal.h"

#define PROGRESS_S 0.25 /* how often a terminal's status line is redrawn */

static void report_end(const sw_engine *e, const sw_run_rec *r)
{
    if (e->quiet || e->tty)
        return;
    printf("run %s %s", r->id, sw_run_state_name(r->state));
    if (r->reason)
        printf(" (%s)", r->reason);
    if (r->has_value)
        printf(" %s=%g", e->spec->metric.name, r->value);
    printf("\n");
    fflush(stdout);
}

static void notice(const sw_engine *e, sw_notice_level level, const char *text)
{
    bool out = level == SW_NOTICE_RESULT || level == SW_NOTICE_INFO;

    if (e->quiet && (level == SW_NOTICE_INFO || level == SW_NOTICE_WARN))
        return;
    fprintf(out ? stdout : stderr, "%s\n", text);
    if (out)
        fflush(stdout);
}

static void format_elapsed(char *out, size_t n, double secs)
{
    long t = (long)secs;

    if (t >= 3600)
        snprintf(out, n, "%ldh%02ldm%02lds", t / 3600, t / 60 % 60, t % 60);
    else
        snprintf(out, n, "%ldm%02lds", t / 60, t % 60);
}

/* Trials not started yet: those the search still holds (when it is
 * bounded; none once no more will start: run_cap, a spent budget) plus
 * retries waiting for a slot. */
static void print_pending(const sw_engine *e)
{
    uint64_t left;

    if (e->search_done) {
        printf("%zu pending", e->qlen);
        return;
    }
    if (!e->size_bounded || e->size_saturated) {
        printf("%zu+ pending", e->qlen);
        return;
    }
    left = e->size_count > e->next_idx ? e->size_count - e->next_idx : 0;
    printf("%llu pending", (unsigned long long)(left + e->qlen));
}

/* ", 3 queued (Resources, 1m20s)": the jobs waiting in Slurm's queue,
 * the reason of the one that has waited longest, and how long. */
static void print_queued(const sw_engine *e, double now_wall)
{
    const sw_slot *oldest = NULL;
    char waited[32];
    size_t i, n = 0;

    for (i = 0; i < e->n_slots; i++) {
        const sw_slot *s = e->slots[i];

        if (!sw_engine__started(s) || !s->queued)
            continue;
        n++;
        if (!oldest || s->rec.started_at < oldest->rec.started_at)
            oldest = s;
    }
    if (n == 0)
        return;
    format_elapsed(waited, sizeof(waited),
                   fmax(0, now_wall - oldest->rec.started_at));
    printf(", %zu queued (%s, %s)", n,
           oldest->rec.pending_reason ? oldest->rec.pending_reason : "None",
           waited);
}

/* One status line, redrawn in place on a terminal. */
static void status_line(sw_engine *e, bool final)
{
    double now = sw_clock_mono(e->clock);
    char elapsed[32];

    if (e->quiet || (!e->tty && !final) ||
        (!final && now < e->last_progress + PROGRESS_S))
        return;
    e->last_progress = now;
    format_elapsed(elapsed, sizeof(elapsed), now - e->t0);
    printf("%s%zu finished, %zu running", e->tty ? "\r\033[K" : "", e->done,
           sw_engine__count_started(e) - sw_engine__count_queued(e));
    print_queued(e, sw_clock_wall(e->clock));
    printf(", ");
    print_pending(e);
    if (e->stopped)
        printf(", %zu stopped early", e->stopped);
    printf(", %zu failed", e->failed);
    if (e->canceled)
        printf(", %zu canceled", e->canceled);
    if (e->has_best)
        printf(", best %s=%g (%s)", e->spec->metric.name, e->best, e->best_run);
    printf(", %s%s", elapsed, final ? "\n" : "");
    fflush(stdout);
}

int sw_engine__progress_event(void *engine, const sw_event *ev)
{
    sw_engine *e = engine;

    switch (ev->kind) {
    case SW_EV_RUN:
        if (ev->end)
            report_end(e, ev->run);
        break;
    case SW_EV_NOTICE:
        notice(e, ev->level, ev->text);
        break;
    case SW_EV_TICK:
        status_line(e, ev->final);
        break;
    default:
        break;
    }
    return SW_OK;
}
