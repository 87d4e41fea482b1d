/*
 * devices.c - the engine's GPUs: which devices each trial is given, as
 * the packing policy (packing.c) decides, and how busy they are.
 *
 * At setup the inventory is read (NVML, limited by the
 * CUDA_VISIBLE_DEVICES sweep got, or a declared one) and a trial that
 * could never fit is refused before any sweep is made. Then:
 *   - fill() (lifecycle.c) asks sw_engine__gpus_room() before it starts a
 *     trial: devices are placed and held for it (the *reserve*) before
 *     its run exists, and the slot made next takes them; an attempt's
 *     devices go back when its slot is freed, whatever ended it;
 *   - placing reads NVML again when its last reading is older than
 *     FRESH_S, so memory other processes took meanwhile counts;
 *   - while trials hold devices, NVML is read on the worker pool every
 *     SAMPLE_S (every LEARN_S while `gpu_memory: auto` has nothing
 *     learned yet) and written to gpu_samples; each reading also tells
 *     apart the memory of this sweep's processes (NVML's per-process
 *     accounting, a process being this sweep's when its environment
 *     says SWEEP_ID) from other processes', and what each run used.
 *
 *   - other sweeps on this machine count (ledger.c): placing reads
 *     what they hold from the machine's GPU ledger and fits around it,
 *     under the ledger's lock, and what this sweep holds is written
 *     there whenever it changes; a trial that waits only for another
 *     sweep's devices is said once, and the ledger read again every
 *     LEDGER_S.
 *
 * Invariants: what a device holds is the sum of the grants of live
 * slots and the reserve; only the loop's thread touches them. NVML is
 * called from one piece of work at a time (and at setup, before the
 * loop). A run's devices are in its record (runs.gpus) before its
 * attempt is committed, so a resume counts them again.
 */
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backends/gpu.h"
#include "orchestrator/engine/engine_internal.h"
#include "orchestrator/engine/ledger.h"
#include "orchestrator/packing.h"
#include "sweeps/json.h"

#define SAMPLE_S 5.0 /* how often busy devices are sampled and stored */
#define LEARN_S 1.0  /* the same while gpu_memory: auto learns */
#define FRESH_S 1.0  /* placing reads NVML again when older */
#define ENVIRON_MAX (256 * 1024)
#define LEDGER_S 1.0 /* a trial waiting for other sweeps: read again */

struct sw_slot_gpus {
    sw_pack_grant grant;
    char *visible; /* its CUDA_VISIBLE_DEVICES */
    uint64_t peak; /* the most its processes were seen using on a device */
};

typedef struct {
    size_t dev;
    char *run_id;
    uint64_t bytes;
} seen_proc;

typedef struct {
    sw_engine_work work;
    char *sweep_id;
    sw_nvml *nvml;        /* the engine's; touched only here meanwhile */
    sw_gpu_inventory inv; /* a copy the worker writes */
    uint64_t *ours;       /* per device; UINT64_MAX: NVML cannot tell */
    seen_proc *procs;
    size_t n_procs, cap_procs;
    bool store; /* a periodic sample: written to gpu_samples */
} sample_work;

struct sw_engine_gpus {
    sw_gpu_inventory inv;
    sw_pack_device *devs; /* one per inv.devices */
    sw_resources res;
    sw_pack_request req;
    bool hide;        /* CPU only: every trial gets CUDA_VISIBLE_DEVICES= */
    uint64_t learned; /* gpu_memory: auto; 0: nothing learned yet */
    sw_pack_grant reserve;
    bool reserved;
    sw_nvml *nvml; /* NULL: declared, nothing to read */
    sample_work sample;
    bool sampling;
    double last_read, next_read, next_store; /* monotonic */
    uint64_t gen, failed_gen; /* changes to what is held; at a failed fit */
    double failed_read;
    bool waiting;      /* the last fit failed: a trial waits for room */
    sw_ledger *ledger; /* NULL: none (off, simulated, or it failed) */
    bool ledger_tried, told_wait;
    char **keys;           /* per device, as the ledger names it */
    uint32_t *their_share; /* per device: what other sweeps hold */
    uint64_t *their_bytes;
    char *their_who;    /* one of them, for the message */
    double ledger_read; /* monotonic */
};

static double now_mono(const sw_engine *e)
{
    return sw_clock_mono(e->clock);
}

static void join_ledger(sw_engine *e);
static void publish(sw_engine *e);

/* ---- the inventory -------------------------------------------------- */

static void copy_inventory(sw_gpu_inventory *dst, const sw_gpu_inventory *src)
{
    size_t i;

    sw_gpus_init(dst);
    dst->source = src->source;
    for (i = 0; i < src->n_gpus; i++)
        sw_gpus_add_gpu(dst, &src->gpus[i]);
    for (i = 0; i < src->n_devices; i++)
        sw_gpus_add_device(dst, &src->devices[i]);
}

/* NVML's inventory, limited by the CUDA_VISIBLE_DEVICES sweep got, with
 * NVML kept open for sampling; without NVML, none and the reason. */
static void discover(sw_engine_gpus *g)
{
    const char *visible = getenv("CUDA_VISIBLE_DEVICES");

    g->inv.source = SW_GPUS_NVML;
    if (sw_nvml_open(&g->nvml, NULL) != SW_OK) {
        sw_gpus_set_reason(&g->inv, "%s", sw_error_last());
        return;
    }
    sw_nvml_inventory(g->nvml, &g->inv);
    if (visible && g->inv.n_gpus)
        sw_gpus_restrict(&g->inv, visible);
    if (g->inv.n_devices == 0) {
        sw_nvml_close(g->nvml);
        g->nvml = NULL;
    }
}

/* ---- setup ---------------------------------------------------------- */

static void free_gpus(sw_engine_gpus *g)
{
    size_t i;

    if (!g)
        return;
    sw_ledger__close(g->ledger);
    for (i = 0; g->keys && i < g->inv.n_devices; i++)
        free(g->keys[i]);
    free(g->keys);
    free(g->their_share);
    free(g->their_bytes);
    free(g->their_who);
    sw_gpus_dispose(&g->inv);
    sw_gpus_dispose(&g->sample.inv);
    free(g->sample.ours);
    free(g->sample.procs);
    free(g->sample.sweep_id);
    sw_nvml_close(g->nvml);
    free(g->devs);
    free(g);
}

void sw_engine__gpus_free(sw_engine *e)
{
    free_gpus(e->gpus);
    e->gpus = NULL;
}

/* Whether `res` asks for a GPU in so many words (a share, devices or
 * memory). Without resources a trial gets a whole device only where
 * there are some, and runs as it always did where there are none. */
/* Says on stderr why no trial of `path` can ever run; SW_EINVALID. */
static int refuse(sw_engine *e, const char *path, const sw_engine_gpus *g,
                  const char *why)
{
    if (g->inv.n_devices == 0)
        sw_engine__notice(e, SW_NOTICE_ERROR,
                          "%s: no trial can ever run: trials ask for a GPU "
                          "(resources), and there is none: %s",
                          path,
                          g->inv.reason ? g->inv.reason
                                        : (g->inv.source == SW_GPUS_DECLARED
                                               ? "--gpus none"
                                               : "none found"));
    else
        sw_engine__notice(e, SW_NOTICE_ERROR, "%s: no trial can ever run: %s",
                          path, why);
    return SW_EINVALID;
}

/* The inventory for a sweep of e->spec: `declared` (`--gpus`, or the
 * file's `gpus:`), else NVML's. With no device and no request for one,
 * e->gpus stays NULL and trials are started as they always were. */
static int read_inventory(sw_engine *e, sw_engine_gpus *g, const char *declared)
{
    if (!declared) {
        discover(g);
        return SW_OK;
    }
    if (sw_gpus_declare(&g->inv, declared) != SW_OK) {
        sw_engine__notice(e, SW_NOTICE_ERROR, "sweep: --gpus: %s",
                          sw_error_last());
        return SW_EINVALID;
    }
    return SW_OK;
}

/* The devices as NVML last read them, this sweep's trials holding
 * nothing: what the default parallel and never-fits look at. */
static size_t capacity(const sw_engine_gpus *g)
{
    size_t n = g->inv.n_devices, i, cap;
    sw_pack_device *copy = sw_calloc(n + 1, sizeof(*copy));

    for (i = 0; i < n; i++) {
        copy[i] = g->devs[i];
        copy[i].held_bytes = 0;
        copy[i].held_share = 0;
        copy[i].trials = 0;
    }
    cap = sw_pack_capacity(copy, n, &g->req);
    free(copy);
    return cap;
}

int sw_engine__gpus_setup(sw_engine *e, const char *declared, const char *path)
{
    sw_engine_gpus *g;
    const sw_resources *res = &e->spec->resources;
    bool gpu;
    sw_buf why = SW_BUF_INIT;
    int error;

    /* a cluster places trials on its nodes' GPUs, not this machine's */
    if (e->ex && sw_executor_places_gpus(e->ex))
        return SW_OK;
    g = sw_calloc(1, sizeof(*g));
    sw_gpus_init(&g->inv);
    sw_gpus_init(&g->sample.inv);
    g->res = *res;
    if ((error = read_inventory(e, g, declared)) != SW_OK)
        goto done;
    gpu = sw_pack_request_make(&g->req, res, 0);
    g->hide = !gpu || (g->inv.source == SW_GPUS_DECLARED &&
                       g->inv.n_devices == 0 && !sw_resources_ask_gpu(res));
    if (!g->hide && g->inv.n_devices == 0 && !sw_resources_ask_gpu(res)) {
        free_gpus(g); /* no GPU, none asked for: as always */
        return SW_OK;
    }
    if (g->hide) { /* nothing to read while trials run */
        sw_nvml_close(g->nvml);
        g->nvml = NULL;
    }
    g->devs = sw_calloc(g->inv.n_devices + 1, sizeof(*g->devs));
    sw_pack_devices_from(g->devs, &g->inv);
    if (!g->hide &&
        !sw_pack_ever_fits(g->devs, g->inv.n_devices, &g->req, &why)) {
        error = refuse(e, path, g, sw_buf_cstr(&why));
        goto done;
    }
    g->failed_gen = UINT64_MAX; /* the first placing reads NVML */
    e->gpus = g;
    g = NULL;
done:
    sw_buf_dispose(&why);
    free_gpus(g);
    return error;
}

size_t sw_engine__gpus_parallel(const sw_engine *e)
{
    size_t n;

    if (!e->gpus || e->gpus->hide)
        return 0;
    n = capacity(e->gpus);
    return n ? n : 1;
}

static bool declared_slices(const sw_gpu_inventory *inv)
{
    size_t i;

    for (i = 0; i < inv->n_devices; i++)
        if (inv->devices[i].mig >= 0 && !inv->devices[i].uuid)
            return true;
    return false;
}

void sw_engine__gpus_report(sw_engine *e)
{
    const sw_engine_gpus *g = e->gpus;
    const sw_gpu_inventory *inv;
    size_t n;
    char *from;

    if (!g)
        return;
    inv = &g->inv;
    if (g->hide) {
        sw_engine__notice(e, SW_NOTICE_RESULT,
                          "sweep %s: trials run on CPU only "
                          "(CUDA_VISIBLE_DEVICES=)",
                          e->sweep.id);
        return;
    }
    n = sw_engine__gpus_parallel(e);
    from = inv->source == SW_GPUS_DECLARED ? sw_strdup("declared")
           : inv->driver && inv->driver[0]
               ? sw_aprintf("NVML, driver %s", inv->driver)
               : sw_strdup("NVML");
    /* what fits, and what runs when `parallel` (the file's, or
     * --parallel) allows fewer */
    if (e->parallel_set && e->parallel > 0 && (size_t)e->parallel < n)
        sw_engine__notice(
            e, SW_NOTICE_RESULT,
            "sweep %s: %zu GPU device%s (%s), room for %zu trials at once, "
            "%lld at a time by parallel%s",
            e->sweep.id, inv->n_devices, inv->n_devices == 1 ? "" : "s", from,
            n, (long long)e->parallel,
            g->res.gpu_memory_auto && !g->learned
                ? " until gpu_memory: auto learns a trial's memory"
                : "");
    else
        sw_engine__notice(
            e, SW_NOTICE_RESULT,
            "sweep %s: %zu GPU device%s (%s), %zu trial%s at once%s",
            e->sweep.id, inv->n_devices, inv->n_devices == 1 ? "" : "s", from,
            n, n == 1 ? "" : "s",
            g->res.gpu_memory_auto && !g->learned
                ? " until gpu_memory: auto learns a trial's memory"
                : "");
    if (inv->notes)
        sw_engine__notice(e, SW_NOTICE_RESULT, "sweep %s: note: %s",
                          e->sweep.id, inv->notes);
    if (declared_slices(inv))
        sw_engine__notice(e, SW_NOTICE_RESULT,
                          "sweep %s: note: declared MIG slices have no UUID: "
                          "trials on them are given their GPU's index",
                          e->sweep.id);
    free(from);
}

/* ---- grants --------------------------------------------------------- */

/* runs.gpus: the devices of `grant`, what it holds on each. */
static char *grant_json(const sw_engine_gpus *g, const sw_pack_grant *grant)
{
    sw_value *m = sw_value_map(), *list = sw_value_list();
    sw_buf b = SW_BUF_INIT;
    char *key;
    size_t i;

    for (i = 0; i < grant->n; i++) {
        key = sw_gpus_device_key(&g->inv, grant->devices[i]);
        sw_value_list_push(list, sw_value_str(key));
        free(key);
    }
    sw_value_map_set(m, "devices", list);
    sw_value_map_set(m, "share",
                     grant->share >= SW_PACK_UNIT
                         ? sw_value_int(1)
                         : sw_value_float((double)grant->share / SW_PACK_UNIT));
    sw_value_map_set(m, "memory", sw_value_int((int64_t)grant->bytes));
    sw_value_write_json(&b, m, false);
    sw_value_free(m);
    return sw_buf_detach(&b);
}

static void hold(sw_engine *e, sw_slot *s, const sw_pack_grant *grant)
{
    sw_engine_gpus *g = e->gpus;
    sw_buf b = SW_BUF_INIT;

    s->gpus = sw_calloc(1, sizeof(*s->gpus));
    s->gpus->grant = *grant;
    sw_pack_cuda_devices(&b, &g->inv, grant);
    s->gpus->visible = sw_buf_detach(&b);
    free(s->rec.gpus);
    s->rec.gpus = grant_json(g, grant);
}

void sw_engine__gpus_take(sw_engine *e, sw_slot *s)
{
    sw_engine_gpus *g = e->gpus;

    if (!g || g->hide || !g->reserved) { /* no devices: none recorded */
        free(s->rec.gpus);
        s->rec.gpus = NULL;
        return;
    }
    g->reserved = false;
    hold(e, s, &g->reserve);
}

void sw_engine__gpus_unreserve(sw_engine *e)
{
    sw_engine_gpus *g = e->gpus;

    if (!g || !g->reserved)
        return;
    sw_pack_release(g->devs, &g->reserve);
    g->reserved = false;
    g->gen++;
    publish(e);
}

const char *sw_engine__gpus_visible(const sw_engine *e, const sw_slot *s)
{
    if (!e->gpus)
        return NULL;
    return e->gpus->hide || !s->gpus ? "" : s->gpus->visible;
}

/* ---- gpu_memory: auto ----------------------------------------------- */

/* What trials ask for, now that `auto` has learned g->learned; the
 * default parallel follows, unless one was given. */
static void relearn(sw_engine *e, uint64_t peak, const char *run_id)
{
    sw_engine_gpus *g = e->gpus;
    uint64_t was = g->learned;
    sw_buf b = SW_BUF_INIT;

    g->learned = sw_pack_auto_bytes(g->learned, peak);
    if (g->learned == was)
        return;
    sw_pack_request_make(&g->req, &g->res, g->learned);
    g->gen++;
    if (!e->parallel_set)
        e->parallel = (int64_t)sw_engine__gpus_parallel(e);
    sw_buf_puts(&b, "sweep: gpu_memory: auto: run ");
    sw_buf_printf(&b, "%s used ", run_id);
    sw_gpus_put_size(&b, peak);
    sw_buf_puts(&b, "; trials now get ");
    sw_gpus_put_size(&b, g->learned);
    if (!e->parallel_set)
        sw_buf_printf(&b, ", %lld at once", (long long)e->parallel);
    sw_engine__notice(e, SW_NOTICE_WARN, "\n%s", sw_buf_cstr(&b));
    sw_buf_dispose(&b);
}

/* An attempt that held devices ended: the first one seen using memory
 * teaches `auto` its peak. */
static void learn_from_end(sw_engine *e, const sw_slot *s)
{
    sw_engine_gpus *g = e->gpus;

    if (g->res.gpu_memory_auto && g->learned == 0 && s->gpus->peak > 0)
        relearn(e, s->gpus->peak, s->rec.id);
}

/* What a trial placed by its executor's scheduler (Slurm) holds: the
 * GPUs it asked for, whole or a share (Slurm's shards round a share up
 * to whole shards: a little more). */
static double placed_elsewhere(const sw_engine *e)
{
    const sw_resources *r = &e->spec->resources;

    return r->has_gpus ? r->gpus : 0;
}

double sw_engine__gpus_held(const sw_engine *e, const sw_slot *s)
{
    const sw_pack_grant *grant;
    const sw_gpu_device *d;
    double held = 0;
    size_t i;

    if (!e->gpus && e->ex && sw_executor_places_gpus(e->ex))
        return placed_elsewhere(e); /* as its scheduler was asked */
    if (!e->gpus || !s->gpus)
        return 0;
    grant = &s->gpus->grant;
    for (i = 0; i < grant->n; i++) {
        d = &e->gpus->inv.devices[grant->devices[i]];
        held += (d->mig >= 0 ? (double)d->slices / SW_GPUS_MAX_SLICES : 1.0) *
                fmin(1.0, (double)grant->share / SW_PACK_UNIT);
    }
    return held;
}

void sw_engine__gpus_move(sw_engine *e, sw_slot *from, sw_slot *to)
{
    from->held_gpu = sw_engine__gpus_held(e, from);
    from->gave_gpus = true;
    to->gpus = from->gpus;
    from->gpus = NULL;
    free(to->rec.gpus);
    to->rec.gpus = from->rec.gpus ? sw_strdup(from->rec.gpus) : NULL;
}

void sw_engine__gpus_release(sw_engine *e, sw_slot *s)
{
    sw_engine_gpus *g = e->gpus;

    if (!s->gpus)
        return;
    if (g) {
        sw_pack_release(g->devs, &s->gpus->grant);
        learn_from_end(e, s);
        g->gen++;
        publish(e);
    }
    free(s->gpus->visible);
    free(s->gpus);
    s->gpus = NULL;
}

/* ---- resume --------------------------------------------------------- */

static bool find_device(const sw_engine_gpus *g, const char *key, size_t *at)
{
    char *k;
    bool same;
    size_t i;

    for (i = 0; i < g->inv.n_devices; i++) {
        k = sw_gpus_device_key(&g->inv, i);
        same = strcmp(k, key) == 0;
        free(k);
        if (same) {
            *at = i;
            return true;
        }
    }
    return false;
}

/* The grant that runs.gpus `json` records, on the devices still here;
 * false when it is not one. */
static bool parse_grant(sw_engine *e, const char *json, const char *run_id,
                        sw_pack_grant *out, bool warn)
{
    const sw_engine_gpus *g = e->gpus;
    sw_value *v = NULL, *devs, *share, *mem;
    double sh = 0, bytes = 0;
    size_t i, at;

    memset(out, 0, sizeof(*out));
    if (sw_json_parse(&v, json, strlen(json)) != SW_OK ||
        !(devs = sw_value_map_get(v, "devices")) || devs->type != SW_LIST ||
        !(share = sw_value_map_get(v, "share")) ||
        !sw_value_number(share, &sh) ||
        !(mem = sw_value_map_get(v, "memory")) ||
        !sw_value_number(mem, &bytes)) {
        sw_value_free(v);
        return false;
    }
    out->share = sh >= 1 ? SW_PACK_UNIT : (uint32_t)(sh * SW_PACK_UNIT + 0.5);
    out->bytes = bytes > 0 ? (uint64_t)bytes : 0;
    for (i = 0; i < devs->u.list.len && out->n < SW_PACK_MAX_GRANT; i++) {
        if (devs->u.list.items[i]->type == SW_STR &&
            find_device(g, devs->u.list.items[i]->u.s, &at))
            out->devices[out->n++] = (uint16_t)at;
        else if (warn)
            sw_engine__notice(e, SW_NOTICE_WARN,
                              "sweep: run %s holds a device sweep no longer "
                              "sees (%s): not counted",
                              run_id,
                              devs->u.list.items[i]->type == SW_STR
                                  ? devs->u.list.items[i]->u.s
                                  : "?");
    }
    sw_value_free(v);
    return true;
}

void sw_engine__gpus_adopt(sw_engine *e, sw_slot *s)
{
    sw_pack_grant grant;

    if (!e->gpus || e->gpus->hide || !s->rec.gpus)
        return;
    if (!parse_grant(e, s->rec.gpus, s->rec.id, &grant, true)) {
        sw_engine__notice(e, SW_NOTICE_ERROR,
                          "sweep: run %s: its runs.gpus is unreadable: %s",
                          s->rec.id, s->rec.gpus);
        return;
    }
    sw_pack_take(e->gpus->devs, &grant);
    hold(e, s, &grant);
    join_ledger(e);
    publish(e);
}

/* Resume: what `auto` had learned is what runs were given since; the
 * largest such figure is learned again, so a resumed sweep packs as the
 * interrupted one did. */
void sw_engine__gpus_recall(sw_engine *e, const sw_run_rec *r)
{
    sw_engine_gpus *g = e->gpus;
    sw_pack_grant grant;

    if (!g || g->hide || !g->res.gpu_memory_auto || !r->gpus ||
        !parse_grant(e, r->gpus, r->id, &grant, false) ||
        grant.bytes <= g->learned)
        return;
    g->learned = grant.bytes;
    sw_pack_request_make(&g->req, &g->res, g->learned);
    g->gen++;
    if (!e->parallel_set)
        e->parallel = (int64_t)sw_engine__gpus_parallel(e);
}

/* ---- reading NVML --------------------------------------------------- */

/* The run of this sweep that process `pid` belongs to, from its
 * environment (the trial contract's SWEEP_ID and SWEEP_RUN_ID; children
 * inherit them); NULL when it is not this sweep's or cannot be read. */
static char *run_of(unsigned pid, const char *sweep_id)
{
    char path[64], *buf = sw_malloc(ENVIRON_MAX), *p, *run = NULL;
    size_t idlen = strlen(sweep_id);
    bool ours = false;
    ssize_t n = -1;
    int fd;

    snprintf(path, sizeof(path), "/proc/%u/environ", pid);
    if ((fd = open(path, O_RDONLY | O_CLOEXEC)) >= 0) {
        n = read(fd, buf, ENVIRON_MAX - 1);
        close(fd);
    }
    buf[n > 0 ? n : 0] = '\0';
    for (p = buf; n > 0 && p < buf + n; p += strlen(p) + 1) {
        if (strncmp(p, "SWEEP_ID=", 9) == 0)
            ours = strcmp(p + 9, sweep_id) == 0 && p[9 + idlen] == '\0';
        else if (strncmp(p, "SWEEP_RUN_ID=", 13) == 0 && !run)
            run = sw_strdup(p + 13);
    }
    free(buf);
    if (!ours) {
        free(run);
        return NULL;
    }
    return run;
}

/* On a worker thread: the memory this sweep's processes use on device
 * `i`, each process noted with its run. */
static uint64_t read_ours(sample_work *sw, size_t i)
{
    sw_gpu_process *procs = NULL;
    uint64_t sum = 0;
    size_t n = 0, k;
    char *run;

    if (!sw->inv.devices[i].uuid ||
        sw_nvml_processes(sw->nvml, sw->inv.devices[i].uuid, &procs, &n))
        return UINT64_MAX;
    for (k = 0; k < n; k++) {
        if (procs[k].used_bytes == UINT64_MAX ||
            !(run = run_of(procs[k].pid, sw->sweep_id)))
            continue;
        sum += procs[k].used_bytes;
        sw_grow(&sw->procs, &sw->cap_procs, sw->n_procs + 1,
                sizeof(*sw->procs));
        sw->procs[sw->n_procs++] = (seen_proc){i, run, procs[k].used_bytes};
    }
    free(procs);
    return sum;
}

static void sample_run(sw_engine_work *w)
{
    sample_work *sw = (sample_work *)w;
    size_t i;

    sw_nvml_sample(sw->nvml, &sw->inv);
    for (i = 0; i < sw->inv.n_devices; i++)
        sw->ours[i] = read_ours(sw, i);
}

/* The memory of other processes on device `i`: what is used, less this
 * sweep's processes' (or, where NVML cannot tell them apart, less what
 * the sweep's trials hold there). */
static void update_device(sw_engine_gpus *g, size_t i, uint64_t ours)
{
    const sw_gpu_device *d = &g->sample.inv.devices[i];
    uint64_t mine = ours != UINT64_MAX ? ours : g->devs[i].held_bytes;

    g->inv.devices[i].used_bytes = d->used_bytes;
    g->inv.devices[i].util = d->util;
    g->devs[i].others_bytes = d->used_bytes > mine ? d->used_bytes - mine : 0;
}

static int store_sample(sw_engine *e, size_t i, double t)
{
    sw_engine_gpus *g = e->gpus;
    const sw_gpu_device *d = &g->sample.inv.devices[i];
    char *key = sw_gpus_device_key(&g->inv, i);
    sw_gpu_sample row = {
        e->sweep.id,
        t,
        key,
        g->inv.gpus[d->gpu].index,
        d->mig,
        d->util,
        d->total_bytes ? (int64_t)d->used_bytes : -1,
        d->total_bytes ? (int64_t)d->total_bytes : -1,
        g->sample.ours[i] == UINT64_MAX ? -1 : (int64_t)g->sample.ours[i],
        g->devs[i].trials};
    int error = sw_store_put_gpu_sample(e->st, &row);

    free(key);
    return error;
}

/* Writes the sample's rows in one transaction. */
static void store_samples(sw_engine *e)
{
    double t = sw_clock_wall(e->clock);
    size_t i;
    int error = sw_store_begin(e->st);

    for (i = 0; !error && i < e->gpus->inv.n_devices; i++)
        error = store_sample(e, i, t);
    if (!error)
        error = sw_store_commit(e->st);
    sw_engine__fatal(e, error);
}

/* What each run was seen using: its peak, and `auto` re-learned when a
 * trial uses more than it learned. */
static void note_procs(sw_engine *e, sample_work *sw)
{
    sw_engine_gpus *g = e->gpus;
    size_t i;
    sw_slot *s;

    for (i = 0; i < sw->n_procs; i++) {
        s = sw_engine__find_slot(e, sw->procs[i].run_id);
        if (s && s->gpus && sw->procs[i].bytes > s->gpus->peak)
            s->gpus->peak = sw->procs[i].bytes;
        if (g->res.gpu_memory_auto && g->learned &&
            sw->procs[i].bytes > g->learned)
            relearn(e, sw->procs[i].bytes, sw->procs[i].run_id);
        free(sw->procs[i].run_id);
    }
    sw->n_procs = 0;
}

static void sample_done(sw_engine *e, sw_engine_work *w)
{
    sample_work *sw = (sample_work *)w;
    sw_engine_gpus *g = e->gpus;
    size_t i;

    g->sampling = false;
    g->last_read = now_mono(e);
    for (i = 0; i < g->inv.n_devices; i++)
        update_device(g, i, sw->ours[i]);
    note_procs(e, sw);
    if (sw->store && !e->result)
        store_samples(e);
}

/* Reads NVML on the worker pool; `store`: a periodic sample. */
static void want_sample(sw_engine *e, bool store)
{
    sw_engine_gpus *g = e->gpus;
    sample_work *sw = &g->sample;

    if (g->sampling)
        return;
    if (!sw->ours) {
        copy_inventory(&sw->inv, &g->inv);
        sw->ours = sw_calloc(g->inv.n_devices + 1, sizeof(*sw->ours));
        sw->sweep_id = sw_strdup(e->sweep.id);
        sw->nvml = g->nvml;
        sw->work.run = sample_run;
        sw->work.done = sample_done;
    }
    sw->store = store;
    g->sampling = true;
    e->host.submit(e->host.ctx, &sw->work);
}

/* ---- the engine's clock --------------------------------------------- */

static bool held(const sw_engine *e)
{
    size_t i;

    for (i = 0; i < e->n_slots; i++)
        if (e->slots[i]->gpus)
            return true;
    return false;
}

static double period(const sw_engine_gpus *g)
{
    return g->res.gpu_memory_auto && !g->learned ? LEARN_S : SAMPLE_S;
}

void sw_engine__gpus_pump(sw_engine *e)
{
    sw_engine_gpus *g = e->gpus;
    bool store;
    double now;

    if (!g || !g->nvml || g->sampling || !held(e))
        return;
    now = now_mono(e);
    if (now >= g->next_read) {
        store = now >= g->next_store;
        g->next_read = now + period(g);
        if (store)
            g->next_store = now + SAMPLE_S;
        want_sample(e, store);
    }
}

double sw_engine__gpus_wake(const sw_engine *e)
{
    const sw_engine_gpus *g = e->gpus;
    double w = 0, t = 0;

    if (!g)
        return 0;
    if (g->ledger && g->waiting) /* other sweeps may have let go */
        w = g->ledger_read + LEDGER_S;
    if (!g->nvml || g->sampling)
        return w;
    if (held(e))
        t = g->next_read;
    else if (g->waiting) /* a trial waits for memory others hold */
        t = g->last_read + SAMPLE_S;
    return w == 0 || (t > 0 && t < w) ? t : w;
}

bool sw_engine__gpus_busy(const sw_engine *e)
{
    return e->gpus && e->gpus->sampling;
}

/* ---- other sweeps on this machine (ledger.c) ------------------------ */

/* Joins the machine's GPU ledger, once, when the sweep first places or
 * adopts a trial (it has its id by then). A simulated sweep's devices
 * are not this machine's: it joins none. */
static void join_ledger(sw_engine *e)
{
    sw_engine_gpus *g = e->gpus;
    const char *dir = sw_ledger__dir();
    size_t i, n = g->inv.n_devices;

    if (g->ledger_tried)
        return;
    g->ledger_tried = true;
    if (!dir || e->virtual_time || g->hide)
        return;
    if (sw_ledger__open(&g->ledger, dir, e->sweep.id) != SW_OK) {
        sw_engine__notice(e, SW_NOTICE_WARN,
                          "sweep %s: %s: its GPUs are not shared with other "
                          "sweeps on this machine",
                          e->sweep.id, sw_error_last());
        return;
    }
    g->keys = sw_calloc(n + 1, sizeof(*g->keys));
    for (i = 0; i < n; i++)
        g->keys[i] = sw_gpus_device_key(&g->inv, i);
    g->their_share = sw_calloc(n + 1, sizeof(*g->their_share));
    g->their_bytes = sw_calloc(n + 1, sizeof(*g->their_bytes));
}

/* The ledger failed (sw_error_last says how): said, and left. */
static void drop_ledger(sw_engine *e)
{
    sw_engine_gpus *g = e->gpus;

    sw_engine__notice(e, SW_NOTICE_WARN,
                      "sweep %s: %s: its GPUs are no longer shared with "
                      "other sweeps on this machine",
                      e->sweep.id, sw_error_last());
    sw_ledger__close(g->ledger);
    g->ledger = NULL;
}

static void add_theirs(void *ctx, const char *key, uint32_t share,
                       uint64_t bytes, const char *who)
{
    sw_engine_gpus *g = ctx;
    size_t i;

    for (i = 0; i < g->inv.n_devices; i++) {
        if (strcmp(g->keys[i], key) != 0)
            continue;
        g->their_share[i] = share >= SW_PACK_UNIT - g->their_share[i]
                                ? SW_PACK_UNIT
                                : g->their_share[i] + share;
        g->their_bytes[i] += bytes;
        if (!g->their_who)
            g->their_who = sw_strdup(who);
    }
}

/* Under the ledger's lock: what the other sweeps hold now. */
static int read_theirs(sw_engine *e)
{
    sw_engine_gpus *g = e->gpus;
    size_t n = g->inv.n_devices;

    memset(g->their_share, 0, n * sizeof(*g->their_share));
    memset(g->their_bytes, 0, n * sizeof(*g->their_bytes));
    free(g->their_who);
    g->their_who = NULL;
    g->ledger_read = now_mono(e);
    return sw_ledger__others(g->ledger, add_theirs, g);
}

/* What this sweep holds, as ledger lines: "KEY SHARE BYTES". */
static char *ours_text(const sw_engine_gpus *g)
{
    sw_buf b = SW_BUF_INIT;
    size_t i;

    sw_buf_puts(&b, "");
    for (i = 0; i < g->inv.n_devices; i++)
        if (g->devs[i].held_share || g->devs[i].held_bytes)
            sw_buf_printf(&b, "%s %u %llu\n", g->keys[i],
                          (unsigned)g->devs[i].held_share,
                          (unsigned long long)g->devs[i].held_bytes);
    return sw_buf_detach(&b);
}

/* Writes what this sweep holds to the ledger, after it changed. */
static void publish(sw_engine *e)
{
    sw_engine_gpus *g = e->gpus;
    char *text;
    int error;

    if (!g->ledger)
        return;
    text = ours_text(g);
    if ((error = sw_ledger__lock(g->ledger)) == SW_OK) {
        error = sw_ledger__publish(g->ledger, text);
        sw_ledger__unlock(g->ledger);
    }
    free(text);
    if (error)
        drop_ledger(e);
}

/* The devices as placing sees them: this sweep's holdings with the
 * other sweeps' on top; their memory counts as the larger of what they
 * booked and what NVML saw other processes use (theirs among them). */
static sw_pack_device *with_theirs(const sw_engine_gpus *g)
{
    size_t i, n = g->inv.n_devices;
    sw_pack_device *view = sw_calloc(n + 1, sizeof(*view));

    for (i = 0; i < n; i++) {
        view[i] = g->devs[i];
        view[i].held_share =
            g->their_share[i] >= SW_PACK_UNIT - view[i].held_share
                ? SW_PACK_UNIT
                : view[i].held_share + g->their_share[i];
        if (g->their_bytes[i] > view[i].others_bytes)
            view[i].others_bytes = g->their_bytes[i];
    }
    return view;
}

/* Says, once a sweep, that a trial waits only for other sweeps. */
static void tell_wait(sw_engine *e)
{
    sw_engine_gpus *g = e->gpus;
    sw_pack_grant alone;

    if (g->told_wait || sw_pack_fit(g->devs, g->inv.n_devices, NULL, &g->req,
                                    &alone) != SW_PACK_PLACED)
        return;
    g->told_wait = true;
    sw_engine__notice(e, SW_NOTICE_WARN,
                      "sweep %s: waiting for a GPU: other sweeps on this "
                      "machine hold what its next trial needs (%s; see %s)",
                      e->sweep.id, g->their_who ? g->their_who : "?",
                      sw_ledger__dir());
}

/* Places the next trial around what the other sweeps hold, and books it
 * in the ledger, in one step under the ledger's lock; takes the grant
 * on g->devs when it is placed. */
static sw_pack_verdict fit_shared(sw_engine *e)
{
    sw_engine_gpus *g = e->gpus;
    sw_pack_device *view;
    sw_pack_verdict v = SW_PACK_NOT_NOW;
    char *text;
    int error;

    if ((error = sw_ledger__lock(g->ledger)) != SW_OK) {
        drop_ledger(e);
        return SW_PACK_NOT_NOW; /* placed alone at the next turn */
    }
    if ((error = read_theirs(e)) == SW_OK) {
        view = with_theirs(g);
        v = sw_pack_fit(view, g->inv.n_devices, NULL, &g->req, &g->reserve);
        free(view);
    }
    if (!error && v == SW_PACK_PLACED) {
        sw_pack_take(g->devs, &g->reserve);
        text = ours_text(g);
        error = sw_ledger__publish(g->ledger, text);
        free(text);
    }
    sw_ledger__unlock(g->ledger);
    if (error)
        drop_ledger(e);
    else if (v == SW_PACK_NOT_NOW)
        tell_wait(e);
    return v;
}

/* ---- placing -------------------------------------------------------- */

bool sw_engine__gpus_room(sw_engine *e)
{
    sw_engine_gpus *g = e->gpus;
    sw_pack_verdict v;

    if (!g || g->hide || g->reserved)
        return true;
    join_ledger(e);
    if (g->failed_gen == g->gen && g->failed_read == g->last_read &&
        now_mono(e) - g->last_read < SAMPLE_S &&
        (!g->ledger || now_mono(e) - g->ledger_read < LEDGER_S))
        return false; /* nothing changed since it did not fit */
    if (g->ledger && g->failed_gen == g->gen &&
        now_mono(e) - g->ledger_read < LEDGER_S)
        return false; /* the ledger is read again at most every LEDGER_S */
    if (g->nvml && now_mono(e) - g->last_read > FRESH_S) {
        want_sample(e, false);
        return false;
    }
    if (g->ledger) {
        v = fit_shared(e);
    } else {
        v = sw_pack_fit(g->devs, g->inv.n_devices, NULL, &g->req, &g->reserve);
        if (v == SW_PACK_PLACED)
            sw_pack_take(g->devs, &g->reserve);
    }
    if (v == SW_PACK_NEVER) {
        sw_engine__fatal(e,
                         sw_error_set(SW_ERROR, "gpu_memory: auto learned more "
                                                "memory than any device has"));
        return false;
    }
    g->waiting = v != SW_PACK_PLACED;
    if (v != SW_PACK_PLACED) {
        g->failed_gen = g->gen;
        g->failed_read = g->last_read;
        return false;
    }
    g->reserved = true;
    g->gen++;
    return true;
}
