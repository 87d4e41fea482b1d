/*
 * population.c - population-based training in the engine (`method: pbt`
 * with a `pbt:` section; docs/search.md). search/pbt.c decides; this
 * carries the decisions out.
 *
 * The search draws the population, one run per place (runs.member).
 * Every attempt of a member is told the iteration of the round the
 * population trains to (SWEEP_TRAIN_UNTIL); when the sweep's metric gets
 * there the member is recorded at the round and paused, as promotion
 * ASHA pauses a run at a rung (every answer {"stop": true, "pause":
 * true}; `paused` once its attempt ends, its devices given back). When
 * nothing of the population is running or queued, every member has
 * paused at the round or ended without reaching it, and the round is
 * decided: each exploit makes a new run, the loser's place taken, its
 * parameters the parent's perturbed and its checkpoint folder a copy of
 * the parent's (runs.parent, runs.parent_iter). The copies are slow
 * work, made off the loop while nothing is committed; then one
 * transaction stops each loser (its reason names the run that replaced
 * it), stores the new runs pending and makes the other members pending
 * again, and all of them are queued for the next round. The last round
 * is max_iter: there the members finish as any run does.
 *
 * Crash safety: nothing of a round is in the store until its copies are
 * made, and then all of it is, at once. The rounds are rebuilt from the
 * store on resume (the rounds decided so far are the children's
 * parent_iter; each place's run is its latest; each is recorded at the
 * round its values reached), and a round whose copies a crash cut short
 * is decided again the same way (pbt.h: the same records give the same
 * decisions, and the new runs the same ids), its copies made again.
 * When the sweep ends with members paused (its budget, its run_cap, a
 * target reached), they end `stopped` (promotion.c, e->paused_why).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "orchestrator/engine/contract.h"
#include "orchestrator/engine/engine_internal.h"
#include "search/pbt.h"
#include "sweeps/json.h"

/* A round being carried out: its exploits and the runs they make, whose
 * checkpoint folders are copied off the loop before anything of the
 * round is stored. */
struct sw_pbt_work {
    sw_engine_work work;
    sw_engine *e;
    size_t round, n;
    sw_pbt_exploit *x;
    sw_run_rec *child; /* pending, stored only once the copies are made */
    char **from, **to; /* the parents' and the children's run folders */
    int error;
    char *message;
};

static size_t population(const sw_engine *e)
{
    return sw_pbt_population(e->pbt);
}

/* The run at place `m` now; NULL: none. */
static const char *member_run(const sw_engine *e, size_t m)
{
    return m < population(e) ? e->members[m] : NULL;
}

static void set_member(sw_engine *e, size_t m, const char *id)
{
    free(e->members[m]);
    e->members[m] = sw_strdup(id);
}

/* Whether run `r` is the one at its place now. */
static bool holds_place(const sw_engine *e, const sw_run_rec *r)
{
    const char *id = r->has_member && r->member >= 0
                         ? member_run(e, (size_t)r->member)
                         : NULL;

    return id && strcmp(id, r->id) == 0;
}

static bool is_member(const sw_engine *e, const sw_slot *s)
{
    return holds_place(e, &s->rec);
}

/* ---- rebuilding it from the store ----------------------------------- */

typedef struct {
    const char *metric;
    int64_t base, values, target;
    bool found;
    double value;
} replay_ctx;

/* The first value of the metric at the round's iteration or past it. */
static int replay_row(void *ctx, int64_t step, const char *name, bool has_value,
                      double value, double time)
{
    replay_ctx *c = ctx;

    (void)time;
    if (c->found || strcmp(name, c->metric) != 0)
        return 0;
    c->values++;
    if ((step >= 0 ? step : c->base + c->values) < c->target)
        return 0;
    c->found = true;
    c->value = has_value ? value : NAN;
    return 0;
}

/* Place m's run, recorded at the round it trains to if its values got
 * there. */
static int replay_member(sw_engine *e, size_t m, const sw_run_rec *r)
{
    size_t k = sw_pbt_round(e->pbt);
    replay_ctx c = {e->spec->metric.name,
                    r->parent ? r->parent_iter : 0,
                    0,
                    sw_pbt_round_iter(e->pbt, k),
                    false,
                    0};
    int error = sw_store_metric_rows(e->st, r->id, replay_row, &c);

    if (!error && c.found)
        sw_pbt_record(e->pbt, m, k, c.value);
    return error;
}

static int rebuild(sw_engine *e)
{
    sw_run_rec *runs = NULL;
    size_t n = 0, i, k = 1, at;
    int error = sw_store_list_runs(e->st, e->sweep.id, &runs, &n);

    for (i = 0; !error && i < n; i++) { /* by idx: the latest last */
        if (runs[i].has_member && runs[i].member >= 0 &&
            (size_t)runs[i].member < population(e))
            set_member(e, (size_t)runs[i].member, runs[i].id);
        at = runs[i].parent ? sw_pbt_round_at(e->pbt, runs[i].parent_iter) : 0;
        k = at + 1 > k ? at + 1 : k;
    }
    sw_pbt_start_at(e->pbt, k);
    for (i = 0; !error && i < n; i++)
        if (holds_place(e, &runs[i]))
            error = replay_member(e, (size_t)runs[i].member, &runs[i]);
    for (i = 0; i < n; i++)
        sw_run_rec_dispose(&runs[i]);
    free(runs);
    return error;
}

int sw_engine__make_pbt(sw_engine *e)
{
    int error;

    if (e->pbt || e->spec->method != SW_METHOD_PBT)
        return SW_OK;
    error = sw_pbt_new(&e->pbt, &e->spec->pbt,
                       e->spec->metric.goal == SW_GOAL_MAXIMIZE, e->sweep.seed);
    if (error)
        return error;
    e->members = sw_calloc(population(e), sizeof(*e->members));
    return e->resuming ? rebuild(e) : SW_OK;
}

void sw_engine__pbt_free(sw_engine *e)
{
    size_t i;

    for (i = 0; e->pbt && e->members && i < population(e); i++)
        free(e->members[i]);
    free(e->members);
    sw_pbt_free(e->pbt);
    free(e->paused_why);
    e->members = NULL;
    e->pbt = NULL;
    e->paused_why = NULL;
}

/* ---- training to the round ------------------------------------------ */

void sw_engine__pbt_place(sw_engine *e, sw_run_rec *r)
{
    if (!e->pbt || r->idx < 0 || (size_t)r->idx >= population(e))
        return;
    r->has_member = true;
    r->member = r->idx;
    set_member(e, (size_t)r->idx, r->id);
}

int64_t sw_engine__pbt_target(const sw_engine *e)
{
    return e->pbt ? sw_pbt_round_iter(e->pbt, sw_pbt_round(e->pbt)) : 0;
}

void sw_engine__pbt_observe(sw_engine *e, sw_slot *s, int64_t step,
                            double value)
{
    size_t k;
    int64_t iter;

    if (!e->pbt || s->pause || !is_member(e, s))
        return;
    k = sw_pbt_round(e->pbt);
    iter = step >= 0 ? step : sw_pbt_round_iter(e->pbt, k - 1) + s->values;
    if (iter < sw_engine__pbt_target(e) || k >= sw_pbt_rounds(e->pbt))
        return; /* not there yet; or the last round: it finishes */
    sw_pbt_record(e->pbt, (size_t)s->rec.member, k, value);
    s->pause = true;
}

bool sw_engine__pbt_decide(sw_engine *e, sw_slot *s)
{
    sw_buf why = SW_BUF_INIT;

    if (!e->pbt)
        return false;
    /* one adopted after it reached the round (its value was stored
     * before a crash): it pauses there too */
    if (!s->pause && is_member(e, s) &&
        sw_pbt_round(e->pbt) < sw_pbt_rounds(e->pbt) &&
        sw_pbt_reached(e->pbt, (size_t)s->rec.member, NULL))
        s->pause = true;
    if (!s->pause || s->stop || s->phase == SW_SLOT_CAPTURE)
        return true;
    sw_pbt_explain(e->pbt, (size_t)s->rec.member, &why);
    sw_engine__pause(e, s, sw_buf_detach(&why));
    return true;
}

/* ---- a round: the exploits and their runs --------------------------- */

static void work_free(struct sw_pbt_work *w)
{
    size_t i;

    for (i = 0; w && i < w->n; i++) {
        sw_run_rec_dispose(&w->child[i]);
        free(w->from[i]);
        free(w->to[i]);
    }
    if (w) {
        free(w->x);
        free(w->child);
        free(w->from);
        free(w->to);
        free(w->message);
    }
    free(w);
}

/* The run exploit `x` makes: at index `idx`, place x->member, the
 * parent's parameters perturbed, from its checkpoint at the round. */
static int child_of(sw_engine *e, const sw_pbt_exploit *x, uint64_t idx,
                    sw_run_rec *out)
{
    const char *parent = member_run(e, x->parent);
    size_t k = sw_pbt_round(e->pbt);
    sw_value *params = NULL;
    sw_run_rec p;
    sw_trial t;
    int error = parent
                    ? sw_store_get_run(e->st, parent, &p)
                    : sw_error_set(SW_ERROR, "place %zu has no run", x->parent);

    sw_trial_init(&t);
    if (!parent)
        memset(&p, 0, sizeof(p));
    if (!error && sw_json_parse(&params, p.params, strlen(p.params)) != SW_OK)
        error = sw_error_set(SW_EIO, "run %s: its stored params are not JSON",
                             parent);
    if (!error)
        error =
            sw_pbt_perturb(e->pbt, e->spec, params, k, x->member, &t.params);
    t.index = idx;
    if (!error) {
        sw_trial_set_id(&t);
        error = sw_engine__make_run(e, &t, out);
    }
    if (!error) {
        out->has_member = true;
        out->member = (int64_t)x->member;
        out->parent = sw_strdup(parent);
        out->parent_iter = sw_pbt_round_iter(e->pbt, k);
    }
    sw_value_free(params);
    sw_trial_dispose(&t);
    sw_run_rec_dispose(&p);
    return error;
}

/* "round 1: run 3f2a-4 (0.93) is replaced by run 3f2a-5: run 3f2a-1's
 * checkpoint at iteration 4 (0.41), perturbed". */
static void say_exploit(sw_engine *e, const sw_pbt_exploit *x,
                        const sw_run_rec *child)
{
    char was[64] = "ended before the round";
    double lv = NAN, pv = NAN;

    if (sw_pbt_reached(e->pbt, x->member, &lv))
        snprintf(was, sizeof(was), "%g", lv);
    sw_pbt_reached(e->pbt, x->parent, &pv);
    sw_engine__notice(
        e, SW_NOTICE_INFO,
        "sweep %s: round %zu: run %s (%s) is replaced by run "
        "%s: run %s's checkpoint at iteration %lld (%g), "
        "perturbed",
        e->sweep.id, sw_pbt_round(e->pbt),
        member_run(e, x->member) ? member_run(e, x->member) : "(none)", was,
        child->id, child->parent, (long long)child->parent_iter, pv);
}

/* On a worker thread: each child's checkpoint folder, a copy of its
 * parent's. */
static void copy_run(sw_engine_work *work)
{
    struct sw_pbt_work *w = (struct sw_pbt_work *)work;
    size_t i;

    for (i = 0; !w->error && i < w->n; i++)
        if ((w->error = sw_contract_copy_checkpoint(w->from[i], w->to[i])))
            w->message = sw_aprintf("round %zu: run %s: %s", w->round,
                                    w->child[i].id, sw_error_last());
}

static void copy_done(sw_engine *e, sw_engine_work *work);

/* Decides the round and starts copying its checkpoints: n exploits. */
static int start_round(sw_engine *e, sw_pbt_exploit *x, size_t n)
{
    struct sw_pbt_work *w = sw_calloc(1, sizeof(*w));
    size_t i;
    int error = SW_OK;

    w->work.run = copy_run;
    w->work.done = copy_done;
    w->e = e;
    w->round = sw_pbt_round(e->pbt);
    w->x = x;
    w->child = sw_calloc(n, sizeof(*w->child));
    w->from = sw_calloc(n, sizeof(*w->from));
    w->to = sw_calloc(n, sizeof(*w->to));
    for (i = 0; i < n; i++) {
        w->n = i + 1;
        if ((error = child_of(e, &x[i], e->next_idx + i, &w->child[i])))
            break;
        w->from[i] = sw_contract_run_dir(e->home, member_run(e, x[i].parent));
        w->to[i] = sw_contract_run_dir(e->home, w->child[i].id);
        say_exploit(e, &x[i], &w->child[i]);
    }
    if (error) {
        work_free(w);
        return error;
    }
    e->pbt_work = w;
    e->host.submit(e->host.ctx, &w->work);
    return SW_OK;
}

/* ---- carrying a round out ------------------------------------------- */

/* The place's run, paused at the round, made pending for the next
 * (or, exploited, stopped, replaced by `child`), into *r. */
static int next_state(sw_engine *e, size_t m, const sw_run_rec *child,
                      sw_run_rec *r)
{
    size_t k = sw_pbt_round(e->pbt);
    const char *id = member_run(e, m);
    int error = id ? sw_store_get_run(e->st, id, r) : SW_OK;

    if (!id) /* a place whose first run was never stored */
        return SW_OK;
    if (error || r->state != SW_RUN_PAUSED) {
        sw_run_rec_dispose(r); /* ended before the round: as it ended */
        return error;
    }
    free(r->reason);
    if (child) {
        r->state = SW_RUN_STOPPED;
        r->reason = sw_aprintf("%s by run %s, from run %s's checkpoint at "
                               "iteration %lld",
                               sw_cancel_name(SW_CANCEL_REPLACED), child->id,
                               child->parent, (long long)child->parent_iter);
    } else {
        r->state = SW_RUN_PENDING;
        r->reason = sw_aprintf("round %zu: trains to iteration %lld", k + 1,
                               (long long)sw_pbt_round_iter(e->pbt, k + 1));
    }
    return sw_store_update_run(e->st, r);
}

/* The child replacing place m in w; NULL: none does. */
static const sw_run_rec *replacement(const struct sw_pbt_work *w, size_t m)
{
    size_t i;

    for (i = 0; i < w->n; i++)
        if (w->x[i].member == m)
            return &w->child[i];
    return NULL;
}

/* Stores the whole round in one transaction: the children, and every
 * place's run's next state into olds[]. */
static int commit_round(sw_engine *e, struct sw_pbt_work *w, sw_run_rec *olds)
{
    size_t i, m;
    int error = sw_store_begin(e->st);

    for (i = 0; !error && i < w->n; i++)
        error = sw_store_put_run(e->st, &w->child[i]);
    for (m = 0; !error && m < population(e); m++)
        error = next_state(e, m, replacement(w, m), &olds[m]);
    if (!error)
        error = sw_store_commit(e->st);
    if (error)
        sw_store_rollback(e->st);
    return error;
}

/* Once stored: told, counted, queued; the places go to the children and
 * the pbt to the next round. */
static int carry_out(sw_engine *e, struct sw_pbt_work *w, sw_run_rec *olds)
{
    sw_event ev = {.kind = SW_EV_RUN, .from = SW_RUN_PAUSED};
    size_t i, m;
    int error = SW_OK;

    sw_engine__notice(e, SW_NOTICE_INFO,
                      "sweep %s: round %zu: the population trains to "
                      "iteration %lld, %zu of %zu replaced",
                      e->sweep.id, w->round + 1,
                      (long long)sw_pbt_round_iter(e->pbt, w->round + 1), w->n,
                      population(e));
    for (m = 0; m < population(e); m++) {
        if (!olds[m].id)
            continue; /* ended before the round: as it was */
        ev.run = &olds[m];
        if (!error)
            error = sw_engine__emit(e, &ev);
        if (olds[m].state == SW_RUN_STOPPED)
            sw_engine__tally(e, SW_RUN_STOPPED, false);
        else
            sw_engine__enqueue(e, &olds[m]); /* takes it */
    }
    ev.from = SW_RUN_PENDING;
    for (i = 0; i < w->n; i++) {
        ev.run = &w->child[i];
        if (!error)
            error = sw_engine__emit(e, &ev);
        set_member(e, w->x[i].member, w->child[i].id);
        sw_engine__enqueue(e, &w->child[i]);
    }
    e->next_idx += w->n;
    sw_pbt_advance(e->pbt);
    return error;
}

static void copy_done(sw_engine *e, sw_engine_work *work)
{
    struct sw_pbt_work *w = (struct sw_pbt_work *)work;
    sw_run_rec *olds = sw_calloc(population(e), sizeof(*olds));
    size_t m;
    int error = w->error;

    e->pbt_work = NULL;
    if (error)
        error = sw_error_set(error, "%s", w->message);
    else if (!sw_engine__stopping(e)) /* else decided again on resume */
        error = commit_round(e, w, olds);
    if (!error && !sw_engine__stopping(e))
        error = carry_out(e, w, olds);
    for (m = 0; m < population(e); m++)
        sw_run_rec_dispose(&olds[m]);
    free(olds);
    work_free(w);
    if (error)
        sw_engine__fatal(e, error);
}

/* ---- when a round is due -------------------------------------------- */

/* No further round starts: the members still paused end stopped when
 * the sweep ends, told `why`. */
static void over(sw_engine *e, const char *why)
{
    e->pbt_over = true;
    free(e->paused_why);
    e->paused_why =
        sw_aprintf("paused at round %zu: %s", sw_pbt_round(e->pbt), why);
    sw_engine__notice(e, SW_NOTICE_INFO,
                      "sweep %s: the population stops at "
                      "round %zu: %s",
                      e->sweep.id, sw_pbt_round(e->pbt), why);
}

/* Whether every member has paused at the round or ended: nothing of
 * the sweep is running, queued or being drawn. */
static bool round_complete(const sw_engine *e)
{
    return e->next_idx >= population(e) && !e->suggesting && !e->suggested &&
           e->n_slots == 0 && e->qlen == 0;
}

int sw_engine__pbt_due(sw_engine *e)
{
    sw_pbt_exploit *x;
    size_t n;
    char *why;

    if (!e->pbt || e->pbt_work || e->pbt_over || sw_engine__stopping(e) ||
        !round_complete(e) || sw_pbt_round(e->pbt) >= sw_pbt_rounds(e->pbt))
        return SW_OK;
    x = sw_calloc(population(e), sizeof(*x));
    if ((n = sw_pbt_decide(e->pbt, x)) == 0) {
        over(e, "no member reached it");
    } else if (sw_engine__budget_spent(e)) {
        over(e, "the budget is spent");
    } else if (e->spec->run_cap > 0 &&
               e->next_idx + n > (uint64_t)e->spec->run_cap) {
        why = sw_aprintf("its %zu new run%s would pass run_cap (%lld)", n,
                         n == 1 ? "" : "s", (long long)e->spec->run_cap);
        over(e, why);
        free(why);
    } else {
        return start_round(e, x, n); /* takes x */
    }
    free(x);
    return SW_OK;
}

void sw_engine__pbt_ending(sw_engine *e)
{
    if (e->pbt && !e->paused_why) /* metric.target reached, say */
        e->paused_why = sw_aprintf("paused at round %zu: the sweep ended "
                                   "before the next",
                                   sw_pbt_round(e->pbt));
}

bool sw_engine__pbt_busy(const sw_engine *e)
{
    return e->pbt_work != NULL;
}
