/*
 * engine.c - running a sweep: `sweep run` and `sweep resume` up to the
 * engine's loop (lifecycle.c decides, uvloop.c drives), which they share:
 * the sweep home and its store, the sweep's record and lock, the search,
 * the executor by name, the clock.
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
#include "orchestrator/engine/engine.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "backends/executor.h"
#include "orchestrator/engine/contract.h"
#include "orchestrator/engine/engine_internal.h"
#include "orchestrator/metrics_server.h"
#include "orchestrator/ui/site.h"
#include "search/promote.h"
#include "orchestrator/provenance.h"
#include "search/search.h"
#include "search/stopping.h"
#include "sweeps/command.h"

static int stopped_by; /* the signal that interrupted the last sweep */

const char *sw_engine_home(void)
{
    return sw_contract_home();
}

int sw_engine_stopped_by(void)
{
    return stopped_by;
}

int sw_engine_lock(const char *home, const char *sweep_id, int *out_fd)
{
    char *path = sw_aprintf("%s/%s.lock", home, sweep_id);
    int error = SW_OK;

    *out_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (*out_fd < 0) {
        error =
            sw_error_set(SW_EIO, "cannot open %s: %s", path, strerror(errno));
    } else if (flock(*out_fd, LOCK_EX | LOCK_NB) != 0) {
        error = sw_error_set(SW_ERROR,
                             "sweep %s is being run by another "
                             "sweep process",
                             sweep_id);
        close(*out_fd);
        *out_fd = -1;
    }
    free(path);
    return error;
}

/* Takes the sweep's lock so two orchestrators never run one sweep. */
static int lock_sweep(sw_engine *e)
{
    return sw_engine_lock(e->home, e->sweep.id, &e->lock_fd);
}

static int open_home(sw_engine *e, const char *home)
{
    char *db;
    int error;

    if ((error = sw_contract_mkdirs(home)) != SW_OK)
        return error;
    e->home = realpath(home, NULL);
    if (!e->home)
        return sw_error_set(SW_EIO, "cannot resolve %s: %s", home,
                            strerror(errno));
    e->runs_dir = sw_aprintf("%s/runs", e->home);
    if ((error = sw_contract_mkdirs(e->runs_dir)) != SW_OK)
        return error;
    db = sw_aprintf("%s/sweep.db", e->home);
    error = sw_store_open(&e->st, db, true);
    free(db);
    return error;
}

/* The engine's own consumers, once, before any other: the attempts table
 * and the budget record an attempt's end before anyone is told of it. */
static void own_consumers(sw_engine *e)
{
    if (e->own_consumers)
        return;
    e->own_consumers = true;
    /* each before the others: the last put first comes first */
    sw_engine__subscribe_first(e, sw_engine__progress_event, e);
    sw_engine__subscribe_first(e, sw_engine__budget_event, e);
    sw_engine__subscribe_first(e, sw_engine__attempts_event, e);
}

void sw_engine__init(sw_engine *e)
{
    memset(e, 0, sizeof(*e));
    own_consumers(e);
}

/* Frees everything the engine holds; no work may be in flight. */
void sw_engine__dispose(sw_engine *e)
{
    size_t i;
    sw_slot *s;

    while (e->n_slots > 0) {
        s = e->slots[e->n_slots - 1];
        sw_engine__answer_next(e, s, "{\"run\": null}");
        sw_engine__gpus_release(e, s);
        sw_engine__free_slot(e, s);
    }
    free(e->slots);
    sw_engine__slot_index_free(e);
    if (e->suggested)
        sw_trial_dispose(&e->suggest.trial);
    free(e->consumers);
    free(e->ingested);
    free(e->touched);
    free(e->captures);
    for (i = 0; i < e->qlen; i++)
        sw_run_rec_dispose(&e->queue[i]);
    free(e->queue);
    for (i = 0; i < e->n_tells; i++)
        sw_trial_dispose(&e->tells[i].trial);
    free(e->tells);
    sw_engine__fidelity_dispose(e);
    sw_metrics_server_free(e->server); /* answers what still waits: 503 */
    sw_site_free(e->site);
    free(e->view_token);
    sw_stopper_free(e->stopper);
    sw_promoter_free(e->promoter);
    free(e->paces);
    sw_engine__pbt_free(e);
    sw_engine__gpus_free(e);
    free(e->listen);
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
    free(e->requests_dir);
    free(e->buf);
}

/* The file's command replaced by `command`, the words given after `--`:
 * as given, then ${args} (the run's parameters, as W&B's default command
 * passes them) unless one of the words is a macro. */
static void use_command(sw_spec *sp, char *const *command)
{
    size_t n = 0, i;
    bool macro = false;

    for (; command[n]; n++)
        macro = macro || strstr(command[n], "${") != NULL;
    for (i = 0; i < sp->n_command; i++)
        free(sp->command[i]);
    free(sp->command);
    sp->command = sw_calloc(n + 2, sizeof(char *));
    for (i = 0; i < n; i++)
        sp->command[i] = sw_strdup(command[i]);
    if (!macro)
        sp->command[n++] = sw_strdup("${args}");
    sp->n_command = n;
}

int sw_engine_check(sw_spec **out, const char *path, const char *text,
                    char *const *command, sw_diags *diags)
{
    int error = text ? sw_spec_parse(out, path, text, strlen(text), diags)
                     : sw_spec_load(out, path, diags);

    if (!error && command && command[0])
        use_command(*out, command);
    if (!error)
        sw_command_check(*out, diags);
    if (!error && diags->errors) {
        sw_spec_free(*out);
        *out = NULL;
        error = SW_EINVALID;
    }
    return error;
}

int sw_engine_load(sw_spec **out, const char *path, const char *text,
                   char *const *command)
{
    sw_diags diags;
    int error;

    sw_diags_init(&diags, path);
    error = sw_engine_check(out, path, text, command, &diags);
    sw_diags_print(&diags, stderr);
    if (error && diags.len == 0)
        fprintf(stderr, "%s\n", sw_error_last());
    sw_diags_dispose(&diags);
    return error;
}

/* A NULL-terminated argv as a JSON array of strings. */
static char *argv_json(char *const *argv)
{
    sw_value *list = sw_value_list();
    sw_buf b = SW_BUF_INIT;

    for (size_t i = 0; argv[i]; i++)
        sw_value_list_push(list, sw_value_str(argv[i]));
    sw_value_write_json(&b, list, false);
    sw_value_free(list);
    return sw_buf_detach(&b);
}

/* A file with neither `program` nor `command` (one written for
 * wandb.agent(function=...)) runs only with the command given after
 * `--`: says so, SW_EINVALID. */
int sw_engine_needs_command(const sw_spec *sp, const char *path)
{
    if (sp->command || sp->program)
        return SW_OK;
    fprintf(stderr,
            "%s: the file has neither `program` nor `command` (W&B runs "
            "such files with wandb.agent(function=...)): give the trial's "
            "command after --, as in: sweep run %s -- python train.py\n",
            path, path);
    return SW_EINVALID;
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

/* How many runs may fail before the first success, before the sweep
 * stops launching: $SWEEP_MAX_INITIAL_FAILURES, default 5, 0 for no
 * limit (as W&B's agent does with WANDB_AGENT_MAX_INITIAL_FAILURES). A
 * command that cannot work then costs five runs, not a night of them. */
static size_t max_initial_failures(void)
{
    const char *s = getenv("SWEEP_MAX_INITIAL_FAILURES");
    char *end;
    unsigned long v;

    if (!s || !*s)
        return 5;
    v = strtoul(s, &end, 10);
    return *end ? 5 : (size_t)v;
}

/* A resumed simulation goes on from the latest time its runs recorded,
 * so its timeline has no overlap and no gap: the virtual clock starts
 * at the real time of each `sweep run` or `sweep resume`. */
static void continue_timeline(sw_engine *e, const sw_clock *vc)
{
    sw_run_rec *runs = NULL;
    double latest = 0;
    size_t n = 0, i;

    if (!e->resuming ||
        sw_store_list_runs(e->st, e->sweep.id, &runs, &n) != SW_OK)
        return;
    for (i = 0; i < n; i++) {
        latest = runs[i].started_at > latest ? runs[i].started_at : latest;
        latest = runs[i].ended_at > latest ? runs[i].ended_at : latest;
        sw_run_rec_dispose(&runs[i]);
    }
    free(runs);
    if (latest > sw_clock_wall(vc))
        sw_executor_advance(e->ex,
                            sw_clock_mono(vc) + latest - sw_clock_wall(vc));
}

/* The clock: a test's when given, else the executor's virtual one (a
 * simulation, with its failure rate, --sim-fail-rate's or the file's, and
 * the sweep's seed), else the system's. */
static int use_clock(sw_engine *e, const sw_engine_opts *o)
{
    const sw_clock *vc = e->ex ? sw_executor_clock(e->ex) : NULL;
    int error = SW_OK;

    e->virtual_time = vc != NULL;
    if (vc)
        continue_timeline(e, vc);
    if (vc || o->sim_fail_rate > 0) /* the file's rate only under sim */
        error = sw_executor_sim_set_failures(
            e->ex,
            o->sim_fail_rate >= 0 ? o->sim_fail_rate : e->spec->sim_fail_rate,
            e->sweep.seed);
    if (vc && !error)
        error = sw_executor_sim_set_timing(e->ex, e->spec->sim_startup,
                                           e->spec->sim_read_delay);
    if (error)
        sw_engine__notice(e, SW_NOTICE_ERROR, "sweep: %s", sw_error_last());
    e->clock = e->clock ? e->clock : vc ? vc : &sw_clock_system;
    return error;
}

/* The search and the settings that come from the command line; the
 * system clock unless one was given (a test's). */
int sw_engine__setup(sw_engine *e, const sw_engine_opts *o)
{
    int error;

    if (!e->search &&
        (error = sw_search_new(&e->search, e->spec, e->sweep.seed)) != SW_OK)
        return error;
    own_consumers(e);
    if ((error = use_clock(e, o)) != SW_OK)
        return error;
    e->quiet = o->quiet;
    e->tty = !o->quiet && !e->virtual_time && isatty(STDOUT_FILENO);
    e->grace = o->grace > 0 ? o->grace : 10;
    e->max_initial_failures = max_initial_failures();
    return SW_OK;
}

/* Sets the engine up and runs its loop to the sweep's end: on libuv, or
 * on the executor's virtual clock (simloop.c). */
static int start(sw_engine *e, const sw_engine_opts *o)
{
    int error = sw_engine__setup(e, o);

    if (error)
        return error;
    if (e->virtual_time) { /* simulated trials print; none reports live */
        sw_metrics_server_free(e->server);
        e->server = NULL;
        return sw_engine__run_sim(e);
    }
    sw_engine__say_dashboard(e);
    e->serve = true;
    e->listen = o->listen ? sw_strdup(o->listen) : NULL;
    return sw_engine__run_uv(e);
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
    s->state = sw_strdup(sw_sweep_state_name(SW_SWEEP_RUNNING));
    s->cwd = sw_strdup(getcwd(cwd, sizeof(cwd)) ? cwd : ".");
    s->seed = o->has_seed    ? o->seed
              : sp->has_seed ? sp->seed
                             : random_u64() >> 1;
    s->parallel = o->parallel > 0    ? o->parallel
                  : sp->parallel > 0 ? sp->parallel
                                     : 1;
    s->created_at = sw_clock_wall(&sw_clock_system);
    s->backend = sw_strdup(o->backend ? o->backend : "local");
    s->command = o->command && o->command[0] ? argv_json(o->command) : NULL;
    s->gpus = o->gpus ? sw_strdup(o->gpus) : NULL;
    s->backend_args = o->backend_args && o->backend_args[0]
                          ? argv_json(o->backend_args)
                          : NULL;
}

/* Appends the NULL-terminated `add` to args[*n] (not copied). */
static void append_args(char ***args, size_t *n, char *const *add)
{
    for (; add && *add; add++) {
        *args = sw_realloc(*args, (*n + 2) * sizeof(**args));
        (*args)[(*n)++] = *add;
        (*args)[*n] = NULL;
    }
}

/* The executor named `name`, unless one was given (a test's), with its
 * arguments: for Slurm the sweep file's `slurm:` section, then `recorded`
 * (the sweep's own, from the store) and those of this command line. An
 * unknown name or an unusable argument is a usage error, said here. */
static int make_executor(sw_engine *e, const char *name, char *const *recorded,
                         const sw_engine_opts *o)
{
    char **args = NULL;
    size_t n = 0;
    int error;

    if (e->ex)
        return SW_OK;
    if (name && strcmp(name, "slurm") == 0)
        append_args(&args, &n, e->spec->slurm_args);
    append_args(&args, &n, recorded);
    append_args(&args, &n, o->backend_args);
    error = sw_executor_new_with(&e->ex, name, args);
    free(args);
    if (error == SW_EINVALID)
        sw_engine__notice(e, SW_NOTICE_ERROR, "sweep: %s", sw_error_last());
    return error;
}

/* The GPUs to pack on: `declared`, else NVML's; a simulated cluster is
 * not this machine, so a simulation has only the GPUs it declares. */
static const char *inventory(sw_engine *e, const char *declared)
{
    return declared || !sw_executor_clock(e->ex) ? declared : "none";
}

/* Makes the sweep of the file at `path`, records it and takes its lock. */
int sw_engine__prepare_run(sw_engine *e, const char *path,
                           const sw_engine_opts *o)
{
    int error;

    if ((error = sw_engine_load(&e->spec, path, NULL, o->command)) ||
        (error = sw_engine_needs_command(e->spec, path)) ||
        (error =
             make_executor(e, o->backend ? o->backend : "local", NULL, o)) ||
        (error = sw_engine__gpus_setup(
             e, inventory(e, o->gpus ? o->gpus : e->spec->gpus), path)))
        return error; /* already printed */
    make_sweep(e, path, e->spec->source, o);
    e->parallel_set = o->parallel > 0 || e->spec->parallel > 0;
    if (!e->parallel_set && sw_engine__gpus_parallel(e) > 0)
        e->sweep.parallel = (int64_t)sw_engine__gpus_parallel(e);
    if ((error = sw_search_new(&e->search, e->spec, e->sweep.seed))) {
        /* a space the search cannot hold (a grid too large): said before
         * anything is made */
        sw_engine__notice(e, SW_NOTICE_ERROR, "%s", sw_error_last());
        return error == SW_EINVALID ? error : SW_EINVALID;
    }
    if ((error = open_home(e, o->home ? o->home : sw_engine_home())))
        return error;
    e->parallel = e->sweep.parallel;
    sw_provenance_start(e, true);
    if (e->spec->code_snapshot && (error = sw_provenance_freeze(e)) != SW_OK)
        return error;
    /* locked before it is visible, so a `sweep resume` of the latest
     * sweep started meanwhile never takes it */
    if ((error = lock_sweep(e)) != SW_OK ||
        (error = sw_store_put_sweep(e->st, &e->sweep)) != SW_OK)
        return error;
    sw_engine__notice(e, SW_NOTICE_RESULT,
                      "sweep %s: %s, %s, parallel %lld, seed %llu", e->sweep.id,
                      path, e->sweep.method, (long long)e->parallel,
                      (unsigned long long)e->sweep.seed);
    sw_engine__gpus_report(e);
    sw_provenance_report(e);
    fflush(stdout);
    return SW_OK;
}

int sw_engine_run(const char *path, const sw_engine_opts *o)
{
    sw_engine e;
    int error;

    sw_engine__init(&e);
    /* first, so a sweep whose server cannot listen is never made */
    if ((error = sw_engine__start_server(&e, o->listen)) != SW_OK) {
        sw_engine__notice(&e, SW_NOTICE_ERROR, "sweep run: %s",
                          sw_error_last());
        sw_engine__dispose(&e);
        return error;
    }
    error = sw_engine__prepare_run(&e, path, o);
    if (!error)
        error = start(&e, o);
    if (error && error != SW_EINVALID && error != e.result) /* else said */
        sw_engine__notice(&e, SW_NOTICE_ERROR, "sweep run: %s",
                          sw_error_last());
    stopped_by = error == SW_EINTR ? e.signal : 0;
    sw_engine__dispose(&e);
    return error;
}

/* The sweep file as the store kept it, with the command given on the
 * command line when it was made. */
static int load_recorded(sw_engine *e)
{
    char **command =
        e->sweep.command ? sw_contract_argv(e->sweep.command) : NULL;
    int error =
        sw_engine_load(&e->spec, e->sweep.file, e->sweep.config, command);

    sw_command_free(command);
    return error;
}

/* The inventory a resumed sweep packs on: --gpus, else the one `sweep
 * run` was given, else the file's; NULL: NVML's. */
static const char *resume_gpus(const sw_engine *e, const sw_engine_opts *o)
{
    return o->gpus ? o->gpus : e->sweep.gpus ? e->sweep.gpus : e->spec->gpus;
}

/* How many runs the sweep has made: its highest index + 1. */
static int runs_made(sw_engine *e, uint64_t *out)
{
    sw_run_rec *runs = NULL;
    size_t n = 0, i;
    int error = sw_store_list_runs(e->st, e->sweep.id, &runs, &n);

    *out = 0;
    for (i = 0; i < n; i++) {
        if ((uint64_t)runs[i].idx + 1 > *out)
            *out = (uint64_t)runs[i].idx + 1;
        sw_run_rec_dispose(&runs[i]);
    }
    free(runs);
    return error;
}

/* Says a refusal of `sweep resume` (SW_EINVALID is not said after). */
static int refused(sw_engine *e, int error)
{
    sw_engine__notice(e, SW_NOTICE_ERROR, "sweep resume: %s", sw_error_last());
    return error;
}

/* `sweep resume --run-cap N`: the sweep goes on to N trials of the same
 * search (replayed from its runs, resume.c), recorded so that a later
 * resume keeps it; a finished one is running again. A cap it has reached
 * already, or a grid it has run whole, is refused (SW_EINVALID, said). */
static int raise_run_cap(sw_engine *e, int64_t cap)
{
    uint64_t made = 0, count = 0;
    bool bounded = false, saturated = false;
    int error = runs_made(e, &made);

    if (error)
        return error;
    if ((uint64_t)cap <= made)
        return refused(e, sw_error_set(SW_EINVALID,
                                       "sweep %s has %llu runs already: "
                                       "--run-cap wants more than that",
                                       e->sweep.id, (unsigned long long)made));
    e->spec->run_cap = 0;
    if (!e->search &&
        (error = sw_search_new(&e->search, e->spec, e->sweep.seed)) != SW_OK)
        return error;
    sw_search_size(e->search, &count, &bounded, &saturated);
    if (bounded && !saturated && count <= made)
        return refused(e, sw_error_set(SW_EINVALID,
                                       "sweep %s has run all %llu trials of "
                                       "its grid: there is no more to run",
                                       e->sweep.id, (unsigned long long)count));
    e->sweep.run_cap = cap;
    if ((error = sw_store_set_run_cap(e->st, e->sweep.id, cap)) == SW_OK &&
        sw_sweep_state_is(e->sweep.state, SW_SWEEP_FINISHED))
        error = sw_store_set_sweep_state(
            e->st, e->sweep.id, sw_sweep_state_name(SW_SWEEP_RUNNING), 0);
    return error;
}

/* Finds the sweep `key` (NULL: the latest), takes its lock and gets it
 * ready to go on; *done when it has already finished. */
int sw_engine__prepare_resume(sw_engine *e, const char *key,
                              const sw_engine_opts *o, bool *done)
{
    char **recorded;
    int error;

    *done = false;
    if ((error = open_home(e, o->home ? o->home : sw_engine_home())))
        return error;
    error = key ? sw_store_get_sweep(e->st, key, &e->sweep)
                : sw_store_latest_sweep(e->st, &e->sweep);
    if (!error)
        error = lock_sweep(e);
    if (error)
        return error;
    if (sw_sweep_state_is(e->sweep.state, SW_SWEEP_FINISHED) &&
        o->run_cap == 0 && !sw_engine__has_lost_runs(e)) {
        sw_engine__notice(e, SW_NOTICE_RESULT,
                          "sweep %s has already finished (`sweep resume %s "
                          "--run-cap N` runs more of its trials)",
                          e->sweep.id, e->sweep.id);
        *done = true;
        return SW_OK;
    }
    if ((error = load_recorded(e)) != SW_OK ||
        (o->run_cap > 0 && (error = raise_run_cap(e, o->run_cap)) != SW_OK))
        return error;
    if (e->sweep.run_cap > 0)
        e->spec->run_cap = e->sweep.run_cap;
    recorded =
        e->sweep.backend_args ? sw_contract_argv(e->sweep.backend_args) : NULL;
    error = make_executor(e, o->backend ? o->backend : e->sweep.backend,
                          recorded, o);
    sw_command_free(recorded);
    if (error)
        return error;
    if (chdir(e->sweep.cwd) != 0)
        return sw_error_set(SW_EIO, "cannot enter %s: %s", e->sweep.cwd,
                            strerror(errno));
    if ((error = sw_engine__gpus_setup(e, inventory(e, resume_gpus(e, o)),
                                       e->sweep.file)))
        return error;
    e->parallel = o->parallel > 0 ? o->parallel : e->sweep.parallel;
    e->parallel_set = o->parallel > 0 || e->spec->parallel > 0;
    if (!e->parallel_set && sw_engine__gpus_parallel(e) > 0)
        e->parallel = (int64_t)sw_engine__gpus_parallel(e);
    e->resuming = true;
    sw_provenance_start(e, false);
    sw_engine__notice(e, SW_NOTICE_RESULT,
                      "sweep %s: resuming (%s on %s, parallel %lld)",
                      e->sweep.id, e->sweep.method, sw_executor_name(e->ex),
                      (long long)e->parallel);
    sw_engine__gpus_report(e);
    fflush(stdout);
    return SW_OK;
}

int sw_engine_resume(const char *key, const sw_engine_opts *o)
{
    sw_engine e;
    bool done;
    int error;

    sw_engine__init(&e);
    error = sw_engine__prepare_resume(&e, key, o, &done);
    if (!error && !done)
        error = start(&e, o);
    if (error && error != SW_EINVALID && error != e.result) /* else said */
        sw_engine__notice(&e, SW_NOTICE_ERROR, "sweep resume: %s",
                          sw_error_last());
    stopped_by = error == SW_EINTR ? e.signal : 0;
    sw_engine__dispose(&e);
    return error;
}
