/*
 * events.c - the engine's one event call: consumers subscribed in order
 * (engine.c subscribes the attempts table, the budget and the terminal
 * view; a dashboard or a test adds its own), and every event told to
 * each of them. The floor of the engine: it calls nothing else of it.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "orchestrator/engine/engine_internal.h"

void sw_engine__subscribe(sw_engine *e, sw_event_fn fn, void *ctx)
{
    sw_grow(&e->consumers, &e->cap_consumers, e->n_consumers + 1,
            sizeof(*e->consumers));
    e->consumers[e->n_consumers].fn = fn;
    e->consumers[e->n_consumers].ctx = ctx;
    e->n_consumers++;
}

void sw_engine__subscribe_first(sw_engine *e, sw_event_fn fn, void *ctx)
{
    sw_grow(&e->consumers, &e->cap_consumers, e->n_consumers + 1,
            sizeof(*e->consumers));
    memmove(e->consumers + 1, e->consumers,
            e->n_consumers * sizeof(*e->consumers));
    e->consumers[0].fn = fn;
    e->consumers[0].ctx = ctx;
    e->n_consumers++;
}

int sw_engine__emit(sw_engine *e, sw_event *ev)
{
    int error = SW_OK, rc;

    ev->sweep_id = e->sweep.id;
    ev->time = e->clock ? sw_clock_wall(e->clock) : 0;
    for (size_t i = 0; i < e->n_consumers; i++) {
        rc = e->consumers[i].fn(e->consumers[i].ctx, ev);
        error = error ? error : rc;
    }
    return error;
}

void sw_engine__notice(sw_engine *e, sw_notice_level level, const char *fmt,
                       ...)
{
    sw_event ev = {.kind = SW_EV_NOTICE, .level = level};
    char small[512], *text = small;
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(small, sizeof(small), fmt, ap);
    va_end(ap);
    if (n >= (int)sizeof(small)) {
        text = sw_malloc((size_t)n + 1);
        va_start(ap, fmt);
        vsnprintf(text, (size_t)n + 1, fmt, ap);
        va_end(ap);
    }
    ev.text = n >= 0 ? text : "";
    sw_engine__emit(e, &ev);
    if (text != small)
        free(text);
}
