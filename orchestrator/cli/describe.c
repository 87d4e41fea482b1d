/*
 * describe.c - what `sweep validate` says of a valid sweep file: each
 * parameter, its kind and range, how many trials the search can give,
 * what each trial asks for; as lines for a person, or as one value for
 * --json, whose keys are W&B's own words (`distribution`, `values`,
 * `min`, `max`, `mu`, `sigma`, `q`, `a`, `b`).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "orchestrator/cli/cli.h"
#include "sweeps/gpus.h"

static void put_num(sw_buf *b, const char *label, double x)
{
    sw_buf_printf(b, " %s ", label);
    sw_float_write_py(b, x);
}

/* "3 values: 16, 32, 64", at most 8 of them shown. */
static void put_values(sw_buf *b, const sw_param *p)
{
    size_t i, shown = p->n_values < 8 ? p->n_values : 8;

    sw_buf_printf(b, "%zu value%s%s: ", p->n_values,
                  p->n_values == 1 ? "" : "s", p->probs ? " (weighted)" : "");
    for (i = 0; i < shown; i++) {
        if (i)
            sw_buf_puts(b, ", ");
        sw_value_write_pyrepr(b, p->values[i]);
    }
    if (shown < p->n_values)
        sw_buf_puts(b, ", ...");
}

static void put_range(sw_buf *b, const sw_param *p)
{
    switch (p->dist) {
    case SW_DIST_INT_UNIFORM:
        sw_buf_printf(b, "%lld..%lld", (long long)p->imin, (long long)p->imax);
        break;
    case SW_DIST_NORMAL:
    case SW_DIST_Q_NORMAL:
    case SW_DIST_LOG_NORMAL:
    case SW_DIST_Q_LOG_NORMAL:
        put_num(b, "mu", p->mu);
        put_num(b, "sigma", p->sigma);
        break;
    case SW_DIST_BETA:
    case SW_DIST_Q_BETA:
        put_num(b, "a", p->a);
        put_num(b, "b", p->b);
        break;
    default:
        put_num(b, "min", p->min);
        put_num(b, "max", p->max);
        break;
    }
    if (strncmp(sw_dist_name(p->dist), "q_", 2) == 0)
        put_num(b, "q", p->q);
}

static void describe_param(sw_buf *b, const sw_param *p, int width)
{
    sw_buf_printf(b, "  %-*s %-24s ", width, p->name, sw_dist_name(p->dist));
    if (p->dist == SW_DIST_CONSTANT)
        sw_value_write_pyrepr(b, p->value);
    else if (p->dist == SW_DIST_CATEGORICAL)
        put_values(b, p);
    else
        put_range(b, p);
    sw_buf_putc(b, '\n');
}

/* `budget:`, as one line: "budget: 1000 GPU-hours, 48 hours". */
static void describe_budget(sw_buf *b, const sw_budget *bu)
{
    if (isnan(sw_budget_spent(bu, 0, 0, 0, NULL, NULL)))
        return;
    sw_buf_puts(b, "budget: ");
    sw_budget_describe(b, bu);
    sw_buf_puts(b, " (then no new trials)\n");
}

/* method pbt: the population, its rounds, who copies whom and how they
 * are perturbed, in two lines. */
static void describe_pbt(sw_buf *b, const sw_pbt_spec *pbt)
{
    int64_t rounds = (pbt->max_iter + pbt->interval - 1) / pbt->interval;
    int64_t q = (int64_t)ceil((double)pbt->population * pbt->quantile - 1e-9);
    size_t i;

    q = q > pbt->population / 2 ? pbt->population / 2 : q < 1 ? 1 : q;
    sw_buf_printf(b,
                  "pbt: population %lld, %lld rounds of %lld iterations to "
                  "%lld; at each, the bottom %lld copy one of the top %lld "
                  "(quantile %g)\n",
                  (long long)pbt->population, (long long)rounds,
                  (long long)pbt->interval, (long long)pbt->max_iter,
                  (long long)q, (long long)q, pbt->quantile);
    sw_buf_puts(b, "perturb: values times ");
    for (i = 0; i < pbt->n_factors; i++)
        sw_buf_printf(b, "%s%g", i ? " or " : "", pbt->factors[i]);
    sw_buf_printf(b, ", resampled with probability %g\n",
                  pbt->resample_probability);
}

static void describe_size(sw_buf *b, const sw_spec *spec)
{
    uint64_t n;
    bool saturated;

    if (spec->method == SW_METHOD_PBT) {
        describe_pbt(b, &spec->pbt);
        sw_buf_printf(b,
                      "trials: %lld (the population), then one more for "
                      "each exploit",
                      (long long)spec->pbt.population);
    } else if (spec->method != SW_METHOD_GRID) {
        sw_buf_puts(b, "trials: unbounded");
    } else if (sw_grid_size(spec, &n, &saturated) != SW_OK) {
        sw_buf_printf(b, "grid size: none (%s)", sw_error_last());
    } else if (saturated) {
        sw_buf_puts(b, "grid size: more than 18446744073709551615");
    } else {
        sw_buf_printf(b, "grid size: %llu", (unsigned long long)n);
    }
    if (spec->run_cap)
        sw_buf_printf(b, " (run_cap %lld)", (long long)spec->run_cap);
    sw_buf_putc(b, '\n');
    describe_budget(b, &spec->budget);
}

/* What each trial asks for, the GPUs the file declares, and what its
 * Slurm jobs ask for. */
static void describe_gpus(sw_buf *b, const sw_spec *spec)
{
    const sw_resources *r = &spec->resources;
    size_t i;

    if (r->has_gpus || r->gpu_memory_mb || r->gpu_memory_auto) {
        sw_buf_puts(b, "resources:");
        if (r->has_gpus)
            sw_buf_printf(b, " gpus %g", r->gpus);
        if (r->gpu_memory_auto)
            sw_buf_puts(b, " gpu_memory auto");
        else if (r->gpu_memory_mb) {
            sw_buf_puts(b, " gpu_memory ");
            sw_gpus_put_size(b, (uint64_t)r->gpu_memory_mb << 20);
        }
        sw_buf_putc(b, '\n');
    }
    if (spec->gpus)
        sw_buf_printf(b, "gpus: %s (declared)\n", spec->gpus);
    for (i = 0; i < spec->n_slurm_args; i++)
        sw_buf_printf(b, "%s%s%s", i ? " " : "slurm: ", spec->slurm_args[i],
                      i + 1 == spec->n_slurm_args ? "\n" : "");
}

void sw_cli_describe(FILE *out, const sw_spec *spec)
{
    sw_buf b = SW_BUF_INIT;
    int width = 4;
    size_t i;

    for (i = 0; i < spec->n_params; i++)
        if ((int)strlen(spec->params[i].name) > width)
            width = (int)strlen(spec->params[i].name);
    sw_buf_printf(&b, "method: %s\n", sw_method_name(spec->method));
    if (spec->metric.name)
        sw_buf_printf(&b, "metric: %s (%s)\n", spec->metric.name,
                      spec->metric.goal == SW_GOAL_MAXIMIZE ? "maximize"
                                                            : "minimize");
    sw_buf_printf(&b, "parameters: %zu\n", spec->n_params);
    for (i = 0; i < spec->n_params; i++)
        describe_param(&b, &spec->params[i], width);
    describe_size(&b, spec);
    describe_gpus(&b, spec);
    fputs(sw_buf_cstr(&b), out);
    sw_buf_dispose(&b);
}

/* ---- the same, as one value for --json --------------------------------- */

static sw_value *num_or_null(bool has, double x)
{
    return has ? sw_value_float(x) : sw_value_null();
}

/* A parameter's own keys: those of its distribution in W&B's syntax. */
static void put_dist_keys(sw_value *v, const sw_param *p)
{
    sw_value *list;

    if (p->dist == SW_DIST_CONSTANT) {
        sw_value_map_set(v, "value", sw_value_clone(p->value));
    } else if (p->dist == SW_DIST_CATEGORICAL) {
        list = sw_value_list();
        for (size_t i = 0; i < p->n_values; i++)
            sw_value_list_push(list, sw_value_clone(p->values[i]));
        sw_value_map_set(v, "values", list);
        list = p->probs ? sw_value_list() : sw_value_null();
        for (size_t i = 0; p->probs && i < p->n_values; i++)
            sw_value_list_push(list, sw_value_float(p->probs[i]));
        sw_value_map_set(v, "probabilities", list);
    } else if (p->dist == SW_DIST_INT_UNIFORM) {
        sw_value_map_set(v, "min", sw_value_int(p->imin));
        sw_value_map_set(v, "max", sw_value_int(p->imax));
    } else if (p->dist == SW_DIST_NORMAL || p->dist == SW_DIST_Q_NORMAL ||
               p->dist == SW_DIST_LOG_NORMAL ||
               p->dist == SW_DIST_Q_LOG_NORMAL) {
        sw_value_map_set(v, "mu", sw_value_float(p->mu));
        sw_value_map_set(v, "sigma", sw_value_float(p->sigma));
    } else if (p->dist == SW_DIST_BETA || p->dist == SW_DIST_Q_BETA) {
        sw_value_map_set(v, "a", sw_value_float(p->a));
        sw_value_map_set(v, "b", sw_value_float(p->b));
    } else {
        sw_value_map_set(v, "min", sw_value_float(p->min));
        sw_value_map_set(v, "max", sw_value_float(p->max));
    }
    if (strncmp(sw_dist_name(p->dist), "q_", 2) == 0)
        sw_value_map_set(v, "q",
                         p->q_int ? sw_value_int((int64_t)p->q)
                                  : sw_value_float(p->q));
}

/* {"name": "optimizer.lr", "path": ["optimizer", "lr"], "distribution":
 * ..., its keys, "line": L, "column": C}. */
static sw_value *param_value(const sw_param *p)
{
    sw_value *v = sw_value_map(), *path = sw_value_list();

    for (size_t i = 0; i < p->depth; i++)
        sw_value_list_push(path, sw_value_str(p->path[i]));
    sw_value_map_set(v, "name", sw_value_str(p->name));
    sw_value_map_set(v, "path", path);
    sw_value_map_set(v, "distribution", sw_value_str(sw_dist_name(p->dist)));
    put_dist_keys(v, p);
    sw_value_map_set(v, "line",
                     p->line > 0 ? sw_value_int(p->line) : sw_value_null());
    sw_value_map_set(v, "column",
                     p->line > 0 ? sw_value_int(p->col) : sw_value_null());
    return v;
}

static sw_value *metric_value(const sw_metric *m)
{
    sw_value *v;

    if (!m->name)
        return sw_value_null();
    v = sw_value_map();
    sw_value_map_set(v, "name", sw_value_str(m->name));
    sw_value_map_set(
        v, "goal",
        sw_value_str(m->goal == SW_GOAL_MAXIMIZE ? "maximize" : "minimize"));
    sw_value_map_set(v, "target", num_or_null(m->has_target, m->target));
    return v;
}

/* A grid's size: {"size": N, "saturated": false}; saturated, N is
 * 2^64 - 1 and the grid has more points. Null for other methods. */
static sw_value *grid_value(const sw_spec *spec)
{
    uint64_t n;
    bool saturated;
    sw_value *v;

    if (spec->method != SW_METHOD_GRID ||
        sw_grid_size(spec, &n, &saturated) != SW_OK) {
        sw_error_clear();
        return sw_value_null();
    }
    v = sw_value_map();
    sw_value_map_set(v, "size",
                     n <= INT64_MAX ? sw_value_int((int64_t)n)
                                    : sw_value_float((double)n));
    sw_value_map_set(v, "saturated", sw_value_bool(saturated));
    return v;
}

static sw_value *resources_value(const sw_resources *r)
{
    sw_value *v;

    if (!r->has_gpus && !r->gpu_memory_mb && !r->gpu_memory_auto)
        return sw_value_null();
    v = sw_value_map();
    sw_value_map_set(v, "gpus", num_or_null(r->has_gpus, r->gpus));
    sw_value_map_set(v, "gpu_memory_mib",
                     r->gpu_memory_mb ? sw_value_int(r->gpu_memory_mb)
                                      : sw_value_null());
    sw_value_map_set(v, "gpu_memory_auto", sw_value_bool(r->gpu_memory_auto));
    return v;
}

static sw_value *budget_value(const sw_budget *bu)
{
    sw_value *v;

    if (isnan(sw_budget_spent(bu, 0, 0, 0, NULL, NULL)))
        return sw_value_null();
    v = sw_value_map();
    sw_value_map_set(v, "gpu_hours",
                     num_or_null(bu->gpu_hours > 0, bu->gpu_hours));
    sw_value_map_set(v, "trial_hours",
                     num_or_null(bu->trial_hours > 0, bu->trial_hours));
    sw_value_map_set(v, "hours", num_or_null(bu->hours > 0, bu->hours));
    return v;
}

sw_value *sw_cli_describe_value(const sw_spec *spec)
{
    sw_value *v = sw_value_map(), *params = sw_value_list();
    sw_value *slurm = sw_value_list();
    const char *stop = spec->early_terminate.type;

    for (size_t i = 0; i < spec->n_params; i++)
        sw_value_list_push(params, param_value(&spec->params[i]));
    for (size_t i = 0; i < spec->n_slurm_args; i++)
        sw_value_list_push(slurm, sw_value_str(spec->slurm_args[i]));
    sw_value_map_set(v, "method", sw_value_str(sw_method_name(spec->method)));
    sw_value_map_set(v, "metric", metric_value(&spec->metric));
    sw_value_map_set(v, "parameters", params);
    sw_value_map_set(v, "grid", grid_value(spec));
    sw_value_map_set(v, "run_cap",
                     spec->run_cap ? sw_value_int(spec->run_cap)
                                   : sw_value_null());
    sw_value_map_set(v, "early_terminate",
                     stop ? sw_value_str(stop) : sw_value_null());
    sw_value_map_set(v, "resources", resources_value(&spec->resources));
    sw_value_map_set(v, "gpus",
                     spec->gpus ? sw_value_str(spec->gpus) : sw_value_null());
    sw_value_map_set(v, "slurm", slurm);
    sw_value_map_set(v, "budget", budget_value(&spec->budget));
    return v;
}
