/*
 * gpus.h - the GPU inventory: which GPUs and MIG slices a sweep can give
 * its trials, as plain data.
 *
 * An inventory is filled either by discovery (backends/gpu.h, through
 * NVML) or from a declaration (`--gpus 2x80GiB`, or `gpus:` in the sweep
 * file) parsed here, and read by the packing policy and `sweep gpus`.
 * It holds every GPU and, apart, the *devices* trials are given: a whole
 * GPU, or each MIG slice of a GPU in MIG mode (such a GPU is never handed
 * out whole). The inventory owns its strings; sw_gpus_dispose frees them.
 */
#ifndef SW_GPUS_H
#define SW_GPUS_H

#include <stdbool.h>
#include <stdint.h>

#include "sweeps/buf.h"

typedef struct {
    unsigned index;       /* NVML's index (PCI bus order), or declared */
    char *uuid;           /* "GPU-..."; NULL when declared */
    char *name;           /* "NVIDIA H200"; NULL when unknown */
    uint64_t total_bytes; /* 0: unknown */
    uint64_t used_bytes;  /* in use now, by any process */
    int util;             /* percent busy at the last read; -1: unknown */
    bool mig;             /* in MIG mode: its slices are the devices */
} sw_gpu;

typedef struct {
    size_t gpu;           /* its GPU, in inventory->gpus */
    int mig;              /* -1: the whole GPU; else its MIG device index */
    char *uuid;           /* "GPU-..." or "MIG-..."; NULL when declared */
    char *name;           /* "NVIDIA H200", "3g.40gb"; NULL when unknown */
    unsigned slices;      /* GPU-instance slices of a MIG slice; 0 if whole */
    int instance;         /* a MIG slice's GPU-instance id; -1: unknown */
    uint64_t total_bytes; /* 0: unknown */
    uint64_t used_bytes;
    int util; /* -1: unknown (NVML reports none for MIG slices) */
} sw_gpu_device;

typedef enum { SW_GPUS_NVML, SW_GPUS_DECLARED } sw_gpus_source;

typedef struct {
    sw_gpus_source source;
    sw_gpu *gpus;
    size_t n_gpus;
    sw_gpu_device *devices; /* what trials are given, in GPU order */
    size_t n_devices;
    char *driver; /* the driver's version; NULL when declared */
    char *reason; /* NULL, or why there are no devices (one line) */
    char *notes;  /* NULL, or what discovery could not read ("; "-joined) */
} sw_gpu_inventory;

#define SW_GPUS_MAX 4096     /* GPUs in one declaration (a simulated cluster) */
#define SW_GPUS_MAX_SLICES 7 /* GPU-instance slices of one GPU */
#define SW_GPUS_MAX_TRIAL 256 /* GPUs one trial may hold */

void sw_gpus_init(sw_gpu_inventory *inv);
void sw_gpus_dispose(sw_gpu_inventory *inv);

/* Appends a copy of `g` (its strings copied); returns its position. */
size_t sw_gpus_add_gpu(sw_gpu_inventory *inv, const sw_gpu *g);
/* Appends a copy of `d`, a device of inv->gpus[d->gpu]. */
void sw_gpus_add_device(sw_gpu_inventory *inv, const sw_gpu_device *d);
/* Sets inv->reason (printf-style), replacing any earlier one. */
void sw_gpus_set_reason(sw_gpu_inventory *inv, const char *fmt, ...)
    SW_PRINTF(2, 3);
/* Appends a note (printf-style) to inv->notes. */
void sw_gpus_add_note(sw_gpu_inventory *inv, const char *fmt, ...)
    SW_PRINTF(2, 3);

/* Parses a memory size: "40GiB", "40GB" (GiB, as nvidia-smi counts),
 * "512MiB", "1.5t"; a bare number is MiB when `bare_mib`, else refused.
 * On success *mib holds the size in MiB (>= 0, finite). */
bool sw_gpus_parse_size(const char *s, bool bare_mib, double *mib);

/* Fills `inv` (initialised, empty) from a declaration (docs/gpus.md):
 *   none | N | [Nx]SIZE[:mig=PROFILE+...] | N:mig=PROFILE+... , ...
 * e.g. "2x80GiB,80GiB:mig=3g.40gb+2x1g.10gb". SW_EINVALID with the
 * message set (naming the part at fault) when it is not one. */
int sw_gpus_declare(sw_gpu_inventory *inv, const char *text);

/* Keeps what a CUDA_VISIBLE_DEVICES value `visible` lets CUDA see, as
 * CUDA reads it: indices or UUID prefixes (GPU-... whole GPUs with their
 * slices, MIG-... one slice), comma-separated, up to the first entry that
 * names nothing; an empty value hides everything. NULL changes nothing.
 * Sets the reason when nothing is left. */
void sw_gpus_restrict(sw_gpu_inventory *inv, const char *visible);

/* How device `i` of `inv` is named where it is recorded (runs.gpus,
 * gpu_samples): its UUID, else (declared) its GPU's index, or
 * "<gpu index>/<mig index>" for a declared MIG slice. The caller frees
 * it. */
char *sw_gpus_device_key(const sw_gpu_inventory *inv, size_t i);

/* Appends a size for people: "80 GiB", "39.5 GiB", "512 MiB". */
void sw_gpus_put_size(sw_buf *b, uint64_t bytes);

#endif
