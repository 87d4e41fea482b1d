/*
 * spec_gpus.c - the sweep file's GPU keys: `resources` (what each trial
 * asks for: a fraction of a device or whole devices, and memory) and
 * `gpus` (the machine's GPUs, declared). What the values mean, and the
 * packing they drive, is in docs/gpus.md.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sweeps/gpus.h"
#include "sweeps/spec_internal.h"

/* "40GiB", "512 MiB", "1.5g", a number of MiB, or `auto` (learned from
 * the first trial): in binary units, as nvidia-smi counts them. */
static void gpu_memory(sw_spec__ctx *c, const sw_value *v, const char *path)
{
    sw_resources *r = &c->spec->resources;
    double mb = 0;

    if (v->type == SW_STR && strcmp(v->u.s, "auto") == 0) {
        r->gpu_memory_auto = true;
        return;
    }
    if (v->type == SW_STR) {
        if (!sw_gpus_parse_size(v->u.s, true, &mb)) {
            sw_spec__err(c, v, path,
                         "must be a size such as 40GiB or 512MiB, a "
                         "number of MiB, or auto, not '%s'",
                         v->u.s);
            return;
        }
    } else if (!sw_spec__want_number(c, v, path, &mb)) {
        return;
    }
    if (!(mb > 0 && mb < 9e15)) {
        sw_spec__err(c, v, path,
                     "must be a size above 0 (leave it out to pack trials "
                     "by `gpus` alone)");
        return;
    }
    r->gpu_memory_mb = (int64_t)ceil(mb);
}

/* A fraction of one GPU (shared), or a whole number of GPUs. */
static void gpus_count(sw_spec__ctx *c, const sw_value *v, const char *path)
{
    sw_resources *r = &c->spec->resources;

    if (!sw_spec__want_number(c, v, path, &r->gpus))
        return;
    if (!(r->gpus >= 0 && r->gpus <= SW_GPUS_MAX_TRIAL))
        sw_spec__err(c, v, path, "must be from 0 to %d", SW_GPUS_MAX_TRIAL);
    else if (r->gpus > 1 && r->gpus != floor(r->gpus))
        sw_spec__err(c, v, path,
                     "must be a fraction of one GPU (below 1) or a whole "
                     "number of GPUs, not %g",
                     r->gpus);
    else
        r->has_gpus = true;
}

static void resources_key(sw_spec__ctx *c, const char *key, const sw_value *v,
                          const char *path, void *arg)
{
    (void)arg;
    if (strcmp(key, "gpus") == 0)
        gpus_count(c, v, path);
    else if (strcmp(key, "gpu_memory") == 0)
        gpu_memory(c, v, path);
    else
        sw_spec__unknown_key_in(c, key, v, path, "gpus gpu_memory");
}

/* The GPUs of the machine, declared (docs/gpus.md): a count, `none`, or
 * a richer declaration such as 2x80GiB,80GiB:mig=3g.40gb+3g.40gb. */
bool sw_resources_ask_gpu(const sw_resources *res)
{
    return (res->has_gpus && res->gpus > 0) || res->gpu_memory_mb > 0 ||
           res->gpu_memory_auto;
}

void sw_spec__top_gpus(sw_spec__ctx *c, const sw_value *v, const char *path)
{
    sw_gpu_inventory inv;
    char *text;

    if (v->type == SW_INT && v->u.i >= 0)
        text = sw_aprintf("%lld", (long long)v->u.i);
    else if (v->type == SW_STR)
        text = sw_strdup(v->u.s);
    else {
        sw_spec__err(c, v, path,
                     "must be a count of GPUs, none, or a declaration "
                     "such as 2x80GiB");
        return;
    }
    sw_gpus_init(&inv);
    if (sw_gpus_declare(&inv, text) != SW_OK) {
        sw_spec__err(c, v, path, "%s", sw_error_last());
        free(text);
    } else {
        free(c->spec->gpus);
        c->spec->gpus = text;
    }
    sw_gpus_dispose(&inv);
}

void sw_spec__top_resources(sw_spec__ctx *c, const sw_value *v,
                            const char *path)
{
    const sw_resources *r = &c->spec->resources;

    if (!sw_spec__want(c, v, path, SW_MAP))
        return;
    sw_spec__each_key(c, v, path, resources_key, NULL);
    if (r->has_gpus && r->gpus == 0 && (r->gpu_memory_mb || r->gpu_memory_auto))
        sw_spec__err(c, v, path,
                     "gpu_memory needs gpus above 0 (gpus: 0 runs trials "
                     "without a GPU)");
}
