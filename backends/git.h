/*
 * git.h - the git adapter: what code a run starts with, and getting that
 * code back. The only module that talks to libgit2.
 *
 * A capture records the repository's HEAD, branch, remote and whether the
 * work tree is dirty. When it is, the capture writes a snapshot commit of
 * the work tree exactly as it is (untracked files that are not ignored
 * included, ignored files and files over a size limit left out), with HEAD
 * as its parent, and keeps it reachable under a ref of our own,
 * refs/sweep/.... The user's index file, HEAD, branches, stash and work
 * tree are never written: the snapshot is built in a private in-memory
 * index, and the only things added to the repository are objects and
 * refs/sweep/ refs.
 *
 * Paths given as `exclude` at open (the sweep home, when it lies in the
 * work tree) are invisible: never scanned, never in a snapshot, a patch
 * or the dirty flag, whether untracked or tracked.
 *
 * Repeated captures are cheap: the handle keeps the snapshot's index and
 * the stat data of every file it hashed, so an unchanged file is not read
 * again, and an unchanged tree gives back the previous snapshot.
 *
 * Ownership: a sw_git is the caller's, freed with sw_git_free. A
 * sw_git_state is in caller memory (sw_git_state_dispose frees its
 * strings); every string in it belongs to it. Commit and tree ids are 40
 * hex digits. Not thread-safe: one handle, one thread.
 */
#ifndef SW_GIT_H
#define SW_GIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct sw_git sw_git;

/* 10 MiB: working-tree files larger than this are left out of snapshots. */
#define SW_GIT_MAX_FILE_DEFAULT (10u * 1024u * 1024u)

typedef struct {
    unsigned int version;
    uint64_t max_file_size; /* bytes; 0: SW_GIT_MAX_FILE_DEFAULT */
    /* Version 2: paths (files or folders) that are never part of a
     * snapshot, a patch or the dirty flag, and are not even scanned: the
     * sweep home. Each absolute (one outside the work tree, or the work
     * tree itself, is not used) or relative to the work tree's root;
     * copied at open. */
    const char *const *exclude;
    size_t n_exclude;
    /* Version 3: gitignore patterns for untracked files that are never
     * copied into a snapshot or a patch, as if ignored (they do not make
     * the tree dirty either): files that hold secrets. */
    const char *const *ignore;
    size_t n_ignore;
} sw_git_opts;

#define SW_GIT_OPTS_VERSION 3
/* clang-format off */
#define SW_GIT_OPTS_INIT {SW_GIT_OPTS_VERSION, 0, NULL, 0, NULL, 0}
/* clang-format on */

/* A submodule, at the commit its work tree has checked out. */
typedef struct {
    char *path;   /* relative to the repository's root */
    char *commit; /* checked out; else the one recorded; NULL: none */
    bool dirty;   /* it has changes of its own, which no snapshot holds */
} sw_git_submodule;

/* A working-tree file a snapshot left out. */
typedef struct {
    char *path;
    uint64_t size;
    const char *why; /* "over the size limit", "unreadable"; static */
} sw_git_skipped;

typedef struct {
    char *root;   /* the work tree's absolute path, no trailing '/' */
    char *head;   /* HEAD's commit; NULL: no commit yet */
    char *branch; /* HEAD's branch ("main"); NULL when detached */
    bool detached;
    char *remote;       /* origin's URL (else the first remote's), without
                           credentials; NULL: no remote */
    bool dirty;         /* the work tree differs from HEAD: tracked changes,
                           untracked files, files left out, dirty submodules */
    char *commit;       /* the code: the snapshot if any, else HEAD; NULL for a
                           repository with no commit and no file */
    char *tree;         /* the tree of `commit`; NULL when commit is */
    char *snapshot;     /* the snapshot commit; NULL when the tree equals
                           HEAD's */
    char *snapshot_ref; /* the ref that keeps it; NULL when no snapshot */
    bool snapshot_new;  /* false: this capture reused the last one */
    char *patch;        /* the snapshot against HEAD, as `git diff` prints it
                           (binary files marked, not included); NULL when no
                           snapshot */
    size_t patch_len;
    sw_git_skipped *skipped;
    size_t n_skipped;
    sw_git_submodule *submodules;
    size_t n_submodules;
} sw_git_state;

/* Opens the repository whose work tree holds `path` (a file or a folder,
 * searched upwards). SW_ENOTFOUND, with a message, when there is none or
 * it has no work tree (bare); `opts` may be NULL. */
int sw_git_open(sw_git **out, const char *path, const sw_git_opts *opts);

/* Opens the repository of the first path of `paths` (n of them; NULL
 * entries skipped) that is inside one: the program's path first, then the
 * current folder, for a program outside the current repository.
 * SW_ENOTFOUND when none is. */
int sw_git_open_first(sw_git **out, const char *const *paths, size_t n,
                      const sw_git_opts *opts);

/* Frees the handle; accepts NULL. */
void sw_git_free(sw_git *g);

/* The work tree's absolute path (borrowed). */
const char *sw_git_root(const sw_git *g);

/* Records the state of the repository into *out (initialized here; dispose
 * it). When the tree is dirty and differs from the last snapshot of this
 * handle, writes a new snapshot commit and keeps it under
 * "<ref_prefix>/<commit id>"; ref_prefix must start with "refs/sweep/". */
int sw_git_capture(sw_git *g, const char *ref_prefix, sw_git_state *out);

/* Sets *changed when the work tree (or HEAD) differs from the last
 * capture's; true before any capture. Costs one status of the work tree. */
int sw_git_changed(sw_git *g, bool *changed);

/* Writes the files of `commit` (a snapshot or any commit, by id) into
 * `dir`, byte for byte, executables 0755, symbolic links as links;
 * submodules are written from their own repository when it has their
 * commit, else left as empty folders. `dir` is created, and must not exist
 * or be empty. */
int sw_git_export(sw_git *g, const char *commit, const char *dir);

/* Removes the credentials from a remote URL: "user:password@" and tokens
 * of http(s) URLs (user info, query), the password of other URLs. Returns
 * a new string. */
char *sw_git_url_strip(const char *url);

/* Frees the strings of *st and zeroes it; accepts NULL. */
void sw_git_state_dispose(sw_git_state *st);

#endif
