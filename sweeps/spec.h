/*
 * spec.h - the in-memory sweep: what a sweep file means, once validated.
 *
 * A spec is built only by the loader (load.c), which refuses an invalid
 * file with every problem listed; a spec that exists is valid, so the
 * search and the engine never re-check it. The spec owns everything it
 * points to. Parameters are kept flat: nested parameters become leaves
 * with a path ("optimizer", "lr"), in W&B's order (keys sorted at every
 * level, depth first).
 */
#ifndef SW_SPEC_H
#define SW_SPEC_H

#include <stdbool.h>
#include <stdint.h>

#include "sweeps/buf.h"
#include "sweeps/diag.h"
#include "sweeps/value.h"

typedef enum {
    SW_METHOD_GRID,
    SW_METHOD_RANDOM,
    SW_METHOD_BAYES,
    SW_METHOD_TPE,   /* extension: tree-structured Parzen estimator */
    SW_METHOD_SOBOL, /* extension: scrambled Sobol sequence */
    SW_METHOD_PBT,   /* extension: population-based training (`pbt:`) */
    SW_METHOD__COUNT
} sw_method;

typedef enum {
    SW_DIST_CONSTANT,
    SW_DIST_CATEGORICAL, /* `values`, optionally with `probabilities` */
    SW_DIST_INT_UNIFORM,
    SW_DIST_UNIFORM,
    SW_DIST_Q_UNIFORM,
    SW_DIST_LOG_UNIFORM, /* min/max are exponents of e */
    SW_DIST_LOG_UNIFORM_VALUES,
    SW_DIST_Q_LOG_UNIFORM,
    SW_DIST_Q_LOG_UNIFORM_VALUES,
    SW_DIST_INV_LOG_UNIFORM,
    SW_DIST_INV_LOG_UNIFORM_VALUES,
    SW_DIST_NORMAL,
    SW_DIST_Q_NORMAL,
    SW_DIST_LOG_NORMAL,
    SW_DIST_Q_LOG_NORMAL,
    SW_DIST_BETA,
    SW_DIST_Q_BETA,
    SW_DIST__COUNT
} sw_dist;

/* The name of a method as sweep files spell it ("grid"). */
const char *sw_method_name(sw_method m);

/* W&B's name of a distribution ("q_log_uniform_values"). */
const char *sw_dist_name(sw_dist d);
/* True for the distributions a grid can enumerate. */
bool sw_dist_is_discrete(sw_dist d);

typedef struct {
    char **path;  /* key components, outermost first */
    size_t depth; /* number of components (1 when not nested) */
    char *name;   /* the components joined with '.', for messages */
    sw_dist dist;
    sw_value *value;   /* SW_DIST_CONSTANT */
    sw_value **values; /* SW_DIST_CATEGORICAL; repeated values collapsed */
    size_t n_values;
    double *probs;   /* NULL, or one probability per value (sum 1) */
    double min, max; /* as numbers; for int_uniform also imin/imax */
    int64_t imin, imax;
    double mu, sigma, q, a, b; /* W&B defaults: 0, 1, 1, 1, 1 */
    bool q_int;                /* q is an integer: q-distributions yield ints */
    int line, col;             /* where the parameter was declared */
} sw_param;

typedef enum { SW_GOAL_MINIMIZE, SW_GOAL_MAXIMIZE } sw_goal;

typedef struct {
    char *name; /* NULL when the sweep has no metric */
    sw_goal goal;
    bool has_target;
    double target;
    char *impute; /* NULL, or W&B's impute setting */
    char *impute_while_running;
} sw_metric;

/* The stopping rules of `early_terminate` (docs/stopping.md). */
typedef enum {
    SW_STOP_NONE,      /* no early_terminate */
    SW_STOP_HYPERBAND, /* W&B's */
    SW_STOP_ASHA,      /* extension: asynchronous successive halving */
    SW_STOP_MEDIAN,    /* extension: the median stopping rule */
} sw_stop_rule;

typedef struct {
    char *type; /* NULL when absent; "hyperband", "asha" or "median" */
    sw_stop_rule rule;
    int64_t min_iter, max_iter; /* 0 when absent */
    int64_t s;                  /* hyperband; -1 when absent */
    double eta;                 /* default 3 */
    bool strict;                /* hyperband; default true, as W&B */
    int64_t warmup;             /* median; default 0 */
    int64_t min_runs;           /* median; default 3 */
    bool promote;               /* asha: pause at rungs and promote
                                   (promote.h); needs max_iter */
    int64_t brackets;           /* asha with promote: Hyperband's
                                   brackets; default 1 */
    bool extrapolate;           /* asha with promote: rank a rung's runs
                                   by their curves' value at max_iter
                                   (search/extrapolate.h); default off */
    bool drain;                 /* asha with promote: promote paused runs
                                   past the quota into devices that would
                                   idle once nothing new may start
                                   (docs/stopping.md); default on */
    double grace; /* seconds from the stop answer to SIGTERM; default 10 */
} sw_early_terminate;

/* `pbt:` (method: pbt; docs/search.md): a population trained in rounds
 * of `interval` iterations up to max_iter; at each round the bottom
 * `quantile` copy a top member's checkpoint and perturb its parameters.
 * Valid once loaded: population >= 2, interval >= 1, max_iter >
 * interval, 0 < quantile <= 0.5, factors > 0 (at least one), 0 <=
 * resample_probability <= 1. */
typedef struct {
    int64_t population;
    int64_t interval;
    int64_t max_iter;
    double quantile; /* default 0.25 */
    double *factors; /* perturb.factors; default 0.8, 1.2 */
    size_t n_factors;
    double resample_probability; /* perturb.resample_probability; 0.25 */
} sw_pbt_spec;

/* The largest population `pbt:` takes, and the defaults of its keys. */
#define SW_PBT_MAX_POPULATION 4096
#define SW_PBT_DEFAULT_QUANTILE 0.25
#define SW_PBT_DEFAULT_RESAMPLE 0.25

/* Defaults of the extension keys (docs/sweep-file.md). */
#define SW_STOP_DEFAULT_GRACE 10.0
#define SW_STOP_DEFAULT_MIN_RUNS 3

/* What one trial asks for (docs/gpus.md). Without `gpus` and without
 * memory, a trial on a machine with GPUs gets one whole device. */
typedef struct {
    bool has_gpus;         /* `gpus` was given */
    double gpus;           /* a fraction below 1 (shared), or whole GPUs */
    int64_t gpu_memory_mb; /* per device, in MiB; 0: no requirement */
    bool gpu_memory_auto;  /* `gpu_memory: auto`: learned from a trial */
} sw_resources;

/* Whether a trial asks for a GPU in so many words (gpus above 0, or GPU
 * memory): one that does not runs without GPUs where there are none. */
bool sw_resources_ask_gpu(const sw_resources *res);

/* `budget:` (docs/sweep-file.md): no trial starts once the sweep has
 * spent any one of these, counted as `sweep report` counts them; 0: no
 * limit of that kind. */
typedef struct {
    double gpu_hours;   /* attempts' durations x the GPU share they held */
    double trial_hours; /* attempts' durations */
    double hours;       /* wall time since the sweep's first attempt */
} sw_budget;

/* The most spent of the budget's limits, as a fraction of that limit
 * (1 or more: it is spent), given GPU-seconds, trial-seconds and
 * seconds of wall time spent; *unit and *limit (each may be NULL) say
 * which limit that is ("GPU-hours", 1000). NaN, *unit NULL, without a
 * budget. */
double sw_budget_spent(const sw_budget *b, double gpu_s, double trial_s,
                       double wall_s, const char **unit, double *limit);
/* Appends the limits, as "1000 GPU-hours, 48 hours" (nothing without
 * any). */
void sw_budget_describe(sw_buf *out, const sw_budget *b);

typedef struct {
    char *file;    /* the file it was loaded from */
    char *source;  /* the file's text, as loaded */
    sw_value *doc; /* the whole document as read */
    char *program; /* NULL when absent */
    sw_method method;
    char *name, *description, *project, *entity;
    sw_metric metric;
    sw_early_terminate early_terminate;
    char **command; /* NULL: the default command */
    size_t n_command;
    int64_t run_cap;  /* 0: no cap */
    sw_param *params; /* leaves, in W&B's order */
    size_t n_params;
    /* extensions */
    int64_t parallel; /* 0: not set */
    int64_t retries;
    double timeout;    /* seconds; 0: none */
    int64_t log_limit; /* bytes each of a run's logs may hold; 0: not set
                          (SW_LOG_LIMIT_DEFAULT); SW_LOG_UNLIMITED: none */
    /* the most of an ended attempt's output read for its @metrics lines;
     * 0: not set (SW_METRICS_BACKLOG_DEFAULT); SW_LOG_UNLIMITED: no bound */
    int64_t metrics_backlog;
    bool has_seed;
    uint64_t seed;
    sw_resources resources;
    char *gpus; /* NULL, or the declared GPUs (`gpus:`, sweeps/gpus.h) */
    bool code_snapshot; /* `code: snapshot`: trials run from a checkout of
                           the sweep's code, not the work tree */
    char **slurm_args;  /* `slurm:` as sbatch options, NULL-terminated;
                           NULL when absent (spec_slurm.c) */
    size_t n_slurm_args, cap_slurm_args;
    sw_budget budget;
    double sim_fail_rate;  /* `sim: {fail_rate}`: --backend sim's failure
                              probability per attempt; 0: none */
    double sim_startup;    /* `sim: {startup}`: seconds from a launch to a
                              trial's first step; < 0: the default */
    double sim_read_delay; /* `sim: {read_delay}`: seconds from a line's
                              print to its reading; < 0: the default */
    sw_pbt_spec pbt;       /* `pbt:`; read only with method: pbt */
    /* `multi_fidelity: false`: bayes and tpe fit on the ended runs only,
     * not on rung values (docs/search.md) */
    bool no_multi_fidelity;
} sw_spec;

/* The largest sweep file sw_spec_load reads (docs/sweep-file.md). */
#define SW_SPEC_MAX_BYTES (16 * 1024 * 1024)

/* Reads and validates the sweep file at `path` (YAML or JSON): the schema
 * and what the method needs of the parameters (the command is checked
 * apart, by sw_command_check). On success *out is a valid spec; on
 * failure (SW_EINVALID or SW_EIO) every problem is in `diags` (which also
 * gets warnings on success). A path that is not a regular file, or one
 * over SW_SPEC_MAX_BYTES, is SW_EINVALID, refused without reading it. */
int sw_spec_load(sw_spec **out, const char *path, sw_diags *diags);
/* The same, from text in memory; `name` is shown in messages. */
int sw_spec_parse(sw_spec **out, const char *name, const char *text, size_t len,
                  sw_diags *diags);
void sw_spec_free(sw_spec *spec);

/* One sbatch option as the `slurm:` section's `extra` or `sweep run
 * --slurm-arg` gives it ("--opt=value", "--opt value", "-p gpu", with or
 * without a leading "#SBATCH"), as one word: a new string, or NULL
 * (SW_EINVALID, message set) for what is not an option or is one that
 * sweep sets itself (--job-name, --output...). */
char *sw_spec_slurm_arg(const char *text);

/* Builds the nested parameter map of a trial from one value per leaf
 * (values[i] for spec->params[i]); consumes the values and frees the
 * array's elements, not the array. */
sw_value *sw_spec_nest(const sw_spec *spec, sw_value **values);

/*
 * Internal to sweeps/: how the loader (load.c) hands a document to the
 * validator (spec.c). A value carries where it was read; a mapping's
 * value is also told where its key was written, so a problem with a key
 * points at the key. `keys` is sorted with sw_spec__key_cmp.
 */
typedef struct {
    const sw_value *val; /* a value of a mapping in spec->doc */
    int line, col;       /* where its key was written */
} sw_spec__key;

typedef struct {
    sw_spec__key *items;
    size_t len, cap;
} sw_spec__keys;

/* qsort/bsearch order of sw_spec__key: by the address of `val`. */
int sw_spec__key_cmp(const void *a, const void *b);
/* Validates spec->doc (spec->file and spec->source set) into the rest of
 * `spec`; every problem goes to `diags`. The spec is valid when no error
 * was added. */
void sw_spec__build(sw_spec *spec, const sw_spec__keys *keys, sw_diags *diags);

/* What a run's log may hold when the sweep file sets no `log_limit`. */
#define SW_LOG_LIMIT_DEFAULT ((int64_t)1 << 30)
#define SW_LOG_UNLIMITED INT64_MAX /* `log_limit: 0` */
/* What of an ended attempt's output is read for its @metrics lines when
 * the sweep file sets no `metrics_backlog` (docs/metrics.md). */
#define SW_METRICS_BACKLOG_DEFAULT ((int64_t)4 << 20)

#endif
