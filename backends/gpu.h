/*
 * gpu.h - GPU discovery: the GPUs and MIG slices of this machine, read
 * from NVML, into the plain inventory of sweeps/gpus.h.
 *
 * NVML is loaded at run time (dlopen "libnvidia-ml.so.1", or the file
 * SWEEP_NVML_LIBRARY names; an empty SWEEP_NVML_LIBRARY turns it off), so
 * `sweep` builds and runs on machines without a driver. Only a few
 * functions that every driver since the MIG era has are called; one that
 * is missing turns off only what needs it, with a note in the inventory.
 * Discovery only reads: it never changes a GPU's settings, MIG mode
 * included.
 *
 * Ownership: a sw_nvml handle is the caller's (sw_nvml_close). Not
 * thread-safe: one handle, one thread.
 */
#ifndef SW_GPU_H
#define SW_GPU_H

#include <stdint.h>

#include "sweeps/gpus.h"

typedef struct sw_nvml sw_nvml;

typedef struct {
    unsigned pid;
    uint64_t used_bytes; /* UINT64_MAX: NVML could not say */
} sw_gpu_process;

/* Loads and initialises NVML from `library` (NULL: SWEEP_NVML_LIBRARY,
 * else libnvidia-ml.so.1). SW_ENOTFOUND when there is no NVML to load,
 * SW_ERROR when it fails to start; the message says why, for people. */
int sw_nvml_open(sw_nvml **out, const char *library);
/* Shuts NVML down and unloads it; accepts NULL. */
void sw_nvml_close(sw_nvml *nv);

/* Reads every GPU and, for a GPU in MIG mode, its MIG slices, into `inv`
 * (initialised, empty). Never fails: what cannot be read is left unknown
 * and noted in inv->notes; a GPU that cannot be read at all is skipped. */
void sw_nvml_inventory(sw_nvml *nv, sw_gpu_inventory *inv);

/* Re-reads the used memory and utilisation of every GPU and device of
 * `inv` (one that sw_nvml_inventory filled). */
void sw_nvml_sample(sw_nvml *nv, sw_gpu_inventory *inv);

/* The compute processes on the device with UUID `uuid` (a GPU or a MIG
 * slice) and the memory each uses; *out (the caller frees it) holds *n.
 * SW_ENOTFOUND for an unknown UUID; SW_ERROR when NVML cannot tell
 * (nvmlDeviceGetComputeRunningProcesses_v3 missing, or failing). */
int sw_nvml_processes(sw_nvml *nv, const char *uuid, sw_gpu_process **out,
                      size_t *n);

/* What a sweep can use: NVML's inventory, limited by the
 * CUDA_VISIBLE_DEVICES `sweep` was started with. Never fails: without
 * NVML the inventory is empty and inv->reason says why. */
void sw_gpu_discover(sw_gpu_inventory *inv);

#endif
