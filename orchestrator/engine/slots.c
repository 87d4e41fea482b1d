/*
 * slots.c - the engine's floor: the slot table (one slot per attempt the
 * engine is busy with, from its git capture to its end), the queue of
 * runs waiting to be (re)launched, the counts of ended runs and the best
 * value, and the one way a store error ends the sweep; and two things
 * the rules above share: a run record made from a trial, and a slot told
 * to pause where it trains to (promotion ASHA, PBT).
 *
 * It is the only code that makes or frees a slot. It calls nothing of
 * the engine above it (events.c alone, and the leaf contract.c), so
 * every other file may use it.
 * A slot is freed holding no devices: devices.c gives them back first.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "orchestrator/engine/contract.h"
#include "orchestrator/engine/engine_internal.h"
#include "sweeps/command.h"

bool sw_engine__stopping(const sw_engine *e)
{
    return e->seen_interrupts > 0 || e->target_hit || e->gave_up ||
           e->result != SW_OK;
}

/* ---- the slot table ------------------------------------------------- */

/* An index of the slots by run id, so that finding the slot of each
 * executor event does not compare the id with every slot's (at 4,096
 * simulated GPUs that was the largest cost of a simulation). It holds
 * places in e->slots and is only a hint: a hit is checked, a miss falls
 * back to a scan. It is kept as slots go (free_slot() moves the last one
 * into the freed place), a slot is added once its id is set
 * (sw_engine__slot_named(), or when a scan finds it), and it is built
 * again only when it fills: a build hashes every slot's id, and slots
 * come and go at each instant of a simulation. */
struct sw_slot_index {
    size_t *at; /* places in e->slots; SIZE_MAX: empty */
    size_t mask;
    size_t used; /* entries in at[] */
    bool stale;
};

static void index_build(const sw_engine *e)
{
    struct sw_slot_index *ix = e->slot_index;
    size_t cap = 16, i, h;

    while (cap < 2 * e->n_slots)
        cap *= 2;
    if (ix->mask + 1 != cap) {
        free(ix->at);
        ix->at = sw_malloc(cap * sizeof(*ix->at));
        ix->mask = cap - 1;
    }
    for (i = 0; i < cap; i++)
        ix->at[i] = SIZE_MAX;
    ix->used = 0;
    for (i = 0; i < e->n_slots; i++) {
        if (!e->slots[i]->rec.id)
            continue;
        h = sw_str_hash(e->slots[i]->rec.id) & ix->mask;
        while (ix->at[h] != SIZE_MAX)
            h = (h + 1) & ix->mask;
        ix->at[h] = i;
        ix->used++;
    }
    ix->stale = false;
}

static size_t home(const sw_engine *e, size_t place)
{
    return sw_str_hash(e->slots[place]->rec.id) & e->slot_index->mask;
}

/* Where the index holds `place`, found from the hash of `id`; SIZE_MAX:
 * it does not. */
static size_t index_entry(const sw_engine *e, const char *id, size_t place)
{
    struct sw_slot_index *ix = e->slot_index;
    size_t h;

    for (h = sw_str_hash(id) & ix->mask; ix->at[h] != SIZE_MAX;
         h = (h + 1) & ix->mask)
        if (ix->at[h] == place)
            return h;
    return SIZE_MAX;
}

/* Empties entry `h`, moving back the entries after it that their home
 * would no longer reach (deletion from linear probing). An entry whose
 * slot has no id any more, or another id, is only missed later: a miss
 * falls back to a scan. */
static void index_delete(const sw_engine *e, size_t h)
{
    struct sw_slot_index *ix = e->slot_index;
    size_t j = h, k;

    ix->at[h] = SIZE_MAX;
    ix->used--;
    for (;;) {
        j = (j + 1) & ix->mask;
        if (ix->at[j] == SIZE_MAX)
            return;
        if (ix->at[j] >= e->n_slots || !e->slots[ix->at[j]]->rec.id) {
            ix->stale = true;
            return;
        }
        k = home(e, ix->at[j]);
        if (h <= j ? (k <= h || k > j) : (k <= h && k > j)) {
            ix->at[h] = ix->at[j];
            ix->at[j] = SIZE_MAX;
            h = j;
        }
    }
}

/* Adds the slot at `place`, found by a scan; built again when full. */
static void index_add(const sw_engine *e, size_t place)
{
    struct sw_slot_index *ix = e->slot_index;
    size_t h;

    if (ix->stale || 2 * (ix->used + 1) > ix->mask + 1) {
        ix->stale = true;
        return;
    }
    for (h = home(e, place); ix->at[h] != SIZE_MAX; h = (h + 1) & ix->mask)
        ;
    ix->at[h] = place;
    ix->used++;
}

/* Slot `i` goes and the last one takes its place: the index follows. */
static void index_move(const sw_engine *e, size_t i)
{
    struct sw_slot_index *ix = e->slot_index;
    size_t last = e->n_slots - 1, h;

    if (!ix || ix->stale || !ix->at)
        return;
    if (e->slots[i]->rec.id &&
        (h = index_entry(e, e->slots[i]->rec.id, i)) != SIZE_MAX)
        index_delete(e, h);
    if (i != last && !ix->stale && e->slots[last]->rec.id &&
        (h = index_entry(e, e->slots[last]->rec.id, last)) != SIZE_MAX)
        ix->at[h] = i;
}

/* The slot the index knows for `key`, checked; NULL: it does not. */
static sw_slot *index_find(const sw_engine *e, const char *key)
{
    struct sw_slot_index *ix = e->slot_index;
    size_t h, k;

    if (ix->stale)
        index_build(e);
    for (h = sw_str_hash(key) & ix->mask; (k = ix->at[h]) != SIZE_MAX;
         h = (h + 1) & ix->mask)
        if (k < e->n_slots && e->slots[k]->rec.id &&
            strcmp(e->slots[k]->rec.id, key) == 0)
            return e->slots[k];
    return NULL;
}

void sw_engine__slot_index_free(sw_engine *e)
{
    if (e->slot_index)
        free(e->slot_index->at);
    free(e->slot_index);
    e->slot_index = NULL;
}

void sw_engine__slot_named(sw_engine *e, sw_slot *s)
{
    size_t i = e->n_slots;

    if (!s->rec.id || !e->slot_index || e->slot_index->stale)
        return;
    while (i-- > 0 && e->slots[i] != s) /* a new slot is the last */
        ;
    if (i < e->n_slots)
        index_add(e, i);
}

sw_slot *sw_engine__new_slot(sw_engine *e)
{
    sw_slot *s = sw_calloc(1, sizeof(*s));

    if (!e->slot_index) {
        e->slot_index = sw_calloc(1, sizeof(*e->slot_index));
        e->slot_index->stale = true;
    }

    s->out_fd = -1;
    s->first_step = -1;
    s->view_step = -1;
    s->iter = -1;
    sw_grow(&e->slots, &e->cap_slots, e->n_slots + 1, sizeof(sw_slot *));
    e->slots[e->n_slots++] = s;
    return s;
}

void sw_engine__free_slot(sw_engine *e, sw_slot *s)
{
    size_t i;

    for (i = 0; i < e->n_slots && e->slots[i] != s; i++)
        ;
    if (i < e->n_slots) {
        index_move(e, i);
        e->slots[i] = e->slots[--e->n_slots];
    }
    sw_run_rec_dispose(&s->rec);
    free(s->run_dir);
    free(s->token);
    free(s->stop_verdict);
    free(s->end.msg);
    free(s->job_key);
    free(s->job_handle);
    free(s->asked_from);
    if (s->watch && e->watcher.unwatch)
        e->watcher.unwatch(e->watcher.ctx, s->watch);
    if (s->out_fd >= 0)
        close(s->out_fd);
    free(s);
}

sw_slot *sw_engine__find_slot(const sw_engine *e, const char *key)
{
    sw_slot *s;
    size_t i;

    if (!key || !e->slot_index)
        return NULL;
    if ((s = index_find(e, key)))
        return s;
    for (i = 0; i < e->n_slots; i++)
        if (e->slots[i]->rec.id && strcmp(e->slots[i]->rec.id, key) == 0) {
            index_add(e, i); /* it was missed */
            return e->slots[i];
        }
    return NULL;
}

bool sw_engine__started(const sw_slot *s)
{
    return s->phase >= SW_SLOT_RUNNING && s->phase <= SW_SLOT_KILLED;
}

size_t sw_engine__count(const sw_engine *e, sw_slot_phase phase)
{
    size_t i, n = 0;

    for (i = 0; i < e->n_slots; i++)
        n += e->slots[i]->phase == phase;
    return n;
}

size_t sw_engine__count_queued(const sw_engine *e)
{
    size_t i, n = 0;

    for (i = 0; i < e->n_slots; i++)
        n += sw_engine__started(e->slots[i]) && e->slots[i]->queued;
    return n;
}

size_t sw_engine__count_started(const sw_engine *e)
{
    size_t i, n = 0;

    for (i = 0; i < e->n_slots; i++)
        n += sw_engine__started(e->slots[i]);
    return n;
}

/* ---- the queue ------------------------------------------------------ */

void sw_engine__enqueue(sw_engine *e, sw_run_rec *r)
{
    r->state = SW_RUN_PENDING;
    sw_grow(&e->queue, &e->qcap, e->qlen + 1, sizeof(sw_run_rec));
    e->queue[e->qlen++] = *r;
    memset(r, 0, sizeof(*r));
}

bool sw_engine__dequeue(sw_engine *e, sw_run_rec *out)
{
    if (e->qlen == 0)
        return false;
    *out = e->queue[--e->qlen];
    return true;
}

/* ---- times ---------------------------------------------------------- */

double sw_engine__deadline(const sw_engine *e, const sw_run_rec *r)
{
    if (e->spec->timeout <= 0)
        return 0;
    return sw_clock_mono(e->clock) +
           (r->started_at + e->spec->timeout - sw_clock_wall(e->clock));
}

/* ---- runs and their pauses ------------------------------------------ */

int sw_engine__make_run(const sw_engine *e, const sw_trial *t, sw_run_rec *r)
{
    sw_command_opts co = SW_COMMAND_OPTS_INIT;
    sw_buf b = SW_BUF_INIT;
    sw_value *list = sw_value_list();
    char **argv = NULL, *dir;
    size_t i;
    int error;

    memset(r, 0, sizeof(*r));
    r->id =
        sw_aprintf("%s-%llu", e->sweep.id, (unsigned long long)t->index + 1);
    r->sweep_id = sw_strdup(e->sweep.id);
    r->idx = (int64_t)t->index;
    r->cell = sw_strdup(t->id);
    sw_value_write_json(&b, t->params, false);
    r->params = sw_buf_detach(&b);
    dir = sw_contract_run_dir(e->home, r->id);
    co.interpreter = sw_command_interpreter();
    co.keep_envvars = true; /* stored: expanded only at launch */
    co.args_json_file = sw_aprintf("%s/params.json", dir);
    error = sw_command_render(&argv, NULL, e->spec, t->params, &co);
    free((char *)co.args_json_file);
    free(dir);
    for (i = 0; !error && argv[i]; i++)
        sw_value_list_push(list, sw_value_str(argv[i]));
    sw_value_write_json(&b, list, false);
    r->argv = sw_buf_detach(&b);
    r->state = SW_RUN_PENDING;
    r->created_at = sw_clock_wall(e->clock);
    sw_value_free(list);
    sw_command_free(argv);
    if (error)
        sw_run_rec_dispose(r);
    return error;
}

void sw_engine__pause(sw_engine *e, sw_slot *s, char *why)
{
    /* grace even for a trial that only prints: it was told where to stop
     * (SWEEP_TRAIN_UNTIL) and is saving its checkpoint to exit; a
     * SIGTERM now could cost the step it just reported */
    s->stop = true;
    s->stop_at = sw_clock_mono(e->clock) + e->spec->early_terminate.grace;
    sw_engine__notice(e, SW_NOTICE_INFO, "sweep %s: run %s pauses: %s",
                      e->sweep.id, s->rec.id, why);
    free(s->stop_verdict);
    s->stop_verdict = why;
}

/* ---- the counts and the best value ---------------------------------- */

void sw_engine__tally(sw_engine *e, sw_run_state state, bool here)
{
    e->done += state == SW_RUN_FINISHED;
    e->worked += state == SW_RUN_FINISHED || state == SW_RUN_STOPPED ||
                 state == SW_RUN_PAUSED;
    e->failed += state == SW_RUN_FAILED;
    e->stopped += state == SW_RUN_STOPPED;
    e->canceled += state == SW_RUN_CANCELED;
    e->failed_here += here && state == SW_RUN_FAILED;
    e->best_stale = true;
}

static void set_best_run(sw_engine *e, const char *id)
{
    free(e->best_run);
    e->best_run = sw_strdup(id);
}

/* A run's value changed: the sweep's target may be reached. The best
 * run is not this: a run's value is its last, and only a run that ended
 * finished or stopped is ranked (sw_engine__best). */
void sw_engine__note_value(sw_engine *e, const sw_run_rec *r)
{
    const sw_metric *m = &e->spec->metric;

    if (!r->has_value || isnan(r->value))
        return;
    if (m->has_target && !e->target_hit &&
        (m->goal == SW_GOAL_MAXIMIZE ? r->value >= m->target
                                     : r->value <= m->target)) {
        e->target_hit = true;
        sw_engine__notice(e, SW_NOTICE_RESULT,
                          "sweep %s: run %s reached the target %s = %g",
                          e->sweep.id, r->id, m->name, m->target);
    }
}

void sw_engine__best(sw_engine *e)
{
    sw_run_rec *top = NULL;
    size_t n = 0;

    if (!e->best_stale || !e->spec->metric.name || !e->st)
        return;
    e->best_stale = false;
    if (sw_store_best_runs(e->st, e->sweep.id,
                           e->spec->metric.goal == SW_GOAL_MAXIMIZE, 1, &top,
                           &n) != SW_OK)
        return; /* the line goes without it; the store says why elsewhere */
    e->has_best = n > 0;
    if (n > 0) {
        e->best = top[0].value;
        set_best_run(e, top[0].id);
        sw_run_rec_dispose(&top[0]);
    }
    free(top);
}

/* ---- the end of a sweep by error ------------------------------------ */

int sw_engine__fatal(sw_engine *e, int error)
{
    if (error && !e->result) {
        sw_store_rollback(e->st);
        e->result = error;
        sw_engine__notice(e, SW_NOTICE_ERROR, "sweep: %s", sw_error_last());
    }
    return error;
}
