/*
 * reproduce.h - giving back the code a run started with, from the git
 * facts the store kept for it (docs/provenance.md). The part of
 * provenance that the command-line tool needs, apart from the engine:
 * nothing here needs a running sweep. Implemented in provenance.c.
 */
#ifndef SW_REPRODUCE_H
#define SW_REPRODUCE_H

/* Opens the repository named by `git_json`'s "root" (a run's or a sweep's
 * git JSON) and writes the files of its "commit" into `dir`, which is
 * created and must not exist or be empty. SW_ENOTFOUND when no code was
 * recorded (git_json NULL) or the repository no longer holds it,
 * SW_EINVALID when the JSON names no commit or `dir` is not empty, SW_EIO
 * when a file cannot be written; each with a message. */
int sw_provenance_export(const char *git_json, const char *dir);

#endif
