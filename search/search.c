/*
 * search.c - the search front: picks the strategy a spec's method names,
 * keeps the cursor, applies run_cap, and turns a strategy's leaf values
 * into trials (nested params and a stable id).
 *
 * Strategies are reached only through the table in strategy.h, so adding
 * one means one file and one line in `strategies` below. A trial's id
 * depends on its parameters only, never on its index or the seed, so the
 * same grid cell has the same id in every sweep that contains it.
 */
#include <stdlib.h>
#include <string.h>

#include "search/strategy.h"

struct sw_search {
    const sw_strategy *strat;
    void *state;
    const sw_spec *spec; /* borrowed */
    uint64_t cursor;     /* index of the next trial sw_search_next gives */
};

/* One entry per sw_method; NULL: not available yet. */
static const sw_strategy *const strategies[] = {
    [SW_METHOD_GRID] = &sw_grid__strategy,
    [SW_METHOD_RANDOM] = &sw_random__strategy,
    [SW_METHOD_BAYES] = &sw_bayes__strategy,
    [SW_METHOD_TPE] = &sw_tpe__strategy,
    [SW_METHOD_SOBOL] = &sw_sobol__strategy,
    [SW_METHOD_PBT] = &sw_pbt__strategy,
};

void sw_trial_init(sw_trial *t)
{
    memset(t, 0, sizeof(*t));
}

void sw_trial_dispose(sw_trial *t)
{
    sw_value_free(t->params);
    sw_trial_init(t);
}

/* The id is the FNV-1a hash of the canonical JSON (sorted keys). */
void sw_trial_set_id(sw_trial *t)
{
    static const char hex[] = "0123456789abcdef";
    sw_buf b = SW_BUF_INIT;
    uint64_t h;
    int i;

    sw_value_write_json(&b, t->params, true);
    h = sw_hash(SW_HASH_SEED, sw_buf_cstr(&b), b.len);
    sw_buf_dispose(&b);
    for (i = 15; i >= 0; i--, h >>= 4)
        t->id[i] = hex[h & 0xf];
    t->id[16] = '\0';
}

char *sw_search__where(const sw_spec *spec, const sw_param *p)
{
    if (!spec->file)
        return sw_strdup("");
    if (p->line <= 0)
        return sw_aprintf("%s: ", spec->file);
    return sw_aprintf("%s:%d:%d: ", spec->file, p->line, p->col);
}

int sw_search_new(sw_search **out, const sw_spec *spec, uint64_t seed)
{
    const sw_strategy *strat = NULL;
    sw_search *s;
    int err;

    if ((size_t)spec->method < sizeof(strategies) / sizeof(*strategies))
        strat = strategies[spec->method];
    if (!strat)
        return sw_error_set(SW_EINVALID, "method %s is not available yet",
                            sw_method_name(spec->method));
    if (strat->version != SW_STRATEGY_VERSION)
        return sw_error_set(SW_ERROR, "strategy %s has version %d, not %d",
                            strat->name, strat->version, SW_STRATEGY_VERSION);
    s = sw_calloc(1, sizeof(*s));
    s->strat = strat;
    s->spec = spec;
    if ((err = strat->open(&s->state, spec, seed)) < 0) {
        free(s);
        return err;
    }
    *out = s;
    return SW_OK;
}

void sw_search_free(sw_search *s)
{
    if (!s)
        return;
    s->strat->close(s->state);
    free(s);
}

void sw_search__unbounded(const void *state, uint64_t *count, bool *bounded,
                          bool *saturated)
{
    (void)state;
    *count = UINT64_MAX;
    *bounded = false;
    *saturated = false;
}

static bool capped(const sw_search *s, uint64_t index)
{
    return s->spec->run_cap > 0 && index >= (uint64_t)s->spec->run_cap;
}

/* Asks the strategy (through `fn`) for trial `index` and fills *out. */
static int make_trial(sw_search *s, uint64_t index, sw_trial *out,
                      int (*fn)(void *, uint64_t, sw_value **))
{
    size_t i, n = s->spec->n_params;
    sw_value **vals = sw_calloc(n + 1, sizeof(*vals));
    int err = fn(s->state, index, vals);

    if (err < 0) {
        for (i = 0; i < n; i++)
            sw_value_free(vals[i]);
        free(vals);
        return err;
    }
    sw_trial_dispose(out);
    out->params = sw_spec_nest(s->spec, vals);
    free(vals);
    out->index = index;
    sw_trial_set_id(out);
    return SW_OK;
}

int sw_search_next(sw_search *s, sw_trial *out)
{
    int err;

    if (capped(s, s->cursor))
        return sw_error_set(SW_EDONE, "run_cap of %lld reached",
                            (long long)s->spec->run_cap);
    if (s->strat->next)
        err = make_trial(s, s->cursor, out, s->strat->next);
    else
        err = make_trial(s, s->cursor, out, s->strat->at);
    if (err == SW_OK)
        s->cursor++;
    return err;
}

int sw_search_at(sw_search *s, uint64_t index, sw_trial *out)
{
    if (!s->strat->at)
        return sw_error_set(SW_EINVALID,
                            "method %s cannot give a trial in advance",
                            s->strat->name);
    if (capped(s, index))
        return sw_error_set(SW_EDONE, "trial %llu is past run_cap %lld",
                            (unsigned long long)index,
                            (long long)s->spec->run_cap);
    return make_trial(s, index, out, s->strat->at);
}

void sw_search_size(const sw_search *s, uint64_t *count, bool *bounded,
                    bool *saturated)
{
    uint64_t cap = (uint64_t)s->spec->run_cap;

    s->strat->size(s->state, count, bounded, saturated);
    if (s->spec->run_cap > 0 && (!*bounded || *saturated || *count > cap)) {
        *count = cap;
        *bounded = true;
        *saturated = false;
    }
}

/* No method gives again an index it has heard of: after a resume
 * replays its runs, sw_search_next goes on from the next index. */
static void skip_past(sw_search *s, const sw_trial *t)
{
    if (t->index >= s->cursor && t->index < UINT64_MAX)
        s->cursor = t->index + 1;
}

int sw_search_observe(sw_search *s, const sw_trial *t, double value)
{
    int err = s->strat->observe ? s->strat->observe(s->state, t, value) : SW_OK;

    if (err == SW_OK)
        skip_past(s, t);
    return err;
}

int sw_search_pending(sw_search *s, const sw_trial *t)
{
    int err = s->strat->pending ? s->strat->pending(s->state, t) : SW_OK;

    if (err == SW_OK)
        skip_past(s, t);
    return err;
}

bool sw_search_multi_fidelity(const sw_spec *spec)
{
    sw_stop_rule rule = spec->early_terminate.rule;

    return (spec->method == SW_METHOD_BAYES || spec->method == SW_METHOD_TPE) &&
           spec->metric.name &&
           (rule == SW_STOP_HYPERBAND || rule == SW_STOP_ASHA) &&
           !spec->no_multi_fidelity;
}

int sw_search_observe_rung(sw_search *s, const sw_trial *t, int64_t iter,
                           double value)
{
    int err = SW_OK;

    if (iter <= 0)
        return sw_error_set(SW_EINVALID,
                            "trial %llu: a rung is an iteration above 0, "
                            "not %lld",
                            (unsigned long long)t->index, (long long)iter);
    if (s->strat->observe_rung && sw_search_multi_fidelity(s->spec))
        err = s->strat->observe_rung(s->state, t, iter, value);
    if (err == SW_OK)
        skip_past(s, t);
    return err;
}

int64_t sw_search_fitted(const sw_search *s)
{
    return s->strat->fitted ? s->strat->fitted(s->state) : 0;
}
