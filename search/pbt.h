/*
 * pbt.h - population-based training (Jaderberg et al., "Population Based
 * Training of Neural Networks", 2017), synchronous, with the exploit and
 * explore steps of Ray Tune's PopulationBasedTraining: a population of
 * `population` members trains in rounds of `interval` iterations up to
 * max_iter; once every member has reached round k (or ended without
 * reaching it), the members are ranked by their value at round k, and
 * each of the bottom `quantile` (truncation selection) copies one of the
 * top `quantile`, drawn at random: its checkpoint, and its parameters
 * perturbed (explore). docs/search.md says how the engine runs it
 * (`method: pbt`, orchestrator/engine/population.c).
 *
 * Members are places 0 .. population - 1, each held by one run at a time:
 * the caller maps places to runs. Round k's iteration is k * interval
 * (the last round's, max_iter); round 0 is the start.
 *
 * A pbt is pure: no clock, no I/O, and every random choice comes from a
 * stream of its seed named by the round and the member, so the same
 * records give the same decisions, whatever their order and however
 * often they are made: a resumed sweep rebuilds it from the store and
 * decides a round again exactly as before a crash.
 */
#ifndef SW_PBT_H
#define SW_PBT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sweeps/buf.h"
#include "sweeps/spec.h"

typedef struct sw_pbt sw_pbt;

/* One exploit of a round: the member at place `member` (ranked in the
 * bottom, or ended without reaching the round) takes the checkpoint and
 * the parameters, perturbed, of the member at place `parent` (top). */
typedef struct {
    size_t member;
    size_t parent;
} sw_pbt_exploit;

/* A pbt for `spec` (a valid `pbt:` section: sweeps/spec.h says what
 * that is; borrowed, it must outlive the pbt), for a metric to maximize
 * or not, with every random choice drawn from `seed`. SW_EINVALID, with
 * a message, for a section outside those bounds (one made in memory).
 * It starts at round 1, nothing recorded. */
int sw_pbt_new(sw_pbt **out, const sw_pbt_spec *spec, bool maximize,
               uint64_t seed);
/* Accepts NULL. */
void sw_pbt_free(sw_pbt *p);

/* The population; the number of rounds, ceil(max_iter / interval); the
 * iteration of round k (0 for k = 0, max_iter for the last and past
 * it). */
size_t sw_pbt_population(const sw_pbt *p);
size_t sw_pbt_rounds(const sw_pbt *p);
int64_t sw_pbt_round_iter(const sw_pbt *p, size_t k);

/* The round the population trains to now (1 .. rounds). */
size_t sw_pbt_round(const sw_pbt *p);

/* The round whose iteration `iter` is (a child's start: its parent's
 * iteration); 0 when it is none. */
size_t sw_pbt_round_at(const sw_pbt *p, int64_t iter);

/* Makes round k (1 .. rounds) the one trained to, nothing recorded at
 * it: a resumed sweep's rounds decided so far, plus one. */
void sw_pbt_start_at(sw_pbt *p, size_t k);

/* Records that the member at place `member` reached round k with `value`,
 * its metric at that iteration. Ignored unless k is the round trained to
 * now (and for a place past the population); a second record of a
 * member is ignored. A non-finite value ranks last. Can't fail. */
void sw_pbt_record(sw_pbt *p, size_t member, size_t k, double value);

/* Whether the member at `member` has reached the round trained to now;
 * *value its value there (may be NULL). */
bool sw_pbt_reached(const sw_pbt *p, size_t member, double *value);

/* How many members exploit at each round, and how many are the top they
 * copy: ceil(population * quantile), at most population / 2 (as Ray
 * Tune counts them). */
size_t sw_pbt_quota(const sw_pbt *p);

/* The exploits of the round trained to now, once every member not
 * recorded at it has ended without reaching it (the caller knows that;
 * this does not): into out[] (room for the population), by member,
 * their number returned. The ended rank below every member that reached
 * the round and are always replaced; the bottom quota in all are; each
 * draws its parent from the top quota (of those that reached it). 0 at
 * the last round (the population finishes there) and when no member
 * reached the round. Does not change the pbt: advance() does. */
size_t sw_pbt_decide(const sw_pbt *p, sw_pbt_exploit *out);

/* Goes on to the next round once the caller has carried out decide()'s
 * exploits: nothing recorded at it yet. */
void sw_pbt_advance(sw_pbt *p);

/* The parameters the member at `member` starts round k + 1 with when it
 * exploits at round k: `params` (its parent's, a nested map of plain
 * values) with each leaf of `spec` perturbed within its space: resampled
 * from its distribution with perturb.resample_probability; else a
 * number multiplied by one of perturb.factors, drawn at random (an
 * int_uniform rounded to an integer and moved by one at least; a
 * q-distribution rounded to q and moved by q at least; clipped to its
 * bounds: sw_transform__value), a categorical moved to a neighbouring
 * value (either side, at random, within the list); constants unchanged.
 * *out is the caller's. SW_EINVALID, naming the parameter, when a leaf
 * is missing from `params`. */
int sw_pbt_perturb(const sw_pbt *p, const sw_spec *spec, const sw_value *params,
                   size_t k, size_t member, sw_value **out);

/* One line on where the member at `member` stands at the round trained
 * to now ("round 1 (iteration 4): value 0.41, 2nd of the 3 there so
 * far"), for logs and its run's reason. */
void sw_pbt_explain(const sw_pbt *p, size_t member, sw_buf *out);

#endif
