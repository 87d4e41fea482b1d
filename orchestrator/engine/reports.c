/*
 * reports.c - live metrics and early stopping: reports from the metrics
 * server committed in groups, and the stopping rule fed every committed
 * value of the sweep's metric, deciding on every report.
 *
 * A report is answered 200 only after its values are committed. All the
 * reports waiting when the loop wakes commit in one transaction (group
 * commit), so that safety costs one commit per wake, not one per report.
 * The rule sees only committed values, in the order they were committed
 * (the metrics table's rowid), so `sweep resume` rebuilds it from the
 * store and goes on deciding exactly as before the crash.
 *
 * Stopping: the answer to the report that crossed the line says
 * {"stop": true}, and so does every later answer. A trial that reports
 * over HTTP has early_terminate.grace seconds to exit on its own; one that
 * only writes @metrics lines cannot be answered and gets SIGTERM at once.
 * Either way its run ends `stopped` (lifecycle.c).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "orchestrator/engine/contract.h"
#include "orchestrator/engine/engine_internal.h"
#include "orchestrator/metrics_server.h"
#include "search/stopping.h"

/* ---- the stopping rule ---------------------------------------------- */

static int replay(void *ctx, int64_t idx, double value)
{
    sw_stopper_observe(ctx, idx, value);
    return 0;
}

int sw_engine__make_stopper(sw_engine *e)
{
    const sw_early_terminate *et = &e->spec->early_terminate;
    int error;

    if (et->rule == SW_STOP_NONE || !e->spec->metric.name || e->stopper)
        return SW_OK;
    error = sw_stopper_new(&e->stopper, et,
                           e->spec->metric.goal == SW_GOAL_MAXIMIZE);
    if (!error && e->resuming)
        error = sw_store_metric_history(
            e->st, e->sweep.id, e->spec->metric.name, replay, e->stopper);
    e->stop_generation = e->stopper ? sw_stopper_generation(e->stopper) : 0;
    return error;
}

/* Asks the rule about the attempt in `s`, once it runs. */
static void decide(sw_engine *e, sw_slot *s)
{
    sw_buf why = SW_BUF_INIT;
    double grace = e->spec->early_terminate.grace;

    if (!e->stopper || s->stop || s->phase == SW_SLOT_CAPTURE ||
        !sw_stopper_should_stop(e->stopper, s->rec.idx))
        return;
    s->stop = true;
    /* a trial that only prints cannot be answered: SIGTERM at once */
    s->stop_at = sw_clock_mono(e->clock) + (s->http ? grace : 0);
    if (!e->quiet) {
        sw_stopper_explain(e->stopper, s->rec.idx, &why);
        printf("sweep %s: run %s stops early: %s\n", e->sweep.id, s->rec.id,
               sw_buf_cstr(&why));
    }
    sw_buf_dispose(&why);
}

/* Asks about every running attempt when a value may have moved another
 * run's line (a threshold, a median). */
static void decide_others(sw_engine *e)
{
    uint64_t g;
    size_t i;

    if (!e->stopper ||
        (g = sw_stopper_generation(e->stopper)) == e->stop_generation)
        return;
    e->stop_generation = g;
    for (i = 0; i < e->n_slots; i++)
        decide(e, e->slots[i]);
}

void sw_engine__observe(sw_engine *e, sw_slot *s, double value)
{
    if (e->stopper)
        sw_stopper_observe(e->stopper, s->rec.idx, value);
}

void sw_engine__decide(sw_engine *e, sw_slot *s)
{
    decide(e, s);
    decide_others(e);
}

/* ---- the server ----------------------------------------------------- */

/* The port the adopted attempts were last told to report to, so that a
 * resumed sweep is found where its trials look; 0: none. */
static int previous_port(const sw_engine *e)
{
    char *path, buf[512], *p;
    FILE *f;
    size_t i, n;
    long port = 0;

    for (i = 0; i < e->n_slots && port <= 0; i++) {
        path = sw_aprintf("%s/metrics_url", e->slots[i]->run_dir);
        f = fopen(path, "re");
        free(path);
        if (!f)
            continue;
        n = fread(buf, 1, sizeof(buf) - 1, f);
        fclose(f);
        buf[n] = '\0';
        if ((p = strstr(buf, "://")) && (p = strchr(p + 3, ':')))
            port = strtol(p + 1, NULL, 10);
    }
    return port > 0 && port < 65536 ? (int)port : 0;
}

char *sw_engine__metrics_url(const sw_engine *e, const sw_slot *s)
{
    return e->server ? sw_metrics_server_run_url(e->server, s->rec.id) : NULL;
}

void sw_engine__grant(sw_engine *e, sw_slot *s)
{
    if (e->server && s->token)
        sw_metrics_server_allow(e->server, s->rec.id, s->token);
}

void sw_engine__revoke(sw_engine *e, sw_slot *s)
{
    if (e->server && s->token)
        sw_metrics_server_revoke(e->server, s->rec.id);
}

/* An adopted attempt keeps its token; its metrics_url file says where
 * the server is now. */
static void readopt(sw_engine *e, sw_slot *s)
{
    char *url, *path;

    if (!s->token)
        s->token = sw_contract_read_token(s->run_dir);
    if (!s->token)
        return; /* from before metrics over HTTP: stdout only */
    sw_engine__grant(e, s);
    url = sw_engine__metrics_url(e, s);
    path = sw_aprintf("%s/metrics_url", s->run_dir);
    if (sw_contract_write_file(path, url) != SW_OK && !e->quiet)
        fprintf(stderr, "sweep: %s\n", sw_error_last());
    free(path);
    free(url);
}

int sw_engine__start_server(sw_engine *e, const char *listen)
{
    sw_metrics_server_opts o = SW_METRICS_SERVER_OPTS_INIT;
    size_t i;
    int error;

    o.listen = listen;
    o.prefer_port = listen ? 0 : previous_port(e);
    if ((error = sw_metrics_server_start(&e->server, &o)) != SW_OK)
        return error;
    for (i = 0; i < e->n_slots; i++)
        readopt(e, e->slots[i]);
    decide_others(e);
    for (i = 0; i < e->n_slots; i++)
        decide(e, e->slots[i]); /* adopted ones the rule had stopped */
    return SW_OK;
}

/* ---- reports -------------------------------------------------------- */

/* The attempt a report writes to: its run's, launched or running. A
 * report queued just before its attempt ended finds none. */
static sw_slot *target(const sw_engine *e, const sw_metrics_report *r)
{
    sw_slot *s = sw_engine__find_slot(e, sw_metrics_report_run(r));

    return s && s->phase != SW_SLOT_CAPTURE && s->token ? s : NULL;
}

/* Stores one report's values, each once (a report sent again after its
 * answer was lost has the same steps), notes in the slot its run's latest
 * value of the metric, to be stored once for the whole group, and shows
 * the rule each new value of the metric. A failed commit ends the sweep,
 * so the rule never acts on what it saw here uncommitted. */
static int store_report(sw_engine *e, sw_slot *s, const sw_metric_batch *b,
                        double now)
{
    const char *name = e->spec->metric.name;
    const sw_metric_point *p;
    size_t i;
    int rc = SW_OK;

    for (i = 0; rc >= 0 && i < b->len; i++) {
        p = &b->items[i];
        sw_engine__first_step(s, p->step);
        rc = sw_store_put_metric_once(e->st, s->rec.id, p->step, p->name,
                                      p->value, now);
        if (rc != 1 || !name || strcmp(name, p->name) != 0)
            continue;
        s->rec.has_value = s->value_changed = true;
        s->rec.value = p->value;
        sw_engine__observe(e, s, p->value);
    }
    return rc < 0 ? rc : SW_OK;
}

/* The runs whose value the group changed, each stored once. */
static int store_values(sw_engine *e)
{
    size_t i;
    int error = SW_OK;

    for (i = 0; i < e->n_slots; i++) {
        if (!error && e->slots[i]->value_changed)
            error = sw_store_update_run(e->st, &e->slots[i]->rec);
        e->slots[i]->value_changed = false;
    }
    return error;
}

/* One transaction for every report taken. On failure nothing is
 * committed; the slots' values may be ahead of the store, which no longer
 * matters: a store error ends the sweep. */
static int commit_reports(sw_engine *e, sw_metrics_report *head)
{
    double now = sw_clock_wall(e->clock);
    sw_metrics_report *r;
    sw_slot *s;
    int error = sw_store_begin(e->st);

    for (r = head; !error && r; r = sw_metrics_report_next(r))
        if ((s = target(e, r)))
            error = store_report(e, s, sw_metrics_report_batch(r), now);
    if (!error)
        error = store_values(e);
    if (!error)
        error = sw_store_commit(e->st);
    if (error)
        sw_store_rollback(e->st);
    return error;
}

/* After the commit: the rule decides on each report's run, then each
 * report is answered. */
static void answer_reports(sw_engine *e, sw_metrics_report *head)
{
    sw_metrics_report *r, *next;
    sw_slot *s;
    char msg[256];

    for (r = head; r; r = sw_metrics_report_next(r)) {
        if (!(s = target(e, r)))
            continue;
        s->http = s->proven = true;
        sw_engine__note_value(e, &s->rec);
        decide(e, s);
    }
    decide_others(e);
    for (r = head; r; r = next) {
        next = sw_metrics_report_next(r);
        if ((s = target(e, r))) {
            sw_metrics_report_answer(r, 200, s->stop, NULL);
            continue;
        }
        snprintf(msg, sizeof(msg), "run %s is not running",
                 sw_metrics_report_run(r));
        sw_metrics_report_answer(r, 409, true, msg);
    }
    sw_metrics_server_flush(e->server);
}

static void refuse_all(sw_engine *e, sw_metrics_report *head, const char *why)
{
    sw_metrics_report *r, *next;

    for (r = head; r; r = next) {
        next = sw_metrics_report_next(r);
        sw_metrics_report_answer(r, 503, false, why);
    }
    sw_metrics_server_flush(e->server);
}

int sw_engine__serve(sw_engine *e)
{
    sw_metrics_report *head;
    int error;

    if (!e->server || !(head = sw_metrics_server_take(e->server)))
        return SW_OK;
    if (e->result) {
        refuse_all(e, head, "sweep cannot record metrics now; retry");
        return e->result;
    }
    if ((error = commit_reports(e, head)) != SW_OK) {
        refuse_all(e, head, "sweep cannot record metrics now; retry");
        return sw_engine__fatal(e, error);
    }
    answer_reports(e, head);
    return SW_OK;
}
