/*
 * wandb.h - the Weights & Biases exporter: a sweep's runs written to W&B
 * over its own API (GraphQL and file_stream), as W&B's clients write them.
 *
 * The exporter knows nothing of the store: its caller hands it plain data
 * (the sweep file's text, each run's parameters, history rows, state and
 * git facts) together with what earlier exports already sent, and gets
 * back, through a callback after every request W&B accepted, how far the
 * run has been sent. The caller records that, so an export can be stopped
 * at any moment and continued: no history row is sent twice or skipped.
 *
 * The API key comes from WANDB_API_KEY or ~/.netrc. It is never stored,
 * logged, printed, or put in an error message; a dry run prints requests
 * with the key redacted and sends nothing.
 */
#ifndef SW_WANDB_H
#define SW_WANDB_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "sweeps/error.h"

/* W&B's API when WANDB_BASE_URL is not set. */
#define SW_WANDB_DEFAULT_BASE "https://api.wandb.ai"
/* The most bytes one request body may hold (W&B refuses larger). */
#define SW_WANDB_MAX_REQUEST (10 * 1024 * 1024)

typedef struct sw_wandb sw_wandb;

#define SW_WANDB_OPTS_VERSION 1

typedef struct {
    unsigned version;
    const char *base_url; /* NULL: $WANDB_BASE_URL, else the default */
    const char *entity;   /* required */
    const char *project;  /* required */
    FILE *dry_run;        /* non-NULL: print requests here, send nothing */
    uint64_t seed;        /* of the retry jitter */
    int max_attempts;     /* per request; 0: 10 */
    double backoff_s;     /* the first retry's wait; 0: 0.5 s */
    double timeout_s;     /* per request; 0: 300 s */
    size_t max_request;   /* bytes per body; 0: SW_WANDB_MAX_REQUEST */
    FILE *notices;        /* non-NULL: a line here before each retry */
} sw_wandb_opts;

#define SW_WANDB_OPTS_INIT                                                     \
    {                                                                          \
        SW_WANDB_OPTS_VERSION, NULL, NULL, NULL, NULL, 0, 0, 0, 0, 0, NULL     \
    }

/* Opens a session: reads the key (not needed for a dry run) and checks
 * the options. SW_EINVALID with a one-line message when something is
 * missing. */
int sw_wandb_open(sw_wandb **out, const sw_wandb_opts *opts);
/* Accepts NULL. */
void sw_wandb_close(sw_wandb *w);

/* The API's base URL, without a trailing slash. Borrowed. */
const char *sw_wandb_base_url(const sw_wandb *w);
/* Where a person sees the sweep `sweep_id` (W&B's id) in a browser; the
 * caller frees. */
char *sw_wandb_sweep_url(const sw_wandb *w, const char *sweep_id);
/* HTTP requests made so far, retries included (printed ones in a dry
 * run). */
int64_t sw_wandb_requests(const sw_wandb *w);
/* In a dry run, the bytes of the request bodies printed so far, and how
 * many of the requests were file uploads; zeros otherwise. */
void sw_wandb_dry_totals(const sw_wandb *w, int64_t *bytes, int64_t *files);

/* W&B's run id for our run `run_id`: 8 characters of [a-z0-9], the same
 * every time, so a second export updates the same run. `out` holds 9. */
void sw_wandb_run_name(char out[9], const char *run_id);

/* Creates (node NULL) or updates (node: W&B's GraphQL id of it) a
 * sweep. `config` is the sweep file's text (YAML or JSON); the exporter
 * adds `controller: {type: local}` so W&B schedules nothing. `state` is
 * NULL or "FINISHED". *out_name gets W&B's sweep id (the one in its URLs)
 * and *out_node its GraphQL id; both may be NULL, the caller frees. */
int sw_wandb_upsert_sweep(sw_wandb *w, const char *node, const char *config,
                          const char *display_name, const char *state,
                          char **out_name, char **out_node);

/* One metric value of a history row; has_value false is a NaN. */
typedef struct {
    const char *name;
    bool has_value;
    double value;
} sw_wandb_value;

/* One history line: the values one step reported. */
typedef struct {
    int64_t step; /* the trainer's own step; -1: it gave none */
    double time;  /* unix seconds it was received */
    const sw_wandb_value *values;
    size_t n_values;
} sw_wandb_row;

/* A run, as plain data; every string may be NULL unless said. */
typedef struct {
    const char *id;      /* ours, required: shown as the run's name */
    const char *sweep;   /* W&B's sweep id */
    const char *group;   /* W&B's group */
    const char *params;  /* JSON object, required */
    const char *commit;  /* the git commit it ran */
    const char *repo;    /* the remote's URL, credentials removed */
    const char *program; /* the trial's program */
    const char *host;    /* where it ran */
    const char *patch;   /* path of its diff.patch */
    const char *argv;    /* JSON array: its command line */
    const char *tag;     /* one tag: its run state, as the store has it */
    char *const *tags;   /* the run's own tags (`sweep tag`), n_tags */
    size_t n_tags;
    const char *notes; /* its note (`sweep note`) */
    double started_at; /* unix seconds: _runtime counts from it */
    bool ended;        /* false: still running, sent as running */
    int exit_code;     /* when ended */
    bool stopped;      /* ended early (a stopping rule, `sweep stop`): W&B is
                          told it stopped the run (StopRun) before its end */
    const sw_wandb_row *rows; /* its whole history, in order */
    size_t n_rows;
    const sw_wandb_value *summary; /* each metric's last value */
    size_t n_summary;
    /* method pbt: the run's lineage, sent in its config as "pbt":
     * {"member", "parent" (our id of the run its checkpoint came from;
     * W&B's run name of it, "parent_run"), "parent_iter"}; not sent
     * when a parameter is called pbt. parent NULL: it started from
     * scratch. */
    bool pbt;
    int64_t member;
    const char *parent;
    int64_t parent_iter;
} sw_wandb_run;

/* What has been sent of one run. The caller gives what earlier exports
 * recorded (all zero the first time); the exporter updates it after each
 * request W&B accepted and calls the progress callback with it. */
typedef struct {
    int64_t history;   /* history lines W&B holds */
    int64_t summary;   /* history lines the sent summary covers; -1 none */
    bool ended;        /* the run's end (complete, exitcode) was sent */
    bool patch;        /* diff.patch was uploaded */
    bool meta;         /* wandb-metadata.json was uploaded */
    int64_t requests;  /* made for this run by this export */
    int64_t rows_sent; /* history lines sent by this export */
    bool labels;       /* the run's tags and notes were sent as they are */
} sw_wandb_mark;

/* Called after each accepted request with the run's new mark; a non-zero
 * answer stops the export and is returned as is. */
typedef int (*sw_wandb_mark_fn)(void *ctx, const sw_wandb_mark *mark);

/* True when `mark` already holds everything of `run`: exporting it would
 * send nothing. */
bool sw_wandb_run_done(const sw_wandb_run *run, const sw_wandb_mark *mark);

/* Sends what `mark` says W&B lacks of `run`: the run itself (config, git
 * facts, sweep), its files (wandb-metadata.json, diff.patch), the history
 * lines from the mark on (in requests under the size limit), the
 * summary, and its end (a stopped run's StopRun first). A run already
 * done sends nothing. */
int sw_wandb_export_run(sw_wandb *w, const sw_wandb_run *run,
                        sw_wandb_mark *mark, sw_wandb_mark_fn fn, void *ctx);

#endif
