/*
 * engine_internal.h - what the engine's files share (sw_engine__ names).
 *
 * The engine is a state machine over plain data, driven from outside:
 *   - lifecycle.c decides: which trial runs next, when an attempt has run
 *     too long, what its end means for its run, when the sweep is over;
 *   - the host runs slow work (git captures, search suggestions) off the
 *     loop's thread and hands it back: uvloop.c runs it on libuv's worker
 *     pool, a unit test runs it at once;
 *   - the driver calls sw_engine__pump() whenever something may have
 *     happened (the executor's descriptor, a timer at
 *     sw_engine__next_wake(), a signal, finished work) until
 *     e->finished. uvloop.c is the real driver; the engine's unit tests
 *     drive it by hand on a fake clock.
 * Only the loop's thread touches the store.
 */
#ifndef SW_ENGINE_INTERNAL_H
#define SW_ENGINE_INTERNAL_H

#include <stdbool.h>

#include "backends/executor.h"
#include "orchestrator/engine/clock.h"
#include "orchestrator/metrics.h"
#include "orchestrator/engine/engine.h"
#include "orchestrator/store/store.h"
#include "search/search.h"

typedef struct sw_provenance sw_provenance;
typedef struct sw_metrics_server sw_metrics_server;
typedef struct sw_stopper sw_stopper;
typedef struct sw_engine sw_engine;
typedef struct sw_engine_gpus sw_engine_gpus;
typedef struct sw_slot_gpus sw_slot_gpus;

/* A piece of slow work: run() on a worker thread (it must touch only
 * what the loop's thread leaves alone meanwhile), then done() back on
 * the loop's thread. The engine owns the memory. */
typedef struct sw_engine_work sw_engine_work;
struct sw_engine_work {
    void (*run)(sw_engine_work *w);
    void (*done)(sw_engine *e, sw_engine_work *w);
    sw_engine_work *next; /* the engine's list of finished work */
};

/* Where slow work runs. submit() must eventually hand `w` back through
 * sw_engine__work_done() on the loop's thread. */
typedef struct {
    void (*submit)(void *ctx, sw_engine_work *w);
    void *ctx;
} sw_engine_host;

typedef enum {
    SW_SLOT_CAPTURE,   /* its folder and code being made ready */
    SW_SLOT_LAUNCHING, /* asked the executor; no answer yet */
    SW_SLOT_RUNNING,
} sw_slot_phase;

/* An attempt the engine is busy with, from its git capture to its end. */
typedef struct {
    sw_slot_phase phase;
    sw_run_rec rec;
    char *run_dir;
    double deadline; /* monotonic; 0: no timeout */
    double force_at; /* monotonic SIGKILL time; 0: not canceling */
    const char *why; /* why we cancel it ("timeout", ...); NULL: we don't */
    bool adopted;    /* from an earlier orchestrator */
    bool fresh;      /* a new trial, not in the store until it launches */
    bool killed;     /* SIGKILL sent: only its end is awaited */
    bool proven;     /* reported a metric, or ran PROBATION_S (lifecycle.c) */
    double launched_at; /* monotonic; when its launch was asked for */
    int out_fd;         /* its stdout.log, open for reading; -1: not yet */
    /* output.c: a line longer than its buffer starts at rec.stdout_offset
     * and has been scanned, unparsed, up to long_scan (0: not in one) */
    int64_t long_scan;
    bool long_metrics; /* that line is a @metrics line */
    bool warned_long;  /* warned about a long plain line */
    bool warned_names; /* warned about refused metric names */
    /* reports.c: the attempt's metrics token (NULL: none), whether it
     * reported over HTTP, and the stopping rule's verdict */
    char *token;
    bool http;
    bool value_changed; /* by the reports being committed */
    bool stop;          /* the rule stopped it: every answer says so */
    double stop_at;     /* monotonic time of its SIGTERM; 0: none due */
    sw_slot_gpus *gpus; /* devices.c: the devices it holds; NULL: none */
    /* the first step the attempt reported (attempts.first_step); -1: none
     * yet; -2: not known, the attempt was adopted after reporting */
    int64_t first_step;
} sw_slot;

/* An observation for the search, held while a suggestion is in flight. */
typedef struct {
    sw_trial trial;
    double value;
    bool ended;
} sw_tell;

typedef struct {
    sw_engine_work work;
    sw_engine *e;
    sw_trial trial;
    int error;
    char *message;
} sw_suggest_work;

typedef struct {
    sw_engine_work work;
    sw_engine *e;
    sw_slot *slot;
    int error; /* the run's folder could not be made ready */
    char *message;
} sw_capture_work;

typedef struct {
    sw_engine_work work;
    char *path; /* the store's */
    int error;
    char *message;
} sw_checkpoint_work;

/* A benchmark's view of the loop (tests/bench/bench_loop.c): with it set,
 * uvloop.c runs a 1 ms timer beside the engine and records how late it
 * fires, and how long each piece of slow work took off the loop. */
typedef struct {
    uint64_t ticks;
    double worst_ms, sum_ms;
    uint64_t late_hist[256]; /* ticks by lateness, 0.1 ms buckets; the
                                last holds everything later */
    uint64_t works;
    double work_worst_ms, work_sum_ms;
    uint64_t steps;       /* pumps, and the longest one: the loop's own work */
    double step_worst_ms; /* wall time, preemption included */
    double step_cpu_worst_ms; /* the loop thread's CPU time */
} sw_loop_probe;

struct sw_engine {
    sw_spec *spec;
    sw_search *search;
    sw_store *st;
    sw_executor *ex;
    const sw_clock *clock;
    sw_engine_host host;
    sw_sweep_rec sweep;
    sw_provenance *prov;       /* git provenance; NULL outside a repository */
    sw_metrics_server *server; /* NULL: trials report on stdout only */
    sw_stopper *stopper;       /* early_terminate's rule; NULL: none */
    uint64_t stop_generation;  /* the stopper's, at the last full check */
    bool serve;                /* start the metrics server at begin() */
    char *listen;              /* its address; NULL: 127.0.0.1, any port */
    char *home, *runs_dir;
    int lock_fd;
    int64_t parallel;
    bool parallel_set;    /* given (file, command line): the GPUs' capacity
                             does not change it */
    sw_engine_gpus *gpus; /* devices.c: what trials are packed on; NULL:
                             trials inherit the environment, as without
                             GPUs */
    double grace;         /* seconds between SIGTERM and SIGKILL */
    size_t max_initial_failures; /* the first-failures rule; 0: none */

    sw_slot **slots; /* each its own allocation: workers hold pointers */
    size_t n_slots, cap_slots;
    sw_run_rec *queue; /* runs to (re)launch, before new trials */
    size_t qlen, qcap;
    sw_slot **captures; /* slots waiting for a git capture, oldest first */
    size_t n_captures, cap_captures;
    sw_tell *tells; /* for the search once its suggestion is back */
    size_t n_tells, cap_tells;
    sw_engine_work *finished_work;
    sw_suggest_work suggest;
    sw_capture_work capture;
    sw_checkpoint_work checkpoint;
    bool suggesting, capturing, checkpointing;
    int wal_checkpointed; /* the WAL's size at the last checkpoint */
    uint64_t size_count;  /* the search's size, read while it was idle */
    bool size_bounded, size_saturated;

    uint64_t next_idx;
    bool search_done, resuming, target_hit, cancel_sent, finished;
    bool gave_up;           /* the first runs all failed: launch no more */
    size_t failed_here;     /* runs that failed in this process */
    size_t launch_failures; /* in a row; for the back-off */
    double backoff_until;   /* monotonic; launch nothing before */
    int interrupts, seen_interrupts;
    int signal; /* the last signal that interrupted it */
    size_t done, failed, stopped, canceled;
    bool has_best;
    double best;
    char *best_run;
    char *buf; /* for reading trials' output */
    double t0, last_progress, last_tail;
    bool tty, quiet;
    /* the clock is the executor's virtual one (simloop.c drives): trials'
     * output is read at every pump, since lines appear only when the
     * executor puts them there, and nothing waits on real time */
    bool virtual_time;
    struct {                   /* budget.c: what ended attempts spent */
        double gpu_s, trial_s; /* GPU-seconds, attempt-seconds */
        double first;          /* the first attempt's start (wall); 0 */
    } spent;
    int result;           /* SW_OK, or the error that ended the sweep */
    sw_loop_probe *probe; /* NULL but in a benchmark */
};

/* engine.c: a sweep made or found and locked, ready to run. */
int sw_engine__prepare_run(sw_engine *e, const char *path,
                           const sw_engine_opts *o);
int sw_engine__prepare_resume(sw_engine *e, const char *key,
                              const sw_engine_opts *o, bool *done);
/* The search, the clock (the system's unless e->clock is set) and the
 * options' settings: what the loop needs beyond the sweep. */
int sw_engine__setup(sw_engine *e, const sw_engine_opts *o);
void sw_engine__dispose(sw_engine *e);

/* lifecycle.c: the engine's decisions. begin() replays the store when
 * resuming; pump() does all that is due now; next_wake() is when pump()
 * must run again even if nothing happens (0: never); end() records how
 * the sweep ended and returns its result. */
int sw_engine__begin(sw_engine *e);
int sw_engine__pump(sw_engine *e);
double sw_engine__next_wake(sw_engine *e);
int sw_engine__end(sw_engine *e);
/* Signal `sig` (SIGINT or SIGTERM) reached `sweep`. */
void sw_engine__interrupt(sw_engine *e, int sig);
/* Slow work is back (loop thread): its done() runs at the next pump. */
void sw_engine__work_done(sw_engine *e, sw_engine_work *w);

/* lifecycle.c, for the engine's other files: whether it launches no
 * more; a store error that ends the sweep (returns it); the slots in a
 * phase; trial `t` as a new run, queued for its capture. */
bool sw_engine__stopping(const sw_engine *e);
int sw_engine__fatal(sw_engine *e, int error);
size_t sw_engine__count(const sw_engine *e, sw_slot_phase phase);
int sw_engine__new_run(sw_engine *e, const sw_trial *t);

/* suggest.c: asks the search for its next trial on the worker pool;
 * re-reads the search's size (only while no suggestion runs). */
void sw_engine__suggest(sw_engine *e);
void sw_engine__read_size(sw_engine *e);

/* progress.c: the status line (redrawn at most every 0.25 s unless
 * `final`), and one plain line for a run that ended. */
void sw_engine__progress(sw_engine *e, bool final);
void sw_engine__report_end(sw_engine *e, const sw_slot *s);

/* lifecycle.c, for resume.c */
sw_slot *sw_engine__new_slot(sw_engine *e);
void sw_engine__free_slot(sw_engine *e, sw_slot *s);
void sw_engine__enqueue(sw_engine *e, sw_run_rec *r); /* consumes *r */
void sw_engine__note_value(sw_engine *e, const sw_run_rec *r);
void sw_engine__tell_search(sw_engine *e, const sw_run_rec *r, bool ended);
double sw_engine__deadline(const sw_engine *e, const sw_run_rec *r);

/* output.c: reads what the trial in `s` wrote since the last call and
 * records its metrics, up to its last complete line; with `at_end` (the
 * attempt has ended), its last line too, newline or not. */
int sw_engine__tail(sw_engine *e, sw_slot *s, bool at_end);

/* resume.c: replays the store's runs of the sweep into the engine;
 * whether a run failed because its last attempt was lost, and whether
 * the sweep has such runs (a finished sweep with some is resumed). */
int sw_engine__restore(sw_engine *e);
bool sw_engine__was_lost(const sw_run_rec *r);
bool sw_engine__has_lost_runs(sw_engine *e);

/* reports.c: the metrics server and the stopping rule.
 *   - start_server() starts the server for `listen` (NULL: 127.0.0.1 on a
 *     free port, or the port the adopted attempts last reported to);
 *   - make_stopper() builds the rule, from the store's history on resume;
 *   - serve() commits every waiting report in one transaction and
 *     answers each;
 *   - observe() shows the rule a new value of the sweep's metric from the
 *     slot's run (as it is stored: a failed commit ends the sweep), and
 *     decide() asks it about that run, and about the others when a line
 *     moved; grant() and revoke() a slot's token. */
int sw_engine__start_server(sw_engine *e, const char *listen);
int sw_engine__make_stopper(sw_engine *e);
int sw_engine__serve(sw_engine *e);
void sw_engine__observe(sw_engine *e, sw_slot *s, double value);
void sw_engine__decide(sw_engine *e, sw_slot *s);
void sw_engine__grant(sw_engine *e, sw_slot *s);
void sw_engine__revoke(sw_engine *e, sw_slot *s);
/* The URL the trial in `s` reports to (the caller frees); NULL without a
 * server. */
char *sw_engine__metrics_url(const sw_engine *e, const sw_slot *s);
/* lifecycle.c, for reports.c */
sw_slot *sw_engine__find_slot(const sw_engine *e, const char *run_id);

/* devices.c: the GPUs trials are packed on (docs/gpus.md).
 *   - gpus_setup() reads the inventory (`declared`, else NVML) for
 *     e->spec; SW_EINVALID, said on stderr naming `path`, when no trial
 *     could ever fit; e->gpus stays NULL without GPUs and requests;
 *   - gpus_parallel() is how many trials the devices hold (0: no GPUs);
 *   - gpus_room() places the next trial, holding its devices until
 *     gpus_take() gives them to the slot made next (or unreserve());
 *     false while none fits now;
 *   - gpus_visible() is the slot's CUDA_VISIBLE_DEVICES (NULL: unset);
 *   - gpus_release() gives a freed slot's devices back; gpus_adopt()
 *     takes again what an adopted run's record says it holds;
 *     gpus_recall() learns again what `gpu_memory: auto` had given a
 *     run of the store (resume.c, for every run);
 *   - gpus_pump() starts due NVML readings, at gpus_wake(); gpus_busy()
 *     while one is in flight;
 *   - gpus_held() is how many GPUs the slot holds: devices x share, a
 *     MIG slice counted as its slices' fraction of its GPU (0: none);
 *     under an executor that places GPUs itself, resources.gpus. */
int sw_engine__gpus_setup(sw_engine *e, const char *declared, const char *path);
size_t sw_engine__gpus_parallel(const sw_engine *e);
void sw_engine__gpus_report(const sw_engine *e); /* one line on stdout */
bool sw_engine__gpus_room(sw_engine *e);
void sw_engine__gpus_take(sw_engine *e, sw_slot *s);
void sw_engine__gpus_unreserve(sw_engine *e);
const char *sw_engine__gpus_visible(const sw_engine *e, const sw_slot *s);
void sw_engine__gpus_release(sw_engine *e, sw_slot *s);
void sw_engine__gpus_adopt(sw_engine *e, sw_slot *s);
void sw_engine__gpus_recall(sw_engine *e, const sw_run_rec *r);
void sw_engine__gpus_pump(sw_engine *e);
double sw_engine__gpus_wake(const sw_engine *e);
bool sw_engine__gpus_busy(const sw_engine *e);
void sw_engine__gpus_free(sw_engine *e);
double sw_engine__gpus_held(const sw_engine *e, const sw_slot *s);

/* attempts.c: records the attempt of `s` as it ended (after finish()
 * decided what it means for its run); `started` is false for an attempt
 * that could not be started, `lost` true for one the executor lost. */
int sw_engine__put_attempt(sw_engine *e, const sw_slot *s, bool started,
                           bool lost);
/* Notes `step`, of a value the attempt in `s` reported (stored or not),
 * as its first step if it is (-1: a value without a step). */
void sw_engine__first_step(sw_slot *s, int64_t step);

/* budget.c: the sweep file's `budget`. budget_load() counts what the
 * store's ended attempts spent (on resume); budget_count() one attempt
 * as it ends; budget_spent() whether any limit is reached, ended and
 * running attempts together (it says so on stdout; ask once). */
int sw_engine__budget_load(sw_engine *e);
void sw_engine__budget_count(sw_engine *e, double started_at, double ended_at,
                             double gpu);
bool sw_engine__budget_spent(sw_engine *e);

/* uvloop.c: runs the engine on a libuv loop until it finishes. */
int sw_engine__run_uv(sw_engine *e);

/* simloop.c: runs the engine on its executor's virtual clock until it
 * finishes, moving the clock to each next wake instead of sleeping. */
int sw_engine__run_sim(sw_engine *e);

#endif
