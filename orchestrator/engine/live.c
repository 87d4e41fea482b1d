/*
 * live.c - the dashboard's live feed: a consumer of the engine's events
 * (events.h) that publishes each as one JSON line on the HTTP server's
 * event stream (metrics_server.h), and says where the dashboard is.
 *
 * Events are told after they are committed, so a page that loaded the
 * store and then follows the stream sees every change once or twice,
 * never not at all (site.c says how `seq` joins the two).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "orchestrator/engine/engine_internal.h"
#include "orchestrator/metrics_server.h"
#include "orchestrator/vocab.h"
#include "sweeps/buf.h"
#include "sweeps/value.h"

static void put_num(sw_buf *b, double v)
{
    if (isfinite(v))
        sw_float_write_json(b, v);
    else
        sw_buf_puts(b, "null");
}

/* A time: null for "not yet" (0). */
static void put_time(sw_buf *b, double t)
{
    if (t > 0)
        sw_buf_printf(b, "%.3f", t);
    else
        sw_buf_puts(b, "null");
}

static void put_str(sw_buf *b, const char *s)
{
    if (s)
        sw_json_write_string(b, s);
    else
        sw_buf_puts(b, "null");
}

/* A run as the API's runs list has it (site.c), without its step. */
static void put_run(sw_buf *b, const sw_run_rec *r)
{
    sw_buf_puts(b, "{\"id\": ");
    put_str(b, r->id);
    sw_buf_printf(b, ", \"idx\": %lld, \"state\": \"%s\", \"params\": %s",
                  (long long)r->idx, sw_run_state_name(r->state),
                  r->params ? r->params : "null");
    sw_buf_puts(b, ", \"value\": ");
    if (r->has_value)
        put_num(b, r->value);
    else
        sw_buf_puts(b, "null");
    sw_buf_printf(
        b, ", \"gpus\": %s, \"created_at\": ", r->gpus ? r->gpus : "null");
    put_time(b, r->created_at);
    sw_buf_puts(b, ", \"started_at\": ");
    put_time(b, r->started_at);
    sw_buf_puts(b, ", \"ended_at\": ");
    put_time(b, r->ended_at);
    sw_buf_puts(b, ", \"reason\": ");
    put_str(b, r->reason);
    if (r->has_exit)
        sw_buf_printf(b, ", \"exit_code\": %d", r->exit_code);
    else
        sw_buf_puts(b, ", \"exit_code\": null");
    sw_buf_printf(b, ", \"attempts\": %lld}", (long long)r->attempts);
}

static const char *level_name(sw_notice_level l)
{
    return l == SW_NOTICE_ERROR  ? "error"
           : l == SW_NOTICE_WARN ? "warn"
                                 : "info";
}

/* The event as JSON, and its name on the stream; NULL: not published
 * (ticks, which views that redraw need and a page does not). */
static const char *encode(sw_buf *b, const sw_event *ev)
{
    sw_buf_puts(b, "{\"sweep\": ");
    put_str(b, ev->sweep_id);
    sw_buf_puts(b, ", \"time\": ");
    put_time(b, ev->time);
    switch (ev->kind) {
    case SW_EV_RUN:
        sw_buf_printf(
            b, ", \"from\": \"%s\", \"run\": ", sw_run_state_name(ev->from));
        put_run(b, ev->run);
        sw_buf_puts(b, "}");
        return "run";
    case SW_EV_VALUE:
        sw_buf_puts(b, ", \"run\": ");
        put_str(b, ev->run ? ev->run->id : NULL);
        if (ev->step >= 0)
            sw_buf_printf(b, ", \"step\": %lld", (long long)ev->step);
        else
            sw_buf_puts(b, ", \"step\": null");
        sw_buf_puts(b, ", \"name\": ");
        put_str(b, ev->name);
        sw_buf_puts(b, ", \"value\": ");
        put_num(b, ev->value);
        sw_buf_puts(b, "}");
        return "value";
    case SW_EV_SWEEP:
        sw_buf_printf(b, ", \"state\": \"%s\"}",
                      sw_sweep_state_name(ev->sweep_state));
        return "sweep";
    case SW_EV_NOTICE:
        sw_buf_printf(b,
                      ", \"level\": \"%s\", \"text\": ", level_name(ev->level));
        put_str(b, ev->text);
        sw_buf_puts(b, "}");
        return "notice";
    case SW_EV_TICK:
        break;
    }
    return NULL;
}

int sw_engine__live_event(void *ctx, const sw_event *ev)
{
    sw_engine *e = ctx;
    sw_buf b = SW_BUF_INIT;
    const char *name;

    if (!e->server || ev->kind == SW_EV_TICK)
        return SW_OK;
    if ((name = encode(&b, ev)))
        sw_metrics_server_publish(e->server, name, sw_buf_cstr(&b));
    sw_buf_dispose(&b);
    return SW_OK;
}

void sw_engine__say_dashboard(sw_engine *e)
{
    char *where, *url;

    if (!e->server || !e->sweep.id)
        return;
    where = sw_aprintf("sweep/%s", e->sweep.id);
    url = sw_metrics_server_view_url(e->server, e->view_token, where);
    sw_engine__notice(e, SW_NOTICE_RESULT, "dashboard: %s", url);
    free(url);
    free(where);
}
