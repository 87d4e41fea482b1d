/*
 * progress.c - what a person sees while a sweep runs: on a terminal one
 * status line redrawn in place (finished, running, pending, failed, the
 * runs stopped early, the best value, the time); elsewhere one plain line per
 * ended run, and the status line once at the end. --quiet leaves only that last
 * line.
 */
#include <stdio.h>

#include "orchestrator/engine/engine_internal.h"

#define PROGRESS_S 0.25 /* how often a terminal's status line is redrawn */

void sw_engine__report_end(sw_engine *e, const sw_slot *s)
{
    if (e->quiet || e->tty)
        return;
    printf("run %s %s", s->rec.id, sw_run_state_name(s->rec.state));
    if (s->rec.reason)
        printf(" (%s)", s->rec.reason);
    if (s->rec.has_value)
        printf(" %s=%g", e->spec->metric.name, s->rec.value);
    printf("\n");
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

/* One status line, redrawn in place on a terminal. */
void sw_engine__progress(sw_engine *e, bool final)
{
    double now = sw_clock_mono(e->clock);
    char elapsed[32];

    if (e->quiet || (!e->tty && !final) ||
        (!final && now < e->last_progress + PROGRESS_S))
        return;
    e->last_progress = now;
    format_elapsed(elapsed, sizeof(elapsed), now - e->t0);
    printf("%s%zu finished, %zu running, ", e->tty ? "\r\033[K" : "", e->done,
           sw_engine__count(e, SW_SLOT_RUNNING));
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
