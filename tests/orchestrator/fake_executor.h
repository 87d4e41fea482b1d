/*
 * fake_executor.h - an executor of the real interface (backends/
 * executor.h, version 2) whose attempts are scripted, not run: each
 * starts, writes its output, reacts to SIGTERM and ends on the time the
 * engine's clock gives process(). The engine's unit tests drive it on a
 * fake clock, with no processes and no sleeping.
 */
#ifndef SW_FAKE_EXECUTOR_H
#define SW_FAKE_EXECUTOR_H

#include <stdbool.h>

#include "backends/executor.h"
#include "orchestrator/engine/clock.h"

/* What one attempt does. */
typedef struct {
    bool fail_launch;   /* answered SW_JOB_START_FAILED */
    double runtime;     /* seconds from its start to its own end; <0: never */
    int exit_code;      /* how it ends by itself */
    bool lost;          /* ends as SW_JOB_LOST instead */
    int on_term;        /* exit code on SIGTERM; -1: ignores SIGTERM */
    const char *output; /* written to its stdout when it starts */
    bool not_started;   /* answered SW_JOB_NOT_STARTED (its supervisor
                           died before starting it) */
    bool disk_full;     /* with fail_launch: the failure is SW_ESTORAGE */
} fake_plan;

/* Fills *p for attempt `attempt` (1, 2, ...) of run `key`. */
typedef void (*fake_plan_fn)(void *ctx, const char *key, int attempt,
                             fake_plan *p);

typedef struct {
    char *key;
    char **argv; /* as the executor was given it */
    int attempt;
    fake_plan plan;
    double end_at;  /* when it ends by itself; 0: never */
    double term_at; /* first SIGTERM; 0: none */
    double kill_at; /* SIGKILL; 0: none */
    bool started, answered, adopted, done;
    char *devices;               /* its CUDA_VISIBLE_DEVICES; NULL: not set */
    double started_at, ended_at; /* on the engine's clock; 0: not yet */
} fake_job;

typedef struct {
    sw_executor base;
    fake_plan_fn plan;
    void *ctx;
    double now;
    fake_job *jobs;
    size_t n_jobs, cap_jobs;
    sw_job_event *events;
    size_t n_events, cap_events;
    size_t launches, terms, kills;
    /* adopt(): what attempts an earlier orchestrator left behind run as
     * plan() says for attempt 0; with no handle, `adopt_started` says
     * whether the lost launch had started */
    bool adopt_started;
} fake_executor;

/* A new fake executor (freed through sw_executor_free). */
fake_executor *fake_executor_new(fake_plan_fn plan, void *ctx);

/* The job of run `key` (its latest attempt); NULL when never launched. */
const fake_job *fake_executor_job(const fake_executor *fx, const char *key);

/* A clock that moves only when told to; wall = 1.7e9 + mono + wall_skew. */
typedef struct {
    sw_clock base;
    double now;
    double wall_skew;
} fake_clock;

void fake_clock_init(fake_clock *c);

#endif
