/*
 * spec_pbt.c - the sweep file's `pbt:` section, for `method: pbt`
 * (population-based training, docs/search.md): how many members train
 * side by side, in rounds of how many iterations, up to which one, which
 * share of them exploits the top, and how a copied member's parameters
 * are perturbed. The section is checked key by key as the other sections
 * are; check_pbt() then checks it against the rest of the file (the
 * method, the metric, early_terminate, run_cap, the parameters), once.
 * The engine's side is orchestrator/engine/population.c, the decisions
 * search/pbt.c.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sweeps/spec_internal.h"

#define PBT_KEYS "population interval max_iter quantile perturb"
#define PERTURB_KEYS "factors resample_probability"

/* A whole number at least `lo` (and at most `hi`) into *out. */
static void pbt_count(sw_spec__ctx *c, const sw_value *v, const char *path,
                      int64_t lo, int64_t hi, int64_t *out)
{
    if (!sw_spec__want(c, v, path, SW_INT))
        return;
    if (v->u.i < lo || v->u.i > hi)
        sw_spec__err(c, v, path, "must be a whole number from %lld to %lld",
                     (long long)lo, (long long)hi);
    else
        *out = v->u.i;
}

/* perturb.factors: a list of numbers greater than 0. */
static void pbt_factors(sw_spec__ctx *c, const sw_value *v, const char *path)
{
    sw_pbt_spec *pbt = &c->spec->pbt;
    size_t i, n;
    double x;
    char *at;

    if (!sw_spec__want(c, v, path, SW_LIST))
        return;
    if ((n = v->u.list.len) == 0) {
        sw_spec__err(c, v, path,
                     "must list at least one factor (leave it out for 0.8 "
                     "and 1.2)");
        return;
    }
    free(pbt->factors);
    pbt->factors = sw_calloc(n, sizeof(double));
    pbt->n_factors = 0;
    for (i = 0; i < n; i++) {
        x = 0;
        at = sw_aprintf("%s[%zu]", path, i);
        if (sw_spec__want_number(c, v->u.list.items[i], at, &x) && !(x > 0))
            sw_spec__err(c, v->u.list.items[i], at,
                         "must be a number greater than 0 (a value is "
                         "multiplied by it)");
        else if (x > 0)
            pbt->factors[pbt->n_factors++] = x;
        free(at);
    }
}

static void perturb_key(sw_spec__ctx *c, const char *key, const sw_value *v,
                        const char *path, void *arg)
{
    double *rp = &c->spec->pbt.resample_probability;

    (void)arg;
    if (strcmp(key, "factors") == 0)
        pbt_factors(c, v, path);
    else if (strcmp(key, "resample_probability") != 0)
        sw_spec__unknown_key_in(c, key, v, path, PERTURB_KEYS);
    else if (sw_spec__want_number(c, v, path, rp) && !(*rp >= 0 && *rp <= 1))
        sw_spec__err(c, v, path, "must be a probability from 0 to 1");
}

static void pbt_key(sw_spec__ctx *c, const char *key, const sw_value *v,
                    const char *path, void *arg)
{
    sw_pbt_spec *pbt = &c->spec->pbt;

    (void)arg;
    if (strcmp(key, "population") == 0) {
        pbt_count(c, v, path, 2, SW_PBT_MAX_POPULATION, &pbt->population);
    } else if (strcmp(key, "interval") == 0) {
        pbt_count(c, v, path, 1, INT32_MAX, &pbt->interval);
    } else if (strcmp(key, "max_iter") == 0) {
        pbt_count(c, v, path, 1, INT64_MAX / 2, &pbt->max_iter);
    } else if (strcmp(key, "quantile") == 0) {
        if (sw_spec__want_number(c, v, path, &pbt->quantile) &&
            !(pbt->quantile > 0 && pbt->quantile <= 0.5))
            sw_spec__err(c, v, path,
                         "must be a share greater than 0 and at most 0.5 "
                         "(the bottom that many copy the top that many)");
    } else if (strcmp(key, "perturb") == 0) {
        if (sw_spec__want(c, v, path, SW_MAP))
            sw_spec__each_key(c, v, path, perturb_key, NULL);
    } else {
        sw_spec__unknown_key_in(c, key, v, path, PBT_KEYS);
    }
}

void sw_spec__top_pbt(sw_spec__ctx *c, const sw_value *v, const char *path)
{
    static const char *const needed[] = {"population", "interval", "max_iter"};
    size_t i;

    if (!sw_spec__want(c, v, path, SW_MAP))
        return;
    sw_spec__each_key(c, v, path, pbt_key, NULL);
    for (i = 0; i < sizeof(needed) / sizeof(*needed); i++)
        if (!sw_value_map_get(v, needed[i]))
            sw_spec__err(c, v, path, "needs %s", needed[i]);
}

/* Rounds: max_iter must leave at least two, or nothing is exploited. */
static void check_rounds(sw_spec__ctx *c, const sw_value *section)
{
    const sw_pbt_spec *pbt = &c->spec->pbt;

    if (pbt->interval > 0 && pbt->max_iter > 0 &&
        pbt->max_iter <= pbt->interval)
        sw_spec__err(c, sw_value_map_get(section, "max_iter"), "pbt.max_iter",
                     "must be greater than interval (%lld): with one round "
                     "no member ever copies another",
                     (long long)pbt->interval);
}

/* What method: pbt asks of the rest of the file. */
static void check_with_pbt(sw_spec__ctx *c, const sw_value *doc)
{
    const sw_spec *spec = c->spec;
    const sw_value *et = sw_value_map_get(doc, "early_terminate");
    const sw_value *cap = sw_value_map_get(doc, "run_cap");
    size_t i, searchable = 0;

    if (et)
        sw_spec__err(c, et, "early_terminate",
                     "does not apply to method pbt: its rounds decide which "
                     "runs go on");
    if (cap && spec->run_cap > 0 && spec->pbt.population > spec->run_cap)
        sw_spec__err(c, cap, "run_cap",
                     "is smaller than pbt.population (%lld): run_cap counts "
                     "every run, the population's first",
                     (long long)spec->pbt.population);
    for (i = 0; i < spec->n_params; i++)
        searchable += spec->params[i].dist != SW_DIST_CONSTANT;
    if (sw_value_map_get(doc, "parameters") && searchable == 0)
        sw_spec__err(c, sw_value_map_get(doc, "parameters"), "parameters",
                     "pbt needs at least one parameter that is not a "
                     "constant: it has nothing to perturb");
}

void sw_spec__check_pbt(sw_spec__ctx *c, const sw_value *doc)
{
    const sw_value *section = sw_value_map_get(doc, "pbt");
    const sw_value *method = sw_value_map_get(doc, "method");
    sw_pbt_spec *pbt = &c->spec->pbt;
    bool is_pbt =
        method && method->type == SW_STR && strcmp(method->u.s, "pbt") == 0;

    if (section && !is_pbt && method && method->type == SW_STR)
        sw_spec__err(c, section, "pbt",
                     "is read only with method: pbt (this file's method is "
                     "%s)",
                     method->u.s);
    if (!is_pbt)
        return;
    if (!section) {
        sw_spec__err(c, method, "method",
                     "pbt needs a pbt: section (population, interval, "
                     "max_iter)");
        return;
    }
    check_rounds(c, section);
    check_with_pbt(c, doc);
    if (pbt->n_factors == 0 && !pbt->factors) {
        pbt->factors = sw_calloc(2, sizeof(double));
        pbt->factors[0] = 0.8;
        pbt->factors[1] = 1.2;
        pbt->n_factors = 2;
    }
}
