/*
 * slurm_jobs.c - the Slurm executor's words with Slurm: the arguments and
 * environment of sbatch, and what squeue and sacct answer about jobs.
 *
 * A job's end is a state name and a status. squeue's exit_code is a raw
 * wait status (768 is exit 3, 9 is SIGKILL); sacct's ExitCode is
 * "CODE:SIGNAL". Only a job that COMPLETED, or FAILED, TIMED OUT, ran out
 * of memory or was cancelled while it ran, ended as its trial did; a node
 * failure, a preemption, a requeue or a cancel before it ever started is
 * Slurm's doing, and the executor reports those as lost attempts with
 * Slurm's word for what happened, also in the run's stderr.log.
 *
 * In the attempt's folder the executor keeps the job script and the job
 * id (`pid`: "slurm JOBID", put aside by the engine before the next
 * attempt), so a job is found again even when its handle never reached
 * the store.
 */
#include "backends/slurm_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern char **environ;

void sw_slurm__strv_free(char **v)
{
    size_t i;

    for (i = 0; v && v[i]; i++)
        free(v[i]);
    free(v);
}

static void push(char ***v, size_t *n, size_t *cap, char *s)
{
    sw_grow(v, cap, *n + 2, sizeof(**v));
    (*v)[(*n)++] = s;
    (*v)[*n] = NULL;
}

/* Splits "field|field|..." in place into at most `max` fields. */
static size_t split(char *line, char **f, size_t max)
{
    size_t n = 0;
    char *p = line, *bar;

    line[strcspn(line, "\r\n")] = '\0';
    while (n < max) {
        f[n++] = p;
        bar = strchr(p, '|');
        if (!bar)
            break;
        *bar = '\0';
        p = bar + 1;
    }
    return n;
}

static bool parse_id(const char *s, long long *out)
{
    char *end;
    long long v;

    errno = 0;
    v = strtoll(s, &end, 10);
    if (errno || end == s || *end || v <= 0)
        return false;
    *out = v;
    return true;
}

/* A time Slurm printed under SLURM_TIME_FORMAT=%s; 0 for "N/A",
 * "Unknown", "NONE" or anything else that is not one. */
static double parse_time(const char *s)
{
    char *end;
    long long v;

    errno = 0;
    v = strtoll(s, &end, 10);
    return errno || end == s || *end || v <= 0 ? 0 : (double)v;
}

static void put_state(sw_slurm__job *j, const char *state, const char *reason)
{
    size_t n = strcspn(state, " +"); /* "CANCELLED by 0", "COMPLETING+" */

    snprintf(j->state, sizeof(j->state), "%.*s", (int)n, state);
    snprintf(j->reason, sizeof(j->reason), "%s", reason ? reason : "");
    sw_slurm__classify(j);
}

bool sw_slurm__parse_squeue(char *line, sw_slurm__job *out, char **name)
{
    char *f[8];
    char *end;
    long raw;
    size_t n;

    memset(out, 0, sizeof(*out));
    if ((n = split(line, f, 8)) < 5 || !parse_id(f[0], &out->id))
        return false;
    put_state(out, f[1], f[2]);
    if (n >= 7 && !out->pending) { /* a pending job's is a forecast */
        out->start = parse_time(f[5]);
        out->end = parse_time(f[6]);
    }
    errno = 0;
    raw = strtol(f[3], &end, 10);
    if (out->phase == SW_SLURM_ENDED && !errno && end != f[3] && !*end &&
        raw >= 0 && raw <= 0xffff) {
        out->has_status = true;
        out->exit.exited = (raw & 0x7f) == 0;
        out->exit.exit_code = out->exit.exited ? (int)(raw >> 8) & 0xff : 0;
        out->exit.signal = out->exit.exited ? 0 : (int)(raw & 0x7f);
    }
    *name = f[4];
    return true;
}

bool sw_slurm__parse_sacct(char *line, sw_slurm__job *out)
{
    char *f[6];
    int code, sig;
    size_t n;

    memset(out, 0, sizeof(*out));
    if ((n = split(line, f, 6)) < 3 || !parse_id(f[0], &out->id))
        return false; /* "12.batch" and headers are not jobs */
    put_state(out, f[1], NULL);
    if (n >= 5) {
        out->start = parse_time(f[3]);
        out->end = parse_time(f[4]);
    }
    if (out->phase == SW_SLURM_ENDED &&
        sscanf(f[2], "%d:%d", &code, &sig) == 2) {
        out->has_status = true;
        out->exit.exited = sig == 0;
        out->exit.exit_code = sig == 0 ? code : 0;
        out->exit.signal = sig;
    }
    return true;
}

static const char *const alive[] = {
    "PENDING",     "CONFIGURING",  "RUNNING",       "COMPLETING",   "SUSPENDED",
    "RESIZING",    "SIGNALING",    "STAGE_OUT",     "STOPPED",      "REQUEUED",
    "REQUEUE_FED", "REQUEUE_HOLD", "RESV_DEL_HOLD", "SPECIAL_EXIT",
};

void sw_slurm__classify(sw_slurm__job *j)
{
    size_t i;

    j->phase = SW_SLURM_ENDED;
    for (i = 0; i < sizeof(alive) / sizeof(alive[0]); i++)
        if (strcmp(j->state, alive[i]) == 0)
            j->phase = SW_SLURM_ALIVE;
    j->pending = strcmp(j->state, "PENDING") == 0 ||
                 strncmp(j->state, "REQUEUE", 7) == 0 ||
                 strcmp(j->state, "RESV_DEL_HOLD") == 0 ||
                 strcmp(j->state, "SPECIAL_EXIT") == 0;
}

char *sw_slurm__machinery_end(const sw_slurm__job *j, bool ran)
{
    static const char *const slurms[][2] = {
        {"NODE_FAIL", "its node failed"},
        {"BOOT_FAIL", "its node failed to boot"},
        {"PREEMPTED", "it was preempted"},
        {"DEADLINE", "it reached its deadline before it could run"},
        {"REVOKED", "it was revoked (a federation sibling ran it)"},
    };
    size_t i;

    for (i = 0; i < sizeof(slurms) / sizeof(slurms[0]); i++)
        if (strcmp(j->state, slurms[i][0]) == 0)
            return sw_aprintf("Slurm job %lld ended %s: %s", j->id, j->state,
                              slurms[i][1]);
    if (j->phase == SW_SLURM_ALIVE && j->pending && ran)
        return sw_aprintf("Slurm job %lld was requeued (%s): the attempt "
                          "ends here and its run goes again",
                          j->id, j->state);
    if (!ran && strcmp(j->state, "CANCELLED") == 0)
        return sw_aprintf("Slurm job %lld was cancelled before it started",
                          j->id);
    if (j->phase == SW_SLURM_ENDED && !j->has_status)
        return sw_aprintf("Slurm job %lld ended %s without an exit status",
                          j->id, j->state);
    return NULL;
}

/* Pending reasons that the passing of time does not change: the request
 * is beyond what its partition, QoS or account allows a job. */
static const char *const never[][2] = {
    {"PartitionTimeLimit", "its time limit is above its partition's"},
    {"PartitionNodeLimit", "it asks for more nodes than its partition has"},
    {"PartitionConfig", "its partition cannot run it as asked"},
    {"BadConstraints", "no node has what it asks for"},
    {"InvalidAccount", "its account is not valid"},
    {"InvalidQOS", "its QoS is not valid"},
    {"DependencyNeverSatisfied", "it depends on a job that failed"},
    {"QOSMaxWallDurationPerJobLimit", "its time limit is above its QoS's"},
    {"AssocMaxWallDurationPerJobLimit", "its time limit is above its "
                                        "account's"},
    {"QOSMaxGRESPerJob", "it asks for more GPUs than its QoS allows a job"},
    {"AssocMaxGRESPerJob", "it asks for more GPUs than its account allows "
                           "a job"},
    {"QOSMaxCpuPerJobLimit", "it asks for more CPUs than its QoS allows a "
                             "job"},
    {"AssocMaxCpuPerJobLimit", "it asks for more CPUs than its account "
                               "allows a job"},
};

/* Pending reasons that may pass, and what they wait for. */
static const char *const may_pass[][2] = {
    {"PartitionDown", "its partition is DOWN; it starts once the partition "
                      "is UP"},
    {"PartitionInactive", "its partition is INACTIVE"},
    {"ReqNodeNotAvail", "a node it needs is drained, down or reserved"},
    {"NodeDown", "a node it needs is down"},
    {"Resources", "the nodes it can run on are busy"},
    {"Priority", "jobs of higher priority are ahead of it"},
    {"Dependency", "it waits for a job it depends on"},
    {"BeginTime", "its start time is still to come"},
    {"JobHeldUser", "it is held (scontrol release)"},
    {"JobHeldAdmin", "an administrator holds it"},
    {"Reservation", "it waits for its reservation"},
};

char *sw_slurm__waited(const sw_slurm__job *j, double secs)
{
    const char *why = "see `squeue -j` and Slurm's documentation of "
                      "pending reasons";
    size_t i, n = strcspn(j->reason, ",");

    for (i = 0; i < sizeof(may_pass) / sizeof(may_pass[0]); i++)
        if (strlen(may_pass[i][0]) == n &&
            strncmp(j->reason, may_pass[i][0], n) == 0)
            why = may_pass[i][1];
    return sw_aprintf("Slurm job %lld has waited %.0fs in the queue: %s (%s)",
                      j->id, secs, j->reason, why);
}

char *sw_slurm__never_starts(const sw_slurm__job *j)
{
    size_t i;

    for (i = 0; i < sizeof(never) / sizeof(never[0]); i++)
        if (strcmp(j->reason, never[i][0]) == 0)
            return sw_aprintf("Slurm job %lld can never start (%s: %s); it "
                              "was cancelled",
                              j->id, j->reason, never[i][1]);
    return NULL;
}

/* Appends the `gres` request for whole GPUs; a share of one is the
 * caller's (sw_slurm__shard_request, once the cluster's shards are
 * known). */
static void put_resources(char ***v, size_t *n, size_t *cap,
                          const sw_resources *r)
{
    if (r->has_gpus && r->gpus >= 1 && r->gpus <= INT_MAX)
        push(v, n, cap, sw_aprintf("--gres=gpu:%d", (int)r->gpus));
}

/* Adds the generic resources of one `sinfo -o %G` line ("gpu:4,shard:16",
 * "gpu:a100:4(S:0-1),shard:32(S:0,1)") to *gpus and *shards. */
static void count_gres(const char *line, long *gpus, long *shards)
{
    const char *p = line, *end, *colon;
    long count;

    while (*p && *p != '\n') {
        end = p;
        while (*end && *end != ',' && *end != '\n' && *end != '(')
            end++;
        colon = end;
        while (colon > p && colon[-1] != ':')
            colon--;
        count = colon > p ? strtol(colon, NULL, 10) : 0;
        if (strncmp(p, "gpu:", 4) == 0)
            *gpus += count;
        else if (strncmp(p, "shard:", 6) == 0)
            *shards += count;
        if (*end == '(')
            end = strchr(end, ')') ? strchr(end, ')') + 1 : end + strlen(end);
        p = *end == ',' ? end + 1 : end;
    }
}

int sw_slurm__shard_request(char **out, double share, const char *sinfo)
{
    long gpus, shards, per, most = 0;
    const char *line;

    for (line = sinfo; line && *line; line = strchr(line, '\n')) {
        line += *line == '\n';
        gpus = shards = 0;
        count_gres(line, &gpus, &shards);
        per = gpus > 0 ? shards / gpus : 0;
        most = per > most ? per : most;
        if (!strchr(line, '\n'))
            break;
    }
    if (most == 0)
        return sw_error_set(SW_EINVALID,
                            "resources.gpus %g: this cluster has no GPU "
                            "shards (gres/shard), and the Slurm backend "
                            "gives whole GPUs otherwise: ask for gpus: 1",
                            share);
    *out =
        sw_aprintf("--gres=shard:%ld", (long)ceil(share * (double)most - 1e-9));
    return SW_OK;
}

int sw_slurm__sbatch_argv(char ***out, const sw_launch *l, char *const *extra,
                          const char *script)
{
    char **v = NULL;
    size_t n = 0, cap = 0, i;

    push(&v, &n, &cap, sw_strdup("sbatch"));
    push(&v, &n, &cap, sw_strdup("--parsable"));
    push(&v, &n, &cap, sw_strdup("--no-requeue"));
    put_resources(&v, &n, &cap, &l->resources);
    for (i = 0; extra && extra[i]; i++)
        push(&v, &n, &cap, sw_strdup(extra[i]));
    /* last, so the user's arguments cannot move what sweep reads */
    push(&v, &n, &cap, sw_aprintf("--job-name=%s", l->key));
    push(&v, &n, &cap, sw_aprintf("--output=%s", l->stdout_path));
    push(&v, &n, &cap, sw_aprintf("--error=%s", l->stderr_path));
    push(&v, &n, &cap, sw_strdup("--open-mode=append"));
    push(&v, &n, &cap, sw_strdup("--export=ALL"));
    if (l->cwd)
        push(&v, &n, &cap, sw_aprintf("--chdir=%s", l->cwd));
    push(&v, &n, &cap, sw_strdup(script));
    for (i = 0; l->argv[i]; i++)
        push(&v, &n, &cap, sw_strdup(l->argv[i]));
    *out = v;
    return SW_OK;
}

/* Whether environment entry `e` names one of the submitter's devices:
 * the job gets those from Slurm, for the node it runs on. */
static bool submitters(const char *e)
{
    static const char *const names[] = {
        "CUDA_VISIBLE_DEVICES=", "ROCR_VISIBLE_DEVICES=",
        "HIP_VISIBLE_DEVICES=", "GPU_DEVICE_ORDINAL="};
    size_t i;

    for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (strncmp(e, names[i], strlen(names[i])) == 0)
            return true;
    return false;
}

static bool replaced(const char *e, char *const *add)
{
    size_t i, name = strcspn(e, "=") + 1;

    for (i = 0; add && add[i]; i++)
        if (strncmp(add[i], e, name) == 0)
            return true;
    return false;
}

char **sw_slurm__job_env(const sw_launch *l)
{
    char **v = NULL;
    size_t n = 0, cap = 0, i;

    for (i = 0; environ[i]; i++)
        if (!submitters(environ[i]) && !replaced(environ[i], l->env))
            push(&v, &n, &cap, sw_strdup(environ[i]));
    for (i = 0; l->env && l->env[i]; i++)
        if (!submitters(l->env[i]) && !replaced(l->env[i], l->env + i + 1))
            push(&v, &n, &cap, sw_strdup(l->env[i]));
    return v ? v : sw_calloc(1, sizeof(*v));
}

int sw_slurm__write_file(const char *dir, const char *name, const char *text,
                         mode_t mode)
{
    char *path = sw_aprintf("%s/%s", dir, name);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
    int error = SW_OK;

    if (fd < 0 || sw_write_all(fd, text, strlen(text)) < 0)
        error =
            sw_error_set(SW_EIO, "cannot write %s: %s", path, strerror(errno));
    if (fd >= 0)
        close(fd);
    free(path);
    return error;
}

int sw_slurm__read_job_file(const char *dir, long long *job)
{
    char *path = sw_aprintf("%s/pid", dir), text[64];
    FILE *f = fopen(path, "re");
    size_t n = f ? fread(text, 1, sizeof(text) - 1, f) : 0;

    if (f)
        fclose(f);
    free(path);
    text[n] = '\0';
    return sscanf(text, "slurm %lld", job) == 1 && *job > 0;
}

void sw_slurm__note(const char *dir, const char *what)
{
    char *path = sw_aprintf("%s/stderr.log", dir);
    FILE *f = fopen(path, "ae");

    if (f) {
        fprintf(f, "sweep: %s\n", what);
        fclose(f);
    }
    free(path);
}
