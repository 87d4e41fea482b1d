/*
 * report.h - `sweep report`: how a sweep spent its GPU time (used, idle,
 * saved by early stopping, lost to failures) and what it cost, computed
 * from plain rows (sw_report_compute, pure) read from the store
 * (sw_report_load). docs/report.md defines every figure.
 *
 * Ownership: an sw_report_data owns every row and string it holds
 * (sw_report_data_dispose frees them); an sw_report is plain numbers.
 */
#ifndef SW_REPORT_H
#define SW_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "orchestrator/store/store.h"
#include "sweeps/buf.h"
#include "sweeps/spec.h"

/* The attempt outcomes of vocab.h, made from its list (SW_ATT_DISK for
 * SW_OUTCOME_DISK, ...) with the same values, and one that has not
 * ended. */
typedef enum {
#define SW_REPORT_X_(id, word) SW_ATT_##id = SW_OUTCOME_##id,
    SW_OUTCOMES(SW_REPORT_X_)
#undef SW_REPORT_X_
    /* not ended yet: counted up to the report's time */
    SW_ATT_RUNNING = SW_N_OUTCOMES,
} sw_report_outcome;

/* The outcome's word (sw_outcome_name), or the running run state's for
 * SW_ATT_RUNNING; never NULL ("?" outside the enum). */
const char *sw_report_outcome_name(sw_report_outcome o);

typedef struct {
    size_t run;        /* its run, in sw_report_data.runs */
    double start, end; /* unix seconds */
    sw_report_outcome outcome;
    double gpu;          /* GPUs held: devices x share, MIG slices as
                            their fraction of their GPU; 0: CPU only */
    char *devices;       /* runs.gpus JSON of the attempt; NULL */
    bool has_first_step; /* attempts.first_step: the first step it
                            reported, stored or not (schema 11) */
    int64_t first_step;
    bool has_queued; /* attempts.queued_seconds (schema 13) */
    double queued;   /* seconds its job waited in Slurm's queue before
                        `start`: not run time, no GPU held */
} sw_report_attempt;

typedef struct {
    char *id;
    sw_run_state state;
    bool replaced;  /* stopped by a PBT exploit: its place went on in
                       another run, from a better checkpoint */
    bool target;    /* canceled because a run reached the target */
    bool has_value; /* runs.value: the run's value of the metric */
    double value;
} sw_report_run;

/* One value of the sweep's metric, as it arrived. */
typedef struct {
    size_t run;
    int64_t step; /* -1: reported without one */
    double value; /* finite */
    double time;
} sw_report_point;

typedef struct {
    char *sweep_id;
    char *metric; /* NULL: the sweep has none */
    bool maximize;
    sw_report_run *runs;
    size_t n_runs;
    sw_report_attempt *attempts; /* grouped by run, each run's in order */
    size_t n_attempts;
    sw_report_point *points; /* in the order they arrived */
    size_t n_points;
    double gpus;       /* the inventory in GPUs, each held whole (a GPU in
                          MIG mode too); < 0: none recorded */
    double mig_unused; /* of those, the GPUs' worth no MIG slice covers
                          (2/7 of a GPU split 3g + 1g + 1g) */
    double util;       /* mean utilisation of gpu_samples, percent; NaN: none */
    double price;      /* USD per GPU-hour; < 0: not given */
    sw_budget budget;  /* the sweep file's `budget:`; zeros: none */
} sw_report_data;

void sw_report_data_dispose(sw_report_data *d);

/* The figures; NaN stands for null (not defined for this sweep). */
typedef struct {
    double start, end; /* the first attempt's start, the last one's end */
    double wall_seconds;
    double gpus;
    double gpu_seconds_capacity, gpu_seconds_busy, gpu_seconds_idle;
    double gpu_seconds_mig_unused; /* of the idle: MIG capacity no slice
                                      covers, for the whole wall time */
    double occupancy;
    double gpu_seconds_saved_by_stopping, gpu_seconds_lost_to_failures;
    double trial_seconds, trial_seconds_saved_by_stopping,
        trial_seconds_lost_to_failures;
    double queue_seconds; /* attempts' waits in Slurm's queue, summed; NaN:
                             no attempt waited in one */
    double time_to_best_seconds, best_value;
    double mean_gpu_utilization;
    double cost, cost_per_finished_run;
    double budget_spent; /* the most spent of the budget's limits, as a
                            fraction of it; NaN: no budget */
    size_t runs, finished, stopped, failed, attempts, failed_attempts;
    size_t replaced; /* of the stopped, by PBT's exploits */
} sw_report;

/* Computes every figure of `d`. This function can't fail. */
void sw_report_compute(sw_report *out, const sw_report_data *d);

/* Reads sweep `key` (NULL: the newest) into *out: its runs, every
 * attempt (the attempts table; a run's last attempt from its own row
 * where the table has none, a running one up to `now`), its metric's
 * values and gpu_samples. `price` < 0: none. */
int sw_report_load(sw_store *st, const char *key, double price, double now,
                   sw_report_data *out);

/* The figures as one JSON object (docs/report.md), with the sweep's id. */
void sw_report_write_json(sw_buf *b, const sw_report_data *d,
                          const sw_report *r);
/* A duration for people in s, min or h: "45.2 s", "12.5 min", "3.20 h"
 * for the table; with `short_form`, three digits ("45 s", "3.2 h"), for
 * the plot's labels. */
void sw_report_put_duration(sw_buf *b, double s, bool short_form);
/* The figures as a short table for people. */
void sw_report_write_text(sw_buf *b, const sw_report_data *d,
                          const sw_report *r);
/* An SVG of the sweep (report_svg.c): a lane per device, a bar per
 * attempt, and the best value so far. */
void sw_report_write_svg(sw_buf *b, const sw_report_data *d,
                         const sw_report *r);

#endif
