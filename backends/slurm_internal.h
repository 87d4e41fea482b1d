/*
 * slurm_internal.h - what the Slurm executor's files share: the runner of
 * Slurm's commands (slurm_cmd.c), which starts sbatch, squeue, scontrol,
 * sacct and scancel as child processes and collects what they print
 * without ever waiting for one; and the readers of their answers and the
 * writer of sbatch's arguments (slurm_jobs.c).
 */
#ifndef SW_SLURM_INTERNAL_H
#define SW_SLURM_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "backends/executor.h"
#include "sweeps/buf.h"

/* ---- commands (slurm_cmd.c) ---- */

/* One command: started by sw_slurm__spawn, finished when both its pipes
 * are closed and it has been reaped. */
typedef struct {
    pid_t pid;
    int out, err;      /* its stdout and stderr; -1 once closed */
    sw_buf stdout_buf; /* everything it printed */
    sw_buf stderr_buf;
    int status; /* its wait status, once reaped */
    bool reaped;
    double started; /* the runner's time when it was started */
    int kind;       /* the caller's: what the command was for */
    char *key;      /* the caller's: the attempt it is about, or NULL */
} sw_slurm__cmd;

typedef struct {
    int epfd; /* readable while some command has output or has ended */
    sw_slurm__cmd **cmds;
    size_t n, cap;
    unsigned keep_kinds; /* commands of kind K (bit 1 << K) outlive the
                            runner */
} sw_slurm__runner;

int sw_slurm__runner_init(sw_slurm__runner *r);
/* Kills and reaps the commands still running, except those of the kinds
 * in `keep_kinds`, which are left to finish on their own. */
void sw_slurm__runner_dispose(sw_slurm__runner *r);

/* Starts argv (argv[0] searched in PATH) with environment `envp` (NULL:
 * ours), stdin from /dev/null, never through a shell. `kind` and `key`
 * (copied) are kept for the caller. */
int sw_slurm__spawn(sw_slurm__runner *r, char *const *argv, char *const *envp,
                    int kind, const char *key, double now);

/* Reads what the commands printed and reaps those that have ended;
 * never blocks. Those running past `limit` seconds are killed. */
void sw_slurm__pump(sw_slurm__runner *r, double now, double limit);

/* A finished command, removed from the runner (the caller frees it with
 * sw_slurm__cmd_free), or NULL when none has finished. */
sw_slurm__cmd *sw_slurm__finished(sw_slurm__runner *r);

/* How many commands of `kind` run. */
size_t sw_slurm__running(const sw_slurm__runner *r, int kind);

void sw_slurm__cmd_free(sw_slurm__cmd *c);

/* The command's exit code, or -1 when it did not exit normally. */
int sw_slurm__cmd_exit(const sw_slurm__cmd *c);

/* Its stderr as one line (every non-empty line, joined by "; "), for
 * messages: "sbatch: unrecognized option '--x'; Try ...". */
char *sw_slurm__cmd_error(const sw_slurm__cmd *c, const char *what);

/* ---- jobs (slurm_jobs.c) ---- */

/* What Slurm says of a job. */
typedef enum {
    SW_SLURM_ALIVE, /* pending, running, completing, suspended... */
    SW_SLURM_ENDED, /* ended: `status` says how */
} sw_slurm__phase;

typedef struct {
    long long id;
    sw_slurm__phase phase;
    bool pending;   /* SW_SLURM_ALIVE: not started yet */
    char state[32]; /* Slurm's name of it: RUNNING, NODE_FAIL... */
    char reason[64];
    bool has_status; /* ended: `exit` is known */
    sw_exit exit;
    double start, end; /* unix seconds Slurm started and ended it (its
                          own, whole seconds); 0: not (yet) known */
} sw_slurm__job;

/* Parses one line of `squeue -h -O JobID:0|,State:0|,Reason:0|,
 * exit_code:0|,Name:0|,StartTime:0|,EndTime:0|` run with
 * SLURM_TIME_FORMAT=%s (exit_code is a raw wait status; the times unix
 * seconds, the last two fields optional); *name points into `line`
 * (which is modified). False for a line that is not one. */
bool sw_slurm__parse_squeue(char *line, sw_slurm__job *out, char **name);

/* Parses one line of `sacct -n -P -o JobID,State,ExitCode,Start,End`
 * (ExitCode is "CODE:SIGNAL"; Start and End, optional, unix seconds under
 * SLURM_TIME_FORMAT=%s). False for a line that is not one, or a job
 * step. */
bool sw_slurm__parse_sacct(char *line, sw_slurm__job *out);

/* Fills `j` (id and state set) for an ended job from Slurm's state name:
 * its phase, and for states that say how it ended without a status. */
void sw_slurm__classify(sw_slurm__job *j);

/* The message for an end that is not the trial's (node failure,
 * preemption, a cancel before it started, a requeue): allocated, or NULL
 * when `j` ended as its trial did. */
char *sw_slurm__machinery_end(const sw_slurm__job *j, bool ran);

/* The message for a pending job that can never start (its reason is a
 * limit its request is beyond, such as PartitionTimeLimit): allocated,
 * or NULL when it may yet start. */
char *sw_slurm__never_starts(const sw_slurm__job *j);

/* The words for a job that has waited `secs` in the queue for its
 * reason, one that may pass (a DOWN partition, a drained node,
 * Resources, Priority): allocated. */
char *sw_slurm__waited(const sw_slurm__job *j, double secs);

/* The arguments of `sbatch` for launch `l`: the executor's fixed ones
 * (--parsable, --no-requeue, --gres=gpu:N for whole GPUs), the user's
 * `extra` (from the sweep file and --slurm-arg), sweep's own, the job
 * script, then the trial's argv. NULL-terminated. A share of a GPU asks
 * for nothing here: see sw_slurm__shard_request. */
int sw_slurm__sbatch_argv(char ***out, const sw_launch *l, char *const *extra,
                          const char *script);

/* The sbatch option for `share` (0 < share < 1) of a GPU, from what
 * `sinfo -h -o %G` printed: "--gres=shard:N", N the share of the most
 * shards any node has per GPU (rounded up, so a trial gets at least what
 * it asked for). SW_EINVALID, said, when no node has shards. */
int sw_slurm__shard_request(char **out, double share, const char *sinfo);

/* The environment sbatch runs with (and, through --export=ALL, the
 * job): ours without the submitter's devices, with l->env on top. */
char **sw_slurm__job_env(const sw_launch *l);

void sw_slurm__strv_free(char **v);

/* ---- the attempt's folder (slurm_jobs.c) ---- */

/* Writes `text` to dir/name (replacing it, created with `mode`). */
int sw_slurm__write_file(const char *dir, const char *name, const char *text,
                         mode_t mode);

/* The job id dir/pid names ("slurm JOBID"): 1, or 0 when there is none. */
int sw_slurm__read_job_file(const char *dir, long long *job);

/* Appends "sweep: WHAT" to dir/stderr.log: what Slurm did to the job, for
 * the user who reads the log of a run that did not end by itself. */
void sw_slurm__note(const char *dir, const char *what);

#endif
