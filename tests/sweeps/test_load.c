/*
 * test_load.c - reading sweep files: what a valid file means (W&B's
 * inference, order and defaults), YAML and JSON details, and every
 * problem of an invalid file reported, located, in document order.
 * (The `sweep validate` cases in cases/ test the same through the CLI.)
 */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "sweeps/spec.h"

/* Parses `text` as file `name`; *problems gets every diag, one a line. */
static int parse(sw_spec **spec, const char *name, const char *text,
                 char **problems)
{
    sw_diags d;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    int error;

    sw_diags_init(&d, name);
    error = sw_spec_parse(spec, name, text, strlen(text), &d);
    sw_diags_print(&d, f);
    fclose(f);
    sw_diags_dispose(&d);
    *problems = buf;
    return error;
}

static sw_spec *load_ok(const char *name, const char *text)
{
    sw_spec *spec = NULL;
    char *problems;

    if (parse(&spec, name, text, &problems) != SW_OK)
        fail_msg("expected a valid file, got:\n%s", problems);
    free(problems);
    return spec;
}

static void expect_problems(const char *name, const char *text,
                            const char *want)
{
    sw_spec *spec = NULL;
    char *problems;

    assert_int_equal(parse(&spec, name, text, &problems), SW_EINVALID);
    assert_null(spec);
    assert_string_equal(problems, want);
    free(problems);
}

static char *json_of(const sw_value *v)
{
    sw_buf b = SW_BUF_INIT;

    sw_value_write_json(&b, v, false);
    return sw_buf_detach(&b);
}

static void test_a_full_file(void **state)
{
    sw_spec *s = load_ok(
        "s.yaml",
        "program: train.py\n"
        "method: bayes\n"
        "metric: {name: loss, goal: maximize, target: 0.9}\n"
        "command:\n  - ${env}\n  - python\n  - ${program}\n  - ${args}\n"
        "  - 3\n"
        "run_cap: 50\n"
        "early_terminate: {type: hyperband, min_iter: 3}\n"
        "parallel: 4\nretries: 2\ntimeout: 1.5\nseed: 7\n"
        "resources: {gpus: 0.5, gpu_memory: 10GB}\n"
        "controller: {type: local}\n"
        "parameters:\n"
        "  lr: {min: 0.0001, max: 0.1}\n"
        "  n: {min: 1, max: 8}\n");

    (void)state;
    assert_string_equal(s->program, "train.py");
    assert_int_equal(s->method, SW_METHOD_BAYES);
    assert_string_equal(s->metric.name, "loss");
    assert_int_equal(s->metric.goal, SW_GOAL_MAXIMIZE);
    assert_true(s->metric.has_target);
    assert_int_equal(s->n_command, 5);
    assert_string_equal(s->command[4], "3");
    assert_int_equal(s->run_cap, 50);
    assert_string_equal(s->early_terminate.type, "hyperband");
    assert_int_equal(s->early_terminate.min_iter, 3);
    assert_true(s->early_terminate.eta == 3.0 && s->early_terminate.strict);
    assert_int_equal(s->parallel, 4);
    assert_int_equal(s->retries, 2);
    assert_true(s->timeout == 1.5 && s->has_seed && s->seed == 7);
    assert_true(s->resources.gpus == 0.5);
    assert_int_equal(s->resources.gpu_memory_mb, 10240);
    assert_int_equal(s->n_params, 2);
    assert_int_equal(s->params[0].dist, SW_DIST_UNIFORM);
    assert_int_equal(s->params[1].dist, SW_DIST_INT_UNIFORM);
    assert_int_equal(s->params[1].imin, 1);
    assert_int_equal(s->params[1].imax, 8);
    assert_int_equal(s->params[0].line, 19);
    assert_int_equal(s->params[0].col, 3);
    sw_spec_free(s);
}

/* Each stopping rule reads its own keys, with the documented defaults. */
static void test_stopping_rules(void **state)
{
    const char *head = "method: grid\nmetric: {name: loss}\n"
                       "parameters: {a: {value: 1}}\n";
    const sw_early_terminate *et;
    sw_spec *s;
    char *text;

    (void)state;
    text = sw_aprintf("%searly_terminate: {type: hyperband, max_iter: 27, "
                      "s: 2, strict: false}\n",
                      head);
    s = load_ok("s.yaml", text);
    et = &s->early_terminate;
    assert_int_equal(et->rule, SW_STOP_HYPERBAND);
    assert_true(et->max_iter == 27 && et->s == 2 && et->min_iter == 0);
    assert_true(et->eta == 3.0 && !et->strict && et->grace == 10.0);
    sw_spec_free(s);
    free(text);
    text = sw_aprintf("%searly_terminate: {type: asha, min_iter: 2, "
                      "eta: 4, grace: 0.5}\n",
                      head);
    s = load_ok("s.yaml", text);
    et = &s->early_terminate;
    assert_int_equal(et->rule, SW_STOP_ASHA);
    assert_true(et->min_iter == 2 && et->max_iter == 0 && et->s == -1);
    assert_true(et->eta == 4.0 && et->grace == 0.5);
    sw_spec_free(s);
    free(text);
    text = sw_aprintf("%searly_terminate: {type: median}\n", head);
    s = load_ok("s.yaml", text);
    et = &s->early_terminate;
    assert_int_equal(et->rule, SW_STOP_MEDIAN);
    assert_true(et->warmup == 0 && et->min_runs == 3 && et->grace == 10.0);
    sw_spec_free(s);
    free(text);
    s = load_ok("s.yaml", head);
    assert_int_equal(s->early_terminate.rule, SW_STOP_NONE);
    assert_null(s->early_terminate.type);
    sw_spec_free(s);
}

static void test_wandb_order_and_nesting(void **state)
{
    sw_spec *s = load_ok("s.yaml", "method: grid\n"
                                   "parameters:\n"
                                   "  b: {value: 1}\n"
                                   "  a:\n"
                                   "    parameters:\n"
                                   "      z: {values: [1, 2]}\n"
                                   "      c: {parameters: {y: {value: x}}}\n"
                                   "  a.b: {value: 2}\n"
                                   "  a-b: {value: 3}\n");
    sw_value *vals[5];
    sw_value *nested;
    char *json;
    size_t i;

    (void)state;
    assert_int_equal(s->n_params, 5);
    assert_string_equal(s->params[0].name, "a.c.y");
    assert_int_equal(s->params[0].depth, 3);
    assert_string_equal(s->params[0].path[1], "c");
    assert_string_equal(s->params[1].name, "a.z");
    assert_string_equal(s->params[2].name, "a-b"); /* '-' sorts before '.' */
    assert_string_equal(s->params[3].name, "a.b");
    assert_int_equal(s->params[3].depth, 1);
    assert_string_equal(s->params[4].name, "b");
    for (i = 0; i < 5; i++)
        vals[i] = sw_value_int((int64_t)i);
    nested = sw_spec_nest(s, vals);
    json = json_of(nested);
    assert_string_equal(
        json, "{\"a\": {\"c\": {\"y\": 0}, \"z\": 1}, \"a-b\": 2, \"a.b\": 3, "
              "\"b\": 4}");
    free(json);
    sw_value_free(nested);
    sw_spec_free(s);
}

static void test_inference_and_defaults(void **state)
{
    sw_spec *s = load_ok(
        "s.yaml",
        "method: random\n"
        "parameters:\n"
        "  a: {min: 0, max: 1.0}\n"
        "  b: {min: 0, max: 1, distribution: uniform}\n"
        "  c: {distribution: normal}\n"
        "  d: {distribution: q_normal, q: 0.5}\n"
        "  e: {distribution: q_uniform, min: 0, max: 10, q: 2}\n"
        "  f: {distribution: q_beta}\n"
        "  g: {distribution: log_uniform_values, min: 1.0e-5, max: 1}\n");

    (void)state;
    assert_int_equal(s->params[0].dist, SW_DIST_UNIFORM);
    assert_int_equal(s->params[1].dist, SW_DIST_UNIFORM);
    assert_true(s->params[2].mu == 0 && s->params[2].sigma == 1);
    assert_true(s->params[3].q == 0.5 && !s->params[3].q_int);
    assert_true(s->params[4].q == 2 && s->params[4].q_int);
    assert_true(s->params[5].a == 1 && s->params[5].b == 1 &&
                s->params[5].q == 1 && !s->params[5].q_int);
    assert_true(s->params[6].min == 1e-5 && s->params[6].max == 1);
    sw_spec_free(s);
}

static void test_repeated_values_collapse(void **state)
{
    sw_spec *s;
    sw_spec *t;

    (void)state;
    s = load_ok("s.yaml", "method: random\nparameters:\n"
                          "  a: {values: [1, 1.0, true, 1, '1']}\n");
    assert_int_equal(s->params[0].n_values, 4); /* typed equality */
    sw_spec_free(s);
    /* W&B's grid: 1 == 1.0 != True, the value written last kept */
    s = load_ok("s.yaml", "parameters:\n"
                          "  a: {values: [1, 1.0, true, 1, '1', 1.0]}\n"
                          "method: grid\n");
    assert_int_equal(s->params[0].n_values, 3);
    assert_int_equal(s->params[0].values[0]->type, SW_FLOAT);
    assert_int_equal(s->params[0].values[1]->type, SW_BOOL);
    sw_spec_free(s);
    s = load_ok("s.yaml", "method: grid\nparameters:\n"
                          "  a: {values: [{x: 1, y: 2}, {y: 2, x: 1}, 0.0, "
                          "-0.0, 0, .nan, .NaN, [1, 2], [2, 1], [0.0], "
                          "[-0.0], [1.0], [1]]}\n");
    assert_int_equal(s->params[0].n_values, 9);
    assert_string_equal(s->params[0].values[0]->u.map.keys[0], "y");
    assert_int_equal(s->params[0].values[1]->type, SW_INT);
    sw_spec_free(s);
    t = load_ok("s.yaml", "method: random\nparameters:\n"
                          "  a: {values: [x, y, x], "
                          "probabilities: [0.25, 0.5, 0.25]}\n");
    assert_int_equal(t->params[0].n_values, 2);
    assert_true(t->params[0].probs[0] == 0.5 && t->params[0].probs[1] == 0.5);
    sw_spec_free(t);
}

/* 200,000 values on one line (ASCII, then not): each is located once, so
 * this takes well under a second where it once took minutes. Repeats
 * merge as in a short list: in a grid the one written last is kept, in
 * the first one's place. */
static void test_long_values_lists(void **state)
{
    sw_buf b = SW_BUF_INIT;
    sw_spec *s = NULL;
    sw_diags d;
    int i;

    (void)state;
    sw_buf_puts(&b, "method: grid\nparameters:\n  a: {values: [");
    for (i = 0; i < 100000; i++)
        sw_buf_printf(&b, "%d, ", i);
    for (i = 0; i < 100000; i++)
        sw_buf_printf(&b, "%d.0, ", i);
    sw_buf_puts(&b, "1e5]}\n  b: {values: [");
    for (i = 0; i < 200000; i++)
        sw_buf_printf(&b, "\"\u00e9%d\", ", i % 1000);
    sw_buf_puts(&b, "x]}\n");
    sw_diags_init(&d, "s.yaml");
    assert_int_equal(sw_spec_parse(&s, "s.yaml", sw_buf_cstr(&b), b.len, &d),
                     SW_OK);
    assert_int_equal(s->params[0].n_values, 100001);
    assert_int_equal(s->params[0].values[0]->type, SW_FLOAT);
    assert_true(s->params[0].values[99999]->u.f == 99999.0);
    assert_string_equal(s->params[0].values[100000]->u.s, "1e5");
    assert_int_equal(s->params[1].n_values, 1001);
    assert_string_equal(s->params[1].values[999]->u.s, "\u00e9999");
    assert_int_equal(d.errors, 0);
    assert_int_equal(d.len, 100000 + 199000 + 1); /* repeats, 1e5 */
    sw_spec_free(s);
    sw_diags_dispose(&d);
    sw_buf_dispose(&b);
}

static void test_anchors_and_merge_keys(void **state)
{
    sw_spec *s = load_ok("s.yaml", "method: random\n"
                                   "parameters:\n"
                                   "  a: &a {min: 1, max: 5}\n"
                                   "  b: {<<: *a, max: 9}\n"
                                   "  c: {<<: [{min: 2}, *a], max: 7}\n"
                                   "  d: *a\n");
    char *json = json_of(sw_value_map_get(s->doc, "parameters"));

    (void)state;
    /* PyYAML: merged keys first, own keys win; the first merged wins */
    assert_string_equal(
        json,
        "{\"a\": {\"min\": 1, \"max\": 5}, \"b\": {\"min\": 1, \"max\": 9}, "
        "\"c\": {\"min\": 2, \"max\": 7}, \"d\": {\"min\": 1, \"max\": 5}}");
    free(json);
    sw_spec_free(s);
}

static void test_json(void **state)
{
    sw_spec *s = load_ok(
        "s.json",
        "{\n  \"method\": \"random\",\n"
        "  \"parameters\": {\"x\": {\"values\": [1, 1.0, 1e-3, \"1e-3\"]},\n"
        "    \"y\": {\"min\": 1, \"max\": 3}}\n}\n");
    const sw_param *x = &s->params[0];

    (void)state;
    assert_int_equal(x->n_values, 4);
    assert_int_equal(x->values[0]->type, SW_INT);
    assert_int_equal(x->values[1]->type, SW_FLOAT);
    assert_int_equal(x->values[2]->type, SW_FLOAT);
    assert_int_equal(x->values[3]->type, SW_STR);
    assert_int_equal(x->line, 3);
    assert_int_equal(x->col, 18);
    assert_int_equal(x->values[2]->line, 3);
    assert_int_equal(x->values[2]->col, 43);
    assert_int_equal(s->params[1].dist, SW_DIST_INT_UNIFORM);
    assert_int_equal(s->params[1].line, 4);
    assert_int_equal(s->params[1].col, 5);
    sw_spec_free(s);
    /* text starting with '{' is JSON when it parses, else YAML */
    s = load_ok("-", "{method: grid, parameters: {a: {value: 1e-3}}}");
    assert_int_equal(s->params[0].value->type, SW_STR);
    sw_spec_free(s);
}

static void test_every_problem_in_order(void **state)
{
    (void)state;
    expect_problems(
        "s.yaml",
        "method: gird\n"
        "metric: {name: loss, goal: minimise}\n"
        "parameters:\n"
        "  lr: {min: 0.1, max: 0.01}\n"
        "  n: {values: []}\n"
        "  p: {values: [a, b], probabilities: [0.5]}\n"
        "  q: {distribution: normal, mu: 0, sigma: -1, min: 1}\n"
        "  'bad name': {value: 1}\n"
        "paralel: 2\n",
        "s.yaml:1:1: method: unknown method 'gird' (expected grid, random, "
        "bayes, tpe, sobol or pbt)\n"
        "s.yaml:2:22: metric.goal: unknown goal 'minimise' (expected "
        "minimize or maximize)\n"
        "s.yaml:4:8: parameters.lr.min: min (0.1) must be less than max "
        "(0.01)\n"
        "s.yaml:5:7: parameters.n.values: must not be empty\n"
        "s.yaml:6:23: parameters.p.probabilities: has 1 entries and values "
        "has 2: they must match one to one\n"
        "s.yaml:7:47: parameters.q.min: normal parameters take only mu, "
        "sigma\n"
        "s.yaml:7:36: parameters.q.sigma: must be at least 0\n"
        "s.yaml:8:3: parameters.bad name: a parameter name must match "
        "[A-Za-z_][A-Za-z0-9_.-]* (W&B's rule)\n"
        "s.yaml:9:1: paralel: unknown key (did you mean 'parallel'?)\n");
}

static void test_yaml11_hints(void **state)
{
    sw_spec *s = NULL;
    char *problems;

    (void)state;
    expect_problems(
        "s.yaml", "method: random\nparameters:\n  lr: {min: 1e-5, max: 0.1}\n",
        "s.yaml:3:8: parameters.lr.min: must be a number; 1e-5 is read as "
        "a string (YAML 1.1, as W&B reads it): write 1.0e-5\n");
    assert_int_equal(parse(&s, "s.yaml",
                           "method: grid\nparameters:\n"
                           "  a: {values: [1e-3, '2e-3', yes, 'no']}\n",
                           &problems),
                     SW_OK);
    assert_string_equal(
        problems,
        "s.yaml:3:16: warning: parameters.a.values[0]: read as the string "
        "'1e-3' (YAML 1.1, as W&B reads it); write 1.0e-3 for a number\n"
        "s.yaml:3:30: warning: parameters.a.values[2]: yes is read as the "
        "boolean True (YAML 1.1, as W&B reads it); quote it for a string\n");
    free(problems);
    sw_spec_free(s);
}

static void test_documents_that_are_not_sweeps(void **state)
{
    (void)state;
    expect_problems("s.yaml", "", "s.yaml: the sweep file is empty\n");
    expect_problems("s.yaml", "- a\n- b\n",
                    "s.yaml:1:1: a sweep file must be a mapping (method: "
                    "..., parameters: ...), not a list\n");
    expect_problems("s.yaml", "method: grid\n---\nmethod: grid\n",
                    "s.yaml:2:1: a second document: a sweep file holds "
                    "one\n");
    expect_problems("s.yaml", "method: grid\nparameters: {a: {value: 1}\n",
                    "s.yaml:3:1: invalid YAML: did not find expected ',' "
                    "or '}' (while parsing a flow mapping at line 2)\n");
    expect_problems("s.json", "{\"method\": \"grid\",\n  \"parameters\": }",
                    "s.json:2:17: invalid JSON\n");
    expect_problems("s.yaml", "method: grid\n",
                    "s.yaml:1:1: parameters: missing: a sweep needs "
                    "parameters\n");
}

static void test_hostile_input(void **state)
{
    sw_buf b = SW_BUF_INIT;
    sw_spec *s = NULL;
    char *problems;
    int i;

    (void)state;
    /* a billion laughs: aliases that double at each level */
    sw_buf_puts(&b, "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
    for (i = 1; i < 12; i++)
        sw_buf_printf(&b,
                      "a%d: &a%d [*a%d, *a%d, *a%d, *a%d, *a%d, *a%d, "
                      "*a%d, *a%d, *a%d, *a%d]\n",
                      i, i, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1,
                      i - 1, i - 1, i - 1);
    assert_int_equal(parse(&s, "s.yaml", sw_buf_cstr(&b), &problems),
                     SW_EINVALID);
    assert_non_null(strstr(problems, "aliases expand to too many values"));
    free(problems);
    sw_buf_dispose(&b);
    for (i = 0; i < 200; i++)
        sw_buf_putc(&b, '[');
    assert_int_equal(parse(&s, "s.yaml", sw_buf_cstr(&b), &problems),
                     SW_EINVALID);
    assert_non_null(strstr(problems, "nested deeper than 64 levels"));
    free(problems);
    assert_int_equal(parse(&s, "s.yaml", "a: &x [*x]\n", &problems),
                     SW_EINVALID);
    free(problems);
    /* every item of a merge list must be a mapping, not only the last */
    assert_int_equal(parse(&s, "s.yaml",
                           "method: grid\nparameters: "
                           "{a: {<<: [1, {value: 1}]}}\n",
                           &problems),
                     SW_EINVALID);
    assert_non_null(strstr(problems, "a merge key (<<) takes a mapping"));
    free(problems);
    sw_buf_dispose(&b);
}

static void test_load_reports_io_and_first_error(void **state)
{
    sw_diags d;
    sw_spec *s = (sw_spec *)&d;

    (void)state;
    sw_diags_init(&d, "/nonexistent/s.yaml");
    assert_int_equal(sw_spec_load(&s, "/nonexistent/s.yaml", &d), SW_EIO);
    assert_null(s);
    assert_int_equal(d.errors, 1);
    sw_diags_dispose(&d);
    sw_diags_init(&d, "s.yaml");
    assert_int_equal(sw_spec_parse(&s, "s.yaml", "method: x\n", 10, &d),
                     SW_EINVALID);
    assert_string_equal(sw_error_last(),
                        "s.yaml:1:1: method: unknown method 'x' (expected "
                        "grid, random, bayes, tpe, sobol or pbt)");
    sw_diags_dispose(&d);
}

/* Loads `path`; the one problem it reports must contain `want`. */
static void expect_refused(const char *path, const char *want)
{
    sw_diags d;
    sw_spec *s = NULL;

    sw_diags_init(&d, path);
    assert_int_equal(sw_spec_load(&s, path, &d), SW_EINVALID);
    assert_null(s);
    assert_int_equal(d.errors, 1);
    assert_non_null(strstr(sw_error_last(), path));
    assert_non_null(strstr(sw_error_last(), want));
    sw_diags_dispose(&d);
}

static void test_load_refuses_what_is_not_a_small_file(void **state)
{
    char dir[] = "/tmp/sw-load-XXXXXX";
    char fifo[64], big[64];
    int fd;

    (void)state;
    assert_non_null(mkdtemp(dir));
    snprintf(fifo, sizeof(fifo), "%s/fifo.yaml", dir);
    snprintf(big, sizeof(big), "%s/big.yaml", dir);
    /* /dev/zero never ends; a FIFO with no writer would block open() */
    expect_refused("/dev/zero", "not a regular file");
    assert_int_equal(mkfifo(fifo, 0600), 0);
    expect_refused(fifo, "not a regular file");
    expect_refused(dir, "not a regular file");
    fd = open(big, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    assert_true(fd >= 0);
    assert_int_equal(ftruncate(fd, SW_SPEC_MAX_BYTES + 1), 0); /* sparse */
    close(fd);
    expect_refused(big, "larger than 16 MiB");
    unlink(big);
    unlink(fifo);
    rmdir(dir);
}

static void test_duplicate_keys_warn(void **state)
{
    sw_spec *s = NULL;
    char *problems;

    (void)state;
    assert_int_equal(parse(&s, "s.yaml",
                           "method: grid\nmethod: random\n"
                           "parameters: {a: {value: 1}}\n",
                           &problems),
                     SW_OK);
    assert_int_equal(s->method, SW_METHOD_RANDOM);
    assert_string_equal(problems, "s.yaml:2:1: warning: duplicate key "
                                  "'method': the last one wins, as in W&B\n");
    free(problems);
    sw_spec_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_full_file),
        cmocka_unit_test(test_stopping_rules),
        cmocka_unit_test(test_wandb_order_and_nesting),
        cmocka_unit_test(test_inference_and_defaults),
        cmocka_unit_test(test_repeated_values_collapse),
        cmocka_unit_test(test_long_values_lists),
        cmocka_unit_test(test_anchors_and_merge_keys),
        cmocka_unit_test(test_json),
        cmocka_unit_test(test_every_problem_in_order),
        cmocka_unit_test(test_yaml11_hints),
        cmocka_unit_test(test_documents_that_are_not_sweeps),
        cmocka_unit_test(test_hostile_input),
        cmocka_unit_test(test_load_reports_io_and_first_error),
        cmocka_unit_test(test_load_refuses_what_is_not_a_small_file),
        cmocka_unit_test(test_duplicate_keys_warn),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
