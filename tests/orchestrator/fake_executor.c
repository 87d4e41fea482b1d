/*
 * fake_executor.c - scripted attempts behind the real executor interface
 * (fake_executor.h). Events come only from process(), in time order of
 * the clock it is given, as a real executor's would.
 */
#include "fake_executor.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sweeps/command.h"
#include "sweeps/error.h"

static void push(fake_executor *fx, sw_job_event_kind kind, const char *key)
{
    sw_job_event *ev;

    sw_grow(&fx->events, &fx->cap_events, fx->n_events + 1, sizeof(*ev));
    ev = &fx->events[fx->n_events++];
    memset(ev, 0, sizeof(*ev));
    ev->kind = kind;
    ev->key = sw_strdup(key);
}

static fake_job *find(fake_executor *fx, const char *key)
{
    for (size_t i = fx->n_jobs; i > 0; i--)
        if (strcmp(fx->jobs[i - 1].key, key) == 0 && !fx->jobs[i - 1].done)
            return &fx->jobs[i - 1];
    return NULL;
}

static fake_job *add(fake_executor *fx, const char *key, int attempt)
{
    fake_job *j;

    sw_grow(&fx->jobs, &fx->cap_jobs, fx->n_jobs + 1, sizeof(*j));
    j = &fx->jobs[fx->n_jobs++];
    memset(j, 0, sizeof(*j));
    j->key = sw_strdup(key);
    j->attempt = attempt;
    fx->plan(fx->ctx, key, attempt, &j->plan);
    return j;
}

static void write_output(const char *path, const char *text)
{
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);

    if (fd >= 0) {
        if (sw_write_all(fd, text, strlen(text)) < 0)
            perror(path);
        close(fd);
    }
}

static int fake_launch(sw_executor *ex, const sw_launch *l)
{
    fake_executor *fx = (fake_executor *)ex;
    const char *a = NULL;
    fake_job *j;

    if (find(fx, l->key))
        return sw_error_set(SW_EINVALID, "fake: %s runs already", l->key);
    for (char *const *e = l->env; e && *e; e++)
        if (strncmp(*e, "SWEEP_ATTEMPT=", 14) == 0)
            a = *e + 14;
    j = add(fx, l->key, a ? (int)strtol(a, NULL, 10) : 1);
    for (char *const *e = l->env; e && *e; e++)
        if (strncmp(*e, "CUDA_VISIBLE_DEVICES=", 21) == 0)
            j->devices = sw_strdup(*e + 21);
    j->argv = sw_command_expand_envvars(l->argv, NULL); /* a plain copy */
    fx->launches++;
    if (j->plan.output && !j->plan.fail_launch)
        write_output(l->stdout_path, j->plan.output);
    return SW_OK;
}

static int fake_adopt(sw_executor *ex, const char *key, const char *dir,
                      const char *handle)
{
    fake_executor *fx = (fake_executor *)ex;
    fake_job *j = add(fx, key, 0);

    (void)dir;
    j->adopted = true;
    j->answered = handle != NULL;
    j->started = handle != NULL; /* its clock starts at the next process() */
    return SW_OK;
}

static int fake_cancel(sw_executor *ex, const char *key, bool force)
{
    fake_executor *fx = (fake_executor *)ex;
    fake_job *j = find(fx, key);

    if (!j)
        return sw_error_set(SW_ENOTFOUND, "fake: no job %s", key);
    if (force && !j->kill_at) {
        j->kill_at = fx->now;
        fx->kills++;
    } else if (!force && !j->term_at) {
        j->term_at = fx->now;
        fx->terms++;
    }
    return SW_OK;
}

static int fake_fd(sw_executor *ex)
{
    (void)ex;
    return -1;
}

static void end(fake_executor *fx, fake_job *j, bool exited, int code)
{
    sw_job_event *ev;

    push(fx, j->plan.lost && exited ? SW_JOB_LOST : SW_JOB_ENDED, j->key);
    j->ended_at = fx->now;
    ev = &fx->events[fx->n_events - 1];
    ev->exit.exited = exited;
    ev->exit.exit_code = exited ? code : 0;
    ev->exit.signal = exited ? 0 : code;
    if (ev->kind == SW_JOB_LOST)
        ev->message = sw_strdup("fake: its supervisor died");
    j->done = true;
}

/* An attempt's answer: it starts (or fails to) at the first process(). */
static void answer(fake_executor *fx, fake_job *j)
{
    j->answered = true;
    if (j->plan.fail_launch || j->plan.not_started ||
        (j->adopted && !fx->adopt_started)) {
        bool failed = !j->adopted && j->plan.fail_launch;

        push(fx, failed ? SW_JOB_START_FAILED : SW_JOB_NOT_STARTED, j->key);
        if (failed) {
            fx->events[fx->n_events - 1].message =
                sw_strdup(j->plan.disk_full ? "fake: No space left on device"
                                            : "fake: cannot start");
            fx->events[fx->n_events - 1].code =
                j->plan.disk_full ? SW_ESTORAGE : SW_ERROR;
        }
        j->done = true;
        return;
    }
    push(fx, SW_JOB_STARTED, j->key);
    fx->events[fx->n_events - 1].handle = sw_aprintf("fake %s", j->key);
    j->started = true;
    j->started_at = fx->now;
    j->end_at = j->plan.runtime >= 0 ? fx->now + j->plan.runtime : 0;
}

static int fake_process(sw_executor *ex, double now)
{
    fake_executor *fx = (fake_executor *)ex;

    fx->now = now;
    for (size_t i = 0; i < fx->n_jobs; i++) {
        fake_job *j = &fx->jobs[i];

        if (j->done)
            continue;
        if (!j->answered)
            answer(fx, j);
        if (j->done || !j->started)
            continue;
        if (j->adopted && !j->end_at && j->plan.runtime >= 0)
            j->end_at = now + j->plan.runtime;
        if (j->kill_at)
            end(fx, j, false, 9);
        else if (j->term_at && j->plan.on_term >= 0)
            end(fx, j, true, j->plan.on_term);
        else if (j->end_at && now >= j->end_at)
            end(fx, j, true, j->plan.exit_code);
    }
    return SW_OK;
}

static double fake_next_wake(sw_executor *ex)
{
    fake_executor *fx = (fake_executor *)ex;
    double w = 0;

    for (size_t i = 0; i < fx->n_jobs; i++) {
        const fake_job *j = &fx->jobs[i];
        double t =
            j->done ? 0
            : !j->answered || j->kill_at || (j->term_at && j->plan.on_term >= 0)
                ? fx->now
                : j->end_at;

        if (t > 0 && (w == 0 || t < w))
            w = t;
    }
    return w;
}

static int fake_next_event(sw_executor *ex, sw_job_event *out)
{
    fake_executor *fx = (fake_executor *)ex;

    if (fx->n_events == 0)
        return 0;
    *out = fx->events[0];
    memmove(fx->events, fx->events + 1, --fx->n_events * sizeof(*out));
    return 1;
}

static void fake_free(sw_executor *ex)
{
    fake_executor *fx = (fake_executor *)ex;

    for (size_t i = 0; i < fx->n_jobs; i++) {
        free(fx->jobs[i].key);
        free(fx->jobs[i].devices);
        sw_command_free(fx->jobs[i].argv);
    }
    for (size_t i = 0; i < fx->n_events; i++)
        sw_job_event_dispose(&fx->events[i]);
    free(fx->jobs);
    free(fx->events);
    free(fx);
}

static const sw_executor_methods fake_methods = {
    SW_EXECUTOR_VERSION,
    "fake",
    fake_launch,
    fake_adopt,
    fake_cancel,
    fake_fd,
    fake_next_wake,
    fake_process,
    fake_next_event,
    fake_free,
    NULL,
    NULL,
    false,
};

fake_executor *fake_executor_new(fake_plan_fn plan, void *ctx)
{
    fake_executor *fx = sw_calloc(1, sizeof(*fx));

    fx->base.methods = &fake_methods;
    fx->plan = plan;
    fx->ctx = ctx;
    fx->adopt_started = true;
    return fx;
}

const fake_job *fake_executor_job(const fake_executor *fx, const char *key)
{
    for (size_t i = fx->n_jobs; i > 0; i--)
        if (strcmp(fx->jobs[i - 1].key, key) == 0)
            return &fx->jobs[i - 1];
    return NULL;
}

static double fake_mono(const sw_clock *c)
{
    return ((const fake_clock *)c)->now;
}

static double fake_wall(const sw_clock *c)
{
    const fake_clock *f = (const fake_clock *)c;

    return 1.7e9 + f->now + f->wall_skew;
}

void fake_clock_init(fake_clock *c)
{
    c->base.mono = fake_mono;
    c->base.wall = fake_wall;
    c->now = 1000;
    c->wall_skew = 0;
}
