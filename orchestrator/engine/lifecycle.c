/*
 * lifecycle.c - the engine's decisions: which trial runs next (retries
 * first, then the search), the path of an attempt from its git capture to
 * its launch and its end, timeouts and the SIGKILL after the grace
 * period, Ctrl-C, metric.target, the first-failures rule, and when the
 * sweep is over.
 *
 * It reads no clock but e->clock and starts nothing itself: the executor
 * runs attempts and answers with events, the host runs slow work (a
 * search suggestion, suggest.c; a run folder and its git capture; a
 * store checkpoint) and hands it back, and the driver calls
 * sw_engine__pump() when anything may have happened. So the same
 * decisions run under libuv (uvloop.c) and under a unit test's hand.
 * What a person sees is progress.c's.
 *
 * Invariants: a run is committed running, with its attempt number and
 * git facts, before the executor is asked to launch it (a new run is
 * first stored then, so nothing is left pending that never ran); a run's
 * index in the search keys it, so a resume never makes it twice; the job
 * handle is committed as soon as the executor gives it. An attempt's end
 * is decided here once, from one executor event. One suggestion and one capture
 * are in flight at most; the search is not touched while its suggestion is.
 */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "orchestrator/engine/contract.h"
#include "orchestrator/engine/engine_internal.h"
#include "orchestrator/provenance.h"
#include "sweeps/command.h"
#include "sweeps/json.h"

#define TAIL_S 0.1 /* how often running trials' stdout is read */
#define BACKOFF_MIN_S 0.1
#define BACKOFF_MAX_S 30.0
#define CHECKPOINT_PAGES 1000 /* SQLite's own default */
#define MAX_LOST 3 /* lost attempts rerun per run; the next loss fails it */
#define PROBATION_S 30.0 /* before any run finished: see probation_room() */

typedef enum { END_EXITED, END_LOST, END_START_FAILED } end_kind;

static double now_mono(const sw_engine *e)
{
    return sw_clock_mono(e->clock);
}

static double now_wall(const sw_engine *e)
{
    return sw_clock_wall(e->clock);
}

static void set_str(char **dst, const char *src)
{
    free(*dst);
    *dst = src ? sw_strdup(src) : NULL;
}

#define NO_RUN "{\"run\": null}" /* a worker's answer: no next run */

/* Frees the slot `s`, its devices given back; a worker's request it
 * held is told there is no next run. */
static int end_handed(sw_engine *e, sw_slot *b);

/* The run in `b` will not run in the worker it was handed to: the end
 * of the worker's last run is recorded at the next turn, as any end. */
static void unhand(sw_slot *b)
{
    if (b->handed_from)
        b->handed_from->handed_to = NULL;
    if (b->handed_to)
        b->handed_to->handed_from = NULL;
    b->handed_from = b->handed_to = NULL;
}

static void drop_slot(sw_engine *e, sw_slot *s)
{
    sw_engine__answer_next(e, s, NO_RUN);
    unhand(s);
    sw_engine__gpus_release(e, s);
    sw_engine__free_slot(e, s);
}

/* The executor's name for the process the attempt in `s` runs in: its
 * run's id, or for a run handed to a long-lived worker, the id of the
 * run that process was started for. */
static const char *job_key(const sw_slot *s)
{
    return s->job_key ? s->job_key : s->rec.id;
}

/* The one place a run changes state: the run in `s`, which was in
 * `from`, is recorded as it is now, then told to the consumers (the
 * attempts table, the budget, what a person sees, ...); `end` says how
 * its attempt ended when that made the change. */
static int commit_state(sw_engine *e, sw_slot *s, sw_run_state from,
                        const sw_attempt_end *end)
{
    sw_event ev = {.kind = SW_EV_RUN, .run = &s->rec, .from = from, .end = end};
    int error = s->fresh ? sw_store_put_run(e->st, &s->rec)
                         : sw_store_update_run(e->st, &s->rec);

    if (!error) {
        s->fresh = false;
        error = sw_engine__emit(e, &ev);
    }
    return error;
}

/* ---- from a trial to a launched attempt ----------------------------- */

static void want_capture(sw_engine *e, sw_slot *s)
{
    s->phase = SW_SLOT_CAPTURE;
    sw_grow(&e->captures, &e->cap_captures, e->n_captures + 1,
            sizeof(sw_slot *));
    e->captures[e->n_captures++] = s;
}

static int end_attempt(sw_engine *e, sw_slot *s, const sw_exit *x, end_kind how,
                       const char *msg, double at);

/* A long-lived worker waiting for its next run and not yet given one;
 * NULL: none. */
static sw_slot *offering(const sw_engine *e)
{
    size_t i;
    sw_slot *s;

    for (i = 0; i < e->n_slots; i++) {
        s = e->slots[i];
        if (s->next_req && s->phase == SW_SLOT_RUNNING && !s->cancel)
            return s;
    }
    return NULL;
}

/* The worker in `h` serves the run in `b` next: h's attempt ends as if
 * its process had exited 0 (stopped, when the rule had stopped it), and
 * the process, its request and its devices go to `b`, whose launch
 * (request_launch) is the answer. That end is read now but recorded
 * only once b's attempt is committed in the worker, in the same
 * transaction (end_handed): a kill in between leaves h running in its
 * process, and the resumed sweep adopts it and answers the worker's
 * request again. `h` may be freed. */
static int hand_over(sw_engine *e, sw_slot *h, sw_slot *b)
{
    sw_exit done = {true, 0, 0, false};

    h->handed_to = b;
    b->handed_from = h;
    b->job_key = sw_strdup(job_key(h));
    e->job_keys = true;
    b->job_handle = h->rec.job ? sw_strdup(h->rec.job) : NULL;
    b->next_req = h->next_req;
    h->next_req = NULL;
    b->proven = h->proven;
    sw_engine__gpus_move(e, h, b);
    return end_attempt(e, h, &done, END_EXITED, NULL, 0);
}

/* The new slot `s` (its run set) gets a place: a waiting worker's
 * process and devices, else the devices fill() placed for it; then its
 * capture is queued. */
static int place_run(sw_engine *e, sw_slot *s)
{
    sw_slot *h = offering(e);
    int error = SW_OK;

    if (h) {
        sw_engine__gpus_unreserve(e); /* placed for a slot of its own */
        error = hand_over(e, h, s);
    } else {
        /* what fill() placed for it; or, when the worker it was
         * suggested for died meanwhile, the devices that worker left */
        sw_engine__gpus_room(e);
        sw_engine__gpus_take(e, s);
    }
    want_capture(e, s);
    return error;
}

/* Makes trial `t` a run and queues its capture; the run is stored when
 * its first attempt is committed, so a sweep that stops meanwhile leaves
 * no run that never ran. A run of PBT's first population holds the
 * place its index names. */
static int new_run(sw_engine *e, const sw_trial *t)
{
    sw_slot *s = sw_engine__new_slot(e);
    int error = sw_engine__make_run(e, t, &s->rec);

    sw_engine__slot_named(e, s);
    e->next_idx = t->index + 1;
    if (error) {
        sw_engine__gpus_unreserve(e);
        drop_slot(e, s);
        return sw_engine__fatal(e, error);
    }
    sw_engine__pbt_place(e, &s->rec);
    s->run_dir = sw_contract_run_dir(e->home, s->rec.id);
    s->fresh = true;
    return place_run(e, s);
}

/* <run dir>/worker names the run whose process an attempt handed to a
 * long-lived worker runs in (resume.c adopts it there); `key` NULL
 * removes it. */
static int worker_file(const sw_slot *s, const char *key)
{
    char *path = sw_aprintf("%s/worker", s->run_dir);
    int error = SW_OK;

    if (key)
        error = sw_contract_write_file(path, key);
    else
        unlink(path);
    free(path);
    return error;
}

/* Renames the pid and exit files of the run's last attempt to
 * attempt-N.pid and attempt-N.exit, so the next attempt starts from a
 * folder that holds none (before the next attempt is committed, so a
 * crash in between leaves the store's last attempt as it was). */
static void archive_attempt(sw_capture_work *c)
{
    static const char *const names[] = {"pid", "exit"};
    const sw_slot *s = c->slot;
    char *from, *to;
    size_t i;

    for (i = 0; i < 2 && s->rec.attempts > 0; i++) {
        from = sw_aprintf("%s/%s", s->run_dir, names[i]);
        to = sw_aprintf("%s/attempt-%lld.%s", s->run_dir,
                        (long long)s->rec.attempts, names[i]);
        if (rename(from, to) != 0 && errno != ENOENT && !c->warning)
            c->warning = sw_aprintf("sweep: cannot rename %s: %s", from,
                                    strerror(errno));
        free(from);
        free(to);
    }
}

static int end_attempt(sw_engine *e, sw_slot *s, const sw_exit *x, end_kind how,
                       const char *msg, double at);

/* The argv the executor gets: the stored one with its ${envvar:NAME}
 * expanded from this process's environment now, so a secret reaches the
 * trial but never the store. NULL when the stored argv is unusable. */
static char **launch_argv(const char *argv_json)
{
    char **stored = sw_contract_argv(argv_json), **argv;

    if (!stored)
        return NULL;
    argv = sw_command_expand_envvars(stored, NULL);
    sw_command_free(stored);
    return argv;
}

static int on_started(sw_engine *e, sw_slot *s, const char *handle);

/* <run dir>/asked_from names the run a worker asked from for the run
 * handed to it, so the resumed sweep can answer that request again;
 * best effort (without it, the resumed sweep refuses the request). */
static void asked_file(const sw_slot *s)
{
    const char *from = s->handed_from ? s->handed_from->rec.id : NULL;
    char *path = sw_aprintf("%s/asked_from", s->run_dir);

    if (!from || sw_contract_write_file(path, from) != SW_OK)
        unlink(path);
    free(path);
}

/* The attempt in `s` starts in the waiting worker's process: recorded
 * as started there (its handle committed, and <run dir>/worker naming the
 * process's run, before the worker hears of it), then *answer holds what
 * the worker is told once that is committed. */
static int launch_in_worker(sw_engine *e, sw_slot *s, char **env, char **answer)
{
    char *handle = s->job_handle;
    int error = worker_file(s, s->job_key);

    if (error) {
        s->phase = SW_SLOT_LAUNCHING;
        return end_attempt(e, s, NULL, END_START_FAILED, sw_error_last(), 0);
    }
    asked_file(s);
    s->job_handle = NULL;
    s->phase = SW_SLOT_LAUNCHING;
    s->launched_at = now_mono(e);
    sw_engine__grant(e, s);
    error = on_started(e, s, handle);
    free(handle);
    if (!error) /* in the transaction of launch_attempt's hold */
        error = end_handed(e, s);
    if (error)
        return error;
    *answer = sw_engine__next_run_json(s, env);
    return SW_OK;
}

/* Asks the executor for the attempt (or hands it to the waiting worker
 * it was placed with); what it cannot even try is a failed start,
 * recorded as any failed attempt is. */
static int request_launch(sw_engine *e, sw_slot *s, char **answer)
{
    char *url = sw_engine__metrics_url(e, s);
    sw_contract c = {e->home,
                     e->sweep.id,
                     s->rec.id,
                     s->rec.attempts,
                     url,
                     s->token,
                     sw_engine__gpus_visible(e, s),
                     s->target = sw_engine__train_until(e, s)};
    char **argv = NULL, **env = sw_contract_env(&c);
    char *out = NULL, *err = NULL;
    int error;

    if (s->job_key && s->next_req && !s->worker_gone) {
        error = launch_in_worker(e, s, env, answer);
        sw_command_free(env);
        free(url);
        return error;
    }
    if (s->job_key) { /* the worker went first: a process of its own */
        sw_engine__answer_next(e, s, NO_RUN);
        unhand(s);
        free(s->job_key);
        free(s->job_handle);
        s->job_key = s->job_handle = NULL;
    }
    argv = launch_argv(s->rec.argv);
    out = sw_aprintf("%s/stdout.log", s->run_dir);
    err = sw_aprintf("%s/stderr.log", s->run_dir);
    sw_launch l = {.key = s->rec.id,
                   .argv = argv,
                   .env = env,
                   .cwd = e->sweep.cwd,
                   .dir = s->run_dir,
                   .stdout_path = out,
                   .stderr_path = err,
                   .resources = e->spec->resources,
                   .log_limit = e->spec->log_limit == 0 ? SW_LOG_LIMIT_DEFAULT
                                : e->spec->log_limit == SW_LOG_UNLIMITED
                                    ? 0
                                    : e->spec->log_limit};

    error = argv ? sw_executor_launch(e->ex, &l)
                 : sw_error_set(SW_EINVALID, "its stored argv is unusable");

    s->phase = SW_SLOT_LAUNCHING;
    s->launched_at = now_mono(e);
    sw_engine__grant(e, s);
    if (error)
        error = end_attempt(e, s, NULL, END_START_FAILED, sw_error_last(), 0);
    sw_command_free(argv);
    sw_command_free(env);
    free(url);
    free(out);
    free(err);
    return error;
}

/* The disk failed (full, an I/O error) while an attempt was being
 * started: no trial is to blame and none could start, so the sweep stops
 * launching and ends, its results kept; the attempt, committed running
 * without a handle, is found never to have started by `sweep resume`,
 * and runs again without using a retry. */
static int storage_failed(sw_engine *e, const sw_slot *s, const char *why)
{
    return sw_engine__fatal(
        e, sw_error_set(SW_ESTORAGE,
                        "run %s not started: %s; nothing more is launched "
                        "(free space, then `sweep resume %s`)",
                        s->rec.id, why ? why : "?", e->sweep.id));
}

/* The run in `s`, its folder and code made ready (or not: `prepared`
 * says why), as its next attempt: committed running, then launched. */
static int launch_attempt(sw_engine *e, sw_slot *s, int prepared,
                          const char *why)
{
    sw_run_rec *r = &s->rec;

    sw_run_state from = r->state;
    char *answer = NULL;
    bool held;
    int error, rc;

    r->attempts++;
    r->state = SW_RUN_RUNNING;
    r->started_at = now_wall(e);
    r->ended_at = 0;
    r->has_exit = false;
    r->signal = 0;
    set_str(&r->job, NULL);
    set_str(&r->reason, NULL);
    set_str(&r->pending_reason, NULL);
    r->has_queued = false;
    r->queued_seconds = 0;
    s->queued = false;
    /* into a worker: the attempt, its handle and the end of the worker's
     * last run are one transaction (inside a simulation's own hold, they
     * are in that one) */
    held = prepared == SW_OK && s->job_key && s->next_req && !s->worker_gone &&
           sw_store_hold(e->st) == SW_OK;
    if ((error = commit_state(e, s, from, NULL)) != SW_OK)
        error = sw_engine__fatal(e, error);
    else if (prepared == SW_ESTORAGE)
        error = storage_failed(e, s, why);
    else if (prepared != SW_OK) {
        s->phase = SW_SLOT_LAUNCHING;
        error = end_attempt(e, s, NULL, END_START_FAILED, why, 0);
    } else
        error = request_launch(e, s, &answer);
    if (held && (rc = sw_store_release(e->st)) != SW_OK && !error)
        error = sw_engine__fatal(e, rc);
    /* the worker hears of its run only once it is committed there */
    if (answer && !error)
        sw_engine__answer_next(e, s, answer);
    free(answer);
    return error;
}

/* Whether a run's folder gets its checkpoint/: always for real; in a
 * simulation only under a rule that pauses (promotion ASHA, PBT), where
 * the simulator keeps there the step a paused run trained to. A surrogate
 * has nothing else to keep, and the folder is a directory per trial, as
 * costly as the trial's other files together. */
static bool needs_checkpoint(const sw_engine *e)
{
    return !e->virtual_time || e->promoter || e->pbt;
}

/* On a worker thread: the run's folder for its next attempt (the last
 * attempt's status files put aside, checkpoint/, params.json) and the
 * code it starts with. File creation is slow work: tens of microseconds
 * to milliseconds a file, more on a busy disk. */
static void capture_run(sw_engine_work *w)
{
    sw_capture_work *c = (sw_capture_work *)w;
    sw_slot *s = c->slot;

    archive_attempt(c);
    worker_file(s, NULL); /* an earlier attempt's worker is not this one's */
    sw_provenance_run(c->e, &s->rec); /* can't fail */
    c->error =
        sw_contract_prepare(s->run_dir, s->rec.params, needs_checkpoint(c->e));
    if (!c->error)
        c->error = sw_engine__new_token(c->e, s);
    c->message = c->error ? sw_strdup(sw_error_last()) : NULL;
}

static void capture_done(sw_engine *e, sw_engine_work *w)
{
    sw_capture_work *c = (sw_capture_work *)w;
    sw_slot *s = c->slot;
    char *why = c->message;

    e->capturing = false;
    c->message = NULL;
    if (c->warning)
        sw_engine__notice(e, SW_NOTICE_ERROR, "%s", c->warning);
    free(c->warning);
    c->warning = NULL;
    if (sw_engine__stopping(e))
        drop_slot(e, s); /* still pending in the store */
    else
        launch_attempt(e, s, c->error, why);
    free(why);
}

/* Starts the oldest waiting capture, one at a time. */
static void next_capture(sw_engine *e)
{
    sw_slot *s;

    while (!e->capturing && e->n_captures > 0) {
        s = e->captures[0];
        memmove(e->captures, e->captures + 1,
                --e->n_captures * sizeof(sw_slot *));
        if (sw_engine__stopping(e)) {
            drop_slot(e, s);
            continue;
        }
        e->capture = (sw_capture_work){
            {capture_run, capture_done, NULL}, e, s, SW_OK, NULL, NULL};
        e->capturing = true;
        e->host.submit(e->host.ctx, &e->capture.work);
    }
}

static bool run_cap_reached(const sw_engine *e)
{
    return e->spec->run_cap > 0 && e->next_idx >= (uint64_t)e->spec->run_cap;
}

/* Whether one more attempt may start while no run has finished yet. A
 * command that cannot work must cost the first-failures rule's five
 * runs, not `parallel` of them (64 failed runs at --parallel 64): until
 * a run finishes, attempts that have not yet shown they work (reported
 * a metric, or run PROBATION_S) are at most as many as the failures the
 * rule has left. At --parallel 64 the first five start at once and the
 * rest as soon as one reports. */
static bool probation_room(sw_engine *e)
{
    size_t max = e->max_initial_failures, unproven = 0, i;
    double now = now_mono(e);
    sw_slot *s;

    if (e->worked > 0 || max == 0)
        return true;
    for (i = 0; i < e->n_slots; i++) {
        s = e->slots[i];
        if (!s->proven && !s->queued && s->launched_at > 0 &&
            now >= s->launched_at + PROBATION_S)
            s->proven = true;
        unproven += !s->proven;
    }
    unproven += e->suggesting;
    return unproven + e->failed_here < max;
}

/* Fills free slots: queued runs first, then one suggestion at a time,
 * each once its devices are placed (devices.c); once no new run may
 * start, paused runs that fit in the drain (promotion.c). */
static void fill(sw_engine *e)
{
    sw_slot *s;
    sw_run_rec r;
    int error;

    if ((error = sw_engine__promote_due(e)) != SW_OK ||
        (error = sw_engine__pbt_due(e)) != SW_OK) {
        sw_engine__fatal(e, error);
        return;
    }
    /* a waiting worker is room, with its devices */
    while (!sw_engine__stopping(e) && !e->suggesting &&
           (e->n_slots < (size_t)e->parallel || offering(e)) &&
           now_mono(e) >= e->backoff_until && probation_room(e) &&
           !(e->search_done && e->qlen == 0 && !e->promoter) &&
           (offering(e) || sw_engine__gpus_room(e)) &&
           !(e->search_done && e->qlen == 0 && !sw_engine__promote_drain(e))) {
        if (sw_engine__dequeue(e, &r)) {
            s = sw_engine__new_slot(e);
            s->rec = r;
            s->drained = sw_engine__promote_drained(e, r.idx);
            sw_engine__slot_named(e, s);
            s->run_dir = sw_contract_run_dir(e->home, s->rec.id);
            place_run(e, s);
            continue;
        }
        if (run_cap_reached(e) || sw_engine__budget_spent(e)) {
            e->search_done = true;
            break;
        }
        sw_engine__suggest(e);
    }
    if (!e->suggesting) /* devices placed for a trial that won't come */
        sw_engine__gpus_unreserve(e);
}

/* Workers waiting for a next run that will not come are told so: they
 * exit, and the attempt they are on ends with their process. */
static void settle_offers(sw_engine *e)
{
    size_t i;

    if (!sw_engine__stopping(e) && !e->result &&
        !(e->search_done && e->qlen == 0 && !e->suggesting))
        return;
    for (i = 0; i < e->n_slots; i++)
        if (e->slots[i]->next_req && e->slots[i]->phase == SW_SLOT_RUNNING)
            sw_engine__answer_next(e, e->slots[i], NO_RUN);
}

/* ---- ends ----------------------------------------------------------- */

static void give_up_if_all_failed(sw_engine *e, const sw_slot *s)
{
    size_t max = e->max_initial_failures;

    if (e->gave_up || e->worked > 0 || max == 0 || e->failed_here < max)
        return;
    e->gave_up = true;
    sw_engine__notice(e, SW_NOTICE_ERROR,
                      "\nsweep: the first %zu runs all failed (the last: %s; "
                      "see %s/stderr.log): launching no more. Fix the "
                      "command and `sweep resume %s`, or set "
                      "SWEEP_MAX_INITIAL_FAILURES.",
                      e->failed_here, s->rec.reason ? s->rec.reason : "?",
                      s->run_dir, e->sweep.id);
}

/* Why a failed attempt failed. */
static void failure_reason(const sw_engine *e, const sw_slot *s,
                           const sw_exit *x, end_kind how, const char *msg,
                           char *out, size_t n)
{
    if (s->cancel == SW_CANCEL_TIMEOUT)
        snprintf(out, n, "timeout after %gs", e->spec->timeout);
    else if (how == END_LOST)
        snprintf(out, n, "lost: its supervisor died");
    else if (how == END_START_FAILED)
        snprintf(out, n, "cannot start: %s", msg ? msg : "?");
    else if (msg && x->exited) /* the scheduler's word: "Slurm job 12
                                  ended TIMEOUT", and the status */
        snprintf(out, n, "%s, exit %d", msg, x->exit_code);
    else if (msg && x->signal)
        snprintf(out, n, "%s, signal %d", msg, x->signal);
    else if (msg)
        snprintf(out, n, "%s", msg);
    else if (x->exited)
        snprintf(out, n, "exit %d", x->exit_code);
    else
        snprintf(out, n, "signal %d", x->signal);
}

/* The retries a run has used, this failed attempt among them: its
 * attempts but the lost ones and those that paused at a rung (promotion
 * ASHA, PBT), which were not its failures. */
static int64_t retries_used(sw_engine *e, const sw_slot *s)
{
    int64_t paused = 0;

    if (s->rec.attempts > 1 &&
        sw_store_count_attempts(
            e->st, s->rec.id, sw_outcome_name(SW_OUTCOME_PAUSED), &paused) < 0)
        paused = 0; /* counted as retries, as before: never more runs */
    return s->rec.attempts - s->rec.lost - paused;
}

/* A failed attempt: its run goes again while it has retries left (lost
 * and paused attempts were not its failures and use none). */
static void failed_attempt(sw_engine *e, sw_slot *s, const sw_exit *x,
                           end_kind how, const char *msg)
{
    char why[512];

    failure_reason(e, s, x, how, msg, why, sizeof(why));
    set_str(&s->rec.reason, why);
    s->rec.state =
        retries_used(e, s) <= e->spec->retries ? SW_RUN_PENDING : SW_RUN_FAILED;
    sw_engine__tally(e, s->rec.state, true);
    if (how == END_START_FAILED) {
        e->unstarted_here++;
        sw_engine__notice(e, SW_NOTICE_ERROR, "sweep: run %s %s", s->rec.id,
                          why);
        e->launch_failures++;
        e->backoff_until =
            now_mono(e) +
            fmin(BACKOFF_MAX_S,
                 BACKOFF_MIN_S *
                     ldexp(1.0, (int)fmin(e->launch_failures - 1, 20)));
    }
    give_up_if_all_failed(e, s);
}

/* A lost attempt: its trial did not fail, the machinery around it did
 * (`why`, the executor's word: a supervisor that died, a Slurm node that
 * failed). The run goes again without using a retry, MAX_LOST times. */
static void lost_attempt(sw_engine *e, sw_slot *s, const char *why)
{
    why = why && *why ? why : "its supervisor died";
    free(s->rec.reason);
    s->rec.lost++;
    if (s->rec.lost <= MAX_LOST) {
        s->rec.reason = sw_aprintf("lost: %s", why);
        s->rec.state = SW_RUN_PENDING;
        return;
    }
    s->rec.reason =
        sw_aprintf("lost %lld times: %s", (long long)s->rec.lost, why);
    s->rec.state = SW_RUN_FAILED;
    sw_engine__tally(e, s->rec.state, true);
    give_up_if_all_failed(e, s);
}

/* An attempt the machine's disk failed (sw_exit.disk: a write of its
 * output refused, or it failed with the home full): not the trial's
 * failure, so its run goes again without using a retry (counted in
 * `lost`, as the machine's faults are), however often. One that exited
 * 0 has no result: what its log lost may have held its values. */
static void disk_attempt(sw_engine *e, sw_slot *s, const sw_exit *x)
{
    char why[64];

    (void)e;
    if (x->exited && x->exit_code == 0)
        snprintf(why, sizeof(why), "exit 0, its log cut short,");
    else if (x->exited)
        snprintf(why, sizeof(why), "exit %d", x->exit_code);
    else
        snprintf(why, sizeof(why), "signal %d", x->signal);
    free(s->rec.reason);
    s->rec.reason = sw_aprintf("disk: %s with the disk full or failing", why);
    s->rec.lost++;
    s->rec.state = SW_RUN_PENDING;
}

/* After the end of an attempt the disk failed is recorded: as for a
 * start the disk refused, nothing more is launched and the sweep ends,
 * saying why; `sweep resume` reruns the run once there is space. */
static int disk_full(sw_engine *e, sw_slot *s)
{
    char id[128];

    snprintf(id, sizeof(id), "%s", s->rec.id);
    drop_slot(e, s);
    return sw_engine__fatal(
        e, sw_error_set(SW_ESTORAGE,
                        "run %s: the disk failed its trial (full, or an "
                        "I/O error on its output); nothing more is launched "
                        "(free space, then `sweep resume %s`)",
                        id, e->sweep.id));
}

/* The end of the attempt in `s` committed: the run's row and its
 * attempt's together, or neither (a full store takes both or nothing;
 * the sweep then ends and `sweep resume` finds the end again). */
static int commit_end(sw_engine *e, sw_slot *s, const sw_attempt_end *end)
{
    int error = sw_store_begin(e->st);

    if (error != SW_OK)
        return error;
    if ((error = commit_state(e, s, SW_RUN_RUNNING, end)) == SW_OK &&
        (error = sw_store_commit(e->st)) == SW_OK)
        return SW_OK;
    sw_store_rollback(e->st);
    return error;
}

/* Decides what an ended attempt (its end in s->end, all its output read)
 * means for its run, records it, and frees the slot. A trial canceled for
 * running out of time failed, whatever it exited with: what it reported
 * is not a result. */
static int finish(sw_engine *e, sw_slot *s)
{
    end_kind how = (end_kind)s->end.how;
    const sw_exit *x = &s->end.exit;
    const char *msg = s->end.msg;
    /* one that ended before its time ran out (by the scheduler's record
     * of its end; the poll that saw it may come a second late) did not
     * time out */
    bool timeout = s->cancel == SW_CANCEL_TIMEOUT &&
                   !(e->spec->timeout > 0 && s->rec.started_at > 0 &&
                     s->end.at < s->rec.started_at + e->spec->timeout);
    /* whatever it exited with: a trial that exited 0 with a write of its
     * log refused may have printed values the store never saw, so it has
     * no result yet */
    bool disk =
        how == END_EXITED && x->disk && !timeout && !s->stop && !s->cancel;
    sw_attempt_end end = {how != END_START_FAILED,
                          how == END_LOST,
                          timeout,
                          disk,
                          0,
                          s->first_step};
    int error;

    s->rec.ended_at = s->end.at;
    s->rec.has_exit = how == END_EXITED && x->exited;
    s->rec.exit_code = s->rec.has_exit ? x->exit_code : 0;
    s->rec.signal = how == END_EXITED && !x->exited ? x->signal : 0;
    sw_engine__revoke(e, s);
    if (s->pause && !timeout) { /* at its rung, whatever ended it */
        s->rec.state = SW_RUN_PAUSED;
        free(s->rec.reason);
        s->rec.reason = sw_aprintf(
            "paused: %s", s->stop_verdict ? s->stop_verdict : "at its rung");
        sw_engine__tally(e, s->rec.state, true);
    } else if (s->stop && !timeout) {
        s->rec.state = SW_RUN_STOPPED;
        free(s->rec.reason); /* by hand; else the rule's word, its verdict */
        s->rec.reason =
            s->stop_why ? sw_strdup(sw_cancel_name(s->stop_why))
            : s->stop_verdict && *s->stop_verdict
                ? sw_aprintf("%s: %s", sw_cancel_name(SW_CANCEL_STOPPED),
                             s->stop_verdict)
                : sw_strdup(sw_cancel_name(SW_CANCEL_STOPPED));
        sw_engine__tally(e, s->rec.state, true);
    } else if (s->cancel && !timeout) {
        s->rec.state = SW_RUN_CANCELED;
        set_str(&s->rec.reason, sw_cancel_name(s->cancel));
        sw_engine__tally(e, s->rec.state, true);
    } else if (disk) {
        disk_attempt(e, s, x);
    } else if (how == END_EXITED && !timeout && x->exited &&
               x->exit_code == 0) {
        s->rec.state = SW_RUN_FINISHED;
        set_str(&s->rec.reason, NULL);
        sw_engine__tally(e, s->rec.state, true);
    } else if (how == END_LOST && !timeout) {
        lost_attempt(e, s, msg);
    } else if (s->job_key && how == END_EXITED && !timeout &&
               (!x->exited || x->exit_code == SW_WORKER_LOST_EXIT)) {
        /* its worker died (killed, not by the engine), or never heard
         * of it: the run was not to blame */
        end.lost = true;
        lost_attempt(e, s,
                     x->exited ? "its worker never got it" : "its worker died");
    } else {
        failed_attempt(e, s, x, how, msg);
    }
    end.gpu = s->gave_gpus ? s->held_gpu : sw_engine__gpus_held(e, s);
    if ((error = commit_end(e, s, &end)) != SW_OK)
        return sw_engine__fatal(e, error);
    if (s->rec.state == SW_RUN_FINISHED || s->rec.state == SW_RUN_FAILED ||
        s->rec.state == SW_RUN_STOPPED || s->rec.state == SW_RUN_PAUSED)
        sw_engine__tell_search(e, &s->rec, true); /* paused: its rung's */
    if (s->rec.state == SW_RUN_PENDING)
        sw_engine__enqueue(e, &s->rec);
    if (how == END_EXITED && x->disk && !s->adopted)
        return disk_full(e, s); /* an adopted one: the space may be back */
    drop_slot(e, s);
    return SW_OK;
}

/* The devices of an attempt whose process has gone, given back before
 * its end is recorded; what it held is kept for that record. */
static void free_devices(sw_engine *e, sw_slot *s)
{
    if (!s->gpus)
        return;
    s->held_gpu = sw_engine__gpus_held(e, s);
    s->gave_gpus = true;
    sw_engine__gpus_release(e, s);
}

/* Reads a turn of an ended attempt's output; once it is all read, its
 * end is recorded. */
static int drain(sw_engine *e, sw_slot *s)
{
    int error = sw_engine__tail(e, s, true);

    if (error)
        return sw_engine__fatal(e, error);
    /* handed_to: its end waits for its worker's next run (end_handed) */
    return s->out_more || s->handed_to ? SW_OK : finish(e, s);
}

/* The run in `b` is committed in its worker's process, or will not run
 * there: the end of the run that worker served before (hand_over) is
 * recorded now, its output read to the end first. */
static int end_handed(sw_engine *e, sw_slot *b)
{
    sw_slot *h = b->handed_from;
    int error = SW_OK;

    if (!h)
        return SW_OK;
    b->handed_from = NULL;
    h->handed_to = NULL;
    while (!error && h->out_more)
        error = sw_engine__tail(e, h, true);
    if (error)
        return sw_engine__fatal(e, error);
    return finish(e, h);
}

/* The attempt in `s` ended (how, its exit, the executor's word on it, at
 * wall time `at` as the executor's scheduler recorded it, 0: now): the
 * end is its time, whatever is still to read of its output, and no
 * deadline applies to it any more. One that never left the scheduler's
 * queue ran for no time: its wait is queued_seconds. Its output is read
 * a turn at a time (drain()) before what it means is decided. */
static int end_attempt(sw_engine *e, sw_slot *s, const sw_exit *x, end_kind how,
                       const char *msg, double at)
{
    sw_exit none = {false, 0, 0, false};
    sw_run_rec *r = &s->rec;

    s->end.how = (int)how;
    s->end.exit = x ? *x : none;
    s->end.msg = msg ? sw_strdup(msg) : NULL;
    s->end.at = at > 0 && at <= now_wall(e) ? at : now_wall(e);
    if (s->end.at < r->started_at)
        s->end.at = r->started_at;
    if (s->queued) {
        r->has_queued = true;
        r->queued_seconds = s->end.at - r->started_at;
        r->started_at = s->end.at;
        set_str(&r->pending_reason, NULL);
        s->queued = false;
    }
    s->phase = SW_SLOT_ENDED;
    if (!e->virtual_time) /* gone: they are free while its output is read */
        free_devices(e, s);
    return drain(e, s);
}

/* ---- executor events ------------------------------------------------ */

static void cancel(sw_engine *e, sw_slot *s, sw_cancel why, bool force);

static int on_started(sw_engine *e, sw_slot *s, const char *handle)
{
    int error;

    set_str(&s->rec.job, handle);
    if (s->phase == SW_SLOT_LAUNCHING) {
        e->started_here++;
        s->phase = SW_SLOT_RUNNING;
        s->deadline = sw_engine__deadline(e, &s->rec);
        e->launch_failures = 0;
    }
    if ((error = sw_store_update_run(e->st, &s->rec)) != SW_OK)
        return sw_engine__fatal(e, error);
    /* read at the next turn, which opens and watches its log: unread, it
     * waited for the every-TAIL_S turn, and its first lines (a stop
     * decided on them) came up to 0.1 s late */
    s->out_dirty = true;
    if (s->cancel) /* canceled before it started */
        cancel(e, s, s->cancel, false);
    return SW_OK;
}

/* An attempt that never ran (adopted: the launch was never made; or
 * its supervisor died first): the machinery failed, not the trial, so
 * its run goes again as after a lost attempt, using no retry. */
static int not_started(sw_engine *e, sw_slot *s)
{
    return end_attempt(e, s, NULL, END_LOST, NULL, 0);
}

/* The attempt's job waits in the executor's queue, for `ev->message`
 * (Slurm's reason): it has not started, so no deadline runs and nothing
 * is spent; the reason is stored for `sweep ls` and `sweep show`. A late
 * one (waited past the executor's limit) is said once. */
static int on_queued(sw_engine *e, sw_slot *s, const sw_job_event *ev)
{
    const char *why = ev->message && ev->message[0] ? ev->message : "None";
    int error;

    s->queued = true;
    s->deadline = 0;
    if (ev->late) {
        sw_engine__notice(e, SW_NOTICE_WARN, "sweep: run %s: %s", s->rec.id,
                          why);
        return SW_OK;
    }
    if (s->rec.pending_reason && strcmp(s->rec.pending_reason, why) == 0)
        return SW_OK;
    set_str(&s->rec.pending_reason, why);
    if ((error = sw_store_update_run(e->st, &s->rec)) != SW_OK)
        return sw_engine__fatal(e, error);
    return SW_OK;
}

/* The attempt's job left the queue and runs since wall time `at` (the
 * scheduler's; 0: now): its run time, its deadline, its pace and the GPU
 * time it spends start there, and its wait is recorded beside them. Said
 * again (a resume), it changes nothing. */
static int on_running(sw_engine *e, sw_slot *s, double at)
{
    sw_run_rec *r = &s->rec;
    double now = now_wall(e);
    int error;

    if (!(at > 0) || at > now)
        at = now;
    if (!r->has_queued && r->started_at > 0) {
        r->has_queued = true;
        r->queued_seconds = at > r->started_at ? at - r->started_at : 0;
        r->started_at = at;
    }
    set_str(&r->pending_reason, NULL);
    s->queued = false;
    s->launched_at = now_mono(e);
    if (s->phase == SW_SLOT_RUNNING)
        s->deadline = sw_engine__deadline(e, r);
    if ((error = sw_store_update_run(e->st, r)) != SW_OK)
        return sw_engine__fatal(e, error);
    return SW_OK;
}

/* The slot an executor event is about: the attempt that runs in the
 * process `key` names now (a run handed to a worker), else the run's.
 * The scan for the first is skipped while no slot has had a job_key: an
 * event for each line a simulation gives, among thousands of slots. */
static sw_slot *job_slot(const sw_engine *e, const char *key)
{
    size_t i;

    for (i = 0; key && e->job_keys && i < e->n_slots; i++)
        if (e->slots[i]->job_key && strcmp(e->slots[i]->job_key, key) == 0 &&
            e->slots[i]->phase != SW_SLOT_ENDED)
            return e->slots[i];
    return sw_engine__find_slot(e, key);
}

static int on_event(sw_engine *e, const sw_job_event *ev)
{
    sw_slot *s = job_slot(e, ev->key);

    if (s && s->job_key && s->phase == SW_SLOT_CAPTURE) {
        /* the worker it was to run in ended first: launched on its own */
        if (ev->kind == SW_JOB_ENDED || ev->kind == SW_JOB_LOST ||
            ev->kind == SW_JOB_NOT_STARTED)
            s->worker_gone = true;
        return SW_OK;
    }
    if (!s) {
        sw_engine__notice(e, SW_NOTICE_ERROR,
                          "sweep: the executor spoke of an unknown job %s",
                          ev->key ? ev->key : "(null)");
        return SW_OK;
    }
    if (s->phase == SW_SLOT_ENDED)
        return SW_OK; /* its end is known: nothing more to learn */
    switch (ev->kind) {
    case SW_JOB_STARTED:
        return on_started(e, s, ev->handle);
    case SW_JOB_START_FAILED:
        if (ev->code == SW_ESTORAGE)
            return storage_failed(e, s, ev->message);
        return end_attempt(e, s, NULL, END_START_FAILED, ev->message, 0);
    case SW_JOB_NOT_STARTED:
        return not_started(e, s);
    case SW_JOB_ENDED:
        return end_attempt(e, s, &ev->exit, END_EXITED, ev->message, ev->at);
    case SW_JOB_LOST:
        sw_engine__notice(e, SW_NOTICE_WARN, "sweep: run %s: %s", s->rec.id,
                          ev->message ? ev->message : "lost");
        return end_attempt(e, s, NULL, END_LOST, ev->message, ev->at);
    case SW_JOB_QUEUED:
        return on_queued(e, s, ev);
    case SW_JOB_RUNNING:
        return on_running(e, s, ev->at);
    case SW_JOB_OUTPUT:
        s->out_dirty = true;
        return SW_OK;
    }
    return SW_OK;
}

static void drain_events(sw_engine *e)
{
    sw_job_event ev;
    int error = sw_executor_process(e->ex, now_mono(e));

    if (error)
        sw_engine__notice(e, SW_NOTICE_WARN, "sweep: executor %s: %s",
                          sw_executor_name(e->ex), sw_error_last());
    while (sw_executor_next_event(e->ex, &ev) == 1) {
        on_event(e, &ev);
        sw_job_event_dispose(&ev);
    }
}

/* ---- canceling ------------------------------------------------------ */

/* Asks the attempt in `s` to stop, once; SIGKILL once the grace period
 * has passed, or at once when `force`. A slot not yet launched is
 * canceled when its launch is answered. */
static void cancel(sw_engine *e, sw_slot *s, sw_cancel why, bool force)
{
    double now = now_mono(e);

    if (!s->cancel)
        s->cancel = why;
    if (!s->force_at)
        s->force_at = now + e->grace;
    force = force || now >= s->force_at;
    if (s->phase == SW_SLOT_CAPTURE || s->phase == SW_SLOT_KILLED ||
        s->phase == SW_SLOT_ENDED)
        return;
    sw_executor_cancel(e->ex, job_key(s), force);
    if (sw_engine__started(s))
        s->phase = force ? SW_SLOT_KILLED : SW_SLOT_STOPPING;
}

static void cancel_all(sw_engine *e, sw_cancel why, bool force)
{
    size_t i;

    for (i = 0; i < e->n_slots; i++)
        cancel(e, e->slots[i], why, force);
}

static void enforce_deadlines(sw_engine *e)
{
    double now = now_mono(e);
    size_t i;
    sw_slot *s;

    for (i = 0; i < e->n_slots; i++) {
        s = e->slots[i];
        if (!sw_engine__started(s) || (s->next_req && !s->force_at))
            continue; /* a worker done with its run waits for the next */
        if (s->deadline && now >= s->deadline && !s->cancel)
            cancel(e, s, SW_CANCEL_TIMEOUT, false);
        else if (s->stop_at && now >= s->stop_at && !s->cancel)
            cancel(e, s, SW_CANCEL_STOPPED, false);
        else if (s->force_at && now >= s->force_at)
            cancel(e, s, s->cancel, true);
    }
}

void sw_engine__interrupt(sw_engine *e, int sig)
{
    e->interrupts++;
    e->signal = sig;
}

static void on_interrupts(sw_engine *e)
{
    int n = e->interrupts;

    if (n == e->seen_interrupts)
        return;
    e->seen_interrupts = n;
    if (n == 1) {
        size_t queued = sw_engine__count_queued(e), i;

        sw_engine__notice(e, SW_NOTICE_ERROR,
                          "\nsweep: stopping: no new trials; waiting for %zu "
                          "running (Ctrl-C again cancels them; `sweep resume "
                          "%s` continues)",
                          sw_engine__count_started(e) - queued, e->sweep.id);
        if (queued > 0)
            sw_engine__notice(e, SW_NOTICE_ERROR,
                              "sweep: canceling %zu jobs still queued: they "
                              "never started, and `sweep resume` submits "
                              "them again",
                              queued);
        /* a job that has not started is nothing to wait for */
        for (i = 0; i < e->n_slots; i++)
            if (sw_engine__started(e->slots[i]) && e->slots[i]->queued)
                cancel(e, e->slots[i], SW_CANCEL_INTERRUPTED, false);
    } else {
        sw_engine__notice(e, SW_NOTICE_ERROR,
                          "\nsweep: canceling %zu running trials",
                          sw_engine__count_started(e) +
                              sw_engine__count(e, SW_SLOT_LAUNCHING));
        cancel_all(e, SW_CANCEL_INTERRUPTED, n > 2);
    }
}

/* ---- the store's checkpoints ---------------------------------------- */

/* On a worker thread: the WAL into the database file (an fsync). */
static void checkpoint_run(sw_engine_work *w)
{
    sw_checkpoint_work *c = (sw_checkpoint_work *)w;

    c->error = sw_store_checkpoint(c->path);
    c->message = c->error ? sw_strdup(sw_error_last()) : NULL;
}

static void checkpoint_done(sw_engine *e, sw_engine_work *w)
{
    sw_checkpoint_work *c = (sw_checkpoint_work *)w;

    e->checkpointing = false;
    if (c->error)
        sw_engine__notice(e, SW_NOTICE_WARN, "sweep: %s", c->message);
    free(c->message);
    free(c->path);
    c->message = c->path = NULL;
}

/* Keeps the store's WAL short, off the loop: once it has grown past
 * CHECKPOINT_PAGES, and again only after a commit since (the size is
 * what the last commit saw). */
static void maybe_checkpoint(sw_engine *e)
{
    int pages = sw_store_wal_pages(e->st);

    if (e->checkpointing || pages < CHECKPOINT_PAGES ||
        pages == e->wal_checkpointed)
        return;
    e->wal_checkpointed = pages;
    e->checkpoint =
        (sw_checkpoint_work){{checkpoint_run, checkpoint_done, NULL},
                             sw_strdup(sw_store_path(e->st)),
                             SW_OK,
                             NULL};
    e->checkpointing = true;
    e->host.submit(e->host.ctx, &e->checkpoint.work);
}

/* ---- the pump ------------------------------------------------------- */

void sw_engine__work_done(sw_engine *e, sw_engine_work *w)
{
    sw_engine_work **p = &e->finished_work;

    while (*p)
        p = &(*p)->next;
    w->next = NULL;
    *p = w;
}

/* The search's suggestion, back (suggest.c), as a new run. */
static void take_suggestion(sw_engine *e)
{
    if (!e->suggested)
        return;
    e->suggested = false;
    if (!sw_engine__stopping(e))
        new_run(e, &e->suggest.trial);
    sw_trial_dispose(&e->suggest.trial);
}

static void run_finished_work(sw_engine *e)
{
    sw_engine_work *w;

    while ((w = e->finished_work)) {
        e->finished_work = w->next;
        w->done(e, w);
    }
}

/* A turn of every trial's output that may have more: all of them every
 * TAIL_S, and between, those whose watch saw a change or that had more
 * than a turn. On a virtual clock only the executor writes the logs, and
 * it says when (SW_JOB_OUTPUT): only those are read. Ended attempts
 * whose output is all read are recorded (backwards: that frees their
 * slot). */
static void tail_all(sw_engine *e)
{
    double now = now_mono(e);
    bool all = !e->virtual_time && now >= e->last_tail + TAIL_S;
    size_t i;
    sw_slot *s;

    if (all)
        e->last_tail = now;
    for (i = e->n_slots; i-- > 0 && !e->result;) {
        s = e->slots[i];
        if (s->phase == SW_SLOT_ENDED)
            drain(e, s);
        else if (sw_engine__started(s) && (all || s->out_dirty || s->out_more))
            sw_engine__fatal(e, sw_engine__tail(e, s, false));
    }
}

/* The sweep's state (as it resumes, as it ends), recorded, then told;
 * e->sweep.state follows. */
static int set_sweep_state(sw_engine *e, sw_sweep_state state, double ended_at)
{
    sw_event ev = {.kind = SW_EV_SWEEP, .sweep_state = state};
    int error = sw_store_set_sweep_state(e->st, e->sweep.id,
                                         sw_sweep_state_name(state), ended_at);

    if (error)
        return error;
    free(e->sweep.state);
    e->sweep.state = sw_strdup(sw_sweep_state_name(state));
    return sw_engine__emit(e, &ev);
}

int sw_engine__begin(sw_engine *e)
{
    size_t rerun = 0;
    int error;

    e->t0 = now_mono(e);
    e->last_tail = e->t0;
    sw_engine__read_size(e);
    error = sw_engine__make_stopper(e);
    if (!error && e->resuming)
        error = sw_engine__restore(e, &rerun);
    /* an interrupted or failed sweep is running again while it resumes:
     * `sweep ls` and its dashboard say so */
    if (!error && e->resuming &&
        !sw_sweep_state_is(e->sweep.state, SW_SWEEP_RUNNING))
        error = set_sweep_state(e, SW_SWEEP_RUNNING, 0);
    if (!error)
        error = sw_engine__budget_load(e);
    /* a resumed sweep's server starts here, once its adopted attempts
     * are known (their tokens, their port): its URL is said at once,
     * before any trial is launched, as `sweep run` says it */
    if (!error && e->serve && !e->server &&
        (error = sw_engine__start_server(e, e->listen)) == SW_OK)
        sw_engine__say_dashboard(e);
    if (!error && rerun)
        sw_engine__notice(e, SW_NOTICE_INFO,
                          "sweep %s: %zu interrupted, lost or failed runs go "
                          "again",
                          e->sweep.id, rerun);
    if (!error)
        sw_engine__warn_loopback(e);
    return sw_engine__fatal(e, error);
}

/* Does everything that is due now. */
int sw_engine__pump(sw_engine *e)
{
    sw_event tick = {.kind = SW_EV_TICK};

    /* reports first: one queued before its attempt ended still finds it */
    sw_engine__serve(e);
    run_finished_work(e);
    take_suggestion(e);
    if (!e->result) {
        for (int n = sw_engine__requests(e); n > 0; n--)
            sw_engine__interrupt(e, SIGINT); /* `sweep stop SWEEP` */
        on_interrupts(e);
        drain_events(e);
        tail_all(e);
        enforce_deadlines(e);
        if (e->target_hit && !e->cancel_sent) {
            cancel_all(e, SW_CANCEL_TARGET, false);
            e->cancel_sent = true;
        }
        sw_engine__gpus_pump(e);
        fill(e);
        settle_offers(e);
        next_capture(e);
        sw_engine__emit(e, &tick);
    }
    maybe_checkpoint(e);
    e->finished =
        !e->suggesting && !e->capturing && !e->checkpointing &&
        !sw_engine__gpus_busy(e) && !sw_engine__pbt_busy(e) &&
        (e->result || (e->n_slots == 0 && (sw_engine__stopping(e) ||
                                           (e->search_done && e->qlen == 0))));
    return e->result;
}

static void consider(double *w, double t)
{
    if (t > 0 && (*w == 0 || t < *w))
        *w = t;
}

double sw_engine__next_wake(sw_engine *e)
{
    double w = 0;
    size_t i;
    sw_slot *s;

    for (i = 0; i < e->n_slots; i++) {
        s = e->slots[i];
        if ((s->phase == SW_SLOT_ENDED && (s->out_more || !s->handed_to)) ||
            (s->out_more && !e->result))
            consider(&w, now_mono(e)); /* more to read: the next turn */
        if (!sw_engine__started(s))
            continue;
        consider(&w, s->cancel ? 0 : s->deadline);
        consider(&w, s->cancel ? 0 : s->stop_at);
        consider(&w, s->phase == SW_SLOT_KILLED ? 0 : s->force_at);
        if (!e->virtual_time)
            consider(&w, e->last_tail + TAIL_S);
        if (!s->proven && !s->queued && e->worked == 0 &&
            !sw_engine__stopping(e) &&
            s->launched_at + PROBATION_S > now_mono(e))
            consider(&w, s->launched_at + PROBATION_S);
    }
    consider(&w, sw_executor_next_wake(e->ex));
    consider(&w, sw_engine__requests_wake(e));
    consider(&w, sw_engine__gpus_wake(e));
    if (e->backoff_until > now_mono(e) && !sw_engine__stopping(e))
        consider(&w, e->backoff_until);
    if (e->tty)
        consider(&w, e->last_progress + 0.25); /* progress.c's redraw */
    return w;
}

int sw_engine__end(sw_engine *e)
{
    bool interrupted = e->seen_interrupts && !e->target_hit;
    sw_event tick = {.kind = SW_EV_TICK, .final = true};
    int error;

    /* the runs still paused end here, before the summary says the end */
    if (!e->result && !e->gave_up && !interrupted &&
        (error = sw_engine__end_paused(e)) != SW_OK)
        return sw_engine__fatal(e, error);
    sw_engine__emit(e, &tick);
    if (e->result)
        return e->result;
    if (e->gave_up) {
        error = set_sweep_state(e, SW_SWEEP_FAILED, 0);
        return error ? error
                     : sw_error_set(SW_ERROR,
                                    "sweep %s stopped: its first "
                                    "runs all failed",
                                    e->sweep.id);
    }
    /* nothing ran: every launch failed (a program that cannot be
     * executed, an sbatch error, a request the cluster cannot meet); the
     * sweep did not do its job, and is left `failed`, to resume once the
     * command is fixed (its failed runs then go again, resume.c) */
    if (!interrupted && e->unstarted_here > 0 && e->started_here == 0) {
        error = set_sweep_state(e, SW_SWEEP_FAILED, 0);
        return error
                   ? error
                   : sw_error_set(SW_ERROR,
                                  "sweep %s failed: none of its %zu "
                                  "attempts could start (see the messages "
                                  "above); fix the command, then `sweep "
                                  "resume %s`",
                                  e->sweep.id, e->unstarted_here, e->sweep.id);
    }
    /* every run ran and failed: the sweep did not do its job either */
    if (!interrupted && e->failed > 0 && e->worked == 0 && e->done == 0) {
        error = set_sweep_state(e, SW_SWEEP_FAILED, 0);
        return error ? error
                     : sw_error_set(SW_ERROR,
                                    "sweep %s failed: all %zu of its runs "
                                    "failed (`sweep ls %s` says why); fix "
                                    "the command, then `sweep resume %s`",
                                    e->sweep.id, e->failed, e->sweep.id,
                                    e->sweep.id);
    }
    error = set_sweep_state(
        e, interrupted ? SW_SWEEP_INTERRUPTED : SW_SWEEP_FINISHED,
        interrupted ? 0 : now_wall(e));
    if (!error && interrupted)
        error = sw_error_set(SW_EINTR,
                             "sweep %s interrupted: `sweep resume %s` "
                             "continues",
                             e->sweep.id, e->sweep.id);
    return error;
}
