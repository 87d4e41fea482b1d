/*
 * nvml.c - GPU discovery through NVML, loaded with dlopen.
 *
 * No Debian package ships nvml.h, so the few types and functions used are
 * declared here with NVML's ABI (as in nvml.h of CUDA 11.1 and later):
 * handles are opaque pointers, every function returns an int code (0 is
 * success), and the structs below have NVML's exact layouts. Only the
 * functions in `syms` are looked up; the first four are required, any
 * other may be missing (an older or trimmed library) and then only what
 * needs it is left out, with a note. Nothing here writes to a GPU.
 */
#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/gpu.h"

/* NVML's ABI ---------------------------------------------------------- */

typedef int nvml_ret;              /* nvmlReturn_t */
typedef struct nvml_dev *nvml_dev; /* nvmlDevice_t */

enum {
    NVML_OK = 0,
    NVML_ERROR_NOT_SUPPORTED = 3,
    NVML_ERROR_NOT_FOUND = 6,
    NVML_ERROR_INSUFFICIENT_SIZE = 7,
};

#define NVML_BUF 96        /* NVML_DEVICE_{NAME,UUID}_V2_BUFFER_SIZE */
#define NVML_DRIVER_BUF 80 /* NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE */
#define NVML_NO_VALUE 0xFFFFFFFFFFFFFFFFull /* NVML_VALUE_NOT_AVAILABLE */

typedef struct { /* nvmlMemory_t */
    unsigned long long total, free, used;
} nvml_memory;

typedef struct { /* nvmlUtilization_t */
    unsigned int gpu, memory;
} nvml_utilization;

typedef struct { /* nvmlProcessInfo_t, as _v3 fills it */
    unsigned int pid;
    unsigned long long usedGpuMemory;
    unsigned int gpuInstanceId, computeInstanceId;
} nvml_process;

typedef struct { /* nvmlDeviceAttributes_t */
    unsigned int multiprocessorCount, sharedCopyEngineCount, sharedDecoderCount,
        sharedEncoderCount, sharedJpegCount, sharedOfaCount,
        gpuInstanceSliceCount, computeInstanceSliceCount;
    unsigned long long memorySizeMB;
} nvml_attributes;

typedef struct {
    nvml_ret (*init)(void);
    nvml_ret (*shutdown)(void);
    nvml_ret (*count)(unsigned int *);
    nvml_ret (*by_index)(unsigned int, nvml_dev *);
    const char *(*error_string)(nvml_ret);
    nvml_ret (*driver)(char *, unsigned int);
    nvml_ret (*index)(nvml_dev, unsigned int *);
    nvml_ret (*name)(nvml_dev, char *, unsigned int);
    nvml_ret (*uuid)(nvml_dev, char *, unsigned int);
    nvml_ret (*memory)(nvml_dev, nvml_memory *);
    nvml_ret (*utilization)(nvml_dev, nvml_utilization *);
    nvml_ret (*mig_mode)(nvml_dev, unsigned int *, unsigned int *);
    nvml_ret (*max_mig)(nvml_dev, unsigned int *);
    nvml_ret (*mig_by_index)(nvml_dev, unsigned int, nvml_dev *);
    nvml_ret (*mig_parent)(nvml_dev, nvml_dev *);
    nvml_ret (*instance_id)(nvml_dev, unsigned int *);
    nvml_ret (*attributes)(nvml_dev, nvml_attributes *);
    nvml_ret (*processes)(nvml_dev, unsigned int *, nvml_process *);
} nvml_api;

#define API_SLOT(f) offsetof(nvml_api, f)

static const struct {
    const char *name;
    size_t slot;
} syms[] = {
    {"nvmlInit_v2", API_SLOT(init)},
    {"nvmlShutdown", API_SLOT(shutdown)},
    {"nvmlDeviceGetCount_v2", API_SLOT(count)},
    {"nvmlDeviceGetHandleByIndex_v2", API_SLOT(by_index)},
    {"nvmlErrorString", API_SLOT(error_string)},
    {"nvmlSystemGetDriverVersion", API_SLOT(driver)},
    {"nvmlDeviceGetIndex", API_SLOT(index)},
    {"nvmlDeviceGetName", API_SLOT(name)},
    {"nvmlDeviceGetUUID", API_SLOT(uuid)},
    {"nvmlDeviceGetMemoryInfo", API_SLOT(memory)},
    {"nvmlDeviceGetUtilizationRates", API_SLOT(utilization)},
    {"nvmlDeviceGetMigMode", API_SLOT(mig_mode)},
    {"nvmlDeviceGetMaxMigDeviceCount", API_SLOT(max_mig)},
    {"nvmlDeviceGetMigDeviceHandleByIndex", API_SLOT(mig_by_index)},
    {"nvmlDeviceGetDeviceHandleFromMigDeviceHandle", API_SLOT(mig_parent)},
    {"nvmlDeviceGetGpuInstanceId", API_SLOT(instance_id)},
    {"nvmlDeviceGetAttributes_v2", API_SLOT(attributes)},
    {"nvmlDeviceGetComputeRunningProcesses_v3", API_SLOT(processes)},
};

#define N_SYMS (sizeof(syms) / sizeof(*syms))
#define N_REQUIRED 4

typedef struct {
    char *uuid;
    nvml_dev handle;
} known_dev;

struct sw_nvml {
    void *lib;
    char *path;
    nvml_api api;
    char *missing;   /* the optional functions the library lacks, or NULL */
    known_dev *devs; /* every GPU and slice the last inventory read */
    size_t n_devs;
};

/* Loading -------------------------------------------------------------- */

static const char *nvml_error(const sw_nvml *nv, nvml_ret r)
{
    static _Thread_local char buf[32];
    const char *s = nv->api.error_string ? nv->api.error_string(r) : NULL;

    if (s)
        return s;
    snprintf(buf, sizeof(buf), "NVML error %d", r);
    return buf;
}

/* Looks up every function; false when a required one is missing. */
static bool load_syms(sw_nvml *nv)
{
    sw_buf missing = SW_BUF_INIT;
    size_t i;

    for (i = 0; i < N_SYMS; i++) {
        void *sym = dlsym(nv->lib, syms[i].name);

        /* POSIX lets a data pointer from dlsym hold a function */
        memcpy((char *)&nv->api + syms[i].slot, &sym, sizeof(sym));
        if (sym)
            continue;
        if (i < N_REQUIRED) {
            sw_error_set(SW_ENOTFOUND, "%s is not NVML: it lacks %s", nv->path,
                         syms[i].name);
            sw_buf_dispose(&missing);
            return false;
        }
        sw_buf_printf(&missing, "%s%s", missing.len ? ", " : "", syms[i].name);
    }
    nv->missing = missing.len ? sw_buf_detach(&missing) : NULL;
    sw_buf_dispose(&missing);
    return true;
}

int sw_nvml_open(sw_nvml **out, const char *library)
{
    const char *env = getenv("SWEEP_NVML_LIBRARY");
    sw_nvml *nv;
    nvml_ret r;
    int error = SW_OK;

    *out = NULL;
    if (!library)
        library = env ? env : "libnvidia-ml.so.1";
    if (!*library)
        return sw_error_set(SW_ENOTFOUND,
                            "NVML is turned off (SWEEP_NVML_LIBRARY is "
                            "empty)");
    nv = sw_calloc(1, sizeof(*nv));
    nv->path = sw_strdup(library);
    nv->lib = dlopen(library, RTLD_NOW | RTLD_LOCAL);
    if (!nv->lib) {
        error = sw_error_set(SW_ENOTFOUND,
                             "no NVML: %s cannot be loaded (no NVIDIA "
                             "driver here?)",
                             library);
        goto done;
    }
    if (!load_syms(nv)) {
        error = SW_ENOTFOUND;
        goto done;
    }
    if ((r = nv->api.init()) != NVML_OK)
        error =
            sw_error_set(SW_ERROR, "NVML did not start: %s", nvml_error(nv, r));
done:
    if (!error) {
        *out = nv;
        return SW_OK;
    }
    if (nv->lib)
        dlclose(nv->lib);
    free(nv->missing);
    free(nv->path);
    free(nv);
    return error;
}

static void forget_devs(sw_nvml *nv)
{
    size_t i;

    for (i = 0; i < nv->n_devs; i++)
        free(nv->devs[i].uuid);
    free(nv->devs);
    nv->devs = NULL;
    nv->n_devs = 0;
}

void sw_nvml_close(sw_nvml *nv)
{
    if (!nv)
        return;
    nv->api.shutdown();
    dlclose(nv->lib);
    forget_devs(nv);
    free(nv->missing);
    free(nv->path);
    free(nv);
}

/* Reading devices -------------------------------------------------------- */

static void remember(sw_nvml *nv, const char *uuid, nvml_dev h)
{
    if (!uuid)
        return;
    nv->devs = sw_realloc(nv->devs, (nv->n_devs + 1) * sizeof(*nv->devs));
    nv->devs[nv->n_devs].uuid = sw_strdup(uuid);
    nv->devs[nv->n_devs++].handle = h;
}

/* A string property (name, UUID) into buf; false when unreadable. */
static bool read_str(nvml_ret (*fn)(nvml_dev, char *, unsigned int), nvml_dev h,
                     char *buf)
{
    buf[0] = '\0';
    if (!fn || fn(h, buf, NVML_BUF) != NVML_OK)
        return false;
    buf[NVML_BUF - 1] = '\0';
    return buf[0] != '\0';
}

/* Used and total memory, and utilisation (-1 when NVML has none). */
static void read_usage(const sw_nvml *nv, nvml_dev h, uint64_t *total,
                       uint64_t *used, int *util)
{
    nvml_memory m;
    nvml_utilization u;

    if (nv->api.memory && nv->api.memory(h, &m) == NVML_OK) {
        *total = m.total;
        *used = m.used;
    }
    *util = -1;
    if (nv->api.utilization && nv->api.utilization(h, &u) == NVML_OK)
        *util = (int)u.gpu;
}

/* One MIG slice of `gpu` (position `g` in inv), at MIG index `k`. */
static void read_slice(sw_nvml *nv, sw_gpu_inventory *inv, size_t g,
                       nvml_dev mig, unsigned k)
{
    char uuid[NVML_BUF], name[NVML_BUF];
    sw_gpu_device d = {.gpu = g, .mig = (int)k, .instance = -1};
    nvml_attributes a;
    unsigned int id;

    d.uuid = read_str(nv->api.uuid, mig, uuid) ? uuid : NULL;
    d.name = read_str(nv->api.name, mig, name) ? name : NULL;
    read_usage(nv, mig, &d.total_bytes, &d.used_bytes, &d.util);
    if (nv->api.attributes && nv->api.attributes(mig, &a) == NVML_OK) {
        d.slices = a.gpuInstanceSliceCount;
        if (!d.total_bytes)
            d.total_bytes = (uint64_t)a.memorySizeMB << 20;
    }
    if (nv->api.instance_id && nv->api.instance_id(mig, &id) == NVML_OK)
        d.instance = (int)id;
    remember(nv, d.uuid, mig);
    sw_gpus_add_device(inv, &d);
}

/* The slices of a GPU in MIG mode; notes one that has none. */
static void read_slices(sw_nvml *nv, sw_gpu_inventory *inv, size_t g,
                        nvml_dev h)
{
    unsigned int max = 0, k;
    size_t before = inv->n_devices;
    nvml_dev mig;

    if (!nv->api.max_mig || !nv->api.mig_by_index) {
        sw_gpus_add_note(inv,
                         "GPU %u is in MIG mode and this NVML cannot list "
                         "its slices",
                         inv->gpus[g].index);
        return;
    }
    if (nv->api.max_mig(h, &max) != NVML_OK)
        max = 0;
    for (k = 0; k < max; k++)
        if (nv->api.mig_by_index(h, k, &mig) == NVML_OK)
            read_slice(nv, inv, g, mig, k);
    if (inv->n_devices == before)
        sw_gpus_add_note(inv,
                         "GPU %u is in MIG mode with no MIG devices "
                         "(nvidia-smi mig creates them)",
                         inv->gpus[g].index);
}

/* GPU `i` of NVML's count, and its devices. */
static void read_gpu(sw_nvml *nv, sw_gpu_inventory *inv, unsigned i)
{
    char uuid[NVML_BUF], name[NVML_BUF];
    unsigned int index = i, cur = 0, pending = 0;
    sw_gpu_device d = {.mig = -1, .instance = -1};
    sw_gpu gpu = {0};
    nvml_dev h;
    nvml_ret r;
    size_t g;

    if ((r = nv->api.by_index(i, &h)) != NVML_OK) {
        sw_gpus_add_note(inv, "GPU %u cannot be read: %s", i,
                         nvml_error(nv, r));
        return;
    }
    if (nv->api.index && nv->api.index(h, &index) != NVML_OK)
        index = i;
    gpu.index = index;
    gpu.uuid = read_str(nv->api.uuid, h, uuid) ? uuid : NULL;
    gpu.name = read_str(nv->api.name, h, name) ? name : NULL;
    read_usage(nv, h, &gpu.total_bytes, &gpu.used_bytes, &gpu.util);
    if (nv->api.mig_mode && nv->api.mig_mode(h, &cur, &pending) == NVML_OK)
        gpu.mig = cur == 1;
    if (cur != pending)
        sw_gpus_add_note(inv,
                         "GPU %u has a MIG mode change pending (a reset "
                         "applies it); its current mode is used",
                         index);
    g = sw_gpus_add_gpu(inv, &gpu);
    remember(nv, gpu.uuid, h);
    if (gpu.mig) {
        read_slices(nv, inv, g, h);
        return;
    }
    d.gpu = g;
    d.uuid = gpu.uuid;
    d.name = gpu.name;
    d.total_bytes = gpu.total_bytes;
    d.used_bytes = gpu.used_bytes;
    d.util = gpu.util;
    sw_gpus_add_device(inv, &d);
}

void sw_nvml_inventory(sw_nvml *nv, sw_gpu_inventory *inv)
{
    char driver[NVML_DRIVER_BUF];
    unsigned int n = 0, i;
    nvml_ret r;

    inv->source = SW_GPUS_NVML;
    forget_devs(nv);
    if (nv->api.driver && nv->api.driver(driver, sizeof(driver)) == NVML_OK) {
        driver[sizeof(driver) - 1] = '\0';
        inv->driver = sw_strdup(driver);
    }
    if (nv->missing)
        sw_gpus_add_note(inv, "this NVML lacks %s", nv->missing);
    if ((r = nv->api.count(&n)) != NVML_OK) {
        sw_gpus_set_reason(inv, "NVML cannot count the GPUs: %s",
                           nvml_error(nv, r));
        return;
    }
    for (i = 0; i < n; i++)
        read_gpu(nv, inv, i);
    if (inv->n_devices == 0)
        sw_gpus_set_reason(inv, "%s",
                           n ? "no GPU can take a trial" : "NVML sees no GPU");
}

static nvml_dev find_handle(const sw_nvml *nv, const char *uuid)
{
    size_t i;

    for (i = 0; uuid && i < nv->n_devs; i++)
        if (strcmp(nv->devs[i].uuid, uuid) == 0)
            return nv->devs[i].handle;
    return NULL;
}

void sw_nvml_sample(sw_nvml *nv, sw_gpu_inventory *inv)
{
    nvml_dev h;
    size_t i;

    for (i = 0; i < inv->n_gpus; i++)
        if ((h = find_handle(nv, inv->gpus[i].uuid)))
            read_usage(nv, h, &inv->gpus[i].total_bytes,
                       &inv->gpus[i].used_bytes, &inv->gpus[i].util);
    for (i = 0; i < inv->n_devices; i++)
        if ((h = find_handle(nv, inv->devices[i].uuid)))
            read_usage(nv, h, &inv->devices[i].total_bytes,
                       &inv->devices[i].used_bytes, &inv->devices[i].util);
}

int sw_nvml_processes(sw_nvml *nv, const char *uuid, sw_gpu_process **out,
                      size_t *n)
{
    nvml_dev h = find_handle(nv, uuid);
    nvml_process *infos = NULL;
    unsigned int count = 0, i;
    nvml_ret r;
    int tries;

    *out = NULL;
    *n = 0;
    if (!h)
        return sw_error_set(SW_ENOTFOUND, "no GPU or MIG slice %s", uuid);
    if (!nv->api.processes)
        return sw_error_set(SW_ERROR, "this NVML cannot list processes");
    /* the list can grow between the two calls: ask again, a few times */
    for (tries = 0; tries < 4; tries++) {
        r = nv->api.processes(h, &count, infos);
        if (r != NVML_ERROR_INSUFFICIENT_SIZE)
            break;
        count += 8;
        infos = sw_realloc(infos, count * sizeof(*infos));
    }
    if (r != NVML_OK) {
        free(infos);
        return sw_error_set(SW_ERROR,
                            "NVML cannot list the processes on %s: %s", uuid,
                            nvml_error(nv, r));
    }
    *out = sw_calloc(count + 1, sizeof(**out));
    for (i = 0; i < count; i++) {
        (*out)[i].pid = infos[i].pid;
        (*out)[i].used_bytes = infos[i].usedGpuMemory == NVML_NO_VALUE
                                   ? UINT64_MAX
                                   : infos[i].usedGpuMemory;
    }
    *n = count;
    free(infos);
    return SW_OK;
}

void sw_gpu_discover(sw_gpu_inventory *inv)
{
    const char *visible = getenv("CUDA_VISIBLE_DEVICES");
    sw_nvml *nv;

    inv->source = SW_GPUS_NVML;
    if (sw_nvml_open(&nv, NULL) != SW_OK) {
        sw_gpus_set_reason(inv, "%s", sw_error_last());
        return;
    }
    sw_nvml_inventory(nv, inv);
    sw_nvml_close(nv);
    if (visible && inv->n_gpus) {
        sw_gpus_restrict(inv, visible);
        sw_gpus_add_note(inv, "limited by CUDA_VISIBLE_DEVICES=%s", visible);
    }
}
