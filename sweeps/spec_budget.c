/*
 * spec_budget.c - the sweep file's `budget`: how much a sweep may spend
 * before it starts no more trials, in GPU-hours, trial-hours or hours of
 * wall time (docs/sweep-file.md). The engine counts the spending
 * (orchestrator/budget.c).
 */
#include <string.h>

#include "sweeps/spec_internal.h"

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
