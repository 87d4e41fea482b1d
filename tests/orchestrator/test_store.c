/*
 * test_store.c - the store against real SQLite files in a fresh temporary
 * folder per test: schema creation and migration, every field of sweeps
 * and runs through put/get/update/list (NULLs included), run counts by
 * state, sweep lookup by id, prefix and name, metrics and the last value
 * of each (with ids holding quotes, which are data, never SQL), WAL and
 * concurrent readers, and sw_store_query refusing everything that is not
 * one read-only statement while leaving the store exactly as it was.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "orchestrator/store/store.h"

typedef struct {
    char dir[64];
    char path[128];
    sw_store *st;
} fixture;

static int setup(void **state)
{
    fixture *f = sw_calloc(1, sizeof(*f));

    snprintf(f->dir, sizeof(f->dir), "/tmp/sweep-store-XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    snprintf(f->path, sizeof(f->path), "%s/sweep.db", f->dir);
    assert_int_equal(sw_store_open(&f->st, f->path, true), SW_OK);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    DIR *d;
    struct dirent *e;
    char p[512];

    sw_store_close(f->st);
    d = opendir(f->dir);
    while (d && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        snprintf(p, sizeof(p), "%s/%s", f->dir, e->d_name);
        unlink(p);
    }
    if (d)
        closedir(d);
    rmdir(f->dir);
    free(f);
    return 0;
}

/* Query results as text: the header, then one line per row, with cells
 * as Python's str() joined by '|'. */
static int collect(void *ctx, int64_t row, int ncols, const char *const *names,
                   const sw_value *const *values)
{
    sw_buf *b = ctx;

    for (int i = 0; i < ncols; i++) {
        if (i)
            sw_buf_putc(b, '|');
        if (row < 0)
            sw_buf_puts(b, names[i]);
        else
            sw_value_write_py(b, values[i]);
    }
    sw_buf_putc(b, '\n');
    return 0;
}

/* The rows of a query that must succeed, without the header. */
static char *q(sw_store *st, const char *sql)
{
    sw_buf b = SW_BUF_INIT;
    char *out, *nl;
    int error = sw_store_query(st, sql, collect, &b);

    if (error)
        fail_msg("%s: %s", sql, sw_error_last());
    out = sw_buf_detach(&b);
    nl = strchr(out, '\n');
    memmove(out, nl + 1, strlen(nl + 1) + 1);
    return out;
}

static void expect_q(sw_store *st, const char *sql, const char *want)
{
    char *got = q(st, sql);

    assert_string_equal(got, want);
    free(got);
}

static sw_sweep_rec a_sweep(char *id, char *name, double created_at)
{
    sw_sweep_rec s = {
        .id = id,
        .name = name,
        .file = "sweep.yaml",
        .config = "method: grid\nparameters: {lr: {values: [1, 2]}}\n",
        .method = "grid",
        .metric = "loss",
        .goal = "minimize",
        .state = "running",
        .cwd = "/home/me/proj",
        .seed = 42,
        .parallel = 4,
        .created_at = created_at,
        .ended_at = 0,
    };
    return s;
}

static sw_run_rec a_run(char *id, char *sweep_id, int64_t idx)
{
    sw_run_rec r = {
        .id = id,
        .sweep_id = sweep_id,
        .idx = idx,
        .cell = "c0ffee",
        .params = "{\"lr\": 0.01, \"model\": {\"depth\": 3}}",
        .argv = "[\"python\", \"train.py\", \"--lr=0.01\"]",
        .state = SW_RUN_PENDING,
        .attempts = 0,
        .created_at = 1700000001.25,
    };
    return r;
}

static void put_sweep(sw_store *st, const sw_sweep_rec *s)
{
    if (sw_store_put_sweep(st, s))
        fail_msg("%s", sw_error_last());
}

static void put_run(sw_store *st, const sw_run_rec *r)
{
    if (sw_store_put_run(st, r))
        fail_msg("%s", sw_error_last());
}

static void assert_contains(const char *s, const char *part)
{
    if (!strstr(s, part))
        fail_msg("'%s' does not contain '%s'", s, part);
}

/* A byte of the database header, as it is in the file. */
static int header_byte(const char *path, long off)
{
    FILE *fp = fopen(path, "rb");
    int c;

    assert_non_null(fp);
    assert_int_equal(fseek(fp, off, SEEK_SET), 0);
    c = fgetc(fp);
    fclose(fp);
    return c;
}

/* PRAGMA user_version, from the header (offset 60, big-endian); the truth
 * once the WAL is checkpointed, as it is after a clean close. */
static int user_version(const char *path)
{
    int v = 0;

    for (long i = 60; i < 64; i++)
        v = v * 256 + header_byte(path, i);
    return v;
}

/* ---- states ------------------------------------------------------------ */

static void test_state_names(void **state)
{
    sw_run_state s;

    (void)state;
    for (int i = SW_RUN_PENDING; i <= SW_RUN_CANCELED; i++) {
        assert_int_equal(sw_run_state_parse(&s, sw_run_state_name(i)), SW_OK);
        assert_int_equal(s, i);
    }
    assert_string_equal(sw_run_state_name(SW_RUN_STOPPED), "stopped");
    assert_string_equal(sw_run_state_name((sw_run_state)99), "unknown");
    assert_int_equal(sw_run_state_parse(&s, "done"), SW_EINVALID);
    assert_string_equal(sw_error_last(), "unknown run state 'done'");
}

static void test_dispose_zeroed(void **state)
{
    sw_sweep_rec s = {0};
    sw_run_rec r = {0};

    (void)state;
    sw_sweep_rec_dispose(&s);
    sw_run_rec_dispose(&r);
    sw_sweep_rec_dispose(NULL);
    sw_run_rec_dispose(NULL);
}

/* ---- open and migrate -------------------------------------------------- */

static void test_create_and_reopen(void **state)
{
    fixture *f = *state;
    const char *schema = "select group_concat(name, ',') from (select name "
                         "from sqlite_master order by name)";
    char *before = q(f->st, schema);
    sw_store *r;

    assert_string_equal(before, "attempts,exports,exports_key,"
                                "gpu_samples,gpu_samples_sweep_time,"
                                "metrics,metrics_run_step,notes,runs,"
                                "sqlite_autoindex_attempts_1,"
                                "sqlite_autoindex_notes_1,"
                                "sqlite_autoindex_runs_1,"
                                "sqlite_autoindex_runs_2,"
                                "sqlite_autoindex_sweeps_1,"
                                "sqlite_autoindex_tags_1,sweeps,"
                                "sweeps_name,tags\n");
    sw_store_close(f->st);
    f->st = NULL;
    assert_int_equal(user_version(f->path), 18);
    /* Reopening is idempotent: the migration runs once. */
    for (int i = 0; i < 2; i++) {
        assert_int_equal(sw_store_open(&f->st, f->path, true), SW_OK);
        expect_q(f->st, schema, before);
        sw_store_close(f->st);
        f->st = NULL;
    }
    assert_int_equal(sw_store_open(&r, f->path, false), SW_OK);
    expect_q(r, schema, before);
    sw_store_close(r);
    assert_int_equal(sw_store_open(&f->st, f->path, true), SW_OK);
    free(before);
}

static void test_newer_schema_refused(void **state)
{
    fixture *f = *state;
    unsigned char v[4] = {0, 0, 0, 99};
    sw_store *st;
    FILE *fp;

    /* After a clean close the WAL is checkpointed into the file, so the
     * header's user_version (offset 60, big-endian) is the truth. */
    sw_store_close(f->st);
    f->st = NULL;
    fp = fopen(f->path, "r+b");
    assert_non_null(fp);
    assert_int_equal(fseek(fp, 60, SEEK_SET), 0);
    assert_int_equal(fwrite(v, 1, 4, fp), 4);
    fclose(fp);
    for (int writer = 0; writer < 2; writer++) {
        assert_int_equal(sw_store_open(&st, f->path, writer), SW_EINVALID);
        assert_null(st);
        assert_contains(sw_error_last(), "schema version 99 is newer");
        assert_contains(sw_error_last(), f->path);
    }
}

static void test_open_errors(void **state)
{
    fixture *f = *state;
    char p[256];
    sw_store *st;
    FILE *fp;

    snprintf(p, sizeof(p), "%s/absent.db", f->dir);
    assert_int_equal(sw_store_open(&st, p, false), SW_ENOTFOUND);
    assert_contains(sw_error_last(), p);
    snprintf(p, sizeof(p), "%s/garbage.db", f->dir);
    fp = fopen(p, "wb");
    assert_non_null(fp);
    for (int i = 0; i < 200; i++)
        fputs("not a database at all ", fp);
    fclose(fp);
    assert_int_equal(sw_store_open(&st, p, true), SW_EIO);
    assert_contains(sw_error_last(), "file is not a database");
    snprintf(p, sizeof(p), "%s/no/such/dir.db", f->dir);
    assert_int_equal(sw_store_open(&st, p, true), SW_EIO);
    assert_contains(sw_error_last(), "unable to open");
}

static void test_wal_mode(void **state)
{
    fixture *f = *state;
    char p[256];
    struct stat sb;

    /* File format bytes 18 and 19 are 2 in WAL mode, 1 otherwise. */
    assert_int_equal(header_byte(f->path, 18), 2);
    assert_int_equal(header_byte(f->path, 19), 2);
    snprintf(p, sizeof(p), "%s-wal", f->path);
    assert_int_equal(stat(p, &sb), 0);
}

/* ---- sweeps ------------------------------------------------------------ */

static void assert_sweep_equal(const sw_sweep_rec *a, const sw_sweep_rec *b)
{
    const char *sa[] = {a->id,     a->name,        a->file, a->config,
                        a->method, a->metric,      a->goal, a->state,
                        a->cwd,    a->git_commit,  a->git,  a->command,
                        a->gpus,   a->backend_args};
    const char *sb[] = {b->id,     b->name,        b->file, b->config,
                        b->method, b->metric,      b->goal, b->state,
                        b->cwd,    b->git_commit,  b->git,  b->command,
                        b->gpus,   b->backend_args};

    for (size_t i = 0; i < sizeof(sa) / sizeof(sa[0]); i++) {
        if (!sa[i] || !sb[i])
            assert_ptr_equal(sa[i], sb[i]);
        else
            assert_string_equal(sa[i], sb[i]);
    }
    assert_true(a->seed == b->seed);
    assert_int_equal(a->parallel, b->parallel);
    assert_true(a->created_at == b->created_at);
    assert_true(a->ended_at == b->ended_at);
    assert_int_equal(a->git_dirty, b->git_dirty);
}

static void test_sweep_round_trip(void **state)
{
    fixture *f = *state;
    sw_sweep_rec full = a_sweep("s1", "mnist", 1700000000.5);
    sw_sweep_rec bare = a_sweep("s2", NULL, 0);
    sw_sweep_rec got = {0};

    full.seed = UINT64_MAX - 6; /* above INT64_MAX: stored two's-complement */
    full.ended_at = 1700000999.75;
    full.git_commit = "0123456789abcdef0123456789abcdef01234567";
    full.git_dirty = true;
    full.git = "{\"branch\": \"main\"}";
    full.command = "[\"python\", \"train.py\"]";
    full.gpus = "2x80GiB";
    full.backend_args = "[\"--partition=gpu\"]";
    bare.metric = NULL;
    bare.goal = NULL;
    put_sweep(f->st, &full);
    put_sweep(f->st, &bare);
    assert_int_equal(sw_store_get_sweep(f->st, "s1", &got), SW_OK);
    assert_sweep_equal(&got, &full);
    sw_sweep_rec_dispose(&got);
    assert_int_equal(sw_store_get_sweep(f->st, "s2", &got), SW_OK);
    assert_sweep_equal(&got, &bare);
    sw_sweep_rec_dispose(&got);
    expect_q(f->st,
             "select name is null, metric is null, goal is null,"
             " created_at is null, ended_at is null, git_commit is null,"
             " git_dirty is null from sweeps where id = 's2'",
             "1|1|1|1|1|1|1\n");
    /* The same id twice, and a missing required field, are refused. */
    assert_int_equal(sw_store_put_sweep(f->st, &full), SW_EINVALID);
    assert_contains(sw_error_last(), "put sweep 's1': UNIQUE constraint");
    bare.id = "s3";
    bare.cwd = NULL;
    assert_int_equal(sw_store_put_sweep(f->st, &bare), SW_EINVALID);
    assert_contains(sw_error_last(), "NOT NULL constraint failed: sweeps.cwd");
}

static void test_sweep_list_state_latest(void **state)
{
    fixture *f = *state;
    sw_sweep_rec s1 = a_sweep("s1", "a", 100), s2 = a_sweep("s2", "b", 300);
    sw_sweep_rec s3 = a_sweep("s3", "c", 200), got = {0};
    sw_sweep_rec *all;
    size_t n;

    assert_int_equal(sw_store_latest_sweep(f->st, &got), SW_ENOTFOUND);
    assert_contains(sw_error_last(), "no sweep in");
    assert_int_equal(sw_store_list_sweeps(f->st, &all, &n), SW_OK);
    assert_int_equal(n, 0);
    free(all);
    put_sweep(f->st, &s1);
    put_sweep(f->st, &s2);
    put_sweep(f->st, &s3);
    assert_int_equal(sw_store_list_sweeps(f->st, &all, &n), SW_OK);
    assert_int_equal(n, 3);
    assert_string_equal(all[0].id, "s2");
    assert_string_equal(all[1].id, "s3");
    assert_string_equal(all[2].id, "s1");
    for (size_t i = 0; i < n; i++)
        sw_sweep_rec_dispose(&all[i]);
    free(all);
    assert_int_equal(sw_store_latest_sweep(f->st, &got), SW_OK);
    assert_string_equal(got.id, "s2");
    sw_sweep_rec_dispose(&got);
    assert_int_equal(sw_store_set_sweep_state(f->st, "s2", "finished", 400),
                     SW_OK);
    assert_int_equal(sw_store_get_sweep(f->st, "s2", &got), SW_OK);
    assert_string_equal(got.state, "finished");
    assert_true(got.ended_at == 400);
    sw_sweep_rec_dispose(&got);
    assert_int_equal(sw_store_set_sweep_state(f->st, "zz", "finished", 1),
                     SW_ENOTFOUND);
}

static void expect_sweep(sw_store *st, const char *key, const char *id)
{
    sw_sweep_rec got = {0};

    if (sw_store_get_sweep(st, key, &got))
        fail_msg("%s: %s", key, sw_error_last());
    assert_string_equal(got.id, id);
    sw_sweep_rec_dispose(&got);
}

static void test_sweep_lookup(void **state)
{
    fixture *f = *state;
    sw_sweep_rec recs[] = {
        a_sweep("abc123", "mnist", 100), a_sweep("abd456", "cifar", 200),
        a_sweep("x9", "mnist", 300),     a_sweep("x", "ab", 50),
        a_sweep("q1", "mnist", 300),
    };
    sw_sweep_rec got = {0};
    char want[256];

    for (size_t i = 0; i < sizeof(recs) / sizeof(recs[0]); i++)
        put_sweep(f->st, &recs[i]);
    expect_sweep(f->st, "abc123", "abc123"); /* exact id */
    expect_sweep(f->st, "x", "x");           /* exact id beats prefix */
    expect_sweep(f->st, "abc", "abc123");    /* unique prefix */
    expect_sweep(f->st, "abd4", "abd456");
    expect_sweep(f->st, "x9", "x9");
    expect_sweep(f->st, "cifar", "abd456"); /* name */
    expect_sweep(f->st, "mnist", "q1");     /* latest of the name (tie:
                                               the one inserted last) */
    expect_sweep(f->st, "ab", "x");         /* a name beats an ambiguous
                                               prefix */
    assert_int_equal(sw_store_get_sweep(f->st, "a", &got), SW_EINVALID);
    assert_contains(sw_error_last(), "sweep 'a' is ambiguous");
    assert_contains(sw_error_last(), "'abc123', 'abd456'");
    assert_null(got.id);
    assert_int_equal(sw_store_get_sweep(f->st, "nope", &got), SW_ENOTFOUND);
    snprintf(want, sizeof(want), "no sweep 'nope' in %s", f->path);
    assert_string_equal(sw_error_last(), want);
    assert_int_equal(sw_store_get_sweep(f->st, "", &got), SW_ENOTFOUND);
}

/* ---- runs -------------------------------------------------------------- */

static void assert_str_or_null(const char *a, const char *b)
{
    if (!a || !b)
        assert_ptr_equal(a, b);
    else
        assert_string_equal(a, b);
}

static void assert_run_equal(const sw_run_rec *a, const sw_run_rec *b)
{
    assert_string_equal(a->id, b->id);
    assert_string_equal(a->sweep_id, b->sweep_id);
    assert_int_equal(a->idx, b->idx);
    assert_string_equal(a->cell, b->cell);
    assert_string_equal(a->params, b->params);
    assert_string_equal(a->argv, b->argv);
    assert_int_equal(a->state, b->state);
    assert_str_or_null(a->reason, b->reason);
    assert_int_equal(a->has_exit, b->has_exit);
    if (a->has_exit)
        assert_int_equal(a->exit_code, b->exit_code);
    assert_int_equal(a->signal, b->signal);
    assert_int_equal(a->attempts, b->attempts);
    assert_int_equal(a->lost, b->lost);
    assert_true(a->created_at == b->created_at);
    assert_true(a->started_at == b->started_at);
    assert_true(a->ended_at == b->ended_at);
    assert_str_or_null(a->job, b->job);
    assert_int_equal(a->stdout_offset, b->stdout_offset);
    assert_int_equal(a->has_value, b->has_value);
    if (a->has_value)
        assert_true(a->value == b->value);
    assert_str_or_null(a->git_commit, b->git_commit);
    assert_str_or_null(a->git, b->git);
    assert_int_equal(a->git_dirty, b->git_dirty);
    assert_str_or_null(a->gpus, b->gpus);
    assert_int_equal(a->has_member, b->has_member);
    if (a->has_member)
        assert_int_equal(a->member, b->member);
    assert_str_or_null(a->parent, b->parent);
    if (a->parent)
        assert_int_equal(a->parent_iter, b->parent_iter);
}

static void expect_run(sw_store *st, const sw_run_rec *want)
{
    sw_run_rec got;

    if (sw_store_get_run(st, want->id, &got))
        fail_msg("%s", sw_error_last());
    assert_run_equal(&got, want);
    sw_run_rec_dispose(&got);
}

static void test_run_round_trip(void **state)
{
    fixture *f = *state;
    sw_sweep_rec s = a_sweep("s1", NULL, 1);
    sw_run_rec pending = a_run("s1-1", "s1", 0);
    sw_run_rec done = a_run("s1-2", "s1", 1);

    put_sweep(f->st, &s);
    put_run(f->st, &pending);
    expect_run(f->st, &pending);
    expect_q(f->st,
             "select state, reason is null, exit_code is null, signal,"
             " attempts, started_at is null, ended_at is null, job is null,"
             " stdout_offset, value is null, gpus is null,"
             " git_commit is null, git_dirty is null"
             " from runs where id = 's1-1'",
             "pending|1|1|0|0|1|1|1|0|1|1|1|1\n");
    done.state = SW_RUN_FAILED;
    done.reason = "exit 3";
    done.has_exit = true;
    done.exit_code = 3;
    done.signal = 9;
    done.attempts = 2;
    done.lost = 1;
    done.started_at = 1700000002.5;
    done.ended_at = 1700000003.125;
    done.job = "4242 4240";
    done.stdout_offset = 1 << 20;
    done.has_value = true;
    done.value = -0.125;
    done.gpus = "{\"devices\":[\"GPU-a0\"],\"share\":0.5,\"memory\":0}";
    put_run(f->st, &done);
    expect_run(f->st, &done);
    /* exit code 0 is a value, not a NULL. */
    done.has_exit = true;
    done.exit_code = 0;
    assert_int_equal(sw_store_update_run(f->st, &done), SW_OK);
    expect_q(f->st, "select exit_code from runs where id = 's1-2'", "0\n");
}

/* method pbt's lineage: a member of the population, and a run made by
 * an exploit, from its parent's checkpoint at an iteration; written
 * once, at put, and kept by every update. */
static void test_run_lineage(void **state)
{
    fixture *f = *state;
    sw_sweep_rec s = a_sweep("s1", NULL, 1);
    sw_run_rec first = a_run("s1-1", "s1", 0), child = a_run("s1-5", "s1", 4);

    put_sweep(f->st, &s);
    first.has_member = true;
    first.member = 0;
    put_run(f->st, &first);
    expect_run(f->st, &first);
    child.has_member = true;
    child.member = 3;
    child.parent = "s1-1";
    child.parent_iter = 8;
    put_run(f->st, &child);
    expect_run(f->st, &child);
    child.state = SW_RUN_RUNNING;
    child.parent = NULL; /* not written by update */
    child.has_member = false;
    assert_int_equal(sw_store_update_run(f->st, &child), SW_OK);
    expect_q(f->st,
             "select id, member, ifnull(parent, '-'), ifnull(parent_iter, '-')"
             " from runs order by idx",
             "s1-1|0|-|-\ns1-5|3|s1-1|8\n");
}

static void test_run_update_and_list(void **state)
{
    fixture *f = *state;
    sw_sweep_rec s = a_sweep("s1", NULL, 1), s2 = a_sweep("s2", NULL, 2);
    sw_run_rec r2 = a_run("s1-3", "s1", 2), r0 = a_run("s1-1", "s1", 0);
    sw_run_rec r1 = a_run("s1-2", "s1", 1), other = a_run("s2-1", "s2", 0);
    sw_run_rec *all;
    size_t n;

    put_sweep(f->st, &s);
    put_sweep(f->st, &s2);
    put_run(f->st, &r2);
    put_run(f->st, &r0);
    put_run(f->st, &r1);
    put_run(f->st, &other);
    /* pending -> running -> finished; the immutable fields stay. */
    r1.state = SW_RUN_RUNNING;
    r1.attempts = 1;
    r1.started_at = 10;
    r1.job = "77 77";
    r1.git_commit = "fedcba9876543210fedcba9876543210fedcba98";
    r1.git_dirty = true;
    r1.git = "{\"dirty\": true}";
    r1.params = "{\"changed\": true}"; /* not written by update */
    assert_int_equal(sw_store_update_run(f->st, &r1), SW_OK);
    r1.params = r0.params;
    expect_run(f->st, &r1);
    expect_q(f->st,
             "select git_commit, git_dirty, git ->> '$.dirty'"
             " from runs where id = 's1-2'",
             "fedcba9876543210fedcba9876543210fedcba98|1|1\n");
    r1.state = SW_RUN_FINISHED;
    r1.has_exit = true;
    r1.ended_at = 20;
    r1.job = NULL;
    r1.has_value = true;
    r1.value = 0.5;
    assert_int_equal(sw_store_update_run(f->st, &r1), SW_OK);
    expect_run(f->st, &r1);
    assert_int_equal(sw_store_list_runs(f->st, "s1", &all, &n), SW_OK);
    assert_int_equal(n, 3);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(all[i].idx, (int64_t)i);
    assert_run_equal(&all[1], &r1);
    for (size_t i = 0; i < n; i++)
        sw_run_rec_dispose(&all[i]);
    free(all);
    assert_int_equal(sw_store_list_runs(f->st, "none", &all, &n), SW_OK);
    assert_int_equal(n, 0);
    free(all);
}

/* sweep best's ranking: finished runs first, then stopped ones (their
 * value is from an earlier step), each best first, ties by idx; runs
 * without a value and failed ones are left out. */
static void test_best_runs(void **state)
{
    fixture *f = *state;
    sw_sweep_rec s = a_sweep("s1", NULL, 1);
    static const struct {
        sw_run_state state;
        double value; /* NAN: none */
    } runs[] = {{SW_RUN_STOPPED, 0.1},  {SW_RUN_FINISHED, 0.5},
                {SW_RUN_FAILED, 0.01},  {SW_RUN_FINISHED, 0.3},
                {SW_RUN_FINISHED, NAN}, {SW_RUN_STOPPED, 0.2},
                {SW_RUN_FINISHED, 0.3}};
    static const char *const want_min[] = {"s1-4", "s1-7", "s1-2", "s1-1",
                                           "s1-6"};
    static const char *const want_max[] = {"s1-2", "s1-4", "s1-7", "s1-6",
                                           "s1-1"};
    char ids[7][8];
    sw_run_rec *out;
    size_t n, i;

    put_sweep(f->st, &s);
    for (i = 0; i < 7; i++) {
        snprintf(ids[i], sizeof(ids[i]), "s1-%zu", i + 1);
        sw_run_rec r = a_run(ids[i], "s1", (int64_t)i);
        put_run(f->st, &r);
        r.state = runs[i].state;
        r.has_value = !isnan(runs[i].value);
        r.value = runs[i].value;
        assert_int_equal(sw_store_update_run(f->st, &r), SW_OK);
    }
    for (int max = 0; max < 2; max++) {
        assert_int_equal(sw_store_best_runs(f->st, "s1", max, 10, &out, &n),
                         SW_OK);
        assert_int_equal(n, 5);
        for (i = 0; i < n; i++) {
            assert_string_equal(out[i].id, max ? want_max[i] : want_min[i]);
            sw_run_rec_dispose(&out[i]);
        }
        free(out);
    }
}

static void expect_counts(sw_store *st, const char *sweep_id,
                          const int64_t want[SW_RUN_N_STATES])
{
    int64_t got[SW_RUN_N_STATES];

    memset(got, 0xff, sizeof(got));
    if (sw_store_count_runs(st, sweep_id, got))
        fail_msg("%s", sw_error_last());
    for (int i = 0; i < SW_RUN_N_STATES; i++)
        if (got[i] != want[i])
            fail_msg("%s: %lld %s runs, want %lld", sweep_id, (long long)got[i],
                     sw_run_state_name((sw_run_state)i), (long long)want[i]);
}

static void test_count_runs(void **state)
{
    fixture *f = *state;
    sw_sweep_rec s1 = a_sweep("s1", NULL, 1), s2 = a_sweep("s'2", NULL, 2);
    static const sw_run_state states[] = {SW_RUN_FINISHED, SW_RUN_FAILED,
                                          SW_RUN_FINISHED, SW_RUN_PENDING,
                                          SW_RUN_STOPPED,  SW_RUN_FINISHED};
    static const int64_t none[SW_RUN_N_STATES] = {0};
    int64_t want[SW_RUN_N_STATES] = {0};
    sw_run_rec other = a_run("s'2-1", "s'2", 0);
    char id[32];

    assert_int_equal(SW_RUN_N_STATES, 7);
    put_sweep(f->st, &s1);
    put_sweep(f->st, &s2);
    expect_counts(f->st, "s1", none);
    for (size_t i = 0; i < sizeof(states) / sizeof(states[0]); i++) {
        sw_run_rec r = a_run(id, "s1", (int64_t)i);

        snprintf(id, sizeof(id), "s1-%zu", i + 1);
        r.state = states[i];
        put_run(f->st, &r);
        want[states[i]]++;
    }
    other.state = SW_RUN_RUNNING;
    put_run(f->st, &other);
    expect_counts(f->st, "s1", want);
    memset(want, 0, sizeof(want));
    want[SW_RUN_RUNNING] = 1;
    expect_counts(f->st, "s'2", want);
    expect_counts(f->st, "s1' or '1'='1", none);
    expect_counts(f->st, "ghost", none);
}

static void test_run_errors(void **state)
{
    fixture *f = *state;
    sw_sweep_rec s = a_sweep("s1", NULL, 1);
    sw_run_rec r = a_run("s1-1", "s1", 0), got;
    char want[256];

    put_sweep(f->st, &s);
    r.sweep_id = "ghost";
    assert_int_equal(sw_store_put_run(f->st, &r), SW_EINVALID);
    snprintf(want, sizeof(want),
             "store %s: put run 's1-1': FOREIGN KEY constraint failed",
             f->path);
    assert_string_equal(sw_error_last(), want);
    r.sweep_id = "s1";
    put_run(f->st, &r);
    r.id = "s1-dup";
    assert_int_equal(sw_store_put_run(f->st, &r), SW_EINVALID);
    assert_contains(sw_error_last(), "UNIQUE constraint failed: runs.sweep_id");
    r.id = "s1-x";
    r.idx = 5;
    r.params = NULL;
    assert_int_equal(sw_store_put_run(f->st, &r), SW_EINVALID);
    assert_contains(sw_error_last(), "runs.params");
    r.id = "nobody";
    assert_int_equal(sw_store_update_run(f->st, &r), SW_ENOTFOUND);
    assert_contains(sw_error_last(), "update run 'nobody': no such run");
    assert_int_equal(sw_store_get_run(f->st, "nobody", &got), SW_ENOTFOUND);
    snprintf(want, sizeof(want), "no run 'nobody' in %s", f->path);
    assert_string_equal(sw_error_last(), want);
    expect_q(f->st, "select count(*) from runs", "1\n");
}

/* ---- metrics and transactions ----------------------------------------- */

static void test_metrics(void **state)
{
    fixture *f = *state;
    sw_sweep_rec s = a_sweep("s1", NULL, 1);
    sw_run_rec r = a_run("s1-1", "s1", 0);

    put_sweep(f->st, &s);
    put_run(f->st, &r);
    for (int step = 0; step < 3; step++) {
        assert_int_equal(sw_store_put_metric(f->st, "s1-1", step, "loss",
                                             1.0 / (step + 1), 100 + step),
                         SW_OK);
    }
    assert_int_equal(sw_store_put_metric(f->st, "s1-1", -1, "acc", 0.9, 200),
                     SW_OK);
    assert_int_equal(sw_store_put_metric(f->st, "s1-1", 3, "loss", NAN, 201),
                     SW_OK);
    expect_q(f->st,
             "select step, value, time from metrics where run_id = 's1-1'"
             " and name = 'loss' order by step",
             "0|1.0|100.0\n1|0.5|101.0\n2|0.3333333333333333|102.0\n"
             "3|None|201.0\n");
    expect_q(f->st,
             "select step is null, value from metrics where"
             " name = 'acc'",
             "1|0.9\n");
    assert_int_equal(sw_store_put_metric(f->st, "ghost", 0, "loss", 1, 1),
                     SW_EINVALID);
    assert_contains(sw_error_last(),
                    "put metric 'loss' of run 'ghost': FOREIGN KEY");
}

/* The last metrics of a run as "name=value,..." (None for a NULL). */
static int collect_metric(void *ctx, const char *name, bool has_value,
                          double value)
{
    sw_buf *b = ctx;

    if (b->len)
        sw_buf_putc(b, ',');
    if (has_value)
        sw_buf_printf(b, "%s=%g", name, value);
    else
        sw_buf_printf(b, "%s=None", name);
    return 0;
}

static void expect_last_metrics(sw_store *st, const char *run_id,
                                const char *want)
{
    sw_buf b = SW_BUF_INIT;

    if (sw_store_last_metrics(st, run_id, collect_metric, &b))
        fail_msg("%s", sw_error_last());
    assert_string_equal(sw_buf_cstr(&b), want);
    sw_buf_dispose(&b);
}

static int stop_at_first_metric(void *ctx, const char *name, bool has_value,
                                double value)
{
    (void)name;
    (void)has_value;
    (void)value;
    ++*(int *)ctx;
    return 7;
}

/* Each name once, in the order names were first reported, with its last
 * value whatever the steps say; a run id is data, never SQL. */
static void test_last_metrics(void **state)
{
    fixture *f = *state;
    sw_sweep_rec s = a_sweep("s1", NULL, 1);
    sw_run_rec r = a_run("s1-1", "s1", 0), q1 = a_run("s1-'q", "s1", 1);
    static const struct {
        int64_t step;
        const char *name;
        double value;
    } rows[] = {{0, "loss", 1.0}, {0, "acc", 0.1},  {-1, "lr", 0.5},
                {1, "loss", 0.5}, {5, "acc", 0.2},  {2, "acc", 0.3},
                {2, "lr", NAN},   {3, "loss", 0.25}};
    int calls = 0;

    put_sweep(f->st, &s);
    put_run(f->st, &r);
    put_run(f->st, &q1);
    expect_last_metrics(f->st, "s1-1", "");
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
        assert_int_equal(sw_store_put_metric(f->st, "s1-1", rows[i].step,
                                             rows[i].name, rows[i].value,
                                             (double)i),
                         SW_OK);
    expect_last_metrics(f->st, "s1-1", "loss=0.25,acc=0.3,lr=None");
    assert_int_equal(sw_store_put_metric(f->st, "s1-'q", 0, "it's", 2.5, 1),
                     SW_OK);
    expect_last_metrics(f->st, "s1-'q", "it's=2.5");
    expect_last_metrics(f->st, "s1-1' or '1'='1", "");
    expect_last_metrics(f->st, "nobody", "");
    assert_int_equal(
        sw_store_last_metrics(f->st, "s1-1", stop_at_first_metric, &calls), 7);
    assert_int_equal(calls, 1);
    /* The statement was reset: it runs again from the start. */
    expect_last_metrics(f->st, "s1-1", "loss=0.25,acc=0.3,lr=None");
}

static double now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The CPU time of this process: what a bound on a query's cost checks,
 * since a loaded machine stretches the wall clock, not this. */
static double cpu(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A sanity check of the hot path, not a benchmark: it prints, never
 * asserts a time. */
static void test_metrics_in_one_transaction(void **state)
{
    fixture *f = *state;
    sw_sweep_rec s = a_sweep("s1", NULL, 1);
    sw_run_rec r = a_run("s1-1", "s1", 0);
    double t0;

    put_sweep(f->st, &s);
    put_run(f->st, &r);
    t0 = now();
    assert_int_equal(sw_store_begin(f->st), SW_OK);
    for (int i = 0; i < 10000; i++)
        assert_int_equal(sw_store_put_metric(f->st, "s1-1", i, "loss",
                                             1.0 / (i + 1), 1000 + i),
                         SW_OK);
    assert_int_equal(sw_store_commit(f->st), SW_OK);
    print_message("      10000 put_metric in one transaction: %.1f ms\n",
                  (now() - t0) * 1e3);
    expect_q(f->st, "select count(*), max(step) from metrics", "10000|9999\n");
}

static int slow_point(void *ctx, const char *run_id, int64_t step,
                      bool has_value, double value, double time)
{
    (void)run_id, (void)step, (void)has_value, (void)value, (void)time;
    ++*(int *)ctx;
    usleep(1000);
    return 0;
}

static int count_point(void *ctx, const char *run_id, int64_t step,
                       bool has_value, double value, double time)
{
    (void)run_id, (void)step, (void)has_value, (void)value, (void)time;
    ++*(int *)ctx;
    return 0;
}

/* sw_store_read_limit bounds the store's own reads (`sweep report
 * --timeout`): a walk past it stops with one clear line, and no limit
 * again lets it finish. */
static void test_read_limit(void **state)
{
    fixture *f = *state;
    sw_sweep_rec s = a_sweep("s1", NULL, 1);
    sw_run_rec r = a_run("s1-1", "s1", 0);
    int seen = 0;
    double t0;

    put_sweep(f->st, &s);
    put_run(f->st, &r);
    assert_int_equal(sw_store_begin(f->st), SW_OK);
    for (int i = 0; i < 2000; i++)
        assert_int_equal(
            sw_store_put_metric(f->st, "s1-1", i, "loss", 1.0, 1000 + i),
            SW_OK);
    assert_int_equal(sw_store_commit(f->st), SW_OK);
    sw_store_read_limit(f->st, 0.1);
    t0 = now();
    assert_int_equal(
        sw_store_sweep_points(f->st, "s1", "loss", slow_point, &seen),
        SW_EINVALID);
    assert_true(now() - t0 < 1.0);
    assert_true(seen > 0 && seen < 2000);
    assert_non_null(strstr(sw_error_last(), "ran past 0.1 s (--timeout"));
    sw_store_read_limit(f->st, 0);
    seen = 0;
    assert_int_equal(
        sw_store_sweep_points(f->st, "s1", "loss", count_point, &seen), SW_OK);
    assert_int_equal(seen, 2000);
}

static void test_transactions(void **state)
{
    fixture *f = *state;
    sw_sweep_rec s = a_sweep("s1", NULL, 1), s2 = a_sweep("s2", NULL, 2);

    assert_int_equal(sw_store_commit(f->st), SW_EINVALID);
    assert_int_equal(sw_store_rollback(f->st), SW_OK);
    assert_int_equal(sw_store_begin(f->st), SW_OK);
    assert_int_equal(sw_store_begin(f->st), SW_EINVALID);
    assert_contains(sw_error_last(), "a transaction is already open");
    put_sweep(f->st, &s);
    assert_int_equal(sw_store_rollback(f->st), SW_OK);
    assert_int_equal(sw_store_begin(f->st), SW_OK);
    put_sweep(f->st, &s2);
    assert_int_equal(sw_store_commit(f->st), SW_OK);
    expect_q(f->st, "select group_concat(id) from sweeps", "s2\n");
}

/* A hold: writes and begin()/commit() pairs join one transaction that
 * readers see at release; a rollback inside undoes only its savepoint,
 * and one outside any abandons the held transaction. */
static void test_hold(void **state)
{
    fixture *f = *state;
    sw_sweep_rec s1 = a_sweep("s1", NULL, 1), s2 = a_sweep("s2", NULL, 2),
                 s3 = a_sweep("s3", NULL, 3);
    const char *ids = "select group_concat(id) from (select id from sweeps "
                      "order by id)";

    assert_int_equal(sw_store_release(f->st), SW_OK); /* none held */
    assert_int_equal(sw_store_hold(f->st), SW_OK);
    assert_int_equal(sw_store_hold(f->st), SW_EINVALID);
    put_sweep(f->st, &s1);
    assert_int_equal(sw_store_commit(f->st), SW_EINVALID);
    assert_int_equal(sw_store_begin(f->st), SW_OK);
    assert_int_equal(sw_store_begin(f->st), SW_EINVALID);
    put_sweep(f->st, &s2);
    assert_int_equal(sw_store_commit(f->st), SW_OK);
    assert_int_equal(sw_store_begin(f->st), SW_OK);
    put_sweep(f->st, &s3);
    assert_int_equal(sw_store_rollback(f->st), SW_OK);
    expect_q(f->st, "select count(*) from sweeps", "0\n"); /* not yet */
    assert_int_equal(sw_store_release(f->st), SW_OK);
    expect_q(f->st, ids, "s1,s2\n");
    assert_int_equal(sw_store_hold(f->st), SW_OK);
    put_sweep(f->st, &s3);
    assert_int_equal(sw_store_rollback(f->st), SW_OK);
    assert_int_equal(sw_store_release(f->st), SW_OK);
    expect_q(f->st, ids, "s1,s2\n");
    assert_int_equal(sw_store_begin(f->st), SW_OK); /* no hold left */
    assert_int_equal(sw_store_commit(f->st), SW_OK);
}

/* A reader opened while the writer holds an open write transaction reads
 * the last committed state at once: no "database is locked". */
static void test_reader_during_write(void **state)
{
    fixture *f = *state;
    sw_sweep_rec s = a_sweep("s1", NULL, 1);
    sw_run_rec r1 = a_run("s1-1", "s1", 0), r2 = a_run("s1-2", "s1", 1);
    sw_run_rec got;
    sw_store *rd;
    double t0;

    put_sweep(f->st, &s);
    put_run(f->st, &r1);
    assert_int_equal(sw_store_begin(f->st), SW_OK);
    put_run(f->st, &r2);
    t0 = now();
    assert_int_equal(sw_store_open(&rd, f->path, false), SW_OK);
    assert_int_equal(sw_store_get_run(rd, "s1-1", &got), SW_OK);
    sw_run_rec_dispose(&got);
    assert_int_equal(sw_store_get_run(rd, "s1-2", &got), SW_ENOTFOUND);
    expect_q(rd, "select count(*) from runs", "1\n");
    expect_q(f->st, "select count(*) from runs", "1\n"); /* committed only */
    assert_true(now() - t0 < 2.0); /* it did not sit in busy_timeout */
    /* The reader can't write. */
    r2.id = "s1-9";
    r2.idx = 9;
    assert_int_equal(sw_store_put_run(rd, &r2), SW_EIO);
    assert_contains(sw_error_last(), "readonly");
    assert_int_equal(sw_store_commit(f->st), SW_OK);
    assert_int_equal(sw_store_get_run(rd, "s1-2", &got), SW_OK);
    sw_run_rec_dispose(&got);
    expect_q(rd, "select count(*) from runs", "2\n");
    sw_store_close(rd);
}

/* ---- queries ----------------------------------------------------------- */

static void fill(sw_store *st)
{
    sw_sweep_rec s = a_sweep("s1", "mnist", 1);
    sw_run_rec r[3] = {a_run("s1-1", "s1", 0), a_run("s1-2", "s1", 1),
                       a_run("s1-3", "s1", 2)};
    const char *params[3] = {"{\"lr\": 0.1, \"opt\": \"sgd\"}",
                             "{\"lr\": 0.01, \"opt\": \"adam\"}",
                             "{\"lr\": 0.001, \"opt\": \"adam\"}"};
    double values[3] = {0.5, 0.25, 0.75};

    put_sweep(st, &s);
    for (int i = 0; i < 3; i++) {
        r[i].params = (char *)params[i];
        r[i].state = SW_RUN_FINISHED;
        r[i].has_value = true;
        r[i].value = values[i];
        put_run(st, &r[i]);
        for (int step = 0; step < 2; step++)
            assert_int_equal(sw_store_put_metric(st, r[i].id, step, "loss",
                                                 values[i] + 1 - step, 1),
                             SW_OK);
    }
}

static void test_query_select(void **state)
{
    fixture *f = *state;
    sw_buf b = SW_BUF_INIT;

    fill(f->st);
    assert_int_equal(sw_store_query(f->st,
                                    "select id, value from runs where"
                                    " sweep_id = 's1' order by value"
                                    " limit 1",
                                    collect, &b),
                     SW_OK);
    assert_string_equal(sw_buf_cstr(&b), "id|value\ns1-2|0.25\n");
    sw_buf_dispose(&b);
    expect_q(f->st,
             "select r.id, count(m.rowid), avg(m.value) from runs r"
             " join metrics m on m.run_id = r.id group by r.id order by r.id",
             "s1-1|2|1.0\ns1-2|2|0.75\ns1-3|2|1.25\n");
    expect_q(f->st,
             "select json_extract(params, '$.opt') o, count(*),"
             " min(json_extract(params, '$.lr')) from runs group by o"
             " order by o",
             "adam|2|0.001\nsgd|1|0.1\n");
    expect_q(f->st, "select params ->> '$.lr' from runs where idx = 0;",
             "0.1\n");
    expect_q(f->st,
             "with recursive n(i) as (select 1 union all select i + 1 from n"
             " where i < 3) select sum(i), typeof(null), x'cafe' from n"
             " -- a trailing comment\n ;  ",
             "6|null|cafe\n");
    expect_q(f->st, "select 7, 1.5, 'a''b', null, x'00ff'",
             "7|1.5|a'b|None|00ff\n");
    expect_q(f->st, "select count(*) from json_each('[1, 2, 3]')", "3\n");
}

static int stop_after_first(void *ctx, int64_t row, int ncols,
                            const char *const *names,
                            const sw_value *const *values)
{
    int *rows = ctx;

    (void)ncols, (void)names;
    assert_true(row < 0 ? values == NULL : values != NULL);
    return row >= 0 && ++*rows == 1 ? 7 : 0;
}

static void test_query_stops_and_blobs(void **state)
{
    fixture *f = *state;
    int rows = 0;

    fill(f->st);
    assert_int_equal(
        sw_store_query(f->st, "select id from runs", stop_after_first, &rows),
        7);
    assert_int_equal(rows, 1);
    expect_q(f->st, "select cast(printf('%040d', 0) as blob)",
             "<blob 40 bytes>\n");
}

static void expect_query_error(sw_store *st, const char *sql, const char *msg)
{
    sw_buf b = SW_BUF_INIT;

    assert_int_equal(sw_store_query(st, sql, collect, &b), SW_EINVALID);
    if (strcmp(sw_error_last(), msg) != 0)
        fail_msg("%s: got '%s', want '%s'", sql, sw_error_last(), msg);
    sw_buf_dispose(&b);
}

static void test_query_errors(void **state)
{
    fixture *f = *state;

    expect_query_error(f->st, "selec 1",
                       "SQL error: near \"selec\": "
                       "syntax error");
    expect_query_error(f->st, "select nope from runs",
                       "SQL error: no such column: nope");
    expect_query_error(f->st, "select json_extract('{', '$')",
                       "SQL error: malformed JSON");
    expect_query_error(f->st, "", "query refused: no statement");
    expect_query_error(f->st, "  ;", "query refused: no statement");
}

/* A runaway query stops at its time limit, and a huge value is refused
 * before SQLite allocates it; neither changes the store, and the next
 * query runs as usual. */
static void test_query_limits(void **state)
{
    fixture *f = *state;
    char *before, *after;
    double t0;

    fill(f->st);
    before = q(f->st, "select count(*) from runs");
    sw_store_query_timeout(f->st, 0.2);
    t0 = now();
    expect_query_error(f->st,
                       "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT"
                       " x+1 FROM c) SELECT count(*) FROM c",
                       "query stopped: it ran past 0.2 s (--timeout)");
    assert_true(now() - t0 < 5.0); /* 0.2 s, generously */
    expect_q(f->st, "select 1", "1\n");
    sw_store_query_timeout(f->st, 60); /* the limit on memory, not time */
    /* a printf past SQLITE_LIMIT_LENGTH fails the statement too (SQLite's
     * own gives NULL), before it fills the characters one by one */
    sqlite3_memory_highwater(1);
    t0 = cpu();
    expect_query_error(f->st, "select length(printf('%.*c', 2000000000, 'x'))",
                       "query stopped: a value would take more than 64 MiB "
                       "of memory (the limit of a query)");
    assert_true(cpu() - t0 < 1.0); /* 7 s of CPU without the guard */
    assert_true(sqlite3_memory_highwater(0) < 256 * 1024 * 1024); /* not GBs */
    expect_query_error(f->st,
                       "select length(replace(printf('%.*c', 40000000, 'x'),"
                       " 'x', 'xx'))",
                       "query stopped: a value would take more than 64 MiB "
                       "of memory (the limit of a query)");
    expect_q(f->st, "select length(printf('%.*c', 1000000, 'x'))", "1000000\n");
    sw_store_query_timeout(f->st, 0); /* no limit */
    expect_q(f->st, "select 2", "2\n");
    after = q(f->st, "select count(*) from runs");
    assert_string_equal(after, before);
    assert_int_equal(sw_store_put_metric(f->st, "s1-1", 9, "x", 1, 1), SW_OK);
    free(before);
    free(after);
}

/* The built-ins the query connection takes over (store_guard.c) give
 * SQLite's own answers, compared with a plain connection's: NULLs,
 * numbers, blobs, UTF-8, ESCAPE, every printf conversion. */
static void test_query_guarded_answers(void **state)
{
    static const char *const exprs[] = {
        "printf('%d|%5.2f|%-3s|%.3c|%*d|%%|%x|%q|%Q|%w', 42, 3.14159, 'z',"
        " 'y', 3, 7, 255, 'it''s', NULL, 'a\"b')",
        "printf('%.*c%-*s|%!.3s|%,d|%e|%g|%i|%o|%u|%c', 3, 'ab', 4, 'x',"
        " 'h\xc3\xa9"
        "llo', 1234567, 1.5, 0.1, -3, 8, 9, '')",
        "printf()",
        "printf(NULL)",
        "printf(12)",
        "printf('%s %s', 'one')",
        "printf('%*.*f', -8, 2, 3.14159)",
        "format('%05d', -42)",
        "printf('%n%z%s', 'a', 'b')",
        "printf('%.2147483648c', 'x')",
        "instr('hello', 'll')",
        "instr('h\xc3\xa9"
        "llo', 'l')",
        "instr(x'010203', x'03')",
        "instr('abc', '')",
        "instr(NULL, 'a')",
        "instr(12345, 34)",
        "replace('aXbXc', 'X', '--')",
        "replace('aaa', 'aa', 'b')",
        "replace('abc', '', 'x')",
        "replace(123, 2, 9)",
        "replace('a', 'a', NULL)",
        "trim('xxhixx', 'x')",
        "ltrim('xyhi', 'yx')",
        "rtrim('hi  ')",
        "trim('\xc3\xa9"
        "a\xc3\xa9', '\xc3\xa9')",
        "trim(NULL, 'x')",
        "'abc' like 'A%'",
        "'a_c' like 'a\\_c' escape '\\'",
        "'abc' glob 'a*'",
        "'abc' glob '[a-b]?c'",
        "NULL like 'a'",
    };
    fixture *f = *state;
    sqlite3 *plain = NULL;

    assert_int_equal(sqlite3_open(":memory:", &plain), SQLITE_OK);
    for (size_t i = 0; i < sizeof(exprs) / sizeof(exprs[0]); i++) {
        char *sql = sw_aprintf("select quote(%s)", exprs[i]);
        char *got = q(f->st, sql), *want;
        sqlite3_stmt *s = NULL;

        assert_int_equal(sqlite3_prepare_v2(plain, sql, -1, &s, NULL),
                         SQLITE_OK);
        assert_int_equal(sqlite3_step(s), SQLITE_ROW);
        want = sw_aprintf("%s\n", (const char *)sqlite3_column_text(s, 0));
        if (strcmp(got, want) != 0)
            fail_msg("%s: got '%s', want '%s'", exprs[i], got, want);
        sqlite3_finalize(s);
        free(sql);
        free(got);
        free(want);
    }
    sqlite3_close(plain);
}

/* One call of a guarded built-in whose work would be far too much is
 * refused before it starts, at little cost, with one line. */
static void test_query_guarded_costs(void **state)
{
    fixture *f = *state;
    double t0 = cpu();

    sw_store_query_timeout(f->st, 0); /* only the guard stops these */
    expect_query_error(
        f->st,
        "select instr(printf('%.*c', 4000000, 'a'),"
        " printf('%.*c', 2000000, 'a') || 'b')",
        "query stopped: instr() of values of 4000000 and 2000001 bytes "
        "would take too long (the limit of a query is their product: "
        "8589934592)");
    expect_query_error(f->st,
                       "select ltrim(printf('%.*c', 100000, 'a'),"
                       " printf('%.*c', 100000, 'b') || 'a')",
                       "query stopped: ltrim() of values of 100000 and "
                       "100001 bytes would take too long (the limit of a "
                       "query is their product: 134217728)");
    expect_query_error(f->st,
                       "select printf('%.*c', 2000000, 'a') like"
                       " '%' || printf('%.*c', 1000, 'a') || 'b'",
                       "query stopped: like() of values of 2000000 and 1002 "
                       "bytes would take too long (the limit of a query is "
                       "their product: 134217728)");
    expect_query_error(f->st,
                       "select printf('%.*c%.*c', 40000000, 'a', 40000000, "
                       "'b')",
                       "query stopped: a value would take more than 64 MiB "
                       "of memory (the limit of a query)");
    assert_true(cpu() - t0 < 2.0); /* hours of CPU without the guard */
    /* just under the bounds, they run */
    expect_q(f->st, "select instr(printf('%.*c', 1000000, 'a'), 'aab')", "0\n");
    expect_q(f->st, "select length(printf('%.*c', 1000000, 'x'))", "1000000\n");
}

/* What a refused statement must leave as it was: the rows, the schema,
 * the journal mode and the schema version. */
static char *snapshot(sw_store *st, const char *path)
{
    char *rows = q(st, "select (select count(*) from sweeps),"
                       " (select count(*) from runs),"
                       " (select count(*) from metrics),"
                       " (select group_concat(sql, ';') from sqlite_master)");
    char *out = sw_aprintf("%s wal=%d version=%d", rows, header_byte(path, 18),
                           user_version(path));

    free(rows);
    return out;
}

static void test_query_refused(void **state)
{
    fixture *f = *state;
    char attach[256], vacuum[256], p[128];
    const struct {
        const char *sql, *msg;
    } cases[] = {
        {"delete from runs", "query refused: not a read-only statement"},
        {"drop table runs", "query refused: not a read-only statement"},
        {attach, "query refused: ATTACH and DETACH are not allowed"},
        {"pragma journal_mode=delete", "query refused: PRAGMA is not allowed"},
        {"pragma user_version=7", "query refused: PRAGMA is not allowed"},
        {"select load_extension('x')",
         "query refused: function load_extension() is not allowed"},
        {"select * from pragma_table_info('runs')",
         "query refused: not a read-only statement"},
        {"select zeroblob(1000000000)",
         "query refused: function zeroblob() is not allowed"},
        {"select fts3_tokenizer('simple')",
         "query refused: function fts3_tokenizer() is not allowed"},
        {"insert into sweeps (id) values ('evil')",
         "query refused: not a read-only statement"},
        {"update runs set state = 'canceled'",
         "query refused: not a read-only statement"},
        {"create table t (x)", "query refused: not a read-only statement"},
        {"create temp table t (x)", "query refused: not a read-only statement"},
        {"select 1; delete from runs",
         "query refused: one statement at a time"},
        {"select 1; select 2", "query refused: one statement at a time"},
        {"begin immediate", "query refused: not a read-only statement"},
        {vacuum, "query refused: not a read-only statement"},
        {"replace into metrics (run_id) values ('x')",
         "query refused: not a read-only statement"},
    };
    char *before, *after;
    struct stat sb;

    snprintf(attach, sizeof(attach), "attach database '%s/x' as x", f->dir);
    snprintf(vacuum, sizeof(vacuum), "vacuum into '%s/copy.db'", f->dir);
    fill(f->st);
    before = snapshot(f->st, f->path);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        expect_query_error(f->st, cases[i].sql, cases[i].msg);
        after = snapshot(f->st, f->path);
        assert_string_equal(after, before);
        free(after);
    }
    snprintf(p, sizeof(p), "%s/x", f->dir);
    assert_int_equal(stat(p, &sb), -1);
    snprintf(p, sizeof(p), "%s/copy.db", f->dir);
    assert_int_equal(stat(p, &sb), -1);
    /* The writer connection was not touched: it still writes. */
    assert_int_equal(sw_store_put_metric(f->st, "s1-1", 9, "x", 1, 1), SW_OK);
    free(before);
}

static void raw_exec(const char *path, const char *sql)
{
    sqlite3 *db;
    char *err = NULL;

    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    if (sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK)
        fail_msg("%s", err);
    sqlite3_close(db);
}

/* A store of schema 2, as the engine before executors beyond local
 * processes left it: a running run's pid and pgid become its job handle,
 * and the sweep's backend is local. */
static void test_migration_3_keeps_running_jobs(void **state)
{
    fixture *f = *state;
    sw_sweep_rec s = a_sweep("s1", NULL, 1), got;
    sw_run_rec r;

    put_sweep(f->st, &s);
    sw_store_close(f->st);
    f->st = NULL;
    raw_exec(f->path,
             "DROP TABLE attempts;"
             "DROP TABLE exports;"
             "DROP TABLE tags;"
             "DROP TABLE notes;"
             "ALTER TABLE sweeps DROP COLUMN run_cap;"
             "ALTER TABLE sweeps DROP COLUMN backend_args;"
             "ALTER TABLE sweeps DROP COLUMN backend;"
             "ALTER TABLE sweeps DROP COLUMN command;"
             "ALTER TABLE sweeps DROP COLUMN gpus;"
             "ALTER TABLE runs DROP COLUMN job;"
             "ALTER TABLE runs DROP COLUMN lost;"
             "ALTER TABLE runs DROP COLUMN queued_seconds;"
             "ALTER TABLE runs DROP COLUMN pending_reason;"
             "ALTER TABLE runs DROP COLUMN member;"
             "ALTER TABLE runs DROP COLUMN parent;"
             "ALTER TABLE runs DROP COLUMN parent_iter;"
             "DROP TABLE gpu_samples;"
             "DROP INDEX metrics_run_step;"
             "CREATE INDEX metrics_run_name_step ON metrics"
             " (run_id, name, step);"
             "ALTER TABLE runs ADD COLUMN pid INTEGER NOT NULL DEFAULT 0;"
             "ALTER TABLE runs ADD COLUMN pgid INTEGER NOT NULL DEFAULT 0;"
             "INSERT INTO runs (id, sweep_id, idx, cell, params, argv, state,"
             " attempts, pid, pgid) VALUES"
             " ('s1-1', 's1', 0, 'a', '{}', '[\"x\"]', 'running', 1, 12, 34),"
             " ('s1-2', 's1', 1, 'b', '{}', '[\"x\"]', 'pending', 0, 0, 0);"
             "PRAGMA user_version = 2;");
    assert_int_equal(sw_store_open(&f->st, f->path, true), SW_OK);
    assert_int_equal(sw_store_get_run(f->st, "s1-1", &r), SW_OK);
    assert_string_equal(r.job, "12 34");
    sw_run_rec_dispose(&r);
    assert_int_equal(sw_store_get_run(f->st, "s1-2", &r), SW_OK);
    assert_null(r.job);
    sw_run_rec_dispose(&r);
    assert_int_equal(sw_store_get_sweep(f->st, "s1", &got), SW_OK);
    assert_string_equal(got.backend, "local");
    sw_sweep_rec_dispose(&got);
    expect_query_error(f->st, "select pid from runs",
                       "SQL error: no such column: pid");
}

/* ---- GPUs -------------------------------------------------------------- */

static int holder(void *ctx, const char *run_id, const char *gpus)
{
    sw_buf *b = ctx;

    sw_buf_printf(b, "%s %s\n", run_id, gpus);
    return SW_OK;
}

/* runs.gpus of running runs is what `sweep gpus` reads; a sample's
 * unknown figures are NULLs. */
static void test_gpu_holders_and_samples(void **state)
{
    fixture *f = *state;
    sw_sweep_rec s = a_sweep("s1", NULL, 1);
    sw_run_rec a = a_run("s1-1", "s1", 0), b = a_run("s1-2", "s1", 1);
    sw_run_rec c = a_run("s1-3", "s1", 2);
    sw_gpu_sample g = {"s1", 1700000000.5, "MIG-d3", 2,  0,
                       -1,   1 << 30,      -1,       -1, 2};
    sw_buf out = SW_BUF_INIT;

    put_sweep(f->st, &s);
    a.state = SW_RUN_RUNNING;
    a.gpus = "{\"devices\":[\"0\"],\"share\":1,\"memory\":0}";
    b.state = SW_RUN_FINISHED; /* ended: holds nothing */
    b.gpus = "{\"devices\":[\"1\"],\"share\":1,\"memory\":0}";
    c.state = SW_RUN_RUNNING; /* CPU only */
    put_run(f->st, &a);
    put_run(f->st, &b);
    put_run(f->st, &c);
    assert_int_equal(sw_store_gpu_holders(f->st, holder, &out), SW_OK);
    assert_string_equal(sw_buf_cstr(&out), "s1-1 {\"devices\":[\"0\"],"
                                           "\"share\":1,\"memory\":0}\n");
    sw_buf_dispose(&out);
    assert_int_equal(sw_store_put_gpu_sample(f->st, &g), SW_OK);
    expect_q(f->st,
             "select sweep_id, time, device, gpu, mig, utilization is null,"
             " memory_used, memory_total is null, memory_trials is null,"
             " trials from gpu_samples",
             "s1|1700000000.5|MIG-d3|2|0|1|1073741824|1|1|2\n");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_state_names),
        cmocka_unit_test(test_dispose_zeroed),
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
        T(test_create_and_reopen),
        T(test_newer_schema_refused),
        T(test_open_errors),
        T(test_wal_mode),
        T(test_sweep_round_trip),
        T(test_sweep_list_state_latest),
        T(test_sweep_lookup),
        T(test_run_round_trip),
        T(test_run_lineage),
        T(test_run_update_and_list),
        T(test_run_errors),
        T(test_count_runs),
        T(test_metrics),
        T(test_last_metrics),
        T(test_metrics_in_one_transaction),
        T(test_best_runs),
        T(test_read_limit),
        T(test_transactions),
        T(test_hold),
        T(test_reader_during_write),
        T(test_query_select),
        T(test_query_stops_and_blobs),
        T(test_query_errors),
        T(test_query_refused),
        T(test_query_limits),
        T(test_query_guarded_answers),
        T(test_query_guarded_costs),
        T(test_migration_3_keeps_running_jobs),
        T(test_gpu_holders_and_samples),
#undef T
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
