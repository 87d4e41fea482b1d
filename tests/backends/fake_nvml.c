/*
 * fake_nvml.c - a stand-in for libnvidia-ml.so.1 with NVML's ABI, so
 * discovery is tested on machines without a GPU (SWEEP_NVML_LIBRARY
 * points at it).
 *
 * nvmlInit_v2 reads the machine from the file FAKE_NVML_CONFIG names, one
 * line each (# starts a comment):
 *
 *   init CODE                          nvmlInit_v2 fails with CODE
 *   driver VERSION
 *   gpu UUID TOTAL USED UTIL MIG NAME  MIG: 0, 1, or CURRENT/PENDING
 *   mig PARENT UUID TOTAL USED SLICES GI NAME
 *   proc UUID PID BYTES                BYTES: na when NVML cannot say
 *
 * FAKE_NVML_PROCS names a folder of files of more `proc` lines, read
 * again at every call that reports memory: processes that come and go,
 * as trials of a sweep do (a trial writes a file named by its pid and
 * removes it when it ends). Their memory is in the device's used memory
 * too, as on a real GPU.
 *
 * Built twice: in full, and with FAKE_NVML_OLD, without the functions an
 * older driver lacks (per-process _v3, utilisation, attributes_v2), to
 * test that a missing symbol only turns off what needs it. It implements
 * no setter: a GPU's settings cannot be changed through it.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEVS 64
#define MAX_PROCS 64
#define NO_VALUE 0xFFFFFFFFFFFFFFFFull

typedef int nvmlReturn_t;

typedef struct fake_dev {
    char uuid[96], name[96];
    unsigned long long total, used;
    unsigned util, mig_cur, mig_pending, slices, gi, index;
    struct fake_dev *parent; /* a MIG slice's GPU; NULL for a GPU */
} fake_dev;

typedef struct fake_dev *nvmlDevice_t;

typedef struct {
    unsigned long long total, free, used;
} nvmlMemory_t;

typedef struct {
    unsigned int gpu, memory;
} nvmlUtilization_t;

typedef struct {
    unsigned int pid;
    unsigned long long usedGpuMemory;
    unsigned int gpuInstanceId, computeInstanceId;
} nvmlProcessInfo_t;

typedef struct {
    unsigned int multiprocessorCount, sharedCopyEngineCount, sharedDecoderCount,
        sharedEncoderCount, sharedJpegCount, sharedOfaCount,
        gpuInstanceSliceCount, computeInstanceSliceCount;
    unsigned long long memorySizeMB;
} nvmlDeviceAttributes_t;

static struct {
    fake_dev devs[MAX_DEVS];
    size_t n_devs;
    struct {
        fake_dev *dev;
        unsigned pid;
        unsigned long long bytes;
    } procs[MAX_PROCS];
    size_t n_procs;
    char driver[80];
    int init_code, inits;
    size_t n_fixed; /* procs of the config; the rest: FAKE_NVML_PROCS */
} fake;

nvmlReturn_t nvmlInit_v2(void);
nvmlReturn_t nvmlShutdown(void);
const char *nvmlErrorString(nvmlReturn_t r);
nvmlReturn_t nvmlSystemGetDriverVersion(char *v, unsigned int len);
nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *n);
nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int i, nvmlDevice_t *d);
nvmlReturn_t nvmlDeviceGetIndex(nvmlDevice_t d, unsigned int *i);
nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t d, char *s, unsigned int len);
nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t d, char *s, unsigned int len);
nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t d, nvmlMemory_t *m);
nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t d, unsigned int *cur,
                                  unsigned int *pending);
nvmlReturn_t nvmlDeviceGetMaxMigDeviceCount(nvmlDevice_t d, unsigned int *n);
nvmlReturn_t nvmlDeviceGetMigDeviceHandleByIndex(nvmlDevice_t d, unsigned int i,
                                                 nvmlDevice_t *mig);
nvmlReturn_t nvmlDeviceGetDeviceHandleFromMigDeviceHandle(nvmlDevice_t mig,
                                                          nvmlDevice_t *d);
nvmlReturn_t nvmlDeviceGetGpuInstanceId(nvmlDevice_t d, unsigned int *id);
#ifndef FAKE_NVML_OLD
nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t d,
                                           nvmlUtilization_t *u);
nvmlReturn_t nvmlDeviceGetAttributes_v2(nvmlDevice_t d,
                                        nvmlDeviceAttributes_t *a);
nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t d,
                                                     unsigned int *n,
                                                     nvmlProcessInfo_t *p);
#endif

static fake_dev *find(const char *uuid)
{
    size_t i;

    for (i = 0; i < fake.n_devs; i++)
        if (strcmp(fake.devs[i].uuid, uuid) == 0)
            return &fake.devs[i];
    return NULL;
}

/* The rest of a line after `skip` fields, as a name. */
static void rest(char *dst, const char *line, int skip)
{
    const char *p = line;

    while (skip-- > 0) {
        p += strspn(p, " \t");
        p += strcspn(p, " \t");
    }
    p += strspn(p, " \t");
    snprintf(dst, 96, "%.*s", (int)strcspn(p, "\n"), p);
}

static void parse_line(const char *line)
{
    fake_dev *d = &fake.devs[fake.n_devs];
    char a[96], b[96], mig[16], bytes[32];
    unsigned pid;

    if (sscanf(line, "init %d", &fake.init_code) == 1 ||
        sscanf(line, "driver %79s", fake.driver) == 1)
        return;
    if (fake.n_devs < MAX_DEVS &&
        sscanf(line, "gpu %95s %llu %llu %u %15s", d->uuid, &d->total, &d->used,
               &d->util, mig) == 5) {
        if (sscanf(mig, "%u/%u", &d->mig_cur, &d->mig_pending) != 2)
            d->mig_pending = d->mig_cur = (unsigned)strtoul(mig, NULL, 10);
        rest(d->name, line, 6);
        fake.n_devs++;
    } else if (fake.n_devs < MAX_DEVS &&
               sscanf(line, "mig %95s %95s %llu %llu %u %u", a, b, &d->total,
                      &d->used, &d->slices, &d->gi) == 6 &&
               (d->parent = find(a))) {
        snprintf(d->uuid, sizeof(d->uuid), "%s", b);
        rest(d->name, line, 7);
        fake.n_devs++;
    } else if (fake.n_procs < MAX_PROCS &&
               sscanf(line, "proc %95s %u %31s", a, &pid, bytes) == 3 &&
               find(a)) {
        fake.procs[fake.n_procs].dev = find(a);
        fake.procs[fake.n_procs].pid = pid;
        fake.procs[fake.n_procs++].bytes =
            strcmp(bytes, "na") == 0 ? NO_VALUE : strtoull(bytes, NULL, 10);
    }
}

nvmlReturn_t nvmlInit_v2(void)
{
    const char *path = getenv("FAKE_NVML_CONFIG");
    char line[512];
    FILE *f;

    memset(&fake, 0, sizeof(fake));
    if (!path || !(f = fopen(path, "r")))
        return 9; /* NVML_ERROR_DRIVER_NOT_LOADED */
    while (fgets(line, sizeof(line), f))
        if (line[0] != '#')
            parse_line(line);
    fclose(f);
    fake.n_fixed = fake.n_procs;
    if (fake.init_code)
        return fake.init_code;
    fake.inits++;
    return 0;
}

nvmlReturn_t nvmlShutdown(void)
{
    if (fake.inits == 0)
        return 1; /* NVML_ERROR_UNINITIALIZED */
    fake.inits--;
    return 0;
}

const char *nvmlErrorString(nvmlReturn_t r)
{
    switch (r) {
    case 0:
        return "Success";
    case 9:
        return "Driver Not Loaded";
    case 12:
        return "NVML Shared Library Not Found";
    default:
        return "Unknown Error";
    }
}

nvmlReturn_t nvmlSystemGetDriverVersion(char *v, unsigned int len)
{
    if (strlen(fake.driver) + 1 > len)
        return 7; /* NVML_ERROR_INSUFFICIENT_SIZE */
    memcpy(v, fake.driver, strlen(fake.driver) + 1);
    return 0;
}

static size_t n_gpus(void)
{
    size_t i, n = 0;

    for (i = 0; i < fake.n_devs; i++)
        n += fake.devs[i].parent == NULL;
    return n;
}

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *n)
{
    if (!fake.inits)
        return 1;
    *n = (unsigned)n_gpus();
    return 0;
}

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int i, nvmlDevice_t *d)
{
    size_t k, seen = 0;

    for (k = 0; fake.inits && k < fake.n_devs; k++) {
        if (fake.devs[k].parent)
            continue;
        if (seen++ == i) {
            fake.devs[k].index = i;
            *d = &fake.devs[k];
            return 0;
        }
    }
    return 2; /* NVML_ERROR_INVALID_ARGUMENT */
}

nvmlReturn_t nvmlDeviceGetIndex(nvmlDevice_t d, unsigned int *i)
{
    if (d->parent)
        return 2;
    *i = d->index;
    return 0;
}

static nvmlReturn_t copy_str(char *dst, const char *src, unsigned int len)
{
    if (strlen(src) + 1 > len)
        return 7;
    memcpy(dst, src, strlen(src) + 1);
    return 0;
}

nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t d, char *s, unsigned int len)
{
    return copy_str(s, d->name, len);
}

nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t d, char *s, unsigned int len)
{
    return copy_str(s, d->uuid, len);
}

/* FAKE_NVML_MORE_USED (bytes), read at every call, adds to every
 * device's used memory: memory taken while a sweep runs. */
static void read_procs_file(const char *path)
{
    char line[512];
    FILE *f = fopen(path, "r");

    while (f && fgets(line, sizeof(line), f))
        if (strncmp(line, "proc ", 5) == 0)
            parse_line(line);
    if (f)
        fclose(f);
}

/* The `proc` lines of the files in FAKE_NVML_PROCS, as they are now. */
static void read_live_procs(void)
{
    const char *dir = getenv("FAKE_NVML_PROCS");
    char path[4096];
    struct dirent *ent;
    DIR *d;

    fake.n_procs = fake.n_fixed;
    if (!dir || !(d = opendir(dir)))
        return;
    while ((ent = readdir(d)))
        if (ent->d_name[0] != '.') {
            snprintf(path, sizeof(path), "%s/%s", dir, ent->d_name);
            read_procs_file(path);
        }
    closedir(d);
}

static unsigned long long live_bytes(const fake_dev *d)
{
    unsigned long long sum = 0;
    size_t i;

    read_live_procs();
    for (i = fake.n_fixed; i < fake.n_procs; i++)
        if (fake.procs[i].dev == d && fake.procs[i].bytes != NO_VALUE)
            sum += fake.procs[i].bytes;
    return sum;
}

nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t d, nvmlMemory_t *m)
{
    const char *more = getenv("FAKE_NVML_MORE_USED");

    m->total = d->total;
    m->used = d->used + (more ? strtoull(more, NULL, 10) : 0) + live_bytes(d);
    m->free = d->total - d->used;
    return 0;
}

nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t d, unsigned int *cur,
                                  unsigned int *pending)
{
    if (d->parent)
        return 3; /* NVML_ERROR_NOT_SUPPORTED */
    *cur = d->mig_cur;
    *pending = d->mig_pending;
    return 0;
}

nvmlReturn_t nvmlDeviceGetMaxMigDeviceCount(nvmlDevice_t d, unsigned int *n)
{
    *n = d->mig_cur ? 7 : 0;
    return 0;
}

nvmlReturn_t nvmlDeviceGetMigDeviceHandleByIndex(nvmlDevice_t d, unsigned int i,
                                                 nvmlDevice_t *mig)
{
    size_t k, seen = 0;

    if (!d->mig_cur)
        return 3;
    for (k = 0; k < fake.n_devs; k++) {
        if (fake.devs[k].parent == d && seen++ == i) {
            *mig = &fake.devs[k];
            return 0;
        }
    }
    return 6; /* NVML_ERROR_NOT_FOUND */
}

nvmlReturn_t nvmlDeviceGetDeviceHandleFromMigDeviceHandle(nvmlDevice_t mig,
                                                          nvmlDevice_t *d)
{
    if (!mig->parent)
        return 2;
    *d = mig->parent;
    return 0;
}

nvmlReturn_t nvmlDeviceGetGpuInstanceId(nvmlDevice_t d, unsigned int *id)
{
    if (!d->parent)
        return 3;
    *id = d->gi;
    return 0;
}

#ifndef FAKE_NVML_OLD
nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t d, nvmlUtilization_t *u)
{
    if (d->parent || d->mig_cur)
        return 3; /* as NVML: none for MIG */
    u->gpu = d->util;
    u->memory = d->util / 2;
    return 0;
}

nvmlReturn_t nvmlDeviceGetAttributes_v2(nvmlDevice_t d,
                                        nvmlDeviceAttributes_t *a)
{
    memset(a, 0, sizeof(*a));
    a->multiprocessorCount = d->parent ? 14 * d->slices : 132;
    a->gpuInstanceSliceCount = d->slices;
    a->computeInstanceSliceCount = d->slices;
    a->memorySizeMB = d->total >> 20;
    return 0;
}

nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t d,
                                                     unsigned int *n,
                                                     nvmlProcessInfo_t *p)
{
    unsigned int count = 0, k = 0;
    size_t i;

    read_live_procs();
    for (i = 0; i < fake.n_procs; i++)
        count += fake.procs[i].dev == d;
    if (*n < count || (!p && count)) {
        *n = count;
        return 7;
    }
    for (i = 0; i < fake.n_procs; i++) {
        if (fake.procs[i].dev != d)
            continue;
        p[k].pid = fake.procs[i].pid;
        p[k].usedGpuMemory = fake.procs[i].bytes;
        p[k].gpuInstanceId = d->parent ? d->gi : 0xFFFFFFFFu;
        p[k++].computeInstanceId = d->parent ? 0 : 0xFFFFFFFFu;
    }
    *n = count;
    return 0;
}
#endif
