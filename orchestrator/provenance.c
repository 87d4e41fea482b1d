/*
 * provenance.c - the engine's side of git provenance: which repository a
 * sweep's code lives in, the git facts recorded for the sweep and for each
 * attempt of a run, and the patch written beside each run.
 *
 * The repository is the one holding the trial's program (the sweep file's
 * `program`, else the first literal element of its `command` that names an
 * existing file), else the one holding the folder trials start in. One
 * git handle serves the whole sweep, so a capture before each attempt
 * costs a status of the work tree, and a new snapshot is written only
 * when the tree changed. Snapshots are kept under refs/sweep/<sweep id>/.
 * The sweep home is never part of the recorded code, wherever it is.
 * SWEEP_GIT=off turns all of it off (the test suite uses it, so that
 * sweeps of the project's own example trainers leave no refs in the
 * project's repository).
 *
 * A frozen sweep runs its trials from a checkout of its code under
 * $SWEEP_HOME/code/<sweep id>; every run then records the sweep's code,
 * and a resumed sweep knows it is frozen from the folder it starts in.
 * `sweep reproduce` gives a run's code back through sw_provenance_export
 * (reproduce.h), from the git JSON alone, without an engine.
 */
#include "orchestrator/provenance.h"
#include "orchestrator/reproduce.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backends/git.h"
#include "orchestrator/engine/contract.h"
#include "sweeps/json.h"

struct sw_provenance {
    sw_git *git;  /* NULL when frozen at resume */
    char *prefix; /* refs/sweep/<sweep id> */
    bool warned;  /* a capture failed: said once */
    bool frozen;  /* trials run from a checkout of the sweep's code */
};

/* ---- the repository ----------------------------------------------------- */

static bool is_file(const char *path)
{
    struct stat st;

    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* The paths that may be the trial's program, then the current folder. */
static size_t candidates(const sw_spec *sp, const char **out, size_t cap)
{
    size_t n = 0;

    if (sp->program && is_file(sp->program))
        out[n++] = sp->program;
    for (size_t i = 0; sp->command && i < sp->n_command && n + 1 < cap; i++)
        if (!strstr(sp->command[i], "${") && is_file(sp->command[i]))
            out[n++] = sp->command[i];
    out[n++] = ".";
    return n;
}

/* The sweep home is excluded from every capture: inside the work tree
 * (./.sweep by default), it would otherwise snapshot its own store and
 * logs, and every run would record new "code". */
/* Untracked files that hold secrets, never copied into a snapshot or a
 * run's diff.patch: $SWEEP_GIT_SECRETS (gitignore patterns separated by
 * ':'; empty: none), else these. */
static const char default_secrets[] =
    ".env:.env.*:*.pem:*.key:*.p12:*.pfx:id_rsa*:id_dsa*:id_ecdsa*:"
    "id_ed25519*:.netrc:_netrc:credentials*:.git-credentials";

/* Splits `list` at ':' into out (up to cap); returns the count. The
 * strings point into `buf`, a copy the caller frees. */
static size_t split_patterns(char *buf, const char **out, size_t cap)
{
    size_t n = 0;
    char *p = buf, *colon;

    while (p && *p && n < cap) {
        colon = strchr(p, ':');
        if (colon)
            *colon = '\0';
        if (*p)
            out[n++] = p;
        p = colon ? colon + 1 : NULL;
    }
    return n;
}

static sw_git *open_repo(const sw_spec *sp, const char *home)
{
    const char *paths[16], *ignore[64];
    const char *env = getenv("SWEEP_GIT_SECRETS");
    char *secrets = sw_strdup(env ? env : default_secrets);
    size_t n = candidates(sp, paths, sizeof(paths) / sizeof(paths[0]));
    sw_git *g = NULL;
    sw_git_opts o = SW_GIT_OPTS_INIT;
    int error;

    o.exclude = &home;
    o.n_exclude = home ? 1 : 0;
    o.ignore = ignore;
    o.n_ignore = split_patterns(secrets, ignore, 64);
    error = sw_git_open_first(&g, paths, n, &o);
    free(secrets);

    if (error == SW_ENOTFOUND)
        fprintf(stderr, "sweep: warning: not in a git repository: runs "
                        "will not be tied to their code\n");
    else if (error)
        fprintf(stderr,
                "sweep: warning: git: %s; runs will not be tied to "
                "their code\n",
                sw_error_last());
    return g;
}

/* ---- the git facts as JSON ---------------------------------------------- */

static sw_value *str_or_null(const char *s)
{
    return s ? sw_value_str(s) : sw_value_null();
}

static sw_value *skipped_json(const sw_git_state *st)
{
    sw_value *list = sw_value_list();

    for (size_t i = 0; i < st->n_skipped; i++) {
        sw_value *m = sw_value_map();

        sw_value_map_set(m, "path", sw_value_str(st->skipped[i].path));
        sw_value_map_set(m, "size", sw_value_int((int64_t)st->skipped[i].size));
        sw_value_map_set(m, "why", sw_value_str(st->skipped[i].why));
        sw_value_list_push(list, m);
    }
    return list;
}

static sw_value *submodules_json(const sw_git_state *st)
{
    sw_value *list = sw_value_list();

    for (size_t i = 0; i < st->n_submodules; i++) {
        const sw_git_submodule *s = &st->submodules[i];
        sw_value *m = sw_value_map();

        sw_value_map_set(m, "path", sw_value_str(s->path));
        sw_value_map_set(m, "commit", str_or_null(s->commit));
        sw_value_map_set(m, "dirty", sw_value_bool(s->dirty));
        sw_value_list_push(list, m);
    }
    return list;
}

/* The `git` column: docs/provenance.md and docs/schema.md name the keys. */
static char *state_json(const sw_git_state *st, const char *patch)
{
    sw_value *v = sw_value_map();
    sw_buf b = SW_BUF_INIT;

    sw_value_map_set(v, "root", sw_value_str(st->root));
    sw_value_map_set(v, "commit", str_or_null(st->commit));
    sw_value_map_set(v, "tree", str_or_null(st->tree));
    sw_value_map_set(v, "head", str_or_null(st->head));
    sw_value_map_set(v, "branch", str_or_null(st->branch));
    sw_value_map_set(v, "detached", sw_value_bool(st->detached));
    sw_value_map_set(v, "remote", str_or_null(st->remote));
    sw_value_map_set(v, "dirty", sw_value_bool(st->dirty));
    sw_value_map_set(v, "snapshot", str_or_null(st->snapshot));
    sw_value_map_set(v, "snapshot_ref", str_or_null(st->snapshot_ref));
    sw_value_map_set(v, "patch", str_or_null(patch));
    sw_value_map_set(v, "skipped", skipped_json(st));
    sw_value_map_set(v, "submodules", submodules_json(st));
    sw_value_write_json(&b, v, false);
    sw_value_free(v);
    return sw_buf_detach(&b);
}

/* ---- sweep start ----------------------------------------------------------
 */

static void warn_once(sw_provenance *p, const char *what)
{
    if (p->warned)
        return;
    p->warned = true;
    fprintf(stderr, "sweep: warning: git: %s: %s; runs go on without it\n",
            what, sw_error_last());
}

/* The checkout a frozen sweep's trials run from. */
static char *code_dir(const sw_engine *e)
{
    return sw_aprintf("%s/code/%s", e->home, e->sweep.id);
}

static bool under(const char *path, const char *dir)
{
    size_t n = strlen(dir);

    return strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

static bool is_frozen(const sw_engine *e)
{
    char *dir = code_dir(e);
    bool frozen = under(e->sweep.cwd, dir);

    free(dir);
    return frozen;
}

/* Opens the repository and, when `capture`, records the sweep's code. */
void sw_provenance_start(sw_engine *e, bool capture)
{
    const char *off = getenv("SWEEP_GIT");
    sw_provenance *p;
    sw_git_state st;

    if (off && strcmp(off, "off") == 0)
        return;
    p = sw_calloc(1, sizeof(*p));
    if (!capture && e->sweep.git && is_frozen(e)) {
        p->frozen = true;
        e->prov = p;
        return;
    }
    if (!(p->git = open_repo(e->spec, e->home))) {
        free(p);
        return;
    }
    p->prefix = sw_aprintf("refs/sweep/%s", e->sweep.id);
    e->prov = p;
    if (!capture)
        return;
    if (sw_git_capture(p->git, p->prefix, &st) != SW_OK) {
        warn_once(p, "cannot record the sweep's code");
        return;
    }
    e->sweep.git_commit = st.commit ? sw_strdup(st.commit) : NULL;
    e->sweep.git_dirty = st.dirty;
    e->sweep.git = state_json(&st, NULL);
    sw_git_state_dispose(&st);
}

static const char *json_str(const sw_value *m, const char *key)
{
    const sw_value *v = sw_value_map_get(m, key);

    return v && v->type == SW_STR ? v->u.s : NULL;
}

static void report_skipped(const sw_value *list)
{
    for (size_t i = 0; list && list->type == SW_LIST && i < list->u.list.len;
         i++) {
        const sw_value *m = list->u.list.items[i];
        const sw_value *size = sw_value_map_get(m, "size");

        fprintf(stderr,
                "sweep: warning: git: left out of the snapshot: %s "
                "(%lld bytes, %s)\n",
                json_str(m, "path"),
                size && size->type == SW_INT ? (long long)size->u.i : 0LL,
                json_str(m, "why"));
    }
}

/* Prints the sweep's code (stdout) and what its snapshot left out. */
void sw_provenance_report(const sw_engine *e)
{
    sw_value *v = NULL;
    const char *commit, *branch, *snap;

    if (!e->sweep.git ||
        sw_json_parse(&v, e->sweep.git, strlen(e->sweep.git)) != SW_OK)
        return;
    commit = json_str(v, "commit");
    branch = json_str(v, "branch");
    snap = json_str(v, "snapshot_ref");
    printf("sweep %s: code %.12s%s%s%s, %s", e->sweep.id, commit ? commit : "",
           commit ? "" : "none (no commit, no file)",
           branch ? " on " : " (detached HEAD)", branch ? branch : "",
           e->sweep.git_dirty ? "dirty" : "clean");
    if (snap)
        printf(" (snapshot kept as %s)", snap);
    printf("\n");
    report_skipped(sw_value_map_get(v, "skipped"));
    fflush(stdout);
    sw_value_free(v);
}

/* ---- each run ---------------------------------------------------------------
 */

/* runs/<id>/diff.patch when the run's code is a snapshot; removed when
 * it is HEAD itself (a retry of a run that was dirty before). Sets *out
 * to the patch's path, or NULL. */
static int write_patch(sw_engine *e, const sw_run_rec *r,
                       const sw_git_state *st, char **out)
{
    char *dir = sw_aprintf("%s/%s", e->runs_dir, r->id);
    char *path = sw_aprintf("%s/diff.patch", dir);
    int error = SW_OK;

    *out = NULL;
    if (!st->patch)
        unlink(path);
    else if (!(error = sw_contract_mkdirs(dir)) &&
             !(error = sw_contract_write_bytes(path, st->patch, st->patch_len)))
        *out = path;
    if (!*out)
        free(path);
    free(dir);
    return error;
}

static void clear_git(sw_run_rec *r)
{
    free(r->git_commit);
    free(r->git);
    r->git_commit = r->git = NULL;
    r->git_dirty = false;
}

/* Re-captures the work tree and records it against run `r`. */
int sw_provenance_run(sw_engine *e, sw_run_rec *r)
{
    sw_provenance *p = e->prov;
    sw_git_state st;
    char *patch = NULL;

    clear_git(r);
    if (!p)
        return SW_OK;
    if (p->frozen) {
        r->git_commit =
            e->sweep.git_commit ? sw_strdup(e->sweep.git_commit) : NULL;
        r->git_dirty = e->sweep.git_dirty;
        r->git = sw_strdup(e->sweep.git);
        return SW_OK;
    }
    if (sw_git_capture(p->git, p->prefix, &st) != SW_OK) {
        warn_once(p, "cannot record the code of a run");
        return SW_OK;
    }
    if (write_patch(e, r, &st, &patch) != SW_OK)
        warn_once(p, "cannot write a run's diff.patch");
    r->git_commit = st.commit ? sw_strdup(st.commit) : NULL;
    r->git_dirty = st.dirty;
    r->git = state_json(&st, patch);
    free(patch);
    sw_git_state_dispose(&st);
    return SW_OK;
}

static int cannot_freeze(const char *why, const char *what)
{
    return sw_error_set(SW_EINVALID,
                        "cannot run the trials from a "
                        "checkout of the sweep's code: %s%s",
                        why, what);
}

/* Exports the sweep's code and moves the trials' folder into it. */
int sw_provenance_freeze(sw_engine *e)
{
    sw_provenance *p = e->prov;
    const char *root;
    char *dir, *cwd;
    int error;

    if (p && p->frozen)
        return SW_OK;
    if (!p || !p->git || !e->sweep.git_commit)
        return cannot_freeze("no code was recorded (outside git, a "
                             "repository without files, or SWEEP_GIT=off)",
                             "");
    root = sw_git_root(p->git);
    if (!under(e->sweep.cwd, root))
        return cannot_freeze("trials start outside the repository ", root);
    dir = code_dir(e);
    error = sw_git_export(p->git, e->sweep.git_commit, dir);
    cwd = sw_aprintf("%s%s", dir, e->sweep.cwd + strlen(root));
    if (!error)
        error = sw_contract_mkdirs(cwd);
    if (!error) {
        free(e->sweep.cwd);
        e->sweep.cwd = cwd;
        cwd = NULL;
        p->frozen = true;
    }
    free(cwd);
    free(dir);
    return error;
}

/* Parses the git JSON and exports its commit from its root's repository. */
int sw_provenance_export(const char *git_json, const char *dir)
{
    sw_value *v = NULL;
    sw_git *g = NULL;
    const char *root = NULL, *commit = NULL;
    int error;

    if (!git_json)
        return sw_error_set(SW_ENOTFOUND, "no code was recorded (it did not "
                                          "start in a git repository)");
    if (sw_json_parse(&v, git_json, strlen(git_json)) == SW_OK &&
        v->type == SW_MAP) {
        root = json_str(v, "root");
        commit = json_str(v, "commit");
    }
    if (!root || !commit) {
        error = sw_error_set(SW_EINVALID,
                             "no commit was recorded (the repository had "
                             "no commit and no file)");
        goto done;
    }
    if ((error = sw_git_open(&g, root, NULL)) == SW_OK)
        error = sw_git_export(g, commit, dir);
done:
    sw_git_free(g);
    sw_value_free(v);
    return error;
}

/* Frees the handle and the ref prefix; accepts NULL. */
void sw_provenance_free(sw_provenance *p)
{
    if (!p)
        return;
    sw_git_free(p->git);
    free(p->prefix);
    free(p);
}
