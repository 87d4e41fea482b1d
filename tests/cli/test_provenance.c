/*
 * test_provenance.c - git provenance end to end, through the real `sweep`
 * binary in a repository made with `git` in a temporary folder.
 *
 * The first of three trials edits a tracked file, so the runs after it
 * start with other code: the sweep and the first run record one snapshot,
 * the second and third another, and `sweep reproduce` gives each back as
 * it was (byte for byte the commit's files, and the value each trial
 * read). The user's index file, HEAD, refs and stash are unchanged, the
 * remote's password is not recorded, and ignored files are not in any
 * snapshot. Outside a repository the sweep runs, records nothing, and
 * `sweep reproduce` says why it cannot help.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "sweeps/buf.h"

static const char trainer[] =
    "v=$(cat config.txt)\n"
    "echo \"@metrics {\\\"seen\\\": $v}\"\n"
    "case \"$1\" in --x=1) echo 2 > config.txt ;; esac\n";

static const char sweep_file[] = "method: grid\n"
                                 "command: [/bin/sh, train.sh, \"${args}\"]\n"
                                 "parameters:\n  x: {values: [1, 2, 3]}\n";

/* The output of a shell command run in `dir`, without its last newline. */
static char *sh_out(const char *dir, const char *cmd)
{
    char *full = sw_aprintf("cd '%s' && (%s) 2>/dev/null", dir, cmd);
    sw_buf b = SW_BUF_INIT;
    char chunk[4096];
    size_t n;
    FILE *p = popen(full, "r");

    assert_non_null(p);
    while ((n = fread(chunk, 1, sizeof(chunk), p)) > 0)
        sw_buf_put(&b, chunk, n);
    pclose(p);
    free(full);
    if (b.len > 0 && b.ptr[b.len - 1] == '\n')
        b.ptr[--b.len] = '\0';
    return sw_buf_detach(&b);
}

/* The user's git state, minus the file the first trial edits. */
static char *user_state(const char *repo)
{
    return sh_out(repo, "git --no-optional-locks status --porcelain -uall |"
                        " grep -v config.txt; md5sum .git/index;"
                        " cat .git/HEAD; git stash list; git for-each-ref |"
                        " grep -v refs/sweep/");
}

/* A repository with the trainer committed, then a dirty tree: an
 * untracked file, an ignored one, a staged sweep file, a stash. */
static char *make_repo(const sw_h *h)
{
    char *repo = sw_aprintf("%s/repo", h->dir), *cmd;
    char *out;

    cmd = sw_aprintf("mkdir '%s' && cd '%s' && git init -q && "
                     "printf 'weights*\\n' > .gitignore && echo 1 > "
                     "config.txt && cat > train.sh",
                     repo, repo);
    FILE *p = popen(cmd, "w");
    assert_non_null(p);
    fputs(trainer, p);
    assert_int_equal(pclose(p), 0);
    free(cmd);
    out = sh_out(repo,
                 "git add -A && git -c user.name=t -c user.email=t@t commit "
                 "-qm one && git remote add origin "
                 "https://me:hunter2@example.com/org/r.git && echo 5 > "
                 "config.txt && git stash -q && echo note > notes.md && "
                 "echo w > weights.bin && echo ok");
    assert_string_equal(out, "ok");
    free(out);
    return repo;
}

static char *q1(const sw_h *h, const char *sql)
{
    const char *args[] = {"query", sql, "--csv", NULL};
    char *out = NULL, *nl;

    assert_int_equal(sw_h_run(h, args, &out), 0);
    nl = strchr(out, '\n');
    assert_non_null(nl);
    memmove(out, nl + 1, strlen(nl + 1) + 1);
    if ((nl = strchr(out, '\n')) != NULL)
        *nl = '\0';
    return out;
}

/* Reproduces `run` into DIR and checks it against the commit's files. */
static void check_reproduce(const sw_h *h, const char *repo, const char *run,
                            const char *commit, const char *seen)
{
    char *dir = sw_aprintf("%s/out-%s", h->dir, run), *out = NULL, *cmd;
    const char *args[] = {"reproduce", run, dir, NULL};

    assert_int_equal(sw_h_run(h, args, &out), 0);
    assert_non_null(strstr(out, commit));
    assert_non_null(strstr(out, "command  /bin/sh train.sh --x="));
    assert_non_null(strstr(out, "SWEEP_RUN_ID="));
    free(out);
    cmd = sw_aprintf("mkdir ../want && git archive %s | tar -x -C ../want && "
                     "diff -r ../want '%s' && rm -r ../want && cat "
                     "'%s/config.txt' && ls '%s'",
                     commit, dir, dir, dir);
    out = sh_out(repo, cmd);
    free(cmd);
    cmd = sw_aprintf("%s\nconfig.txt\nnotes.md\nsweep.yaml\ntrain.sh", seen);
    assert_string_equal(out, cmd);
    free(cmd);
    free(out);
    args[2] = NULL; /* the default folder, under the sweep home */
    assert_int_equal(sw_h_run(h, args, NULL), 0);
    free(dir);
}

/* Runs the sweep in `repo`; the user's git state must not change. */
static void run_sweep(sw_h *h, const char *repo)
{
    char *before = user_state(repo), *after, *out = NULL;
    const char *run[] = {"run", "sweep.yaml", "--parallel", "1", NULL};

    assert_int_equal(sw_h_run(h, run, &out), 0);
    assert_non_null(strstr(out, "dirty"));
    after = user_state(repo);
    assert_string_equal(before, after);
    free(out);
    free(before);
    free(after);
}

/* The sweep's code: a snapshot over HEAD, without the ignored file, and
 * the remote without its password. Returns its commit. */
static char *sweep_code(sw_h *h, const char *repo)
{
    char *c = q1(h, "select git_commit || ' ' || git_dirty || ' ' ||"
                    " (git ->> '$.remote') from sweeps");
    char *cmd, *out;

    assert_non_null(strstr(c, " 1 https://example.com/org/r.git"));
    c[40] = '\0';
    cmd = sw_aprintf("git rev-parse %s^ HEAD | uniq | wc -l; git ls-tree "
                     "--name-only %s",
                     c, c);
    out = sh_out(repo, cmd);
    assert_string_equal(out, "1\n.gitignore\nconfig.txt\nnotes.md\n"
                             "sweep.yaml\ntrain.sh");
    free(cmd);
    free(out);
    return c;
}

/* Run 1 ran the sweep's code and edited it; runs 2 and 3 saw the edit. */
static void check_runs(sw_h *h, const char *repo, char *const c[4])
{
    char *out, *id;

    assert_string_equal(c[1], c[0]);
    assert_string_not_equal(c[2], c[1]);
    assert_string_equal(c[3], c[2]);
    out = sh_out(repo, "git for-each-ref refs/sweep | wc -l");
    assert_string_equal(out, "2"); /* two snapshots, one ref each */
    free(out);
    out = q1(h, "select group_concat(value, ',') from (select value from"
                " metrics order by run_id)");
    assert_string_equal(out, "\"1.0,2.0,2.0\""); /* CSV-quoted */
    free(out);
    id = q1(h, "select id from runs where idx = 1");
    check_reproduce(h, repo, id, c[2], "2");
    free(id);
    id = q1(h, "select id from runs where idx = 0");
    check_reproduce(h, repo, id, c[1], "1");
    const char *show[] = {"show", id, NULL};
    assert_int_equal(sw_h_run(h, show, &out), 0);
    assert_non_null(strstr(out, "snapshot "));
    assert_null(strstr(out, "hunter2"));
    free(out);
    free(id);
}

static void test_runs_tied_to_their_code(void **state)
{
    sw_h h;
    char *repo, *c[4], cwd[PATH_MAX];

    (void)state;
    sw_h_init(&h);
    repo = make_repo(&h);
    free(sw_h_file(&h, "repo/sweep.yaml", sweep_file));
    free(sh_out(repo, "git add sweep.yaml"));
    assert_non_null(getcwd(cwd, sizeof(cwd)));
    assert_int_equal(chdir(repo), 0);
    run_sweep(&h, repo);
    c[0] = sweep_code(&h, repo);
    for (int i = 1; i <= 3; i++) {
        char *sql = sw_aprintf("select coalesce(git_commit, 'none') from runs"
                               " where idx = %d",
                               i - 1);
        c[i] = q1(&h, sql);
        free(sql);
    }
    check_runs(&h, repo, c);
    assert_int_equal(chdir(cwd), 0);
    for (int i = 0; i < 4; i++)
        free(c[i]);
    free(repo);
    sw_h_dispose(&h);
}

/* With `code: snapshot`, trials run from a checkout of the sweep's code:
 * an edit made to the work tree during the sweep reaches none of them. */
static void test_code_snapshot_keeps_edits_out(void **state)
{
    static const char edit[] =
        "v=$(cat config.txt)\n"
        "echo \"@metrics {\\\"seen\\\": $v}\"\n"
        "case \"$2\" in --x=1) echo 2 > \"$1/config.txt\" ;; esac\n";
    sw_h h;
    char *repo, *text, *out, cwd[PATH_MAX];

    (void)state;
    sw_h_init(&h);
    repo = make_repo(&h);
    free(sw_h_file(&h, "repo/edit.sh", edit));
    text = sw_aprintf("method: grid\ncode: snapshot\ncommand: [/bin/sh, "
                      "edit.sh, %s, \"${args}\"]\nparameters:\n  x: "
                      "{values: [1, 2, 3]}\n",
                      repo);
    free(sw_h_file(&h, "repo/sweep.yaml", text));
    assert_non_null(getcwd(cwd, sizeof(cwd)));
    assert_int_equal(chdir(repo), 0);
    const char *run[] = {"run", "sweep.yaml", "--parallel", "1", NULL};
    assert_int_equal(sw_h_run(&h, run, NULL), 0);
    out = q1(&h, "select group_concat(value, ',') from (select value from"
                 " metrics order by run_id)");
    assert_string_equal(out, "\"1.0,1.0,1.0\""); /* the edit stayed out */
    free(out);
    out = sh_out(repo, "cat config.txt"); /* it was made, in the tree */
    assert_string_equal(out, "2");
    free(out);
    assert_int_equal(sw_h_count(&h, "select count(distinct git_commit) from"
                                    " runs"),
                     1);
    assert_int_equal(sw_h_count(&h, "select count(*) from sweeps where cwd"
                                    " like '%/code/%'"),
                     1);
    assert_int_equal(chdir(cwd), 0);
    free(text);
    free(repo);
    sw_h_dispose(&h);
}

static void test_outside_git(void **state)
{
    sw_h h;
    char *file, *out = NULL, *err, cwd[PATH_MAX];

    (void)state;
    sw_h_init(&h);
    file = sw_h_file(&h, "train.sh", trainer);
    free(file);
    free(sw_h_file(&h, "config.txt", "7\n"));
    file = sw_h_file(&h, "sweep.yaml", sweep_file);
    assert_non_null(getcwd(cwd, sizeof(cwd)));
    assert_int_equal(chdir(h.dir), 0);
    const char *run[] = {"run", "sweep.yaml", "--parallel", "1", NULL};
    assert_int_equal(sw_h_run(&h, run, NULL), 0);
    err = sw_aprintf("%s/stderr.txt", h.dir);
    out = sh_out(h.dir, "grep -c 'not in a git repository' stderr.txt");
    assert_string_equal(out, "1");
    free(out);
    assert_int_equal(sw_h_count(&h, "select count(*) from runs where git is"
                                    " null and git_commit is null"),
                     3);
    const char *rep[] = {"reproduce", "0", NULL};
    out = q1(&h, "select id from runs where idx = 0");
    rep[1] = out;
    assert_int_equal(sw_h_run(&h, rep, NULL), 1);
    free(out);
    out = sh_out(h.dir, "tail -1 stderr.txt");
    assert_non_null(strstr(out, "has no recorded code"));
    free(out);
    assert_int_equal(chdir(cwd), 0);
    free(err);
    free(file);
    sw_h_dispose(&h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_runs_tied_to_their_code),
        cmocka_unit_test(test_code_snapshot_keeps_edits_out),
        cmocka_unit_test(test_outside_git),
    };

    unsetenv("SWEEP_GIT");
    return cmocka_run_group_tests(tests, NULL, NULL);
}
