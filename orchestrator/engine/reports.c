/*
 * reports.c - live metrics over HTTP: the metrics server started for the
 * sweep, its reports committed in groups through ingest.c, and each
 * answered with the stopping rule's verdict (rule.c).
 *
 * A report is answered 200 only after its values are committed. All the
 * reports waiting when the loop wakes commit in one transaction (group
 * commit), so that safety costs one commit per wake, not one per report.
 * The answer to the report that crossed the rule's line says
 * {"stop": true}, and so does every later answer.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "orchestrator/engine/contract.h"
#include "orchestrator/engine/engine_internal.h"
#include "orchestrator/metrics_server.h"
#include "orchestrator/ui/site.h"
#include "sweeps/command.h"
#include "sweeps/json.h"

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

/* On a worker thread: the next attempt's metrics token, and where it
 * reports (the server's address never changes while it runs). */
int sw_engine__new_token(const sw_engine *e, sw_slot *s)
{
    char token[SW_CONTRACT_TOKEN_LEN + 1], *url, *path;
    int error;

    free(s->token);
    s->token = NULL;
    if (!e->server)
        return SW_OK;
    if ((error = sw_contract_new_token(token)) != SW_OK ||
        (error = sw_contract_write_token(s->run_dir, token)) != SW_OK)
        return error;
    s->token = sw_strdup(token);
    url = sw_engine__metrics_url(e, s);
    path = sw_aprintf("%s/metrics_url", s->run_dir);
    error = sw_contract_write_file(path, url);
    free(path);
    free(url);
    return error;
}

/* The answer to a worker's request for its next run: the run, and the
 * environment the trial contract gives it (docs/clients.md). */
char *sw_engine__next_run_json(const sw_slot *s, char **env)
{
    sw_buf b = SW_BUF_INIT;
    char *out = sw_aprintf("%s/stdout.log", s->run_dir);
    char *err = sw_aprintf("%s/stderr.log", s->run_dir);
    char *eq;
    size_t i;

    sw_buf_puts(&b, "{\"run\": {\"id\": ");
    sw_json_write_string(&b, s->rec.id);
    sw_buf_printf(&b, ", \"attempt\": %lld, \"params\": %s, ",
                  (long long)s->rec.attempts, s->rec.params);
    sw_buf_printf(&b, "\"stdout\": ");
    sw_json_write_string(&b, out);
    sw_buf_puts(&b, ", \"stderr\": ");
    sw_json_write_string(&b, err);
    sw_buf_puts(&b, ", \"env\": {");
    for (i = 0; env[i]; i++) {
        eq = strchr(env[i], '=');
        *eq = '\0';
        sw_buf_puts(&b, i ? ", " : "");
        sw_json_write_string(&b, env[i]);
        sw_buf_puts(&b, ": ");
        sw_json_write_string(&b, eq + 1);
        *eq = '=';
    }
    sw_buf_puts(&b, "}}}");
    free(out);
    free(err);
    return sw_buf_detach(&b);
}

/* The environment the trial contract gives the attempt in `s`. */
char **sw_engine__attempt_env(sw_engine *e, sw_slot *s)
{
    char *url = sw_engine__metrics_url(e, s);
    sw_contract c = {e->home,
                     e->sweep.id,
                     s->rec.id,
                     s->rec.attempts,
                     url,
                     s->token,
                     sw_engine__gpus_visible(e, s),
                     s->target};
    char **env = sw_contract_env(&c);

    free(url);
    return env;
}

char *sw_engine__next_run_again(sw_engine *e, sw_slot *b)
{
    char **env, *json;

    if (sw_engine__new_token(e, b) != SW_OK)
        return NULL;
    sw_engine__grant(e, b);
    env = sw_engine__attempt_env(e, b);
    json = sw_engine__next_run_json(b, env);
    sw_command_free(env);
    return json;
}

/* An adopted attempt keeps its token, which only its trial has: its
 * hash (s->token holds that for an adopted slot) is allowed before the
 * server listens, so its first post after a restart is never refused. */
static void readopt(sw_engine *e, sw_slot *s)
{
    char *dir, *hash;

    if (!s->token)
        s->token = sw_contract_read_token_hash(s->run_dir);
    if (s->token) /* none from before metrics over HTTP */
        sw_metrics_server_allow_hash(e->server, s->rec.id, s->token);
    if (!s->asked_from)
        return;
    /* its worker, if it never heard of it, asks again from that run */
    dir = sw_contract_run_dir(e->home, s->asked_from);
    if ((hash = sw_contract_read_token_hash(dir)))
        sw_metrics_server_allow_hash(e->server, s->asked_from, hash);
    free(hash);
    free(dir);
}

/* The answer naming b's run was lost in a kill: the worker asks again
 * from the run it served before, and is given b's run again; then that
 * run may write no more. */
static void answer_again(sw_engine *e, sw_slot *b, sw_metrics_report *r)
{
    char *json = sw_engine__next_run_again(e, b);

    if (json)
        sw_metrics_report_answer_json(r, json);
    else
        sw_metrics_report_answer(r, 503, false, "sweep cannot answer now");
    sw_metrics_server_flush(e->server);
    if (json) {
        sw_metrics_server_revoke(e->server, b->asked_from);
        free(b->asked_from);
        b->asked_from = NULL;
    }
    free(json);
}

/* The adopted attempt whose worker asked from `run` for it; NULL: none. */
static sw_slot *asked_from(const sw_engine *e, const char *run)
{
    for (size_t i = 0; run && i < e->n_slots; i++)
        if (e->slots[i]->asked_from &&
            strcmp(e->slots[i]->asked_from, run) == 0 &&
            e->slots[i]->phase != SW_SLOT_ENDED)
            return e->slots[i];
    return NULL;
}

/* Its metrics_url file says where the server is now. */
static void tell_url(sw_engine *e, sw_slot *s)
{
    char *url, *path;

    if (!s->token)
        return;
    url = sw_engine__metrics_url(e, s);
    path = sw_aprintf("%s/metrics_url", s->run_dir);
    if (sw_contract_write_file(path, url) != SW_OK)
        sw_engine__notice(e, SW_NOTICE_WARN, "sweep: %s", sw_error_last());
    free(path);
    free(url);
}

/* Before the first launch: trials that may run on other machines (an
 * executor that places them itself: Slurm) cannot reach a server on a
 * loopback address, so their HTTP reports would fail, and they would be
 * told to stop by nothing. Says what --listen to give. */
void sw_engine__warn_loopback(sw_engine *e)
{
    const char *listen = e->listen;
    char host[256] = "HOST";
    int port;

    if (!e->server || !e->ex || !sw_executor_places_gpus(e->ex) ||
        !sw_metrics_server_loopback(listen))
        return;
    port = sw_metrics_server_port(e->server);
    if (gethostname(host, sizeof(host) - 1) != 0)
        snprintf(host, sizeof(host), "HOST");
    sw_engine__notice(
        e, SW_NOTICE_WARN,
        "sweep: the metrics server listens on %s, a loopback address, but "
        "%s runs trials on other nodes: they cannot report over HTTP nor be "
        "told to stop early (only their @metrics lines arrive). Give "
        "--listen 0.0.0.0:%d, or this host's address the nodes reach "
        "(--listen %s:%d)",
        listen ? listen : "127.0.0.1", sw_executor_name(e->ex), port, host,
        port);
}

/* Off loopback, anyone who reaches the port could read the sweep: the
 * dashboard then asks for a token, printed with its URL. */
static int new_view_token(sw_engine *e)
{
    char token[SW_CONTRACT_TOKEN_LEN + 1];
    int error = sw_contract_new_token(token);

    if (!error)
        e->view_token = sw_strdup(token);
    return error;
}

int sw_engine__start_server(sw_engine *e, const char *listen)
{
    sw_metrics_server_opts o = SW_METRICS_SERVER_OPTS_INIT;
    size_t i;
    int error;

    o.listen = listen;
    o.prefer_port = listen ? 0 : previous_port(e);
    e->site = sw_site_new(sw_contract_home());
    o.get = sw_site_get;
    o.get_ctx = e->site;
    if (!sw_metrics_server_loopback(listen) &&
        (error = new_view_token(e)) != SW_OK)
        return error;
    o.view_token = e->view_token;
    if ((error = sw_metrics_server_new(&e->server, &o)) != SW_OK)
        return error;
    sw_engine__subscribe(e, sw_engine__live_event, e);
    for (i = 0; i < e->n_slots; i++)
        readopt(e, e->slots[i]);
    if ((error = sw_metrics_server_listen(e->server)) != SW_OK) {
        sw_metrics_server_free(e->server);
        e->server = NULL;
        return error;
    }
    for (i = 0; i < e->n_slots; i++)
        tell_url(e, e->slots[i]);
    sw_engine__decide_all(e); /* adopted ones the rule had stopped */
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

/* One transaction for every report taken, each report's values stored
 * once and its run's latest value of the metric once for the group. On
 * failure nothing is committed; the slots' values may be ahead of the
 * store, which no longer matters: a store error ends the sweep. */
static int commit_reports(sw_engine *e, sw_metrics_report *head)
{
    double now = sw_clock_wall(e->clock);
    sw_metrics_report *r;
    sw_slot *s;
    int error = sw_store_begin(e->st);

    for (r = head; !error && r; r = sw_metrics_report_next(r)) {
        if (sw_metrics_report_is_next(r) || !(s = target(e, r)))
            continue;
        s->http = s->proven = true; /* the rule gives it its grace */
        error = sw_engine__ingest(e, s, sw_metrics_report_batch(r), now,
                                  &s->value_changed);
    }
    if (!error)
        error = store_values(e);
    if (!error)
        error = sw_store_commit(e->st);
    if (error) {
        sw_store_rollback(e->st);
        sw_engine__forget(e);
    }
    return error;
}

void sw_engine__answer_next(sw_engine *e, sw_slot *s, const char *json)
{
    if (!s->next_req)
        return;
    sw_metrics_report_answer_json(s->next_req, json);
    s->next_req = NULL;
    sw_metrics_server_flush(e->server);
}

/* A worker asks for its next run: the request is held on its slot for
 * lifecycle.c, which answers it once it knows (a run made ready, or
 * none). Only an attempt that runs may ask, once at a time; one whose
 * start is not yet confirmed (adopted after a crash, its executor not
 * yet heard from) is held until it is; one the engine is stopping is
 * told there is none. */
static void hold_next(sw_engine *e, sw_slot *s, sw_metrics_report *r)
{
    char msg[256];
    sw_slot *b;

    if (!s && (b = asked_from(e, sw_metrics_report_run(r)))) {
        answer_again(e, b, r);
        return;
    }
    if (!s || (s->phase != SW_SLOT_LAUNCHING && !sw_engine__started(s)) ||
        s->next_req) {
        snprintf(msg, sizeof(msg), "run %s %s", sw_metrics_report_run(r),
                 s && s->next_req ? "already asked for its next run"
                                  : "is not running");
        sw_metrics_report_answer(r, 409, true, msg);
        return;
    }
    s->next_req = r;
    if ((s->phase != SW_SLOT_RUNNING && s->phase != SW_SLOT_LAUNCHING) ||
        s->cancel)
        sw_engine__answer_next(e, s, "{\"run\": null}");
}

/* After the commit: its values told, the rule asked about each report's
 * run, then each report is answered. */
static void answer_reports(sw_engine *e, sw_metrics_report *head)
{
    sw_metrics_report *r, *next;
    sw_slot *s;
    char msg[256];

    sw_engine__ingested(e);
    for (r = head; r; r = next) {
        next = sw_metrics_report_next(r);
        if (sw_metrics_report_is_next(r)) {
            hold_next(e, target(e, r), r);
            continue;
        }
        if ((s = target(e, r))) {
            if (s->stop && s->pause)
                sw_metrics_report_answer_pause(r);
            else
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
