/*
 * test_provenance.c - the engine's git provenance on real repositories
 * made with the `git` command in a temporary folder: the sweep's facts at
 * start, each run's facts before it starts (an edit between two runs is
 * recorded against the runs that saw it, and not against those that did
 * not), diff.patch beside the run, the program's repository before the
 * current folder's, a home inside the repository (never recorded as
 * code), and a sweep outside any repository.
 *
 * The engine is a bare sw_engine with just what provenance reads: the
 * spec, the sweep's id and the runs folder; no process is started.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "testutil.h"

#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "orchestrator/provenance.h"
#include "sweeps/buf.h"
#include "sweeps/diag.h"
#include "sweeps/json.h"

#define T(test) cmocka_unit_test_setup_teardown(test, setup, teardown)

typedef struct {
    char root[64];
    char repo[PATH_MAX];
    char cwd[PATH_MAX]; /* the test's, restored after */
    sw_engine e;
    sw_run_rec runs[4];
} fixture;

static void sh(const char *dir, const char *cmd)
{
    char *full = sw_aprintf("cd '%s' && (%s) >/dev/null 2>&1", dir, cmd);
    int rc = system(full);

    free(full);
    if (rc != 0)
        fail_msg("command failed in %s: %s", dir, cmd);
}

static char *out(const char *dir, const char *cmd)
{
    char full[4096], chunk[4096];
    sw_buf b = SW_BUF_INIT;
    FILE *p;
    size_t n;

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

static void put(const char *dir, const char *rel, const char *text)
{
    char *path = sw_aprintf("%s/%s", dir, rel);
    FILE *f = fopen(path, "w");

    free(path);
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* The engine of a sweep whose command runs `program`. */
static void engine(fixture *f, const char *program)
{
    char *text = sw_aprintf("method: grid\ncommand: [sh, %s]\n"
                            "parameters:\n  x: {values: [1, 2]}\n",
                            program);
    sw_diags d;

    sw_diags_init(&d, "sweep.yaml");
    if (sw_spec_parse(&f->e.spec, "sweep.yaml", text, strlen(text), &d))
        fail_msg("spec: %s", sw_error_last());
    sw_diags_dispose(&d);
    free(text);
    f->e.sweep.id = sw_strdup("5eed0001");
    f->e.runs_dir = sw_aprintf("%s/home/runs", f->root);
}

static void run(fixture *f, int i)
{
    f->runs[i].id = sw_aprintf("5eed0001-%d", i + 1);
    assert_int_equal(sw_provenance_run(&f->e, &f->runs[i]), SW_OK);
}

static const char *git_str(const char *json, const char *key, char *buf,
                           size_t n)
{
    sw_value *v = NULL;
    const sw_value *x;

    assert_int_equal(sw_json_parse(&v, json, strlen(json)), SW_OK);
    x = sw_value_map_get(v, key);
    snprintf(buf, n, "%s", x && x->type == SW_STR ? x->u.s : "(null)");
    sw_value_free(v);
    return buf;
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof(*f));

    snprintf(f->root, sizeof(f->root), "/tmp/sw-prov-XXXXXX");
    if (!mkdtemp(f->root) || !getcwd(f->cwd, sizeof(f->cwd)))
        return -1;
    snprintf(f->repo, sizeof(f->repo), "%s/repo", f->root);
    sh(f->root, "git init -q repo && cd repo && echo 'echo 1' > train.sh && "
                "git add train.sh && git -c user.name=t -c user.email=t@t "
                "commit -qm one");
    if (chdir(f->repo) != 0)
        return -1;
    unsetenv("SWEEP_GIT");
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;

    if (chdir(f->cwd) != 0)
        return -1;
    for (int i = 0; i < 4; i++)
        sw_run_rec_dispose(&f->runs[i]);
    sw_provenance_free(f->e.prov);
    sw_spec_free(f->e.spec);
    sw_sweep_rec_dispose(&f->e.sweep);
    free(f->e.runs_dir);
    free(f->e.home);
    sw_test_rm_tree(f->root);
    free(f);
    return 0;
}

static void test_clean_sweep(void **state)
{
    fixture *f = *state;
    char *head = out(f->repo, "git rev-parse HEAD"), buf[256];

    engine(f, "train.sh");
    sw_provenance_start(&f->e, true);
    assert_non_null(f->e.prov);
    assert_string_equal(f->e.sweep.git_commit, head);
    assert_false(f->e.sweep.git_dirty);
    assert_string_equal(git_str(f->e.sweep.git, "root", buf, sizeof(buf)),
                        f->repo);
    run(f, 0);
    assert_string_equal(f->runs[0].git_commit, head);
    assert_false(f->runs[0].git_dirty);
    assert_string_equal(git_str(f->runs[0].git, "patch", buf, sizeof(buf)),
                        "(null)");
    free(head);
}

/* An edit between two runs is recorded against the runs that saw it. */
static void test_edits_between_runs(void **state)
{
    fixture *f = *state;
    char buf[PATH_MAX], *text, *path;
    size_t len = 0;

    engine(f, "train.sh");
    put(f->repo, "train.sh", "echo 2\n");
    sw_provenance_start(&f->e, true);
    assert_true(f->e.sweep.git_dirty);
    run(f, 0);
    assert_string_equal(f->runs[0].git_commit, f->e.sweep.git_commit);
    put(f->repo, "train.sh", "echo 3\n");
    run(f, 1);
    run(f, 2);
    assert_string_not_equal(f->runs[1].git_commit, f->runs[0].git_commit);
    assert_string_equal(f->runs[2].git_commit, f->runs[1].git_commit);
    text = out(f->repo, "git for-each-ref --format='%(refname)' refs/sweep");
    assert_non_null(strstr(text, f->runs[1].git_commit));
    assert_non_null(strstr(text, "refs/sweep/5eed0001/"));
    free(text);
    path = sw_aprintf("%s/5eed0001-2/diff.patch", f->e.runs_dir);
    assert_string_equal(git_str(f->runs[1].git, "patch", buf, sizeof(buf)),
                        path);
    text = out(f->repo, "cat ../home/runs/5eed0001-2/diff.patch");
    len = strlen(text);
    assert_true(len > 0);
    assert_non_null(strstr(text, "+echo 3"));
    free(text);
    free(path);
    sh(f->repo, "git checkout -q train.sh");
    assert_int_equal(sw_provenance_run(&f->e, &f->runs[1]), SW_OK);
    /* a retry on a clean tree: HEAD, and no stale patch */
    assert_false(f->runs[1].git_dirty);
    text = out(f->repo, "ls ../home/runs/5eed0001-2");
    assert_string_equal(text, "");
    free(text);
}

/* The home inside the repository, not ignored by it: its store and the
 * logs of earlier runs are not code, so every run records HEAD. */
static void test_home_inside_repo(void **state)
{
    fixture *f = *state;
    char *head = out(f->repo, "git rev-parse HEAD"), *refs;

    engine(f, "train.sh");
    free(f->e.runs_dir);
    f->e.home = sw_aprintf("%s/.sweep", f->repo);
    f->e.runs_dir = sw_aprintf("%s/runs", f->e.home);
    sh(f->repo, "mkdir -p .sweep/runs/5eed0001-1 && echo db > .sweep/sweep.db");
    sw_provenance_start(&f->e, true);
    assert_string_equal(f->e.sweep.git_commit, head);
    assert_false(f->e.sweep.git_dirty);
    run(f, 0);
    put(f->e.runs_dir, "5eed0001-1/stdout.log", "epoch 1\n");
    run(f, 1);
    assert_string_equal(f->runs[0].git_commit, head);
    assert_string_equal(f->runs[1].git_commit, head);
    assert_false(f->runs[1].git_dirty);
    refs = out(f->repo, "git for-each-ref refs/sweep");
    assert_string_equal(refs, "");
    free(refs);
    free(head);
}

static void test_program_repository_first(void **state)
{
    fixture *f = *state;
    char prog[PATH_MAX + 16], buf[PATH_MAX], *head;

    sh(f->root, "git init -q code && cd code && echo 'echo p' > p.sh && "
                "git add p.sh && git -c user.name=t -c user.email=t@t "
                "commit -qm p");
    snprintf(prog, sizeof(prog), "%s/code/p.sh", f->root);
    head = out(f->root, "git -C code rev-parse HEAD");
    engine(f, prog);
    sw_provenance_start(&f->e, true);
    assert_string_equal(f->e.sweep.git_commit, head);
    snprintf(prog, sizeof(prog), "%s/code", f->root);
    assert_string_equal(git_str(f->e.sweep.git, "root", buf, sizeof(buf)),
                        prog);
    free(head);
}

static void test_outside_git(void **state)
{
    fixture *f = *state;

    assert_int_equal(chdir(f->root), 0);
    sh(f->root, "mkdir plain");
    assert_int_equal(chdir("plain"), 0);
    engine(f, "train.sh");
    sw_provenance_start(&f->e, true);
    assert_null(f->e.prov);
    assert_null(f->e.sweep.git);
    assert_null(f->e.sweep.git_commit);
    run(f, 0);
    assert_null(f->runs[0].git);
    assert_null(f->runs[0].git_commit);
    assert_int_equal(sw_provenance_freeze(&f->e), SW_EINVALID);
}

/* Opt-in: trials run from a checkout of the sweep's code, which later
 * edits do not reach; a resumed sweep that starts there stays frozen. */
static void test_frozen_sweep(void **state)
{
    fixture *f = *state;
    char *want, *got;

    engine(f, "train.sh");
    f->e.home = sw_aprintf("%s/home", f->root);
    f->e.sweep.cwd = realpath(f->repo, NULL);
    put(f->repo, "train.sh", "echo frozen\n");
    sw_provenance_start(&f->e, true);
    assert_int_equal(sw_provenance_freeze(&f->e), SW_OK);
    want = sw_aprintf("%s/code/5eed0001", f->e.home);
    assert_string_equal(f->e.sweep.cwd, want);
    put(f->repo, "train.sh", "echo later\n");
    run(f, 0);
    assert_string_equal(f->runs[0].git_commit, f->e.sweep.git_commit);
    got = out(want, "cat train.sh");
    assert_string_equal(got, "echo frozen");
    free(got);
    sw_provenance_free(f->e.prov);
    f->e.prov = NULL;
    sw_provenance_start(&f->e, false); /* resume */
    run(f, 1);
    assert_string_equal(f->runs[1].git_commit, f->e.sweep.git_commit);
    assert_string_equal(f->runs[1].git, f->e.sweep.git);
    assert_int_equal(sw_provenance_freeze(&f->e), SW_OK); /* already */
    assert_string_equal(f->e.sweep.cwd, want);
    free(want);
}

static void test_turned_off(void **state)
{
    fixture *f = *state;

    setenv("SWEEP_GIT", "off", 1);
    engine(f, "train.sh");
    sw_provenance_start(&f->e, true);
    unsetenv("SWEEP_GIT");
    assert_null(f->e.prov);
    assert_null(f->e.sweep.git);
}

int main(void)
{
    /* clang-format off */
    const struct CMUnitTest tests[] = {
        T(test_clean_sweep),
        T(test_edits_between_runs),
        T(test_home_inside_repo),
        T(test_program_repository_first),
        T(test_outside_git),
        T(test_turned_off),
        T(test_frozen_sweep),
    };
    /* clang-format on */

    return cmocka_run_group_tests(tests, NULL, NULL);
}
