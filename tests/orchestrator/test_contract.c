/*
 * test_contract.c - the trial contract's W&B side: the environment names
 * W&B's SDK reads, and the config file WANDB_SWEEP_PARAM_PATH names,
 * written so that YAML 1.1 (PyYAML, as W&B reads it) gives back each
 * parameter's JSON value. tests/clients/test_wandb.py reads such files
 * with PyYAML itself.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "orchestrator/engine/contract.h"
#include "sweeps/command.h"
#include "sweeps/error.h"
#include "testutil.h"

static void expect_config(const char *params, const char *want)
{
    char *got = NULL;

    assert_int_equal(sw_contract_wandb_config(&got, params), SW_OK);
    assert_string_equal(got, want);
    free(got);
}

static void test_config_is_wandb_format(void **state)
{
    (void)state;
    expect_config("{}", "wandb_version: 1\n");
    expect_config("{\"batch_size\": 32, \"lr\": 0.01, \"name\": \"adam\"}",
                  "wandb_version: 1\n"
                  "\n"
                  "batch_size:\n  value: 32\n"
                  "lr:\n  value: 0.01\n"
                  "name:\n  value: \"adam\"\n");
}

static void test_nested_groups_are_maps(void **state)
{
    (void)state;
    expect_config("{\"optimizer\": {\"lr\": 0.1, \"nadam\": {\"beta\": 0.9}},"
                  " \"layers\": [64, 32]}",
                  "wandb_version: 1\n\n"
                  "optimizer:\n  value: {\"lr\": 0.1, \"nadam\": {\"beta\": "
                  "0.9}}\n"
                  "layers:\n  value: [64, 32]\n");
}

/* What YAML 1.1 would read as something else is written so it cannot. */
static void test_values_read_back_as_json(void **state)
{
    (void)state;
    expect_config("{\"a\": 1e-05, \"b\": 1e+300, \"c\": -0.0, \"d\": true,"
                  " \"e\": null, \"h\": 3.0}",
                  "wandb_version: 1\n\n"
                  "a:\n  value: 1.0e-05\n"
                  "b:\n  value: 1.0e+300\n"
                  "c:\n  value: -0.0\n"
                  "d:\n  value: true\n"
                  "e:\n  value: null\n"
                  "h:\n  value: 3.0\n");
    expect_config("{\"s\": \"yes\", \"t\": \"1e3\", \"u\": \"a\\\"b\\\\c\\n\","
                  " \"v\": \"caf\\u00e9 \\u0085\\u007f\"}",
                  "wandb_version: 1\n\n"
                  "s:\n  value: \"yes\"\n"
                  "t:\n  value: \"1e3\"\n"
                  "u:\n  value: \"a\\\"b\\\\c\\x0a\"\n"
                  "v:\n  value: \"caf\xc3\xa9 \\x85\\x7f\"\n");
}

static void test_keys_stay_strings(void **state)
{
    (void)state;
    expect_config("{\"yes\": 1, \"On\": 2, \"1\": 3, \"a b\": 4, \"x.y-z\": 5,"
                  " \"_n\": 6}",
                  "wandb_version: 1\n\n"
                  "\"yes\":\n  value: 1\n"
                  "\"On\":\n  value: 2\n"
                  "\"1\":\n  value: 3\n"
                  "\"a b\":\n  value: 4\n"
                  "x.y-z:\n  value: 5\n"
                  "_n:\n  value: 6\n");
}

static void test_not_an_object_is_refused(void **state)
{
    char *got = (char *)"untouched";

    (void)state;
    assert_int_equal(sw_contract_wandb_config(&got, "[1]"), SW_EINVALID);
    assert_null(got);
    assert_int_equal(sw_contract_wandb_config(&got, "{"), SW_EINVALID);
    assert_null(got);
}

static bool exists(const char *dir, const char *name)
{
    char path[512];

    snprintf(path, sizeof(path), "%s/%s", dir, name);
    return access(path, F_OK) == 0;
}

/* Both files are written; parameters the JSON reader cannot take back
 * (a NaN) still start the run, with no W&B file rather than a wrong one. */
static void test_prepare_writes_both(void **state)
{
    char dir[] = "/tmp/sw-contract-XXXXXX", run[64];

    (void)state;
    assert_non_null(mkdtemp(dir));
    snprintf(run, sizeof(run), "%s/r1", dir);
    assert_int_equal(sw_contract_prepare(run, "{\"lr\": 0.5}", true), SW_OK);
    assert_true(exists(run, "params.json"));
    assert_true(exists(run, "params.yaml"));
    assert_true(exists(run, "checkpoint"));
    snprintf(run, sizeof(run), "%s/r2", dir);
    assert_int_equal(sw_contract_prepare(run, "{\"lr\": NaN}", true), SW_OK);
    assert_true(exists(run, "params.json"));
    assert_false(exists(run, "params.yaml"));
    sw_test_rm_tree(dir);
}

static void put(const char *dir, const char *name, const char *text)
{
    char path[512];
    FILE *f;

    snprintf(path, sizeof(path), "%s/%s", dir, name);
    assert_non_null(f = fopen(path, "w"));
    fputs(text, f);
    fclose(f);
}

static void expect_file(const char *dir, const char *name, const char *want)
{
    char path[512], *got;

    snprintf(path, sizeof(path), "%s/%s", dir, name);
    got = sw_test_slurp(path, NULL);
    assert_non_null(got);
    assert_string_equal(got, want);
    free(got);
}

/* PBT's exploit: the parent's checkpoint folder, files, folders, modes
 * and links, copied in place of whatever the child had (a half-made copy
 * a crash left included); the parent's is left as it was, and a parent
 * without one gives an empty folder. */
static void test_copy_checkpoint(void **state)
{
    char dir[] = "/tmp/sw-contract-XXXXXX", from[64], to[64], p[128];
    char link[64];
    struct stat st;
    ssize_t n;

    (void)state;
    assert_non_null(mkdtemp(dir));
    snprintf(from, sizeof(from), "%s/a", dir);
    snprintf(to, sizeof(to), "%s/b", dir);
    assert_int_equal(sw_contract_prepare(from, "{}", true), SW_OK);
    snprintf(p, sizeof(p), "%s/checkpoint/opt", from);
    assert_int_equal(mkdir(p, 0700), 0);
    put(from, "checkpoint/step", "8\n");
    put(from, "checkpoint/opt/state", "adam");
    snprintf(p, sizeof(p), "%s/checkpoint/step", from);
    assert_int_equal(chmod(p, 0640), 0);
    snprintf(p, sizeof(p), "%s/checkpoint/latest", from);
    assert_int_equal(symlink("step", p), 0);
    /* what the child had, and a copy a crash cut short */
    assert_int_equal(sw_contract_prepare(to, "{}", true), SW_OK);
    put(to, "checkpoint/old", "x");
    snprintf(p, sizeof(p), "%s/checkpoint.copy", to);
    assert_int_equal(mkdir(p, 0700), 0);
    put(to, "checkpoint.copy/half", "x");

    assert_int_equal(sw_contract_copy_checkpoint(from, to), SW_OK);
    expect_file(to, "checkpoint/step", "8\n");
    expect_file(to, "checkpoint/opt/state", "adam");
    assert_false(exists(to, "checkpoint/old"));
    assert_false(exists(to, "checkpoint.copy"));
    snprintf(p, sizeof(p), "%s/checkpoint/step", to);
    assert_int_equal(stat(p, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0640);
    snprintf(p, sizeof(p), "%s/checkpoint/latest", to);
    n = readlink(p, link, sizeof(link) - 1);
    assert_int_equal(n, 4);
    link[n] = '\0';
    assert_string_equal(link, "step");
    /* a copy, not a link: the child's writes leave the parent's alone */
    put(to, "checkpoint/step", "9\n");
    expect_file(from, "checkpoint/step", "8\n");

    /* a parent without a checkpoint folder: an empty one */
    snprintf(p, sizeof(p), "%s/none", dir);
    assert_int_equal(sw_contract_copy_checkpoint(p, to), SW_OK);
    assert_true(exists(to, "checkpoint"));
    assert_false(exists(to, "checkpoint/step"));
    sw_test_rm_tree(dir);
}

static const char *env_get(char **env, const char *name)
{
    size_t n = strlen(name);

    for (; *env; env++)
        if (strncmp(*env, name, n) == 0 && (*env)[n] == '=')
            return *env + n + 1;
    return NULL;
}

static void test_env_names_wandb_reads(void **state)
{
    sw_contract c = {
        .home = "/h", .sweep_id = "ab12", .run_id = "ab12-3", .attempt = 2};
    char **env = sw_contract_env(&c);

    (void)state;
    assert_string_equal(env_get(env, "WANDB_SWEEP_ID"), "ab12");
    assert_string_equal(env_get(env, "WANDB_RUN_ID"), "ab12-3");
    assert_string_equal(env_get(env, "WANDB_SWEEP_PARAM_PATH"),
                        "/h/runs/ab12-3/params.yaml");
    assert_string_equal(env_get(env, "SWEEP_PARAMS"),
                        "/h/runs/ab12-3/params.json");
    sw_command_free(env);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_config_is_wandb_format),
        cmocka_unit_test(test_nested_groups_are_maps),
        cmocka_unit_test(test_values_read_back_as_json),
        cmocka_unit_test(test_keys_stay_strings),
        cmocka_unit_test(test_not_an_object_is_refused),
        cmocka_unit_test(test_env_names_wandb_reads),
        cmocka_unit_test(test_prepare_writes_both),
        cmocka_unit_test(test_copy_checkpoint),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
