/*
 * bench_packing.c - how well the packing policy fills a machine: makespan
 * and GPU occupancy of a seeded heterogeneous workload, in virtual time,
 * against the lower bound, side by side with one trial per device (what
 * one agent per GPU gives).
 *
 * The machine: 8 H200s (140.4 GiB), two in MIG mode (3g.71gb + 2g.35gb
 * + 2x 1g.18gb, and 7x 1g.18gb): 17 devices. The workload, all queued at
 * the start as a sweep's trials are: 40% quarters of a GPU (1-4 GiB),
 * 20% halves (2-8 GiB), 15% memory-only requests (1-4 GiB), 15% whole
 * GPUs and 10% 2-GPU trials, durations log-normal (median 10 minutes).
 * Small trials, as the issue measured them (8 PyTorch trials peaked at
 * 8.6 GB together). The lower bound is the largest of: the work over
 * the capacity (each trial's share times its duration, a memory-only
 * share counted on the largest device, over the 17 devices), the same
 * within each class of devices by memory (the trials only those can take
 * over their number), the memory-time over the machine's memory, and
 * the longest trial. Virtual time treats a MIG slice as a device like
 * any other, as the policy does.
 *
 *   build/release/tests/bench/bench_packing [TRIALS [SEED]]
 *
 * Not a test: it asserts nothing.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "orchestrator/packing.h"
#include "search/rng.h"

#define GIB (1ull << 30)
#define MAX_TRIALS 100000
#define N_DEV 17

typedef struct {
    sw_pack_request req;
    double dur;
} trial;

typedef struct {
    sw_pack_grant g;
    double ends;
} running;

/* H200s as NVML reports them (140.4 GiB), and their MIG profiles. */
static void make_machine(sw_pack_device *d)
{
    static const unsigned mig6[] = {71, 35, 18, 18};
    size_t i, n = 0;

    memset(d, 0, N_DEV * sizeof(*d));
    for (i = 0; i < 6; i++)
        d[n++].total_bytes = 150754820096ull;
    for (i = 0; i < 4; i++) {
        d[n].mig = true;
        d[n++].total_bytes = mig6[i] * GIB;
    }
    for (i = 0; i < 7; i++) {
        d[n].mig = true;
        d[n++].total_bytes = 18 * GIB;
    }
}

static uint64_t gib_between(sw_rng *r, unsigned lo, unsigned hi)
{
    return (lo + sw_rng_below(r, hi - lo + 1)) * GIB;
}

static void make_workload(trial *t, size_t n, uint64_t seed)
{
    sw_rng r;
    size_t i;

    sw_rng_seed(&r, seed, 0);
    for (i = 0; i < n; i++) {
        double u = sw_rng_uniform(&r);
        sw_pack_request q = {0, 0, 0};

        if (u < 0.40) {
            q.share = SW_PACK_UNIT / 4;
            q.bytes = gib_between(&r, 1, 4);
        } else if (u < 0.60) {
            q.share = SW_PACK_UNIT / 2;
            q.bytes = gib_between(&r, 2, 8);
        } else if (u < 0.75) {
            q.bytes = gib_between(&r, 1, 4);
        } else if (u < 0.90) {
            q.count = 1;
        } else {
            q.count = 2;
        }
        t[i].req = q;
        /* log-normal, median 10 minutes */
        t[i].dur = 600 * exp(0.6 * sw_rng_normal(&r));
    }
}

/* A trial's work in device-seconds, at its smallest possible share. */
static double work(const trial *t)
{
    double share = t->req.count   ? t->req.count
                   : t->req.share ? (double)t->req.share / SW_PACK_UNIT
                                  : (double)t->req.bytes / 150754820096.0;

    return share * t->dur;
}

/* Whether device `d` could ever take `t`. */
static bool can_take(const sw_pack_device *d, const trial *t)
{
    return (t->req.count < 2 || !d->mig) && d->total_bytes >= t->req.bytes;
}

/* Work over capacity, within the devices of at least `mem` bytes: the
 * trials that only those can take must run on them. */
static double class_bound(const trial *t, size_t n, uint64_t mem)
{
    sw_pack_device d[N_DEV];
    double w = 0, cap = 0;
    size_t i, k;
    bool only;

    make_machine(d);
    for (i = 0; i < N_DEV; i++)
        cap += d[i].total_bytes >= mem;
    for (i = 0; i < n; i++) {
        for (k = 0, only = true; k < N_DEV && only; k++)
            if (d[k].total_bytes < mem && can_take(&d[k], &t[i]))
                only = false;
        if (only)
            w += work(&t[i]);
    }
    return w / cap;
}

/* The simple bound (work over all 17 devices) in *simple, and the
 * largest valid one: each class of devices by memory, the memory-time
 * over the machine's memory, the longest trial. */
static double lower_bound(const trial *t, size_t n, double *simple)
{
    static const uint64_t classes[] = {18, 35, 71, 140};
    double mem = 0, longest = 0, cap_mem = 0, lb;
    sw_pack_device d[N_DEV];
    size_t i;

    make_machine(d);
    for (i = 0; i < N_DEV; i++)
        cap_mem += (double)d[i].total_bytes;
    for (i = 0; i < n; i++) {
        mem += (double)t[i].req.bytes * (t[i].req.count ? t[i].req.count : 1) *
               t[i].dur;
        longest = t[i].dur > longest ? t[i].dur : longest;
    }
    *simple = class_bound(t, n, 0);
    lb = fmax(mem / cap_mem, longest);
    for (i = 0; i < 4; i++)
        lb = fmax(lb, class_bound(t, n, classes[i] * GIB));
    return lb;
}

/* Runs the trials on the machine; returns the makespan, and the mean
 * share of capacity held by trials over it in *held. */
static double replay(const trial *t, size_t n, bool one_per_device,
                     double *held)
{
    static sw_pack_pending q[MAX_TRIALS];
    static running run[MAX_TRIALS];
    static size_t qtrial[MAX_TRIALS];
    sw_pack_device d[N_DEV];
    size_t nq = n, nrun = 0, i, k;
    double now = 0, next, held_time = 0, held_now = 0;

    make_machine(d);
    for (i = 0; i < n; i++) {
        memset(&q[i], 0, sizeof(q[i]));
        q[i].req = t[i].req;
        if (one_per_device && !q[i].req.count)
            q[i].req = (sw_pack_request){1, 0, t[i].req.bytes};
        qtrial[i] = i;
    }
    for (;;) {
        sw_pack_schedule(d, N_DEV, q, nq, SW_PACK_PATIENCE);
        for (i = k = 0; i < nq; i++) {
            if (q[i].verdict == SW_PACK_PLACED) {
                run[nrun].g = q[i].grant;
                run[nrun++].ends = now + t[qtrial[i]].dur;
            } else if (q[i].verdict == SW_PACK_NOT_NOW) {
                qtrial[k] = qtrial[i];
                q[k++] = q[i];
            }
        }
        nq = k;
        for (i = 0, held_now = 0; i < N_DEV; i++)
            held_now += (double)d[i].held_share / SW_PACK_UNIT;
        for (i = 0, next = HUGE_VAL; i < nrun; i++)
            next = fmin(next, run[i].ends);
        if (next == HUGE_VAL)
            break;
        held_time += held_now * (next - now);
        now = next;
        for (i = k = 0; i < nrun; i++) {
            if (run[i].ends <= now)
                sw_pack_release(d, &run[i].g);
            else
                run[k++] = run[i];
        }
        nrun = k;
    }
    *held = held_time / (N_DEV * now);
    return now;
}

int main(int argc, char **argv)
{
    size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 5000;
    uint64_t seed = argc > 2 ? strtoull(argv[2], NULL, 10) : 1;
    static trial t[MAX_TRIALS];
    double lb, simple, span_p, span_o, held_p, held_o, w = 0;
    size_t i;

    if (n < 1 || n > MAX_TRIALS) {
        fprintf(stderr, "bench_packing: TRIALS goes from 1 to %d\n",
                MAX_TRIALS);
        return 2;
    }
    make_workload(t, n, seed);
    for (i = 0; i < n; i++)
        w += work(&t[i]);
    lb = lower_bound(t, n, &simple);
    span_p = replay(t, n, false, &held_p);
    span_o = replay(t, n, true, &held_o);
    printf("%zu trials (seed %llu) on 8 GPUs, 2 in MIG mode: %d devices\n", n,
           (unsigned long long)seed, N_DEV);
    printf("lower bound %.0f s (work over all devices: %.0f s)\n\n", lb,
           simple);
    printf("%-22s %12s %10s %12s %10s\n", "", "makespan s", "vs bound",
           "occupancy", "held");
    printf("%-22s %12.0f %9.1f%% %11.1f%% %9.1f%%\n", "packing", span_p,
           100 * (span_p / lb - 1), 100 * w / (N_DEV * span_p), 100 * held_p);
    printf("%-22s %12.0f %9.1f%% %11.1f%% %9.1f%%\n", "one trial per device",
           span_o, 100 * (span_o / lb - 1), 100 * w / (N_DEV * span_o),
           100 * held_o);
    printf("\noccupancy: the capacity trials need, over the makespan;\n"
           "held: the capacity they hold (a whole device each, one per "
           "device)\n");
    return 0;
}
