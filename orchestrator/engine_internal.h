/*
 * engine_internal.h - what the engine's files share (sw_engine__ names):
 * the engine's state, the slots of running attempts, the loop.
 */
#ifndef SW_ENGINE_INTERNAL_H
#define SW_ENGINE_INTERNAL_H

#include <stdbool.h>

#include "backends/executor.h"
#include "orchestrator/store.h"
#include "search/search.h"

typedef struct sw_provenance sw_provenance;

typedef struct {
    bool active;
    sw_run_rec rec;
    sw_job job;
    char *run_dir;   /* also where the attempt's status files are */
    double deadline; /* timeout; 0: none */
    double force_at; /* SIGKILL after this; 0: not canceling */
    const char *why; /* why we are canceling it; NULL: we are not */
    int out_fd;      /* its stdout.log, open for reading; -1: not yet */
} sw_slot;

typedef struct {
    sw_spec *spec;
    sw_search *search;
    sw_store *st;
    sw_executor *ex;
    sw_sweep_rec sweep;
    sw_provenance *prov; /* git provenance; NULL outside a repository */
    char *home, *runs_dir;
    int lock_fd;
    int64_t parallel;
    sw_slot *slots;
    size_t n_slots, cap_slots;
    sw_run_rec *queue; /* runs to (re)launch, before new trials */
    size_t qlen, qcap;
    uint64_t next_idx;
    bool search_done, resuming, target_hit, cancel_sent;
    bool gave_up;       /* the first runs all failed: launch no more */
    size_t failed_here; /* runs that failed in this process */
    size_t done, failed, stopped, canceled;
    bool has_best;
    double best;
    char *best_run;
    char *buf; /* READ_MAX bytes for reading trials' output */
    double t0, last_progress, grace;
    bool tty, quiet;
    int seen_interrupts;
} sw_engine;

double sw_engine__now(void);
int sw_engine__mkdirs(const char *path);
int sw_engine__write_file(const char *path, const char *text);
int sw_engine__interrupts(void);
int sw_engine__signal_fd(void);
/* loop.c: a free slot (new or reused); the run's folder into the slot;
 * a run back on the queue of runs to launch; the best value so far and
 * metric.target; how a run ended (or that it runs), told to the search. */
sw_slot *sw_engine__free_slot(sw_engine *e);
void sw_engine__slot_paths(sw_engine *e, sw_slot *s);
void sw_engine__requeue(sw_engine *e, sw_slot *s);
void sw_engine__note_value(sw_engine *e, const sw_run_rec *r);
void sw_engine__tell_search(sw_engine *e, const sw_run_rec *r, bool ended);

/* output.c: reads what the trial in `s` wrote since the last call and
 * records its metrics, up to its last complete line. */
int sw_engine__tail(sw_engine *e, sw_slot *s);

/* resume.c: replays the store's runs of the sweep into the engine. */
int sw_engine__restore(sw_engine *e);

/* Runs the loop until the sweep ends or is interrupted. */
int sw_engine__loop(sw_engine *e);
void sw_engine__slot_clear(sw_slot *s);

#endif
