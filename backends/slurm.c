/*
 * slurm.c - the Slurm executor: each attempt is one batch job, submitted
 * with `sbatch --parsable --job-name=<run id>`, its stdout and stderr
 * appended to the run's files on the shared filesystem, its command the
 * trial's argv given as arguments to a two-line job script (`exec "$@"`),
 * so no shell ever reads the command.
 *
 * Nothing here waits for Slurm: sbatch, squeue, sacct and scancel are
 * child processes (slurm_cmd.c) whose answers process() collects. A
 * launch is answered by SW_JOB_STARTED as soon as sbatch gives the job
 * id, which is the job handle the store keeps; the id also goes to the
 * attempt's `pid` file, which the engine puts aside before the next
 * attempt, so an orchestrator that died before it could record the
 * handle finds it there (or, failing that, the job by its name).
 *
 * Ends are polled: one squeue for all the jobs watched, every POLL_MIN
 * seconds while things change, slowing to POLL_MAX when nothing does. A
 * job squeue no longer knows (Slurm purged it) is looked up in the
 * job-completion log (`sacct -c`), then in the accounting database
 * (`sacct`). Cancels are scancel, confirmed by state: repeated until the
 * job is seen to end.
 */
#include "backends/executor.h"
#include "backends/slurm_internal.h"
#include "sweeps/buf.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern char **environ;

#define POLL_MIN 0.1     /* s between squeues while jobs change */
#define POLL_MAX 2.0     /* s between them when nothing has for a while */
#define CMD_LIMIT 120.0  /* s a Slurm command may take before it is killed */
#define CANCEL_AGAIN 5.0 /* s after which a cancel not yet seen is resent */
#define MAX_SUBMIT 4     /* sbatch processes at once */
#define NEVER_GRACE                                                            \
    3.0 /* s a job must wait for a reason that never ends                      \
           before it is given up (Slurm may revise it) */

#define SUBMIT_RATE 10.0     /* sbatch calls a second, by default */
#define PENDING_NOTICE 300.0 /* s a job may wait before it is said */

#define SQUEUE_FORMAT                                                          \
    "JobID:0|,State:0|,Reason:0|,exit_code:0|,Name:0|,StartTime:0|,"           \
    "EndTime:0|"
#define SACCT_FORMAT "JobID,State,ExitCode,Start,End"

enum {
    K_SBATCH,
    K_SQUEUE,
    K_FIND,
    K_SACCT_LOG,
    K_SACCT_DB,
    K_SCANCEL,
    K_SINFO
};

typedef enum {
    A_WAITING,    /* launched: sbatch not started yet */
    A_SUBMITTING, /* sbatch runs */
    A_SEEKING,    /* adopted without a handle: looking for its job */
    A_WATCHING,   /* its job id is known: waiting for its end */
    A_DONE,       /* answered for good: sweep() frees it */
} astate;

typedef struct {
    char *key, *dir;
    astate state;
    char **argv, **env; /* A_WAITING: sbatch's */
    double share;       /* a share of a GPU (0 < share < 1), or 0 */
    long long job;
    bool ran;             /* seen running, or ended with a status */
    bool missing;         /* squeue no longer knows it: sacct is asked */
    bool asking;          /* a sacct or a seek runs for it */
    bool polled;          /* in the squeue that runs */
    bool launched;        /* A_SEEKING after its sbatch did not answer: it is
                             answered as a launch */
    char state_seen[32];  /* what squeue said last */
    double submitted;     /* when its job was accepted (or adopted) */
    bool running_told;    /* SW_JOB_RUNNING said */
    char reason_told[64]; /* the pending reason last said; "": none */
    bool late_told;       /* its wait past pending_notice said */
    bool never;           /* squeue says it can never start... */
    double never_since;   /* ...since then */
    int cancel;           /* 0, or 1 gentle / 2 forced, asked for */
    bool cancel_sent;     /* since the last ask */
    double cancel_at;     /* when the last scancel went */
} attempt;

typedef struct {
    sw_executor base;
    sw_slurm__runner run;
    char **extra; /* the user's sbatch arguments */
    attempt **all;
    size_t n, cap;
    sw_job_event *queue;
    size_t qhead, qn, qcap;
    char *sinfo; /* the nodes' generic resources (sinfo -o %G), learned
                    when a trial first asks for a share of a GPU */
    double now, next_poll, poll_every;
    bool wake_now;         /* something to do at the next process() */
    char **query_env;      /* squeue's and sacct's: SLURM_TIME_FORMAT=%s */
    double rate;           /* sbatch calls a second (--sweep-submit-rate) */
    double tokens;         /* of the bucket that paces them (at most rate) */
    double filled_at;      /* when tokens was last topped up */
    double pending_notice; /* s (--sweep-pending-notice) */
} slurm;

/* ---- attempts and events ---- */

static attempt *find(slurm *sx, const char *key)
{
    size_t i;

    for (i = 0; key && i < sx->n; i++)
        if (sx->all[i]->state != A_DONE && strcmp(sx->all[i]->key, key) == 0)
            return sx->all[i];
    return NULL;
}

static attempt *add(slurm *sx, const char *key, const char *dir, astate st)
{
    attempt *a = sw_calloc(1, sizeof(*a));

    a->key = sw_strdup(key);
    a->dir = sw_strdup(dir);
    a->state = st;
    sw_grow(&sx->all, &sx->cap, sx->n + 1, sizeof(*sx->all));
    sx->all[sx->n++] = a;
    return a;
}

static void free_attempt(attempt *a)
{
    sw_slurm__strv_free(a->argv);
    sw_slurm__strv_free(a->env);
    free(a->key);
    free(a->dir);
    free(a);
}

/* Forgets the attempts that have had their last event, keeping the
 * others in launch order (the order they are submitted in). */
static void sweep(slurm *sx)
{
    size_t i, kept = 0;

    for (i = 0; i < sx->n; i++) {
        if (sx->all[i]->state == A_DONE)
            free_attempt(sx->all[i]);
        else
            sx->all[kept++] = sx->all[i];
    }
    sx->n = kept;
}

/* Queues an event about `a`; consumes `message` (may be NULL). */
static sw_job_event *emit(slurm *sx, sw_job_event_kind kind, attempt *a,
                          char *message)
{
    sw_job_event *ev;

    if (sx->qhead > 0 && sx->qhead == sx->qn)
        sx->qhead = sx->qn = 0;
    sw_grow(&sx->queue, &sx->qcap, sx->qn + 1, sizeof(*sx->queue));
    ev = &sx->queue[sx->qn++];
    memset(ev, 0, sizeof(*ev));
    ev->kind = kind;
    ev->key = sw_strdup(a->key);
    ev->message = message;
    if (kind == SW_JOB_STARTED)
        ev->handle = sw_aprintf("%lld", a->job);
    if (kind != SW_JOB_STARTED && kind != SW_JOB_QUEUED &&
        kind != SW_JOB_RUNNING)
        a->state = A_DONE;
    sx->poll_every = POLL_MIN;
    return ev;
}

/* ---- the attempt's folder ---- */

static char *path_in(const attempt *a, const char *name)
{
    return sw_aprintf("%s/%s", a->dir, name);
}

/* ---- starting commands ---- */

static int spawn(slurm *sx, char *const *argv, int kind, const attempt *a)
{
    bool query = kind == K_SQUEUE || kind == K_FIND || kind == K_SACCT_LOG ||
                 kind == K_SACCT_DB;

    return sw_slurm__spawn(&sx->run, argv, query ? sx->query_env : NULL, kind,
                           a ? a->key : NULL, sx->now);
}

static void submit(slurm *sx, attempt *a)
{
    char *pid = path_in(a, "pid");
    int error;

    unlink(pid); /* an earlier attempt's; the engine put it aside */
    free(pid);
    error =
        sw_slurm__spawn(&sx->run, a->argv, a->env, K_SBATCH, a->key, sx->now);
    sw_slurm__strv_free(a->argv);
    sw_slurm__strv_free(a->env);
    a->argv = a->env = NULL;
    if (error < 0) {
        emit(sx, SW_JOB_START_FAILED, a, sw_strdup(sw_error_last()));
        return;
    }
    a->state = A_SUBMITTING;
}

/* Adds the shard request of an attempt that asks for a share of a GPU
 * (the nodes' resources known) to its sbatch arguments, after "sbatch
 * --parsable --no-requeue"; SW_EINVALID where the cluster has none. */
static int add_shards(slurm *sx, attempt *a)
{
    char *arg = NULL;
    size_t n = 0;
    int error = sw_slurm__shard_request(&arg, a->share, sx->sinfo);

    if (error < 0)
        return error;
    while (a->argv[n])
        n++;
    a->argv = sw_realloc(a->argv, (n + 2) * sizeof(*a->argv));
    memmove(a->argv + 4, a->argv + 3, (n - 2) * sizeof(*a->argv));
    a->argv[3] = arg;
    a->share = 0;
    return SW_OK;
}

/* Starts sbatch for waiting attempt `a`, unless it waits for the nodes'
 * resources (asked once, with sinfo, for all of them). */
static void try_submit(slurm *sx, attempt *a)
{
    char *sinfo[] = {"sinfo", "-h", "-o", "%G", NULL};

    if (a->share > 0 && !sx->sinfo) {
        if (sw_slurm__running(&sx->run, K_SINFO) == 0 &&
            spawn(sx, sinfo, K_SINFO, NULL) < 0)
            emit(sx, SW_JOB_START_FAILED, a, sw_strdup(sw_error_last()));
        return;
    }
    if (a->share > 0 && add_shards(sx, a) < 0) {
        emit(sx, SW_JOB_START_FAILED, a, sw_strdup(sw_error_last()));
        return;
    }
    submit(sx, a);
}

/* The nodes' resources, for the attempts that wait for them. */
static void on_sinfo(slurm *sx, sw_slurm__cmd *c)
{
    size_t i;

    if (sw_slurm__cmd_exit(c) == 0) {
        free(sx->sinfo);
        sx->sinfo = sw_strdup(sw_buf_cstr(&c->stdout_buf));
        return;
    }
    for (i = 0; i < sx->n; i++)
        if (sx->all[i]->state == A_WAITING && sx->all[i]->share > 0)
            emit(sx, SW_JOB_START_FAILED, sx->all[i],
                 sw_slurm__cmd_error(c, "sinfo"));
}

/* How `a`'s cancel goes: 0 a plain scancel (a pending job, or one asked
 * before), 1 SIGTERM to the trial itself, so it can save its work, 2
 * SIGKILL to it. */
static int cancel_how(const attempt *a)
{
    return a->ran && !a->cancel_sent ? a->cancel : 0;
}

/* One scancel, `how` (cancel_how()), for the attempts in `list`. */
static void scancel(slurm *sx, int how, attempt **list, size_t n)
{
    char **argv = sw_calloc(n + 4, sizeof(*argv));
    size_t i, k = 0;
    int error;

    argv[k++] = sw_strdup("scancel");
    if (how > 0) {
        argv[k++] = sw_strdup(how == 2 ? "--signal=KILL" : "--signal=TERM");
        argv[k++] = sw_strdup("--full");
    }
    for (i = 0; i < n; i++)
        argv[k++] = sw_aprintf("%lld", list[i]->job);
    error = spawn(sx, argv, K_SCANCEL, NULL);
    for (i = 0; i < n; i++) {
        list[i]->cancel_sent = true;
        /* a failed spawn is tried again soon */
        list[i]->cancel_at = error < 0 ? sx->now - CANCEL_AGAIN + 1 : sx->now;
    }
    sw_slurm__strv_free(argv);
}

static void send_cancel(slurm *sx, attempt *a)
{
    scancel(sx, cancel_how(a), &a, 1);
}

/* Sends every cancel that is due: one scancel a kind for the whole wave
 * (200 jobs cancelled at Ctrl-C are one command, not 200). */
static void send_cancels(slurm *sx)
{
    attempt **list = sw_calloc(sx->n + 1, sizeof(*list));
    size_t i, n;
    int how;

    for (how = 0; how <= 2; how++) {
        for (n = 0, i = 0; i < sx->n; i++) {
            attempt *a = sx->all[i];

            if (a->state == A_WATCHING && a->cancel &&
                (!a->cancel_sent || sx->now >= a->cancel_at + CANCEL_AGAIN) &&
                cancel_how(a) == how)
                list[n++] = a;
        }
        if (n > 0)
            scancel(sx, how, list, n);
    }
    free(list);
}

/* One squeue for every job watched. */
static void poll_jobs(slurm *sx)
{
    sw_buf ids = SW_BUF_INIT;
    char *argv[] = {"squeue",      "-h", "-t", "all", "-O",
                    SQUEUE_FORMAT, "-j", NULL, NULL};
    size_t i;

    for (i = 0; i < sx->n; i++)
        if (sx->all[i]->state == A_WATCHING && !sx->all[i]->missing) {
            sw_buf_printf(&ids, "%s%lld", ids.len ? "," : "", sx->all[i]->job);
            sx->all[i]->polled = true;
        }
    if (ids.len > 0) {
        argv[7] = ids.ptr;
        (void)spawn(sx, argv, K_SQUEUE, NULL);
    }
    sw_buf_dispose(&ids);
}

static void ask_sacct(slurm *sx, attempt *a, int kind)
{
    char job[32];
    char *log[] = {"sacct", "-c", "-n",         "-P", "-j",
                   job,     "-o", SACCT_FORMAT, NULL};
    char *db[] = {"sacct", "-X", "-n",         "-P", "-j",
                  job,     "-o", SACCT_FORMAT, NULL};

    snprintf(job, sizeof(job), "%lld", a->job);
    a->asking = spawn(sx, kind == K_SACCT_LOG ? log : db, kind, a) == SW_OK;
}

static void seek(slurm *sx, attempt *a)
{
    char *argv[] = {"squeue",      "-h", "-t",   "all", "-O",
                    SQUEUE_FORMAT, "-n", a->key, NULL};

    a->asking = spawn(sx, argv, K_FIND, a) == SW_OK;
}

/* ---- answers ---- */

/* Says that `a`'s job runs, since Slurm's start time `start` (0: not
 * known, now), once. */
static void tell_running(slurm *sx, attempt *a, double start)
{
    if (a->running_told)
        return;
    a->running_told = true;
    emit(sx, SW_JOB_RUNNING, a, NULL)->at = start;
}

/* Ends attempt `a` as Slurm says its job `j` ended, at Slurm's end time;
 * a job that started is first said to have started, at Slurm's start. */
static void end_job(slurm *sx, attempt *a, const sw_slurm__job *j)
{
    bool ran = a->ran || j->start > 0 ||
               (j->has_status && !(j->exit.exited && j->exit.exit_code == 0));
    sw_exit x = {false, 0, SIGKILL, false};
    sw_job_event *ev;
    char *msg;

    if (ran)
        tell_running(sx, a, j->start);
    if (a->cancel && strcmp(j->state, "CANCELLED") == 0 &&
        (!j->has_status || (j->exit.exited && j->exit.exit_code == 0))) {
        x.signal = SIGTERM; /* ours, before it ran or with no status */
        ev = emit(sx, SW_JOB_ENDED, a, NULL);
        ev->exit = x;
        ev->at = j->end;
        return;
    }
    msg = a->cancel ? NULL : sw_slurm__machinery_end(j, ran);
    if (msg) {
        sw_slurm__note(a->dir, msg);
        emit(sx, SW_JOB_LOST, a, msg)->at = j->end;
        return;
    }
    if (j->has_status)
        x = j->exit;
    msg = NULL;
    if (strcmp(j->state, "COMPLETED") != 0) {
        if (x.exited && x.exit_code == 0)
            x = (sw_exit){false, 0, SIGKILL, false}; /* not a success */
        if (!a->cancel) { /* Slurm's word for it, in the run's reason */
            msg = sw_aprintf(
                "Slurm job %lld ended %s%s%s%s", j->id, j->state,
                j->reason[0] && strcmp(j->reason, "None") != 0 ? " (" : "",
                strcmp(j->reason, "None") != 0 ? j->reason : "",
                j->reason[0] && strcmp(j->reason, "None") != 0 ? ")" : "");
            sw_slurm__note(a->dir, msg);
        }
    }
    ev = emit(sx, SW_JOB_ENDED, a, msg);
    ev->exit = x;
    ev->at = j->end;
}

/* A job pending for a reason that time will not change, for NEVER_GRACE
 * (Slurm may revise its first reason): cancelled, and a failed attempt,
 * said in its log, rather than a job waiting forever. */
static void give_up_pending(slurm *sx, attempt *a, const sw_slurm__job *j)
{
    char *msg = j->pending && !a->cancel ? sw_slurm__never_starts(j) : NULL;

    if (!msg) {
        a->never = false;
        return;
    }
    if (!a->never) {
        a->never = true;
        a->never_since = sx->now;
    }
    if (sx->now >= a->never_since + NEVER_GRACE) {
        sw_slurm__note(a->dir, msg);
        a->cancel = 2;
        a->cancel_sent = false;
        send_cancel(sx, a);
        /* no exit status: it never ran; the words say what Slurm did */
        emit(sx, SW_JOB_ENDED, a,
             sw_aprintf("Slurm job %lld ended CANCELLED before it started: "
                        "%s",
                        j->id, msg))
            ->exit = (sw_exit){false, 0, 0, false};
    }
    free(msg);
}

/* A pending job's reason, said when it changes, and once more when it
 * has waited pending_notice seconds for a reason that may pass (a DOWN
 * partition, a drained node, Resources, Priority). */
static void tell_pending(slurm *sx, attempt *a, const sw_slurm__job *j)
{
    sw_job_event *ev;

    if (strcmp(a->reason_told, j->reason) != 0) {
        snprintf(a->reason_told, sizeof(a->reason_told), "%s", j->reason);
        emit(sx, SW_JOB_QUEUED, a, sw_strdup(j->reason));
    }
    if (!a->late_told && sx->now >= a->submitted + sx->pending_notice) {
        a->late_told = true;
        ev = emit(sx, SW_JOB_QUEUED, a,
                  sw_slurm__waited(j, sx->now - a->submitted));
        ev->late = true;
    }
}

/* A job squeue or sacct spoke of, for the attempt watching it. */
static void update(slurm *sx, attempt *a, const sw_slurm__job *j)
{
    char *msg;

    a->missing = false;
    if (j->phase == SW_SLURM_ALIVE && !j->pending)
        a->ran = true;
    if (j->phase == SW_SLURM_ALIVE && j->pending && a->ran) {
        msg = sw_slurm__machinery_end(j, true); /* requeued */
        sw_slurm__note(a->dir, msg);
        a->cancel = 2; /* it must not run again behind the next attempt */
        a->cancel_sent = true;
        send_cancel(sx, a);
        emit(sx, SW_JOB_LOST, a, msg);
        return;
    }
    if (j->phase == SW_SLURM_ENDED) {
        end_job(sx, a, j);
        return;
    }
    if (!j->pending)
        tell_running(sx, a, j->start);
    give_up_pending(sx, a, j);
    if (a->state == A_WATCHING && j->pending && !a->never)
        tell_pending(sx, a, j);
}

static attempt *watching(slurm *sx, long long job)
{
    size_t i;

    for (i = 0; i < sx->n; i++)
        if (sx->all[i]->state == A_WATCHING && sx->all[i]->job == job)
            return sx->all[i];
    return NULL;
}

/* Calls `fn` for each line of `text` (modified). */
static void lines(char *text, void (*fn)(slurm *, char *, void *), slurm *sx,
                  void *arg)
{
    char *p = text, *nl;

    while (p && *p) {
        nl = strchr(p, '\n');
        if (nl)
            *nl = '\0';
        fn(sx, p, arg);
        p = nl ? nl + 1 : NULL;
    }
}

static void squeue_line(slurm *sx, char *line, void *arg)
{
    sw_slurm__job j;
    char *name;
    attempt *a;

    (void)arg;
    if (!sw_slurm__parse_squeue(line, &j, &name) || !(a = watching(sx, j.id)) ||
        !a->polled)
        return;
    a->polled = false;
    if (strcmp(a->state_seen, j.state) != 0)
        sx->poll_every = POLL_MIN;
    snprintf(a->state_seen, sizeof(a->state_seen), "%s", j.state);
    update(sx, a, &j);
}

static void on_squeue(slurm *sx, sw_slurm__cmd *c)
{
    bool unknown = strstr(sw_buf_cstr(&c->stderr_buf), "Invalid job id");
    size_t i;

    if (sw_slurm__cmd_exit(c) == 0 && c->stdout_buf.len > 0)
        lines(c->stdout_buf.ptr, squeue_line, sx, NULL);
    for (i = 0; i < sx->n; i++) {
        attempt *a = sx->all[i];

        if (a->state == A_WATCHING && a->polled &&
            (sw_slurm__cmd_exit(c) == 0 || unknown))
            a->missing = true; /* purged: sacct is asked */
        a->polled = false;
    }
}

static void sacct_line(slurm *sx, char *line, void *arg)
{
    attempt *a = arg;
    sw_slurm__job j;

    if (a->state == A_WATCHING && sw_slurm__parse_sacct(line, &j) &&
        j.id == a->job && j.phase == SW_SLURM_ENDED)
        end_job(sx, a, &j);
}

/* The job-completion log, then the accounting database, then nothing:
 * Slurm has forgotten the job. */
static void on_sacct(slurm *sx, sw_slurm__cmd *c, attempt *a)
{
    a->asking = false;
    if (sw_slurm__cmd_exit(c) == 0 && c->stdout_buf.len > 0)
        lines(c->stdout_buf.ptr, sacct_line, sx, a);
    if (a->state != A_WATCHING)
        return;
    if (c->kind == K_SACCT_LOG) {
        ask_sacct(sx, a, K_SACCT_DB);
        return;
    }
    emit(sx, SW_JOB_LOST, a,
         sw_aprintf("Slurm no longer knows job %lld, and neither its "
                    "job-completion log nor its accounting records how it "
                    "ended",
                    a->job));
}

/* Records the job id in the attempt's pid file and answers. */
static void found_job(slurm *sx, attempt *a, long long job)
{
    char text[48];

    a->job = job;
    a->state = A_WATCHING;
    snprintf(text, sizeof(text), "slurm %lld\n", job);
    (void)sw_slurm__write_file(a->dir, "pid", text,
                               0600); /* the store has it too */
    emit(sx, SW_JOB_STARTED, a, NULL);
    a->submitted = sx->now;
    /* it waits until squeue says otherwise: no run time meanwhile */
    if (!a->running_told && !a->reason_told[0]) {
        snprintf(a->reason_told, sizeof(a->reason_told), "None");
        emit(sx, SW_JOB_QUEUED, a, sw_strdup("None"));
    }
    sx->next_poll = sx->now; /* the pending job shows at once */
}

static void find_line(slurm *sx, char *line, void *arg)
{
    long long *best = arg;
    sw_slurm__job j;
    char *name;

    (void)sx;
    if (sw_slurm__parse_squeue(line, &j, &name) && j.phase == SW_SLURM_ALIVE &&
        j.id > *best)
        *best = j.id;
}

/* An attempt adopted without a handle: its job, still queued or
 * running, by its name; none means it never started. */
static void on_find(slurm *sx, sw_slurm__cmd *c, attempt *a)
{
    long long best = 0;

    a->asking = false;
    if (sw_slurm__cmd_exit(c) != 0)
        return; /* the controller did not answer: asked again */
    if (c->stdout_buf.len > 0)
        lines(c->stdout_buf.ptr, find_line, sx, &best);
    if (best > 0)
        found_job(sx, a, best);
    else if (a->launched) /* an sbatch that did not answer in time */
        emit(sx, SW_JOB_START_FAILED, a,
             sw_strdup("sbatch did not answer in time, and no job of this "
                       "run is queued"));
    else
        emit(sx, SW_JOB_NOT_STARTED, a, NULL);
}

static void on_sbatch(slurm *sx, sw_slurm__cmd *c, attempt *a)
{
    const char *out = sw_buf_cstr(&c->stdout_buf);
    char *end;
    long long job;

    if (sw_slurm__cmd_exit(c) < 0) {
        /* killed past CMD_LIMIT: it may have submitted the job anyway */
        a->launched = true;
        a->state = A_SEEKING;
        return;
    }
    errno = 0;
    job = strtoll(out, &end, 10);
    if (sw_slurm__cmd_exit(c) != 0 || errno || end == out || job <= 0 ||
        (*end && *end != ';' && *end != '\n')) {
        emit(sx, SW_JOB_START_FAILED, a, sw_slurm__cmd_error(c, "sbatch"));
        return;
    }
    found_job(sx, a, job); /* a cancel asked meanwhile goes with the
                              next wave (send_cancels) */
}

static void on_finished(slurm *sx, sw_slurm__cmd *c)
{
    attempt *a = c->key ? find(sx, c->key) : NULL;

    switch (c->kind) {
    case K_SQUEUE:
        on_squeue(sx, c);
        break;
    case K_SBATCH:
        if (a && a->state == A_SUBMITTING)
            on_sbatch(sx, c, a);
        break;
    case K_FIND:
        if (a && a->state == A_SEEKING)
            on_find(sx, c, a);
        break;
    case K_SINFO:
        on_sinfo(sx, c);
        break;
    case K_SACCT_LOG:
    case K_SACCT_DB:
        if (a && a->state == A_WATCHING)
            on_sacct(sx, c, a);
        break;
    default: /* scancel: its end is confirmed by the job's state */
        break;
    }
}

/* ---- the interface ---- */

static const char job_script[] =
    "#!/bin/sh\n"
    "# Written by sweep: the trial's command comes as this script's\n"
    "# arguments, so no shell reads it.\n"
    "exec \"$@\"\n";

static int check_new(slurm *sx, const char *key, const char *dir)
{
    if (!key || !key[0])
        return sw_error_set(SW_EINVALID, "slurm executor: no attempt key");
    if (!dir || !dir[0])
        return sw_error_set(SW_EINVALID, "slurm executor: no attempt folder");
    if (find(sx, key))
        return sw_error_set(
            SW_EINVALID, "slurm executor: attempt '%s' is already in use", key);
    return SW_OK;
}

static int slurm_launch(sw_executor *ex, const sw_launch *l)
{
    slurm *sx = (slurm *)ex;
    char **argv = NULL, *script;
    attempt *a;
    int error;

    if ((error = check_new(sx, l->key, l->dir)) < 0)
        return error;
    if (!l->argv || !l->argv[0] || !l->argv[0][0])
        return sw_error_set(SW_EINVALID, "slurm executor: empty command");
    if (!l->stdout_path || !l->stderr_path)
        return sw_error_set(SW_EINVALID, "slurm executor: no log path");
    script = sw_aprintf("%s/slurm-job.sh", l->dir);
    error = sw_slurm__sbatch_argv(&argv, l, sx->extra, script);
    free(script);
    if (error < 0)
        return error;
    a = add(sx, l->key, l->dir, A_WAITING);
    if ((error = sw_slurm__write_file(a->dir, "slurm-job.sh", job_script,
                                      0700)) < 0) {
        a->state = A_DONE;
        sw_slurm__strv_free(argv);
        sweep(sx);
        return error;
    }
    a->argv = argv;
    a->env = sw_slurm__job_env(l);
    if (l->resources.has_gpus && l->resources.gpus > 0 && l->resources.gpus < 1)
        a->share = l->resources.gpus;
    sx->wake_now = true;
    return SW_OK;
}

/* With a handle the job is watched for its end. Without one it is
 * looked for: in the attempt's pid file, then by its name in squeue;
 * SW_JOB_STARTED or SW_JOB_NOT_STARTED answers. */
static int slurm_adopt(sw_executor *ex, const char *key, const char *dir,
                       const char *handle)
{
    slurm *sx = (slurm *)ex;
    long long job = 0;
    attempt *a;
    char *end;
    int error;

    if ((error = check_new(sx, key, dir)) < 0)
        return error;
    if (handle) {
        errno = 0;
        job = strtoll(handle, &end, 10);
        if (errno || end == handle || *end || job <= 0)
            return sw_error_set(SW_EINVALID,
                                "slurm executor: '%s' is not a Slurm job id",
                                handle);
    }
    a = add(sx, key, dir, handle ? A_WATCHING : A_SEEKING);
    a->job = job;
    a->submitted = sx->now; /* its wait is timed from here */
    if (!handle && sw_slurm__read_job_file(a->dir, &job))
        found_job(sx, a, job);
    sx->wake_now = true;
    return SW_OK;
}

static int slurm_cancel(sw_executor *ex, const char *key, bool force)
{
    slurm *sx = (slurm *)ex;
    attempt *a = find(sx, key);

    if (!a)
        return sw_error_set(SW_ENOTFOUND, "slurm executor: no attempt '%s'",
                            key ? key : "");
    if (a->state == A_WAITING) {
        emit(sx, SW_JOB_START_FAILED, a,
             sw_strdup("canceled before it was submitted to Slurm"));
        sweep(sx);
        return SW_OK;
    }
    if (force ? a->cancel < 2 : a->cancel < 1) {
        a->cancel = force ? 2 : 1;
        a->cancel_sent = false;
    }
    sx->wake_now = true;
    return SW_OK;
}

static int slurm_fd(sw_executor *ex)
{
    return ((slurm *)ex)->run.epfd;
}

static double earliest(double w, double t)
{
    return w == 0 || t < w ? t : w;
}

/* The next time process() has something to do. */
static double slurm_next_wake(sw_executor *ex)
{
    slurm *sx = (slurm *)ex;
    double now = sx->now > 0 ? sx->now : 1e-9, w = 0;
    bool polling;
    size_t i;

    if (sx->qhead < sx->qn || sx->wake_now)
        return now;
    for (i = 0; i < sx->run.n; i++) {
        const sw_slurm__cmd *c = sx->run.cmds[i];

        /* closed pipes, not reaped yet; or one to kill */
        w = earliest(w, c->out < 0 && c->err < 0 ? now + 0.002
                                                 : c->started + CMD_LIMIT);
    }
    /* while a squeue runs, its end (on fd()) is the next thing to do */
    polling = sw_slurm__running(&sx->run, K_SQUEUE) > 0;
    for (i = 0; i < sx->n; i++) {
        const attempt *a = sx->all[i];

        if (a->state == A_WAITING &&
            sw_slurm__running(&sx->run, K_SBATCH) < MAX_SUBMIT &&
            (a->share == 0 || sx->sinfo ||
             sw_slurm__running(&sx->run, K_SINFO) == 0))
            w = earliest(w, sx->tokens >= 1
                                ? now
                                : sx->now + (1 - sx->tokens) / sx->rate);
        if (a->state == A_WATCHING && a->missing && !a->asking)
            return now;
        if (a->state == A_SEEKING && !a->asking)
            w = earliest(w, sx->next_poll);
        if (a->state == A_WATCHING && !polling)
            w = earliest(w, sx->next_poll);
        if (a->state == A_WATCHING && a->cancel)
            w = earliest(w, a->cancel_sent ? a->cancel_at + CANCEL_AGAIN : now);
        if (a->state == A_WATCHING && !a->running_told && !a->late_told)
            w = earliest(w, a->submitted + sx->pending_notice);
    }
    return w;
}

/* Tops up the bucket that paces submissions: `rate` a second, at most
 * `rate` (a second's worth) kept. */
static void fill_tokens(slurm *sx)
{
    double most = sx->rate > 1 ? sx->rate : 1;

    if (sx->now > sx->filled_at)
        sx->tokens += (sx->now - sx->filled_at) * sx->rate;
    if (sx->tokens > most || sx->filled_at == 0)
        sx->tokens = most;
    sx->filled_at = sx->now;
}

/* Whether another sbatch may start now: MAX_SUBMIT at once, `rate` a
 * second. */
static bool may_submit(const slurm *sx)
{
    return sw_slurm__running(&sx->run, K_SBATCH) < MAX_SUBMIT &&
           sx->tokens >= 1;
}

/* Starts what is due: submissions, searches, sacct, cancels, the poll. */
static void start_due(slurm *sx)
{
    size_t i, n = sx->n; /* submit() may emit, never add */

    fill_tokens(sx);
    for (i = 0; i < n; i++) {
        attempt *a = sx->all[i];

        if (a->state == A_WAITING && may_submit(sx)) {
            try_submit(sx, a);
            sx->tokens -= a->state == A_SUBMITTING;
        } else if (a->state == A_SEEKING && !a->asking &&
                   sx->now >= sx->next_poll)
            seek(sx, a);
        else if (a->state == A_WATCHING && a->missing && !a->asking)
            ask_sacct(sx, a, K_SACCT_LOG);
    }
    send_cancels(sx);
    if (sx->now >= sx->next_poll &&
        sw_slurm__running(&sx->run, K_SQUEUE) == 0) {
        poll_jobs(sx);
        sx->next_poll = sx->now + sx->poll_every;
        sx->poll_every =
            sx->poll_every * 1.5 < POLL_MAX ? sx->poll_every * 1.5 : POLL_MAX;
    }
}

static int slurm_process(sw_executor *ex, double now)
{
    slurm *sx = (slurm *)ex;
    sw_slurm__cmd *c;

    sx->now = now;
    sx->wake_now = false;
    sw_slurm__pump(&sx->run, now, CMD_LIMIT);
    while ((c = sw_slurm__finished(&sx->run)) != NULL) {
        on_finished(sx, c);
        sw_slurm__cmd_free(c);
    }
    start_due(sx);
    sweep(sx);
    return SW_OK;
}

static int slurm_next_event(sw_executor *ex, sw_job_event *out)
{
    slurm *sx = (slurm *)ex;

    if (sx->qhead == sx->qn)
        return 0;
    *out = sx->queue[sx->qhead++];
    return 1;
}

/* Jobs keep running: a later orchestrator adopts them. */
static void slurm_free(sw_executor *ex)
{
    slurm *sx = (slurm *)ex;
    size_t i;

    sw_slurm__runner_dispose(&sx->run);
    for (i = 0; i < sx->n; i++)
        free_attempt(sx->all[i]);
    for (i = sx->qhead; i < sx->qn; i++)
        sw_job_event_dispose(&sx->queue[i]);
    sw_slurm__strv_free(sx->extra);
    sw_slurm__strv_free(sx->query_env);
    free(sx->sinfo);
    free(sx->all);
    free(sx->queue);
    free(sx);
}

static const sw_executor_methods slurm_methods = {
    SW_EXECUTOR_VERSION,
    "slurm",
    slurm_launch,
    slurm_adopt,
    slurm_cancel,
    slurm_fd,
    slurm_next_wake,
    slurm_process,
    slurm_next_event,
    slurm_free,
    NULL,
    NULL,
    true, /* Slurm places them (--gres) */
};

/* The environment of squeue and sacct: ours, their times as unix
 * seconds. */
static char **query_env(void)
{
    static const char fmt[] = "SLURM_TIME_FORMAT=";
    char **v;
    size_t n = 0, k = 0, i;

    while (environ[n])
        n++;
    v = sw_calloc(n + 2, sizeof(*v));
    for (i = 0; i < n; i++)
        if (strncmp(environ[i], fmt, sizeof(fmt) - 1) != 0)
            v[k++] = sw_strdup(environ[i]);
    v[k] = sw_strdup("SLURM_TIME_FORMAT=%s");
    return v;
}

/* One of the executor's own arguments (`--sweep-NAME=VALUE`, from the
 * `slurm:` section's keys that are not sbatch's): 1 when `arg` is one
 * and is taken, 0 when it is an sbatch option, SW_EINVALID when it is a
 * bad one of ours. */
static int own_arg(slurm *sx, const char *arg)
{
    static const char rate[] = "--sweep-submit-rate=";
    static const char notice[] = "--sweep-pending-notice=";
    const char *v;
    char *end;
    double x;

    if (strncmp(arg, "--sweep-", 8) != 0)
        return 0;
    v = strchr(arg, '=') ? strchr(arg, '=') + 1 : "";
    errno = 0;
    x = strtod(v, &end);
    if (errno || end == v || *end || !(x >= 0) || x > 1e6)
        x = -1;
    if (strncmp(arg, rate, sizeof(rate) - 1) == 0 && x > 0)
        sx->rate = x;
    else if (strncmp(arg, notice, sizeof(notice) - 1) == 0 && x >= 0)
        sx->pending_notice = x;
    else
        return sw_error_set(SW_EINVALID,
                            "slurm: '%s': expected --sweep-submit-rate=N "
                            "(sbatch calls a second, above 0) or "
                            "--sweep-pending-notice=SECONDS",
                            arg);
    return 1;
}

int sw_executor_slurm_new(sw_executor **out, char *const *sbatch_args)
{
    slurm *sx = sw_calloc(1, sizeof(*sx));
    size_t n = 0, k = 0;
    char *arg;
    int error = SW_OK, own = 0;

    sx->base.methods = &slurm_methods;
    sx->poll_every = POLL_MIN;
    sx->rate = SUBMIT_RATE;
    sx->pending_notice = PENDING_NOTICE;
    sx->run.epfd = -1;
    sx->query_env = query_env();
    for (; sbatch_args && sbatch_args[n]; n++)
        ;
    sx->extra = sw_calloc(n + 1, sizeof(char *));
    for (n = 0; !error && sbatch_args && sbatch_args[n]; n++) {
        if (!(arg = sw_spec_slurm_arg(sbatch_args[n])))
            error = sw_error_set(SW_EINVALID, "slurm: %s", sw_error_last());
        else if ((own = own_arg(sx, arg)) < 0)
            error = own;
        if (arg && own == 0 && !error)
            sx->extra[k++] = arg;
        else
            free(arg);
    }
    if (!error)
        error = sw_slurm__runner_init(&sx->run);
    if (error < 0) {
        slurm_free(&sx->base);
        return error;
    }
    sx->run.keep_kinds = 1u << K_SBATCH | 1u << K_SCANCEL;
    *out = &sx->base;
    return SW_OK;
}
