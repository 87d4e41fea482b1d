/*
 * packing.c - the GPU packing policy (packing.h): best fit of shares and
 * whole devices, memory checked against what others use, and devices
 * held for a request that waited too long.
 *
 * Capacity is counted in integer millionths of a device, so shares such
 * as 1/3 add up without rounding drift: three of 333333 fit, four do not.
 * A device's free memory is its total less what others use and what this
 * sweep holds, never below zero. Ties always go to the lower position, so
 * the same inputs give the same grants.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "orchestrator/packing.h"

bool sw_pack_request_make(sw_pack_request *out, const sw_resources *r,
                          uint64_t bytes)
{
    memset(out, 0, sizeof(*out));
    out->bytes = r->gpu_memory_auto ? bytes : (uint64_t)r->gpu_memory_mb << 20;
    if (r->has_gpus && r->gpus <= 0)
        return false;
    if (!r->has_gpus) {
        out->count = out->bytes ? 0 : 1; /* auto, not learned yet: whole */
    } else if (r->gpus >= 1) {
        out->count = (uint32_t)r->gpus;
    } else {
        double s = floor(r->gpus * SW_PACK_UNIT + 0.5);

        out->share = s < 1 ? 1 : (uint32_t)s;
    }
    return true;
}

uint64_t sw_pack_auto_bytes(uint64_t learned, uint64_t peak)
{
    const uint64_t mib = 1 << 20, step = 256 * mib;
    uint64_t margin = peak / 10 > 512 * mib ? peak / 10 : 512 * mib;
    uint64_t want;

    if (peak > UINT64_MAX - margin - step)
        return UINT64_MAX;
    want = (peak + margin + step - 1) / step * step;
    return want > learned ? want : learned;
}

void sw_pack_devices_from(sw_pack_device *out, const sw_gpu_inventory *inv)
{
    size_t i;

    for (i = 0; i < inv->n_devices; i++) {
        memset(&out[i], 0, sizeof(out[i]));
        out[i].total_bytes = inv->devices[i].total_bytes;
        out[i].others_bytes = inv->devices[i].used_bytes;
        out[i].mig = inv->devices[i].mig >= 0;
    }
}

void sw_pack_cuda_devices(sw_buf *out, const sw_gpu_inventory *inv,
                          const sw_pack_grant *g)
{
    size_t i;

    for (i = 0; i < g->n; i++) {
        const sw_gpu_device *d = &inv->devices[g->devices[i]];

        if (i)
            sw_buf_putc(out, ',');
        if (d->uuid)
            sw_buf_puts(out, d->uuid);
        else
            sw_buf_printf(out, "%u", inv->gpus[d->gpu].index);
    }
}

/* The share `r` holds on `d`: its fraction, or its memory over the
 * device's (a whole device when that is unknown). */
static uint32_t share_on(const sw_pack_device *d, const sw_pack_request *r)
{
    uint64_t s;

    if (r->count)
        return SW_PACK_UNIT;
    if (r->share)
        return r->share > SW_PACK_UNIT ? SW_PACK_UNIT : r->share;
    if (!d->total_bytes || !r->bytes)
        return SW_PACK_UNIT;
    if (r->bytes >= d->total_bytes)
        return SW_PACK_UNIT;
    s = (r->bytes * (uint64_t)SW_PACK_UNIT + d->total_bytes - 1) /
        d->total_bytes;
    return s < 1 ? 1 : (uint32_t)s;
}

static uint64_t free_bytes(const sw_pack_device *d)
{
    uint64_t used = d->others_bytes + d->held_bytes;

    return used >= d->total_bytes ? 0 : d->total_bytes - used;
}

/* Whether `d` could ever take `r` (an empty machine). */
static bool eligible(const sw_pack_device *d, const sw_pack_request *r)
{
    if (r->count >= 2 && d->mig)
        return false;
    return !r->bytes || !d->total_bytes || d->total_bytes >= r->bytes;
}

/* Whether `d` takes `r` now. */
static bool fits_now(const sw_pack_device *d, const sw_pack_request *r)
{
    if (!eligible(d, r))
        return false;
    if (SW_PACK_UNIT - d->held_share < share_on(d, r))
        return false;
    return !r->bytes || !d->total_bytes || free_bytes(d) >= r->bytes;
}

/* How well `d` fits `r`, lower is better: the capacity left over first
 * (tight shares keep whole devices free), then the memory left over for
 * a request that states memory (best fit) or, for one that does not, the
 * most free memory (a trial of unknown size goes where most is free). A
 * device of unknown memory comes after every known one. */
static void score(const sw_pack_device *d, const sw_pack_request *r,
                  uint64_t key[2])
{
    uint64_t mem = d->total_bytes ? free_bytes(d) : UINT64_MAX;

    key[0] = SW_PACK_UNIT - d->held_share - share_on(d, r);
    if (!d->total_bytes)
        key[1] = UINT64_MAX;
    else if (r->bytes)
        key[1] = mem - r->bytes;
    else
        key[1] = UINT64_MAX - 1 - mem;
}

static bool better(const uint64_t a[2], const uint64_t b[2])
{
    return a[0] != b[0] ? a[0] < b[0] : a[1] < b[1];
}

/* The `want` best devices that take `r` now, in grant order. */
static size_t best_devices(const sw_pack_device *devs, size_t n,
                           const bool *blocked, const sw_pack_request *r,
                           size_t want, uint16_t *out)
{
    uint64_t keys[SW_PACK_MAX_GRANT][2], k[2];
    size_t got = 0, i, j;

    for (i = 0; i < n && i <= UINT16_MAX; i++) {
        if ((blocked && blocked[i]) || !fits_now(&devs[i], r))
            continue;
        score(&devs[i], r, k);
        if (got == want && !better(k, keys[got - 1]))
            continue;
        j = got < want ? got++ : got - 1; /* insert, dropping the worst */
        while (j > 0 && better(k, keys[j - 1])) {
            memcpy(keys[j], keys[j - 1], sizeof(k));
            out[j] = out[j - 1];
            j--;
        }
        memcpy(keys[j], k, sizeof(k));
        out[j] = (uint16_t)i;
    }
    return got;
}

sw_pack_verdict sw_pack_fit(const sw_pack_device *devs, size_t n,
                            const bool *blocked, const sw_pack_request *r,
                            sw_pack_grant *grant)
{
    size_t want = r->count ? r->count : 1;

    if (!sw_pack_ever_fits(devs, n, r, NULL))
        return SW_PACK_NEVER;
    if (best_devices(devs, n, blocked, r, want, grant->devices) < want)
        return SW_PACK_NOT_NOW;
    grant->n = want;
    grant->bytes = r->bytes;
    /* a memory-sized share depends on the device; one device only */
    grant->share = share_on(&devs[grant->devices[0]], r);
    return SW_PACK_PLACED;
}

void sw_pack_take(sw_pack_device *devs, const sw_pack_grant *g)
{
    size_t i;

    for (i = 0; i < g->n; i++) {
        devs[g->devices[i]].held_share += g->share;
        devs[g->devices[i]].held_bytes += g->bytes;
        devs[g->devices[i]].trials++;
    }
}

void sw_pack_release(sw_pack_device *devs, const sw_pack_grant *g)
{
    size_t i;

    for (i = 0; i < g->n; i++) {
        sw_pack_device *d = &devs[g->devices[i]];

        d->held_share -= g->share < d->held_share ? g->share : d->held_share;
        d->held_bytes -= g->bytes < d->held_bytes ? g->bytes : d->held_bytes;
        d->trials -= d->trials > 0;
    }
}

/* The why of sw_pack_ever_fits, for `good` eligible devices of `n`. */
static void explain(sw_buf *why, const sw_pack_device *devs, size_t n,
                    const sw_pack_request *r, size_t good)
{
    uint64_t largest = 0;
    size_t i, slices = 0;

    for (i = 0; i < n; i++) {
        slices += devs[i].mig;
        if (devs[i].total_bytes > largest)
            largest = devs[i].total_bytes;
    }
    if (n == 0) {
        sw_buf_puts(why, "trials ask for a GPU and there is none");
        return;
    }
    sw_buf_printf(why, "trials ask for %u GPU%s", r->count ? r->count : 1,
                  r->count > 1 ? "s" : "");
    if (r->bytes) {
        sw_buf_puts(why, " with ");
        sw_gpus_put_size(why, r->bytes);
        sw_buf_puts(why, r->count > 1 ? " each" : "");
    }
    sw_buf_printf(why, ", and %zu of the %zu devices can hold one", good, n);
    if (r->bytes && good == 0) {
        sw_buf_puts(why, " (the largest has ");
        sw_gpus_put_size(why, largest);
        sw_buf_puts(why, ")");
    }
    if (r->count >= 2 && slices)
        sw_buf_puts(why, "; MIG slices never join a multi-GPU trial, as "
                         "CUDA gives a process one of them");
    if (r->count > SW_PACK_MAX_GRANT)
        sw_buf_printf(why, "; a trial takes %d GPUs at most",
                      SW_PACK_MAX_GRANT);
}

bool sw_pack_ever_fits(const sw_pack_device *devs, size_t n,
                       const sw_pack_request *r, sw_buf *why)
{
    size_t i, good = 0, want = r->count ? r->count : 1;

    for (i = 0; i < n; i++)
        good += eligible(&devs[i], r);
    if (good >= want && want <= SW_PACK_MAX_GRANT)
        return true;
    if (why)
        explain(why, devs, n, r, good);
    return false;
}

size_t sw_pack_capacity(const sw_pack_device *devs, size_t n,
                        const sw_pack_request *r)
{
    sw_pack_device *copy;
    sw_pack_grant g;
    size_t placed = 0;

    if (n == 0)
        return 0;
    copy = sw_malloc(n * sizeof(*copy));
    memcpy(copy, devs, n * sizeof(*copy));
    while (placed < SW_PACK_MAX_PARALLEL &&
           sw_pack_fit(copy, n, NULL, r, &g) == SW_PACK_PLACED) {
        sw_pack_take(copy, &g);
        placed++;
    }
    free(copy);
    return placed;
}

/* Scheduling a queue ------------------------------------------------------ */

/* Holds for `r` the devices it would fit soonest: eligible ones with the
 * least held by this sweep (what held devices hold only shrinks, as they
 * take nothing new, so the request fits once its trials end). */
static void hold_for(const sw_pack_device *devs, size_t n, bool *blocked,
                     const sw_pack_request *r)
{
    size_t want = r->count ? r->count : 1, got = 0, i, j;
    uint16_t pick[SW_PACK_MAX_GRANT];

    for (i = 0; i < n && i <= UINT16_MAX; i++) {
        if (blocked[i] || !eligible(&devs[i], r))
            continue;
        if (got == want && devs[i].held_share >= devs[pick[got - 1]].held_share)
            continue;
        j = got < want ? got++ : got - 1;
        while (j > 0 && devs[i].held_share < devs[pick[j - 1]].held_share) {
            pick[j] = pick[j - 1];
            j--;
        }
        pick[j] = (uint16_t)i;
    }
    for (i = 0; i < got; i++)
        blocked[pick[i]] = true;
}

/* Whether grant `g` took a device that `r` could use. */
static bool passes(const sw_pack_device *devs, const sw_pack_grant *g,
                   const sw_pack_request *r)
{
    size_t i;

    for (i = 0; i < g->n; i++)
        if (eligible(&devs[g->devices[i]], r))
            return true;
    return false;
}

size_t sw_pack_schedule(sw_pack_device *devs, size_t n, sw_pack_pending *q,
                        size_t nq, uint32_t patience)
{
    bool *blocked = sw_calloc(n + 1, sizeof(bool)), held = false;
    size_t placed = 0, i, j;

    for (i = 0; i < nq; i++) {
        q[i].verdict = sw_pack_fit(devs, n, blocked, &q[i].req, &q[i].grant);
        if (q[i].verdict == SW_PACK_PLACED) {
            sw_pack_take(devs, &q[i].grant);
            placed++;
            for (j = 0; j < i; j++)
                if (q[j].verdict == SW_PACK_NOT_NOW &&
                    passes(devs, &q[i].grant, &q[j].req))
                    q[j].passed++;
        } else if (q[i].verdict == SW_PACK_NOT_NOW && !held &&
                   q[i].passed >= patience) {
            hold_for(devs, n, blocked, &q[i].req);
            held = true;
        }
    }
    free(blocked);
    return placed;
}
