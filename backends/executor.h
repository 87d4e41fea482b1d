/*
 * executor.h - where trials run: the interface every executor implements
 * (local processes now; Slurm and a simulated cluster later), and the
 * one-line wrappers the engine calls.
 *
 * Crash safety is part of the contract. A trial must outlive the
 * orchestrator: if `sweep` is killed, the trial keeps running, and a new
 * orchestrator re-adopts it from what the executor left in the run's
 * folder. So an executor records, in the attempt's folder, files that say
 * the attempt started (with the ids needed to signal it) and, atomically,
 * how it ended. The engine never reaches into the table directly.
 */
#ifndef SW_EXECUTOR_H
#define SW_EXECUTOR_H

#include <stdbool.h>
#include <stdint.h>

typedef struct {
    char *const *argv;       /* NULL-terminated; argv[0] searched in PATH */
    char *const *env;        /* "NAME=value" entries added to the inherited
                                environment (replacing same names); may be
                                NULL */
    const char *cwd;         /* NULL: the orchestrator's working directory */
    const char *dir;         /* the attempt's folder: status files live here */
    const char *stdout_path; /* appended to; trials write it directly */
    const char *stderr_path;
} sw_launch;

/* How an attempt ended. */
typedef struct {
    bool exited; /* true: exit_code is valid; false: killed by signal */
    int exit_code;
    int signal;
} sw_exit;

/* An attempt the executor runs or has run. Plain data; the engine keeps it
 * (and stores pid/pgid so a later orchestrator can adopt the attempt). */
typedef struct {
    int64_t pid;  /* the executor's process for the attempt (supervisor) */
    int64_t pgid; /* the trial's process group: what cancel signals */
    const char *dir;
} sw_job;

typedef struct sw_executor sw_executor;

typedef struct {
    unsigned int version;
    const char *name;
    /* Starts the attempt; fills job->pid/pgid. Returns before the trial
     * has run to its end. */
    int (*launch)(sw_executor *ex, const sw_launch *l, sw_job *job);
    /* Non-blocking: 1 and *out filled when the attempt has ended, 0 while
     * it runs, SW_ENOTFOUND when it is gone without a recorded end (its
     * supervisor died: the attempt is lost). Works for adopted attempts. */
    int (*check)(sw_executor *ex, const sw_job *job, sw_exit *out);
    /* Asks the attempt to stop (SIGTERM to the trial's group); `force`
     * kills it (SIGKILL). The end is then seen by check(). */
    int (*cancel)(sw_executor *ex, const sw_job *job, bool force);
    /* A descriptor that becomes readable when some attempt may have
     * ended, or -1 when the engine must poll check() on a tick. */
    int (*wait_fd)(sw_executor *ex);
    void (*free)(sw_executor *ex);
} sw_executor_methods;

#define SW_EXECUTOR_VERSION 1

struct sw_executor {
    const sw_executor_methods *methods;
};

/* The local executor: trials are processes of this machine. */
int sw_executor_local_new(sw_executor **out);

static inline int sw_executor_launch(sw_executor *ex, const sw_launch *l,
                                     sw_job *job)
{
    return ex->methods->launch(ex, l, job);
}

static inline int sw_executor_check(sw_executor *ex, const sw_job *job,
                                    sw_exit *out)
{
    return ex->methods->check(ex, job, out);
}

static inline int sw_executor_cancel(sw_executor *ex, const sw_job *job,
                                     bool force)
{
    return ex->methods->cancel(ex, job, force);
}

static inline int sw_executor_wait_fd(sw_executor *ex)
{
    return ex->methods->wait_fd(ex);
}

static inline void sw_executor_free(sw_executor *ex)
{
    if (ex)
        ex->methods->free(ex);
}

#endif
