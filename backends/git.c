/*
 * git.c - the git adapter over libgit2: captures of a repository's state,
 * snapshot commits of dirty work trees, and exports of a commit's files.
 * The only file of sweep that includes <git2.h>.
 *
 * A scan builds the tree of the work tree as it is in a private index
 * (git_index_new, never the repository's index file): HEAD's tree, then,
 * for every path that `git status` reports (tracked changes, staged
 * changes, untracked files that are not ignored), the work tree's version.
 * Files are hashed raw, without filters, so an export gives back the
 * bytes the trial saw. The private index is kept between scans together
 * with the stat data of each file it hashed, so a later scan hashes only
 * files whose stat changed, and rewrites only the trees above them; an
 * entry written within two seconds of its file's mtime is smudged (its
 * mtime zeroed) so that a write in the same clock tick is never missed.
 *
 * Excluded paths (the sweep home) are hidden from every scan twice over:
 * an in-memory ignore rule of the handle's repository object (never
 * written to .gitignore or info/exclude) keeps `git status` from walking
 * them at all, and the plan drops any path under them that status still
 * reports (tracked files, which ignore rules do not hide).
 *
 * Nothing here writes the user's index, HEAD, branches, stash or work
 * tree: the repository gains blobs, trees, snapshot commits, and refs
 * under refs/sweep/ that keep those commits from garbage collection.
 */
#include "backends/git.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <git2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "sweeps/buf.h"
#include "sweeps/error.h"

#define REF_ROOT "refs/sweep/"
#define EMPTY_TREE "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
#define RACY_SECS 2

struct sw_git {
    git_repository *repo;
    char *root;
    uint64_t max_file;
    char **exclude; /* relative to root, no trailing '/'; never scanned */
    size_t n_exclude, cap_exclude;
    git_index *idx;   /* HEAD's tree with the work tree's changes */
    git_oid idx_head; /* the commit idx started from; zero: none */
    bool idx_ready;
    git_tree *head_tree; /* idx_head's tree; NULL when unborn */
    char **changed;      /* paths that differed from HEAD at the last scan */
    size_t n_changed;
    time_t scan_start;
    bool captured; /* the last capture, for sw_git_changed */
    git_oid last_head, last_tree;
    bool has_snap; /* the last snapshot, reused while unchanged */
    git_oid snap, snap_tree, snap_parent;
    char *snap_ref, *snap_patch;
    size_t snap_patch_len;
};

/* What one scan found. */
typedef struct {
    bool born;
    git_oid head, head_tree, tree;
    sw_git_skipped *skipped;
    size_t n_skipped, cap_skipped;
    sw_git_submodule *subs;
    size_t n_subs, cap_subs;
    bool subs_dirty;
} scan;

/* What to do with one path of the private index. */
enum { OP_KEEP, OP_ADD, OP_REMOVE };
typedef struct {
    int kind;
    git_index_entry e; /* e.path is borrowed */
} op;

/* ---- errors and small helpers ----------------------------------------- */

static int fail(const sw_git *g, const char *fmt, ...) SW_PRINTF(2, 3);
static int fail(const sw_git *g, const char *fmt, ...)
{
    const git_error *e = git_error_last();
    char what[256];
    va_list ap;
    int error;

    va_start(ap, fmt);
    vsnprintf(what, sizeof(what), fmt, ap);
    va_end(ap);
    error = sw_error_set(SW_ERROR, "git%s%s: %s: %s", g && g->root ? " " : "",
                         g && g->root ? g->root : "", what,
                         e && e->message ? e->message : "unknown error");
    git_error_clear();
    return error;
}

static char *hex(const git_oid *id)
{
    char b[GIT_OID_HEXSZ + 1];

    git_oid_tostr(b, sizeof(b), id);
    return sw_strdup(b);
}

static void skip(scan *s, const char *path, uint64_t size, const char *why)
{
    sw_grow(&s->skipped, &s->cap_skipped, s->n_skipped + 1,
            sizeof(*s->skipped));
    s->skipped[s->n_skipped++] = (sw_git_skipped){sw_strdup(path), size, why};
}

static void scan_dispose(scan *s)
{
    for (size_t i = 0; i < s->n_skipped; i++)
        free(s->skipped[i].path);
    for (size_t i = 0; i < s->n_subs; i++) {
        free(s->subs[i].path);
        free(s->subs[i].commit);
    }
    free(s->skipped);
    free(s->subs);
    memset(s, 0, sizeof(*s));
}

static void free_strs(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

static void clear_changed(sw_git *g)
{
    for (size_t i = 0; i < g->n_changed; i++)
        free(g->changed[i]);
    free(g->changed);
    g->changed = NULL;
    g->n_changed = 0;
}

/* ---- open and free ----------------------------------------------------- */

/* The folder itself, or the folder holding a file; NULL when absent. */
static char *dir_of(const char *path)
{
    struct stat st;
    char *d, *slash;

    if (stat(path, &st) != 0)
        return NULL;
    if (S_ISDIR(st.st_mode))
        return sw_strdup(path);
    d = sw_strdup(path);
    slash = strrchr(d, '/');
    if (!slash) {
        free(d);
        return sw_strdup(".");
    }
    slash[slash == d] = '\0';
    return d;
}

static int open_repo(sw_git *g, const char *path, const char *dir)
{
    const char *wd;
    size_t n;
    int rc = git_repository_open_ext(&g->repo, dir, 0, NULL);

    if (rc == GIT_ENOTFOUND) {
        git_error_clear();
        return sw_error_set(SW_ENOTFOUND, "%s is not in a git repository",
                            path);
    }
    if (rc < 0)
        return fail(NULL, "open %s", dir);
    wd = git_repository_workdir(g->repo);
    if (!wd)
        return sw_error_set(SW_ENOTFOUND, "%s: the repository is bare", path);
    n = strlen(wd);
    while (n > 1 && wd[n - 1] == '/')
        n--;
    g->root = sw_strndup(wd, n);
    if (git_index_new(&g->idx) < 0)
        return fail(g, "new index");
    return SW_OK;
}

/* ---- excluded paths ------------------------------------------------------ */

/* `path` below `dir` (or `dir` itself): what follows "dir/", else NULL. */
static const char *below(const char *path, const char *dir)
{
    size_t n = strlen(dir);

    if (strncmp(path, dir, n) != 0 || (path[n] != '/' && path[n] != '\0'))
        return NULL;
    return path[n] ? path + n + 1 : path + n;
}

/* `path` relative to the work tree, by name and with links resolved;
 * NULL when it is outside it. */
static char *rel_to_root(const sw_git *g, const char *path)
{
    char *real = realpath(path, NULL), *root = realpath(g->root, NULL);
    const char *rel = below(path, g->root);
    char *out = NULL;

    if (!rel && real && root)
        rel = below(real, root);
    if (rel)
        out = sw_strdup(rel);
    free(real);
    free(root);
    return out;
}

/* An ignore rule that matches exactly "/rel", glob characters escaped;
 * NULL for a name no rule can spell (a newline). */
static char *ignore_rule(const char *rel)
{
    sw_buf b = SW_BUF_INIT;

    if (strpbrk(rel, "\r\n"))
        return NULL;
    sw_buf_putc(&b, '/');
    for (const char *p = rel; *p; p++) {
        if (strchr("\\*?[ ", *p))
            sw_buf_putc(&b, '\\');
        sw_buf_putc(&b, *p);
    }
    sw_buf_putc(&b, '\n');
    return sw_buf_detach(&b);
}

/* Records one excluded path; the work tree itself and paths outside it
 * are not used. */
static int add_exclude(sw_git *g, const char *path)
{
    char *rel = path[0] == '/' ? rel_to_root(g, path) : sw_strdup(path);
    char *rule;
    size_t n;

    while (rel && strncmp(rel, "./", 2) == 0)
        memmove(rel, rel + 2, strlen(rel + 2) + 1);
    n = rel ? strlen(rel) : 0;
    while (n > 0 && rel[n - 1] == '/')
        rel[--n] = '\0';
    if (n == 0 || strcmp(rel, ".") == 0) {
        free(rel);
        return SW_OK;
    }
    sw_grow(&g->exclude, &g->cap_exclude, g->n_exclude + 1, sizeof(char *));
    g->exclude[g->n_exclude++] = rel;
    rule = ignore_rule(rel);
    if (rule && git_ignore_add_rule(g->repo, rule) < 0) {
        free(rule);
        return fail(g, "exclude %s", rel);
    }
    free(rule);
    return SW_OK;
}

/* True when `path` (relative to the work tree) is excluded. */
static bool excluded(const sw_git *g, const char *path)
{
    for (size_t i = 0; i < g->n_exclude; i++)
        if (below(path, g->exclude[i]))
            return true;
    return false;
}

/* Opens the repository holding `path`; see git.h. */
int sw_git_open(sw_git **out, const char *path, const sw_git_opts *opts)
{
    char *dir;
    sw_git *g;
    int error;

    *out = NULL;
    if (opts && (opts->version < 1 || opts->version > SW_GIT_OPTS_VERSION))
        return sw_error_set(SW_EINVALID, "git: options version %u, not %u",
                            opts->version, SW_GIT_OPTS_VERSION);
    if (!(dir = dir_of(path)))
        return sw_error_set(SW_ENOTFOUND, "%s: %s", path, strerror(errno));
    git_libgit2_init();
    g = sw_calloc(1, sizeof(*g));
    g->max_file = opts && opts->max_file_size ? opts->max_file_size
                                              : SW_GIT_MAX_FILE_DEFAULT;
    error = open_repo(g, path, dir);
    free(dir);
    for (size_t i = 0;
         !error && opts && opts->version >= 2 && i < opts->n_exclude; i++)
        if (opts->exclude[i])
            error = add_exclude(g, opts->exclude[i]);
    for (size_t i = 0;
         !error && opts && opts->version >= 3 && i < opts->n_ignore; i++)
        if (opts->ignore[i] && opts->ignore[i][0] &&
            !strchr(opts->ignore[i], '\n') &&
            git_ignore_add_rule(g->repo, opts->ignore[i]) < 0)
            error = fail(g, "ignore %s", opts->ignore[i]);
    if (error) {
        sw_git_free(g);
        return error;
    }
    *out = g;
    return SW_OK;
}

/* libgit2 stays initialised from the load of this code on: when the last
 * handle's free shut it down, it deleted its thread-local key, and the
 * error state it keeps for each other thread (the worker that captured a
 * run's code: git_error_clear() makes one) was lost, 96 bytes a thread
 * that LeakSanitizer reports at exit. Each open and free still counts. */
__attribute__((constructor)) static void hold_libgit2(void)
{
    git_libgit2_init();
}

/* Tries each path in turn; see git.h. */
int sw_git_open_first(sw_git **out, const char *const *paths, size_t n,
                      const sw_git_opts *opts)
{
    int error = sw_error_set(SW_ENOTFOUND, "no path to look for a "
                                           "repository in");

    *out = NULL;
    for (size_t i = 0; i < n; i++) {
        if (!paths[i])
            continue;
        error = sw_git_open(out, paths[i], opts);
        if (error != SW_ENOTFOUND)
            return error;
    }
    return error;
}

/* Frees the handle and everything it holds; accepts NULL. */
void sw_git_free(sw_git *g)
{
    if (!g)
        return;
    clear_changed(g);
    free_strs(g->exclude, g->n_exclude);
    git_tree_free(g->head_tree);
    git_index_free(g->idx);
    git_repository_free(g->repo);
    free(g->root);
    free(g->snap_ref);
    free(g->snap_patch);
    free(g);
    git_libgit2_shutdown();
}

/* The work tree's absolute path; borrowed from the handle. */
const char *sw_git_root(const sw_git *g)
{
    return g->root;
}

/* ---- remote URLs ------------------------------------------------------- */

static bool is_http(const char *url, size_t scheme_len)
{
    return (scheme_len == 4 && strncasecmp(url, "http", 4) == 0) ||
           (scheme_len == 5 && strncasecmp(url, "https", 5) == 0);
}

/* Strips credentials from a URL; see git.h. scp-like addresses
 * (git@host:path) and paths carry no password and are kept as they are. */
char *sw_git_url_strip(const char *url)
{
    const char *sep = strstr(url, "://"), *auth, *host, *at = NULL, *p;
    sw_buf b = SW_BUF_INIT;
    bool http;

    if (!sep)
        return sw_strdup(url);
    http = is_http(url, (size_t)(sep - url));
    auth = sep + 3;
    for (p = auth; *p && !strchr("/?#", *p); p++)
        if (*p == '@')
            at = p;
    host = at ? at + 1 : auth;
    sw_buf_put(&b, url, (size_t)(auth - url));
    if (at && !http) { /* keep the user name, drop the password */
        size_t user = strcspn(auth, ":@");
        sw_buf_put(&b, auth, user);
        sw_buf_putc(&b, '@');
    }
    sw_buf_put(&b, host, http ? strcspn(host, "?#") : strlen(host));
    return sw_buf_detach(&b);
}

static bool is_remote_url(const char *name)
{
    size_t n = strlen(name);

    return strncasecmp(name, "remote.", 7) == 0 && n > 11 &&
           strcasecmp(name + n - 4, ".url") == 0;
}

/* origin's URL, else the first remote's; NULL when there is none. Read
 * from the configuration directly: libgit2 1.5's remote API matches
 * regular expressions, and those leak (pcre2 match data). */
static char *remote_url(git_repository *repo)
{
    git_config *cfg = NULL;
    git_config_iterator *it = NULL;
    git_config_entry *e;
    char *url = NULL, *first = NULL;

    if (git_repository_config_snapshot(&cfg, repo) == 0 &&
        git_config_iterator_new(&it, cfg) == 0) {
        while (!url && git_config_next(&e, it) == 0) {
            if (!is_remote_url(e->name) || !e->value)
                continue;
            if (strcasecmp(e->name, "remote.origin.url") == 0)
                url = sw_git_url_strip(e->value);
            else if (!first)
                first = sw_git_url_strip(e->value);
        }
    }
    git_config_iterator_free(it);
    git_config_free(cfg);
    git_error_clear();
    if (url)
        free(first);
    return url ? url : first;
}

/* ---- HEAD --------------------------------------------------------------- */

/* Reads HEAD's commit and tree into *s; an unborn branch is not an
 * error. */
static int read_head(sw_git *g, scan *s)
{
    git_object *obj = NULL;
    git_commit *c;
    int rc = git_revparse_single(&obj, g->repo, "HEAD^{commit}");

    git_oid_fromstr(&s->head_tree, EMPTY_TREE);
    if (rc == GIT_ENOTFOUND || rc == GIT_EUNBORNBRANCH) {
        git_error_clear();
        s->born = false;
        return SW_OK;
    }
    if (rc < 0)
        return fail(g, "read HEAD");
    c = (git_commit *)obj;
    s->born = true;
    git_oid_cpy(&s->head, git_commit_id(c));
    git_oid_cpy(&s->head_tree, git_commit_tree_id(c));
    git_object_free(obj);
    return SW_OK;
}

/* HEAD's branch (the one an unborn HEAD names too), or detached. */
static void head_names(sw_git *g, sw_git_state *out)
{
    git_reference *h = NULL;
    const char *t;

    out->detached = git_repository_head_detached(g->repo) == 1;
    if (!out->detached && git_reference_lookup(&h, g->repo, "HEAD") == 0 &&
        (t = git_reference_symbolic_target(h)) != NULL)
        out->branch =
            sw_strdup(strncmp(t, "refs/heads/", 11) == 0 ? t + 11 : t);
    git_reference_free(h);
    git_error_clear();
}

/* Restarts the private index from HEAD's tree when HEAD moved. */
static int sync_head(sw_git *g, const scan *s)
{
    git_commit *c = NULL;
    int error = SW_OK;

    if (g->idx_ready && (s->born ? git_oid_equal(&g->idx_head, &s->head)
                                 : git_oid_is_zero(&g->idx_head)))
        return SW_OK;
    g->idx_ready = false;
    clear_changed(g);
    git_tree_free(g->head_tree);
    g->head_tree = NULL;
    memset(&g->idx_head, 0, sizeof(g->idx_head));
    if (!s->born)
        error = git_index_clear(g->idx) < 0 ? fail(g, "clear index") : SW_OK;
    else if (git_commit_lookup(&c, g->repo, &s->head) < 0 ||
             git_commit_tree(&g->head_tree, c) < 0 ||
             git_index_read_tree(g->idx, g->head_tree) < 0)
        error = fail(g, "read HEAD's tree");
    else
        git_oid_cpy(&g->idx_head, &s->head);
    git_commit_free(c);
    g->idx_ready = error == SW_OK;
    return error;
}

/* ---- planning the private index --------------------------------------- */

static bool stat_equal(const git_index_entry *e, const struct stat *st)
{
    return e->mtime.seconds != 0 &&
           e->mtime.seconds == (int32_t)st->st_mtim.tv_sec &&
           e->mtime.nanoseconds == (uint32_t)st->st_mtim.tv_nsec &&
           e->ctime.seconds == (int32_t)st->st_ctim.tv_sec &&
           e->ctime.nanoseconds == (uint32_t)st->st_ctim.tv_nsec &&
           e->file_size == (uint32_t)st->st_size &&
           e->ino == (uint32_t)st->st_ino && e->dev == (uint32_t)st->st_dev;
}

static uint32_t mode_of(const struct stat *st)
{
    if (S_ISLNK(st->st_mode))
        return GIT_FILEMODE_LINK;
    return st->st_mode & S_IXUSR ? GIT_FILEMODE_BLOB_EXECUTABLE
                                 : GIT_FILEMODE_BLOB;
}

/* Fills the entry's stat data: the cache of the next scan. A file
 * written within RACY_SECS of this scan is smudged: hashed again next
 * time, as a write in the same clock tick would not change its stat. */
static void entry_stat(sw_git *g, git_index_entry *e, const struct stat *st)
{
    e->mode = mode_of(st);
    e->file_size = (uint32_t)st->st_size;
    e->ino = (uint32_t)st->st_ino;
    e->dev = (uint32_t)st->st_dev;
    e->ctime.seconds = (int32_t)st->st_ctim.tv_sec;
    e->ctime.nanoseconds = (uint32_t)st->st_ctim.tv_nsec;
    if (st->st_mtim.tv_sec + RACY_SECS > g->scan_start)
        return;
    e->mtime.seconds = (int32_t)st->st_mtim.tv_sec;
    e->mtime.nanoseconds = (uint32_t)st->st_mtim.tv_nsec;
}

/* Plans HEAD's version of `path` (or its absence). */
static void plan_head(sw_git *g, const char *path, op *o)
{
    git_tree_entry *te = NULL;

    memset(o, 0, sizeof(*o));
    o->kind = OP_REMOVE;
    o->e.path = path;
    if (g->head_tree && git_tree_entry_bypath(&te, g->head_tree, path) == 0 &&
        git_tree_entry_type(te) != GIT_OBJECT_TREE) {
        o->kind = OP_ADD;
        o->e.mode = git_tree_entry_filemode(te);
        git_oid_cpy(&o->e.id, git_tree_entry_id(te));
    }
    git_tree_entry_free(te);
    git_error_clear();
}

/* Writes the blob of a file as it is on disk: a link's target, a file's
 * bytes (no filters). */
static int hash_file(sw_git *g, const char *full, const struct stat *st,
                     git_oid *id)
{
    char target[4096];
    ssize_t n;

    if (!S_ISLNK(st->st_mode))
        return git_blob_create_from_disk(id, g->repo, full);
    n = readlink(full, target, sizeof(target));
    if (n < 0 || n == (ssize_t)sizeof(target))
        return -1;
    return git_blob_create_from_buffer(id, g->repo, target, (size_t)n);
}

/* Plans the work tree's file: the cached entry when its stat is
 * unchanged, else a freshly written blob. */
static void plan_hash(sw_git *g, scan *s, const char *full, const char *path,
                      const struct stat *st, op *o)
{
    const git_index_entry *c = git_index_get_bypath(g->idx, path, 0);

    memset(o, 0, sizeof(*o));
    o->e.path = path;
    if (c && stat_equal(c, st) && c->mode == mode_of(st)) {
        o->kind = OP_KEEP;
        return;
    }
    if (hash_file(g, full, st, &o->e.id) < 0) {
        git_error_clear();
        skip(s, path, (uint64_t)st->st_size, "unreadable");
        plan_head(g, path, o);
        return;
    }
    o->kind = OP_ADD;
    entry_stat(g, &o->e, st);
}

/* A path only in HEAD, not in the index, whose file is back: it counts
 * only when not ignored. */
static bool ignored_return(sw_git *g, const char *path, unsigned flags)
{
    int ign = 0;

    if (!(flags & GIT_STATUS_INDEX_DELETED) || (flags & GIT_STATUS_WT_NEW))
        return false;
    if (git_ignore_path_is_ignored(&ign, g->repo, path) < 0)
        git_error_clear();
    return ign == 1;
}

/* Plans one path that `git status` reports. */
static void plan_path(sw_git *g, scan *s, const char *path, unsigned flags,
                      op *o)
{
    char *full = sw_aprintf("%s/%s", g->root, path);
    struct stat st;
    int rc = lstat(full, &st);

    memset(o, 0, sizeof(*o));
    o->kind = OP_REMOVE;
    o->e.path = path;
    if (rc != 0 && errno != ENOENT && errno != ENOTDIR) {
        skip(s, path, 0, "unreadable");
        plan_head(g, path, o);
    } else if (rc == 0 && S_ISDIR(st.st_mode)) {
        if (path[strlen(path) - 1] == '/')
            skip(s, path, 0, "a nested git repository");
    } else if (rc == 0 && !ignored_return(g, path, flags)) {
        if ((uint64_t)st.st_size > g->max_file) {
            skip(s, path, (uint64_t)st.st_size, "over the size limit");
            plan_head(g, path, o);
        } else {
            plan_hash(g, s, full, path, &st, o);
        }
    }
    free(full);
}

static const char *status_path(const git_status_entry *e)
{
    const git_diff_delta *d =
        e->index_to_workdir ? e->index_to_workdir : e->head_to_index;

    return d->new_file.path ? d->new_file.path : d->old_file.path;
}

static int by_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Plans every path of `list`, then HEAD's version of each path that was
 * changed at the last scan and no longer is. *cur gets the paths that
 * differ from HEAD now (sorted, owned; the ops borrow them). */
static void plan(sw_git *g, scan *s, git_status_list *list, op **ops,
                 size_t *n_ops, char ***cur, size_t *n_cur)
{
    size_t len = git_status_list_entrycount(list), k = 0;
    char **paths = sw_calloc(len + 1, sizeof(char *));

    *ops = sw_calloc(len + g->n_changed + 1, sizeof(op));
    size_t m = 0;

    for (size_t i = 0; i < len; i++) {
        const git_status_entry *e = git_status_byindex(list, i);

        if (excluded(g, status_path(e)))
            continue;
        paths[m] = sw_strdup(status_path(e));
        plan_path(g, s, paths[m], e->status, &(*ops)[k++]);
        m++;
    }
    qsort(paths, m, sizeof(char *), by_str);
    for (size_t i = 0; i < g->n_changed; i++)
        if (!bsearch(&g->changed[i], paths, m, sizeof(char *), by_str))
            plan_head(g, g->changed[i], &(*ops)[k++]);
    *n_ops = k;
    *cur = paths;
    *n_cur = m;
}

/* ---- applying the plan, submodules, the tree --------------------------- */

static bool entry_same(const git_index_entry *a, const git_index_entry *b)
{
    return a->mode == b->mode && git_oid_equal(&a->id, &b->id) &&
           a->mtime.seconds == b->mtime.seconds &&
           a->mtime.nanoseconds == b->mtime.nanoseconds &&
           a->ctime.seconds == b->ctime.seconds &&
           a->file_size == b->file_size && a->ino == b->ino;
}

/* Removals first, then additions, so that a file replacing a folder (or
 * the reverse) never collides with what it replaces. */
static int apply(sw_git *g, const op *ops, size_t n)
{
    const git_index_entry *c;
    int rc;

    for (size_t i = 0; i < n; i++) {
        if (ops[i].kind != OP_REMOVE)
            continue;
        rc = git_index_remove(g->idx, ops[i].e.path, 0);
        if (rc < 0 && rc != GIT_ENOTFOUND)
            return fail(g, "index: remove %s", ops[i].e.path);
        git_error_clear();
    }
    for (size_t i = 0; i < n; i++) {
        if (ops[i].kind != OP_ADD)
            continue;
        c = git_index_get_bypath(g->idx, ops[i].e.path, 0);
        if (c && entry_same(c, &ops[i].e))
            continue;
        if (git_index_add(g->idx, &ops[i].e) < 0)
            return fail(g, "index: add %s", ops[i].e.path);
    }
    return SW_OK;
}

/* Points the gitlink at `path` to `id` in the private index. */
static int set_gitlink(sw_git *g, const char *path, const git_oid *id)
{
    const git_index_entry *c = git_index_get_bypath(g->idx, path, 0);
    git_index_entry e;

    if (c && c->mode == GIT_FILEMODE_COMMIT && git_oid_equal(&c->id, id))
        return SW_OK;
    memset(&e, 0, sizeof(e));
    e.mode = GIT_FILEMODE_COMMIT;
    e.path = path;
    git_oid_cpy(&e.id, id);
    if (git_index_add(g->idx, &e) < 0)
        return fail(g, "index: submodule %s", path);
    return SW_OK;
}

static int status_of(git_repository *repo, git_status_list **out);

/* The repository checked out at `path` (relative to `repo`'s work tree);
 * NULL when there is none. */
static git_repository *open_sub(git_repository *repo, const char *path)
{
    git_repository *sub = NULL;
    char *full = sw_aprintf("%s%s", git_repository_workdir(repo), path);

    if (git_repository_open_ext(&sub, full, GIT_REPOSITORY_OPEN_NO_SEARCH,
                                NULL) < 0) {
        git_error_clear();
        sub = NULL;
    }
    free(full);
    return sub;
}

/* True when a submodule's work tree has changes of its own. */
static bool sub_dirty(git_repository *sub)
{
    git_status_list *list = NULL;
    bool dirty =
        status_of(sub, &list) != SW_OK || git_status_list_entrycount(list) > 0;

    git_status_list_free(list);
    return dirty;
}

/* Records the submodule at `path` at the commit checked out in it (else
 * the one the index records), and puts that commit in the snapshot. */
static int submodule(sw_git *g, scan *s, const char *path,
                     const git_oid *recorded)
{
    git_repository *sub = open_sub(g->repo, path);
    git_oid wd;
    bool have = sub && git_reference_name_to_id(&wd, sub, "HEAD") == 0;
    sw_git_submodule *m;

    git_error_clear();
    sw_grow(&s->subs, &s->cap_subs, s->n_subs + 1, sizeof(*s->subs));
    m = &s->subs[s->n_subs++];
    m->path = sw_strdup(path);
    m->commit = hex(have ? &wd : recorded);
    m->dirty = have && sub_dirty(sub);
    s->subs_dirty |= m->dirty;
    git_repository_free(sub);
    return set_gitlink(g, m->path, have ? &wd : recorded);
}

/* Every gitlink of the user's index (read, never written) is a
 * submodule. libgit2's submodule API is not used: it matches regular
 * expressions, which leak in libgit2 1.5. */
static int submodules(sw_git *g, scan *s)
{
    git_index *user = NULL;
    int error = SW_OK;

    if (git_repository_index(&user, g->repo) < 0)
        return fail(g, "read the index");
    for (size_t i = 0; !error && i < git_index_entrycount(user); i++) {
        const git_index_entry *e = git_index_get_byindex(user, i);

        if (e->mode == GIT_FILEMODE_COMMIT && git_index_entry_stage(e) == 0)
            error = submodule(g, s, e->path, &e->id);
    }
    git_index_free(user);
    return error;
}

/* `git status` of a work tree: changes from HEAD to the index and from
 * the index to the work tree, untracked files one by one, no ignored
 * files, submodules left out. */
static int status_of(git_repository *repo, git_status_list **out)
{
    git_status_options so;

    git_status_options_init(&so, GIT_STATUS_OPTIONS_VERSION);
    so.show = GIT_STATUS_SHOW_INDEX_AND_WORKDIR;
    so.flags = GIT_STATUS_OPT_INCLUDE_UNTRACKED |
               GIT_STATUS_OPT_RECURSE_UNTRACKED_DIRS |
               GIT_STATUS_OPT_EXCLUDE_SUBMODULES |
               GIT_STATUS_OPT_SORT_CASE_SENSITIVELY;
    return git_status_list_new(out, repo, &so) < 0 ? SW_ERROR : SW_OK;
}

/* Brings the private index to the work tree as it is, and writes its
 * tree: s->tree. On failure the index is rebuilt from HEAD next time. */
static int scan_tree(sw_git *g, scan *s)
{
    git_status_list *list = NULL;
    op *ops = NULL;
    char **cur = NULL;
    size_t n_ops = 0, n_cur = 0;
    int error;

    g->scan_start = time(NULL);
    if ((error = read_head(g, s)) || (error = sync_head(g, s)) ||
        (error = status_of(g->repo, &list) ? fail(g, "status") : SW_OK))
        goto done;
    plan(g, s, list, &ops, &n_ops, &cur, &n_cur);
    if (!(error = apply(g, ops, n_ops)) && !(error = submodules(g, s)) &&
        git_index_write_tree_to(&s->tree, g->idx, g->repo) < 0)
        error = fail(g, "write tree");
    clear_changed(g);
    g->changed = cur;
    g->n_changed = n_cur;
done:
    if (error)
        g->idx_ready = false;
    git_status_list_free(list);
    free(ops);
    return error;
}

/* ---- snapshots ------------------------------------------------------- */

static char *message(const scan *s)
{
    sw_buf b = SW_BUF_INIT;
    char id[GIT_OID_HEXSZ + 1];

    sw_buf_printf(&b, "sweep: snapshot of the work tree\n\nBase: %s\n",
                  s->born ? git_oid_tostr(id, sizeof(id), &s->head)
                          : "none (no commit yet)");
    if (s->n_skipped)
        sw_buf_puts(&b, "\nLeft out:\n");
    for (size_t i = 0; i < s->n_skipped; i++)
        sw_buf_printf(&b, "  %s (%llu bytes, %s)\n", s->skipped[i].path,
                      (unsigned long long)s->skipped[i].size,
                      s->skipped[i].why);
    return sw_buf_detach(&b);
}

static int write_commit(sw_git *g, const scan *s, git_oid *id)
{
    git_signature *sig = NULL;
    git_tree *tree = NULL;
    git_commit *parent = NULL;
    char *msg = message(s);
    int error = SW_OK;

    if (git_signature_now(&sig, "sweep", "sweep@localhost") < 0 ||
        git_tree_lookup(&tree, g->repo, &s->tree) < 0 ||
        (s->born && git_commit_lookup(&parent, g->repo, &s->head) < 0))
        error = fail(g, "snapshot");
    else if (git_commit_create(id, g->repo, NULL, sig, sig, NULL, msg, tree,
                               s->born ? 1 : 0,
                               (const git_commit **)&parent) < 0)
        error = fail(g, "write the snapshot commit");
    git_signature_free(sig);
    git_tree_free(tree);
    git_commit_free(parent);
    free(msg);
    return error;
}

static int keep_ref(sw_git *g, const char *prefix, const git_oid *id,
                    char **out)
{
    git_reference *ref = NULL;
    char hexid[GIT_OID_HEXSZ + 1];
    char *name =
        sw_aprintf("%s/%s", prefix, git_oid_tostr(hexid, sizeof(hexid), id));
    int valid = 0, error = SW_OK;

    if (git_reference_name_is_valid(&valid, name) < 0 || !valid)
        error = sw_error_set(SW_EINVALID,
                             "git: '%s' is not a valid ref "
                             "name",
                             name);
    else if (git_reference_create(&ref, g->repo, name, id, 1,
                                  "sweep: snapshot") < 0)
        error = fail(g, "create %s", name);
    git_reference_free(ref);
    if (error)
        free(name);
    else
        *out = name;
    return error;
}

/* The snapshot against HEAD, as `git diff` prints it. */
static int make_patch(sw_git *g, const scan *s, char **out, size_t *len)
{
    git_diff_options o;
    git_tree *tree = NULL;
    git_diff *diff = NULL;
    git_buf b;
    int error = SW_OK;

    git_diff_options_init(&o, GIT_DIFF_OPTIONS_VERSION);
    memset(&b, 0, sizeof(b));
    if (git_tree_lookup(&tree, g->repo, &s->tree) < 0 ||
        git_diff_tree_to_tree(&diff, g->repo, g->head_tree, tree, &o) < 0 ||
        git_diff_to_buf(&b, diff, GIT_DIFF_FORMAT_PATCH) < 0) {
        error = fail(g, "diff against HEAD");
    } else {
        *out = sw_strndup(b.ptr ? b.ptr : "", b.size);
        *len = b.size;
    }
    git_buf_dispose(&b);
    git_diff_free(diff);
    git_tree_free(tree);
    return error;
}

/* True when the last snapshot holds this scan's tree, on the same base,
 * and its ref is still there. */
static bool reusable(sw_git *g, const scan *s)
{
    git_oid at;

    if (!g->has_snap || !git_oid_equal(&g->snap_tree, &s->tree) ||
        !(s->born ? git_oid_equal(&g->snap_parent, &s->head)
                  : git_oid_is_zero(&g->snap_parent)))
        return false;
    if (git_reference_name_to_id(&at, g->repo, g->snap_ref) < 0) {
        git_error_clear();
        return false;
    }
    return git_oid_equal(&at, &g->snap);
}

/* Makes (or reuses) the snapshot of the scanned tree, and keeps it in the
 * handle. */
static int snapshot(sw_git *g, const scan *s, const char *prefix)
{
    git_oid id;
    char *ref = NULL, *patch = NULL;
    size_t len = 0;
    int error;

    if (reusable(g, s))
        return SW_OK;
    if ((error = write_commit(g, s, &id)) ||
        (error = keep_ref(g, prefix, &id, &ref)) ||
        (error = make_patch(g, s, &patch, &len))) {
        free(ref);
        return error;
    }
    free(g->snap_ref);
    free(g->snap_patch);
    g->has_snap = true;
    g->snap = id;
    g->snap_tree = s->tree;
    memset(&g->snap_parent, 0, sizeof(g->snap_parent));
    if (s->born)
        g->snap_parent = s->head;
    g->snap_ref = ref;
    g->snap_patch = patch;
    g->snap_patch_len = len;
    return SW_OK;
}

/* ---- capture --------------------------------------------------------- */

static int check_prefix(const char *prefix)
{
    size_t n = prefix ? strlen(prefix) : 0;

    if (n <= strlen(REF_ROOT) ||
        strncmp(prefix, REF_ROOT, strlen(REF_ROOT)) != 0 ||
        prefix[n - 1] == '/')
        return sw_error_set(SW_EINVALID,
                            "git: snapshot refs go under " REF_ROOT
                            "..., not '%s'",
                            prefix ? prefix : "(null)");
    return SW_OK;
}

/* Moves what the scan found into *out. */
static void describe(sw_git *g, scan *s, sw_git_state *out)
{
    out->root = sw_strdup(g->root);
    out->head = s->born ? hex(&s->head) : NULL;
    head_names(g, out);
    out->remote = remote_url(g->repo);
    out->skipped = s->skipped;
    out->n_skipped = s->n_skipped;
    out->submodules = s->subs;
    out->n_submodules = s->n_subs;
    s->skipped = NULL;
    s->subs = NULL;
    s->n_skipped = s->n_subs = 0;
}

/* The code of the capture: the snapshot when the tree differs from
 * HEAD's, else HEAD itself. */
static void set_code(sw_git *g, const scan *s, bool snap, sw_git_state *out)
{
    out->dirty = snap || out->n_skipped > 0 || s->subs_dirty;
    if (snap) {
        out->snapshot = hex(&g->snap);
        out->snapshot_ref = sw_strdup(g->snap_ref);
        out->patch = sw_strndup(g->snap_patch, g->snap_patch_len);
        out->patch_len = g->snap_patch_len;
        out->commit = sw_strdup(out->snapshot);
        out->tree = hex(&s->tree);
    } else if (s->born) {
        out->commit = hex(&s->head);
        out->tree = hex(&s->head_tree);
    }
    g->captured = true;
    g->last_head = s->head;
    g->last_tree = s->tree;
}

/* Captures the repository's state; see git.h. */
int sw_git_capture(sw_git *g, const char *ref_prefix, sw_git_state *out)
{
    scan s;
    bool snap, had = g->has_snap;
    git_oid before = g->snap;
    int error;

    memset(out, 0, sizeof(*out));
    memset(&s, 0, sizeof(s));
    if ((error = check_prefix(ref_prefix)) || (error = scan_tree(g, &s)))
        goto done;
    snap = !git_oid_equal(&s.tree, &s.head_tree);
    if (snap && (error = snapshot(g, &s, ref_prefix)))
        goto done;
    describe(g, &s, out);
    out->snapshot_new = snap && (!had || !git_oid_equal(&before, &g->snap));
    set_code(g, &s, snap, out);
done:
    if (error)
        sw_git_state_dispose(out);
    scan_dispose(&s);
    return error;
}

/* Scans the work tree and compares it with the last capture's. */
int sw_git_changed(sw_git *g, bool *changed)
{
    scan s;
    int error;

    memset(&s, 0, sizeof(s));
    error = scan_tree(g, &s);
    if (!error)
        *changed = !g->captured || !git_oid_equal(&g->last_head, &s.head) ||
                   !git_oid_equal(&g->last_tree, &s.tree);
    scan_dispose(&s);
    return error;
}

/* Frees the strings of *st and zeroes it; accepts NULL. */
void sw_git_state_dispose(sw_git_state *st)
{
    if (!st)
        return;
    free(st->root);
    free(st->head);
    free(st->branch);
    free(st->remote);
    free(st->commit);
    free(st->tree);
    free(st->snapshot);
    free(st->snapshot_ref);
    free(st->patch);
    for (size_t i = 0; i < st->n_skipped; i++)
        free(st->skipped[i].path);
    for (size_t i = 0; i < st->n_submodules; i++) {
        free(st->submodules[i].path);
        free(st->submodules[i].commit);
    }
    free(st->skipped);
    free(st->submodules);
    memset(st, 0, sizeof(*st));
}

/* ---- export ------------------------------------------------------------ */

typedef struct {
    git_repository *repo;
    const char *dir;
    int error;
} export_ctx;

static int export_commit(git_repository *repo, const git_oid *id,
                         const char *dir);

static int io_fail(const char *what, const char *path)
{
    return sw_error_set(SW_EIO, "git export: %s %s: %s", what, path,
                        strerror(errno));
}

static int make_dirs(const char *path)
{
    char *parent, *slash;
    int error = SW_OK;

    if (mkdir(path, 0777) == 0 || errno == EEXIST)
        return SW_OK;
    if (errno != ENOENT)
        return io_fail("create", path);
    parent = sw_strdup(path);
    slash = strrchr(parent, '/');
    if (slash && slash != parent) {
        *slash = '\0';
        error = make_dirs(parent);
    }
    free(parent);
    if (!error && mkdir(path, 0777) != 0 && errno != EEXIST)
        error = io_fail("create", path);
    return error;
}

/* `dir` must not exist, or be an empty folder: nothing is overwritten. */
static int empty_dir(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    bool empty = true;

    if (!d)
        return errno == ENOENT ? make_dirs(dir) : io_fail("open", dir);
    while (empty && (e = readdir(d)) != NULL)
        empty = strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0;
    closedir(d);
    return empty
               ? SW_OK
               : sw_error_set(SW_EINVALID, "git export: %s is not empty", dir);
}

static int write_blob(export_ctx *c, const git_tree_entry *te, const char *path)
{
    git_blob *b = NULL;
    bool exec = git_tree_entry_filemode(te) == GIT_FILEMODE_BLOB_EXECUTABLE;
    int fd, error = SW_OK;

    if (git_blob_lookup(&b, c->repo, git_tree_entry_id(te)) < 0)
        return fail(NULL, "read %s", path);
    fd =
        open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, exec ? 0777 : 0666);
    if (fd < 0 || sw_write_all(fd, git_blob_rawcontent(b),
                               (size_t)git_blob_rawsize(b)) != 0)
        error = io_fail("write", path);
    if (fd >= 0 && close(fd) != 0 && !error)
        error = io_fail("write", path);
    git_blob_free(b);
    return error;
}

static int write_link(export_ctx *c, const git_tree_entry *te, const char *path)
{
    git_blob *b = NULL;
    char *target;
    int error = SW_OK;

    if (git_blob_lookup(&b, c->repo, git_tree_entry_id(te)) < 0)
        return fail(NULL, "read %s", path);
    target = sw_strndup(git_blob_rawcontent(b), (size_t)git_blob_rawsize(b));
    if (symlink(target, path) != 0)
        error = io_fail("link", path);
    free(target);
    git_blob_free(b);
    return error;
}

static bool has_commit(git_repository *repo, const git_oid *id)
{
    git_commit *c = NULL;
    bool has = git_commit_lookup(&c, repo, id) == 0;

    git_commit_free(c);
    return has;
}

/* A submodule's files come from its own repository, when it has the
 * commit; otherwise its folder stays empty. */
static int write_submodule(export_ctx *c, const char *rel,
                           const git_tree_entry *te, const char *path)
{
    git_repository *sub = NULL;
    int error = mkdir(path, 0777) == 0 ? SW_OK : io_fail("create", path);

    if (!error && (sub = open_sub(c->repo, rel)) != NULL &&
        has_commit(sub, git_tree_entry_id(te)))
        error = export_commit(sub, git_tree_entry_id(te), path);
    git_error_clear();
    git_repository_free(sub);
    return error;
}

/* Names a tree from elsewhere could hold that must never be written. */
static bool safe_name(const char *name)
{
    return name[0] && strcmp(name, ".") != 0 && strcmp(name, "..") != 0 &&
           strchr(name, '/') == NULL && strcasecmp(name, ".git") != 0;
}

static int on_entry(const char *root, const git_tree_entry *te, void *ctx)
{
    export_ctx *c = ctx;
    const char *name = git_tree_entry_name(te);
    char *rel = sw_aprintf("%s%s", root, name);
    char *path = sw_aprintf("%s/%s", c->dir, rel);

    if (!safe_name(name))
        c->error = sw_error_set(SW_EINVALID,
                                "git export: refusing the "
                                "tree entry '%s'",
                                rel);
    else if (git_tree_entry_filemode(te) == GIT_FILEMODE_TREE)
        c->error = mkdir(path, 0777) == 0 ? SW_OK : io_fail("create", path);
    else if (git_tree_entry_filemode(te) == GIT_FILEMODE_COMMIT)
        c->error = write_submodule(c, rel, te, path);
    else if (git_tree_entry_filemode(te) == GIT_FILEMODE_LINK)
        c->error = write_link(c, te, path);
    else
        c->error = write_blob(c, te, path);
    free(rel);
    free(path);
    return c->error ? -1 : 0;
}

static int export_commit(git_repository *repo, const git_oid *id,
                         const char *dir)
{
    export_ctx c = {repo, dir, SW_OK};
    git_commit *commit = NULL;
    git_tree *tree = NULL;
    int error = SW_OK;

    if (git_commit_lookup(&commit, repo, id) < 0 ||
        git_commit_tree(&tree, commit) < 0)
        error = fail(NULL, "read commit");
    else if (git_tree_walk(tree, GIT_TREEWALK_PRE, on_entry, &c) < 0)
        error = c.error ? c.error : fail(NULL, "walk the tree");
    git_tree_free(tree);
    git_commit_free(commit);
    return error;
}

/* Writes the files of `commit` into `dir`; see git.h. */
int sw_git_export(sw_git *g, const char *commit, const char *dir)
{
    git_object *obj = NULL;
    int error;

    if (git_revparse_single(&obj, g->repo, commit) < 0 ||
        git_object_type(obj) != GIT_OBJECT_COMMIT) {
        git_object_free(obj);
        git_error_clear();
        return sw_error_set(SW_ENOTFOUND, "git %s: no commit '%s'", g->root,
                            commit);
    }
    error = empty_dir(dir);
    if (!error)
        error = export_commit(g->repo, git_object_id(obj), dir);
    git_object_free(obj);
    return error;
}
