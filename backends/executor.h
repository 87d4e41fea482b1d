/*
 * executor.h - where trials run: the interface every executor implements
 * (local processes, Slurm jobs, a simulated cluster), the one
 * factory that makes them by name, and the one-line wrappers the engine
 * calls.
 *
 * The shape is libuv's: an executor is a long-lived handle that the engine
 * polls through one descriptor and one wake-up time; launching is a
 * request whose answer comes back later as an event. Nothing here blocks
 * the engine's loop for longer than a write to a local socket.
 *
 *   - launch() queues an attempt; SW_JOB_STARTED (with the job's handle)
 *     or SW_JOB_START_FAILED answers it, or SW_JOB_NOT_STARTED when the
 *     executor's own machinery failed first (a supervisor died) and the
 *     attempt is known never to have run: not the trial's failure.
 *   - an attempt starts at most once: before SW_JOB_NOT_STARTED or
 *     SW_JOB_LOST, the executor makes sure no copy of it runs or ever
 *     will, so the engine may run it again at once.
 *   - adopt() takes over an attempt that an earlier orchestrator launched,
 *     from the handle the store kept (NULL when the launch was never
 *     answered); SW_JOB_STARTED, SW_JOB_NOT_STARTED, SW_JOB_ENDED or
 *     SW_JOB_LOST answers it.
 *   - every attempt that started ends with exactly one SW_JOB_ENDED or
 *     SW_JOB_LOST; after it the executor forgets the key.
 *   - the engine calls process() when fd() is readable or when the time
 *     next_wake() asked for has come, then drains next_event().
 *
 * A job handle is a short string that only its executor reads (the local
 * executor's is "SUPERVISOR_PID TRIAL_PGID STARTTIME"); the store keeps it with
 * the run, so the engine never parses an executor's files.
 *
 * Crash safety is part of the contract: a trial must outlive the
 * orchestrator, and a new orchestrator must be able to adopt it from its
 * handle and its attempt folder, and learn how it ended even if it ended
 * while no orchestrator was running.
 *
 * Version 3 adds time: an executor may keep its own clock (clock() not
 * NULL and returning one), as the simulated cluster keeps a virtual one.
 * The engine then reads its time from that clock, and a driver moves it
 * with advance() instead of sleeping. Such an executor's fd() is >= 0
 * exactly while it waits for something real (a surrogate process): the
 * driver waits for the descriptor, and does not advance the clock
 * meanwhile. Real executors leave both entries NULL.
 *
 * Version 5 adds a scheduler's queue (Slurm): after SW_JOB_STARTED (the
 * job is accepted) an executor may say SW_JOB_QUEUED (it waits, and
 * why) and then SW_JOB_RUNNING (it left the queue, at wall time `at`).
 * Until SW_JOB_RUNNING the attempt holds nothing and its run time has
 * not begun: no timeout runs, no GPU is counted. An executor that never
 * says SW_JOB_QUEUED runs its attempts from SW_JOB_STARTED, as before.
 * SW_JOB_ENDED and SW_JOB_LOST may carry the end's wall time in `at`,
 * as the scheduler recorded it.
 *
 * Version 6 adds SW_JOB_OUTPUT: the job's stdout.log has grown. An
 * executor that keeps a clock writes its jobs' logs itself and must say
 * so each time, since on a virtual clock the engine reads a log only
 * when told (a scan of thousands of logs at every step was most of a
 * large simulation's cost); others may say it, and are read anyway.
 */
#ifndef SW_EXECUTOR_H
#define SW_EXECUTOR_H

#include <stdbool.h>
#include <stdint.h>

#include "backends/clock.h"
#include "sweeps/spec.h" /* sw_resources: what a trial asks for */

typedef struct {
    const char *key;         /* the engine's name for the attempt (its run id);
                                every event about it carries it back */
    char *const *argv;       /* NULL-terminated; argv[0] searched in PATH */
    char *const *env;        /* "NAME=value" entries added to the inherited
                                environment (replacing same names); may be NULL */
    const char *cwd;         /* NULL: the orchestrator's working directory */
    const char *dir;         /* the attempt's folder: status files live here */
    const char *stdout_path; /* appended to; trials write it directly */
    const char *stderr_path;
    sw_resources resources; /* what it asked for */
    const char *devices;    /* the devices the engine gave it (the value of
                               CUDA_VISIBLE_DEVICES); NULL: none */
    int64_t log_limit;      /* bytes each log may hold, past which the rest
                               of the attempt's output is dropped after one
                               SW_LOG_LIMIT_MARK line; 0: no limit */
} sw_launch;

/* How the line that ends a log cut at its limit starts. */
#define SW_LOG_LIMIT_MARK "@sweep log_limit"

/* How an attempt ended. */
typedef struct {
    bool exited; /* true: exit_code is valid; false: killed by signal */
    int exit_code;
    int signal;
    bool disk; /* the machine's disk failed it: a write of its output was
                  refused (ENOSPC, EDQUOT, EIO, EROFS), or it failed while
                  the disk was full; not the trial's fault */
} sw_exit;

typedef enum {
    SW_JOB_STARTED,      /* it runs; `handle` is set */
    SW_JOB_START_FAILED, /* launch() could not start it; `message` */
    SW_JOB_NOT_STARTED,  /* it never ran and never will (adopt(): the
                            earlier launch never started) */
    SW_JOB_ENDED,        /* `exit` says how */
    SW_JOB_LOST,         /* gone without a record of its end; `message` */
    SW_JOB_QUEUED,       /* version 5: it waits in the scheduler's queue;
                            `message` is the scheduler's reason; told again
                            when the reason changes, and once with `late`
                            when it has waited past the executor's limit */
    SW_JOB_RUNNING,      /* version 5: it left the queue and runs, since
                            wall time `at` (0: now) */
    SW_JOB_OUTPUT,       /* version 6: its stdout.log has grown */
} sw_job_event_kind;

/* One thing that happened to an attempt. The strings belong to the event:
 * sw_job_event_dispose() frees them. */
typedef struct {
    sw_job_event_kind kind;
    char *key;
    char *handle;  /* SW_JOB_STARTED; else NULL */
    sw_exit exit;  /* SW_JOB_ENDED */
    char *message; /* SW_JOB_START_FAILED, SW_JOB_LOST, SW_JOB_QUEUED;
                      SW_JOB_ENDED: the scheduler's word on an end that
                      is not a plain exit ("Slurm job 12 ended TIMEOUT");
                      else NULL */
    double at;     /* version 5: SW_JOB_RUNNING: wall time it started;
                      SW_JOB_ENDED, SW_JOB_LOST: wall time it ended, as
                      the scheduler says; 0: not known (now) */
    bool late;     /* SW_JOB_QUEUED: it has waited past the executor's
                      limit for a reason that may pass; told once */
    int code;      /* SW_JOB_START_FAILED: its SW_E* code; SW_ESTORAGE when
                      the machine's disk failed (full, I/O error), which
                      no trial can fix: the engine stops launching */
} sw_job_event;

/* Frees the strings of `ev` and zeroes it; accepts NULL. */
void sw_job_event_dispose(sw_job_event *ev);

typedef struct sw_executor sw_executor;

typedef struct {
    unsigned int version;
    const char *name;
    /* Queues the attempt `l` (the executor copies what it keeps). Fails
     * only when the request itself is unusable or the key is in use. */
    int (*launch)(sw_executor *ex, const sw_launch *l);
    /* Watches an attempt launched by an earlier orchestrator. `handle`:
     * what SW_JOB_STARTED gave then; NULL when that answer was lost. */
    int (*adopt)(sw_executor *ex, const char *key, const char *dir,
                 const char *handle);
    /* Asks the attempt to stop (SIGTERM to a local trial's group);
     * `force` kills it. Its end then comes as an event. SW_ENOTFOUND for
     * an unknown key. */
    int (*cancel)(sw_executor *ex, const char *key, bool force);
    /* A descriptor that becomes readable when process() has work; -1:
     * none. It may change after process(): ask again each time. */
    int (*fd)(sw_executor *ex);
    /* The monotonic time (the engine's clock, as given to process()) at
     * which process() must run even if fd() stays quiet; 0: no need. */
    double (*next_wake)(sw_executor *ex);
    /* Does what is due at monotonic time `now`: reads answers, checks
     * ends, and queues events. Never blocks. */
    int (*process)(sw_executor *ex, double now);
    /* Moves the oldest queued event to *out: 1, or 0 when none. */
    int (*next_event)(sw_executor *ex, sw_job_event *out);
    void (*free)(sw_executor *ex);
    /* Version 3. The executor's own clock; NULL (or a NULL entry): the
     * engine keeps the system's. The executor owns it. */
    const sw_clock *(*clock)(sw_executor *ex);
    /* Version 3, with clock(): moves that clock forward to monotonic time
     * `mono` (never back). */
    void (*advance)(sw_executor *ex, double mono);
    /* Version 4. Whether the executor places trials on GPUs itself (a
     * cluster's scheduler, from the launch's resources): the engine then
     * packs nothing on this machine's devices. */
    bool places_gpus;
} sw_executor_methods;

#define SW_EXECUTOR_VERSION 6

struct sw_executor {
    const sw_executor_methods *methods;
};

/* Makes the executor called `name` ("local", "slurm", "sim"); SW_EINVALID, with
 * the names there are, for another name. Make executors before starting
 * threads: the local one forks its supervisor. */
int sw_executor_new(sw_executor **out, const char *name);

/* sw_executor_new with the executor's own arguments `args`
 * (NULL-terminated; NULL or empty: none): Slurm's are sbatch options given
 * to every job; the local executor takes none (SW_EINVALID). */
int sw_executor_new_with(sw_executor **out, const char *name,
                         char *const *args);

/* The local executor: trials are processes of this machine. */
int sw_executor_local_new(sw_executor **out);

/* The Slurm executor: each attempt is a batch job (backends/slurm.c);
 * `sbatch_args` (copied; NULL: none) go to every sbatch. SW_EINVALID for
 * an argument that is not an option. */
int sw_executor_slurm_new(sw_executor **out, char *const *sbatch_args);

/* The simulated cluster (sim.c): each attempt's process prints its whole
 * learning curve at once, which is replayed on a virtual clock. */
int sw_executor_sim_new(sw_executor **out);

/* Makes the simulated executor `ex` kill an attempt at a uniformly drawn
 * point of its curve with probability `fail_rate` (0 to 1), drawn from
 * `seed`, the run and the attempt: the same seed fails the same
 * attempts. SW_EINVALID when `ex` is not the simulated executor or the
 * rate is out of range. */
int sw_executor_sim_set_failures(sw_executor *ex, double fail_rate,
                                 uint64_t seed);

/* Sets the simulated executor's launch cost (seconds before a trial's
 * own start-up, its `_startup`) and reading delay (from a line's print
 * to the engine's reading; a trial's `_read_delay` replaces it); a
 * negative value keeps the measured default. SW_EINVALID when `ex` is
 * not the simulated executor or a value is over a day. */
int sw_executor_sim_set_timing(sw_executor *ex, double startup,
                               double read_delay);

static inline const char *sw_executor_name(const sw_executor *ex)
{
    return ex->methods->name;
}

static inline int sw_executor_launch(sw_executor *ex, const sw_launch *l)
{
    return ex->methods->launch(ex, l);
}

static inline int sw_executor_adopt(sw_executor *ex, const char *key,
                                    const char *dir, const char *handle)
{
    return ex->methods->adopt(ex, key, dir, handle);
}

static inline int sw_executor_cancel(sw_executor *ex, const char *key,
                                     bool force)
{
    return ex->methods->cancel(ex, key, force);
}

static inline int sw_executor_fd(sw_executor *ex)
{
    return ex->methods->fd(ex);
}

static inline double sw_executor_next_wake(sw_executor *ex)
{
    return ex->methods->next_wake(ex);
}

static inline int sw_executor_process(sw_executor *ex, double now)
{
    return ex->methods->process(ex, now);
}

static inline int sw_executor_next_event(sw_executor *ex, sw_job_event *out)
{
    return ex->methods->next_event(ex, out);
}

/* The executor's virtual clock; NULL for one that runs in real time. */
static inline const sw_clock *sw_executor_clock(sw_executor *ex)
{
    return ex->methods->version >= 3 && ex->methods->clock
               ? ex->methods->clock(ex)
               : NULL;
}

/* Moves the executor's virtual clock to `mono`; only with a clock. */
static inline void sw_executor_advance(sw_executor *ex, double mono)
{
    ex->methods->advance(ex, mono);
}

/* Whether trials' GPUs are the executor's to place, not the engine's. */
static inline bool sw_executor_places_gpus(const sw_executor *ex)
{
    return ex->methods->version >= 4 && ex->methods->places_gpus;
}

static inline void sw_executor_free(sw_executor *ex)
{
    if (ex)
        ex->methods->free(ex);
}

#endif
