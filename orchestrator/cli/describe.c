/*
 * describe.c - a person's view of a search space: each parameter, its
 * kind and range, and how many trials the search can give.
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
