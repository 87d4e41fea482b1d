/*
 * engine.h - running a sweep: an event loop that keeps `parallel` trials
 * going on an executor, records every transition in the store before
 * acting on it, reads metrics from trials' output, retries, times out,
 * and resumes after a crash. docs/architecture.md draws its parts.
 */
#ifndef SW_ENGINE_H
#define SW_ENGINE_H

#include <stdbool.h>
#include <stdint.h>

#include "sweeps/spec.h"

typedef struct {
    unsigned int version;
    const char *home; /* the sweep home ($SWEEP_HOME or ./.sweep) */
    int64_t parallel; /* 0: the sweep file's, else 1 */
    bool has_seed;
    uint64_t seed;        /* random methods; default: file's, else random */
    const char *name;     /* NULL: the file's `name` */
    bool quiet;           /* no progress, only the final summary */
    double grace;         /* seconds between SIGTERM and SIGKILL; 0: 10 */
    const char *backend;  /* the executor: "local", "slurm"; NULL: local for a
                             new  sweep, the recorded one on resume */
    char *const *command; /* `sweep run FILE -- COMMAND...`: replaces the
                             file's command (NULL-terminated); NULL: none */
    const char *listen;   /* the metrics server's ADDR:PORT; NULL:
                             127.0.0.1 on a free port */
    const char *gpus;     /* the GPUs trials are packed on, declared
                             (docs/gpus.md: "none", "4", "2x80GiB"); NULL:
                             the file's `gpus:` (on resume: the one
                             `sweep run` was given), else NVML's */
    char *const *backend_args; /* the backend's own arguments (`--slurm-arg`,
                                  NULL-terminated), after the sweep file's
                                  `slurm:` section; recorded with a new
                                  sweep, added to the recorded ones on
                                  resume; NULL: none */
    double sim_fail_rate;      /* --backend sim: the probability that an
                                  attempt dies midway (0 to 1); negative: the
                                  file's `sim: {fail_rate}`, else 0 */
    int64_t run_cap;           /* resume: the sweep's new run_cap, more than
                                  the runs it has (a finished sweep goes on
                                  with more trials of its search); recorded;
                                  0: the recorded one, else the file's */
} sw_engine_opts;

#define SW_ENGINE_OPTS_VERSION 8
#define SW_ENGINE_OPTS_INIT                                                    \
    {                                                                          \
        SW_ENGINE_OPTS_VERSION, NULL, 0, false, 0, NULL, false, 0, NULL, NULL, \
            NULL, NULL, NULL, -1, 0                                            \
    }

/* Creates a sweep from the sweep file at `path` and runs it to its end.
 * Returns SW_OK when the sweep ended (even with failed runs), SW_EINTR
 * when a signal interrupted it (resumable), SW_EINVALID for an invalid
 * file (problems already printed), or another error. */
int sw_engine_run(const char *path, const sw_engine_opts *opts);

/* Continues the sweep `key` (id, id prefix or name; NULL: the latest)
 * after Ctrl-C or a crash: re-adopts trials that kept running, reruns
 * those that were lost, and goes on with the search. */
int sw_engine_resume(const char *key, const sw_engine_opts *opts);

/* Loads and checks a sweep file, or with `text` the file's text as the
 * store kept it (`path` names it in messages): the schema, what the
 * method needs, and the command, replaced by `command` (the words given
 * after `--`, followed by ${args} unless one is a macro) when not NULL.
 * Every problem and warning goes to stderr. SW_EINVALID for an invalid
 * file, SW_EIO for an unreadable one. *out (the caller frees) is set on
 * success only. */
int sw_engine_load(sw_spec **out, const char *path, const char *text,
                   char *const *command);

/* sw_engine_load's checks, saying nothing: every problem and warning is
 * added to `diags` (initialised by the caller, who disposes it). An
 * unreadable file adds none: sw_error_last() says why. */
int sw_engine_check(sw_spec **out, const char *path, const char *text,
                    char *const *command, sw_diags *diags);

/* SW_EINVALID, said on stderr, when the sweep has neither a program nor
 * a command: what `sweep run` needs to start a trial. */
int sw_engine_needs_command(const sw_spec *sp, const char *path);

/* The signal (SIGINT, SIGTERM) that interrupted the last sweep that
 * sw_engine_run or sw_engine_resume ran, when they returned SW_EINTR. */
int sw_engine_stopped_by(void);

/* Takes sweep `sweep_id`'s lock in the sweep home `home`, as `sweep run`
 * and `sweep resume` hold it while they run it: *out_fd holds it until it
 * is closed. SW_ERROR, "sweep ID is being run by another sweep process",
 * when another process holds it (*out_fd is then -1). */
int sw_engine_lock(const char *home, const char *sweep_id, int *out_fd);

/* Whether a `sweep run` or `sweep resume` holds sweep `sweep_id` of the
 * sweep home `home` now (its lock). This function can't fail. */
bool sw_engine_is_running(const char *home, const char *sweep_id);

/* Asks the `sweep` that runs sweep `sweep_id` in `home`, from another
 * process: to stop run `run_id` by hand, or with NULL to act as Ctrl-C
 * (docs/cli.md, sweep stop). The request is a file that the engine
 * removes once it has acted on it: *out_path (the caller frees) names it,
 * to wait on. */
int sw_engine_ask(const char *home, const char *sweep_id, const char *run_id,
                  char **out_path);

/* The sweep home: $SWEEP_HOME, else ./.sweep. */
const char *sw_engine_home(void);

#endif
