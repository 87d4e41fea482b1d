/*
 * provenance.h - ties a sweep, and every attempt of each of its runs, to
 * the exact code it started with (docs/provenance.md), through the git
 * adapter.
 *
 * Provenance is never a reason for a sweep not to run: outside a git
 * repository, or when git fails, `sweep` says so once on stderr and the
 * runs go on with no git facts recorded.
 */
#ifndef SW_PROVENANCE_H
#define SW_PROVENANCE_H

#include <stdbool.h>

#include "orchestrator/engine/engine_internal.h"

/* At sweep start (`capture`) or resume: opens the repository of the
 * sweep's program, else of the current folder, into e->prov. With
 * `capture`, records the sweep's git facts in e->sweep (git_commit,
 * git_dirty, git). Leaves e->prov NULL, after one warning, outside a
 * repository, and silently when $SWEEP_GIT is "off". Can't fail. */
void sw_provenance_start(sw_engine *e, bool capture);

/* Prints the sweep's code on stdout, one line ("sweep ID: code ..."), and
 * the files its snapshot left out on stderr; nothing outside git. */
void sw_provenance_report(const sw_engine *e);

/* Before each attempt of run `r` starts: scans the work tree again (only
 * files whose stat changed are read), takes a new snapshot when the tree
 * changed since the last one, and fills r->git_commit, r->git_dirty and
 * r->git; the patch goes to runs/<id>/diff.patch. Nothing is recorded
 * outside a repository. Returns SW_OK: a failure is a warning (once). */
int sw_provenance_run(sw_engine *e, sw_run_rec *r);

/* Opt-in, at sweep start after sw_provenance_start: writes the sweep's
 * code into $SWEEP_HOME/code/<sweep id> and points e->sweep.cwd at the
 * same folder in it, so trials run the recorded code whatever is edited
 * meanwhile, and every run records the sweep's code. Does nothing for a
 * resumed sweep that starts there (it is frozen already). SW_EINVALID,
 * with a message, when no code was recorded or trials start outside the
 * repository; SW_EIO when the export fails. */
int sw_provenance_freeze(sw_engine *e);

/* Frees the engine's provenance state; accepts NULL. */
void sw_provenance_free(sw_provenance *p);

#endif
