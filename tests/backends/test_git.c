/*
 * test_git.c - the git adapter on real repositories made in a temporary
 * folder with the `git` command (the tests only: the adapter itself uses
 * libgit2 alone).
 *
 * Clean and dirty trees: the recorded commit is HEAD, the snapshot's tree
 * is the work tree (git's own `add -A` into a scratch index gives the same
 * tree id), an export gives back the work tree byte for byte, and the
 * user's status, index file, HEAD, branches, refs and stash are exactly
 * as before. Then the edge cases: not a repository, no commit yet,
 * detached HEAD, submodules, ignored files, a large file, edits between
 * captures (same-second, same-size ones too), remote credentials, and a
 * program outside the current repository.
 *
 * HOME points to a folder of the test's own, so no user configuration is
 * read by git or libgit2.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "testutil.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backends/git.h"
#include "sweeps/buf.h"
#include "sweeps/error.h"

#define T(test) cmocka_unit_test_setup_teardown(test, setup, teardown)
#define PREFIX "refs/sweep/test"

static char home[64];

typedef struct {
    char root[64];
    char repo[PATH_MAX]; /* root/repo: the user's repository */
    sw_git *g;
    sw_git_state st;
} fixture;

/* ---- helpers -------------------------------------------------------- */

/* Runs a shell command in `dir`; its output goes to /dev/null. */
static void sh(const char *dir, const char *fmt, ...) SW_PRINTF(2, 3);
static void sh(const char *dir, const char *fmt, ...)
{
    char cmd[4096], full[4300];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(cmd, sizeof(cmd), fmt, ap);
    va_end(ap);
    snprintf(full, sizeof(full), "cd '%s' && (%s) >/dev/null 2>&1", dir, cmd);
    if (system(full) != 0)
        fail_msg("command failed in %s: %s", dir, cmd);
}

/* The output of a shell command run in `dir`, without its last newline. */
static char *out(const char *dir, const char *fmt, ...) SW_PRINTF(2, 3);
static char *out(const char *dir, const char *fmt, ...)
{
    char cmd[4096], full[4300], chunk[4096];
    sw_buf b = SW_BUF_INIT;
    va_list ap;
    FILE *p;
    size_t n;

    va_start(ap, fmt);
    vsnprintf(cmd, sizeof(cmd), fmt, ap);
    va_end(ap);
    snprintf(full, sizeof(full), "cd '%s' && (%s) 2>/dev/null", dir, cmd);
    p = popen(full, "r");
    assert_non_null(p);
    while ((n = fread(chunk, 1, sizeof(chunk), p)) > 0)
        sw_buf_put(&b, chunk, n);
    pclose(p);
    if (b.len > 0 && b.ptr[b.len - 1] == '\n')
        b.ptr[--b.len] = '\0';
    return sw_buf_detach(&b);
}

static void assert_out(const char *want, const char *dir, const char *fmt, ...)
    SW_PRINTF(3, 4);
static void assert_out(const char *want, const char *dir, const char *fmt, ...)
{
    char cmd[4096], *got;
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(cmd, sizeof(cmd), fmt, ap);
    va_end(ap);
    got = out(dir, "%s", cmd);

    assert_string_equal(got, want);
    free(got);
}

static void put(const char *dir, const char *rel, const char *text)
{
    char path[PATH_MAX];
    FILE *f;

    snprintf(path, sizeof(path), "%s/%s", dir, rel);
    for (char *s = strchr(path + strlen(dir) + 1, '/'); s;
         s = strchr(s + 1, '/')) {
        *s = '\0';
        mkdir(path, 0755);
        *s = '/';
    }
    f = fopen(path, "wb");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* A listing of every file under `dir` (type, exec bit, link target or
 * full content), sorted by path; names in `skip` are left out
 * anywhere. */
static void listing(sw_buf *b, const char *dir, const char *rel,
                    const char *const *skip)
{
    struct dirent **names = NULL;
    char path[PATH_MAX], link[PATH_MAX];
    int n = scandir(dir, &names, NULL, alphasort);

    for (int i = 0; i < n; i++) {
        const char *name = names[i]->d_name;
        struct stat st;
        bool skipped = strcmp(name, ".") == 0 || strcmp(name, "..") == 0;

        for (size_t k = 0; skip && skip[k]; k++)
            skipped |= strcmp(skip[k], name) == 0;
        snprintf(path, sizeof(path), "%s/%s", dir, name);
        if (!skipped && lstat(path, &st) == 0) {
            char sub[PATH_MAX];
            snprintf(sub, sizeof(sub), "%s%s", rel, name);
            if (S_ISDIR(st.st_mode)) {
                strncat(sub, "/", sizeof(sub) - strlen(sub) - 1);
                listing(b, path, sub, skip);
            } else if (S_ISLNK(st.st_mode)) {
                ssize_t k = readlink(path, link, sizeof(link) - 1);
                link[k < 0 ? 0 : k] = '\0';
                sw_buf_printf(b, "%s link %s\n", sub, link);
            } else {
                size_t len = 0;
                char *text = sw_test_slurp(path, &len);
                sw_buf_printf(b, "%s %s %zu\n", sub,
                              st.st_mode & S_IXUSR ? "exec" : "file", len);
                sw_buf_put(b, text, len);
                sw_buf_putc(b, '\n');
                free(text);
            }
        }
        free(names[i]);
    }
    free(names);
}

static char *list_dir(const char *dir, const char *const *skip)
{
    sw_buf b = SW_BUF_INIT;

    listing(&b, dir, "", skip);
    return sw_buf_detach(&b);
}

/* Everything of the user's repository the adapter must not touch. */
static char *user_state(const char *repo)
{
    char path[PATH_MAX];
    char *index, *text;
    size_t len = 0;
    sw_buf b = SW_BUF_INIT;

    snprintf(path, sizeof(path), "%s/.git/index", repo);
    index = sw_test_slurp(path, &len);
    text = out(repo, "git --no-optional-locks status --porcelain=v1 -uall; "
                     "cat .git/HEAD; git stash list; "
                     "git for-each-ref --format='%%(refname) "
                     "%%(objectname)' | grep -v '^refs/sweep/'; "
                     "git rev-parse --verify -q refs/stash");
    sw_buf_printf(&b, "%s\nindex %zu bytes:\n", text, len);
    if (index)
        sw_buf_put(&b, index, len);
    free(index);
    free(text);
    return sw_buf_detach(&b);
}

/* The tree git itself makes of the work tree, in a scratch index. */
static char *git_worktree_tree(const char *repo)
{
    return out(repo, "cp .git/index ../scratch-index 2>/dev/null; "
                     "GIT_INDEX_FILE=../scratch-index git add -A && "
                     "GIT_INDEX_FILE=../scratch-index git write-tree; "
                     "rm -f ../scratch-index");
}

static void capture(fixture *f)
{
    sw_git_state_dispose(&f->st);
    if (sw_git_capture(f->g, PREFIX, &f->st) != SW_OK)
        fail_msg("capture: %s", sw_error_last());
}

static void open_repo(fixture *f, const sw_git_opts *o)
{
    if (sw_git_open(&f->g, f->repo, o) != SW_OK)
        fail_msg("open: %s", sw_error_last());
}

/* A repository with a few committed files, one executable. */
static void make_repo(fixture *f)
{
    sh(f->root, "git init -q repo");
    put(f->repo, "train.py", "print('hello')\n");
    put(f->repo, "lib/model.py", "depth = 3\n");
    put(f->repo, "lib/data.py", "rows = 100\n");
    put(f->repo, "run.sh", "#!/bin/sh\necho run\n");
    sh(f->repo, "chmod +x run.sh && ln -s lib/model.py model-link && "
                "git add -A && git commit -qm first");
}

static int group_setup(void **state)
{
    (void)state;
    snprintf(home, sizeof(home), "/tmp/sw-git-home-XXXXXX");
    if (!mkdtemp(home))
        return -1;
    setenv("HOME", home, 1);
    setenv("GIT_CONFIG_NOSYSTEM", "1", 1);
    put(home, ".gitconfig",
        "[user]\n\tname = Test\n\temail = test@example.com\n"
        "[init]\n\tdefaultBranch = main\n"
        "[protocol \"file\"]\n\tallow = always\n"
        "[advice]\n\tdetachedHead = false\n");
    return 0;
}

static int group_teardown(void **state)
{
    (void)state;
    sw_test_rm_tree(home);
    return 0;
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof(*f));

    snprintf(f->root, sizeof(f->root), "/tmp/sw-git-XXXXXX");
    if (!mkdtemp(f->root))
        return -1;
    snprintf(f->repo, sizeof(f->repo), "%s/repo", f->root);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;

    sw_git_state_dispose(&f->st);
    sw_git_free(f->g);
    sw_test_rm_tree(f->root);
    free(f);
    return 0;
}

/* ---- tests ------------------------------------------------------------ */

static void test_clean_tree(void **state)
{
    fixture *f = *state;
    char *before, *after, *head;

    make_repo(f);
    before = user_state(f->repo);
    open_repo(f, NULL);
    capture(f);
    head = out(f->repo, "git rev-parse HEAD");
    assert_string_equal(f->st.head, head);
    assert_string_equal(f->st.commit, head);
    assert_false(f->st.dirty);
    assert_null(f->st.snapshot);
    assert_null(f->st.patch);
    assert_string_equal(f->st.branch, "main");
    assert_false(f->st.detached);
    assert_string_equal(f->st.root, f->repo);
    assert_out(f->st.tree, f->repo, "git rev-parse 'HEAD^{tree}'");
    after = user_state(f->repo);
    assert_string_equal(before, after);
    assert_out("", f->repo, "git for-each-ref refs/sweep");
    free(head);
    free(before);
    free(after);
}

/* Tracked edits, a staged edit, a deletion, untracked files and folders,
 * a new executable, a mode change, a link and a stash entry. */
static void make_dirty(fixture *f)
{
    put(f->repo, "lib/data.py", "rows = 7\n");
    sh(f->repo, "git stash -q");
    put(f->repo, "train.py", "print('edited')\n");
    put(f->repo, "lib/model.py", "depth = 12\n");
    sh(f->repo, "git add lib/model.py");
    put(f->repo, "lib/model.py", "depth = 24\n");
    sh(f->repo, "git rm -q --cached lib/data.py && rm run.sh");
    put(f->repo, "notes.txt", "untracked\n");
    put(f->repo, "new/deep/cfg.yaml", "a: 1\n");
    put(f->repo, "tool.sh", "#!/bin/sh\n");
    sh(f->repo, "printf '\\001\\000\\002' > bin.dat && chmod +x tool.sh && "
                "ln -s notes.txt notes-link");
}

static void test_dirty_tree(void **state)
{
    fixture *f = *state;
    char *before, *after, *head, *tree, *want, *got, dir[PATH_MAX];
    const char *const skip[] = {".git", NULL};

    make_repo(f);
    make_dirty(f);
    before = user_state(f->repo);
    assert_non_null(strstr(before, "refs/heads/main "));
    assert_non_null(strstr(before, "refs/stash "));
    assert_non_null(strstr(before, "stash@{0}"));
    assert_non_null(strstr(before, "?? notes.txt"));
    open_repo(f, NULL);
    capture(f);
    head = out(f->repo, "git rev-parse HEAD");
    assert_string_equal(f->st.head, head);
    assert_true(f->st.dirty);
    assert_non_null(f->st.snapshot);
    assert_true(f->st.snapshot_new);
    assert_string_equal(f->st.commit, f->st.snapshot);
    tree = git_worktree_tree(f->repo);
    if (strcmp(f->st.tree, tree) != 0) {
        char *d = out(f->repo, "git diff-tree -r %s %s", tree, f->st.tree);
        fprintf(stderr, "snapshot tree != work tree:\n%s\n", d);
        free(d);
    }
    assert_string_equal(f->st.tree, tree);
    got = out(f->repo, "git rev-parse '%s^' '%s' '%s^{tree}'", f->st.snapshot,
              f->st.snapshot_ref, f->st.snapshot);
    want = sw_aprintf("%s\n%s\n%s", head, f->st.snapshot, tree);
    assert_string_equal(got, want);
    assert_non_null(strstr(f->st.snapshot_ref, PREFIX "/"));
    assert_non_null(strstr(f->st.patch, "+print('edited')"));
    assert_non_null(strstr(f->st.patch, "Binary files"));
    assert_int_equal(strlen(f->st.patch), f->st.patch_len);
    after = user_state(f->repo);
    assert_string_equal(before, after);
    snprintf(dir, sizeof(dir), "%s/export", f->root);
    assert_int_equal(sw_git_export(f->g, f->st.snapshot, dir), SW_OK);
    free(got);
    free(want);
    want = list_dir(f->repo, skip);
    got = list_dir(dir, NULL);
    assert_string_equal(got, want);
    assert_int_equal(sw_git_export(f->g, f->st.snapshot, dir), SW_EINVALID);
    free(head);
    free(tree);
    free(want);
    free(got);
    free(before);
    free(after);
}

static void test_export_head(void **state)
{
    fixture *f = *state;
    char dir[PATH_MAX], *want, *got;
    const char *const skip[] = {".git", NULL};

    make_repo(f);
    open_repo(f, NULL);
    capture(f);
    snprintf(dir, sizeof(dir), "%s/out/head", f->root);
    assert_int_equal(sw_git_export(f->g, f->st.commit, dir), SW_OK);
    want = list_dir(f->repo, skip);
    got = list_dir(dir, NULL);
    assert_string_equal(got, want);
    assert_non_null(strstr(got, "run.sh exec"));
    assert_non_null(strstr(got, "model-link link lib/model.py"));
    assert_int_equal(sw_git_export(f->g, "0123456789", dir), SW_ENOTFOUND);
    free(want);
    free(got);
}

static void test_not_a_repo(void **state)
{
    fixture *f = *state;

    assert_int_equal(sw_git_open(&f->g, f->root, NULL), SW_ENOTFOUND);
    assert_null(f->g);
    assert_non_null(strstr(sw_error_last(), "not in a git repository"));
    assert_int_equal(sw_git_open(&f->g, "/nonexistent/x", NULL), SW_ENOTFOUND);
    sh(f->root, "git init -q --bare bare.git");
    assert_int_equal(sw_git_open(&f->g, "bare.git", NULL), SW_ENOTFOUND);
}

static void test_no_commit_yet(void **state)
{
    fixture *f = *state;
    char *before, *after;

    sh(f->root, "git init -q repo");
    open_repo(f, NULL);
    capture(f);
    assert_null(f->st.head);
    assert_null(f->st.commit);
    assert_false(f->st.dirty);
    assert_string_equal(f->st.branch, "main");
    put(f->repo, "a.py", "x = 1\n");
    put(f->repo, "b/c.py", "y = 2\n");
    sh(f->repo, "git add a.py");
    before = user_state(f->repo);
    capture(f);
    assert_null(f->st.head);
    assert_true(f->st.dirty);
    assert_non_null(f->st.snapshot);
    assert_out(f->st.snapshot, f->repo, "git rev-list --parents -n1 %s",
               f->st.snapshot);
    assert_out("a.py\nb/c.py", f->repo, "git ls-tree -r --name-only %s",
               f->st.snapshot);
    assert_non_null(strstr(f->st.patch, "+y = 2"));
    after = user_state(f->repo);
    assert_string_equal(before, after);
    free(before);
    free(after);
}

static void test_detached_head(void **state)
{
    fixture *f = *state;
    char *head;

    make_repo(f);
    put(f->repo, "train.py", "print(2)\n");
    sh(f->repo, "git commit -qam second && git checkout -q --detach HEAD~1");
    head = out(f->repo, "git rev-parse HEAD");
    open_repo(f, NULL);
    capture(f);
    assert_true(f->st.detached);
    assert_null(f->st.branch);
    assert_string_equal(f->st.head, head);
    assert_string_equal(f->st.commit, head);
    assert_false(f->st.dirty);
    free(head);
}

static void make_submodule(fixture *f)
{
    sh(f->root, "git init -q sub && cd sub && echo one > s.txt && "
                "git add s.txt && git commit -qm s1");
    make_repo(f);
    sh(f->repo, "git submodule -q add ../sub sub && git commit -qm sub");
}

static void test_submodule(void **state)
{
    fixture *f = *state;
    char *c1, *c2, *got, dir[PATH_MAX];

    make_submodule(f);
    c1 = out(f->repo, "git -C sub rev-parse HEAD");
    open_repo(f, NULL);
    capture(f);
    assert_int_equal(f->st.n_submodules, 1);
    assert_string_equal(f->st.submodules[0].path, "sub");
    assert_string_equal(f->st.submodules[0].commit, c1);
    assert_false(f->st.submodules[0].dirty);
    assert_false(f->st.dirty);
    sh(f->repo, "cd sub && echo two > s.txt && git commit -qam s2");
    c2 = out(f->repo, "git -C sub rev-parse HEAD");
    capture(f);
    assert_string_equal(f->st.submodules[0].commit, c2);
    assert_true(f->st.dirty);
    assert_non_null(f->st.snapshot);
    got = out(f->repo, "git rev-parse '%s:sub'", f->st.snapshot);
    assert_string_equal(got, c2);
    snprintf(dir, sizeof(dir), "%s/export", f->root);
    assert_int_equal(sw_git_export(f->g, f->st.snapshot, dir), SW_OK);
    free(got);
    got = out(dir, "cat sub/s.txt");
    assert_string_equal(got, "two");
    put(f->repo, "sub/s.txt", "three\n");
    capture(f);
    assert_true(f->st.submodules[0].dirty);
    free(got);
    free(c1);
    free(c2);
}

static void test_ignored_not_snapshotted(void **state)
{
    fixture *f = *state;

    make_repo(f);
    put(f->repo, ".gitignore", "*.log\ncache/\n");
    sh(f->repo, "git add .gitignore && git commit -qm ignore");
    put(f->repo, "train.log", "noise\n");
    put(f->repo, "cache/blob", "cached\n");
    open_repo(f, NULL);
    capture(f);
    assert_false(f->st.dirty);
    assert_null(f->st.snapshot);
    put(f->repo, "extra.py", "z = 1\n");
    capture(f);
    assert_true(f->st.dirty);
    assert_out(".gitignore\nextra.py\nlib/data.py\nlib/model.py\n"
               "model-link\nrun.sh\ntrain.py",
               f->repo, "git ls-tree -r --name-only %s", f->st.snapshot);
}

/* A sweep home inside the work tree: its store and logs. */
static void make_home(const char *repo, const char *home_rel)
{
    char dir[2 * PATH_MAX];

    snprintf(dir, sizeof(dir), "%s/%s", repo, home_rel);
    mkdir(dir, 0755);
    put(dir, "sweep.db", "store\n");
    put(dir, "runs/s1-0/stdout.log", "epoch 1\n");
    put(dir, "runs/s1-0/diff.patch", "diff --git a/x b/x\n");
}

/* The default home, ./.sweep, not ignored by the repository: a capture
 * sees a clean tree, however the home grows between captures. */
static void test_home_excluded(void **state)
{
    fixture *f = *state;
    char home_abs[PATH_MAX + 16], *head;
    const char *ex[] = {home_abs};
    sw_git_opts o = SW_GIT_OPTS_INIT;
    bool changed = true;

    make_repo(f);
    make_home(f->repo, ".sweep");
    snprintf(home_abs, sizeof(home_abs), "%s/.sweep", f->repo);
    o.exclude = ex;
    o.n_exclude = 1;
    open_repo(f, &o);
    capture(f);
    head = out(f->repo, "git rev-parse HEAD");
    assert_false(f->st.dirty);
    assert_null(f->st.snapshot);
    assert_null(f->st.patch);
    assert_int_equal(f->st.n_skipped, 0);
    assert_string_equal(f->st.commit, head);
    put(home_abs, "runs/s1-1/stdout.log", "epoch 2\n");
    assert_int_equal(sw_git_changed(f->g, &changed), SW_OK);
    assert_false(changed);
    capture(f);
    assert_false(f->st.dirty);
    assert_string_equal(f->st.commit, head);
    assert_out("", f->repo, "git for-each-ref refs/sweep");
    put(f->repo, "train.py", "print('edited')\n");
    capture(f);
    assert_true(f->st.dirty);
    assert_non_null(f->st.snapshot);
    assert_null(strstr(f->st.patch, ".sweep"));
    assert_out("lib/data.py\nlib/model.py\nmodel-link\nrun.sh\ntrain.py",
               f->repo, "git ls-tree -r --name-only %s", f->st.snapshot);
    free(head);
}

/* Untracked files that hold secrets never reach a snapshot or a patch,
 * and alone do not make the tree dirty (issue 13, item 6). */
static void test_secrets_left_out(void **state)
{
    fixture *f = *state;
    const char *ig[] = {".env", "id_rsa*", "*.pem"};
    sw_git_opts o = SW_GIT_OPTS_INIT;

    make_repo(f);
    put(f->repo, ".env", "TOKEN=hunter2\n");
    put(f->repo, "keys/id_rsa", "-----BEGIN hunter2-----\n");
    put(f->repo, "lib/cert.pem", "hunter2\n");
    o.ignore = ig;
    o.n_ignore = 3;
    open_repo(f, &o);
    capture(f);
    assert_false(f->st.dirty);
    assert_null(f->st.snapshot);
    put(f->repo, "notes.txt", "a real change\n");
    capture(f);
    assert_true(f->st.dirty);
    assert_non_null(f->st.snapshot);
    assert_null(strstr(f->st.patch, "hunter2"));
    assert_out("lib/data.py\nlib/model.py\nmodel-link\nnotes.txt\nrun.sh\n"
               "train.py",
               f->repo, "git ls-tree -r --name-only %s", f->st.snapshot);
}

/* A home at another name, given relative to the root, with glob
 * characters in it and a tracked file under it: still clean, and a
 * sibling the name would match as a pattern is not excluded. */
static void test_home_elsewhere_excluded(void **state)
{
    fixture *f = *state;
    const char *ex[] = {"./runs dir/h[1]/"};
    sw_git_opts o = SW_GIT_OPTS_INIT;

    make_repo(f);
    put(f->repo, "runs dir/h[1]/kept.txt", "committed\n");
    sh(f->repo, "git add -A && git commit -qm home");
    make_home(f->repo, "runs dir/h[1]");
    put(f->repo, "runs dir/h[1]/kept.txt", "changed\n");
    o.exclude = ex;
    o.n_exclude = 1;
    open_repo(f, &o);
    capture(f);
    assert_false(f->st.dirty);
    assert_null(f->st.snapshot);
    assert_null(f->st.patch);
    put(f->repo, "runs dir/h1/other.txt", "not the home\n");
    capture(f);
    assert_true(f->st.dirty);
    assert_non_null(strstr(f->st.patch, "runs dir/h1/other.txt"));
    assert_null(strstr(f->st.patch, "h[1]"));
    assert_out("runs dir/h1/other.txt\nruns dir/h[1]/kept.txt", f->repo,
               "git ls-tree -r --name-only %s 'runs dir'", f->st.snapshot);
    assert_out("committed", f->repo, "git show '%s:runs dir/h[1]/kept.txt'",
               f->st.snapshot);
}

static void test_large_file_left_out(void **state)
{
    fixture *f = *state;
    sw_git_opts o = SW_GIT_OPTS_INIT;
    char big[5001];

    make_repo(f);
    memset(big, 'x', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    put(f->repo, "weights.bin", big);
    put(f->repo, "small.py", "s = 1\n");
    o.max_file_size = 1000;
    open_repo(f, &o);
    capture(f);
    assert_true(f->st.dirty);
    assert_int_equal(f->st.n_skipped, 1);
    assert_string_equal(f->st.skipped[0].path, "weights.bin");
    assert_int_equal(f->st.skipped[0].size, 5000);
    assert_string_equal(f->st.skipped[0].why, "over the size limit");
    assert_out("", f->repo, "git ls-tree --name-only %s weights.bin",
               f->st.snapshot);
    assert_out("small.py", f->repo, "git ls-tree --name-only %s small.py",
               f->st.snapshot);
    assert_out("  weights.bin (5000 bytes, over the size limit)", f->repo,
               "git log -1 --format=%%B %s | grep weights", f->st.snapshot);
}

static void test_changes_between_captures(void **state)
{
    fixture *f = *state;
    char *s1, *s2;
    bool changed = true;

    make_repo(f);
    put(f->repo, "train.py", "print('a')\n");
    open_repo(f, NULL);
    capture(f);
    s1 = sw_strdup(f->st.snapshot);
    capture(f);
    assert_string_equal(f->st.snapshot, s1);
    assert_false(f->st.snapshot_new);
    assert_int_equal(sw_git_changed(f->g, &changed), SW_OK);
    assert_false(changed);
    put(f->repo, "train.py", "print('b')\n"); /* same size, same second */
    assert_int_equal(sw_git_changed(f->g, &changed), SW_OK);
    assert_true(changed);
    capture(f);
    assert_true(f->st.snapshot_new);
    assert_string_not_equal(f->st.snapshot, s1);
    assert_out("print('b')", f->repo, "git show refs/sweep/test/%s:train.py",
               f->st.snapshot);
    s2 = sw_strdup(f->st.snapshot);
    put(f->repo, "train.py", "print('hello')\n"); /* back to HEAD */
    capture(f);
    assert_false(f->st.dirty);
    assert_null(f->st.snapshot);
    assert_string_equal(f->st.commit, f->st.head);
    assert_out(s1, f->repo, "git rev-parse refs/sweep/test/%s", s1);
    free(s1);
    free(s2);
}

static void test_remote_credentials(void **state)
{
    fixture *f = *state;
    static const char *const cases[][2] = {
        {"https://user:secret@example.com/org/r.git",
         "https://example.com/org/r.git"},
        {"https://ghp_token123@github.com/org/r", "https://github.com/org/r"},
        {"http://x-access-token:abc@host:8080/r?private_token=t#f",
         "http://host:8080/r"},
        {"ssh://git:pw@host/r.git", "ssh://git@host/r.git"},
        {"ssh://git@host/r.git", "ssh://git@host/r.git"},
        {"git@github.com:org/r.git", "git@github.com:org/r.git"},
        {"/srv/git/r.git", "/srv/git/r.git"},
        {"https://example.com/a@b/r", "https://example.com/a@b/r"},
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char *got = sw_git_url_strip(cases[i][0]);
        assert_string_equal(got, cases[i][1]);
        free(got);
    }
    make_repo(f);
    sh(f->repo, "git remote add origin "
                "https://user:secret@example.com/org/repo.git");
    open_repo(f, NULL);
    capture(f);
    assert_string_equal(f->st.remote, "https://example.com/org/repo.git");
}

static void test_program_outside_cwd_repo(void **state)
{
    fixture *f = *state;
    char other[PATH_MAX], prog[PATH_MAX + 8], loose[PATH_MAX];
    const char *paths[2];

    make_repo(f);
    snprintf(other, sizeof(other), "%s/other", f->root);
    sh(f->root, "git init -q other && cd other && echo p > p.py && "
                "git add p.py && git commit -qm p");
    snprintf(prog, sizeof(prog), "%s/p.py", other);
    paths[0] = prog;
    paths[1] = f->repo;
    assert_int_equal(sw_git_open_first(&f->g, paths, 2, NULL), SW_OK);
    assert_string_equal(sw_git_root(f->g), other);
    sw_git_free(f->g);
    snprintf(loose, sizeof(loose), "%s/loose.py", f->root);
    put(f->root, "loose.py", "l = 1\n");
    paths[0] = loose;
    assert_int_equal(sw_git_open_first(&f->g, paths, 2, NULL), SW_OK);
    assert_string_equal(sw_git_root(f->g), f->repo);
    sw_git_free(f->g);
    paths[1] = f->root;
    assert_int_equal(sw_git_open_first(&f->g, paths, 2, NULL), SW_ENOTFOUND);
}

static void test_bad_ref_prefix(void **state)
{
    fixture *f = *state;

    make_repo(f);
    open_repo(f, NULL);
    assert_int_equal(sw_git_capture(f->g, "refs/heads/x", &f->st), SW_EINVALID);
    assert_int_equal(sw_git_capture(f->g, "refs/sweep/", &f->st), SW_EINVALID);
    put(f->repo, "x.py", "x\n");
    assert_int_equal(sw_git_capture(f->g, "refs/sweep/a b", &f->st),
                     SW_EINVALID);
    assert_null(f->st.root);
    assert_out("", f->repo, "git for-each-ref refs/sweep");
}

int main(void)
{
    /* clang-format off */
    const struct CMUnitTest tests[] = {
        T(test_clean_tree),
        T(test_dirty_tree),
        T(test_export_head),
        T(test_not_a_repo),
        T(test_no_commit_yet),
        T(test_detached_head),
        T(test_submodule),
        T(test_ignored_not_snapshotted),
        T(test_home_excluded),
        T(test_secrets_left_out),
        T(test_home_elsewhere_excluded),
        T(test_large_file_left_out),
        T(test_changes_between_captures),
        T(test_remote_credentials),
        T(test_program_outside_cwd_repo),
        T(test_bad_ref_prefix),
    };
    /* clang-format on */

    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
