/*
 * sim.c - the simulated cluster, `--backend sim`: attempts run on a
 * virtual clock, so a sweep of thousands of GPU-hours is played in
 * seconds while the engine, its stopping rule, its search and its store
 * run as they do for real.
 *
 * Each attempt's process (a surrogate) is started at once, for real, with
 * SWEEP_SIMULATE=1 in its environment; it prints its whole learning curve
 * as `@metrics` lines, each of which may carry `_seconds`, the virtual
 * seconds that step took (default 1). Its output goes to a file in
 * memory (a memfd: no inode on the run's disk, which the trial's own
 * files already cost). When the process has exited, the curve
 * is replayed: line i is appended to the run's stdout.log at the launch's
 * virtual time plus the seconds of lines 0..i, so the engine reads it
 * "live", and the attempt ends, with the process's exit status, when its
 * last line's time comes. A cancel at virtual time t ends it at t (killed
 * by SIGTERM, or SIGKILL when forced); the lines after t never appear.
 *
 * Invariants: the clock moves only through advance(), and never while a
 * surrogate runs (fd() is then a descriptor that becomes readable when
 * one exits, and the driver waits on it), so what a surrogate prints
 * never depends on real time. With a failure rate P, an attempt dies
 * (exit 1) at a uniformly drawn time of its curve with probability P;
 * the draw is a hash of the seed, the run's index and the attempt
 * number, so a seed fails the same attempts whatever the launch order.
 * A simulation cannot outlive its orchestrator: adopt() answers
 * SW_JOB_NOT_STARTED, and the run goes again.
 */
#define _GNU_SOURCE /* posix_spawn_file_actions_addchdir_np */
#include "backends/executor.h"
#include "backends/sim_curve.h"
#include "sweeps/buf.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h> /* memfd_create */
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define CURVE_MAX (256 << 20) /* bytes of a surrogate's output, at most */
/* A trial's start-up and reading delay unless the file or the trial says
 * (`sim: {startup, read_delay}`, `_startup`, `_read_delay`): measured on
 * the local backend by tests/bench/bench_sim_timing.sh (medians: 17 ms
 * from the launch to the trial's first instruction and 5 ms from its
 * exit to its end; 0.3 ms from printing a line to storing it). */
#define STARTUP_S 0.021
#define READ_DELAY_S 0.0003

typedef struct {
    sw_clock base;       /* first: the clock's functions cast back */
    double mono0, wall0; /* the system's clocks when it was made */
    double mono;         /* now: advance() sets it to exactly the time
                            asked for, so a line due then is due now */
} vclock;

typedef struct {
    char *key;
    int curve_fd; /* the surrogate's stdout, a memfd; -1 once read */
    char *stderr_path;
    int out_fd; /* the run's stdout.log, appended to */
    pid_t pid;  /* the surrogate; 0 once reaped */
    int pidfd;
    sw_sim_shape shape; /* how its curve is cut and timed */
    char *mark_path;    /* under a pausing rule, the step its simulated
                           checkpoint holds; NULL otherwise */
    int64_t trained;    /* the last step it has trained */
    char *raw;          /* the surrogate's whole output */
    size_t raw_len;
    sw_sim_curve c; /* its lines, once the surrogate has exited */
    size_t next;    /* the first line the engine has not been given */
    size_t written; /* bytes of c.text in the run's stdout.log */
    sw_exit exit;
    uint64_t draw;     /* the failure draw's key */
    int cancel_signal; /* canceled while its surrogate ran; 0: not */
    size_t idx;        /* its place in sim.jobs */
    size_t hpos;       /* its place in sim.heap; NOT_DUE: not there */
} job;

#define NOT_DUE SIZE_MAX

typedef struct {
    sw_executor base;
    vclock clock;
    job **jobs;
    size_t n, cap;
    job **heap; /* replaying jobs, soonest due first (a binary heap) */
    size_t hn, hcap;
    sw_job_event *queue;
    size_t qhead, qn, qcap;
    int epfd;
    size_t surrogates; /* jobs whose process still runs */
    double fail_rate;
    uint64_t seed;
    double startup, read_delay; /* an attempt's, unless it says */
} sim;

static const sw_executor_methods sim_methods;

/* ---- the virtual clock ---------------------------------------------- */

static double vclock_mono(const sw_clock *c)
{
    const vclock *v = (const vclock *)c;

    return v->mono;
}

static double vclock_wall(const sw_clock *c)
{
    const vclock *v = (const vclock *)c;

    return v->wall0 + (v->mono - v->mono0);
}

static double real_clock(clockid_t id)
{
    struct timespec ts;

    clock_gettime(id, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double now_mono(const sim *x)
{
    return vclock_mono(&x->clock.base);
}

/* ---- events and jobs -------------------------------------------------- */

static void push_event(sim *x, sw_job_event_kind kind, const char *key,
                       const char *handle, const sw_exit *exit,
                       const char *message)
{
    sw_job_event *ev;

    sw_grow(&x->queue, &x->qcap, x->qn + 1, sizeof(*x->queue));
    ev = &x->queue[x->qn++];
    memset(ev, 0, sizeof(*ev));
    ev->kind = kind;
    ev->key = sw_strdup(key);
    ev->handle = handle ? sw_strdup(handle) : NULL;
    ev->message = message ? sw_strdup(message) : NULL;
    if (exit)
        ev->exit = *exit;
}

static job *find_job(const sim *x, const char *key)
{
    size_t i;

    for (i = 0; i < x->n; i++)
        if (strcmp(x->jobs[i]->key, key) == 0)
            return x->jobs[i];
    return NULL;
}

/* ---- the replays due, soonest first ----------------------------------- */

/* When `j` next has something to do: its next line's reading, else its
 * end. */
static double due(const job *j)
{
    return j->next < j->c.n ? j->c.seen[j->next] : j->c.end_at;
}

static void heap_set(sim *x, size_t i, job *j)
{
    x->heap[i] = j;
    j->hpos = i;
}

static void sift_up(sim *x, size_t i)
{
    job *j = x->heap[i];

    while (i > 0 && due(x->heap[(i - 1) / 2]) > due(j)) {
        heap_set(x, i, x->heap[(i - 1) / 2]);
        i = (i - 1) / 2;
    }
    heap_set(x, i, j);
}

static void sift_down(sim *x, size_t i)
{
    job *j = x->heap[i];
    size_t c;

    while ((c = 2 * i + 1) < x->hn) {
        if (c + 1 < x->hn && due(x->heap[c + 1]) < due(x->heap[c]))
            c++;
        if (due(x->heap[c]) >= due(j))
            break;
        heap_set(x, i, x->heap[c]);
        i = c;
    }
    heap_set(x, i, j);
}

/* `j`'s curve is known: its replay is due from now on. */
static void heap_push(sim *x, job *j)
{
    sw_grow(&x->heap, &x->hcap, x->hn + 1, sizeof(*x->heap));
    heap_set(x, x->hn++, j);
    sift_up(x, x->hn - 1);
}

static void heap_remove(sim *x, job *j)
{
    size_t i = j->hpos;
    job *last;

    if (i == NOT_DUE)
        return;
    j->hpos = NOT_DUE;
    if (i == --x->hn)
        return;
    last = x->heap[x->hn];
    heap_set(x, i, last);
    sift_up(x, i);
    sift_down(x, last->hpos);
}

static void free_job(job *j)
{
    if (!j)
        return;
    if (j->out_fd >= 0)
        close(j->out_fd);
    if (j->pidfd >= 0)
        close(j->pidfd);
    free(j->key);
    if (j->curve_fd >= 0)
        close(j->curve_fd);
    free(j->stderr_path);
    free(j->mark_path);
    free(j->raw);
    sw_sim__curve_dispose(&j->c);
    free(j);
}

/* Forgets job `j` (its end has been queued). */
static void drop_job(sim *x, job *j)
{
    heap_remove(x, j);
    x->jobs[j->idx] = x->jobs[--x->n];
    x->jobs[j->idx]->idx = j->idx;
    free_job(j);
}

/* Queues the end of job `j` and forgets it. */
static void end_job(sim *x, job *j, const sw_exit *how)
{
    FILE *f;

    if (j->mark_path && (f = fopen(j->mark_path, "w")) != NULL) {
        fprintf(f, "%lld\n", (long long)j->trained);
        fclose(f);
    }
    push_event(x, SW_JOB_ENDED, j->key, NULL, how, NULL);
    drop_job(x, j);
}

/* Appends a line of the simulator's own to the attempt's stderr.log. */
static void note(const job *j, const char *fmt, ...) SW_PRINTF(2, 3);
static void note(const job *j, const char *fmt, ...)
{
    int fd = open(j->stderr_path, O_WRONLY | O_APPEND | O_CLOEXEC);
    va_list ap;

    if (fd < 0)
        return;
    va_start(ap, fmt);
    vdprintf(fd, fmt, ap);
    va_end(ap);
    close(fd);
}

/* ---- the failure draw ------------------------------------------------- */

static uint64_t mix(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static uint64_t hash_str(uint64_t h, const char *s)
{
    for (; s && *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
    return h;
}

/* The value of NAME in a launch's environment; NULL when unset. */
static const char *launch_env(const sw_launch *l, const char *name)
{
    size_t n = strlen(name), i;

    for (i = 0; l->env && l->env[i]; i++)
        if (strncmp(l->env[i], name, n) == 0 && l->env[i][n] == '=')
            return l->env[i] + n + 1;
    return NULL;
}

/* What the draw of an attempt depends on: the run's key without its
 * sweep's id (a new id each sweep), and the attempt number. */
static uint64_t draw_key(const sw_launch *l)
{
    const char *sweep = launch_env(l, "SWEEP_ID"), *run = l->key;
    size_t n = sweep ? strlen(sweep) : 0;

    if (n && strncmp(run, sweep, n) == 0)
        run += n;
    return hash_str(hash_str(0xcbf29ce484222325ull, run),
                    launch_env(l, "SWEEP_ATTEMPT"));
}

/* Two numbers in [0, 1) for the attempt: whether it fails, and where. */
static void draw(const sim *x, const job *j, double *u, double *v)
{
    uint64_t a = mix(x->seed ^ j->draw), b = mix(a);

    *u = (double)(a >> 11) / 9007199254740992.0;
    *v = (double)(b >> 11) / 9007199254740992.0;
}

/* ---- reading a curve -------------------------------------------------- */

/* Reads the surrogate's output whole, and lets it go. */
static int read_curve(job *j)
{
    struct stat st;
    ssize_t got;
    int fd = j->curve_fd, error = 0;

    j->curve_fd = -1;
    if (fstat(fd, &st) != 0 || st.st_size > CURVE_MAX)
        error = -1;
    if (!error) {
        j->raw = sw_malloc((size_t)st.st_size + 1);
        while (j->raw_len < (size_t)st.st_size &&
               (got = pread(fd, j->raw + j->raw_len,
                            (size_t)st.st_size - j->raw_len,
                            (off_t)j->raw_len)) > 0)
            j->raw_len += (size_t)got;
    }
    close(fd);
    return error;
}

/* With the failure rate, cuts the curve at a uniformly drawn time: the
 * lines after it never appear, and the attempt exits 1 then (its
 * stderr.log says so). */
static void inject_failure(const sim *x, job *j)
{
    double u, v, at;

    draw(x, j, &u, &v);
    if (x->fail_rate <= 0 || u >= x->fail_rate)
        return;
    at = j->shape.start + v * (j->c.end_at - j->shape.start);
    while (j->c.n > 0 && j->c.at[j->c.n - 1] > at)
        j->c.n--;
    j->c.end_at = at;
    j->exit = (sw_exit){true, 1, 0, false};
    note(j,
         "sweep sim: injected failure at virtual second %.3f (fail rate "
         "%g)\n",
         at - j->shape.start, x->fail_rate);
}

/* ---- launch ----------------------------------------------------------- */

/* The surrogate's environment: the inherited one, the launch's on top,
 * and SWEEP_SIMULATE=1; the strings are borrowed. */
static char **make_env(const sw_launch *l)
{
    static char simulate[] = "SWEEP_SIMULATE=1";
    size_t n = 0, m = 0, i, k = 0, name;
    char **env;

    for (; environ[n]; n++)
        ;
    for (; l->env && l->env[m]; m++)
        ;
    env = sw_calloc(n + m + 2, sizeof(char *));
    for (i = 0; i < m; i++)
        if (strncmp(l->env[i], "SWEEP_SIMULATE=", 15) != 0)
            env[k++] = l->env[i];
    for (i = 0; i < n; i++) {
        size_t j;

        name = strcspn(environ[i], "=") + 1;
        for (j = 0; j < k; j++)
            if (strncmp(env[j], environ[i], name) == 0)
                break;
        if (j == k && strncmp(environ[i], "SWEEP_SIMULATE=", 15) != 0)
            env[k++] = environ[i];
    }
    env[k++] = simulate;
    return env;
}

static int spawn(const sw_launch *l, int out, int err, pid_t *pid)
{
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t at;
    sigset_t none;
    char **env = make_env(l);
    int rc;

    sigemptyset(&none);
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, out, 1);
    posix_spawn_file_actions_adddup2(&fa, err, 2);
    if (l->cwd)
        posix_spawn_file_actions_addchdir_np(&fa, l->cwd);
    posix_spawnattr_init(&at);
    posix_spawnattr_setflags(&at,
                             POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK);
    posix_spawnattr_setpgroup(&at, 0);
    posix_spawnattr_setsigmask(&at, &none);
    rc = posix_spawnp(pid, l->argv[0], &fa, &at, l->argv, env);
    posix_spawnattr_destroy(&at);
    posix_spawn_file_actions_destroy(&fa);
    free(env);
    return rc;
}

/* Starts the surrogate of job `j`; a message (the caller frees) when it
 * cannot. */
static char *start_surrogate(sim *x, job *j, const sw_launch *l)
{
    /* the contract's folder: a trainer run for its curve may checkpoint
     * there as it would for real (the engine makes it only for rules
     * that pause, where the simulator keeps its own mark in it) */
    const char *ckpt = launch_env(l, "SWEEP_CHECKPOINT_DIR");
    int out = j->curve_fd = memfd_create("simulated.out", MFD_CLOEXEC),
        err = open(l->stderr_path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC,
                   0600);
    struct epoll_event ev = {.events = EPOLLIN};
    char *why = NULL;
    int rc;

    if (out < 0 || err < 0 || j->out_fd < 0)
        why = sw_aprintf("cannot open its logs in %s: %s", l->dir,
                         strerror(errno));
    else if (ckpt && mkdir(ckpt, 0700) != 0 && errno != EEXIST)
        why = sw_aprintf("cannot make its checkpoint folder %s: %s", ckpt,
                         strerror(errno));
    else if ((rc = spawn(l, out, err, &j->pid)) != 0)
        why = sw_aprintf("cannot run '%s': %s", l->argv[0], strerror(rc));
    else if ((j->pidfd = (int)syscall(SYS_pidfd_open, j->pid, 0)) < 0 ||
             (ev.data.ptr = j,
              epoll_ctl(x->epfd, EPOLL_CTL_ADD, j->pidfd, &ev) != 0)) {
        why = sw_aprintf("cannot watch its process: %s", strerror(errno));
        kill(-j->pid, SIGKILL);
        waitpid(j->pid, NULL, 0);
        j->pid = 0;
    }
    if (err >= 0)
        close(err);
    return why;
}

/* The step the simulated checkpoint at `path` holds; -1 when none. */
static int64_t read_mark(const char *path)
{
    char *text = sw_buf_read_file(path, NULL), *end;
    long long v = text ? strtoll(text, &end, 10) : -1;

    if (text && (end == text || v < 0))
        v = -1;
    free(text);
    return v;
}

/* How the attempt's curve will be cut and timed. Told to train until an
 * iteration (a pausing rule's attempt), it is a trainer that
 * checkpoints: its checkpoint folder holds the step it trained to (a
 * file the simulator keeps there, so a copy of another run's checkpoint,
 * as PBT makes, goes on from that run's step), else its run's
 * stdout.log says. */
static void set_shape(const sim *x, job *j, const sw_launch *l)
{
    const char *until = launch_env(l, "SWEEP_TRAIN_UNTIL"),
               *ckpt = launch_env(l, "SWEEP_CHECKPOINT_DIR");
    char *log, *end;
    size_t len = 0;
    long long v;

    j->shape = (sw_sim_shape){now_mono(x), x->startup, x->read_delay, 0, 0};
    if (!until)
        return;
    v = strtoll(until, &end, 10);
    if (end == until || *end || v <= 0)
        return;
    j->shape.until = v;
    if (ckpt) {
        j->mark_path = sw_aprintf("%s/sweep-sim.step", ckpt);
        j->shape.from = read_mark(j->mark_path);
    }
    if (j->shape.from < 0 || !ckpt) {
        j->shape.from = 0;
        if ((log = sw_buf_read_file(l->stdout_path, &len)) != NULL)
            j->shape.from = sw_sim__last_step(log, len);
        free(log);
    }
    j->trained = j->shape.from;
}

static int sim_launch(sw_executor *ex, const sw_launch *l)
{
    sim *x = (sim *)ex;
    job *j;
    char *why, handle[32];

    if (!l->argv || !l->argv[0] || !l->argv[0][0] || !l->dir ||
        !l->stdout_path || !l->stderr_path)
        return sw_error_set(SW_EINVALID, "sim executor: incomplete launch");
    if (find_job(x, l->key))
        return sw_error_set(SW_EINVALID, "sim executor: %s already runs",
                            l->key);
    j = sw_calloc(1, sizeof(*j));
    j->key = sw_strdup(l->key);
    j->curve_fd = -1;
    j->stderr_path = sw_strdup(l->stderr_path);
    j->pidfd = -1;
    set_shape(x, j, l);
    j->draw = draw_key(l);
    j->out_fd =
        open(l->stdout_path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    if ((why = start_surrogate(x, j, l)) != NULL) {
        push_event(x, SW_JOB_START_FAILED, l->key, NULL, NULL, why);
        free(why);
        free_job(j);
        return SW_OK;
    }
    sw_grow(&x->jobs, &x->cap, x->n + 1, sizeof(*x->jobs));
    j->idx = x->n;
    j->hpos = NOT_DUE;
    x->jobs[x->n++] = j;
    x->surrogates++;
    snprintf(handle, sizeof(handle), "sim %d", (int)j->pid);
    push_event(x, SW_JOB_STARTED, l->key, handle, NULL, NULL);
    return SW_OK;
}

/* A simulated attempt does not outlive the simulation it ran in. */
static int sim_adopt(sw_executor *ex, const char *key, const char *dir,
                     const char *handle)
{
    (void)dir;
    (void)handle;
    push_event((sim *)ex, SW_JOB_NOT_STARTED, key, NULL, NULL, NULL);
    return SW_OK;
}

/* ---- surrogates' ends and the replay ---------------------------------- */

/* The surrogate of `j` has exited (status `status`): its curve is read
 * and timed, and the replay begins (or, canceled meanwhile, it ends). */
static void surrogate_done(sim *x, job *j, int status)
{
    sw_exit killed = {false, 0, j->cancel_signal, false};

    epoll_ctl(x->epfd, EPOLL_CTL_DEL, j->pidfd, NULL);
    close(j->pidfd);
    j->pidfd = -1;
    j->pid = 0;
    x->surrogates--;
    if (j->cancel_signal) {
        end_job(x, j, &killed);
        return;
    }
    j->exit = WIFEXITED(status) ? (sw_exit){true, WEXITSTATUS(status), 0, false}
                                : (sw_exit){false, 0, WTERMSIG(status), false};
    if (read_curve(j) != 0) { /* fails at once, and says why */
        j->exit = (sw_exit){true, 1, 0, false};
        sw_sim__shape(&j->c, "", 0, &j->shape);
        j->c.end_at = j->shape.start;
        note(j, "sweep sim: cannot read the curve (over %d MiB)\n",
             CURVE_MAX >> 20);
    } else {
        sw_sim__shape(&j->c, j->raw, j->raw_len, &j->shape);
        inject_failure(x, j);
    }
    free(j->raw);
    j->raw = NULL;
    sw_sim__read_times(&j->c);
    heap_push(x, j);
}

static void reap(sim *x)
{
    size_t i = 0, n;
    int status;
    job *j;

    while (i < x->n && x->surrogates > 0) {
        j = x->jobs[i];
        n = x->n;
        if (j->pid > 0 && waitpid(j->pid, &status, WNOHANG) == j->pid)
            surrogate_done(x, j, status);
        i += x->n == n; /* else the last job moved to i */
    }
}

/* Appends to the run's stdout.log the lines of `j` with a time (of
 * `t`: their reading, or their print) by `now`, and tells the engine. */
static void give_lines(sim *x, job *j, const double *t, double now)
{
    size_t from = j->written, to = from;
    ssize_t w;

    while (j->next < j->c.n && t[j->next] <= now) {
        if (j->c.step[j->next] > j->trained)
            j->trained = j->c.step[j->next];
        to = j->c.ends[j->next++];
    }
    while (from < to && (w = write(j->out_fd, j->c.text + from, to - from)) > 0)
        from += (size_t)w;
    if (to > j->written) /* on our clock the engine reads only when told */
        push_event(x, SW_JOB_OUTPUT, j->key, NULL, NULL, NULL);
    j->written = to;
}

/* Gives the engine the lines of `j` read by `now`; ends it when its end
 * is due, else puts it back in its place among the replays. */
static void replay(sim *x, job *j, double now)
{
    give_lines(x, j, j->c.seen, now);
    if (j->next == j->c.n && j->c.end_at <= now)
        end_job(x, j, &j->exit);
    else
        sift_down(x, j->hpos);
}

/* Only the replays that are due are touched: a cluster of thousands of
 * GPUs costs what its lines cost, not a scan of every job each step. */
static int sim_process(sw_executor *ex, double now)
{
    sim *x = (sim *)ex;
    double t = now_mono(x);

    (void)now; /* the clock is ours */
    if (x->surrogates > 0)
        reap(x);
    while (x->hn > 0 && due(x->heap[0]) <= t)
        replay(x, x->heap[0], t);
    return SW_OK;
}

static int sim_cancel(sw_executor *ex, const char *key, bool force)
{
    sim *x = (sim *)ex;
    job *j = find_job(x, key);
    sw_exit killed = {false, 0, force ? SIGKILL : SIGTERM, false};

    if (!j)
        return sw_error_set(SW_ENOTFOUND, "sim executor: no job %s", key);
    if (j->pid > 0) { /* its curve is not known yet: ends when reaped */
        if (!j->cancel_signal)
            kill(-j->pid, SIGKILL);
        j->cancel_signal = killed.signal;
        return SW_OK;
    }
    /* what it printed before the signal is in its log, read at its end */
    give_lines(x, j, j->c.at, now_mono(x));
    end_job(x, j, &killed);
    return SW_OK;
}

static int sim_fd(sw_executor *ex)
{
    sim *x = (sim *)ex;

    return x->surrogates > 0 ? x->epfd : -1;
}

/* Now when events wait; else the next line or end of any replay. */
static double sim_next_wake(sw_executor *ex)
{
    sim *x = (sim *)ex;

    if (x->qhead < x->qn)
        return now_mono(x);
    return x->hn > 0 ? due(x->heap[0]) : 0;
}

static int sim_next_event(sw_executor *ex, sw_job_event *out)
{
    sim *x = (sim *)ex;

    if (x->qhead == x->qn)
        return 0;
    *out = x->queue[x->qhead++];
    if (x->qhead == x->qn)
        x->qhead = x->qn = 0;
    return 1;
}

static const sw_clock *sim_clock(sw_executor *ex)
{
    return &((sim *)ex)->clock.base;
}

static void sim_advance(sw_executor *ex, double mono)
{
    sim *x = (sim *)ex;

    if (mono > x->clock.mono)
        x->clock.mono = mono;
}

/* Kills the surrogates still running and frees everything. */
static void sim_free(sw_executor *ex)
{
    sim *x = (sim *)ex;
    size_t i;

    for (i = 0; i < x->n; i++) {
        if (x->jobs[i]->pid > 0) {
            kill(-x->jobs[i]->pid, SIGKILL);
            waitpid(x->jobs[i]->pid, NULL, 0);
        }
        free_job(x->jobs[i]);
    }
    for (i = x->qhead; i < x->qn; i++)
        sw_job_event_dispose(&x->queue[i]);
    if (x->epfd >= 0)
        close(x->epfd);
    free(x->jobs);
    free(x->heap);
    free(x->queue);
    free(x);
}

static const sw_executor_methods sim_methods = {
    SW_EXECUTOR_VERSION,
    "sim",
    sim_launch,
    sim_adopt,
    sim_cancel,
    sim_fd,
    sim_next_wake,
    sim_process,
    sim_next_event,
    sim_free,
    sim_clock,
    sim_advance,
    false,
};

int sw_executor_sim_new(sw_executor **out)
{
    sim *x = sw_calloc(1, sizeof(*x));

    x->base.methods = &sim_methods;
    x->startup = STARTUP_S;
    x->read_delay = READ_DELAY_S;
    x->clock.base = (sw_clock){vclock_mono, vclock_wall};
    x->clock.mono0 = x->clock.mono = real_clock(CLOCK_MONOTONIC);
    x->clock.wall0 = real_clock(CLOCK_REALTIME);
    x->epfd = epoll_create1(EPOLL_CLOEXEC);
    if (x->epfd < 0) {
        int error =
            sw_error_set(SW_ERROR, "sim executor: epoll: %s", strerror(errno));

        sim_free(&x->base);
        return error;
    }
    *out = &x->base;
    return SW_OK;
}

int sw_executor_sim_set_failures(sw_executor *ex, double fail_rate,
                                 uint64_t seed)
{
    sim *x = (sim *)ex;

    if (ex->methods != &sim_methods)
        return sw_error_set(SW_EINVALID,
                            "failures are injected only with --backend sim");
    if (!(fail_rate >= 0 && fail_rate <= 1))
        return sw_error_set(SW_EINVALID,
                            "the simulated failure rate must be from 0 to "
                            "1, not %g",
                            fail_rate);
    x->fail_rate = fail_rate;
    x->seed = seed;
    return SW_OK;
}

int sw_executor_sim_set_timing(sw_executor *ex, double startup,
                               double read_delay)
{
    sim *x = (sim *)ex;

    if (ex->methods != &sim_methods)
        return sw_error_set(SW_EINVALID,
                            "start-up and reading delay are simulated only "
                            "with --backend sim");
    if (!(startup <= 86400) || !(read_delay <= 86400))
        return sw_error_set(SW_EINVALID,
                            "a simulated start-up or reading delay must be "
                            "at most a day");
    x->startup = startup >= 0 ? startup : STARTUP_S;
    x->read_delay = read_delay >= 0 ? read_delay : READ_DELAY_S;
    return SW_OK;
}
