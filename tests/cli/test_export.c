/*
 * test_export.c - `sweep export wandb` end to end: the real `sweep` binary
 * against a fake W&B server (fake_wandb.py, Python's standard library) on
 * 127.0.0.1, which checks the auth and the shape of every request and
 * fails on demand.
 *
 * A sweep of 20 runs x 1,000 steps is exported completely (every request
 * well formed, each run's lines equal to its steps in the store, _step
 * 0..n-1 in order, NaN and Infinity as bare tokens), then again with
 * nothing sent; an export killed with SIGKILL halfway is finished by the
 * next with no line sent twice or skipped; 429, 500, a dropped connection
 * and a slow answer are survived; a 401 is one clear line without the
 * key, and a GraphQL error is reported as one; a dry run sends and records
 * nothing; the key is read from netrc; a dirty tree's diff.patch is uploaded
 * with the run's commit.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "sweeps/buf.h"
#include "sweeps/json.h"
#include "testutil.h"

extern char **environ;

#define KEY "0123456789abcdef0123456789abcdef01234567"

/* Prints `steps` @metrics lines at once; step 7's acc is NaN and step
 * 8's Infinity, which must reach W&B as bare tokens. */
static const char trainer[] =
    "#!/bin/sh\n"
    "n=1000 x=0\n"
    "for a in \"$@\"; do case \"$a\" in --steps=*) n=${a#--steps=} ;;"
    " --x=*) x=${a#--x=} ;; esac; done\n"
    "exec awk -v n=\"$n\" -v x=\"$x\" 'BEGIN { for (i = 0; i < n; i++)"
    " printf \"@metrics {\\\"step\\\": %d, \\\"loss\\\": %.6f, \\\"acc\\\":"
    " %s}\\n\", i, x + 1 / (i + 1), (i == 7 ? \"NaN\" : (i == 8 ?"
    " \"Infinity\" : i / n)) }'\n";

typedef struct {
    sw_h h;
    pid_t server;
    char *port_file, *log, *url;
    char *home; /* $HOME before the test */
} fixture;

static void msleep(int ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

    nanosleep(&ts, NULL);
}

static char *fake_path(void)
{
    return sw_aprintf("%s/cli/fake_wandb.py", getenv("SW_TEST_DATA"));
}

/* Starts the fake server with `extra` arguments (NULL-terminated). */
static void start_server(fixture *f, const char *const *extra)
{
    const char *argv[24];
    char *fake = fake_path(), *port;
    int n = 0;

    argv[n++] = "/usr/bin/python3";
    argv[n++] = fake;
    argv[n++] = "serve";
    argv[n++] = "--port-file";
    argv[n++] = f->port_file;
    argv[n++] = "--log";
    argv[n++] = f->log;
    argv[n++] = "--key";
    argv[n++] = KEY;
    while (extra && *extra && n < 22)
        argv[n++] = *extra++;
    argv[n] = NULL;
    unlink(f->port_file);
    assert_int_equal(posix_spawn(&f->server, argv[0], NULL, NULL,
                                 (char *const *)argv, environ),
                     0);
    for (int i = 0; i < 1000 && access(f->port_file, R_OK) != 0; i++)
        msleep(10);
    port = sw_test_slurp(f->port_file, NULL);
    assert_non_null(port);
    free(f->url);
    f->url = sw_aprintf("http://127.0.0.1:%ld", strtol(port, NULL, 10));
    setenv("WANDB_BASE_URL", f->url, 1);
    free(port);
    free(fake);
}

static void stop_server(fixture *f)
{
    if (f->server > 0) {
        kill(f->server, SIGTERM);
        waitpid(f->server, NULL, 0);
        f->server = 0;
    }
}

static int setup(void **state)
{
    fixture *f = sw_calloc(1, sizeof(*f));

    sw_h_init(&f->h);
    f->port_file = sw_aprintf("%s/port", f->h.dir);
    f->log = sw_aprintf("%s/requests.jsonl", f->h.dir);
    f->home = getenv("HOME") ? sw_strdup(getenv("HOME")) : NULL;
    setenv("WANDB_API_KEY", KEY, 1);
    setenv("SWEEP_GIT", "off", 1);
    setenv("SWEEP_WANDB_BACKOFF", "0.05", 1);
    unsetenv("SWEEP_WANDB_MAX_REQUEST");
    unsetenv("WANDB_ENTITY");
    unsetenv("WANDB_PROJECT");
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;

    stop_server(f);
    if (f->home)
        setenv("HOME", f->home, 1);
    free(f->home);
    sw_h_dispose(&f->h);
    free(f->port_file);
    free(f->log);
    free(f->url);
    free(f);
    return 0;
}

/* Runs a sweep of `runs` runs x `steps` steps; gives its id. */
static char *make_sweep(fixture *f, int runs, int steps)
{
    char *train = sw_h_file(&f->h, "train.sh", trainer), *text, *file, *out;
    sw_buf values = SW_BUF_INIT;

    chmod(train, 0755);
    for (int i = 0; i < runs; i++)
        sw_buf_printf(&values, "%s%d", i ? ", " : "", i);
    text = sw_aprintf("program: %s\nmethod: grid\nmetric: {name: loss, goal: "
                      "minimize}\ncommand: [\"${program}\", \"${args}\"]\n"
                      "parallel: 4\nparameters:\n  x: {values: [%s]}\n"
                      "  steps: {value: %d}\n",
                      train, sw_buf_cstr(&values), steps);
    file = sw_h_file(&f->h, "sweep.yaml", text);
    const char *run[] = {"run", file, "--quiet", NULL};
    assert_int_equal(sw_h_run(&f->h, run, NULL), 0);
    const char *q[] = {"query", "select id from sweeps", "--csv", NULL};
    assert_int_equal(sw_h_run(&f->h, q, &out), 0);
    char *id = sw_strndup(strchr(out, '\n') + 1, 8);
    free(out);
    free(text);
    free(file);
    free(train);
    sw_buf_dispose(&values);
    return id;
}

/* `sweep export wandb SWEEP --entity ent --project proj EXTRA...`. */
static int export(fixture *f, const char *sweep, const char *const *extra,
                  char **out)
{
    const char *args[16] = {"export", "wandb",     sweep, "--entity",
                            "ent",    "--project", "proj"};
    int n = 7;

    while (extra && *extra && n < 15)
        args[n++] = *extra++;
    args[n] = NULL;
    return sw_h_run(&f->h, args, out);
}

static long log_lines(const fixture *f)
{
    char *text = sw_test_slurp(f->log, NULL);
    long n = 0;

    for (char *p = text; p && *p; p++)
        n += *p == '\n';
    free(text);
    return n;
}

/* The fake's report on the requests from log line `from` on, and on
 * every run it holds. */
static sw_value *report(fixture *f, long from)
{
    char *fake = fake_path(), *from_s = sw_aprintf("%ld", from);
    char *path = sw_aprintf("%s/report.json", f->h.dir), *text;
    const char *argv[] = {
        "/usr/bin/python3", fake,         "report", "--log", f->log,
        "--port-file",      f->port_file, "--from", from_s,  NULL};
    posix_spawn_file_actions_t fa;
    sw_value *v = NULL;
    pid_t pid;

    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, path, O_WRONLY | O_CREAT | O_TRUNC,
                                     0644);
    assert_int_equal(
        posix_spawn(&pid, argv[0], &fa, NULL, (char *const *)argv, environ), 0);
    assert_int_equal(sw_h_wait(pid, 60), 0);
    posix_spawn_file_actions_destroy(&fa);
    text = sw_test_slurp(path, NULL);
    assert_non_null(text);
    assert_int_equal(sw_json_parse(&v, text, strlen(text)), SW_OK);
    free(text);
    free(path);
    free(from_s);
    free(fake);
    return v;
}

static int64_t num(const sw_value *v, const char *key)
{
    const sw_value *x = sw_value_map_get(v, key);

    assert_non_null(x);
    assert_true(x->type == SW_INT || x->type == SW_BOOL);
    return x->type == SW_INT ? x->u.i : x->u.b;
}

static const char *str(const sw_value *v, const char *key)
{
    const sw_value *x = sw_value_map_get(v, key);

    return x && x->type == SW_STR ? x->u.s : NULL;
}

/* The member `key` of `v`, which must be there. */
static const sw_value *at(const sw_value *v, const char *key)
{
    const sw_value *x = sw_value_map_get(v, key);

    assert_non_null(x);
    return x;
}

/* No request of the report was malformed (the fake lists each one). */
static void expect_no_problems(const sw_value *rep)
{
    const sw_value *p = sw_value_map_get(rep, "problems");

    assert_non_null(p);
    if (p->u.list.len)
        fail_msg("%zu malformed requests, first: %s", p->u.list.len,
                 p->u.list.items[0]->u.s);
}

/* Every run of the sweep is in W&B whole: one line per step of the
 * store, _step 0..n-1 in order, none missing or sent twice, ended. */
static void expect_complete(fixture *f, const sw_value *rep, int runs,
                            int steps)
{
    const sw_value *all = sw_value_map_get(rep, "runs");

    assert_int_equal(all->u.map.len, runs);
    for (size_t i = 0; i < all->u.map.len; i++) {
        const sw_value *r = all->u.map.vals[i];
        char *sql = sw_aprintf("select count(distinct step) from metrics "
                               "where run_id = '%s'",
                               str(r, "display"));
        assert_int_equal(sw_h_count(&f->h, sql), steps);
        assert_int_equal(num(r, "lines"), steps);
        assert_int_equal(num(r, "missing"), 0);
        assert_int_equal(num(r, "overlaps"), 0);
        assert_int_equal(num(r, "gaps"), 0);
        assert_true(num(r, "in_order"));
        assert_true(num(r, "complete"));
        assert_int_equal(num(r, "exitcode"), 0);
        assert_int_equal(num(r, "nonfinite_lines"), steps > 8 ? 2 : 0);
        assert_non_null(
            sw_value_map_get(sw_value_map_get(r, "summary"), "loss"));
        assert_int_equal(num(sw_value_map_get(r, "summary"), "_step"),
                         steps - 1);
        assert_string_equal(
            sw_value_map_get(r, "uploaded")->u.list.items[0]->u.s,
            "wandb-metadata.json");
        assert_non_null(strstr(str(at(r, "metadata"), "program"), "train.sh"));
        assert_non_null(str(at(r, "metadata"), "startedAt"));
        free(sql);
    }
}

static void test_export_20_runs_then_nothing_new(void **state)
{
    fixture *f = *state;
    char *sweep = make_sweep(f, 20, 1000), *out = NULL;
    sw_value *rep, *sw;
    long before;

    start_server(f, NULL);
    assert_int_equal(export(f, sweep, NULL, &out), 0);
    assert_non_null(strstr(out, "exported 20 runs"));
    assert_non_null(strstr(out, "/ent/proj/sweeps/sw000001"));
    free(out);
    rep = report(f, 0);
    expect_no_problems(rep);
    expect_complete(f, rep, 20, 1000);
    assert_int_equal(num(rep, "rows_sent"), 20000);
    assert_int_equal(num(sw_value_map_get(rep, "ops"), "UpsertSweep"), 2);
    assert_int_equal(num(sw_value_map_get(rep, "ops"), "UpsertBucket"), 20);
    assert_int_equal(num(sw_value_map_get(rep, "ops"), "CreateRunFiles"), 20);
    assert_int_equal(num(sw_value_map_get(rep, "ops"), "upload"), 20);
    sw = sw_value_map_get(sw_value_map_get(rep, "sweeps"), "sw000001");
    assert_string_equal(str(sw, "state"), "FINISHED");
    assert_non_null(strstr(str(sw, "config"), "controller:\n  type: local"));
    sw_value_free(rep);

    before = log_lines(f);
    assert_int_equal(export(f, sweep, NULL, &out), 0);
    free(out);
    rep = report(f, before);
    assert_int_equal(num(rep, "log_requests"), 0);
    assert_int_equal(num(rep, "rows_sent"), 0);
    sw_value_free(rep);
    free(sweep);
}

/* Forgets every sweep and run the fake holds, as if the W&B project had
 * been deleted. */
static void reset_server(const fixture *f)
{
    char *cmd = sw_aprintf("/usr/bin/python3 -c \"import urllib.request as u;"
                           " u.urlopen(u.Request('%s/_fake/reset', b''))\"",
                           f->url);

    assert_int_equal(system(cmd), 0);
    free(cmd);
}

static void test_resend_after_a_deleted_project(void **state)
{
    fixture *f = *state;
    char *sweep = make_sweep(f, 3, 100), *out = NULL;
    const char *resend[] = {"--resend", NULL};
    sw_value *rep;

    start_server(f, NULL);
    assert_int_equal(export(f, sweep, NULL, &out), 0);
    free(out);
    reset_server(f);
    assert_int_equal(export(f, sweep, NULL, &out), 0); /* records: all sent */
    free(out);
    rep = report(f, 0);
    assert_int_equal(sw_value_map_get(rep, "runs")->u.map.len, 0);
    sw_value_free(rep);
    assert_int_equal(export(f, sweep, resend, &out), 0);
    assert_non_null(strstr(out, "/ent/proj/sweeps/sw000001"));
    free(out);
    rep = report(f, 0);
    expect_no_problems(rep);
    expect_complete(f, rep, 3, 100);
    sw_value_free(rep);
    free(sweep);
}

static void test_killed_export_resumes(void **state)
{
    fixture *f = *state;
    char *sweep = make_sweep(f, 20, 1000), *out = NULL;
    const char *slow[] = {"--delay", "0.01", NULL};
    const char *args[] = {"export",    "wandb", NULL,      "--entity", "ent",
                          "--project", "proj",  "--quiet", NULL};
    sw_value *rep;
    pid_t pid;

    start_server(f, slow);
    setenv("SWEEP_WANDB_MAX_REQUEST", "20000", 1); /* ~200 lines a request */
    args[2] = sweep;
    pid = sw_h_start(&f->h, args);
    for (int i = 0; i < 3000 && log_lines(f) < 40; i++)
        msleep(2);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    rep = report(f, 0);
    assert_true(num(rep, "rows_sent") > 0);
    assert_true(num(rep, "rows_sent") < 20000); /* it stopped halfway */
    sw_value_free(rep);

    assert_int_equal(export(f, sweep, NULL, &out), 0);
    free(out);
    rep = report(f, 0);
    expect_no_problems(rep);
    expect_complete(f, rep, 20, 1000);
    assert_int_equal(num(rep, "rows_sent"), 20000); /* none twice */
    sw_value_free(rep);
    free(sweep);
}

static void test_retries_survive_429_500_drop_slow(void **state)
{
    fixture *f = *state;
    char *sweep = make_sweep(f, 3, 1000), *out = NULL;
    const char *fail[] = {"--fail", "2:429,3:500,5:drop,6:503,8:slow,9:429",
                          NULL};
    sw_value *rep;

    start_server(f, fail);
    assert_int_equal(export(f, sweep, NULL, &out), 0);
    free(out);
    rep = report(f, 0);
    expect_no_problems(rep);
    assert_int_equal(num(rep, "failed"), 5);
    expect_complete(f, rep, 3, 1000);
    assert_int_equal(num(rep, "rows_sent"), 3000);
    sw_value_free(rep);
    free(sweep);
}

static void test_401_is_one_clear_line(void **state)
{
    fixture *f = *state;
    char *sweep = make_sweep(f, 2, 10), *err_path, *err, *want;
    const char *fail[] = {"--fail", "all:401", NULL};

    start_server(f, fail);
    err_path = sw_aprintf("%s/stderr.txt", f->h.dir);
    unlink(err_path);
    assert_int_equal(export(f, sweep, NULL, NULL), 1);
    err = sw_test_slurp(err_path, NULL);
    assert_non_null(err);
    want = sw_aprintf("W&B at %s refused the API key for entity 'ent'", f->url);
    assert_non_null(strstr(err, want));
    assert_null(strstr(err, KEY));
    assert_non_null(strchr(err, '\n'));
    assert_string_equal(strchr(err, '\n'), "\n"); /* one line */
    assert_int_equal(log_lines(f), 1);            /* never retried */
    assert_int_equal(sw_h_count(&f->h, "select count(*) from exports"), 0);
    free(want);
    free(err);
    free(err_path);
    free(sweep);
}

static void test_graphql_error_is_reported_as_such(void **state)
{
    fixture *f = *state;
    char *sweep = make_sweep(f, 2, 10), *err_path, *err;
    const char *fail[] = {"--fail", "2:gql", NULL};

    start_server(f, fail);
    err_path = sw_aprintf("%s/stderr.txt", f->h.dir);
    unlink(err_path);
    assert_int_equal(export(f, sweep, NULL, NULL), 1);
    err = sw_test_slurp(err_path, NULL);
    assert_non_null(err);
    assert_string_equal(err, "sweep export: W&B GraphQL error in UpsertBucket: "
                             "injected GraphQL error\n");
    /* the sweep was created and recorded; the run was not */
    assert_int_equal(sw_h_count(&f->h, "select count(*) from exports where "
                                       "run_id is null and remote_id is not "
                                       "null"),
                     1);
    assert_int_equal(sw_h_count(&f->h, "select count(*) from exports where "
                                       "run_id is not null"),
                     0);
    free(err);
    free(err_path);
    free(sweep);
}

static void test_dry_run_sends_and_records_nothing(void **state)
{
    fixture *f = *state;
    char *sweep = make_sweep(f, 2, 10), *out = NULL, *line, *nl;
    const char *dry[] = {"--dry-run", "--verbose", NULL};
    sw_value *v;
    int lines = 0;

    start_server(f, NULL);
    assert_int_equal(export(f, sweep, dry, &out), 0);
    assert_null(strstr(out, KEY));
    for (line = out; (nl = strchr(line, '\n')) != NULL; line = nl + 1) {
        *nl = 0;
        assert_int_equal(sw_json_parse(&v, line, strlen(line)), SW_OK);
        if (strcmp(str(v, "method"), "PUT") == 0) /* uploads: no key */
            assert_null(str(at(v, "headers"), "Authorization"));
        else
            assert_string_equal(str(at(v, "headers"), "Authorization"),
                                "Basic <redacted>");
        sw_value_free(v);
        lines++;
    }
    /* UpsertSweep, 2 x (UpsertBucket, CreateRunFiles, PUT, file_stream),
     * UpsertSweep */
    assert_int_equal(lines, 10);
    assert_int_equal(log_lines(f), 0);
    assert_int_equal(sw_h_count(&f->h, "select count(*) from exports"), 0);
    free(out);
    free(sweep);
}

/* A dry run for people: a summary, no wire traffic, no --entity needed,
 * nothing sent or recorded; after a real export, it has nothing new. */
static void test_dry_run_summary(void **state)
{
    fixture *f = *state;
    char *sweep = make_sweep(f, 2, 10), *out = NULL;
    const char *args[] = {"export", "wandb", sweep, "--dry-run", NULL};

    start_server(f, NULL);
    assert_int_equal(sw_h_run(&f->h, args, &out), 0);
    assert_null(strstr(out, "\"method\""));
    assert_non_null(strstr(out, "dry run: nothing sent, nothing recorded"));
    assert_non_null(strstr(out, "/ENTITY/PROJECT (ENTITY, PROJECT: not given"));
    assert_non_null(strstr(out, "a new W&B sweep"));
    assert_non_null(strstr(out, "2 of 2 with something to send: 2 new W&B "
                                "runs, 0 updated"));
    assert_non_null(strstr(out, "history      20 rows"));
    assert_non_null(strstr(out, "files        2 "));
    assert_non_null(strstr(out, "requests     10, "));
    free(out);
    assert_int_equal(log_lines(f), 0);
    assert_int_equal(sw_h_count(&f->h, "select count(*) from exports"), 0);
    assert_int_equal(export(f, sweep, NULL, &out), 0);
    free(out);
    const char *again[] = {"export",    "wandb", sweep,       "--entity", "ent",
                           "--project", "proj",  "--dry-run", NULL};
    assert_int_equal(sw_h_run(&f->h, again, &out), 0);
    assert_non_null(strstr(out, "the W&B sweep an earlier export made"));
    assert_non_null(strstr(out, "0 of 2 with something to send"));
    assert_non_null(strstr(out, "history      0 rows"));
    free(out);
    const char *verbose[] = {"export", "wandb", sweep, "--verbose", NULL};
    assert_int_equal(sw_h_run(&f->h, verbose, NULL), 2);
    free(sweep);
}

/* wandb-metadata.json's `args` is what follows the script, as the SDK
 * writes it (sys.argv[1:] of the program): with W&B's default command,
 * `${env} ${interpreter} ${program} ${args}` (`/usr/bin/env sh train.sh
 * --steps=5 --x=0` here), the trainer's own arguments alone. */
static void test_metadata_args_follow_the_script(void **state)
{
    fixture *f = *state;
    char *train = sw_h_file(&f->h, "train.sh", trainer), *file, *out = NULL;
    char *cwd = getcwd(NULL, 0), *id;
    const sw_value *args;
    sw_value *rep;

    chmod(train, 0755);
    file = sw_h_file(&f->h, "default.yaml",
                     "program: train.sh\nmethod: grid\nmetric: {name: loss, "
                     "goal: minimize}\nparameters:\n  x: {values: [0]}\n"
                     "  steps: {value: 5}\n");
    setenv("SWEEP_INTERPRETER", "sh", 1);
    assert_int_equal(chdir(f->h.dir), 0); /* the program is relative */
    const char *run[] = {"run", file, "--quiet", NULL};
    assert_int_equal(sw_h_run(&f->h, run, NULL), 0);
    assert_int_equal(chdir(cwd), 0);
    unsetenv("SWEEP_INTERPRETER");
    const char *q[] = {"query", "select id from sweeps", "--csv", NULL};
    assert_int_equal(sw_h_run(&f->h, q, &out), 0);
    id = sw_strndup(strchr(out, '\n') + 1, 8);
    free(out);
    start_server(f, NULL);
    assert_int_equal(export(f, id, NULL, &out), 0);
    free(out);
    rep = report(f, 0);
    expect_no_problems(rep);
    args = at(at(sw_value_map_get(rep, "runs")->u.map.vals[0], "metadata"),
              "args");
    assert_int_equal(args->u.list.len, 2);
    assert_string_equal(args->u.list.items[0]->u.s, "--steps=5");
    assert_string_equal(args->u.list.items[1]->u.s, "--x=0");
    assert_string_equal(
        str(at(sw_value_map_get(rep, "runs")->u.map.vals[0], "metadata"),
            "program"),
        "train.sh");
    sw_value_free(rep);
    free(id);
    free(cwd);
    free(file);
    free(train);
}

static const sw_value *run_named(const sw_value *rep, const char *id);

/* A run stopped early (here by hand, `sweep stop`) ends in W&B as the
 * runs W&B stops itself, and this is what its SDK tells the server for
 * them (wandb/wandb, read at b6e2950):
 * - W&B holds the stop as the run's `stopped` flag, set while the run
 *   runs by `mutation StopRun($id: ID!) { stopRun(input: {id: $id}) {
 *   success } }` with the run's storage id, UpsertBucket's bucket.id
 *   (core/api/graphql/mutation_stop_run.graphql; what the App's Stop
 *   button and wandb.Api().run(...).stop() send, wandb/apis/public/
 *   runs.py Run.stop; a sweep's early stops set the same flag,
 *   wandb/wandb_controller.py _parse_scheduled reads it as r.stopped);
 * - the run's SDK reads the flag (file_stream answers' "stopped",
 *   core/internal/filestream/filestreamimpl.go; polled by
 *   _RunStopCheckerImpl.loop, wandb/sdk/lib/run_stopping.py) and
 *   interrupts its script (interrupt.interrupt_main: SIGINT, so a
 *   KeyboardInterrupt), which ExitHooks.exc_handler records as exit
 *   code 255 (wandb/sdk/lib/exit_hooks.py); Run._atexit_cleanup sends
 *   it (wandb/sdk/wandb_run.py) and wandb-core ends the file_stream with
 *   {"complete": true, "exitcode": 255} (Sender's FinishWithExit,
 *   core/internal/stream/sender.go; ExitUpdate.Apply,
 *   core/internal/filestream/updateexit.go). No run `state` is sent:
 *   UpsertBucket's `state` is only ever "pending" from the SDK.
 * (When the agent's SIGTERM, wandb/wandb_agent.py Agent._command_stop,
 * kills the script first, its service exits without a word,
 * core/pkg/server/server.go exitWhenParentIsGone, and the server learns
 * nothing more; that is no end to copy.) The App then shows the run
 * `killed` (docs.wandb.ai/models/runs/stop-runs), as the fake does. The
 * run that finished is not stopped and ends with 0. */
static void test_stopped_run_ends_as_wandb_stops_one(void **state)
{
    fixture *f = *state;
    char *text = sw_aprintf("program: %s\nmethod: grid\nmetric: {name: loss, "
                            "goal: minimize}\ncommand: [\"${program}\", "
                            "\"${args}\"]\nparallel: 2\nparameters:\n  x: "
                            "{values: [1, 2]}\n  steps: {value: 300}\n  sleep: "
                            "{value: 0.01}\n",
                            sw_h_toy());
    char *file = sw_h_file(&f->h, "stop.yaml", text), *out = NULL, *id, *r1;
    const sw_value *run;
    sw_value *rep;
    long before;
    pid_t pid;

    const char *args[] = {"run", file, "--quiet", NULL};
    pid = sw_h_start(&f->h, args);
    for (int i = 0; i < 1000 && sw_h_count(&f->h, "select count(*) from runs "
                                                  "where idx = 0 and state = "
                                                  "'running' and value is "
                                                  "not null") < 1;
         i++)
        msleep(20);
    const char *q[] = {"query", "select id from sweeps", "--csv", NULL};
    assert_int_equal(sw_h_run(&f->h, q, &out), 0);
    id = sw_strndup(strchr(out, '\n') + 1, 8);
    free(out);
    r1 = sw_aprintf("%s-1", id);
    const char *stop[] = {"stop", r1, NULL};
    assert_int_equal(sw_h_run(&f->h, stop, NULL), 0);
    assert_int_equal(sw_h_wait(pid, 120), 0);
    start_server(f, NULL);
    assert_int_equal(export(f, id, NULL, &out), 0);
    free(out);
    rep = report(f, 0);
    expect_no_problems(rep); /* StopRun came while the run ran */
    assert_int_equal(num(at(rep, "ops"), "StopRun"), 1);
    run = run_named(rep, r1);
    assert_true(num(run, "stopped"));
    assert_true(num(run, "complete"));
    assert_int_equal(num(run, "exitcode"), 255);
    assert_string_equal(str(run, "state"), "killed");
    assert_string_equal(at(run, "tags")->u.list.items[0]->u.s, "stopped");
    free(r1);
    r1 = sw_aprintf("%s-2", id);
    run = run_named(rep, r1);
    assert_false(num(run, "stopped"));
    assert_int_equal(num(run, "exitcode"), 0);
    assert_string_equal(str(run, "state"), "finished");
    sw_value_free(rep);
    /* its end was sent: the next export stops nothing again */
    before = log_lines(f);
    assert_int_equal(export(f, id, NULL, &out), 0);
    free(out);
    rep = report(f, before);
    assert_int_equal(num(rep, "log_requests"), 0);
    sw_value_free(rep);
    free(r1);
    free(id);
    free(file);
    free(text);
}

/* A `--backend sim` sweep: its control keys (`_seconds`, the virtual
 * time a step took; `_startup`, docs/simulation.md) are the
 * simulator's, not the trainer's metrics: the engine never stores them,
 * so W&B gets them neither in a line nor in the summary, and the
 * trainer's loss as it is. Its three virtual hours, which run ahead of
 * the wall clock, are moved back to end by the export: no line is in
 * the future. */
static void test_sim_control_key_is_no_metric(void **state)
{
    fixture *f = *state;
    char *train = sw_h_file(&f->h, "sim.sh",
                            "#!/bin/sh\necho '@metrics {\"_startup\": 5}'\n"
                            "for i in 1 2 3; do echo \"@metrics "
                            "{\\\"step\\\": $i, \\\"loss\\\": $i, "
                            "\\\"_seconds\\\": 3600}\"; done\n");
    char *text, *file, *out = NULL, *id;
    const sw_value *run;
    sw_value *rep, *line = NULL;
    double when;

    chmod(train, 0755);
    text = sw_aprintf("method: grid\nmetric: {name: loss, goal: minimize}\n"
                      "command: [%s]\nparameters:\n  x: {values: [1]}\n",
                      train);
    file = sw_h_file(&f->h, "sim.yaml", text);
    const char *args[] = {"run", file, "--backend", "sim", "--quiet", NULL};
    assert_int_equal(sw_h_run(&f->h, args, NULL), 0);
    assert_int_equal(sw_h_count(&f->h, "select count(*) from metrics where "
                                       "name like '\\_%' escape '\\'"),
                     0);
    assert_int_equal(sw_h_count(&f->h, "select count(*) from metrics"), 3);
    const char *q[] = {"query", "select id from sweeps", "--csv", NULL};
    assert_int_equal(sw_h_run(&f->h, q, &out), 0);
    id = sw_strndup(strchr(out, '\n') + 1, 8);
    free(out);
    start_server(f, NULL);
    assert_int_equal(export(f, id, NULL, &out), 0);
    free(out);
    rep = report(f, 0);
    expect_no_problems(rep);
    run = at(rep, "runs")->u.map.vals[0];
    assert_int_equal(num(run, "lines"), 3);
    assert_null(strstr(str(run, "first_line"), "_seconds"));
    assert_null(strstr(str(run, "first_line"), "_startup"));
    assert_non_null(strstr(str(run, "first_line"), "\"loss\": 1"));
    assert_null(sw_value_map_get(at(run, "summary"), "_seconds"));
    assert_int_equal(sw_json_parse(&line, str(run, "first_line"),
                                   strlen(str(run, "first_line"))),
                     SW_OK);
    assert_true(sw_value_number(sw_value_map_get(line, "_timestamp"), &when));
    /* the first of 3 hours: 2 before the last, which is at most now */
    assert_true(when <= (double)time(NULL) - 7000);
    assert_true(when >= (double)time(NULL) - 3 * 3600 - 600);
    sw_value_free(line);
    sw_value_free(rep);
    free(id);
    free(file);
    free(text);
    free(train);
}

static void test_key_from_netrc_and_one_run(void **state)
{
    fixture *f = *state;
    char *sweep = make_sweep(f, 3, 10), *netrc, *out = NULL;
    const char *one[] = {"--run", "2", NULL};
    sw_value *rep;

    start_server(f, NULL);
    unsetenv("WANDB_API_KEY");
    setenv("HOME", f->h.dir, 1);
    netrc = sw_aprintf("machine 127.0.0.1\n  login user\n  password %s\n", KEY);
    free(sw_h_file(&f->h, ".netrc", netrc));
    assert_int_equal(export(f, sweep, one, &out), 0);
    free(out);
    rep = report(f, 0);
    expect_no_problems(rep);
    assert_int_equal(sw_value_map_get(rep, "runs")->u.map.len, 1);
    assert_non_null(strstr(
        str(sw_value_map_get(rep, "runs")->u.map.vals[0], "display"), "-2"));
    sw_value_free(rep);
    free(sw_h_file(&f->h, ".netrc", "machine elsewhere password x\n"));
    assert_int_equal(export(f, sweep, NULL, NULL), 1);
    setenv("WANDB_API_KEY", KEY, 1);
    free(netrc);
    free(sweep);
}

/* A sweep run in a repository whose tree differs from HEAD: each run's
 * commit, remote and diff.patch reach W&B. */
static void test_commit_and_patch_uploaded(void **state)
{
    fixture *f = *state;
    char *repo = sw_aprintf("%s/repo", f->h.dir), *cmd, *cwd, *out = NULL;
    sw_value *rep;
    const sw_value *r;

    cmd = sw_aprintf("mkdir '%s' && cd '%s' && git init -q && "
                     "git remote add origin https://u:pw@example.com/r.git &&"
                     " echo a > notes.txt && git add notes.txt && "
                     "git -c user.name=t -c user.email=t@t commit -qm one && "
                     "echo b >> notes.txt",
                     repo, repo);
    assert_int_equal(system(cmd), 0);
    cwd = getcwd(NULL, 0);
    assert_int_equal(chdir(repo), 0);
    unsetenv("SWEEP_GIT");
    char *sweep = make_sweep(f, 2, 10);
    setenv("SWEEP_GIT", "off", 1);
    assert_int_equal(chdir(cwd), 0);
    start_server(f, NULL);
    assert_int_equal(export(f, sweep, NULL, &out), 0);
    rep = report(f, 0);
    expect_no_problems(rep);
    assert_int_equal(num(sw_value_map_get(rep, "ops"), "upload"), 4);
    r = sw_value_map_get(rep, "runs")->u.map.vals[0];
    assert_non_null(strstr(str(r, "patch"), "+b"));
    assert_string_equal(str(r, "repo"), "https://example.com/r.git");
    assert_int_equal(strlen(str(r, "commit")), 40);
    assert_string_equal(sw_value_map_get(r, "uploaded")->u.list.items[1]->u.s,
                        "diff.patch");
    /* W&B's Overview shows the code from the metadata file */
    assert_string_equal(str(at(at(r, "metadata"), "git"), "commit"),
                        str(r, "commit"));
    assert_string_equal(str(at(at(r, "metadata"), "git"), "remote"),
                        "https://example.com/r.git");
    sw_value_free(rep);
    free(out);
    free(sweep);
    free(cwd);
    free(cmd);
    free(repo);
}

/* The fake's record of run `id` (ours, its display name). */
static const sw_value *run_named(const sw_value *rep, const char *id)
{
    const sw_value *all = at(rep, "runs");

    for (size_t i = 0; i < all->u.map.len; i++)
        if (strcmp(str(all->u.map.vals[i], "display"), id) == 0)
            return all->u.map.vals[i];
    fail_msg("no run %s in W&B", id);
    return NULL;
}

/* `sweep tag` and `sweep note` reach W&B as the run's tags and notes
 * (UpsertBucket's `tags: [String!]` and `notes: String`, as the SDK's
 * own UpsertBucket mutation names them), after the tag W&B's runs of a
 * stopped or canceled state get; a label changed after an export is sent
 * again by the next, alone. */
static void test_tags_and_notes_reach_wandb(void **state)
{
    fixture *f = *state;
    char *sweep = make_sweep(f, 2, 10), *out = NULL;
    char *r1 = sw_aprintf("%s-1", sweep), *r2 = sw_aprintf("%s-2", sweep);
    const sw_value *tags;
    sw_value *rep;
    long before;

    const char *tag[] = {"tag", r1, "baseline", "lr sweep", NULL};
    assert_int_equal(sw_h_run(&f->h, tag, NULL), 0);
    const char *note[] = {"note", r1, "the first try,\nwith notes", NULL};
    assert_int_equal(sw_h_run(&f->h, note, NULL), 0);
    start_server(f, NULL);
    assert_int_equal(export(f, sweep, NULL, &out), 0);
    free(out);
    rep = report(f, 0);
    expect_no_problems(rep);
    tags = at(run_named(rep, r1), "tags");
    assert_int_equal(tags->u.list.len, 2);
    assert_string_equal(tags->u.list.items[0]->u.s, "baseline");
    assert_string_equal(tags->u.list.items[1]->u.s, "lr sweep");
    assert_string_equal(str(run_named(rep, r1), "notes"),
                        "the first try,\nwith notes");
    assert_int_equal(at(run_named(rep, r2), "tags")->u.list.len, 0);
    assert_null(str(run_named(rep, r2), "notes"));
    sw_value_free(rep);

    /* a new tag: the next export sends that run's UpsertBucket alone */
    const char *more[] = {"tag", r2, "best", NULL};
    assert_int_equal(sw_h_run(&f->h, more, NULL), 0);
    before = log_lines(f);
    assert_int_equal(export(f, sweep, NULL, &out), 0);
    free(out);
    rep = report(f, before);
    expect_no_problems(rep);
    assert_int_equal(num(at(rep, "ops"), "UpsertBucket"), 1);
    assert_int_equal(num(rep, "rows_sent"), 0);
    tags = at(run_named(rep, r2), "tags");
    assert_int_equal(tags->u.list.len, 1);
    assert_string_equal(tags->u.list.items[0]->u.s, "best");
    sw_value_free(rep);
    /* and then nothing */
    before = log_lines(f);
    assert_int_equal(export(f, sweep, NULL, &out), 0);
    free(out);
    rep = report(f, before);
    assert_int_equal(num(rep, "log_requests"), 0);
    sw_value_free(rep);
    free(r1);
    free(r2);
    free(sweep);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_export_20_runs_then_nothing_new,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_killed_export_resumes, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_resend_after_a_deleted_project,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_retries_survive_429_500_drop_slow,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_401_is_one_clear_line, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_graphql_error_is_reported_as_such,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_dry_run_sends_and_records_nothing,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_dry_run_summary, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_stopped_run_ends_as_wandb_stops_one, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sim_control_key_is_no_metric,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_metadata_args_follow_the_script,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_key_from_netrc_and_one_run, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_commit_and_patch_uploaded, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_tags_and_notes_reach_wandb, setup,
                                        teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
