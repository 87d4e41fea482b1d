/*
 * test_json.c - every command that reads prints --json that another
 * parser takes: each output is read by Python's json module in strict
 * mode (no NaN, no Infinity), its keys and types checked there, and
 * every time in it checked to be ISO 8601 in UTC, to the millisecond,
 * and the time the store holds. `validate --json` describes a valid
 * file and locates each problem of an invalid one; `reproduce --json`
 * is enough to run a run again: the test does, from the JSON alone.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "sweeps/buf.h"
#include "testutil.h"

extern char **environ;

/* What every check starts with: `docs`, the file's JSON values (one, or
 * one per line; None for CSV, which `raw` holds), `doc` the first; iso(s) the
 * Unix time of an ISO 8601 UTC time with milliseconds, failing on anything
 * else. */
static const char prelude[] =
    "import datetime, json, os, re, subprocess, sys\n"
    "def strict(c):\n"
    "    raise ValueError('not JSON: ' + c)\n"
    "raw = open(sys.argv[1]).read()\n"
    "docs = None\n"
    "if not raw.startswith('id,'):  # not CSV\n"
    "    try:\n"
    "        docs = [json.loads(raw, parse_constant=strict)]\n"
    "    except json.JSONDecodeError:\n"
    "        docs = [json.loads(l, parse_constant=strict)\n"
    "                for l in raw.splitlines() if l.strip()]\n"
    "doc = docs[0] if docs else None\n"
    "def iso(s):\n"
    "    assert isinstance(s, str), repr(s)\n"
    "    assert re.fullmatch(r'\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d"
    "\\.\\d{3}Z', s), s\n"
    "    t = datetime.datetime.fromisoformat(s)\n"
    "    assert t.utcoffset() == datetime.timedelta(0), s\n"
    "    return t.timestamp()\n"
    "def near(a, b, eps=0.002):\n"
    "    assert abs(a - b) <= eps, (a, b)\n";

/* Runs `python3 -c PRELUDE+SCRIPT FILE ARGS...`, FILE holding `text`;
 * fails the test with Python's output unless it exits 0. */
static void py_check(const sw_h *h, const char *text, const char *script,
                     const char *const *args)
{
    char *file = sw_h_file(h, "check.json", text);
    char *log = sw_aprintf("%s/check.log", h->dir);
    char *code = sw_aprintf("%s%s", prelude, script), *said;
    const char *argv[16] = {"/usr/bin/python3", "-c", code, file};
    posix_spawn_file_actions_t fa;
    int n = 4, status = -1;
    pid_t pid;

    for (; args && *args && n < 15; args++)
        argv[n++] = *args;
    argv[n] = NULL;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, log, O_WRONLY | O_CREAT | O_TRUNC,
                                     0644);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    assert_int_equal(
        posix_spawn(&pid, argv[0], &fa, NULL, (char *const *)argv, environ), 0);
    posix_spawn_file_actions_destroy(&fa);
    waitpid(pid, &status, 0);
    said = sw_test_slurp(log, NULL);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        fail_msg("python3 refused:\n%s\n--- the output:\n%s", said, text);
    free(said);
    free(code);
    free(log);
    free(file);
}

/* `sweep ARGS...` exits `rc`; its stdout checked by `script`. */
static void check_cmd(const sw_h *h, const char *const *args, int rc,
                      const char *script, const char *const *py_args)
{
    char *out = NULL;

    assert_int_equal(sw_h_run(h, args, &out), rc);
    py_check(h, out, script, py_args);
    free(out);
}

/* The first field of the first row of `sweep query SQL --csv`. */
static char *query1(const sw_h *h, const char *sql)
{
    const char *args[] = {"query", sql, "--csv", NULL};
    char *out = NULL, *nl, *v;

    assert_int_equal(sw_h_run(h, args, &out), 0);
    nl = strchr(out, '\n');
    v = sw_strdup(nl ? nl + 1 : "");
    v[strcspn(v, "\r\n")] = '\0';
    free(out);
    return v;
}

static char *toy_sweep(const sw_h *h, const char *name, const char *extra)
{
    char *text = sw_aprintf("program: %s\nmetric: {name: loss, goal: "
                            "minimize}\ncommand: [\"${program}\", "
                            "\"${args}\"]\n%s\n",
                            sw_h_toy(), extra);
    char *path = sw_h_file(h, name, text);

    free(text);
    return path;
}

/* ---- the read commands over one store --------------------------------- */

/* ls: each sweep's created_at is ISO 8601 and the store's time; in --csv
 * too. */
static void check_ls(const sw_h *h, const char *a, const char *created)
{
    const char *ls[] = {"ls", "--json", NULL};
    const char *csv[] = {"ls", "--csv", NULL};
    const char *runs[] = {"ls", a, "--json", NULL};
    const char *py[] = {created, a, NULL};

    check_cmd(h, ls, 0,
              "assert len(docs) == 2\n"
              "s = [d for d in docs if d['id'] == sys.argv[3]][0]\n"
              "near(iso(s['created_at']), float(sys.argv[2]))\n"
              "assert s['method'] == 'grid' and s['runs'] == 2\n"
              "assert isinstance(s['gpu_hours'], float)\n",
              py);
    check_cmd(h, csv, 0,
              "import csv, io\n"
              "rows = list(csv.DictReader(io.StringIO(raw)))\n"
              "s = [r for r in rows if r['id'] == sys.argv[3]][0]\n"
              "near(iso(s['created_at']), float(sys.argv[2]))\n",
              py);
    check_cmd(h, runs, 0,
              "assert [d['state'] for d in docs] == ['finished'] * 2\n"
              "assert all(isinstance(d['params'], dict) and "
              "isinstance(d['tags'], list) and d['seconds'] > 0 "
              "for d in docs)\n",
              NULL);
}

/* show: started_at and ended_at are ISO 8601, the store's times. */
static void check_show(const sw_h *h, const char *run)
{
    char *sql = sw_aprintf("select started_at || ' ' || ended_at from runs "
                           "where id = '%s'",
                           run);
    char *times = query1(h, sql), *sp = strchr(times, ' ');
    const char *show[] = {"show", run, "--json", NULL};
    const char *py[] = {times, sp + 1, run, NULL};

    *sp = '\0';
    check_cmd(h, show, 0,
              "near(iso(doc['started_at']), float(sys.argv[2]))\n"
              "near(iso(doc['ended_at']), float(sys.argv[3]))\n"
              "assert doc['id'] == sys.argv[4] and doc['state'] == "
              "'finished'\n"
              "assert doc['signal'] is None and doc['exit_code'] == 0\n"
              "assert isinstance(doc['metrics']['loss'], float)\n",
              py);
    free(times);
    free(sql);
}

/* best, query, report, compare, plan, gpus: each parses, with its keys. */
static void check_the_others(const sw_h *h, const char *a, const char *b,
                             const char *file)
{
    const char *best[] = {"best", a, "--top", "2", "--json", NULL};
    const char *query[] = {"query", "select id, created_at from sweeps",
                           "--json", NULL};
    const char *report[] = {"report", a, "--json", NULL};
    const char *compare[] = {"compare", a, b, "--json", NULL};
    const char *plan[] = {"plan", file, "-n", "2", "--json", NULL};
    const char *gpus[] = {"gpus", file, "--gpus", "2", "--json", NULL};

    check_cmd(h, best, 0,
              "assert len(docs) == 2 and docs[0]['value'] <= "
              "docs[1]['value']\n",
              NULL);
    /* what SQLite stored, unchanged: Unix seconds */
    check_cmd(h, query, 0,
              "assert len(docs) == 2 and all(isinstance(d['created_at'], "
              "float) for d in docs)\n",
              NULL);
    check_cmd(h, report, 0,
              "assert doc['sweep'] == sys.argv[2] and doc['finished'] == 2\n",
              (const char *[]){a, NULL});
    check_cmd(h, compare, 0,
              "assert [s['id'] for s in doc['sweeps']] == sys.argv[2:4]\n",
              (const char *[]){a, b, NULL});
    check_cmd(h, plan, 0,
              "assert len(docs) == 2 and docs[0]['params'] == {'x': 1, "
              "'steps': 2}\n",
              NULL);
    check_cmd(h, gpus, 0, "assert isinstance(doc, dict)\n", NULL);
}

static void test_every_read_command_prints_json(void **state)
{
    char *file, *a, *b, *run, *created;
    sw_h h;

    (void)state;
    sw_h_init(&h);
    file = toy_sweep(&h, "a.yaml",
                     "method: grid\nparameters:\n  x: {values: [1, 2]}\n"
                     "  steps: {value: 2}\n");
    const char *run_a[] = {"run", file, "--quiet", NULL};
    assert_int_equal(sw_h_run(&h, run_a, NULL), 0);
    a = query1(&h, "select id from sweeps");
    assert_int_equal(sw_h_run(&h, run_a, NULL), 0);
    b = query1(&h, "select id from sweeps order by created_at desc");
    created = query1(&h, "select created_at from sweeps order by "
                         "created_at limit 1");
    run = query1(&h, "select id from runs order by created_at limit 1");
    check_ls(&h, a, created);
    check_show(&h, run);
    check_the_others(&h, a, b, file);
    free(created);
    free(run);
    free(a);
    free(b);
    free(file);
    sw_h_dispose(&h);
}

/* Each read command's --help names --json. */
static void test_every_read_command_offers_json(void **state)
{
    static const char *const cmds[] = {"validate",  "plan",   "ls",     "show",
                                       "best",      "query",  "report", "gpus",
                                       "reproduce", "compare"};
    char *out = NULL;
    sw_h h;

    (void)state;
    sw_h_init(&h);
    for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
        const char *args[] = {cmds[i], "--help", NULL};
        assert_int_equal(sw_h_run(&h, args, &out), 0);
        if (!strstr(out, "--json"))
            fail_msg("sweep %s --help does not offer --json:\n%s", cmds[i],
                     out);
        free(out);
    }
    sw_h_dispose(&h);
}

/* ---- validate --------------------------------------------------------- */

static const char valid_file[] =
    "method: grid\n"
    "metric: {name: acc, goal: maximize, target: 0.9}\n"
    "program: train.py\n"
    "run_cap: 5\n"
    "resources: {gpus: 0.5}\n"
    "parameters:\n"
    "  lr: {values: [0.1, 0.01]}\n"
    "  opt:\n"
    "    parameters:\n"
    "      name: {value: adam}\n"
    "      beta: {distribution: q_uniform, min: 0, max: 1, q: 0.25}\n"
    "  n: {min: 1, max: 4}\n";

static void test_validate_json_describes_a_valid_file(void **state)
{
    char *file, *out = NULL;
    sw_h h;

    (void)state;
    sw_h_init(&h);
    file = sw_h_file(&h, "ok.yaml", valid_file);
    const char *args[] = {"validate", file, "--json", NULL};
    check_cmd(&h, args, 0,
              "assert doc['valid'] is True and doc['problems'] == []\n"
              "s = doc['sweep']\n"
              "assert s['method'] == 'grid' and s['run_cap'] == 5\n"
              "assert s['metric'] == {'name': 'acc', 'goal': 'maximize', "
              "'target': 0.9}\n"
              "assert s['grid'] == {'size': 32, 'saturated': False}\n"
              "assert s['resources']['gpus'] == 0.5\n"
              "p = {x['name']: x for x in s['parameters']}\n"
              "assert p['lr']['values'] == [0.1, 0.01] and "
              "p['lr']['probabilities'] is None\n"
              "assert p['lr']['line'] == 7 and p['lr']['column'] == 3\n"
              "assert p['n'] == dict(p['n'], distribution='int_uniform', "
              "min=1, max=4)\n"
              "assert p['opt.beta']['path'] == ['opt', 'beta'] and "
              "p['opt.beta']['q'] == 0.25\n"
              "assert p['opt.name']['value'] == 'adam'\n",
              NULL);
    const char *human[] = {"validate", file, NULL};
    assert_int_equal(sw_h_run(&h, human, &out), 0);
    assert_non_null(strstr(out, "grid size: 32 (run_cap 5)\n"));
    free(out);
    free(file);
    sw_h_dispose(&h);
}

/* Invalid: exit 2, every problem located on stdout as on stderr; a file
 * that cannot be read: exit 1; a grid the search cannot hold: exit 2. */
static void test_validate_json_locates_each_problem(void **state)
{
    char *bad, *huge, *err, *path;
    sw_h h;

    (void)state;
    sw_h_init(&h);
    bad = sw_h_file(&h, "bad.yaml",
                    "method: grid\nparameters:\n  x: {min: 3, max: 1}\n"
                    "  y: {values: []}\n");
    const char *args[] = {"validate", "--json", bad, NULL};
    check_cmd(&h, args, 2,
              "assert doc['valid'] is False and doc['sweep'] is None\n"
              "assert doc['errors'] == 2 and doc['warnings'] == 0\n"
              "a, b = doc['problems']\n"
              "assert (a['line'], a['column'], a['key']) == (3, 7, "
              "'parameters.x.min'), a\n"
              "assert a['severity'] == 'error' and 'less than' in "
              "a['message']\n"
              "assert (b['line'], b['key']) == (4, 'parameters.y.values')\n",
              NULL);
    path = sw_aprintf("%s/stderr.txt", h.dir);
    err = sw_test_slurp(path, NULL);
    assert_non_null(strstr(err, "bad.yaml:3:7: parameters.x.min: "));
    free(err);
    free(path);
    const char *missing[] = {"validate", "--json", "/nonexistent/s.yaml", NULL};
    check_cmd(&h, missing, 1,
              "assert doc['valid'] is False and doc['errors'] == 1\n"
              "assert doc['problems'][0]['line'] is None\n",
              NULL);
    huge = sw_h_file(&h, "huge.yaml",
                     "method: grid\nparameters:\n  x: {distribution: "
                     "q_uniform, min: 0, max: 1.0e40, q: 1}\n");
    const char *big[] = {"validate", "--json", huge, NULL};
    check_cmd(&h, big, 2,
              "assert doc['valid'] is False and doc['errors'] == 1\n", NULL);
    free(huge);
    free(bad);
    sw_h_dispose(&h);
}

/* ---- reproduce -------------------------------------------------------- */

/* Runs `cmd` through the shell in `dir`; fails the test unless it exits
 * 0. */
static void sh_in(const char *dir, const char *cmd)
{
    char *full = sw_aprintf("cd '%s' && %s", dir, cmd);

    if (system(full) != 0)
        fail_msg("failed: %s", full);
    free(full);
}

/* A repository with a trainer committed; a sweep of one run in it (git
 * facts on); reproduce --json gives its code, and its command line, cwd
 * and environment run it again, printing what it printed. */
static void test_reproduce_json_runs_it_again(void **state)
{
    char cwd[PATH_MAX], *repo, *file, *run, *out, *again;
    sw_h h;

    (void)state;
    sw_h_init(&h);
    repo = sw_aprintf("%s/repo", h.dir);
    assert_non_null(getcwd(cwd, sizeof(cwd)));
    sh_in(h.dir, "mkdir -p repo/sub && cd repo && git init -q");
    free(sw_h_file(&h, "repo/sub/train.sh",
                   "echo '@metrics {\"loss\": 1}'\n"
                   "echo \"$1 $SWEEP_RUN_ID\" > ../ran\n"));
    sh_in(repo, "git add -A && git -c user.name=t -c user.email=t@t "
                "commit -qm one");
    file = sw_h_file(&h, "s.yaml", /* outside: the tree stays clean */
                     "method: grid\ncommand: [/bin/sh, train.sh, "
                     "\"${args_no_hyphens}\"]\nparameters:\n  x: "
                     "{value: 7}\n");
    unsetenv("SWEEP_GIT");
    assert_int_equal(chdir(repo), 0);
    assert_int_equal(chdir("sub"), 0);
    const char *args[] = {"run", file, "--quiet", NULL};
    assert_int_equal(sw_h_run(&h, args, NULL), 0);
    run = query1(&h, "select id from runs");
    out = sw_aprintf("%s/again", h.dir);
    const char *rep[] = {"reproduce", run, out, "--json", NULL};
    check_cmd(&h, rep, 0,
              "assert doc['run'] == sys.argv[2] and doc['dir'] == "
              "sys.argv[3]\n"
              "assert doc['snapshot'] is None and doc['cwd_in_repository']\n"
              "assert doc['cwd'] == sys.argv[3] + '/sub'\n"
              "head = subprocess.run(['git', '-C', doc['root'], 'rev-parse',"
              " 'HEAD'], capture_output=True, text=True).stdout.strip()\n"
              "assert doc['commit'] == head == doc['head']\n"
              "assert doc['argv'] == ['/bin/sh', 'train.sh', 'x=7']\n"
              "assert doc['env']['SWEEP_RUN_ID'] == sys.argv[2]\n"
              "p = subprocess.run(doc['argv'], cwd=doc['cwd'], env=dict("
              "os.environ, **doc['env']), capture_output=True, text=True)\n"
              "assert p.stdout == '@metrics {\"loss\": 1}\\n', p\n"
              "ran = open(sys.argv[3] + '/ran').read()\n"
              "assert ran == 'x=7 ' + sys.argv[2] + '\\n', ran\n",
              (const char *[]){run, out, NULL});
    /* a folder given relative to where reproduce runs: `dir` is whole */
    const char *rel[] = {"reproduce", run, "../../again2", "--json", NULL};
    again = sw_aprintf("%s/again2", h.dir);
    check_cmd(&h, rel, 0,
              "assert doc['dir'] == os.path.realpath(sys.argv[2]), doc\n",
              (const char *[]){again, NULL});
    free(again);
    assert_int_equal(chdir(cwd), 0);
    setenv("SWEEP_GIT", "off", 1);
    free(out);
    free(run);
    free(file);
    free(repo);
    sw_h_dispose(&h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_read_command_prints_json),
        cmocka_unit_test(test_every_read_command_offers_json),
        cmocka_unit_test(test_validate_json_describes_a_valid_file),
        cmocka_unit_test(test_validate_json_locates_each_problem),
        cmocka_unit_test(test_reproduce_json_runs_it_again),
    };

    /* git facts only where a test makes a repository of its own */
    setenv("SWEEP_GIT", "off", 1);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
