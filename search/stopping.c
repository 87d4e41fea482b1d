/*
 * stopping.c - the early-stopping rules, decided incrementally.
 *
 * Values are kept with the sign flipped for a metric to maximize, so that
 * lower is better everywhere below (W&B negates them the same way). Each
 * run has a slot, found through an open-addressing table keyed by its id.
 *
 * Hyperband (W&B's hyperband_stop_runs): each band keeps the sorted values
 * of every run that reached it, at that iteration; its threshold is the
 * value at index int(n / eta) (as W&B computes it: int((1.0 / eta) * n)).
 * A running run is held to the last band it reached: it stops when its
 * best value so far (or, with strict, its value at that band) is greater
 * than the threshold. Thresholds move as runs reach a band, so the
 * answer is recomputed on every question, as W&B recomputes it on every
 * pass.
 *
 * ASHA: the rungs are W&B's min_iter bands below max_iter. A run that
 * reaches a rung is ranked there once, among the runs that reached it so
 * far (itself included): it goes on when its value is no worse than the
 * k-th best, k = max(1, floor(n / eta)); else it stops, for good.
 *
 * Median: every iteration t keeps the sorted t-th values of the runs that
 * have t values. A run is judged at the deepest iteration t past warmup,
 * and within its own, at which min_runs other runs have a value: it stops
 * when its best over its first t values is worse than their median.
 */
#include "search/stopping.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sweeps/error.h"
#include "sweeps/value.h"

/* A multiset of values, kept sorted ascending. */
typedef struct {
    double *v;
    size_t len, cap;
} sorted;

typedef struct {
    int64_t id;
    int64_t n;        /* finite values seen: its iterations */
    double best;      /* the lowest of them */
    double at_level;  /* its value at the last band or rung it reached */
    size_t next;      /* the first level it has not reached */
    bool cut;         /* ASHA: ranked out at a rung... */
    int64_t rank_at;  /* ...at this one (or the last it passed)... */
    double cutoff;    /* ...held to this value there */
    double *hist;     /* median: its values, by iteration... */
    double *run_best; /* ...and the best of the first t of them */
    size_t cap;
} srun;

struct sw_stopper {
    sw_stop_rule rule;
    double sign; /* -1 for a metric to maximize */
    double eta;
    bool strict;
    int64_t warmup, min_runs;
    int64_t *at; /* bands or rungs, ascending, distinct */
    sorted *level;
    size_t n_levels;
    sorted *step; /* median: step[t - 1] holds the t-th values */
    size_t n_steps, cap_steps;
    srun *runs;
    size_t n_runs, cap_runs;
    size_t *slot; /* index + 1 into runs, 0 for empty; a power of 2 */
    size_t n_slots;
    uint64_t generation;
};

/* Sorted multisets ------------------------------------------------------ */

/* The index of the first value not less than x. */
static size_t lower_bound(const sorted *s, double x)
{
    size_t lo = 0, hi = s->len, mid;

    while (lo < hi) {
        mid = lo + (hi - lo) / 2;
        if (s->v[mid] < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static void sorted_insert(sorted *s, double x)
{
    size_t at = lower_bound(s, x);

    sw_grow(&s->v, &s->cap, s->len + 1, sizeof(double));
    memmove(s->v + at + 1, s->v + at, (s->len - at) * sizeof(double));
    s->v[at] = x;
    s->len++;
}

/* Levels: W&B's bands --------------------------------------------------- */

static int add_level(sw_stopper *s, int64_t at)
{
    if (s->n_levels && s->at[s->n_levels - 1] == at)
        return SW_OK; /* a repeated band has the same threshold */
    if (s->n_levels == SW_STOPPER_MAX_LEVELS)
        return sw_error_set(SW_EINVALID,
                            "early_terminate: more than %d bands (eta %g is "
                            "too close to 1)",
                            SW_STOPPER_MAX_LEVELS, s->eta);
    s->at[s->n_levels++] = at;
    return SW_OK;
}

/* Enough divisions for any eta that makes fewer than MAX_LEVELS bands. */
#define MAX_DIVISIONS (1 << 20)

/* max_iter / eta, / eta again, ... s times while at least 1, truncated;
 * ascending. */
static int bands_from_max(sw_stopper *s, const sw_early_terminate *cfg)
{
    double band = (double)cfg->max_iter;
    int64_t i, j, tmp;
    int error = SW_OK;

    for (i = 0; i < cfg->s && error == SW_OK; i++) {
        if (i == MAX_DIVISIONS)
            return sw_error_set(SW_EINVALID,
                                "early_terminate: eta %g is too close to 1 "
                                "for max_iter %lld",
                                s->eta, (long long)cfg->max_iter);
        band /= s->eta;
        if (band < 1)
            break;
        error = add_level(s, (int64_t)band);
    }
    for (i = 0, j = (int64_t)s->n_levels - 1; i < j; i++, j--) {
        tmp = s->at[i];
        s->at[i] = s->at[j];
        s->at[j] = tmp;
    }
    return error;
}

/* min_iter, * eta, * eta again, ... (W&B makes 100), truncated; below
 * `below` when it is positive (ASHA's max_iter). */
static int bands_from_min(sw_stopper *s, int64_t min_iter, int64_t below)
{
    double band = (double)min_iter;
    int i, error = SW_OK;

    for (i = 0; i < 100 && error == SW_OK; i++, band *= s->eta) {
        if (band >= 0x1p62 || (below > 0 && band >= (double)below))
            break; /* no run gets that far */
        error = add_level(s, (int64_t)band);
    }
    return error;
}

static int make_levels(sw_stopper *s, const sw_early_terminate *cfg)
{
    s->at = sw_calloc(SW_STOPPER_MAX_LEVELS, sizeof(*s->at));
    if (s->rule == SW_STOP_HYPERBAND && cfg->max_iter > 0 && cfg->s >= 0)
        return bands_from_max(s, cfg);
    if (s->rule == SW_STOP_HYPERBAND)
        return bands_from_min(s, cfg->min_iter, 0);
    if (s->rule == SW_STOP_ASHA)
        return bands_from_min(s, cfg->min_iter, cfg->max_iter);
    return SW_OK;
}

int sw_stopper_new(sw_stopper **out, const sw_early_terminate *cfg,
                   bool maximize)
{
    sw_stopper *s;
    int error;

    *out = NULL;
    if (cfg->rule == SW_STOP_NONE)
        return sw_error_set(SW_EINVALID, "early_terminate names no rule");
    s = sw_calloc(1, sizeof(*s));
    s->rule = cfg->rule;
    s->sign = maximize ? -1.0 : 1.0;
    s->eta = cfg->eta > 1 ? cfg->eta : 3.0;
    s->strict = cfg->strict;
    s->warmup = cfg->warmup;
    s->min_runs = cfg->min_runs > 0 ? cfg->min_runs : 1;
    if ((error = make_levels(s, cfg)) < 0) {
        sw_stopper_free(s);
        return error;
    }
    s->level = sw_calloc(s->n_levels ? s->n_levels : 1, sizeof(*s->level));
    *out = s;
    return SW_OK;
}

void sw_stopper_free(sw_stopper *s)
{
    size_t i;

    if (!s)
        return;
    for (i = 0; s->level && i < s->n_levels; i++)
        free(s->level[i].v);
    for (i = 0; i < s->n_steps; i++)
        free(s->step[i].v);
    for (i = 0; i < s->n_runs; i++) {
        free(s->runs[i].hist);
        free(s->runs[i].run_best);
    }
    free(s->at);
    free(s->level);
    free(s->step);
    free(s->runs);
    free(s->slot);
    free(s);
}

/* Runs by id ------------------------------------------------------------- */

static size_t hash_id(int64_t id)
{
    uint64_t x = (uint64_t)id + 0x9e3779b97f4a7c15u;

    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9u;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebu;
    return (size_t)(x ^ (x >> 31));
}

/* The slot of `id` in the table: its run's, or the empty one it would
 * take. */
static size_t *slot_of(const sw_stopper *s, int64_t id)
{
    size_t mask = s->n_slots - 1, i = hash_id(id) & mask;

    while (s->slot[i] && s->runs[s->slot[i] - 1].id != id)
        i = (i + 1) & mask;
    return &s->slot[i];
}

static const srun *find_run(const sw_stopper *s, int64_t id)
{
    size_t *slot;

    if (!s->n_slots)
        return NULL;
    slot = slot_of(s, id);
    return *slot ? &s->runs[*slot - 1] : NULL;
}

/* Keeps the table at most half full. */
static void rehash(sw_stopper *s)
{
    size_t i;

    free(s->slot);
    s->n_slots = s->n_slots ? s->n_slots * 2 : 64;
    s->slot = sw_calloc(s->n_slots, sizeof(*s->slot));
    for (i = 0; i < s->n_runs; i++)
        *slot_of(s, s->runs[i].id) = i + 1;
}

static srun *get_run(sw_stopper *s, int64_t id)
{
    size_t *slot;
    srun *r;

    if (2 * (s->n_runs + 1) > s->n_slots)
        rehash(s);
    slot = slot_of(s, id);
    if (*slot)
        return &s->runs[*slot - 1];
    sw_grow(&s->runs, &s->cap_runs, s->n_runs + 1, sizeof(*s->runs));
    r = &s->runs[s->n_runs++];
    memset(r, 0, sizeof(*r));
    r->id = id;
    r->best = INFINITY;
    *slot = s->n_runs;
    return r;
}

/* The rules --------------------------------------------------------------- */

/* Hyperband's threshold index: int((1.0 / eta) * n), as W&B computes it;
 * kept inside the values for an eta so near 1 that it rounds to n. */
static size_t hb_index(const sw_stopper *s, size_t n)
{
    size_t i = (size_t)((1.0 / s->eta) * (double)n);

    return i < n ? i : n - 1;
}

/* ASHA's cutoff index: the k-th best, k = max(1, floor(n / eta)). */
static size_t asha_index(const sw_stopper *s, size_t n)
{
    size_t k = (size_t)floor((double)n / s->eta);

    return k > 1 ? (k < n ? k : n) - 1 : 0;
}

static double level_threshold(const sw_stopper *s, size_t i)
{
    const sorted *l = &s->level[i];

    return l->v[s->rule == SW_STOP_ASHA ? asha_index(s, l->len)
                                        : hb_index(s, l->len)];
}

/* `r` has just reached level `i` with value `x`. */
static void reach_level(sw_stopper *s, srun *r, size_t i, double x)
{
    sorted *l = &s->level[i];
    double before = l->len ? level_threshold(s, i) : 0;

    sorted_insert(l, x);
    r->next = i + 1;
    if (s->rule == SW_STOP_ASHA && !r->cut) {
        r->at_level = x;
        r->rank_at = s->at[i];
        r->cutoff = level_threshold(s, i);
        r->cut = x > r->cutoff;
    }
    if (s->rule == SW_STOP_ASHA)
        return; /* once ranked, for good: nobody else's answer moves */
    r->at_level = x;
    if (l->len > 1 && level_threshold(s, i) != before)
        s->generation++;
}

/* Median: `r` has just recorded its n-th value `x`. */
static void median_record(sw_stopper *s, srun *r, double x)
{
    size_t t = (size_t)r->n, cap = r->cap;

    sw_grow(&r->hist, &r->cap, t, sizeof(double));
    if (r->cap != cap)
        r->run_best = sw_realloc(r->run_best, r->cap * sizeof(double));
    r->hist[t - 1] = x;
    r->run_best[t - 1] =
        t > 1 && r->run_best[t - 2] < x ? r->run_best[t - 2] : x;
    if (t > s->n_steps) {
        sw_grow(&s->step, &s->cap_steps, t, sizeof(*s->step));
        memset(&s->step[t - 1], 0, sizeof(*s->step));
        s->n_steps = t;
    }
    sorted_insert(&s->step[t - 1], x);
    /* another run is judged at t only past warmup, with min_runs others */
    if ((int64_t)t > s->warmup &&
        (int64_t)s->step[t - 1].len - 1 >= s->min_runs)
        s->generation++;
}

void sw_stopper_observe(sw_stopper *s, int64_t run, double value)
{
    srun *r;
    double x = s->sign * value;

    if (!isfinite(value))
        return;
    r = get_run(s, run);
    r->n++;
    if (x < r->best)
        r->best = x;
    if (r->next < s->n_levels && r->n == s->at[r->next])
        reach_level(s, r, r->next, x);
    if (s->rule == SW_STOP_MEDIAN)
        median_record(s, r, x);
}

/* Median: the deepest iteration t in (warmup, r->n] at which at least
 * min_runs other runs have a value; 0 when there is none. Fewer runs
 * reach a later iteration, so the counts only fall as t grows. */
static size_t median_step(const sw_stopper *s, const srun *r)
{
    size_t lo = (size_t)s->warmup + 1, hi = (size_t)r->n, mid, found = 0;

    while (lo <= hi) {
        mid = lo + (hi - lo) / 2;
        if ((int64_t)s->step[mid - 1].len - 1 >= s->min_runs) {
            found = mid;
            lo = mid + 1;
        } else {
            hi = mid - 1;
        }
    }
    return found;
}

/* The median of step t's values without one copy of `own`. */
static double median_of_others(const sorted *st, double own)
{
    size_t skip = lower_bound(st, own), m = st->len - 1, a, b;

    a = (m - 1) / 2;
    b = m / 2;
    a += a >= skip;
    b += b >= skip;
    return (st->v[a] + st->v[b]) / 2;
}

/* Whether `r` stops, and the value it was held to, in *at and *thr. */
static bool decide(const sw_stopper *s, const srun *r, int64_t *at,
                   double *mine, double *thr)
{
    size_t t;

    *at = 0;
    if (s->rule == SW_STOP_MEDIAN) {
        if (r->n <= s->warmup || !(t = median_step(s, r)))
            return false;
        *at = (int64_t)t;
        *mine = r->run_best[t - 1];
        *thr = median_of_others(&s->step[t - 1], r->hist[t - 1]);
        return *mine > *thr;
    }
    if (r->next == 0)
        return false;
    if (s->rule == SW_STOP_ASHA) {
        *at = r->rank_at;
        *mine = r->at_level;
        *thr = r->cutoff;
        return r->cut;
    }
    *at = s->at[r->next - 1];
    *thr = level_threshold(s, r->next - 1);
    *mine = s->strict ? r->at_level : r->best;
    return *mine > *thr;
}

bool sw_stopper_should_stop(const sw_stopper *s, int64_t run)
{
    const srun *r = find_run(s, run);
    double mine, thr;
    int64_t at;

    return r && decide(s, r, &at, &mine, &thr);
}

uint64_t sw_stopper_generation(const sw_stopper *s)
{
    return s->generation;
}

int64_t sw_stopper_iterations(const sw_stopper *s, int64_t run)
{
    const srun *r = find_run(s, run);

    return r ? r->n : 0;
}

size_t sw_stopper_levels(const sw_stopper *s, const int64_t **at)
{
    *at = s->at;
    return s->n_levels;
}

bool sw_stopper_threshold(const sw_stopper *s, size_t i, double *out)
{
    if (i >= s->n_levels || s->level[i].len == 0)
        return false;
    *out = s->sign * level_threshold(s, i);
    return true;
}

/* A value as a person reads it: six significant digits ("0.666667",
 * "5.0", "1.23457e+07"), not the 17 that round-trip. */
static void put_num(sw_buf *out, double v)
{
    char t[40];

    snprintf(t, sizeof(t), "%.6g", v);
    sw_buf_puts(out, t);
    if (!strpbrk(t, ".eEn")) /* a whole number reads as one: 5.0 */
        sw_buf_puts(out, ".0");
}

void sw_stopper_explain(const sw_stopper *s, int64_t run, sw_buf *out)
{
    static const char *const level[] = {"", "band", "rung", "iteration"};
    static const char *const held[] = {"", "threshold", "cutoff",
                                       "median of the others"};
    const srun *r = find_run(s, run);
    double mine = 0, thr = 0;
    int64_t at;
    bool stop, best;

    if (!r) {
        sw_buf_printf(out, "no value yet: go on");
        return;
    }
    stop = decide(s, r, &at, &mine, &thr);
    if (!at) {
        sw_buf_printf(out, "iteration %lld: not judged yet: go on",
                      (long long)r->n);
        return;
    }
    best = s->rule == SW_STOP_MEDIAN ||
           (s->rule == SW_STOP_HYPERBAND && !s->strict);
    sw_buf_printf(out, "iteration %lld, %s %lld: %s ", (long long)r->n,
                  level[s->rule], (long long)at, best ? "best" : "value");
    put_num(out, s->sign * mine);
    sw_buf_printf(out, ", %s ", held[s->rule]);
    put_num(out, s->sign * thr);
    sw_buf_printf(out, ": %s", stop ? "stop" : "go on");
}
