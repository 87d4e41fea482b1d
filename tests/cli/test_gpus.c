/*
 * test_gpus.c - `sweep gpus` through the real binary, with the fake NVML
 * (tests/backends/fake_nvml.c) loaded through SWEEP_NVML_LIBRARY as the
 * real one would be: the table and the JSON of a machine with a GPU in
 * MIG mode, CUDA_VISIBLE_DEVICES, a library that fails to start, no
 * library at all, a declared inventory, and a sweep file's trials
 * counted against the devices or refused when none can ever fit.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "testutil.h"
#include "sweeps/json.h"

/* Two whole H200s (someone else's 10 GiB on the first) and one in MIG
 * mode with a 3g.71gb and a 1g.18gb slice. */
static const char machine[] =
    "driver 580.159.04\n"
    "gpu GPU-a0 150754820096 10737418240 35 0 NVIDIA H200\n"
    "gpu GPU-b1 150754820096 0 0 0 NVIDIA H200\n"
    "gpu GPU-c2 150754820096 0 0 1 NVIDIA H200\n"
    "mig GPU-c2 MIG-d3 76235669504 0 3 1 NVIDIA H200 MIG 3g.71gb\n"
    "mig GPU-c2 MIG-e4 19327352832 1073741824 1 5 NVIDIA H200 MIG 1g.18gb\n";

static void use_fake(const sw_h *h, const char *text)
{
    char *path = sw_h_file(h, "nvml.conf", text);

    assert_non_null(getenv("FAKE_NVML_LIB"));
    setenv("SWEEP_NVML_LIBRARY", getenv("FAKE_NVML_LIB"), 1);
    setenv("FAKE_NVML_CONFIG", path, 1);
    unsetenv("CUDA_VISIBLE_DEVICES");
    free(path);
}

static char *err_text(const sw_h *h)
{
    char *path = sw_aprintf("%s/stderr.txt", h->dir);
    char *text = sw_test_slurp(path, NULL);

    free(path);
    return text ? text : sw_strdup("");
}

static void test_table(void **state)
{
    const char *args[] = {"gpus", NULL};
    char *out = NULL;
    sw_h h;

    (void)state;
    sw_h_init(&h);
    use_fake(&h, machine);
    assert_int_equal(sw_h_run(&h, args, &out), 0);
    assert_non_null(
        strstr(out, "NVML, driver 580.159.04: 3 GPUs, 4 devices for trials"));
    assert_non_null(strstr(out, "GPU-a0"));
    assert_non_null(strstr(out, "10 GiB / 140.4 GiB  35%"));
    assert_non_null(strstr(out, "MIG mode"));
    assert_non_null(strstr(out, "0 (3 slices)  NVIDIA H200 MIG 3g.71gb"));
    assert_non_null(strstr(out, "MIG-e4  1 GiB / 18 GiB"));
    free(out);
    sw_h_dispose(&h);
}

static void test_json(void **state)
{
    const char *args[] = {"gpus", "--json", NULL};
    const sw_value *gpus, *g, *devs, *d;
    sw_value *doc = NULL;
    char *out = NULL;
    sw_h h;

    (void)state;
    sw_h_init(&h);
    use_fake(&h, machine);
    assert_int_equal(sw_h_run(&h, args, &out), 0);
    assert_int_equal(sw_json_parse(&doc, out, strlen(out)), SW_OK);
    assert_string_equal(sw_value_map_get(doc, "source")->u.s, "nvml");
    assert_string_equal(sw_value_map_get(doc, "driver")->u.s, "580.159.04");
    assert_int_equal(sw_value_map_get(doc, "devices")->u.i, 4);
    gpus = sw_value_map_get(doc, "gpus");
    assert_int_equal(gpus->u.list.len, 3);
    g = gpus->u.list.items[0];
    assert_int_equal(sw_value_map_get(g, "memory_used")->u.i, 10737418240);
    assert_int_equal(sw_value_map_get(g, "utilization")->u.i, 35);
    g = gpus->u.list.items[2];
    assert_true(sw_value_map_get(g, "mig")->u.b);
    devs = sw_value_map_get(g, "devices");
    assert_int_equal(devs->u.list.len, 2);
    d = devs->u.list.items[0];
    assert_string_equal(sw_value_map_get(d, "uuid")->u.s, "MIG-d3");
    assert_int_equal(sw_value_map_get(d, "slices")->u.i, 3);
    assert_int_equal(sw_value_map_get(d, "gpu_instance")->u.i, 1);
    assert_int_equal(sw_value_map_get(d, "mig_index")->u.i, 0);
    assert_int_equal(sw_value_map_get(d, "utilization")->type, SW_NULL);
    assert_int_equal(sw_value_map_get(d, "runs")->u.list.len, 0);
    sw_value_free(doc);
    free(out);
    sw_h_dispose(&h);
}

static void test_visible_devices(void **state)
{
    const char *args[] = {"gpus", NULL};
    char *out = NULL;
    sw_h h;

    (void)state;
    sw_h_init(&h);
    use_fake(&h, machine);
    setenv("CUDA_VISIBLE_DEVICES", "MIG-e4", 1);
    assert_int_equal(sw_h_run(&h, args, &out), 0);
    assert_non_null(strstr(out, "1 GPU, 1 device for trials"));
    assert_null(strstr(out, "GPU-a0"));
    assert_non_null(strstr(out, "note: limited by CUDA_VISIBLE_DEVICES"));
    unsetenv("CUDA_VISIBLE_DEVICES");
    free(out);
    sw_h_dispose(&h);
}

/* No GPU is not an error: exit 0 with the reason. */
/* Without GPUs, a file that asks for none runs (on CPU, as `sweep run`
 * runs it): `sweep gpus FILE` says so and exits 0; one that asks for a
 * GPU can never run, exit 2. */
static void no_gpus_file(const sw_h *h)
{
    char *cpu = sw_h_file(h, "cpu.yaml",
                          "program: train.py\nmethod: random\nparameters:\n"
                          "  lr: {min: 0.001, max: 0.1}\n");
    char *one = sw_h_file(h, "one.yaml",
                          "program: train.py\nmethod: random\nparameters:\n"
                          "  lr: {min: 0.001, max: 0.1}\n"
                          "resources: {gpus: 1}\n");
    const char *runs[] = {"gpus", cpu, NULL};
    const char *never[] = {"gpus", one, NULL};
    char *out = NULL;

    assert_int_equal(sw_h_run(h, runs, &out), 0);
    assert_non_null(strstr(out, "cpu.yaml: trials run without GPUs here"));
    free(out);
    assert_int_equal(sw_h_run(h, never, &out), 2);
    free(out);
    free(cpu);
    free(one);
}

static void test_no_gpus(void **state)
{
    const char *args[] = {"gpus", NULL};
    const char *json[] = {"gpus", "--json", NULL};
    char *out = NULL;
    sw_h h;

    (void)state;
    sw_h_init(&h);
    use_fake(&h, "init 9\n");
    assert_int_equal(sw_h_run(&h, args, &out), 0);
    assert_string_equal(out,
                        "no GPUs: NVML did not start: Driver Not Loaded\n");
    free(out);
    setenv("SWEEP_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1", 1);
    assert_int_equal(sw_h_run(&h, json, &out), 0);
    assert_non_null(strstr(out, "\"reason\": \"no NVML: "
                                "/nonexistent/libnvidia-ml.so.1 cannot be "
                                "loaded"));
    assert_non_null(strstr(out, "\"gpus\": []"));
    free(out);
    no_gpus_file(&h);
    sw_h_dispose(&h);
}

static void test_declared(void **state)
{
    const char *ok[] = {"gpus", "--gpus", "80GiB:mig=3g.40gb+3g.40gb", NULL};
    const char *bad[] = {"gpus", "--gpus", "2x80", NULL};
    char *out = NULL, *err;
    sw_h h;

    (void)state;
    sw_h_init(&h);
    use_fake(&h, machine); /* a declaration wins over NVML */
    assert_int_equal(sw_h_run(&h, ok, &out), 0);
    assert_non_null(strstr(out, "declared: 1 GPU, 2 devices for trials"));
    assert_non_null(strstr(out, "1 (3 slices)  3g.40gb"));
    free(out);
    assert_int_equal(sw_h_run(&h, bad, &out), 2);
    err = err_text(&h);
    assert_non_null(strstr(err, "sweep gpus: --gpus: '2x80': '80' is "
                                "neither a count of GPUs nor a memory size"));
    free(err);
    free(out);
    sw_h_dispose(&h);
}

/* A sweep file's trials against the devices: quarters with 20 GiB fit
 * 4 + 4 on the whole GPUs (others' 10 GiB counts, the share binds), 3 on
 * the 71 GiB slice and none on the 18 GiB one; 4-GPU trials never fit. */
static void test_sweep_file(void **state)
{
    char *quarter, *four, *out = NULL, *err;
    sw_h h;

    (void)state;
    sw_h_init(&h);
    use_fake(&h, machine);
    quarter = sw_h_file(&h, "quarter.yaml",
                        "program: train.py\nmethod: random\nparameters:\n"
                        "  lr: {min: 0.001, max: 0.1}\n"
                        "resources: {gpus: 0.25, gpu_memory: 20GiB}\n");
    four = sw_h_file(&h, "four.yaml",
                     "program: train.py\nmethod: random\nparameters:\n"
                     "  lr: {min: 0.001, max: 0.1}\nresources: {gpus: 4}\n");
    const char *fits[] = {"gpus", quarter, NULL};
    const char *never[] = {"gpus", four, "--json", NULL};
    assert_int_equal(sw_h_run(&h, fits, &out), 0);
    assert_non_null(strstr(out, "quarter.yaml: 11 trials at once\n"));
    free(out);
    assert_int_equal(sw_h_run(&h, never, &out), 2);
    assert_non_null(strstr(out, "\"fits\": false"));
    err = err_text(&h);
    assert_non_null(strstr(err, "four.yaml: no trial can ever run: trials "
                                "ask for 4 GPUs, and 2 of the 4 devices can "
                                "hold one; MIG slices never join"));
    free(err);
    free(out);
    free(quarter);
    free(four);
    sw_h_dispose(&h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table),
        cmocka_unit_test(test_json),
        cmocka_unit_test(test_visible_devices),
        cmocka_unit_test(test_no_gpus),
        cmocka_unit_test(test_declared),
        cmocka_unit_test(test_sweep_file),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
