/*
 * loop.c - the engine's loop: fill free slots (retries first, then new
 * trials from the search), wait for an attempt to end or a signal, read
 * metrics (output.c), enforce timeouts, record ends, show progress.
 * Resuming a sweep is in resume.c.
 *
 * Every state change is written to the store before the engine acts on
 * it; see engine.c for the invariants.
 */
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "orchestrator/engine_internal.h"
#include "orchestrator/provenance.h"
#include "sweeps/command.h"
#include "sweeps/json.h"

#define TICK_MS 100

void sw_engine__slot_clear(sw_slot *s)
{
    sw_run_rec_dispose(&s->rec);
    free(s->run_dir);
    if (s->out_fd >= 0)
        close(s->out_fd);
    memset(s, 0, sizeof(*s));
    s->out_fd = -1;
}

sw_slot *sw_engine__free_slot(sw_engine *e)
{
    size_t i;

    for (i = 0; i < e->n_slots; i++)
        if (!e->slots[i].active)
            return &e->slots[i];
    sw_grow(&e->slots, &e->cap_slots, e->n_slots + 1, sizeof(sw_slot));
    memset(&e->slots[e->n_slots], 0, sizeof(sw_slot));
    e->slots[e->n_slots].out_fd = -1;
    return &e->slots[e->n_slots++];
}

static size_t n_active(const sw_engine *e)
{
    size_t i, n = 0;

    for (i = 0; i < e->n_slots; i++)
        n += e->slots[i].active;
    return n;
}

static void set_str(char **dst, const char *src)
{
    free(*dst);
    *dst = src ? sw_strdup(src) : NULL;
}

/* Parses the stored argv (a JSON array of strings). */
static char **argv_from_json(const char *json)
{
    sw_value *v = NULL;
    char **argv;
    size_t i;

    if (sw_json_parse(&v, json, strlen(json)) != SW_OK || v->type != SW_LIST) {
        sw_value_free(v);
        return NULL;
    }
    argv = sw_calloc(v->u.list.len + 1, sizeof(char *));
    for (i = 0; i < v->u.list.len; i++)
        argv[i] = sw_value_to_py(v->u.list.items[i]);
    sw_value_free(v);
    return argv;
}

/* The run's folder; an attempt's pid and exit files live in it. */
void sw_engine__slot_paths(sw_engine *e, sw_slot *s)
{
    free(s->run_dir);
    s->run_dir = sw_aprintf("%s/%s", e->runs_dir, s->rec.id);
    s->job.dir = s->run_dir;
}

/* Renames the pid and exit files of the run's last attempt to
 * attempt-N.pid and attempt-N.exit, so the next attempt starts from a
 * folder that holds none (done before the next attempt is committed, so
 * a crash in between leaves the store's last attempt as it was). */
static void archive_attempt(const sw_slot *s)
{
    static const char *const names[] = {"pid", "exit"};
    char *from, *to;
    size_t i;

    for (i = 0; i < 2 && s->rec.attempts > 0; i++) {
        from = sw_aprintf("%s/%s", s->run_dir, names[i]);
        to = sw_aprintf("%s/attempt-%lld.%s", s->run_dir,
                        (long long)s->rec.attempts, names[i]);
        if (rename(from, to) != 0 && errno != ENOENT)
            fprintf(stderr, "sweep: cannot rename %s: %s\n", from,
                    strerror(errno));
        free(from);
        free(to);
    }
}

static char **trial_env(const sw_engine *e, const sw_slot *s)
{
    char **env = sw_calloc(8, sizeof(char *));

    env[0] = sw_aprintf("SWEEP_ID=%s", e->sweep.id);
    env[1] = sw_aprintf("SWEEP_RUN_ID=%s", s->rec.id);
    env[2] = sw_aprintf("SWEEP_RUN_DIR=%s", s->run_dir);
    env[3] = sw_aprintf("SWEEP_CHECKPOINT_DIR=%s/checkpoint", s->run_dir);
    env[4] = sw_aprintf("SWEEP_PARAMS=%s/params.json", s->run_dir);
    env[5] = sw_aprintf("SWEEP_ATTEMPT=%lld", (long long)s->rec.attempts);
    env[6] = sw_aprintf("SWEEP_HOME=%s", e->home);
    return env;
}

/* The run's folders and its params file. */
static int prepare_dirs(sw_slot *s)
{
    char *ckpt = sw_aprintf("%s/checkpoint", s->run_dir);
    char *params = sw_aprintf("%s/params.json", s->run_dir);
    int error;

    error = sw_engine__mkdirs(ckpt);
    if (!error)
        error = sw_engine__write_file(params, s->rec.params);
    free(ckpt);
    free(params);
    return error;
}

/* Ends a run that could not even start (bad argv, no fork). */
static int fail_to_start(sw_engine *e, sw_slot *s, const char *why)
{
    s->rec.state = SW_RUN_FAILED;
    set_str(&s->rec.reason, why);
    s->rec.ended_at = sw_engine__now();
    e->failed++;
    fprintf(stderr, "sweep: run %s cannot start: %s\n", s->rec.id, why);
    return sw_store_update_run(e->st, &s->rec);
}

/* Starts the next attempt of the run in `s`. Its running state and
 * attempt number are committed first (closing the transaction the caller
 * opened when `tx`); its pid is not waited for: the attempt's folder
 * holds it, and resume reads it there. */
static int launch(sw_engine *e, sw_slot *s, bool tx)
{
    char *out, *err, **env, **argv = argv_from_json(s->rec.argv);
    sw_launch l;
    int error;

    sw_engine__slot_paths(e, s);
    archive_attempt(s);
    s->rec.attempts++;
    s->rec.state = SW_RUN_RUNNING;
    s->rec.started_at = sw_engine__now();
    s->rec.ended_at = 0;
    s->rec.pid = s->rec.pgid = 0;
    s->rec.has_exit = false;
    s->rec.signal = 0;
    set_str(&s->rec.reason, NULL);
    sw_provenance_run(e, &s->rec); /* the code it starts with; can't fail */
    error = sw_store_update_run(e->st, &s->rec);
    if (tx && !error)
        error = sw_store_commit(e->st);
    if (error)
        goto done;
    if (!argv || !argv[0] || (error = prepare_dirs(s)) != SW_OK) {
        error = fail_to_start(e, s, argv ? sw_error_last() : "bad argv");
        s->active = false;
        sw_engine__slot_clear(s);
        goto done;
    }
    out = sw_aprintf("%s/stdout.log", s->run_dir);
    err = sw_aprintf("%s/stderr.log", s->run_dir);
    env = trial_env(e, s);
    l = (sw_launch){argv, env, e->sweep.cwd, s->run_dir, out, err};
    error = sw_executor_launch(e->ex, &l, &s->job);
    free(out);
    free(err);
    sw_command_free(env);
    if (error) {
        error = fail_to_start(e, s, sw_error_last());
        sw_engine__slot_clear(s);
        goto done;
    }
    s->rec.pid = s->job.pid;
    s->rec.pgid = s->job.pgid;
    s->deadline =
        e->spec->timeout > 0 ? s->rec.started_at + e->spec->timeout : 0;
done:
    sw_command_free(argv);
    return error;
}

/* Creates the run of trial `idx` (pending, committed) into slot `s`. */
static int new_run(sw_engine *e, sw_slot *s, const sw_trial *t)
{
    sw_command_opts co = SW_COMMAND_OPTS_INIT;
    sw_buf b = SW_BUF_INIT;
    char **argv = NULL, *params_file;
    sw_value *list = sw_value_list();
    size_t i;
    int error;

    memset(&s->rec, 0, sizeof(s->rec));
    s->rec.id =
        sw_aprintf("%s-%llu", e->sweep.id, (unsigned long long)t->index + 1);
    s->rec.sweep_id = sw_strdup(e->sweep.id);
    s->rec.idx = (int64_t)t->index;
    s->rec.cell = sw_strdup(t->id);
    sw_value_write_json(&b, t->params, false);
    s->rec.params = sw_buf_detach(&b);
    params_file = sw_aprintf("%s/%s/params.json", e->runs_dir, s->rec.id);
    co.interpreter = sw_command_interpreter();
    co.args_json_file = params_file;
    error = sw_command_render(&argv, NULL, e->spec, t->params, &co);
    free(params_file);
    for (i = 0; !error && argv[i]; i++)
        sw_value_list_push(list, sw_value_str(argv[i]));
    sw_value_write_json(&b, list, false);
    s->rec.argv = sw_buf_detach(&b);
    s->rec.state = SW_RUN_PENDING;
    s->rec.created_at = sw_engine__now();
    sw_value_free(list);
    sw_command_free(argv);
    if (!error)
        error = sw_store_put_run(e->st, &s->rec);
    return error;
}

static bool run_cap_reached(const sw_engine *e)
{
    return e->spec->run_cap > 0 && e->next_idx >= (uint64_t)e->spec->run_cap;
}

/* Fills free slots: queued retries and adoptions first, then the search. */
static int fill(sw_engine *e)
{
    sw_trial t;
    sw_slot *s;
    int error = SW_OK;

    while (!error && n_active(e) < (size_t)e->parallel) {
        if (e->qlen > 0) {
            s = sw_engine__free_slot(e);
            s->rec = e->queue[--e->qlen];
            s->active = true;
            error = launch(e, s, false);
            continue;
        }
        if (e->search_done || run_cap_reached(e)) {
            e->search_done = true;
            break;
        }
        sw_trial_init(&t);
        if ((error = sw_search_next(e->search, &t)) != SW_OK) {
            e->search_done = true;
            sw_trial_dispose(&t);
            if (error == SW_EDONE)
                error = SW_OK;
            break;
        }
        e->next_idx = t.index + 1;
        s = sw_engine__free_slot(e);
        s->active = true;
        /* pending and running commit together, before the launch */
        error = sw_store_begin(e->st);
        if (!error)
            error = new_run(e, s, &t);
        sw_trial_dispose(&t);
        if (!error)
            error = launch(e, s, true);
    }
    return error;
}

static bool better(const sw_engine *e, double v, double than)
{
    return e->spec->metric.goal == SW_GOAL_MAXIMIZE ? v > than : v < than;
}

void sw_engine__note_value(sw_engine *e, const sw_run_rec *r)
{
    const sw_metric *m = &e->spec->metric;

    if (!r->has_value || isnan(r->value))
        return;
    if (!e->has_best || better(e, r->value, e->best)) {
        e->has_best = true;
        e->best = r->value;
        set_str(&e->best_run, r->id);
    }
    if (m->has_target && !e->target_hit &&
        (m->goal == SW_GOAL_MAXIMIZE ? r->value >= m->target
                                     : r->value <= m->target)) {
        e->target_hit = true;
        printf("sweep %s: run %s reached the target %s = %g\n", e->sweep.id,
               r->id, m->name, m->target);
    }
}

static void describe_exit(char *out, size_t n, const sw_exit *x)
{
    if (x->exited)
        snprintf(out, n, "exit %d", x->exit_code);
    else
        snprintf(out, n, "signal %d", x->signal);
}

static void report_end(sw_engine *e, const sw_slot *s)
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

/* The run as the search knows it: its index and parameters. */
static int trial_of(const sw_run_rec *r, sw_trial *t)
{
    sw_trial_init(t);
    if (sw_json_parse(&t->params, r->params, strlen(r->params)) != SW_OK)
        return sw_error_set(SW_EIO,
                            "run %s: its stored params are not JSON: "
                            "%s",
                            r->id, sw_error_last());
    t->index = (uint64_t)r->idx;
    snprintf(t->id, sizeof(t->id), "%s", r->cell);
    return SW_OK;
}

/* Tells the search how a run ended (`ended`: its value, NaN for a failed
 * run or one without a value) or that it is in flight. A search that
 * cannot take it (a run from outside its space) is warned about, not
 * fatal: the sweep goes on. */
void sw_engine__tell_search(sw_engine *e, const sw_run_rec *r, bool ended)
{
    double v = r->state == SW_RUN_FINISHED || r->state == SW_RUN_STOPPED
                   ? (r->has_value ? r->value : NAN)
                   : NAN;
    sw_trial t;
    int error = trial_of(r, &t);

    if (!error)
        error = ended ? sw_search_observe(e->search, &t, v)
                      : sw_search_pending(e->search, &t);
    if (error)
        fprintf(stderr, "sweep: run %s: %s\n", r->id, sw_error_last());
    sw_trial_dispose(&t);
}

void sw_engine__requeue(sw_engine *e, sw_slot *s)
{
    sw_grow(&e->queue, &e->qcap, e->qlen + 1, sizeof(sw_run_rec));
    e->queue[e->qlen++] = s->rec;
    memset(&s->rec, 0, sizeof(s->rec));
}

/* The reason a failed attempt failed. */
static void failure_reason(const sw_engine *e, const sw_slot *s,
                           const sw_exit *x, bool lost, char *out, size_t n)
{
    if (s->why)
        snprintf(out, n, "timeout after %gs", e->spec->timeout);
    else if (lost)
        snprintf(out, n, "lost: its supervisor died");
    else
        describe_exit(out, n, x);
}

/* How many runs may fail before the first success, before the sweep
 * stops launching: $SWEEP_MAX_INITIAL_FAILURES, default 5, 0 for no
 * limit (as W&B's agent does with WANDB_AGENT_MAX_INITIAL_FAILURES). A
 * command that cannot work then costs five runs, not a night of them. */
static size_t max_initial_failures(void)
{
    const char *s = getenv("SWEEP_MAX_INITIAL_FAILURES");
    char *end;
    unsigned long v;

    if (!s || !*s)
        return 5;
    v = strtoul(s, &end, 10);
    return *end ? 5 : (size_t)v;
}

static void give_up_if_all_failed(sw_engine *e, const sw_slot *s)
{
    size_t max = max_initial_failures();

    if (e->gave_up || e->done > 0 || max == 0 || e->failed_here < max)
        return;
    e->gave_up = true;
    fprintf(stderr,
            "\nsweep: the first %zu runs all failed (the last: %s; "
            "see %s/stderr.log): launching no more. Fix the command and "
            "`sweep resume %s`, or set SWEEP_MAX_INITIAL_FAILURES.\n",
            e->failed_here, s->rec.reason ? s->rec.reason : "?", s->run_dir,
            e->sweep.id);
}

/* Decides what an ended attempt means for its run, and records it. */
static int finish(sw_engine *e, sw_slot *s, const sw_exit *x, bool lost)
{
    char why[128];
    int error;

    if ((error = sw_engine__tail(e, s)) != SW_OK)
        return error;
    s->rec.ended_at = sw_engine__now();
    s->rec.has_exit = !lost && x->exited;
    s->rec.exit_code = x->exited ? x->exit_code : 0;
    s->rec.signal = lost || x->exited ? 0 : x->signal;
    if (s->why && strcmp(s->why, "timeout") != 0) {
        s->rec.state = SW_RUN_CANCELED;
        set_str(&s->rec.reason, s->why);
        e->canceled++;
    } else if (!lost && x->exited && x->exit_code == 0) {
        s->rec.state = SW_RUN_FINISHED;
        set_str(&s->rec.reason, NULL);
        e->done++;
    } else {
        failure_reason(e, s, x, lost, why, sizeof(why));
        set_str(&s->rec.reason, why);
        s->rec.state = s->rec.attempts <= e->spec->retries ? SW_RUN_PENDING
                                                           : SW_RUN_FAILED;
        e->failed += s->rec.state == SW_RUN_FAILED;
        e->failed_here += s->rec.state == SW_RUN_FAILED;
        give_up_if_all_failed(e, s);
    }
    error = sw_store_update_run(e->st, &s->rec);
    report_end(e, s);
    if (s->rec.state == SW_RUN_FINISHED || s->rec.state == SW_RUN_FAILED ||
        s->rec.state == SW_RUN_STOPPED)
        sw_engine__tell_search(e, &s->rec, true);
    if (s->rec.state == SW_RUN_PENDING)
        sw_engine__requeue(e, s);
    sw_engine__slot_clear(s);
    return error;
}

static void cancel(sw_engine *e, sw_slot *s, const char *why, bool force)
{
    double now = sw_engine__now();

    if (!s->why)
        s->why = why;
    if (!s->force_at)
        s->force_at = now + e->grace;
    sw_executor_cancel(e->ex, &s->job, force || now >= s->force_at);
}

/* Checks one running attempt: metrics, its end, its deadline. */
static int service(sw_engine *e, sw_slot *s, double now)
{
    sw_exit x = {false, 0, 0};
    int rc, error;

    if ((error = sw_engine__tail(e, s)) != SW_OK)
        return error;
    rc = sw_executor_check(e->ex, &s->job, &x);
    if (rc == 1)
        return finish(e, s, &x, false);
    if (rc < 0) { /* gone without a readable record of its end */
        if (!e->quiet)
            fprintf(stderr, "sweep: run %s: %s\n", s->rec.id, sw_error_last());
        /* its trial may still run, unwatched: end it before a rerun */
        sw_executor_cancel(e->ex, &s->job, true);
        return finish(e, s, &x, true);
    }
    if (s->deadline && now >= s->deadline && !s->why)
        cancel(e, s, "timeout", false);
    if (s->force_at && now >= s->force_at)
        sw_executor_cancel(e->ex, &s->job, true);
    return SW_OK;
}

static void cancel_all(sw_engine *e, const char *why, bool force)
{
    size_t i;

    for (i = 0; i < e->n_slots; i++)
        if (e->slots[i].active)
            cancel(e, &e->slots[i], why, force);
}

static void on_interrupts(sw_engine *e)
{
    int n = sw_engine__interrupts();

    if (n == e->seen_interrupts)
        return;
    e->seen_interrupts = n;
    if (n == 1) {
        fprintf(stderr,
                "\nsweep: stopping: no new trials; waiting for %zu "
                "running (Ctrl-C again cancels them; `sweep resume %s` "
                "continues)\n",
                n_active(e), e->sweep.id);
    } else {
        fprintf(stderr, "\nsweep: canceling %zu running trials\n", n_active(e));
        cancel_all(e, "interrupted", n > 2);
    }
}

static void wait_events(sw_engine *e)
{
    struct pollfd p[2];
    char drain[256];
    int i, n = 0;

    p[n].fd = sw_engine__signal_fd();
    p[n++].events = POLLIN;
    p[n].fd = sw_executor_wait_fd(e->ex);
    p[n++].events = POLLIN;
    if (p[1].fd < 0)
        n = 1;
    if (poll(p, (nfds_t)n, TICK_MS) <= 0)
        return;
    for (i = 0; i < n; i++)
        if (p[i].revents & POLLIN)
            while (read(p[i].fd, drain, sizeof(drain)) > 0)
                ;
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
 * bounded) plus retries waiting for a slot. */
static void print_pending(const sw_engine *e)
{
    uint64_t count, left;
    bool bounded, saturated;

    sw_search_size(e->search, &count, &bounded, &saturated);
    if (!bounded || saturated) {
        printf("%zu+ pending", e->qlen);
        return;
    }
    left = count > e->next_idx ? count - e->next_idx : 0;
    printf("%llu pending", (unsigned long long)(left + e->qlen));
}

/* One status line, redrawn in place on a terminal. */
static void progress(sw_engine *e, bool final)
{
    double now = sw_engine__now();
    char elapsed[32];

    if (e->quiet || (!e->tty && !final) ||
        (!final && now - e->last_progress < 0.25))
        return;
    e->last_progress = now;
    format_elapsed(elapsed, sizeof(elapsed), now - e->t0);
    printf("%s%zu finished, %zu running, ", e->tty ? "\r\033[K" : "", e->done,
           n_active(e));
    print_pending(e);
    printf(", %zu failed", e->failed);
    if (e->canceled)
        printf(", %zu canceled", e->canceled);
    if (e->has_best)
        printf(", best %s=%g (%s)", e->spec->metric.name, e->best, e->best_run);
    printf(", %s%s", elapsed, final ? "\n" : "");
    fflush(stdout);
}

static int service_all(sw_engine *e)
{
    double now = sw_engine__now();
    size_t i;
    int error = SW_OK;

    for (i = 0; !error && i < e->n_slots; i++)
        if (e->slots[i].active)
            error = service(e, &e->slots[i], now);
    return error;
}

int sw_engine__loop(sw_engine *e)
{
    int error = SW_OK;
    bool stopping;

    if (e->resuming)
        error = sw_engine__restore(e);
    while (!error) {
        on_interrupts(e);
        stopping = e->seen_interrupts > 0 || e->target_hit || e->gave_up;
        if (e->target_hit && !e->cancel_sent) {
            cancel_all(e, "target reached", false);
            e->cancel_sent = true;
        }
        if (!stopping)
            error = fill(e);
        if (error || (n_active(e) == 0 &&
                      (stopping || (e->search_done && e->qlen == 0))))
            break;
        wait_events(e);
        error = service_all(e);
        progress(e, false);
    }
    progress(e, true);
    if (error)
        return error;
    if (e->gave_up) {
        error = sw_store_set_sweep_state(e->st, e->sweep.id, "failed", 0);
        return error ? error
                     : sw_error_set(SW_ERROR,
                                    "sweep %s stopped: its first "
                                    "runs all failed",
                                    e->sweep.id);
    }
    return sw_store_set_sweep_state(
        e->st, e->sweep.id,
        e->seen_interrupts && !e->target_hit ? "interrupted" : "finished",
        e->seen_interrupts && !e->target_hit ? 0 : sw_engine__now());
}
