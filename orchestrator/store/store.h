/*
 * store.h - the sweep's system of record: one SQLite file per sweep home,
 * written by the orchestrator alone, read by anyone.
 *
 * Every state change of a run is committed before the engine acts on it,
 * so a crash at any moment leaves a store that `sweep resume` finishes
 * from. The schema is a public interface (docs/schema.md).
 */
#ifndef SW_STORE_H
#define SW_STORE_H

#include <stdbool.h>
#include <stdint.h>

#include "orchestrator/vocab.h"
#include "sweeps/value.h"

typedef struct sw_store sw_store;

/* Opens (creating and migrating when `writer`) the store at `path`. A
 * writer uses WAL mode; a reader is opened read-only and can't write. */
int sw_store_open(sw_store **out, const char *path, bool writer);
void sw_store_close(sw_store *st);

/* The writer's WAL, in pages, after its last commit. The writer never
 * checkpoints on commit (an fsync that would stall the engine's loop):
 * its owner calls sw_store_checkpoint() off the loop when this grows. */
int sw_store_wal_pages(const sw_store *st);
/* Copies the WAL of the store at `path` into its database file, from a
 * connection of its own: safe on any thread. Never waits for readers. */
int sw_store_checkpoint(const char *path);
/* The store's file. Borrowed. */
const char *sw_store_path(const sw_store *st);

/* Groups writes into one transaction (nesting is not supported). */
int sw_store_begin(sw_store *st);
int sw_store_commit(sw_store *st);
/* Abandons the open transaction; does nothing when none is open. Inside
 * a hold, abandons begin()'s savepoint, or with none open the held
 * transaction itself (and the hold). */
int sw_store_rollback(sw_store *st);
/* Holds one transaction open until sw_store_release(): every write
 * meanwhile joins it, and begin()/commit() become a savepoint inside it.
 * For a simulation, where a virtual instant is one commit and nothing
 * outlives the process: a real sweep commits each change before acting
 * on it. SW_EINVALID when a transaction is already open. */
int sw_store_hold(sw_store *st);
/* Commits the held transaction; SW_OK when none is held (rolled back). */
int sw_store_release(sw_store *st);

typedef struct {
    char *id;
    char *name;   /* may be NULL */
    char *file;   /* the sweep file's path as given */
    char *config; /* the sweep file's text as loaded */
    char *method;
    char *metric; /* may be NULL */
    char *goal;   /* "minimize" | "maximize" | NULL */
    char *state;  /* a word of SW_SWEEP_STATES (vocab.h) */
    char *cwd;    /* where trials start */
    uint64_t seed;
    int64_t parallel;
    double created_at, ended_at; /* unix seconds; ended_at 0: not ended */
    char *git_commit;   /* the code it started from; NULL: none recorded */
    bool git_dirty;     /* meaningful when git is set */
    char *git;          /* JSON, docs/provenance.md; NULL: outside git */
    char *backend;      /* the executor it runs on ("local"); NULL: local */
    char *command;      /* JSON array: the trial's command from the command
                           line (`sweep run FILE -- ...`); NULL: the file's */
    char *backend_args; /* JSON array: the backend's arguments from the
                           command line (--slurm-arg); NULL: none */
    char *gpus;         /* the inventory declared with `sweep run --gpus`;
                           NULL: none (the file's `gpus:`, else NVML) */
    int64_t run_cap;    /* the run_cap `sweep resume --run-cap` gave it,
                           replacing the file's; 0: the file's */
} sw_sweep_rec;

void sw_sweep_rec_dispose(sw_sweep_rec *r);

typedef struct {
    char *id; /* "<sweep id>-<idx + 1>" */
    char *sweep_id;
    int64_t idx;  /* the trial's index in the search sequence */
    char *cell;   /* the trial's id: hash of its parameters */
    char *params; /* JSON */
    char *argv;   /* JSON array */
    sw_run_state state;
    char *reason; /* why it ended as it did ("exit 1", "timeout"); NULL */
    bool has_exit;
    int exit_code; /* when has_exit */
    int signal;    /* 0, or the signal that ended it */
    int64_t attempts;
    int64_t lost; /* of those, attempts that were lost: not a retry */
    double created_at, started_at, ended_at; /* 0: not yet */
    char *job; /* the current attempt's job handle, the executor's own;
                  NULL: its launch was not answered (yet) */
    int64_t stdout_offset; /* bytes of stdout.log already parsed */
    bool has_value;
    double value;     /* last reported value of the sweep's metric */
    char *git_commit; /* the code its last attempt started with; NULL:
                         none recorded */
    bool git_dirty;   /* meaningful when git is set */
    char *git;        /* JSON, docs/provenance.md; NULL: outside git */
    char *gpus;       /* JSON: the devices its attempt holds, docs/schema.md;
                         NULL: none (CPU only, or no attempt yet) */
    bool has_queued;  /* queued_seconds is known */
    double queued_seconds; /* how long its attempt waited in a scheduler's
                              queue (Slurm) before it started */
    char *pending_reason;  /* while its attempt waits in that queue: the
                              scheduler's reason ("Resources"); NULL: not
                              waiting (started_at is then its start) */
    /* method pbt (docs/search.md): its place in the population, and the
     * run whose checkpoint it started from, at which iteration; written
     * when the run is put, never changed */
    bool has_member;
    int64_t member;
    char *parent; /* NULL: it started from scratch */
    int64_t parent_iter;
} sw_run_rec;

void sw_run_rec_dispose(sw_run_rec *r);

/* Inserts a new sweep. */
int sw_store_put_sweep(sw_store *st, const sw_sweep_rec *s);
/* Finds a sweep by id, unique id prefix, or name (the latest of that
 * name); SW_ENOTFOUND with a message when none. */
int sw_store_get_sweep(sw_store *st, const char *key, sw_sweep_rec *out);
/* The latest sweep; SW_ENOTFOUND when the store has none. */
int sw_store_latest_sweep(sw_store *st, sw_sweep_rec *out);
int sw_store_set_sweep_state(sw_store *st, const char *id, const char *state,
                             double ended_at);
/* Deletes sweep `id` and every row of it, in every table, in one
 * transaction (store_edit.c). The caller holds the sweep's lock. */
int sw_store_delete_sweep(sw_store *st, const char *id);
/* A run's labels (`sweep tag`, `sweep note`; the tags and notes tables). */
typedef struct {
    char **tags; /* oldest first, NULL-terminated; NULL when none */
    size_t n_tags;
    char *note; /* NULL: none */
} sw_labels;

void sw_labels_dispose(sw_labels *l);

/* Adds `tags` (n of them) to run `run_id`, each once, or with `remove`
 * takes them off (one it does not have is no error); all or none. */
int sw_store_tag_run(sw_store *st, const char *run_id, char *const *tags,
                     size_t n, bool remove);
/* Sets the note of run `run_id` to `text`, replacing any; NULL or ""
 * removes it. */
int sw_store_note_run(sw_store *st, const char *run_id, const char *text);
/* The labels of run `run_id` into *out (the caller disposes). */
int sw_store_run_labels(sw_store *st, const char *run_id, sw_labels *out);
/* The ids of the sweep's runs that have a tag or a note, by idx, into
 * *out (n of them); the caller frees each and *out. */
int sw_store_labeled_runs(sw_store *st, const char *sweep_id, char ***out,
                          size_t *n);

/* Records the run_cap `sweep resume --run-cap` gave sweep `id`. */
int sw_store_set_run_cap(sw_store *st, const char *id, int64_t run_cap);
/* All sweeps, newest first; the caller disposes each and frees *out. */
int sw_store_list_sweeps(sw_store *st, sw_sweep_rec **out, size_t *n);

/* Inserts a new run (normally pending), with its lineage (member,
 * parent, parent_iter). */
int sw_store_put_run(sw_store *st, const sw_run_rec *r);
/* Writes every mutable field of the run `r->id` (not its lineage). */
int sw_store_update_run(sw_store *st, const sw_run_rec *r);
/* Writes only stdout_offset and value of the run `r->id`: what reading
 * its output changes, once per batch of lines. */
int sw_store_update_progress(sw_store *st, const sw_run_rec *r);
int sw_store_get_run(sw_store *st, const char *id, sw_run_rec *out);
/* The runs of a sweep, by idx; the caller disposes each and frees *out. */
int sw_store_list_runs(sw_store *st, const char *sweep_id, sw_run_rec **out,
                       size_t *n);
/* The same with only the fields `sweep ls` shows set (id, params, state,
 * exit, attempts, times, value, pending_reason, lineage); the others are
 * zero or NULL. */
int sw_store_list_shown(sw_store *st, const char *sweep_id, sw_run_rec **out,
                        size_t *n);
/* The `limit` best finished or stopped runs of a sweep that have a value:
 * finished ones first, then stopped ones, each by value (highest first
 * when `maximize`), ties by idx; the caller disposes each and frees
 * *out. */
int sw_store_best_runs(sw_store *st, const char *sweep_id, bool maximize,
                       uint64_t limit, sw_run_rec **out, size_t *n);
/* How many runs of the sweep are in each state: counts[state], all of
 * them set (0 for a state no run is in). */
int sw_store_count_runs(sw_store *st, const char *sweep_id,
                        int64_t counts[SW_RUN_N_STATES]);

/* Records one metric value of a run (step < 0: none). */
int sw_store_put_metric(sw_store *st, const char *run_id, int64_t step,
                        const char *name, double value, double time);
/* The same, unless the run already has a value of `name` at `step` (a
 * report sent again because its answer was lost): 1 when recorded, 0
 * when it was already there, or the error. */
int sw_store_put_metric_once(sw_store *st, const char *run_id, int64_t step,
                             const char *name, double value, double time);

/* The last value of each metric of run `run_id`: `fn` is called once per
 * name, in the order the names were first reported, with has_value false
 * for a NaN (stored as NULL). A non-zero answer of `fn` stops the walk
 * and is returned as is. */
typedef int (*sw_store_metric_fn)(void *ctx, const char *name, bool has_value,
                                  double value);
int sw_store_last_metrics(sw_store *st, const char *run_id,
                          sw_store_metric_fn fn, void *ctx);
/* The best value of metric `name` run `run_id` ever reported (least, or
 * greatest when `maximize`) and its step (-1: reported without one; the
 * first such report on a tie): a figure of its own, not the run's value,
 * which is its last (docs/metrics.md). *has is false when it has none. */
int sw_store_best_logged(sw_store *st, const char *run_id, const char *name,
                         bool maximize, bool *has, double *value,
                         int64_t *step);

/* Every value of metric `name` of the sweep's runs, in the order they
 * were recorded: `fn` gets the run's idx and the value (NaN for one
 * stored as NULL). A non-zero answer of `fn` stops the walk and is
 * returned as is. */
typedef int (*sw_store_history_fn)(void *ctx, int64_t idx, double value);
int sw_store_metric_history(sw_store *st, const char *sweep_id,
                            const char *name, sw_store_history_fn fn,
                            void *ctx);

/* What an export sent of a sweep or of one run to one destination
 * (store_export.c; the `exports` table of docs/schema.md). */
typedef struct {
    char *target; /* "wandb" */
    char *dest;   /* where: "https://api.wandb.ai/ENTITY/PROJECT" */
    char *sweep_id;
    char *run_id;      /* NULL: the sweep itself */
    char *remote_id;   /* the destination's id of it; NULL: none yet */
    char *remote_node; /* the destination's internal id; may be NULL */
    int64_t history;   /* history lines the destination holds */
    int64_t summary;   /* history lines the sent summary covers; -1: none */
    char *state;       /* the run state whose end was sent (for a sweep:
                          the sweep state sent); NULL: none */
    char *files;       /* names of the files uploaded, space-separated */
    double exported_at;
    char *labels; /* the run's tags and note as last sent (JSON); NULL */
} sw_export_rec;

void sw_export_rec_dispose(sw_export_rec *r);

/* The record of (target, dest, sweep_id, run_id) into *out (zeroed
 * first); SW_ENOTFOUND, without a message, when there is none. */
int sw_store_get_export(sw_store *st, const char *target, const char *dest,
                        const char *sweep_id, const char *run_id,
                        sw_export_rec *out);
/* Writes (inserts or replaces) the record of its key. */
int sw_store_put_export(sw_store *st, const sw_export_rec *r);

/* Every metric row of `run_id`, in the order they arrived: `fn` gets its
 * step (-1: none), name (valid during the call), value (has_value false:
 * NaN) and time. A non-zero answer of `fn` stops the walk and is
 * returned. */
typedef int (*sw_store_row_metric_fn)(void *ctx, int64_t step, const char *name,
                                      bool has_value, double value,
                                      double time);
int sw_store_metric_rows(sw_store *st, const char *run_id,
                         sw_store_row_metric_fn fn, void *ctx);

/* One sample of one device while a sweep's trials ran (gpu_samples,
 * docs/schema.md). Negative and zero figures mean unknown. */
typedef struct {
    const char *sweep_id;
    double time;
    const char *device; /* its UUID, or "<gpu index>[/<mig index>]" */
    int64_t gpu;        /* its GPU's index */
    int64_t mig;        /* its MIG index; -1: a whole GPU */
    int64_t util;       /* percent; -1: unknown */
    int64_t memory_used, memory_total; /* bytes; -1: unknown */
    int64_t memory_trials; /* used by this sweep's trials; -1: unknown */
    int64_t trials;        /* this sweep's trials holding it */
} sw_gpu_sample;

/* Records one sample (store_gpus.c). */
int sw_store_put_gpu_sample(sw_store *st, const sw_gpu_sample *g);

/* Calls `fn` for each run of any sweep that is running and holds devices
 * (runs.gpus not NULL), oldest first. A non-zero answer of `fn` stops
 * the walk and is returned as is. */
typedef int (*sw_store_holder_fn)(void *ctx, const char *run_id,
                                  const char *gpus_json);
int sw_store_gpu_holders(sw_store *st, sw_store_holder_fn fn, void *ctx);

/* One attempt of a run, as it ended (the `attempts` table,
 * store_report.c): runs keep only their last attempt. */
typedef struct {
    char *run_id;
    int64_t attempt;             /* 1, 2, ...: runs.attempts then */
    double started_at, ended_at; /* unix seconds */
    char *outcome;               /* a word of SW_OUTCOMES (vocab.h) */
    char *reason;                /* runs.reason then; NULL: none */
    bool has_exit;
    int exit_code;       /* when has_exit */
    int signal;          /* 0, or the signal that ended it */
    char *gpus;          /* runs.gpus then: its devices; NULL: CPU only */
    double gpu;          /* GPUs it held: devices x share, a MIG slice counted
                            as its fraction of its GPU; 0: none */
    bool has_first_step; /* false: it reported no step, or a resumed
                            `sweep` adopted it and does not know */
    int64_t first_step;  /* the first step it reported */
    char *job;           /* runs.job then: the executor's job handle (a
                            Slurm job id); NULL: none */
    bool has_queued;
    double queued_seconds; /* runs.queued_seconds then */
} sw_attempt_rec;

void sw_attempt_rec_dispose(sw_attempt_rec *r);

/* Records (or records again, replacing it) attempt a->attempt of its
 * run. */
int sw_store_put_attempt(sw_store *st, const sw_attempt_rec *a);
/* The recorded attempts of a sweep's runs, by run idx then attempt; the
 * caller disposes each and frees *out. */
int sw_store_list_attempts(sw_store *st, const char *sweep_id,
                           sw_attempt_rec **out, size_t *n);
/* How many of run `run_id`'s recorded attempts ended `outcome` (an
 * attempts.outcome word), into *n. */
int sw_store_count_attempts(sw_store *st, const char *run_id,
                            const char *outcome, int64_t *n);

/* Every value of metric `name` of a sweep's runs, in the order they were
 * recorded: `fn` gets the run's id (valid during the call), its step
 * (-1: none), the value (has_value false: NaN) and its time. A non-zero
 * answer of `fn` stops the walk and is returned. */
typedef int (*sw_store_point_fn)(void *ctx, const char *run_id, int64_t step,
                                 bool has_value, double value, double time);
int sw_store_sweep_points(sw_store *st, const char *sweep_id, const char *name,
                          sw_store_point_fn fn, void *ctx);

/* What gpu_samples hold of a sweep: `fn` is called once per device
 * sampled (its key, its GPU's NVML index, and whether it is a MIG
 * slice), and *util is the mean of every utilisation sample (NaN when
 * there is none). */
typedef int (*sw_store_device_fn)(void *ctx, const char *device, int64_t gpu,
                                  bool mig);
int sw_store_sampled_devices(sw_store *st, const char *sweep_id,
                             sw_store_device_fn fn, void *ctx, double *util);

/* The limits of one sw_store_query (docs/cli.md): the time it may run
 * by default, and the most memory one string or blob may take. */
#define SW_STORE_QUERY_TIMEOUT_S 10.0
#define SW_STORE_QUERY_MAX_BYTES (64 * 1024 * 1024)
#define SW_STORE_QUERY_MAX_SQL 1000000 /* bytes of the statement's text */

/* Sets how long each later sw_store_query may run, in seconds; 0 or less
 * means no limit. This function can't fail. */
void sw_store_query_timeout(sw_store *st, double seconds);

/* The time a read of `sweep report` may take by default (docs/cli.md). */
#define SW_STORE_READ_TIMEOUT_S 60.0

/* Bounds every later statement of this store's own connection to
 * `seconds` from now, all together (0 or less: no limit again): one
 * still running then is stopped, and fails with SW_EINVALID, "stopped:
 * it ran past N s (--timeout)". For read-only commands; the engine never
 * sets it. This function can't fail. */
void sw_store_read_limit(sw_store *st, double seconds);

/* Runs read-only SQL and calls `row` for each result row (and once with
 * row index -1 and the column names). Writes, ATTACH, PRAGMA changes and
 * extensions are refused by SQLite itself; errors are one clear line. A
 * query that runs past its time limit, or would build a value over
 * SW_STORE_QUERY_MAX_BYTES, is stopped: SW_EINVALID, "query stopped: ...".
 * The time spent in `row` counts too. */
typedef int (*sw_store_row_fn)(void *ctx, int64_t row, int ncols,
                               const char *const *names,
                               const sw_value *const *values);
int sw_store_query(sw_store *st, const char *sql, sw_store_row_fn row,
                   void *ctx);

#endif
