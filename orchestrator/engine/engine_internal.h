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
#include "orchestrator/engine/events.h"
#include "orchestrator/metrics.h"
#include "orchestrator/engine/engine.h"
#include "orchestrator/store/store.h"
#include "search/search.h"

typedef struct sw_provenance sw_provenance;
typedef struct sw_metrics_server sw_metrics_server;
typedef struct sw_metrics_report sw_metrics_report;
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

/* What watches trials' output files, where the driver can (NULL
 * functions: they are only polled). watch() watches the file at `path`,
 * the output of the trial in `slot`, and calls sw_engine__output_changed()
 * on the loop's thread when it changes; unwatch() stops that (the handle
 * is gone after it). */
typedef struct {
    void *(*watch)(void *ctx, const char *path, void *slot);
    void (*unwatch)(void *ctx, void *handle);
    void *ctx;
} sw_engine_watcher;

/* Where an attempt is, from its git capture to its end: the phases in
 * the order an attempt goes through them (a canceled one may skip
 * STOPPING; one that ends leaves from any). */
typedef enum {
    SW_SLOT_CAPTURE,   /* its folder and code being made ready */
    SW_SLOT_LAUNCHING, /* asked the executor; no answer yet */
    SW_SLOT_RUNNING,   /* started */
    SW_SLOT_STOPPING,  /* started, and asked to stop (SIGTERM) */
    SW_SLOT_KILLED,    /* started, and SIGKILLed: only its end is awaited */
    SW_SLOT_ENDED,     /* its end is known; the rest of its output is
                          being read, a turn at a time, before the end is
                          recorded */
} sw_slot_phase;

/* An attempt the engine is busy with, from its git capture to its end. */
typedef struct sw_slot {
    sw_slot_phase phase;
    sw_run_rec rec;
    char *run_dir;
    double deadline;  /* monotonic; 0: no timeout */
    sw_cancel cancel; /* why the engine stops it; NONE: it does not */
    double force_at;  /* monotonic SIGKILL time; 0: not canceling */
    bool adopted;     /* from an earlier orchestrator */
    bool fresh;       /* a new trial, not in the store until it launches */
    bool proven;      /* reported a metric, or ran PROBATION_S (lifecycle.c) */
    double launched_at; /* monotonic; when its launch was asked for, or
                           when it left a scheduler's queue */
    bool queued;        /* its job waits in the executor's queue
                           (SW_JOB_QUEUED): not started, no deadline, no
                           GPU time; rec.started_at is its submission */
    int out_fd;         /* its stdout.log, open for reading; -1: not yet */
    void *watch;        /* the host's watch of that file; NULL: none */
    bool out_dirty;     /* the watch saw it change since the last read */
    bool out_more;      /* output.c: unread output after the last turn */
    struct {            /* lifecycle.c, in SW_SLOT_ENDED: how it ended */
        int how;        /* lifecycle.c's end_kind */
        sw_exit exit;
        char *msg; /* the executor's word on it; NULL: none */
        double at; /* wall time of the end */
    } end;
    /* output.c: a line longer than its buffer starts at rec.stdout_offset
     * and has been scanned, unparsed, up to long_scan (0: not in one) */
    int64_t long_scan;
    bool long_metrics; /* that line is a @metrics line */
    bool warned_long;  /* warned about a long plain line */
    bool warned_names; /* warned about refused metric names */
    bool weighed;      /* its backlog at its end was held to the bound */
    /* reports.c: the attempt's metrics token (NULL: none), whether it
     * reported over HTTP, and the stopping rule's verdict */
    char *token;
    bool http;
    bool value_changed; /* by the reports being committed */
    bool stop;          /* the rule stopped it: every answer says so */
    sw_cancel stop_why; /* who did: NONE for the rule, BY_HAND for a
                           `sweep stop RUN` (requests.c) */
    char *stop_verdict; /* the rule's verdict ("iteration 3, band 3: ..."),
                           for the run's reason; NULL: none */
    bool pause;         /* it reached its rung: it ends `paused` (with
                           stop, so every answer says stop and pause) */
    int64_t target;     /* promotion ASHA: the iteration it trains to
                           (SWEEP_TRAIN_UNTIL); 0: none yet */
    int64_t iter;       /* promotion ASHA: the last iteration it reported
                           the metric at; -1: none yet */
    bool drained;       /* promotion ASHA: promoted past the quota, in
                           the drain (promotion.c) */
    int64_t values;     /* the metric's values this attempt reported:
                           its iterations when they come without steps */
    double stop_at;     /* monotonic time of its SIGTERM; 0: none due */
    sw_slot_gpus *gpus; /* devices.c: the devices it holds; NULL: none */
    /* the first step the attempt reported (attempts.first_step); -1: none
     * yet; -2: not known, the attempt was adopted after reporting */
    int64_t first_step;
    int64_t view_step; /* progress.c: its last reported step; -1: none */
    /* A long-lived worker's (docs/clients.md, "Long-lived workers"):
     * next_req is its request for the run it serves next, held by the
     * engine until that run is ready (reports.c takes it, lifecycle.c
     * answers it, always once); job_key the executor's key of the
     * process this attempt runs in when that process was started for
     * another run and handed over (NULL: rec.id); worker_gone: that
     * process ended before the handover was answered; held_gpu: what
     * gpus_held() said once its devices went to the run handed over to
     * (gave_gpus). handed_to: the run this ended attempt's worker serves
     * next, not yet committed there: its end is recorded only then, in
     * the same transaction (lifecycle.c), so a kill never finds the
     * worker's run ended and its next one not started; handed_from: the
     * other way. */
    sw_metrics_report *next_req;
    char *job_key;
    char *job_handle; /* that process's handle, until it is rec.job */
    bool worker_gone;
    struct sw_slot *handed_to, *handed_from;
    /* adopted in a worker that may never have heard of it: the run the
     * worker asked from (<run dir>/asked_from); its request from there
     * is answered with this run again (sw_engine__answer_again) */
    char *asked_from;
    bool gave_gpus;
    double held_gpu;
} sw_slot;

/* An observation for the search, held while a suggestion is in flight. */
typedef struct {
    sw_trial trial;
    double value;
    bool ended;
} sw_tell;

/* A run's value at a rung, for the search (fidelity.c), held while a
 * suggestion is in flight. */
typedef struct {
    sw_trial trial;
    int64_t iter;
    double value;
} sw_rung_tell;

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
    char *warning; /* for a person, said back on the loop's thread */
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
    sw_engine_watcher watcher;
    sw_sweep_rec sweep;
    sw_provenance *prov;       /* git provenance; NULL outside a repository */
    sw_metrics_server *server; /* NULL: trials report on stdout only */
    struct sw_site *site;      /* the dashboard it serves; NULL: none */
    char *view_token;          /* what a browser must show (--listen off
                                  loopback); NULL: none needed */
    sw_stopper *stopper;       /* early_terminate's rule; NULL: none */
    struct sw_promoter *promoter; /* asha with promote: rungs where runs
                                     pause (promote.h); NULL: none */
    double *paces;                /* promotion.c: by run index, seconds an
                                     iteration took in its last attempt
                                     that reached a rung; 0: not seen */
    size_t n_paces;
    struct sw_pbt *pbt;           /* method pbt: its rounds (search/pbt.h);
                                     NULL: another method */
    char **members;               /* population.c: the run each place of
                                     the population holds now (an id);
                                     NULL entries: none yet */
    struct sw_pbt_work *pbt_work; /* population.c: a round's checkpoints
                                     being copied; NULL: none */
    bool pbt_over;                /* no further round will start */
    char *paused_why;             /* why the runs still paused at the
                                     sweep's end end stopped; NULL: the
                                     promoter's words */
    uint64_t stop_generation;     /* the stopper's, at the last full check */
    bool serve;                   /* start the metrics server at begin() */
    char *listen;                 /* its address; NULL: 127.0.0.1, any port */
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
    struct sw_slot_index *slot_index; /* run id -> place in slots, for
                                         find_slot (slots.c) */
    sw_run_rec *queue; /* runs to (re)launch, before new trials */
    size_t qlen, qcap;
    sw_slot **captures; /* slots waiting for a git capture, oldest first */
    size_t n_captures, cap_captures;
    sw_tell *tells; /* for the search once its suggestion is back */
    size_t n_tells, cap_tells;
    sw_rung_tell *rung_tells; /* fidelity.c: the same, of rung values */
    size_t n_rung_tells, cap_rung_tells;
    int64_t fitted; /* fidelity.c: the rung the search last said it models */
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
    size_t started_here;    /* attempts the executor started, here */
    size_t unstarted_here;  /* attempts that could not start, here */
    double backoff_until;   /* monotonic; launch nothing before */
    int interrupts, seen_interrupts;
    char *requests_dir; /* requests.c: where `sweep stop` asks; NULL */
    double requests_at; /* monotonic: when it was last looked at */
    int signal;         /* the last signal that interrupted it */
    size_t done, failed, stopped, canceled;
    size_t worked;   /* ends that show the command works: finished,
                        stopped or paused (the first-failures rule) */
    bool has_best;   /* the best run as `sweep best` ranks them */
    bool best_stale; /* a run ended since it was read */
    double best;
    char *best_run;
    char *buf; /* for reading trials' output */
    double t0, last_progress, last_tail;
    bool tty, quiet;
    int view_lines; /* progress.c: lines of the terminal view on screen */
    /* the clock is the executor's virtual one (simloop.c drives): trials'
     * output is read at every pump, since lines appear only when the
     * executor puts them there, and nothing waits on real time */
    bool virtual_time;
    /* some slot has had a job_key (a run handed to a worker's process):
     * until then an executor event's slot is found by the run's id alone
     * (job_slot() in lifecycle.c), not by a scan of every slot */
    bool job_keys;
    struct {                   /* budget.c: what ended attempts spent */
        double gpu_s, trial_s; /* GPU-seconds, attempt-seconds */
        double first;          /* the first attempt's start (wall); 0 */
        bool over;             /* a limit was reached (and said so) */
    } spent;
    int result;           /* SW_OK, or the error that ended the sweep */
    sw_loop_probe *probe; /* NULL but in a benchmark */
    struct {              /* events.c: the consumers, in order */
        sw_event_fn fn;
        void *ctx;
    } * consumers;
    size_t n_consumers, cap_consumers;
    bool own_consumers; /* engine.c's are subscribed, first */
    bool suggested;     /* suggest.c: e->suggest.trial is ready to run */
    struct {            /* ingest.c: values stored, told once committed */
        const sw_slot *slot;
        const sw_metric_point *point;
    } * ingested;
    size_t n_ingested, cap_ingested;
    sw_slot **touched; /* ingest.c: the slots those values came to */
    size_t n_touched, cap_touched;
};

/* The engine's files, from the floor up: each calls only the ones
 * above it in this list (docs/architecture.md draws it).
 *
 * events.c: the one event call. subscribe() adds a consumer after the
 * others, subscribe_first() before them; emit() tells each consumer, in order,
 * and returns the first failure (it sets the event's sweep and time); notice()
 * is a message for a person, as an event. */
void sw_engine__subscribe(sw_engine *e, sw_event_fn fn, void *ctx);
void sw_engine__subscribe_first(sw_engine *e, sw_event_fn fn, void *ctx);
int sw_engine__emit(sw_engine *e, sw_event *ev);
void sw_engine__notice(sw_engine *e, sw_notice_level level, const char *fmt,
                       ...) SW_PRINTF(3, 4);

/* slots.c: the slot table, the queue, the counts.
 *   - stopping(): whether it launches no more;
 *   - new_slot() adds a slot, free_slot() removes it and frees it (its
 *     devices already given back: sw_engine__gpus_release()); find_slot()
 *     by run id; count() the slots in a phase; started() whether the
 *     slot's attempt is running (started, its end not yet known),
 *     count_started() how many are;
 *   - enqueue() queues run `r` to be launched (consumes *r, zeroed);
 *     dequeue() takes the last queued (false: none);
 *   - deadline() is when run `r`, started at r->started_at (wall), runs
 *     out of time on the monotonic clock (0: no timeout);
 *   - tally() counts a run that ended in `state` (`here`: in this
 *     process, for the first-failures rule); note_value() a run's value
 *     of the metric (the best; metric.target);
 *   - fatal() ends the sweep with a store error (rolled back, said once)
 *     and returns it; its trials keep running, for a resume. */
bool sw_engine__stopping(const sw_engine *e);
/* count_queued(): how many started attempts wait in the executor's queue
 * (counted in count_started() too). */
sw_slot *sw_engine__new_slot(sw_engine *e);
/* The slot's rec.id is set: find_slot() finds it without a scan. */
void sw_engine__slot_named(sw_engine *e, sw_slot *s);
void sw_engine__free_slot(sw_engine *e, sw_slot *s);
sw_slot *sw_engine__find_slot(const sw_engine *e, const char *run_id);
/* Frees the index find_slot keeps (engine disposal). */
void sw_engine__slot_index_free(sw_engine *e);
size_t sw_engine__count(const sw_engine *e, sw_slot_phase phase);
bool sw_engine__started(const sw_slot *s);
size_t sw_engine__count_started(const sw_engine *e);
size_t sw_engine__count_queued(const sw_engine *e);
void sw_engine__enqueue(sw_engine *e, sw_run_rec *r);
bool sw_engine__dequeue(sw_engine *e, sw_run_rec *out);
double sw_engine__deadline(const sw_engine *e, const sw_run_rec *r);
void sw_engine__tally(sw_engine *e, sw_run_state state, bool here);
void sw_engine__note_value(sw_engine *e, const sw_run_rec *r);
/* The best run and its value (e->has_best, e->best, e->best_run), read
 * from the store as `sweep best` ranks runs, when a run ended since. */
void sw_engine__best(sw_engine *e);
int sw_engine__fatal(sw_engine *e, int error);

/* make_run() fills *r (zeroed first) as the pending run of trial `t`:
 * its id from t->index, its params, its argv rendered as the store keeps
 * it (${envvar:...} unexpanded); on failure (a command that cannot be
 * rendered) *r is disposed and the error's message set. pause() has the
 * attempt in `s`, which reached where it trains to (s->pause), told to
 * stop there: every answer says stop and pause, SIGTERM after the
 * grace; `why` (consumed) is its verdict, said as a notice. */
int sw_engine__make_run(const sw_engine *e, const sw_trial *t, sw_run_rec *r);
void sw_engine__pause(sw_engine *e, sw_slot *s, char *why);

/* gpus_move(): the devices of `from` (a worker's ended attempt) go to
 * `to` (the run it serves next), as they are: the same process keeps
 * them. */
void sw_engine__gpus_move(sw_engine *e, sw_slot *from, sw_slot *to);

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
void sw_engine__gpus_report(sw_engine *e); /* notices: what trials get */
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

/* attempts.c: the attempts table, a consumer: each attempt's end, as
 * the state change it caused says (attempts_event, subscribed with the
 * engine as ctx). first_step() notes `step`, of a value the attempt in
 * `s` reported (stored or not), as its first step if it is (-1: a value
 * without a step). */
int sw_engine__attempts_event(void *engine, const sw_event *ev);
void sw_engine__first_step(sw_slot *s, int64_t step);

/* budget.c: the sweep file's `budget`. budget_load() counts what the
 * store's ended attempts spent (on resume); budget_event, a consumer,
 * counts each attempt as it ends; budget_spent() whether any limit is
 * reached, ended and running attempts together (it says so the first
 * time; once reached, a limit stays reached in this process). */
int sw_engine__budget_load(sw_engine *e);
int sw_engine__budget_event(void *engine, const sw_event *ev);
bool sw_engine__budget_spent(sw_engine *e);
/* Whether the budget lasts `seconds` more (true without one) while the
 * sweep spends as it does now, plus one more attempt (its devices are
 * those a pausing run gave back, already counted): whether work that
 * long, started now, ends before the budget does. */
bool sw_engine__budget_lasts(sw_engine *e, double seconds);

/* progress.c: what a person sees, a consumer: notices on stdout and
 * stderr, one line per ended attempt (not on a terminal), and the status
 * line at each tick (redrawn at most every 0.25 s on a terminal; once at
 * the final one elsewhere). */
int sw_engine__progress_event(void *engine, const sw_event *ev);

/* fidelity.c: rung values for multi-fidelity bayes and tpe (nothing
 * when the sweep has none).
 *   - fidelity_rung() tells the search run `r` had `value` at rung
 *     iteration `iter` (held while a suggestion runs);
 *   - fidelity_value() is the stopping rule's hook: `value`, just shown
 *     to the stopper, is at one of its bands or rungs: told;
 *   - fidelity_replay() tells the search every rung value run `r` has in
 *     the store, and a finished run's last (a store error ends the
 *     sweep: fatal());
 *   - fidelity_flush() tells what was held, once the suggestion is back,
 *     and says (a notice) when the rung the search models changes;
 *     fidelity_dispose() frees what is held. */
void sw_engine__fidelity_rung(sw_engine *e, const sw_run_rec *r, int64_t iter,
                              double value);
void sw_engine__fidelity_value(sw_engine *e, const sw_run_rec *r, double value);
void sw_engine__fidelity_replay(sw_engine *e, const sw_run_rec *r);
void sw_engine__fidelity_flush(sw_engine *e);
void sw_engine__fidelity_dispose(sw_engine *e);

/* rule.c: the stopping rule. make_stopper() builds it, from the store's
 * history on resume; observe() shows it a new value of the sweep's metric
 * from the slot's run (as it is stored: a failed commit ends the sweep);
 * decide() asks it about the run in `s`, once it runs; decide_others()
 * about every slot when a value moved a line; decide_all() about every
 * slot (adopted ones it had stopped). */
int sw_engine__make_stopper(sw_engine *e);
void sw_engine__observe(sw_engine *e, sw_slot *s, int64_t step, double value);
/* Promotion ASHA (promotion.c): the iteration the run in `s` trains to
 * (0: no rule that pauses, promoter or PBT), and the paused runs due a
 * promotion moved to the queue while slots are free; at the sweep's end,
 * the runs still paused end stopped (their rung, or their round, is as
 * far as they got). */
int sw_engine__make_promoter(sw_engine *e);
void sw_engine__promote_observe(sw_engine *e, sw_slot *s, int64_t step,
                                double value);
/* true when promotion ASHA decides for this sweep (the stopper then has
 * no say) */
bool sw_engine__promote_decide(sw_engine *e, sw_slot *s);
int64_t sw_engine__train_until(const sw_engine *e, const sw_slot *s);
/* An adopted attempt (resume.c) whose run reached, in that attempt, the
 * rung it was told to train to: it pauses there, as it would have had
 * the sweep seen its end. */
void sw_engine__promote_adopted(sw_engine *e, sw_slot *s);
int sw_engine__promote_due(sw_engine *e);
/* When the sweep can start nothing new (run_cap, its space drawn) and
 * nothing is due, the best waiting run that can reach its next rung
 * before the runs still training end, moved to the queue so that its
 * devices do not idle meanwhile (promotion.c); whether one was. */
bool sw_engine__promote_drain(sw_engine *e);
/* Whether run `idx` goes on from a promotion past the quota. */
bool sw_engine__promote_drained(const sw_engine *e, int64_t idx);
int sw_engine__end_paused(sw_engine *e);
/* PBT (population.c; docs/search.md): make_pbt() builds the rounds for
 * method pbt, from the store on resume; pbt_target() is the iteration
 * the population trains to now; pbt_observe() records a member that
 * reached it and has its slot pause; pbt_decide() pauses a slot that is
 * to (true: PBT decides for this sweep); pbt_due() starts the next round
 * once every member has paused there or ended: the exploits' checkpoints
 * copied off the loop (pbt_busy() meanwhile), then, in one transaction,
 * the losers stopped, their replacements stored and everyone queued. */
int sw_engine__make_pbt(sw_engine *e);
void sw_engine__pbt_free(sw_engine *e);
/* pbt_place(): run `r`, one of the population the search draws, takes
 * the place its index names (nothing for other methods). */
void sw_engine__pbt_place(sw_engine *e, sw_run_rec *r);
int64_t sw_engine__pbt_target(const sw_engine *e);
void sw_engine__pbt_observe(sw_engine *e, sw_slot *s, int64_t step,
                            double value);
bool sw_engine__pbt_decide(sw_engine *e, sw_slot *s);
int sw_engine__pbt_due(sw_engine *e);
bool sw_engine__pbt_busy(const sw_engine *e);
/* pbt_ending(): the sweep ends; e->paused_why says where the members
 * still paused stopped, unless a reason to stop the population did. */
void sw_engine__pbt_ending(sw_engine *e);
void sw_engine__decide(sw_engine *e, sw_slot *s);
void sw_engine__decide_others(sw_engine *e);
void sw_engine__decide_all(sw_engine *e);

/* ingest.c: the one way values come in, from stdout and HTTP alike.
 * ingest() stores the batch's values for the run in `s` (each once),
 * inside the caller's transaction, keeps the run's latest value of the
 * metric in the slot (*changed: it moved) and shows it to the rule;
 * after the commit, ingested() tells each stored value as an event and
 * asks the rule; after a rollback, forget() drops them. */
int sw_engine__ingest(sw_engine *e, sw_slot *s, const sw_metric_batch *b,
                      double now, bool *changed);
void sw_engine__ingested(sw_engine *e);
void sw_engine__forget(sw_engine *e);

/* output.c: reads a turn of what the trial in `s` wrote since the last
 * call (at most one buffer, at most TURN_LINES lines, so one trial that
 * prints fast never holds the loop) and records its metrics, up to its
 * last complete line; with `at_end` (the attempt has ended), its last
 * line too, newline or not, once the rest is read. s->out_more says
 * whether more is left for the next turn. output_changed() is the host's
 * word that the slot's output changed (its watch). */
int sw_engine__tail(sw_engine *e, sw_slot *s, bool at_end);
void sw_engine__output_changed(void *slot);

/* reports.c: the metrics server.
 *   - start_server() starts the server for `listen` (NULL: 127.0.0.1 on a
 *     free port, or the port the adopted attempts last reported to);
 *   - serve() commits every waiting report in one transaction and
 *     answers each;
 *   - grant() and revoke() a slot's token; metrics_url() is where the
 *     trial in `s` reports (the caller frees; NULL without a server). */
int sw_engine__start_server(sw_engine *e, const char *listen);

/* live.c: the dashboard's feed. live_event() is the consumer that
 * publishes every event but ticks on the server's stream;
 * say_dashboard() prints the one line `dashboard: URL`. */
int sw_engine__live_event(void *ctx, const sw_event *ev);
void sw_engine__say_dashboard(sw_engine *e);
/* Before the first launch: warns when trials may run on other machines
 * (the executor places them) and the server is on a loopback address. */
void sw_engine__warn_loopback(sw_engine *e);
int sw_engine__serve(sw_engine *e);
/* A long-lived worker's next run: answers the slot's held request with
 * `json` (a whole body: {"run": ...} or {"run": null}), and flushes. */
void sw_engine__answer_next(sw_engine *e, sw_slot *s, const char *json);
/* The answer to a worker's request for its next run that
 * names b's run, again, with a new token (the answer that had b's was
 * lost in a kill), as the engine that committed b gave it; the caller
 * frees it. NULL when no token can be made. */
char *sw_engine__next_run_again(sw_engine *e, sw_slot *b);
/* On a worker thread: the attempt's new metrics token, written to its
 * run folder with where it reports. */
int sw_engine__new_token(const sw_engine *e, sw_slot *s);
/* The environment the trial contract gives the attempt in `s`; the
 * caller frees it (sw_command_free). */
char **sw_engine__attempt_env(sw_engine *e, sw_slot *s);
/* A worker's answer naming `s`'s run with `env`; the caller frees it. */
char *sw_engine__next_run_json(const sw_slot *s, char **env);
void sw_engine__grant(sw_engine *e, sw_slot *s);
void sw_engine__revoke(sw_engine *e, sw_slot *s);
char *sw_engine__metrics_url(const sw_engine *e, const sw_slot *s);

/* suggest.c: asks the search for its next trial on the worker pool; when
 * it is back, e->suggested says e->suggest.trial is ready for
 * lifecycle.c. read_size() re-reads the search's size (only while no
 * suggestion runs); tell_search() tells it how a run ended (`ended`) or
 * that it is in flight, held while a suggestion runs. */
void sw_engine__suggest(sw_engine *e);
void sw_engine__read_size(sw_engine *e);
void sw_engine__tell_search(sw_engine *e, const sw_run_rec *r, bool ended);

/* resume.c: replays the store's runs of the sweep into the engine (and
 * counts those that go again in *rerun); whether a run failed because its last
 * attempt was lost, and whether the sweep has such runs (a finished sweep with
 * some is resumed). */
int sw_engine__restore(sw_engine *e, size_t *rerun);
bool sw_engine__was_lost(const sw_run_rec *r);
bool sw_engine__has_lost_runs(sw_engine *e);

/* requests.c: what `sweep stop` asks of this sweep from another process,
 * as files in $SWEEP_HOME/requests/<sweep id>/ (docs/cli.md): one named
 * after a run stops that run by hand (its run ends `stopped`, as the rule
 * stops it); one named interrupt* is a Ctrl-C. requests() looks every
 * REQUESTS_S, stops the runs asked for and returns how many Ctrl-Cs were
 * asked, for lifecycle.c to act on; each file it reads is removed (the
 * asker's answer). requests_wake() is when it is due next (0: not while
 * no attempt is in flight, nor on a virtual clock). */
int sw_engine__requests(sw_engine *e);
double sw_engine__requests_wake(const sw_engine *e);

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

/* engine.c: a sweep made or found and locked, ready to run. init()
 * zeroes the engine and subscribes its own consumers (the attempts
 * table, the budget, what a person sees); setup() does so too when
 * init() was not called. They always come before any other, so every
 * other consumer is told of a state change once it is recorded. */
void sw_engine__init(sw_engine *e);
int sw_engine__prepare_run(sw_engine *e, const char *path,
                           const sw_engine_opts *o);
int sw_engine__prepare_resume(sw_engine *e, const char *key,
                              const sw_engine_opts *o, bool *done);
/* The search, the clock (the system's unless e->clock is set) and the
 * options' settings: what the loop needs beyond the sweep. */
int sw_engine__setup(sw_engine *e, const sw_engine_opts *o);
void sw_engine__dispose(sw_engine *e);

/* uvloop.c: runs the engine on a libuv loop until it finishes. */
int sw_engine__run_uv(sw_engine *e);

/* simloop.c: runs the engine on its executor's virtual clock until it
 * finishes, moving the clock to each next wake instead of sleeping. */
int sw_engine__run_sim(sw_engine *e);

#endif
