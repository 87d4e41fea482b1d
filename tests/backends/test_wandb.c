/*
 * test_wandb.c - the W&B exporter through its own interface, in dry-run
 * mode (every request printed to a file, nothing sent): the sweep's
 * config with a local controller, run ids, the key's sources, history
 * lines split under the size limit at the right offsets, NaN and
 * Infinity as bare tokens, resuming from a mark, a run already done
 * sending nothing, and a stopped run's StopRun before its end. The HTTP side is
 * tested end to end in tests/cli/test_export.c against a fake server.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/wandb_internal.h"
#include "sweeps/json.h"
#include "testutil.h"

/* A dry-run session printing to a temporary file. */
typedef struct {
    sw_wandb *w;
    FILE *out;
} session;

static void open_dry(session *s, size_t max_request)
{
    sw_wandb_opts o = SW_WANDB_OPTS_INIT;

    s->out = tmpfile();
    assert_non_null(s->out);
    o.base_url = "https://api.example.com/";
    o.entity = "team";
    o.project = "my proj";
    o.dry_run = s->out;
    o.max_request = max_request;
    assert_int_equal(sw_wandb_open(&s->w, &o), SW_OK);
}

/* What was printed, one request per line; the caller frees. */
static char *printed(session *s)
{
    long n = ftell(s->out);
    char *text = sw_calloc(1, (size_t)n + 1);

    rewind(s->out);
    assert_int_equal(fread(text, 1, (size_t)n, s->out), (size_t)n);
    return text;
}

static void close_dry(session *s)
{
    sw_wandb_close(s->w);
    fclose(s->out);
}

/* The n-th printed request (from 0), parsed. */
static sw_value *request(const char *text, int n)
{
    const char *p = text, *nl;
    sw_value *v = NULL;

    for (int i = 0; i < n; i++)
        p = strchr(p, '\n') + 1;
    nl = strchr(p, '\n');
    assert_non_null(nl);
    assert_int_equal(sw_json_parse(&v, p, (size_t)(nl - p)), SW_OK);
    return v;
}

/* The member at `path`, keys separated by slashes. */
static const sw_value *at(const sw_value *v, const char *path)
{
    char key[64];

    while (v && *path) {
        size_t n = strcspn(path, "/");
        snprintf(key, sizeof(key), "%.*s", (int)n, path);
        v = sw_value_map_get(v, key);
        path += n + (path[n] == '/');
    }
    assert_non_null(v);
    return v;
}

static void test_open_checks_names_and_base(void **state)
{
    sw_wandb_opts o = SW_WANDB_OPTS_INIT;
    sw_wandb *w = NULL;

    (void)state;
    o.dry_run = stdout;
    o.entity = "team";
    assert_int_equal(sw_wandb_open(&w, &o), SW_EINVALID); /* no project */
    o.project = "a/b";
    assert_int_equal(sw_wandb_open(&w, &o), SW_EINVALID);
    assert_non_null(strstr(sw_error_last(), "cannot hold '/'"));
    o.project = "p";
    o.base_url = "ftp://x";
    assert_int_equal(sw_wandb_open(&w, &o), SW_EINVALID);
    assert_null(w);
}

static void test_sweep_config_gets_a_local_controller(void **state)
{
    session s;
    char *text, *name = NULL;
    sw_value *v;

    (void)state;
    open_dry(&s, 0);
    assert_int_equal(sw_wandb_upsert_sweep(s.w, NULL,
                                           "method: grid\ncontroller:\n  type: "
                                           "cloud\n  # note\nparameters:\n  "
                                           "x: {value: 1}",
                                           "mine", NULL, &name, NULL),
                     SW_OK);
    assert_int_equal(
        sw_wandb_upsert_sweep(s.w, "U3dlZXA6MQ==", "{\"method\": \"grid\"}",
                              "mine", "FINISHED", NULL, NULL),
        SW_OK);
    text = printed(&s);
    v = request(text, 0);
    assert_string_equal(at(v, "url")->u.s, "https://api.example.com/graphql");
    assert_string_equal(at(v, "body/operationName")->u.s, "UpsertSweep");
    assert_string_equal(at(v, "body/variables/config")->u.s,
                        "method: grid\nparameters:\n  x: {value: 1}\n"
                        "controller:\n  type: local\n");
    assert_string_equal(at(v, "body/variables/projectName")->u.s, "my proj");
    sw_value_free(v);
    v = request(text, 1);
    assert_string_equal(at(v, "body/variables/config")->u.s,
                        "{\"method\": \"grid\", \"controller\": {\"type\": "
                        "\"local\"}}");
    assert_string_equal(at(v, "body/variables/state")->u.s, "FINISHED");
    assert_string_equal(at(v, "body/variables/id")->u.s, "U3dlZXA6MQ==");
    sw_value_free(v);
    free(text);
    free(name);
    close_dry(&s);
}

static void test_sweep_address(void **state)
{
    sw_wandb_opts o = SW_WANDB_OPTS_INIT;
    sw_wandb *w = NULL;
    char *url;

    (void)state;
    o.dry_run = stdout;
    o.entity = "team";
    o.project = "p";
    o.base_url = "https://api.wandb.ai";
    assert_int_equal(sw_wandb_open(&w, &o), SW_OK);
    url = sw_wandb_sweep_url(w, "abcd1234");
    assert_string_equal(url, "https://wandb.ai/team/p/sweeps/abcd1234");
    free(url);
    sw_wandb_close(w);
    o.base_url = "http://wandb.local:8080";
    assert_int_equal(sw_wandb_open(&w, &o), SW_OK);
    url = sw_wandb_sweep_url(w, "abcd1234");
    assert_string_equal(url, "http://wandb.local:8080/team/p/sweeps/abcd1234");
    free(url);
    sw_wandb_close(w);
}

static void test_run_names_are_stable_and_short(void **state)
{
    char a[9], b[9], c[9];

    (void)state;
    sw_wandb_run_name(a, "3f2a9c01-7");
    sw_wandb_run_name(b, "3f2a9c01-7");
    sw_wandb_run_name(c, "3f2a9c01-8");
    assert_string_equal(a, b);
    assert_string_not_equal(a, c);
    assert_int_equal(strlen(a), 8);
    assert_int_equal(strspn(a, "abcdefghijklmnopqrstuvwxyz0123456789"), 8);
}

static void test_key_from_env_then_netrc(void **state)
{
    char *dir = sw_strdup("/tmp/sweep-wandb-XXXXXX"), *netrc, *key = NULL;
    char *basic;
    FILE *f;

    (void)state;
    assert_non_null(mkdtemp(dir));
    netrc = sw_aprintf("%s/netrc", dir);
    f = fopen(netrc, "w");
    fputs("machine other.host login a password wrong\n"
          "machine localhost:8080\n  login user\n  password k-port\n"
          "machine api.wandb.ai login user password k-cloud\n"
          "default login x password k-default\n",
          f);
    fclose(f);
    setenv("NETRC", netrc, 1);
    setenv("WANDB_API_KEY", "k-env", 1);
    assert_int_equal(sw_wandb__key(&key, "https://api.wandb.ai"), SW_OK);
    assert_string_equal(key, "k-env");
    sw_wandb__wipe(key);
    unsetenv("WANDB_API_KEY");
    assert_int_equal(sw_wandb__key(&key, "https://api.wandb.ai"), SW_OK);
    assert_string_equal(key, "k-cloud");
    sw_wandb__wipe(key);
    assert_int_equal(sw_wandb__key(&key, "http://localhost:8080/"), SW_OK);
    assert_string_equal(key, "k-port");
    sw_wandb__wipe(key);
    assert_int_equal(sw_wandb__key(&key, "http://elsewhere"), SW_OK);
    assert_string_equal(key, "k-default");
    sw_wandb__wipe(key);
    setenv("NETRC", "/nonexistent/netrc", 1);
    assert_int_equal(sw_wandb__key(&key, "https://api.wandb.ai"), SW_ENOTFOUND);
    assert_non_null(strstr(sw_error_last(), "WANDB_API_KEY"));
    basic = sw_wandb__basic("abc");
    assert_string_equal(basic, "Basic YXBpOmFiYw=="); /* api:abc */
    sw_wandb__wipe(basic);
    unsetenv("NETRC");
    sw_test_rm_tree(dir);
    free(netrc);
    free(dir);
}

/* A run of `n` lines: loss 1/(i+1), acc NaN at 1 and Infinity at 2. */
typedef struct {
    sw_wandb_row rows[300];
    sw_wandb_value values[300][2];
    sw_wandb_value summary[2];
    sw_wandb_run run;
} fake_run;

static void make_run(fake_run *r, size_t n)
{
    memset(r, 0, sizeof(*r));
    for (size_t i = 0; i < n; i++) {
        double acc = i == 1 ? NAN : i == 2 ? INFINITY : -0.5;
        r->values[i][0] = (sw_wandb_value){"loss", true, 1.0 / (double)(i + 1)};
        r->values[i][1] = (sw_wandb_value){"acc", i != 1, acc};
        r->rows[i] = (sw_wandb_row){(int64_t)i * 10, 1000.0 + (double)i,
                                    r->values[i], 2};
    }
    r->summary[0] = r->values[n - 1][0];
    r->summary[1] = r->values[n - 1][1];
    r->run = (sw_wandb_run){.id = "s1-1",
                            .sweep = "abcd1234",
                            .params = "{\"lr\": 0.1, \"m\": {\"d\": 3}}",
                            .started_at = 999.5,
                            .ended = true,
                            .exit_code = 0,
                            .rows = r->rows,
                            .n_rows = n,
                            .summary = r->summary,
                            .n_summary = 2};
}

static int count_marks(void *ctx, const sw_wandb_mark *m)
{
    (void)m;
    (*(int *)ctx)++;
    return 0;
}

static void test_history_split_under_the_limit(void **state)
{
    fake_run *r = sw_malloc(sizeof(*r));
    sw_wandb_mark m = {0, -1, false, false, false, 0, 0, false};
    session s;
    char *text;
    sw_value *v;
    int marks = 0, reqs;
    int64_t next = 0;

    (void)state;
    make_run(r, 300);
    open_dry(&s, 8000);
    assert_int_equal(sw_wandb_export_run(s.w, &r->run, &m, count_marks, &marks),
                     SW_OK);
    assert_int_equal(m.history, 300);
    assert_int_equal(m.summary, 300);
    assert_true(m.ended);
    text = printed(&s);
    reqs = (int)m.requests;
    /* UpsertBucket, CreateRunFiles, a PUT, then several file_streams */
    assert_true(reqs > 5);
    /* a mark after the UpsertBucket (it carried the tags and notes), and
     * one per request from the PUT on */
    assert_int_equal(marks, reqs - 2);
    v = request(text, 0);
    /* the parameters, then the `_wandb` key wandb-core's AddInternalData
     * always writes: `t` (no telemetry of ours) and `m` (no metric) */
    assert_string_equal(
        at(v, "body/variables/config")->u.s,
        "{\"lr\": {\"value\": 0.1}, \"m\": {\"value\": {\"d\": "
        "3}}, \"_wandb\": {\"value\": {\"t\": {}, \"m\": []}}}");
    assert_string_equal(at(v, "body/variables/displayName")->u.s, "s1-1");
    sw_value_free(v);
    v = request(text, 1);
    assert_string_equal(at(v, "body/operationName")->u.s, "CreateRunFiles");
    assert_string_equal(at(v, "body/variables/files")->u.list.items[0]->u.s,
                        "wandb-metadata.json");
    sw_value_free(v);
    v = request(text, 2);
    assert_string_equal(at(v, "method")->u.s, "PUT");
    assert_null(sw_value_map_get(at(v, "headers"), "Authorization"));
    sw_value_free(v);
    for (int i = 3; i < reqs; i++) {
        const sw_value *h, *content;
        v = request(text, i);
        assert_string_equal(at(v, "url")->u.s,
                            "https://api.example.com/files/team/my%20proj/"
                            "cx39vzeu/file_stream");
        h = at(v, "body/files/wandb-history.jsonl");
        assert_int_equal(at(h, "offset")->u.i, next);
        content = at(h, "content");
        next += (int64_t)content->u.list.len;
        /* the trainer's step is the line's _step, as the SDK's handler
         * makes it for wandb.log(step=10) (_history_assign_step), and no
         * key of its own: the SDK's line has none */
        if (at(h, "offset")->u.i == 0)
            assert_string_equal(content->u.list.items[1]->u.s,
                                "{\"loss\": 0.5, \"acc\": NaN, "
                                "\"_step\": 10, \"_runtime\": 1.500, "
                                "\"_timestamp\": 1001.000}");
        if (i < reqs - 1) /* the end rides on the last request only */
            assert_null(sw_value_map_get(at(v, "body"), "complete"));
        sw_value_free(v);
    }
    assert_int_equal(next, 300);
    v = request(text, reqs - 1);
    assert_int_equal(at(v, "body/exitcode")->u.i, 0);
    assert_string_equal(at(v, "body/uploaded")->u.list.items[0]->u.s,
                        "wandb-metadata.json");
    assert_string_equal(
        at(v, "body/files/wandb-summary.json/content")->u.list.items[0]->u.s,
        "{\"loss\": 0.0033333333333333335, \"acc\": -0.5, \"_step\": 2990, "
        "\"_runtime\": 299.500, \"_timestamp\": 1299.000}");
    sw_value_free(v);
    free(text);
    close_dry(&s);
    free(r);
}

static void test_resume_and_done(void **state)
{
    fake_run *r = sw_malloc(sizeof(*r));
    sw_wandb_mark m = {250, -1, false, false, false, 0, 0, false};
    session s;
    char *text;
    sw_value *v;

    (void)state;
    make_run(r, 300);
    r->run.ended = false;
    open_dry(&s, 0);
    assert_int_equal(sw_wandb_export_run(s.w, &r->run, &m, NULL, NULL), SW_OK);
    assert_int_equal(m.requests, 4); /* UpsertBucket, CreateRunFiles, PUT */
    assert_int_equal(m.rows_sent, 50);
    assert_true(m.meta);
    text = printed(&s);
    v = request(text, 3);
    assert_int_equal(at(v, "body/files/wandb-history.jsonl/offset")->u.i, 250);
    assert_null(sw_value_map_get(at(v, "body"), "complete")); /* running */
    sw_value_free(v);
    free(text);
    assert_true(sw_wandb_run_done(&r->run, &m));
    assert_int_equal(sw_wandb_export_run(s.w, &r->run, &m, NULL, NULL), SW_OK);
    assert_int_equal(m.requests, 0);
    r->run.ended = true; /* it ended since: only the end is sent */
    r->run.exit_code = 3;
    assert_false(sw_wandb_run_done(&r->run, &m));
    assert_int_equal(sw_wandb_export_run(s.w, &r->run, &m, NULL, NULL), SW_OK);
    assert_int_equal(m.requests, 2);
    assert_int_equal(m.rows_sent, 0);
    text = printed(&s);
    v = request(text, 5);
    assert_null(sw_value_map_get(at(v, "body/files"), "wandb-history.jsonl"));
    assert_int_equal(at(v, "body/exitcode")->u.i, 3);
    sw_value_free(v);
    free(text);
    close_dry(&s);
    free(r);
}

/* Numbers read back exactly, shortest where the trainer printed few
 * digits, never null. */
static void test_numbers_in_a_line(void **state)
{
    static const sw_wandb_value vals[] = {
        {"a", true, 0.1},        {"b", true, -0.5},
        {"c", true, 123456.789}, {"d", true, 1e-5},
        {"e", true, 1.0 / 3},    {"f", true, 1e300},
        {"g", true, -0.0},       {"h", true, 2.5e-20},
        {"i", true, -INFINITY},  {"j", false, 0},
        {"k", true, 42},         {"l", true, 0.6931471824645996}};
    sw_wandb_row row = {-1, 2000.25, vals, sizeof(vals) / sizeof(vals[0])};
    sw_wandb_run run = {.id = "s1-1",
                        .params = "{}",
                        .started_at = 2000,
                        .rows = &row,
                        .n_rows = 1};
    sw_wandb_mark m = {0, -1, false, false, true, 0, 0, false};
    session s;
    char *text;
    sw_value *v;

    (void)state;
    open_dry(&s, 0);
    assert_int_equal(sw_wandb_export_run(s.w, &run, &m, NULL, NULL), SW_OK);
    text = printed(&s);
    v = request(text, 1);
    assert_string_equal(
        at(v, "body/files/wandb-history.jsonl/content")->u.list.items[0]->u.s,
        "{\"a\": 0.1, \"b\": -0.5, \"c\": 123456.789, \"d\": 0.00001, "
        "\"e\": 0.33333333333333331, \"f\": 1e+300, \"g\": -0, \"h\": "
        "2.5e-20, \"i\": -Infinity, \"j\": NaN, \"k\": 42, \"l\": "
        "0.69314718246459961, \"_step\": 0, \"_runtime\": 0.250, "
        "\"_timestamp\": 2000.250}");
    sw_value_free(v);
    free(text);
    close_dry(&s);
}

/* _step as the SDK's handler assigns it (_history_assign_step): the
 * step given to wandb.log(step=s) is the line's _step, and a line without
 * one gets the last _step + 1 (0 for the first). A step that does not go
 * up, which W&B would drop, gets the last + 1 too, keeping its values. */
static void test_step_is_the_trainers_own(void **state)
{
    static const int64_t given[] = {-1, 5, -1, 3, 9};
    static const int64_t want[] = {0, 5, 6, 7, 9};
    sw_wandb_value val = {"loss", true, 1};
    sw_wandb_row rows[5];
    sw_wandb_run run = {.id = "s1-1",
                        .params = "{}",
                        .started_at = 2000,
                        .rows = rows,
                        .n_rows = 5};
    sw_wandb_mark m = {0, -1, false, false, true, 0, 0, false};
    const sw_value *content;
    session s;
    char *text, *line;
    sw_value *v;

    (void)state;
    for (size_t i = 0; i < 5; i++)
        rows[i] = (sw_wandb_row){given[i], 2000.0 + (double)i, &val, 1};
    open_dry(&s, 0);
    assert_int_equal(sw_wandb_export_run(s.w, &run, &m, NULL, NULL), SW_OK);
    text = printed(&s);
    v = request(text, 1);
    content = at(v, "body/files/wandb-history.jsonl/content");
    assert_int_equal(content->u.list.len, 5);
    for (size_t i = 0; i < 5; i++) {
        line = sw_aprintf("\"_step\": %lld,", (long long)want[i]);
        assert_non_null(strstr(content->u.list.items[i]->u.s, line));
        free(line);
    }
    assert_non_null(strstr(
        at(v, "body/files/wandb-summary.json/content")->u.list.items[0]->u.s,
        "\"_step\": 9,"));
    sw_value_free(v);
    free(text);
    close_dry(&s);
}

/* A stopped run: StopRun with the storage id UpsertBucket gave, after
 * the files and before the end, whose exit code is the caller's (255,
 * W&B's for a run it stopped: tests/cli/test_export.c says why); once
 * the end is sent, nothing more. A stopped run still running (not
 * ended) is not stopped in W&B yet. */
static void test_a_stopped_run_is_stopped_before_its_end(void **state)
{
    fake_run *r = sw_malloc(sizeof(*r));
    sw_wandb_mark m = {0, -1, false, false, false, 0, 0, false};
    session s;
    char *text;
    sw_value *v;

    (void)state;
    make_run(r, 3);
    r->run.stopped = true;
    r->run.exit_code = 255;
    r->run.ended = false;
    open_dry(&s, 0);
    assert_int_equal(sw_wandb_export_run(s.w, &r->run, &m, NULL, NULL), SW_OK);
    assert_int_equal(m.requests, 4); /* no StopRun while it runs */
    r->run.ended = true;
    assert_int_equal(sw_wandb_export_run(s.w, &r->run, &m, NULL, NULL), SW_OK);
    assert_int_equal(m.requests, 3); /* UpsertBucket, StopRun, file_stream */
    text = printed(&s);
    v = request(text, 5);
    assert_string_equal(at(v, "body/operationName")->u.s, "StopRun");
    assert_string_equal(at(v, "body/variables/id")->u.s, "dry-run");
    assert_non_null(
        strstr(at(v, "body/query")->u.s, "stopRun(input: {id: $id})"));
    sw_value_free(v);
    v = request(text, 6);
    assert_true(at(v, "body/complete")->u.b);
    assert_int_equal(at(v, "body/exitcode")->u.i, 255);
    sw_value_free(v);
    free(text);
    assert_int_equal(sw_wandb_export_run(s.w, &r->run, &m, NULL, NULL), SW_OK);
    assert_int_equal(m.requests, 0);
    close_dry(&s);
    free(r);
}

static void test_a_line_over_the_limit_is_refused(void **state)
{
    fake_run *r = sw_malloc(sizeof(*r));
    sw_wandb_mark m = {0, -1, false, false, false, 0, 0, false};
    session s;

    (void)state;
    make_run(r, 3);
    open_dry(&s, 300);
    assert_int_equal(sw_wandb_export_run(s.w, &r->run, &m, NULL, NULL),
                     SW_EINVALID);
    assert_non_null(strstr(sw_error_last(), "alone is over the 300-byte"));
    assert_int_equal(m.history, 0);
    close_dry(&s);
    free(r);
}

/* A PBT run's lineage goes in its config as "pbt", with W&B's name of
 * its parent; a parameter called pbt keeps its name and the lineage is
 * left out. */
static void test_pbt_lineage_in_the_config(void **state)
{
    fake_run *r = sw_malloc(sizeof(*r));
    sw_wandb_mark m = {0, -1, false, false, false, 0, 0, false};
    char name[9], *want, *text;
    session s;
    sw_value *v;

    (void)state;
    make_run(r, 1);
    r->run.pbt = true;
    r->run.member = 2;
    r->run.parent = "s1-3";
    r->run.parent_iter = 8;
    open_dry(&s, 0);
    assert_int_equal(sw_wandb_export_run(s.w, &r->run, &m, NULL, NULL), SW_OK);
    text = printed(&s);
    v = request(text, 0);
    sw_wandb_run_name(name, "s1-3");
    want = sw_aprintf("{\"lr\": {\"value\": 0.1}, \"m\": {\"value\": {\"d\": "
                      "3}}, \"pbt\": {\"value\": {\"member\": 2, \"parent\": "
                      "\"s1-3\", \"parent_run\": \"%s\", \"parent_iter\": 8}}, "
                      "\"_wandb\": {\"value\": {\"t\": {}, \"m\": []}}}",
                      name);
    assert_string_equal(at(v, "body/variables/config")->u.s, want);
    free(want);
    sw_value_free(v);
    free(text);
    close_dry(&s);

    m = (sw_wandb_mark){0, -1, false, false, false, 0, 0, false};
    r->run.params = "{\"pbt\": 1}";
    r->run.parent = NULL;
    open_dry(&s, 0);
    assert_int_equal(sw_wandb_export_run(s.w, &r->run, &m, NULL, NULL), SW_OK);
    text = printed(&s);
    v = request(text, 0);
    assert_string_equal(at(v, "body/variables/config")->u.s,
                        "{\"pbt\": {\"value\": 1}, \"_wandb\": {\"value\": "
                        "{\"t\": {}, \"m\": []}}}");
    sw_value_free(v);
    free(text);
    close_dry(&s);
    free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_open_checks_names_and_base),
        cmocka_unit_test(test_sweep_config_gets_a_local_controller),
        cmocka_unit_test(test_sweep_address),
        cmocka_unit_test(test_run_names_are_stable_and_short),
        cmocka_unit_test(test_key_from_env_then_netrc),
        cmocka_unit_test(test_history_split_under_the_limit),
        cmocka_unit_test(test_resume_and_done),
        cmocka_unit_test(test_numbers_in_a_line),
        cmocka_unit_test(test_step_is_the_trainers_own),
        cmocka_unit_test(test_a_stopped_run_is_stopped_before_its_end),
        cmocka_unit_test(test_a_line_over_the_limit_is_refused),
        cmocka_unit_test(test_pbt_lineage_in_the_config),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
