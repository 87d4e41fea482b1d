/*
 * gpus.c - the GPU inventory as plain data: building one, parsing a
 * declared one (`--gpus 2x80GiB,80GiB:mig=3g.40gb+3g.40gb`), and
 * narrowing one to what CUDA_VISIBLE_DEVICES shows.
 *
 * Nothing here touches a GPU: discovery (backends/nvml.c) fills the same
 * structures from NVML. A declaration is checked whole before anything
 * is added, so a refused one leaves the inventory empty.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sweeps/gpus.h"

#define MIB ((uint64_t)1 << 20)

void sw_gpus_init(sw_gpu_inventory *inv)
{
    memset(inv, 0, sizeof(*inv));
}

void sw_gpus_dispose(sw_gpu_inventory *inv)
{
    size_t i;

    if (!inv)
        return;
    for (i = 0; i < inv->n_gpus; i++) {
        free(inv->gpus[i].uuid);
        free(inv->gpus[i].name);
    }
    for (i = 0; i < inv->n_devices; i++) {
        free(inv->devices[i].uuid);
        free(inv->devices[i].name);
    }
    free(inv->gpus);
    free(inv->devices);
    free(inv->driver);
    free(inv->reason);
    free(inv->notes);
    sw_gpus_init(inv);
}

static char *dup_or_null(const char *s)
{
    return s ? sw_strdup(s) : NULL;
}

size_t sw_gpus_add_gpu(sw_gpu_inventory *inv, const sw_gpu *g)
{
    sw_gpu *copy;

    inv->gpus = sw_realloc(inv->gpus, (inv->n_gpus + 1) * sizeof(*inv->gpus));
    copy = &inv->gpus[inv->n_gpus];
    *copy = *g;
    copy->uuid = dup_or_null(g->uuid);
    copy->name = dup_or_null(g->name);
    return inv->n_gpus++;
}

void sw_gpus_add_device(sw_gpu_inventory *inv, const sw_gpu_device *d)
{
    sw_gpu_device *copy;

    inv->devices =
        sw_realloc(inv->devices, (inv->n_devices + 1) * sizeof(*inv->devices));
    copy = &inv->devices[inv->n_devices++];
    *copy = *d;
    copy->uuid = dup_or_null(d->uuid);
    copy->name = dup_or_null(d->name);
}

static char *vformat(const char *fmt, va_list ap)
{
    va_list again;
    char *s;
    int n;

    va_copy(again, ap);
    n = vsnprintf(NULL, 0, fmt, again);
    va_end(again);
    s = sw_malloc(n > 0 ? (size_t)n + 1 : 1);
    vsnprintf(s, n > 0 ? (size_t)n + 1 : 1, fmt, ap);
    return s;
}

void sw_gpus_set_reason(sw_gpu_inventory *inv, const char *fmt, ...)
{
    va_list ap;

    free(inv->reason);
    va_start(ap, fmt);
    inv->reason = vformat(fmt, ap);
    va_end(ap);
}

void sw_gpus_add_note(sw_gpu_inventory *inv, const char *fmt, ...)
{
    va_list ap;
    char *note, *joined;

    va_start(ap, fmt);
    note = vformat(fmt, ap);
    va_end(ap);
    if (!inv->notes) {
        inv->notes = note;
        return;
    }
    joined = sw_aprintf("%s; %s", inv->notes, note);
    free(inv->notes);
    free(note);
    inv->notes = joined;
}

/* Sizes ------------------------------------------------------------------ */

bool sw_gpus_parse_size(const char *s, bool bare_mib, double *mib)
{
    static const struct {
        const char *unit;
        double mib;
    } units[] = {{"m", 1},       {"mb", 1},       {"mib", 1},
                 {"g", 1024},    {"gb", 1024},    {"gib", 1024},
                 {"t", 1048576}, {"tb", 1048576}, {"tib", 1048576}};
    char *end;
    double x;
    size_t i;

    if (!((*s >= '0' && *s <= '9') || *s == '.'))
        return false;
    errno = 0;
    x = strtod(s, &end);
    if (errno || end == s || !isfinite(x))
        return false;
    while (*end == ' ')
        end++;
    if (!*end && bare_mib) {
        *mib = x;
        return x < 9e15;
    }
    for (i = 0; i < sizeof(units) / sizeof(*units); i++) {
        if (strcasecmp(end, units[i].unit) == 0) {
            *mib = x * units[i].mib;
            return *mib < 9e15;
        }
    }
    return false;
}

char *sw_gpus_device_key(const sw_gpu_inventory *inv, size_t i)
{
    const sw_gpu_device *d = &inv->devices[i];
    unsigned index = inv->gpus[d->gpu].index;

    if (d->uuid)
        return sw_strdup(d->uuid);
    return d->mig >= 0 ? sw_aprintf("%u/%d", index, d->mig)
                       : sw_aprintf("%u", index);
}

void sw_gpus_put_size(sw_buf *b, uint64_t bytes)
{
    double gib = (double)bytes / (double)(MIB << 10);

    if (bytes >= (MIB << 10))
        sw_buf_printf(b, "%.*f GiB", gib == floor(gib) ? 0 : 1, gib);
    else
        sw_buf_printf(b, "%llu MiB", (unsigned long long)(bytes / MIB));
}

/* Declarations ----------------------------------------------------------- */

typedef struct {
    unsigned slices;
    uint64_t bytes;
    char name[32];
} decl_slice;

typedef struct {
    unsigned count;
    uint64_t bytes; /* 0: unknown */
    bool mig;
    decl_slice slices[SW_GPUS_MAX_SLICES];
    size_t n_slices;
} decl_group;

/* A whole number from 1 at the start of *s, moving *s past it. */
static bool take_count(const char **s, unsigned max, unsigned *out)
{
    unsigned long v;
    char *end;

    if (!isdigit((unsigned char)**s))
        return false;
    errno = 0;
    v = strtoul(*s, &end, 10);
    if (errno || v < 1 || v > max)
        return false;
    *out = (unsigned)v;
    *s = end;
    return true;
}

/* "3g.40gb", "1c.3g.20gb" (a compute instance: its GPU instance's
 * slices), "2x1g.10gb" (two of them). */
static int parse_profile(const char *p, decl_slice *out, unsigned *times)
{
    const char *s = p;
    unsigned slices, gb;

    *times = 1;
    if (strchr(s, 'x') && !take_count(&s, SW_GPUS_MAX_SLICES, times))
        goto bad;
    if (*s == 'x')
        s++;
    if (strchr(s, 'c') && (!take_count(&s, SW_GPUS_MAX_SLICES, &slices) ||
                           *s++ != 'c' || *s++ != '.'))
        goto bad;
    if (!take_count(&s, SW_GPUS_MAX_SLICES, &slices) || *s++ != 'g' ||
        *s++ != '.' || !take_count(&s, 1u << 20, &gb) ||
        strcasecmp(s, "gb") != 0)
        goto bad;
    out->slices = slices;
    out->bytes = (uint64_t)gb << 30;
    snprintf(out->name, sizeof(out->name), "%ug.%ugb", slices, gb);
    return SW_OK;
bad:
    return sw_error_set(SW_EINVALID,
                        "MIG profile '%s' is not one such as 3g.40gb or "
                        "2x1g.10gb (slices 'g', memory 'gb')",
                        p);
}

/* "3g.40gb+2x1g.10gb": the slices of one GPU, at most 7 slices. */
static int parse_mig(char *list, decl_group *g)
{
    unsigned total = 0, times, i;
    char *part, *next, whole[256];
    decl_slice one;
    int error;

    snprintf(whole, sizeof(whole), "%s", list);
    for (part = list; part; part = next) {
        next = strchr(part, '+');
        if (next)
            *next++ = '\0';
        if ((error = parse_profile(part, &one, &times)))
            return error;
        for (i = 0; i < times; i++) {
            total += one.slices;
            if (total > SW_GPUS_MAX_SLICES)
                return sw_error_set(SW_EINVALID,
                                    "mig=%s: more than the %d slices a "
                                    "GPU has",
                                    whole, SW_GPUS_MAX_SLICES);
            g->slices[g->n_slices++] = one;
        }
    }
    g->mig = true;
    return SW_OK;
}

/* The size of a group's GPUs, "80GiB" (a unit is required). */
static int parse_group_size(const char *s, const char *group, uint64_t *out)
{
    double mib;

    if (!*s)
        return sw_error_set(SW_EINVALID,
                            "'%s': a memory size such as 80GiB goes after "
                            "'x'",
                            group);
    if (!sw_gpus_parse_size(s, false, &mib) || mib < 1)
        return sw_error_set(SW_EINVALID,
                            "'%s': '%s' is neither a count of GPUs nor a "
                            "memory size such as 80GiB",
                            group, s);
    *out = (uint64_t)ceil(mib) * MIB;
    return SW_OK;
}

/* Checks that the MIG slices of a GPU of known memory fit in it. */
static int check_mig_memory(const decl_group *g, const char *group)
{
    uint64_t sum = 0;
    size_t i;

    for (i = 0; i < g->n_slices; i++)
        sum += g->slices[i].bytes;
    if (g->bytes && sum > g->bytes)
        return sw_error_set(SW_EINVALID,
                            "'%s': its MIG slices hold %llu GiB, more than "
                            "the GPU's memory",
                            group, (unsigned long long)(sum >> 30));
    return SW_OK;
}

/* One group: "N", "[Nx]SIZE", either followed by ":mig=...". */
static int parse_group(char *group, decl_group *g)
{
    char *mig = strchr(group, ':'), *x;
    const char *s = group;
    char copy[256];
    int error;

    snprintf(copy, sizeof(copy), "%s", group);
    memset(g, 0, sizeof(*g));
    g->count = 1;
    if (mig) {
        *mig++ = '\0';
        if (strncasecmp(mig, "mig=", 4) != 0 || !mig[4])
            return sw_error_set(SW_EINVALID,
                                "'%s': after ':' comes mig=PROFILE+..., "
                                "such as mig=3g.40gb+3g.40gb",
                                copy);
        if ((error = parse_mig(mig + 4, g)))
            return error;
    }
    x = strchr(group, 'x');
    if (!x && s[strspn(s, "0123456789")] == '\0') {
        if (!take_count(&s, SW_GPUS_MAX, &g->count))
            return sw_error_set(SW_EINVALID,
                                "'%s': a count of GPUs goes from 1 to %d", copy,
                                SW_GPUS_MAX);
        return SW_OK;
    }
    if (x && (!take_count(&s, SW_GPUS_MAX, &g->count) || s != x))
        return sw_error_set(SW_EINVALID,
                            "'%s': before 'x' comes a count of GPUs from 1 "
                            "to %d",
                            copy, SW_GPUS_MAX);
    if ((error = parse_group_size(x ? x + 1 : group, copy, &g->bytes)))
        return error;
    return check_mig_memory(g, copy);
}

static void add_group(sw_gpu_inventory *inv, const decl_group *g)
{
    sw_gpu gpu = {0};
    sw_gpu_device dev = {0};
    unsigned i;
    size_t k;

    for (i = 0; i < g->count; i++) {
        gpu.index = (unsigned)inv->n_gpus;
        gpu.total_bytes = g->bytes;
        gpu.util = -1;
        gpu.mig = g->mig;
        dev.gpu = sw_gpus_add_gpu(inv, &gpu);
        dev.util = -1;
        dev.instance = -1;
        if (!g->mig) {
            dev.mig = -1;
            dev.total_bytes = g->bytes;
            sw_gpus_add_device(inv, &dev);
        }
        for (k = 0; g->mig && k < g->n_slices; k++) {
            dev.mig = (int)k;
            dev.name = (char *)g->slices[k].name; /* copied */
            dev.slices = g->slices[k].slices;
            dev.total_bytes = g->slices[k].bytes;
            sw_gpus_add_device(inv, &dev);
        }
    }
}

/* Splits `text` at commas into groups and checks them all. */
static int parse_groups(char *text, decl_group **out, size_t *n)
{
    char *part, *next;
    size_t total = 0;
    int error = SW_OK;

    *out = NULL;
    *n = 0;
    for (part = text; part && !error; part = next) {
        next = strchr(part, ',');
        if (next)
            *next++ = '\0';
        part += strspn(part, " ");
        part[strcspn(part, " ")] = '\0';
        if (!*part) {
            error = sw_error_set(SW_EINVALID, "an empty part between commas");
            break;
        }
        *out = sw_realloc(*out, (*n + 1) * sizeof(**out));
        error = parse_group(part, &(*out)[*n]);
        total += error ? 0 : (*out)[(*n)++].count;
        if (!error && total > SW_GPUS_MAX)
            error = sw_error_set(SW_EINVALID, "more than %d GPUs", SW_GPUS_MAX);
    }
    return error;
}

int sw_gpus_declare(sw_gpu_inventory *inv, const char *text)
{
    decl_group *groups = NULL;
    size_t n = 0, i;
    char *copy;
    int error;

    inv->source = SW_GPUS_DECLARED;
    if (strcasecmp(text, "none") == 0 || strcmp(text, "0") == 0) {
        sw_gpus_set_reason(inv, "declared without GPUs ('%s')", text);
        return SW_OK;
    }
    copy = sw_strdup(text);
    error = parse_groups(copy, &groups, &n);
    for (i = 0; !error && i < n; i++)
        add_group(inv, &groups[i]);
    free(groups);
    free(copy);
    return error;
}

/* CUDA_VISIBLE_DEVICES ----------------------------------------------------- */

/* The one position in `items` (uuids, stride apart) that `prefix` starts,
 * or -1 when none or several do. */
static long find_uuid(const sw_gpu_inventory *inv, const char *prefix,
                      bool slices)
{
    size_t i, n = slices ? inv->n_devices : inv->n_gpus;
    long found = -1;

    for (i = 0; i < n; i++) {
        const char *u = slices ? inv->devices[i].uuid : inv->gpus[i].uuid;

        if (!u || strncasecmp(u, prefix, strlen(prefix)) != 0)
            continue;
        if (found >= 0)
            return -1; /* ambiguous: CUDA refuses it too */
        found = (long)i;
    }
    return found;
}

static long find_index(const sw_gpu_inventory *inv, const char *s)
{
    unsigned long v;
    char *end;
    size_t i;

    errno = 0;
    v = strtoul(s, &end, 10);
    if (errno || *end || end == s)
        return -1;
    for (i = 0; i < inv->n_gpus; i++)
        if (inv->gpus[i].index == v)
            return (long)i;
    return -1;
}

/* Marks what one entry names in keep_gpu / keep_dev; false when it names
 * nothing (CUDA ignores it and every entry after it). */
static bool mark_entry(const sw_gpu_inventory *inv, const char *e,
                       bool *keep_gpu, bool *keep_dev)
{
    long g = -1, d = -1;
    size_t i;

    if (isdigit((unsigned char)e[0]))
        g = find_index(inv, e);
    else if (strncasecmp(e, "GPU-", 4) == 0 && e[4])
        g = find_uuid(inv, e, false);
    else if (strncasecmp(e, "MIG-", 4) == 0 && e[4])
        d = find_uuid(inv, e, true);
    if (d >= 0) {
        keep_dev[d] = true;
        keep_gpu[inv->devices[d].gpu] = true;
        return true;
    }
    if (g < 0)
        return false;
    keep_gpu[g] = true;
    for (i = 0; i < inv->n_devices; i++)
        if (inv->devices[i].gpu == (size_t)g)
            keep_dev[i] = true;
    return true;
}

/* Keeps the marked GPUs and devices, renumbering devices' GPUs. */
static void keep_marked(sw_gpu_inventory *inv, const bool *keep_gpu,
                        const bool *keep_dev)
{
    size_t *pos = sw_calloc(inv->n_gpus + 1, sizeof(*pos));
    size_t i, k = 0;

    for (i = 0; i < inv->n_gpus; i++) {
        pos[i] = k;
        if (keep_gpu[i])
            inv->gpus[k++] = inv->gpus[i];
        else {
            free(inv->gpus[i].uuid);
            free(inv->gpus[i].name);
        }
    }
    inv->n_gpus = k;
    for (i = k = 0; i < inv->n_devices; i++) {
        if (keep_dev[i]) {
            inv->devices[k] = inv->devices[i];
            inv->devices[k++].gpu = pos[inv->devices[i].gpu];
        } else {
            free(inv->devices[i].uuid);
            free(inv->devices[i].name);
        }
    }
    inv->n_devices = k;
    free(pos);
}

void sw_gpus_restrict(sw_gpu_inventory *inv, const char *visible)
{
    bool *keep_gpu, *keep_dev;
    char *copy, *e, *next;

    if (!visible)
        return;
    keep_gpu = sw_calloc(inv->n_gpus + 1, sizeof(bool));
    keep_dev = sw_calloc(inv->n_devices + 1, sizeof(bool));
    copy = sw_strdup(visible);
    for (e = copy; e; e = next) {
        next = strchr(e, ',');
        if (next)
            *next++ = '\0';
        e += strspn(e, " ");
        e[strcspn(e, " ")] = '\0';
        if (!mark_entry(inv, e, keep_gpu, keep_dev))
            break;
    }
    keep_marked(inv, keep_gpu, keep_dev);
    if (inv->n_devices == 0 && !inv->reason)
        sw_gpus_set_reason(inv, "CUDA_VISIBLE_DEVICES='%s' hides every GPU",
                           visible);
    free(copy);
    free(keep_gpu);
    free(keep_dev);
}
