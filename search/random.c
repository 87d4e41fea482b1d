/*
 * random.c - the random strategy: independent draws, as W&B's random
 * search makes them, but reproducible trial by trial.
 *
 * Trial i is drawn from its own stream (seed, i), parameters in spec
 * order, so it is the same whether trials are drawn in order, skipped or
 * redrawn after a crash. The sequence has no end; run_cap is applied by
 * search.c. Previous results are ignored, as in W&B.
 *
 * The population of method pbt is drawn the same way: it is the first
 * `pbt.population` trials of this sequence, and then it ends (the runs
 * that follow are made by exploits, search/pbt.c).
 */
#include <stdlib.h>

#include "search/strategy.h"

typedef struct {
    const sw_spec *spec;
    uint64_t seed;
} random_state;

static int random_open(void **state, const sw_spec *spec, uint64_t seed)
{
    random_state *st = sw_calloc(1, sizeof(*st));

    st->spec = spec;
    st->seed = seed;
    *state = st;
    return SW_OK;
}

static void random_close(void *state)
{
    free(state);
}

static int random_at(void *state, uint64_t index, sw_value **vals)
{
    const random_state *st = state;
    sw_rng r;
    size_t i;

    sw_rng_seed(&r, st->seed, index);
    for (i = 0; i < st->spec->n_params; i++)
        vals[i] = sw_param_sample(&st->spec->params[i], &r);
    return SW_OK;
}

const sw_strategy sw_random__strategy = {
    .version = SW_STRATEGY_VERSION,
    .name = "random",
    .open = random_open,
    .close = random_close,
    .at = random_at,
    .size = sw_search__unbounded,
};

/* method pbt: the first pbt.population trials of random's sequence. */
static int population_at(void *state, uint64_t index, sw_value **vals)
{
    const random_state *st = state;

    if (index >= (uint64_t)st->spec->pbt.population)
        return sw_error_set(SW_EDONE, "the population of %lld is drawn",
                            (long long)st->spec->pbt.population);
    return random_at(state, index, vals);
}

static void population_size(const void *state, uint64_t *count, bool *bounded,
                            bool *saturated)
{
    const random_state *st = state;

    *count = (uint64_t)st->spec->pbt.population;
    *bounded = true;
    *saturated = false;
}

const sw_strategy sw_pbt__strategy = {
    .version = SW_STRATEGY_VERSION,
    .name = "pbt",
    .open = random_open,
    .close = random_close,
    .at = population_at,
    .size = population_size,
};
