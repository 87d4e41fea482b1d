/*
 * engine.c - running a sweep: `sweep run` and `sweep resume` up to the
 * loop (loop.c), which they share: the sweep home and its store, the
 * sweep's record and lock, the search, the executor, Ctrl-C.
 *
 * Invariants of the whole engine: a run exists in the store (pending)
 * before its process starts, and is marked running, with its attempt
 * number, before the executor is asked to launch it; an attempt's end is
 * read from the run's folder, so it is never lost when `sweep` itself was
 * down.
 * Metrics and the stdout offset they were read up to commit together, so
 * a metric is recorded exactly once whatever crashes. A run is keyed by
 * its index in the search sequence: resuming never duplicates one.
 */
#include "orchestrator/engine.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "backends/executor.h"
#include "orchestrator/engine_internal.h"
#include "orchestrator/provenance.h"
#include "search/search.h"
#include "sweeps/command.h"

static volatile sig_atomic_t interrupts;
static int sig_pipe[2] = {-1, -1};

static void on_signal(int sig)
{
    int saved = errno;
    char c = 1;

    (void)sig;
    interrupts++;
    if (sig_pipe[1] >= 0 && write(sig_pipe[1], &c, 1) < 0) {
        /* the loop also wakes on its tick */
    }
    errno = saved;
}

double sw_engine__now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

const char *sw_engine_home(void)
{
    const char *h = getenv("SWEEP_HOME");

    return h && h[0] ? h : ".sweep";
}

/* mkdir -p; fails with a message naming the folder. The common case (the
 * parent exists) costs one mkdir. */
int sw_engine__mkdirs(const char *path)
{
    char *parent, *slash;
    int error = SW_OK;

    if (mkdir(path, 0755) == 0 || errno == EEXIST)
        return SW_OK;
    if (errno != ENOENT)
        return sw_error_set(SW_EIO, "cannot create %s: %s", path,
                            strerror(errno));
    parent = sw_strdup(path);
    slash = strrchr(parent, '/');
    if (slash && slash != parent) {
        *slash = '\0';
        error = sw_engine__mkdirs(parent);
    }
    free(parent);
    if (!error && mkdir(path, 0755) != 0 && errno != EEXIST)
        error =
            sw_error_set(SW_EIO, "cannot create %s: %s", path, strerror(errno));
    return error;
}

/* Writes `text` to `path` through a temporary file and rename. */
int sw_engine__write_file(const char *path, const char *text)
{
    char *tmp = sw_aprintf("%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    int error = SW_OK;

    if (!f || fputs(text, f) < 0 || fclose(f) != 0 || rename(tmp, path) != 0)
        error =
            sw_error_set(SW_EIO, "cannot write %s: %s", path, strerror(errno));
    free(tmp);
    return error;
}

static void install_signals(void)
{
    struct sigaction sa;

    interrupts = 0;
    if (pipe(sig_pipe) == 0) {
        fcntl(sig_pipe[0], F_SETFL, O_NONBLOCK);
        fcntl(sig_pipe[1], F_SETFL, O_NONBLOCK);
        fcntl(sig_pipe[0], F_SETFD, FD_CLOEXEC);
        fcntl(sig_pipe[1], F_SETFD, FD_CLOEXEC);
    }
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

static void restore_signals(void)
{
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    if (sig_pipe[0] >= 0) {
        close(sig_pipe[0]);
        close(sig_pipe[1]);
    }
    sig_pipe[0] = sig_pipe[1] = -1;
}

int sw_engine__interrupts(void)
{
    return (int)interrupts;
}

int sw_engine__signal_fd(void)
{
    return sig_pipe[0];
}

/* Takes the sweep's lock so two orchestrators never run one sweep. */
static int lock_sweep(sw_engine *e)
{
    char *path = sw_aprintf("%s/%s.lock", e->home, e->sweep.id);
    int error = SW_OK;

    e->lock_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (e->lock_fd < 0)
        error =
            sw_error_set(SW_EIO, "cannot open %s: %s", path, strerror(errno));
    else if (flock(e->lock_fd, LOCK_EX | LOCK_NB) != 0)
        error = sw_error_set(SW_ERROR,
                             "sweep %s is being run by another "
                             "sweep process",
                             e->sweep.id);
    free(path);
    return error;
}

static int open_home(sw_engine *e, const char *home)
{
    char *db;
    int error;

    if ((error = sw_engine__mkdirs(home)) != SW_OK)
        return error;
    e->home = realpath(home, NULL);
    if (!e->home)
        return sw_error_set(SW_EIO, "cannot resolve %s: %s", home,
                            strerror(errno));
    e->runs_dir = sw_aprintf("%s/runs", e->home);
    if ((error = sw_engine__mkdirs(e->runs_dir)) != SW_OK)
        return error;
    db = sw_aprintf("%s/sweep.db", e->home);
    error = sw_store_open(&e->st, db, true);
    free(db);
    return error;
}

static void engine_dispose(sw_engine *e)
{
    size_t i;

    for (i = 0; i < e->n_slots; i++)
        sw_engine__slot_clear(&e->slots[i]);
    free(e->slots);
    for (i = 0; i < e->qlen; i++)
        sw_run_rec_dispose(&e->queue[i]);
    free(e->queue);
    sw_executor_free(e->ex);
    sw_provenance_free(e->prov);
    sw_search_free(e->search);
    sw_spec_free(e->spec);
    sw_sweep_rec_dispose(&e->sweep);
    sw_store_close(e->st);
    if (e->lock_fd > 0)
        close(e->lock_fd);
    free(e->home);
    free(e->runs_dir);
    free(e->best_run);
    free(e->buf);
}

int sw_engine_load(sw_spec **out, const char *path, const char *text)
{
    sw_diags diags;
    int error;

    sw_diags_init(&diags, path);
    error = text ? sw_spec_parse(out, path, text, strlen(text), &diags)
                 : sw_spec_load(out, path, &diags);
    if (!error)
        sw_command_check(*out, &diags);
    sw_diags_print(&diags, stderr);
    if (!error && diags.errors) {
        sw_spec_free(*out);
        *out = NULL;
        error = SW_EINVALID;
    }
    if (error && diags.len == 0)
        fprintf(stderr, "%s\n", sw_error_last());
    sw_diags_dispose(&diags);
    return error;
}

static uint64_t random_u64(void)
{
    uint64_t v = 0;
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);

    if (fd < 0 || read(fd, &v, sizeof(v)) != (ssize_t)sizeof(v))
        v = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
    if (fd >= 0)
        close(fd);
    return v;
}

static int start(sw_engine *e, const sw_engine_opts *o)
{
    int error;

    if ((error = sw_search_new(&e->search, e->spec, e->sweep.seed)) != SW_OK)
        return error;
    if ((error = sw_executor_local_new(&e->ex)) != SW_OK)
        return error;
    e->quiet = o->quiet;
    e->tty = !o->quiet && isatty(STDOUT_FILENO);
    e->grace = o->grace > 0 ? o->grace : 10;
    e->t0 = sw_engine__now();
    install_signals();
    error = sw_engine__loop(e);
    restore_signals();
    return error;
}

static void make_sweep(sw_engine *e, const char *path, const char *text,
                       const sw_engine_opts *o)
{
    sw_sweep_rec *s = &e->sweep;
    const sw_spec *sp = e->spec;
    char cwd[4096];

    s->id =
        sw_aprintf("%08llx", (unsigned long long)(random_u64() & 0xffffffffu));
    s->name = o->name    ? sw_strdup(o->name)
              : sp->name ? sw_strdup(sp->name)
                         : NULL;
    s->file = sw_strdup(path);
    s->config = sw_strdup(text);
    s->method = sw_strdup(sw_method_name(sp->method));
    s->metric = sp->metric.name ? sw_strdup(sp->metric.name) : NULL;
    s->goal = sp->metric.name
                  ? sw_strdup(sp->metric.goal == SW_GOAL_MAXIMIZE ? "maximize"
                                                                  : "minimize")
                  : NULL;
    s->state = sw_strdup("running");
    s->cwd = sw_strdup(getcwd(cwd, sizeof(cwd)) ? cwd : ".");
    s->seed = o->has_seed    ? o->seed
              : sp->has_seed ? sp->seed
                             : random_u64() >> 1;
    s->parallel = o->parallel > 0    ? o->parallel
                  : sp->parallel > 0 ? sp->parallel
                                     : 1;
    s->created_at = sw_engine__now();
}

int sw_engine_run(const char *path, const sw_engine_opts *o)
{
    sw_engine e;
    int error;

    memset(&e, 0, sizeof(e));
    if ((error = sw_engine_load(&e.spec, path, NULL)) != SW_OK)
        return error; /* already printed */
    if ((error = open_home(&e, o->home ? o->home : sw_engine_home())))
        goto done;
    make_sweep(&e, path, e.spec->source, o);
    e.parallel = e.sweep.parallel;
    sw_provenance_start(&e, true);
    if (e.spec->code_snapshot && (error = sw_provenance_freeze(&e)) != SW_OK)
        goto done;
    if ((error = sw_store_put_sweep(e.st, &e.sweep)) != SW_OK ||
        (error = lock_sweep(&e)) != SW_OK)
        goto done;
    printf("sweep %s: %s, %s, parallel %lld, seed %llu\n", e.sweep.id, path,
           e.sweep.method, (long long)e.parallel,
           (unsigned long long)e.sweep.seed);
    sw_provenance_report(&e);
    fflush(stdout);
    error = start(&e, o);
done:
    if (error && error != SW_EINVALID)
        fprintf(stderr, "sweep run: %s\n", sw_error_last());
    engine_dispose(&e);
    return error;
}

int sw_engine_resume(const char *key, const sw_engine_opts *o)
{
    sw_engine e;
    int error;

    memset(&e, 0, sizeof(e));
    if ((error = open_home(&e, o->home ? o->home : sw_engine_home())))
        goto done;
    error = key ? sw_store_get_sweep(e.st, key, &e.sweep)
                : sw_store_latest_sweep(e.st, &e.sweep);
    if (!error)
        error = lock_sweep(&e);
    if (error)
        goto done;
    if (strcmp(e.sweep.state, "finished") == 0) {
        printf("sweep %s has already finished\n", e.sweep.id);
        goto done;
    }
    if ((error = sw_engine_load(&e.spec, e.sweep.file, e.sweep.config)) !=
        SW_OK)
        goto done;
    if (chdir(e.sweep.cwd) != 0) {
        error = sw_error_set(SW_EIO, "cannot enter %s: %s", e.sweep.cwd,
                             strerror(errno));
        goto done;
    }
    e.parallel = o->parallel > 0 ? o->parallel : e.sweep.parallel;
    e.resuming = true;
    sw_provenance_start(&e, false);
    printf("sweep %s: resuming (%s, parallel %lld)\n", e.sweep.id,
           e.sweep.method, (long long)e.parallel);
    fflush(stdout);
    error = start(&e, o);
done:
    if (error && error != SW_EINVALID)
        fprintf(stderr, "sweep resume: %s\n", sw_error_last());
    engine_dispose(&e);
    return error;
}
