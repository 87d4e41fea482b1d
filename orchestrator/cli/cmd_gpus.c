/*
 * cmd_gpus.c - `sweep gpus [FILE] [--gpus SPEC] [--json]`: the GPUs and
 * MIG slices sweep sees, their memory and how busy they are; with a
 * sweep file, how many of its trials they hold at once, or why none
 * ever fits (exit 2, as `sweep run` will refuse it).
 *
 * The inventory is NVML's (limited by CUDA_VISIBLE_DEVICES), or a
 * declared one: --gpus, else the file's `gpus:`. No GPU is not an
 * error: the command says why there are none and exits 0. It only
 * reads; nothing on a GPU changes.
 *
 * Each device's `runs` are the runs of any sweep in the sweep home that
 * are running and hold it, as the engine records them (runs.gpus).
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "backends/gpu.h"
#include "orchestrator/cli/cli.h"
#include "orchestrator/engine/engine.h"
#include "orchestrator/packing.h"
#include "sweeps/json.h"

/* The runs holding each device: runs[i] a list of {"run", "share",
 * "memory"} for inv->devices[i]. */
typedef struct {
    const sw_gpu_inventory *inv;
    sw_value **runs;
} holders;

static const char help[] =
    "usage: sweep gpus [FILE] [--gpus SPEC] [--json]\n\n"
    "The GPUs and MIG slices sweep sees (through NVML, limited by\n"
    "CUDA_VISIBLE_DEVICES), their memory in use and utilisation. A GPU in\n"
    "MIG mode is never given out whole: its slices are the devices. While\n"
    "sweeps run, the runs holding each device ($SWEEP_HOME's store).\n\n"
    "  FILE         also say how many trials of this sweep file the\n"
    "               devices hold at once (exit 2 when none ever fits)\n"
    "  --gpus SPEC  a declared inventory instead of NVML: N, none, or\n"
    "               e.g. 2x80GiB,80GiB:mig=3g.40gb+3g.40gb (docs/gpus.md)\n"
    "  --json       one JSON object, for scripts\n";

static bool find_device(const sw_gpu_inventory *inv, const char *key,
                        size_t *at)
{
    bool same = false;
    char *k;

    for (*at = 0; !same && *at < inv->n_devices; ++*at) {
        k = sw_gpus_device_key(inv, *at);
        same = strcmp(k, key) == 0;
        free(k);
    }
    --*at;
    return same;
}

static sw_value *clone_or_null(const sw_value *map, const char *key)
{
    const sw_value *v = sw_value_map_get(map, key);

    return v ? sw_value_clone(v) : sw_value_null();
}

static int add_holder(void *ctx, const char *run_id, const char *json)
{
    holders *h = ctx;
    sw_value *v = NULL, *devs, *entry;
    size_t i, at;

    if (sw_json_parse(&v, json, strlen(json)) != SW_OK ||
        !(devs = sw_value_map_get(v, "devices")) || devs->type != SW_LIST) {
        sw_value_free(v);
        return SW_OK; /* not ours to judge here */
    }
    for (i = 0; i < devs->u.list.len; i++) {
        if (devs->u.list.items[i]->type != SW_STR ||
            !find_device(h->inv, devs->u.list.items[i]->u.s, &at))
            continue;
        entry = sw_value_map();
        sw_value_map_set(entry, "run", sw_value_str(run_id));
        sw_value_map_set(entry, "share", clone_or_null(v, "share"));
        sw_value_map_set(entry, "memory", clone_or_null(v, "memory"));
        if (!h->runs[at])
            h->runs[at] = sw_value_list();
        sw_value_list_push(h->runs[at], entry);
    }
    sw_value_free(v);
    return SW_OK;
}

/* The runs of the sweep home's store that hold the devices now; none
 * when there is no store (no sweep ever ran here). */
static void load_holders(holders *h, const sw_gpu_inventory *inv)
{
    char *path = sw_aprintf("%s/sweep.db", sw_engine_home());
    sw_store *st = NULL;
    struct stat sb;

    h->inv = inv;
    h->runs = sw_calloc(inv->n_devices + 1, sizeof(*h->runs));
    if (stat(path, &sb) == 0 && sw_store_open(&st, path, false) == SW_OK &&
        sw_store_gpu_holders(st, add_holder, h) != SW_OK)
        fprintf(stderr, "sweep gpus: %s\n", sw_error_last());
    sw_store_close(st);
    free(path);
}

static void free_holders(holders *h)
{
    size_t i;

    for (i = 0; h->runs && i < h->inv->n_devices; i++)
        sw_value_free(h->runs[i]);
    free(h->runs);
}

/* "3f2a9c01-1, 3f2a9c01-2" for the table; NULL when none. */
static sw_value *runs_cell(const sw_value *runs)
{
    sw_buf b = SW_BUF_INIT;
    sw_value *cell;
    size_t i;

    if (!runs || runs->u.list.len == 0)
        return sw_value_null();
    for (i = 0; i < runs->u.list.len; i++)
        sw_buf_printf(&b, "%s%s", i ? ", " : "",
                      sw_value_map_get(runs->u.list.items[i], "run")->u.s);
    cell = sw_value_str(sw_buf_cstr(&b));
    sw_buf_dispose(&b);
    return cell;
}

static sw_value *str_or_null(const char *s)
{
    return s ? sw_value_str(s) : sw_value_null();
}

static sw_value *util_value(int util)
{
    return util >= 0 ? sw_value_int(util) : sw_value_null();
}

static sw_value *device_json(const sw_gpu_device *d, sw_value *runs)
{
    sw_value *m = sw_value_map();

    sw_value_map_set(m, "uuid", str_or_null(d->uuid));
    sw_value_map_set(m, "name", str_or_null(d->name));
    sw_value_map_set(m, "mig_index",
                     d->mig >= 0 ? sw_value_int(d->mig) : sw_value_null());
    sw_value_map_set(m, "slices", sw_value_int(d->slices));
    sw_value_map_set(m, "gpu_instance",
                     d->instance >= 0 ? sw_value_int(d->instance)
                                      : sw_value_null());
    sw_value_map_set(m, "memory_total", sw_value_int((int64_t)d->total_bytes));
    sw_value_map_set(m, "memory_used", sw_value_int((int64_t)d->used_bytes));
    sw_value_map_set(m, "utilization", util_value(d->util));
    sw_value_map_set(m, "runs", runs ? sw_value_clone(runs) : sw_value_list());
    return m;
}

static sw_value *gpu_json(const sw_gpu_inventory *inv, size_t g,
                          const holders *h)
{
    const sw_gpu *gpu = &inv->gpus[g];
    sw_value *m = sw_value_map(), *devs = sw_value_list();
    size_t i;

    sw_value_map_set(m, "index", sw_value_int(gpu->index));
    sw_value_map_set(m, "uuid", str_or_null(gpu->uuid));
    sw_value_map_set(m, "name", str_or_null(gpu->name));
    sw_value_map_set(m, "memory_total",
                     sw_value_int((int64_t)gpu->total_bytes));
    sw_value_map_set(m, "memory_used", sw_value_int((int64_t)gpu->used_bytes));
    sw_value_map_set(m, "utilization", util_value(gpu->util));
    sw_value_map_set(m, "mig", sw_value_bool(gpu->mig));
    for (i = 0; i < inv->n_devices; i++)
        if (inv->devices[i].gpu == g)
            sw_value_list_push(devs, device_json(&inv->devices[i], h->runs[i]));
    sw_value_map_set(m, "devices", devs);
    return m;
}

/* The whole inventory as one object; `fit` (consumed) may be NULL. */
static void print_json(const sw_gpu_inventory *inv, sw_value *fit,
                       const holders *h)
{
    sw_value *doc = sw_value_map(), *gpus = sw_value_list();
    sw_buf b = SW_BUF_INIT;
    size_t i;

    sw_value_map_set(
        doc, "source",
        sw_value_str(inv->source == SW_GPUS_NVML ? "nvml" : "declared"));
    sw_value_map_set(doc, "driver", str_or_null(inv->driver));
    sw_value_map_set(doc, "reason", str_or_null(inv->reason));
    sw_value_map_set(doc, "notes", str_or_null(inv->notes));
    for (i = 0; i < inv->n_gpus; i++)
        sw_value_list_push(gpus, gpu_json(inv, i, h));
    sw_value_map_set(doc, "gpus", gpus);
    sw_value_map_set(doc, "devices", sw_value_int((int64_t)inv->n_devices));
    if (fit)
        sw_value_map_set(doc, "sweep", fit);
    sw_value_write_json(&b, doc, false);
    printf("%s\n", sw_buf_cstr(&b));
    sw_buf_dispose(&b);
    sw_value_free(doc);
}

/* "10 GiB / 140.4 GiB" (used / total), or the total alone when declared. */
static sw_value *memory_cell(uint64_t used, uint64_t total, bool nvml)
{
    sw_buf b = SW_BUF_INIT;

    if (!total)
        return sw_value_str("unknown");
    if (nvml) {
        sw_gpus_put_size(&b, used);
        sw_buf_puts(&b, " / ");
    }
    sw_gpus_put_size(&b, total);
    {
        sw_value *v = sw_value_str(sw_buf_cstr(&b));

        sw_buf_dispose(&b);
        return v;
    }
}

static sw_value *util_cell(int util)
{
    char s[16];

    if (util < 0)
        return sw_value_null();
    snprintf(s, sizeof(s), "%d%%", util);
    return sw_value_str(s);
}

/* Adds a row of 7 cells to a table of 6 or 7 columns (the runs column
 * is left out while no run holds a device). */
static void add_row(sw_table *t, sw_value **row)
{
    if (t->ncols == 6)
        sw_value_free(row[6]);
    sw_table_add(t, row);
}

/* The device that is GPU `g` whole; n_devices when it has none (MIG). */
static size_t whole_device(const sw_gpu_inventory *inv, size_t g)
{
    size_t i;

    for (i = 0; i < inv->n_devices; i++)
        if (inv->devices[i].gpu == g && inv->devices[i].mig < 0)
            break;
    return i;
}

static void add_gpu_row(sw_table *t, const sw_gpu_inventory *inv, size_t g,
                        const holders *h)
{
    const sw_gpu *gpu = &inv->gpus[g];
    bool nvml = inv->source == SW_GPUS_NVML;
    size_t d = whole_device(inv, g);
    sw_value *row[7];

    row[0] = sw_value_int(gpu->index);
    row[1] = gpu->mig ? sw_value_str("MIG mode") : sw_value_null();
    row[2] = str_or_null(gpu->name);
    row[3] = str_or_null(gpu->uuid);
    row[4] = memory_cell(gpu->used_bytes, gpu->total_bytes, nvml);
    row[5] = util_cell(gpu->util);
    row[6] = runs_cell(d < inv->n_devices ? h->runs[d] : NULL);
    add_row(t, row);
}

static void add_slice_row(sw_table *t, const sw_gpu_inventory *inv, size_t i,
                          const holders *h)
{
    const sw_gpu_device *d = &inv->devices[i];
    sw_value *row[7];
    char *slice;

    if (d->slices)
        slice = sw_aprintf("%d (%u slice%s)", d->mig, d->slices,
                           d->slices == 1 ? "" : "s");
    else
        slice = sw_aprintf("%d", d->mig);
    row[0] = sw_value_int(inv->gpus[d->gpu].index);
    row[1] = sw_value_str(slice);
    row[2] = str_or_null(d->name);
    row[3] = str_or_null(d->uuid);
    row[4] =
        memory_cell(d->used_bytes, d->total_bytes, inv->source == SW_GPUS_NVML);
    row[5] = util_cell(d->util);
    row[6] = runs_cell(h->runs[i]);
    add_row(t, row);
    free(slice);
}

static bool any_holder(const holders *h)
{
    size_t i;

    for (i = 0; i < h->inv->n_devices; i++)
        if (h->runs[i])
            return true;
    return false;
}

static void print_human(const sw_gpu_inventory *inv, const holders *h)
{
    static const char *const cols[] = {"gpu",    "mig",  "name", "uuid",
                                       "memory", "util", "runs"};
    /* memory: used / total as NVML read it; the total when declared */
    sw_table t;
    size_t g, i;

    if (inv->n_gpus == 0) {
        printf("no GPUs: %s\n", inv->reason ? inv->reason : "none found");
        return;
    }
    if (inv->source == SW_GPUS_NVML)
        printf("NVML, driver %s: ", inv->driver ? inv->driver : "unknown");
    else
        printf("declared: ");
    printf("%zu GPU%s, %zu device%s for trials\n", inv->n_gpus,
           inv->n_gpus == 1 ? "" : "s", inv->n_devices,
           inv->n_devices == 1 ? "" : "s");
    /* the runs column only while runs hold devices */
    sw_table_init(&t, any_holder(h) ? 7 : 6, cols);
    for (g = 0; g < inv->n_gpus; g++) {
        add_gpu_row(&t, inv, g, h);
        for (i = 0; inv->gpus[g].mig && i < inv->n_devices; i++)
            if (inv->devices[i].gpu == g)
                add_slice_row(&t, inv, i, h);
    }
    sw_table_print(&t, SW_TABLE_HUMAN, stdout);
    sw_table_dispose(&t);
    if (inv->reason)
        printf("no GPU for trials: %s\n", inv->reason);
    if (inv->notes)
        printf("note: %s\n", inv->notes);
}

/* What the sweep file's trials ask for, against the inventory: how many
 * fit at once, or why none ever does (*never). NULL when they want no
 * GPU. */
static sw_value *sweep_fit(const sw_spec *spec, const sw_gpu_inventory *inv,
                           bool *never, sw_buf *why)
{
    sw_pack_device *devs = sw_calloc(inv->n_devices + 1, sizeof(*devs));
    sw_value *fit = NULL;
    sw_pack_request r;

    *never = false;
    sw_pack_devices_from(devs, inv);
    if (inv->n_devices == 0 && !sw_resources_ask_gpu(&spec->resources)) {
        /* as sweep run does: no GPU here, none asked for, none used */
    } else if (sw_pack_request_make(&r, &spec->resources, 0)) {
        fit = sw_value_map();
        *never = !sw_pack_ever_fits(devs, inv->n_devices, &r, why);
        sw_value_map_set(fit, "fits", sw_value_bool(!*never));
        sw_value_map_set(fit, "why",
                         *never ? sw_value_str(sw_buf_cstr(why))
                                : sw_value_null());
        sw_value_map_set(
            fit, "parallel",
            sw_value_int((int64_t)sw_pack_capacity(devs, inv->n_devices, &r)));
    }
    free(devs);
    return fit;
}

static void print_fit_human(const char *file, const sw_value *fit,
                            const sw_spec *spec)
{
    const sw_value *why = sw_value_map_get(fit, "why");
    const sw_value *par = sw_value_map_get(fit, "parallel");

    if (why->type != SW_STR)
        printf("%s: %lld trial%s at once%s\n", file, (long long)par->u.i,
               par->u.i == 1 ? "" : "s",
               spec->resources.gpu_memory_auto
                   ? " until gpu_memory: auto learns a trial's memory"
                   : "");
}

/* The inventory: --gpus, else the file's gpus:, else NVML. */
static int get_inventory(sw_gpu_inventory *inv, const char *declared,
                         const sw_spec *spec)
{
    if (!declared && spec && spec->gpus)
        declared = spec->gpus;
    if (!declared) {
        sw_gpu_discover(inv);
        return SW_EXIT_OK;
    }
    if (sw_gpus_declare(inv, declared) != SW_OK)
        return sw_cli_usage("gpus", "--gpus: %s", sw_error_last());
    return SW_EXIT_OK;
}

static int show(const char *file, const char *declared, bool json)
{
    sw_gpu_inventory inv;
    sw_spec *spec = NULL;
    sw_value *fit = NULL;
    sw_buf why = SW_BUF_INIT;
    holders h = {NULL, NULL};
    bool never = false;
    int status = SW_EXIT_OK;

    sw_gpus_init(&inv);
    if (file && (status = sw_cli_load(&spec, file)) != SW_EXIT_OK)
        goto done;
    if ((status = get_inventory(&inv, declared, spec)) != SW_EXIT_OK)
        goto done;
    if (spec)
        fit = sweep_fit(spec, &inv, &never, &why);
    load_holders(&h, &inv);
    if (json) {
        print_json(&inv, fit, &h);
        fit = NULL;
    } else {
        print_human(&inv, &h);
        if (fit)
            print_fit_human(file, fit, spec);
        else if (spec && inv.n_devices == 0 &&
                 !sw_resources_ask_gpu(&spec->resources))
            printf("%s: trials run without GPUs here (no device, and its "
                   "resources ask for none)\n",
                   file);
        else if (spec)
            printf("%s: trials use no GPU (resources.gpus: 0)\n", file);
    }
    if (never)
        fprintf(stderr, "sweep gpus: %s: no trial can ever run: %s\n", file,
                sw_buf_cstr(&why));
    status = never ? SW_EXIT_USAGE : SW_EXIT_OK;
done:
    free_holders(&h);
    sw_value_free(fit);
    sw_buf_dispose(&why);
    sw_spec_free(spec);
    sw_gpus_dispose(&inv);
    return status;
}

int sw_cmd_gpus(int argc, char **argv)
{
    static const struct option opts[] = {{"help", no_argument, NULL, 'h'},
                                         {"json", no_argument, NULL, 'j'},
                                         {"gpus", required_argument, NULL, 'g'},
                                         {NULL, 0, NULL, 0}};
    const char *declared = NULL;
    bool json = false;
    int c;

    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        if (c == 'h') {
            fputs(help, stdout);
            return SW_EXIT_OK;
        } else if (c == 'j') {
            json = true;
        } else if (c == 'g') {
            declared = optarg;
        } else {
            return sw_cli_usage("gpus", "unknown option");
        }
    }
    if (optind < argc - 1)
        return sw_cli_usage("gpus", "expected at most one sweep file");
    return show(optind < argc ? argv[optind] : NULL, declared, json);
}
