/*
 * ingest.c - the one way a trial's values come in, whether it printed
 * them (`@metrics` lines, output.c) or posted them (reports.c): each
 * value stored once per (run, step, name), the run's latest value of the
 * sweep's metric kept in its slot and shown to the stopping rule, and,
 * once the caller's transaction is committed, each stored value told as
 * an event and the rule asked about the runs it came to.
 *
 * A value the store already has (a report sent again after its answer
 * was lost; an HTTP value spilled to stdout by a client at exit) is not
 * stored again, and not told again.
 *
 * A value's time is when it came in, unless the trial said when it
 * logged it (`_timestamp`, as W&B's wandb.log records): then that, held
 * between its attempt's start and now, so a batch of reports (or lines
 * read in one pass) keeps each one's own time and a trial's wrong clock
 * cannot put a value outside its attempt. "Now", for the lines read
 * after the attempt's end was seen (the rest of its output, drained), is
 * its end: they were written before it.
 */
#include <string.h>

#include "orchestrator/engine/engine_internal.h"

static void touch(sw_engine *e, sw_slot *s)
{
    for (size_t i = 0; i < e->n_touched; i++)
        if (e->touched[i] == s)
            return;
    sw_grow(&e->touched, &e->cap_touched, e->n_touched + 1,
            sizeof(*e->touched));
    e->touched[e->n_touched++] = s;
}

static double time_of(const sw_slot *s, const sw_metric_point *p, double now)
{
    /* read once its attempt had ended (its last lines, drained): it was
     * there before the end, whenever the end was seen first */
    if (s->phase == SW_SLOT_ENDED && s->end.at > 0 && now > s->end.at)
        now = s->end.at;
    if (p->time <= 0 || p->time >= now)
        return now;
    return p->time > s->rec.started_at ? p->time : s->rec.started_at;
}

static void keep(sw_engine *e, const sw_slot *s, const sw_metric_point *p)
{
    sw_grow(&e->ingested, &e->cap_ingested, e->n_ingested + 1,
            sizeof(*e->ingested));
    e->ingested[e->n_ingested].slot = s;
    e->ingested[e->n_ingested].point = p;
    e->n_ingested++;
}

int sw_engine__ingest(sw_engine *e, sw_slot *s, const sw_metric_batch *b,
                      double now, bool *changed)
{
    const char *name = e->spec->metric.name;
    const sw_metric_point *p;
    int rc = SW_OK;

    if (b->len > 0)
        touch(e, s);
    for (size_t i = 0; rc >= 0 && i < b->len; i++) {
        p = &b->items[i];
        sw_engine__first_step(s, p->step);
        rc = sw_store_put_metric_once(e->st, s->rec.id, p->step, p->name,
                                      p->value, time_of(s, p, now));
        if (rc != 1)
            continue;
        keep(e, s, p);
        if (!name || strcmp(name, p->name) != 0)
            continue;
        s->rec.has_value = *changed = true;
        s->rec.value = p->value;
        sw_engine__observe(e, s, p->step, p->value);
    }
    return rc < 0 ? rc : SW_OK;
}

void sw_engine__ingested(sw_engine *e)
{
    sw_event ev = {.kind = SW_EV_VALUE};
    size_t i;
    sw_slot *s;

    for (i = 0; i < e->n_ingested; i++) {
        ev.run = &e->ingested[i].slot->rec;
        ev.step = e->ingested[i].point->step;
        ev.name = e->ingested[i].point->name;
        ev.value = e->ingested[i].point->value;
        sw_engine__emit(e, &ev);
    }
    for (i = 0; i < e->n_touched; i++) {
        s = e->touched[i];
        s->proven = true; /* it got as far as reporting */
        sw_engine__note_value(e, &s->rec);
        sw_engine__decide(e, s);
    }
    sw_engine__decide_others(e);
    sw_engine__forget(e);
}

void sw_engine__forget(sw_engine *e)
{
    e->n_ingested = 0;
    e->n_touched = 0;
}
