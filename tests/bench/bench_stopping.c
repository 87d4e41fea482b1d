/*
 * bench_stopping.c - what a stopping rule costs per report, as the engine
 * will call it: observe the value, ask about the reporting run, and ask
 * about every other run when the generation moved.
 *
 * RUNS runs (default 64) report VALUES values each (default 4,000), one
 * value of each in turn, from noisy falling curves. For Hyperband (min_iter
 * 1, eta 3, strict), ASHA (min_iter 1, eta 3) and the median rule (warmup
 * 5, min_runs 3) it prints reports per second and nanoseconds per report;
 * beside Hyperband, in the same run, the reference: W&B's way, every
 * threshold recomputed from every run's whole history at each report
 * (what hyperband_stop_runs does on each pass), on the same values, with
 * the number of answers on which the two disagree (must be 0).
 *
 *   build/release/tests/bench/bench_stopping [RUNS [VALUES]]
 *
 * Not a test: it asserts nothing.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "search/rng.h"
#include "search/stopping.h"

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* value[t][r]: run r's t-th value. */
static double *make_curves(size_t runs, size_t values)
{
    double *v = malloc(runs * values * sizeof(double));
    double rate, floor_;
    sw_rng g;
    size_t r, t;

    sw_rng_seed(&g, 42, 0);
    for (r = 0; r < runs; r++) {
        rate = 0.001 + 0.01 * sw_rng_uniform(&g);
        floor_ = 0.1 + 0.5 * sw_rng_uniform(&g);
        for (t = 0; t < values; t++)
            v[t * runs + r] =
                floor_ + exp(-rate * (double)t) + 0.02 * sw_rng_normal(&g);
    }
    return v;
}

typedef struct {
    double seconds;
    size_t stops, asks;
    unsigned char *answers; /* the reporting run's answer, per report */
} result;

static result run_rule(const sw_early_terminate *et, const double *v,
                       size_t runs, size_t values)
{
    result res = {0};
    sw_stopper *s;
    uint64_t gen = 0;
    size_t t, r, o, i = 0;
    double t0;

    res.answers = malloc(runs * values);
    if (sw_stopper_new(&s, et, false) < 0)
        return res;
    t0 = now_s();
    for (t = 0; t < values; t++)
        for (r = 0; r < runs; r++, i++) {
            sw_stopper_observe(s, (int64_t)r, v[i]);
            res.answers[i] = sw_stopper_should_stop(s, (int64_t)r);
            res.stops += res.answers[i];
            res.asks++;
            if (sw_stopper_generation(s) == gen)
                continue;
            gen = sw_stopper_generation(s);
            for (o = 0; o < runs; o++, res.asks++)
                res.stops += o != r && sw_stopper_should_stop(s, (int64_t)o);
        }
    res.seconds = now_s() - t0;
    sw_stopper_free(s);
    return res;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

/* W&B's pass, for the reporting run only: every band's threshold from
 * every run's history, then the run against the last band it reached. */
static result run_recompute(const double *v, size_t runs, size_t values)
{
    result res = {0};
    double *band_vals = malloc(runs * sizeof(double)), thr = 0, t0;
    size_t t, r, o, n, i = 0, len;
    int64_t band, closest;

    res.answers = malloc(runs * values);
    t0 = now_s();
    for (t = 0; t < values; t++)
        for (r = 0; r < runs; r++, i++) {
            len = t + 1; /* the reporting run's iterations */
            closest = 0;
            for (band = 1; band <= (int64_t)values; band *= 3) {
                for (o = 0, n = 0; o < runs; o++) /* runs that reached it */
                    if ((o <= r ? t + 1 : t) >= (size_t)band)
                        band_vals[n++] = v[(size_t)(band - 1) * runs + o];
                qsort(band_vals, n, sizeof(double), cmp_double);
                if ((size_t)band <= len) {
                    closest = band;
                    thr = band_vals[(size_t)((1.0 / 3) * (double)n)];
                }
            }
            res.answers[i] =
                closest && v[(size_t)(closest - 1) * runs + r] > thr;
            res.stops += res.answers[i];
            res.asks++;
        }
    res.seconds = now_s() - t0;
    free(band_vals);
    return res;
}

static void print(const char *name, const result *res, size_t reports)
{
    printf("%-34s %12.0f %10.1f %12zu %10zu\n", name,
           (double)reports / res->seconds, res->seconds * 1e9 / reports,
           res->asks, res->stops);
}

int main(int argc, char **argv)
{
    size_t runs = argc > 1 ? strtoul(argv[1], NULL, 10) : 64;
    size_t values = argc > 2 ? strtoul(argv[2], NULL, 10) : 4000;
    sw_early_terminate hb = {.rule = SW_STOP_HYPERBAND,
                             .min_iter = 1,
                             .s = -1,
                             .eta = 3,
                             .strict = true};
    sw_early_terminate asha = {.rule = SW_STOP_ASHA, .min_iter = 1, .eta = 3};
    sw_early_terminate med = {
        .rule = SW_STOP_MEDIAN, .warmup = 5, .min_runs = 3};
    double *v;
    result a, b, c, ref;
    size_t reports, i, disagree = 0;

    if (runs == 0 || values == 0)
        return 2;
    v = make_curves(runs, values);
    reports = runs * values;
    printf("%zu runs x %zu values = %zu reports\n", runs, values, reports);
    printf("%-34s %12s %10s %12s %10s\n", "rule", "reports/s", "ns/report",
           "questions", "stop");
    a = run_rule(&hb, v, runs, values);
    print("hyperband (sweep, incremental)", &a, reports);
    ref = run_recompute(v, runs, values);
    print("hyperband (W&B's recompute)", &ref, reports);
    for (i = 0; i < reports; i++)
        disagree += a.answers[i] != ref.answers[i];
    printf("answers that differ: %zu of %zu\n", disagree, reports);
    b = run_rule(&asha, v, runs, values);
    print("asha", &b, reports);
    c = run_rule(&med, v, runs, values);
    print("median", &c, reports);
    free(a.answers);
    free(b.answers);
    free(c.answers);
    free(ref.answers);
    free(v);
    return 0;
}
