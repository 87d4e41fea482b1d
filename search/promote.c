/*
 * promote.c - promotion ASHA, decided incrementally (promote.h).
 *
 * Each rung keeps its entries sorted best first (values with the sign
 * flipped for a metric to maximize, so lower is better below; ties in
 * the order they arrived). An entry is a run that reached the rung, its
 * value there, and whether it was promoted out of it. At the rung with n
 * entries the best floor(n / eta) may go on: the first of those not yet
 * promoted is the rung's candidate. next() asks the rungs from the top
 * down (finishing runs first frees the most, as the paper does).
 */
#include "search/promote.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "search/rng.h"
#include "sweeps/error.h"

/* The stream of the brackets' draws: apart from the searches' own. */
#define BRACKET_STREAM 0x6272616bULL

typedef struct {
    int64_t run;
    double value; /* lower is better; +inf: not finite */
    bool promoted;
    bool beyond;           /* promoted past the quota (next_beyond) */
    bool drained;          /* came here so: not counted in the quota */
    unsigned char bracket; /* the rung it started at */
} entry;

typedef struct {
    int64_t iter;
    entry *e;
    size_t len, cap;
} rung;

struct sw_promoter {
    double eta, sign;
    rung rungs[SW_PROMOTER_MAX_RUNGS];
    size_t n;
    size_t brackets;                     /* 1: plain ASHA */
    uint64_t seed;                       /* of the brackets' draws */
    double share[SW_PROMOTER_MAX_RUNGS]; /* cumulative, of new runs */
    bool predicted;                      /* values are predictions */
};

int sw_promoter_new(sw_promoter **out, int64_t min_iter, double eta,
                    int64_t max_iter, bool maximize)
{
    sw_promoter *p;
    double it;

    if (min_iter < 1 || !(eta > 1) || !isfinite(eta) || max_iter < min_iter)
        return sw_error_set(SW_EINVALID,
                            "promotion ASHA wants min_iter >= 1, eta > 1 and "
                            "max_iter >= min_iter");
    p = sw_calloc(1, sizeof(*p));
    p->eta = eta;
    p->sign = maximize ? -1 : 1;
    for (it = (double)min_iter; it < (double)max_iter; it *= eta) {
        int64_t r = (int64_t)floor(it + 1e-9);

        if (p->n + 1 >= SW_PROMOTER_MAX_RUNGS) {
            sw_promoter_free(p);
            return sw_error_set(SW_EINVALID,
                                "promotion ASHA: more than %d rungs between "
                                "min_iter and max_iter",
                                SW_PROMOTER_MAX_RUNGS);
        }
        if (p->n == 0 || r > p->rungs[p->n - 1].iter)
            p->rungs[p->n++].iter = r;
    }
    p->rungs[p->n++].iter = max_iter;
    p->brackets = 1;
    p->share[0] = 1;
    *out = p;
    return SW_OK;
}

/* Hyperband's brackets (Li et al., "Hyperband", Algorithm 1): bracket b
 * starts its runs at rung b. With L the last rung, bracket b would take
 * eta^(L-b) / (L-b+1) times as many configurations as the one that
 * starts at the last rung, so that every bracket spends about the same;
 * a new run draws its bracket with those weights. */
void sw_promoter_set_predicted(sw_promoter *p, bool predicted)
{
    p->predicted = predicted;
}

int sw_promoter_set_brackets(sw_promoter *p, size_t brackets, uint64_t seed)
{
    size_t b, last = p->n - 1;
    double sum = 0;

    if (brackets < 1 || brackets > p->n)
        return sw_error_set(SW_EINVALID,
                            "promotion ASHA: brackets must be from 1 to the "
                            "number of rungs (%zu)",
                            p->n);
    p->brackets = brackets;
    p->seed = seed;
    for (b = 0; b < brackets; b++) {
        sum += pow(p->eta, (double)(last - b)) / (double)(last - b + 1);
        p->share[b] = sum;
    }
    for (b = 0; b < brackets; b++)
        p->share[b] /= sum;
    return SW_OK;
}

size_t sw_promoter_bracket(const sw_promoter *p, int64_t run)
{
    sw_rng r;
    double u;
    size_t b;

    if (p->brackets <= 1)
        return 0;
    sw_rng_seed(&r, p->seed, BRACKET_STREAM ^ (uint64_t)run);
    u = sw_rng_uniform(&r);
    for (b = 0; b + 1 < p->brackets && u >= p->share[b]; b++)
        ;
    return b;
}

void sw_promoter_free(sw_promoter *p)
{
    size_t k;

    if (!p)
        return;
    for (k = 0; k < p->n; k++)
        free(p->rungs[k].e);
    free(p);
}

size_t sw_promoter_rungs(const sw_promoter *p)
{
    return p->n;
}

int64_t sw_promoter_rung_iter(const sw_promoter *p, size_t k)
{
    return k < p->n ? p->rungs[k].iter : -1;
}

int sw_promoter_rung_of(const sw_promoter *p, int64_t iter)
{
    int k = -1;

    while ((size_t)(k + 1) < p->n && p->rungs[k + 1].iter <= iter)
        k++;
    return k;
}

static entry *find(const rung *r, int64_t run)
{
    size_t i;

    for (i = 0; i < r->len; i++)
        if (r->e[i].run == run)
            return &r->e[i];
    return NULL;
}

void sw_promoter_record(sw_promoter *p, int64_t run, size_t k, double value)
{
    rung *r;
    size_t i, b = sw_promoter_bracket(p, run);
    double v;
    const entry *below;
    bool drained;

    if (k >= p->n || k < b || find(&p->rungs[k], run))
        return;
    below = k > 0 ? find(&p->rungs[k - 1], run) : NULL;
    drained = below && below->beyond;
    r = &p->rungs[k];
    v = isfinite(value) ? p->sign * value : INFINITY;
    sw_grow(&r->e, &r->cap, r->len + 1, sizeof(*r->e));
    for (i = r->len; i > 0 && r->e[i - 1].value > v; i--)
        r->e[i] = r->e[i - 1]; /* after its equals: ties by arrival */
    r->e[i].run = run;
    r->e[i].value = v;
    r->e[i].promoted = false;
    r->e[i].beyond = false;
    r->e[i].drained = drained;
    r->e[i].bracket = (unsigned char)b;
    r->len++;
}

void sw_promoter_mark(sw_promoter *p, int64_t run, size_t k)
{
    entry *e = k < p->n ? find(&p->rungs[k], run) : NULL;

    if (e)
        e->promoted = true;
}

void sw_promoter_unmark(sw_promoter *p, int64_t run, size_t k)
{
    entry *e = k < p->n ? find(&p->rungs[k], run) : NULL;

    if (e)
        e->promoted = e->beyond = false;
}

/* How many of bracket b's runs at rung r go on: the top 1/eta of those
 * that came by the quota (a run promoted past it is not of them: the
 * drain trains runs further, it never changes what the quota promotes). */
static size_t quota(const sw_promoter *p, const rung *r, size_t b)
{
    size_t i, n = 0;

    for (i = 0; i < r->len; i++)
        n += r->e[i].bracket == b && !r->e[i].drained;
    return (size_t)floor((double)n / p->eta + 1e-9);
}

/* The best run at rung r due a promotion, or NULL: among the top quota
 * of its own bracket (the entries are in order of value). */
static entry *due(const sw_promoter *p, const rung *r)
{
    size_t q[SW_PROMOTER_MAX_RUNGS], seen[SW_PROMOTER_MAX_RUNGS] = {0};
    size_t b, i;
    entry *e;

    for (b = 0; b < p->brackets; b++)
        q[b] = quota(p, r, b);
    for (i = 0; i < r->len; i++) {
        e = &r->e[i];
        if (e->drained) /* not of the quota's: neither counted nor due */
            continue;
        if (seen[e->bracket]++ >= q[e->bracket] || e->promoted ||
            !isfinite(e->value))
            continue;
        return e;
    }
    return NULL;
}

bool sw_promoter_next(sw_promoter *p, int64_t *run, size_t *to)
{
    size_t k;
    entry *e;

    for (k = p->n - 1; k-- > 0;) {
        if ((e = due(p, &p->rungs[k]))) {
            e->promoted = true;
            *run = e->run;
            *to = k + 1;
            return true;
        }
    }
    return false;
}

bool sw_promoter_next_beyond(sw_promoter *p,
                             bool (*fits)(void *ctx, int64_t run, size_t k),
                             void *ctx, int64_t *run, size_t *to)
{
    size_t k, i;
    entry *e;

    for (k = p->n - 1; k-- > 0;) {
        for (i = 0; i < p->rungs[k].len; i++) {
            e = &p->rungs[k].e[i];
            if (e->promoted || !isfinite(e->value) || !fits(ctx, e->run, k))
                continue;
            e->promoted = e->beyond = true;
            *run = e->run;
            *to = k + 1;
            return true;
        }
    }
    return false;
}

bool sw_promoter_beyond(const sw_promoter *p, int64_t run)
{
    const entry *e;
    size_t k;

    for (k = p->n; k-- > 0;)
        if ((e = find(&p->rungs[k], run)))
            return e->beyond;
    return false;
}

int64_t sw_promoter_target(const sw_promoter *p, int64_t run)
{
    size_t k;

    for (k = p->n; k-- > 0;)
        if (find(&p->rungs[k], run))
            return p->rungs[k + 1 < p->n ? k + 1 : k].iter;
    return p->rungs[sw_promoter_bracket(p, run)].iter;
}

bool sw_promoter_waiting(const sw_promoter *p, int64_t run, size_t *k)
{
    const entry *e;
    size_t j;

    for (j = p->n - 1; j-- > 0;) {
        if ((e = find(&p->rungs[j], run))) {
            *k = j;
            return !e->promoted;
        }
    }
    return false;
}

/* 1st, 2nd, 3rd, 4th, ... 11th, 12th, 13th, 21st. */
static const char *ordinal(size_t n)
{
    if (n % 100 >= 11 && n % 100 <= 13)
        return "th";
    return n % 10 == 1 ? "st" : n % 10 == 2 ? "nd" : n % 10 == 3 ? "rd" : "th";
}

void sw_promoter_explain(const sw_promoter *p, int64_t run, sw_buf *out)
{
    const entry *e = NULL;
    const rung *r = NULL;
    size_t k, i, pos = 0, len = 0;

    for (k = p->n; k-- > 0 && !e;)
        if ((e = find(&p->rungs[k], run)))
            r = &p->rungs[k];
    if (!e) {
        sw_buf_puts(out, "no rung reached yet");
        return;
    }
    k = (size_t)(r - p->rungs);
    for (i = 0; i < r->len; i++) { /* its place among its bracket's */
        if (r->e[i].bracket != e->bracket)
            continue;
        pos += &r->e[i] <= e;
        len++;
    }
    sw_buf_printf(
        out, "rung %zu (iteration %lld): %s %g, %zu%s of %zu", k,
        (long long)r->iter,
        p->predicted && k + 1 < p->n ? "predicted final value" : "value",
        isfinite(e->value) ? p->sign * e->value : NAN, pos, ordinal(pos), len);
    if (k + 1 == p->n)
        sw_buf_puts(out, ", the last rung: done");
    else if (p->brackets > 1)
        sw_buf_printf(out, ", the top %zu of bracket %u go on: %s",
                      quota(p, r, e->bracket), e->bracket,
                      e->promoted ? "promoted" : "waits");
    else
        sw_buf_printf(out, ", the top %zu go on: %s", quota(p, r, 0),
                      e->promoted ? "promoted" : "waits");
}
