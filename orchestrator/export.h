/*
 * export.h - a sweep's runs, read from the store and handed to an
 * exporter (backends/wandb.h), with what was sent recorded back in the
 * store after every accepted request (the `exports` table), so that an
 * export can be run again, or stopped and continued, at any time.
 */
#ifndef SW_EXPORT_H
#define SW_EXPORT_H

#include <stdbool.h>
#include <stdint.h>

#include "backends/wandb.h"
#include "orchestrator/store/store.h"

typedef struct {
    const char *sweep;       /* id, unique id prefix, or name */
    const char *const *runs; /* only these runs; NULL: all of them */
    size_t n_runs;
    sw_wandb_opts wandb; /* entity and project required but in a dry run;
                            dry_run: print only, and record nothing */
    bool progress;       /* redraw a progress line on stderr */
    bool resend;         /* forget what earlier exports recorded: a new
                            W&B sweep, and each run sent again from what
                            W&B says it holds */
} sw_export_opts;

typedef struct {
    int64_t runs;     /* runs of the sweep considered */
    int64_t sent;     /* runs that had something new to send */
    int64_t rows;     /* history lines sent */
    int64_t requests; /* HTTP requests made, retries included */
    char *sweep_url;  /* where to see it (caller frees); NULL: none */
    char *remote_id;  /* W&B's sweep id (caller frees); NULL: none */
    /* what a dry run found (zeros otherwise) */
    int64_t new_runs; /* runs no export had sent: W&B runs it would make */
    bool new_sweep;   /* no export had made the W&B sweep: it would */
    int64_t bytes;    /* the request bodies' bytes */
    int64_t files;    /* run files it would upload */
    char *dest;       /* "BASE/ENTITY/PROJECT" (caller frees); NULL */
    bool placeholder; /* the entity or project was not given: ENTITY,
                         PROJECT stand for them */
} sw_export_stats;

/* Exports the sweep's runs (the writer store `st`) to W&B. Stats are set
 * as far as the export went, also on failure; the caller frees them
 * with sw_export_stats_dispose. */
int sw_export_wandb(sw_store *st, const sw_export_opts *opts,
                    sw_export_stats *stats);
void sw_export_stats_dispose(sw_export_stats *stats);

#endif
