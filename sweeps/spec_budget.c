/*
 * spec_budget.c - the sweep file's `budget`: how much a sweep may spend
 * before it starts no more trials, in GPU-hours, trial-hours or hours of
 * wall time (docs/sweep-file.md). The engine counts the spending
 * (orchestrator/engine/budget.c).
 */
#include <math.h>
#include <string.h>

#include "sweeps/buf.h"
#include "sweeps/spec_internal.h"

/* The limits in one order, for both functions below. */
static const char *const units[] = {"GPU-hours", "trial-hours", "hours"};

static void limits(const sw_budget *b, double out[3])
{
    out[0] = b->gpu_hours;
    out[1] = b->trial_hours;
    out[2] = b->hours;
}

double sw_budget_spent(const sw_budget *b, double gpu_s, double trial_s,
                       double wall_s, const char **unit, double *limit)
{
    const double spent_s[3] = {gpu_s, trial_s, wall_s};
    double lim[3], most = NAN, f;
    size_t i, at = 3;

    limits(b, lim);
    for (i = 0; i < 3; i++) {
        if (!(lim[i] > 0))
            continue;
        f = spent_s[i] / 3600 / lim[i];
        if (isnan(most) || f > most) {
            most = f;
            at = i;
        }
    }
    if (unit)
        *unit = at < 3 ? units[at] : NULL;
    if (limit)
        *limit = at < 3 ? lim[at] : 0;
    return most;
}

void sw_budget_describe(sw_buf *out, const sw_budget *b)
{
    double lim[3];
    const char *sep = "";
    size_t i;

    limits(b, lim);
    for (i = 0; i < 3; i++) {
        if (lim[i] > 0) {
            sw_buf_printf(out, "%s%g %s", sep, lim[i], units[i]);
            sep = ", ";
        }
    }
}

static void budget_key(sw_spec__ctx *c, const char *key, const sw_value *v,
                       const char *path, void *arg)
{
    sw_budget *b = &c->spec->budget;
    double *at = strcmp(key, "gpu_hours") == 0     ? &b->gpu_hours
                 : strcmp(key, "trial_hours") == 0 ? &b->trial_hours
                 : strcmp(key, "hours") == 0       ? &b->hours
                                                   : NULL;

    (void)arg;
    if (!at)
        sw_spec__unknown_key_in(c, key, v, path, "gpu_hours trial_hours hours");
    else if (sw_spec__want_number(c, v, path, at) && !(*at > 0 && *at < 1e9))
        sw_spec__err(c, v, path, "must be a number of hours greater than 0");
}

void sw_spec__top_budget(sw_spec__ctx *c, const sw_value *v, const char *path)
{
    if (!sw_spec__want(c, v, path, SW_MAP))
        return;
    sw_spec__each_key(c, v, path, budget_key, NULL);
    if (v->u.map.len == 0)
        sw_spec__err(c, v, path,
                     "needs gpu_hours, trial_hours or hours (or leave it "
                     "out: no budget)");
}
