/*
 * test_gpu.c - GPU discovery against the fake NVML (fake_nvml.c, loaded
 * through SWEEP_NVML_LIBRARY as the real one would be): GPUs with and
 * without MIG, memory in use by others, per-process memory, a library
 * that lacks some functions, one that fails to start, one that is not
 * NVML at all, and CUDA_VISIBLE_DEVICES.
 *
 * Each test writes the fake machine to a temporary file that
 * FAKE_NVML_CONFIG names.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backends/gpu.h"

#define GIB (1ull << 30)

/* Two whole GPUs (one busy with someone else's 10 GiB process) and an
 * H200 in MIG mode with two slices. */
static const char machine[] =
    "driver 580.159.04\n"
    "gpu GPU-a0 150754820096 10737418240 35 0 NVIDIA H200\n"
    "gpu GPU-b1 150754820096 0 0 0 NVIDIA H200\n"
    "gpu GPU-c2 150754820096 0 0 1 NVIDIA H200\n"
    "mig GPU-c2 MIG-d3 76235669504 0 3 1 NVIDIA H200 MIG 3g.71gb\n"
    "mig GPU-c2 MIG-e4 19327352832 1073741824 1 5 NVIDIA H200 MIG 1g.18gb\n"
    "proc GPU-a0 4242 10737418240\n"
    "proc GPU-a0 4243 na\n"
    "proc MIG-e4 777 1073741824\n";

static char config[64];

static void use_machine(const char *text, const char *lib_var)
{
    FILE *f;
    int fd;

    if (config[0])
        unlink(config);
    snprintf(config, sizeof(config), "/tmp/fake_nvml_XXXXXX");
    fd = mkstemp(config);
    assert_true(fd >= 0);
    f = fdopen(fd, "w");
    fputs(text, f);
    fclose(f);
    setenv("FAKE_NVML_CONFIG", config, 1);
    assert_non_null(getenv(lib_var));
    setenv("SWEEP_NVML_LIBRARY", getenv(lib_var), 1);
    unsetenv("CUDA_VISIBLE_DEVICES");
    unsetenv("FAKE_NVML_MORE_USED");
}

static int teardown(void **state)
{
    (void)state;
    if (config[0])
        unlink(config);
    config[0] = '\0';
    return 0;
}

static void test_machine(void **state)
{
    sw_gpu_inventory inv;

    (void)state;
    use_machine(machine, "FAKE_NVML_LIB");
    sw_gpus_init(&inv);
    sw_gpu_discover(&inv);
    assert_null(inv.reason);
    assert_null(inv.notes);
    assert_int_equal(inv.source, SW_GPUS_NVML);
    assert_string_equal(inv.driver, "580.159.04");
    assert_int_equal(inv.n_gpus, 3);
    assert_string_equal(inv.gpus[0].uuid, "GPU-a0");
    assert_string_equal(inv.gpus[0].name, "NVIDIA H200");
    assert_int_equal(inv.gpus[0].total_bytes, 150754820096ull);
    assert_int_equal(inv.gpus[0].used_bytes, 10 * GIB);
    assert_int_equal(inv.gpus[0].util, 35);
    assert_false(inv.gpus[1].mig);
    assert_true(inv.gpus[2].mig);
    assert_int_equal(inv.gpus[2].index, 2);
    /* the GPU in MIG mode is not a device; its two slices are */
    assert_int_equal(inv.n_devices, 4);
    assert_string_equal(inv.devices[1].uuid, "GPU-b1");
    assert_int_equal(inv.devices[1].mig, -1);
    assert_string_equal(inv.devices[2].uuid, "MIG-d3");
    assert_string_equal(inv.devices[2].name, "NVIDIA H200 MIG 3g.71gb");
    assert_int_equal(inv.devices[2].gpu, 2);
    assert_int_equal(inv.devices[2].mig, 0);
    assert_int_equal(inv.devices[2].slices, 3);
    assert_int_equal(inv.devices[2].instance, 1);
    assert_int_equal(inv.devices[2].total_bytes, 76235669504ull);
    assert_int_equal(inv.devices[2].util, -1);
    assert_int_equal(inv.devices[3].slices, 1);
    assert_int_equal(inv.devices[3].used_bytes, GIB);
    sw_gpus_dispose(&inv);
}

static void test_processes_and_sample(void **state)
{
    sw_gpu_inventory inv;
    sw_gpu_process *p;
    sw_nvml *nv;
    size_t n;

    (void)state;
    use_machine(machine, "FAKE_NVML_LIB");
    assert_int_equal(sw_nvml_open(&nv, NULL), SW_OK);
    sw_gpus_init(&inv);
    sw_nvml_inventory(nv, &inv);
    assert_int_equal(sw_nvml_processes(nv, "GPU-a0", &p, &n), SW_OK);
    assert_int_equal(n, 2);
    assert_int_equal(p[0].pid, 4242);
    assert_int_equal(p[0].used_bytes, 10 * GIB);
    assert_int_equal(p[1].used_bytes, UINT64_MAX);
    free(p);
    assert_int_equal(sw_nvml_processes(nv, "MIG-e4", &p, &n), SW_OK);
    assert_true(n == 1 && p[0].pid == 777);
    free(p);
    assert_int_equal(sw_nvml_processes(nv, "GPU-b1", &p, &n), SW_OK);
    assert_int_equal(n, 0);
    free(p);
    assert_int_equal(sw_nvml_processes(nv, "GPU-zz", &p, &n), SW_ENOTFOUND);
    /* memory taken since the inventory was read */
    setenv("FAKE_NVML_MORE_USED", "2147483648", 1);
    sw_nvml_sample(nv, &inv);
    assert_int_equal(inv.gpus[0].used_bytes, 12 * GIB);
    assert_int_equal(inv.devices[1].used_bytes, 2 * GIB);
    assert_int_equal(inv.devices[3].used_bytes, 3 * GIB);
    sw_gpus_dispose(&inv);
    sw_nvml_close(nv);
}

/* A library without _v3 processes, utilisation or attributes: discovery
 * still works, and only those are unknown. */
static void test_missing_symbols(void **state)
{
    sw_gpu_inventory inv;
    sw_gpu_process *p;
    sw_nvml *nv;
    size_t n;

    (void)state;
    use_machine(machine, "FAKE_NVML_OLD_LIB");
    assert_int_equal(sw_nvml_open(&nv, NULL), SW_OK);
    sw_gpus_init(&inv);
    sw_nvml_inventory(nv, &inv);
    assert_int_equal(inv.n_devices, 4);
    assert_non_null(inv.notes);
    assert_non_null(strstr(inv.notes, "nvmlDeviceGetUtilizationRates"));
    assert_non_null(
        strstr(inv.notes, "nvmlDeviceGetComputeRunningProcesses_v3"));
    assert_int_equal(inv.gpus[0].util, -1);
    assert_int_equal(inv.devices[2].slices, 0);
    assert_int_equal(inv.devices[2].total_bytes, 76235669504ull);
    assert_int_equal(sw_nvml_processes(nv, "GPU-a0", &p, &n), SW_ERROR);
    assert_null(p);
    sw_gpus_dispose(&inv);
    sw_nvml_close(nv);
}

static void test_init_fails(void **state)
{
    sw_gpu_inventory inv;
    sw_nvml *nv;

    (void)state;
    use_machine("init 9\n", "FAKE_NVML_LIB");
    assert_int_equal(sw_nvml_open(&nv, NULL), SW_ERROR);
    assert_null(nv);
    assert_non_null(strstr(sw_error_last(), "Driver Not Loaded"));
    sw_gpus_init(&inv);
    sw_gpu_discover(&inv);
    assert_int_equal(inv.n_devices, 0);
    assert_string_equal(inv.reason, "NVML did not start: Driver Not Loaded");
    sw_gpus_dispose(&inv);
}

static void test_no_nvml(void **state)
{
    sw_gpu_inventory inv;
    sw_nvml *nv;

    (void)state;
    assert_int_equal(sw_nvml_open(&nv, "/nonexistent/libnvidia-ml.so.1"),
                     SW_ENOTFOUND);
    assert_non_null(strstr(sw_error_last(), "cannot be loaded"));
    assert_int_equal(sw_nvml_open(&nv, "libm.so.6"), SW_ENOTFOUND);
    assert_string_equal(sw_error_last(),
                        "libm.so.6 is not NVML: it lacks nvmlInit_v2");
    setenv("SWEEP_NVML_LIBRARY", "", 1);
    sw_gpus_init(&inv);
    sw_gpu_discover(&inv);
    assert_int_equal(inv.n_gpus, 0);
    assert_non_null(strstr(inv.reason, "turned off"));
    sw_gpus_dispose(&inv);
}

static void test_visible(void **state)
{
    sw_gpu_inventory inv;

    (void)state;
    use_machine(machine, "FAKE_NVML_LIB");
    setenv("CUDA_VISIBLE_DEVICES", "MIG-e4,1", 1);
    sw_gpus_init(&inv);
    sw_gpu_discover(&inv);
    assert_int_equal(inv.n_gpus, 2);
    assert_int_equal(inv.n_devices, 2);
    assert_string_equal(inv.devices[0].uuid, "GPU-b1");
    assert_string_equal(inv.devices[1].uuid, "MIG-e4");
    assert_int_equal(inv.devices[1].gpu, 1);
    assert_non_null(strstr(inv.notes, "CUDA_VISIBLE_DEVICES=MIG-e4,1"));
    sw_gpus_dispose(&inv);
    setenv("CUDA_VISIBLE_DEVICES", "", 1);
    sw_gpus_init(&inv);
    sw_gpu_discover(&inv);
    assert_int_equal(inv.n_devices, 0);
    assert_non_null(strstr(inv.reason, "hides every GPU"));
    sw_gpus_dispose(&inv);
}

/* A GPU in MIG mode without slices gives no device, and says so; a
 * pending mode change is noted and the current mode used. */
static void test_mig_edge_cases(void **state)
{
    sw_gpu_inventory inv;

    (void)state;
    use_machine("gpu GPU-a0 85899345920 0 0 1 NVIDIA A100\n"
                "gpu GPU-b1 85899345920 0 0 0/1 NVIDIA A100\n",
                "FAKE_NVML_LIB");
    sw_gpus_init(&inv);
    sw_gpu_discover(&inv);
    assert_int_equal(inv.n_gpus, 2);
    assert_int_equal(inv.n_devices, 1);
    assert_string_equal(inv.devices[0].uuid, "GPU-b1");
    assert_non_null(strstr(inv.notes, "GPU 0 is in MIG mode with no MIG"));
    assert_non_null(strstr(inv.notes, "GPU 1 has a MIG mode change"));
    sw_gpus_dispose(&inv);
    use_machine("gpu GPU-a0 85899345920 0 0 1 NVIDIA A100\n", "FAKE_NVML_LIB");
    sw_gpus_init(&inv);
    sw_gpu_discover(&inv);
    assert_int_equal(inv.n_devices, 0);
    assert_string_equal(inv.reason, "no GPU can take a trial");
    sw_gpus_dispose(&inv);
    use_machine("driver 1\n", "FAKE_NVML_LIB");
    sw_gpus_init(&inv);
    sw_gpu_discover(&inv);
    assert_string_equal(inv.reason, "NVML sees no GPU");
    sw_gpus_dispose(&inv);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_machine, teardown),
        cmocka_unit_test_teardown(test_processes_and_sample, teardown),
        cmocka_unit_test_teardown(test_missing_symbols, teardown),
        cmocka_unit_test_teardown(test_init_fails, teardown),
        cmocka_unit_test_teardown(test_no_nvml, teardown),
        cmocka_unit_test_teardown(test_visible, teardown),
        cmocka_unit_test_teardown(test_mig_edge_cases, teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
