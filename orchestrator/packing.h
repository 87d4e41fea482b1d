/*
 * packing.h - the GPU packing policy: which devices a trial gets, as pure
 * functions over plain data (no NVML, no clock, no processes), so every
 * rule is tested and benchmarked in virtual time.
 *
 * A device is a whole GPU or a MIG slice (sweeps/gpus.h). Each has a
 * capacity of SW_PACK_UNIT and its memory. A request is a share of one
 * device (a fraction, or sized by memory) or a number of whole devices,
 * with memory per device. The rules (docs/gpus.md):
 *
 *   - capacity and memory are never oversubscribed; memory used by other
 *     processes (others_bytes, as NVML last read it) counts;
 *   - shares of one device go where they fit best (the tightest fit), so
 *     whole devices stay free for whole requests;
 *   - a MIG slice is a device of its own and takes any request that fits
 *     it, but never joins a multi-device grant (CUDA gives a process one
 *     MIG device);
 *   - a waiting request that later requests have passed `patience` times
 *     gets devices held for it: they take nothing new until it fits, so
 *     a large request is never starved by a stream of small ones.
 *
 * Everything here is caller memory; nothing allocates but the message of
 * sw_pack_ever_fits.
 */
#ifndef SW_PACKING_H
#define SW_PACKING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sweeps/buf.h"
#include "sweeps/gpus.h"
#include "sweeps/spec.h"

#define SW_PACK_UNIT 1000000u     /* a whole device's capacity */
#define SW_PACK_MAX_GRANT 256     /* devices in one grant */
#define SW_PACK_MAX_PARALLEL 4096 /* what sw_pack_capacity counts up to */
#define SW_PACK_PATIENCE 4        /* the default patience */

typedef struct {
    uint64_t total_bytes;  /* 0: unknown (then memory is taken on trust) */
    uint64_t others_bytes; /* used by processes that are not this sweep's */
    uint64_t held_bytes;   /* held by this sweep's trials on it */
    uint32_t held_share;   /* capacity they hold, in SW_PACK_UNIT */
    uint32_t trials;       /* how many of them */
    bool mig;              /* a MIG slice */
} sw_pack_device;

typedef struct {
    uint32_t count; /* whole devices (>= 1); 0: a share of one device */
    uint32_t share; /* count 0: the share (1..SW_PACK_UNIT); 0: sized by
                       memory, bytes / the device's total */
    uint64_t bytes; /* memory per device; 0: no requirement */
} sw_pack_request;

typedef struct {
    size_t n;                            /* devices granted */
    uint16_t devices[SW_PACK_MAX_GRANT]; /* positions in the device array */
    uint32_t share;                      /* held on each */
    uint64_t bytes;                      /* held on each */
} sw_pack_grant;

typedef enum {
    SW_PACK_PLACED,  /* the grant is filled */
    SW_PACK_NOT_NOW, /* it fits the machine, not what is free now */
    SW_PACK_NEVER,   /* no state of the machine fits it */
} sw_pack_verdict;

/* What a trial with `r` asks for, `bytes` being its memory when `r` says
 * gpu_memory: auto and it has been learned (0 before). False when it
 * asks for no GPU (`gpus: 0`). Without gpus and memory: one device. */
bool sw_pack_request_make(sw_pack_request *out, const sw_resources *r,
                          uint64_t bytes);

/* `gpu_memory: auto`: the memory to pack by, once a trial was seen to
 * peak at `peak` bytes (NVML's per-process accounting) and `learned`
 * was the figure so far (0: none): the larger of the two, the peak with
 * a margin of 10% (at least 512 MiB), rounded up to 256 MiB. A trial
 * seen using more than `learned` raises it; nothing lowers it. */
uint64_t sw_pack_auto_bytes(uint64_t learned, uint64_t peak);

/* One device per inventory device: its memory, the memory in use as the
 * others' (the caller subtracts its own trials'), nothing held. */
void sw_pack_devices_from(sw_pack_device *out, const sw_gpu_inventory *inv);

/* Appends the CUDA_VISIBLE_DEVICES value that gives a trial grant `g`
 * on `inv`'s devices: each device's UUID (MIG-... for a slice), or its
 * GPU's index when it has none (declared), comma-separated. */
void sw_pack_cuda_devices(sw_buf *out, const sw_gpu_inventory *inv,
                          const sw_pack_grant *g);

/* Chooses devices for `r` now, the best fit among the devices not
 * `blocked` (NULL: none is); fills *grant when it returns PLACED.
 * Changes nothing. */
sw_pack_verdict sw_pack_fit(const sw_pack_device *devs, size_t n,
                            const bool *blocked, const sw_pack_request *r,
                            sw_pack_grant *grant);
/* Holds, or gives back, what a grant holds on its devices. */
void sw_pack_take(sw_pack_device *devs, const sw_pack_grant *g);
void sw_pack_release(sw_pack_device *devs, const sw_pack_grant *g);

/* Whether `r` fits these devices when this sweep holds nothing and no
 * other process uses memory. When not, and `why` is not NULL, appends
 * one line that says why ("trials ask for 3 whole GPUs ..."). */
bool sw_pack_ever_fits(const sw_pack_device *devs, size_t n,
                       const sw_pack_request *r, sw_buf *why);

/* How many trials asking for `r` the devices hold at once, as they are
 * now (others' memory counts); at most SW_PACK_MAX_PARALLEL. The default
 * `parallel` of a sweep on GPUs. */
size_t sw_pack_capacity(const sw_pack_device *devs, size_t n,
                        const sw_pack_request *r);

typedef struct {
    sw_pack_request req;
    uint32_t passed;         /* in/out: times it was passed while waiting */
    sw_pack_verdict verdict; /* out */
    sw_pack_grant grant;     /* out, when PLACED */
} sw_pack_pending;

/* Places what it can of the waiting requests `q`, oldest first, taking
 * their grants on `devs`; a request is passed when one after it is
 * placed on a device it could use. The oldest request passed `patience`
 * times or more that does not fit gets devices held for it (the ones it
 * would fit soonest): nothing after it is placed on them. Returns how
 * many were placed. */
size_t sw_pack_schedule(sw_pack_device *devs, size_t n, sw_pack_pending *q,
                        size_t nq, uint32_t patience);

#endif
