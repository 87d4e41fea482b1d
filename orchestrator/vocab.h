/*
 * vocab.h - the words of a sweep's life, each listed once: run states,
 * attempt outcomes, sweep states, and why the engine cancels an attempt.
 *
 * Each list is an X-macro, X(ID, "word"), from which the enum, the names,
 * the parsing and the store's CHECK constraints (store_schema.c) are all
 * made: adding a word is one line here plus one migration step that
 * rebuilds the checked table (docs/schema.md). The words are the store's
 * data, so a word is never renamed.
 */
#ifndef SW_VOCAB_H
#define SW_VOCAB_H

#include <stdbool.h>
#include <stddef.h>

#include "sweeps/buf.h"

/* A run's state (runs.state). */
#define SW_RUN_STATES(X)                                                       \
    X(PENDING, "pending")                                                      \
    X(RUNNING, "running")                                                      \
    X(FINISHED, "finished")                                                    \
    X(FAILED, "failed")                                                        \
    X(STOPPED, "stopped") /* ended early by a stopping rule */                 \
    X(CANCELED, "canceled")                                                    \
    X(PAUSED, "paused") /* at a rung, waiting to be promoted (promote.h) */

/* How one attempt of a run ended (attempts.outcome). */
#define SW_OUTCOMES(X)                                                         \
    X(FINISHED, "finished")                                                    \
    X(FAILED, "failed")           /* a non-zero exit or a signal */            \
    X(TIMEOUT, "timeout")         /* canceled for running out of time */       \
    X(LOST, "lost")               /* the machinery around it failed */         \
    X(STOPPED, "stopped")         /* by the stopping rule */                   \
    X(CANCELED, "canceled")       /* also an interrupted one */                \
    X(NOT_STARTED, "not started") /* its launch failed */                      \
    X(DISK, "disk") /* the machine's disk failed it (full, an I/O error) */    \
    X(PAUSED, "paused") /* it reached its rung and stopped to wait there */

/* A sweep's state (sweeps.state). A canceled sweep is documented in
 * docs/schema.md but never written by this sweep; an export still
 * treats one as ended. */
#define SW_SWEEP_STATES(X)                                                     \
    X(RUNNING, "running")                                                      \
    X(FINISHED, "finished")                                                    \
    X(FAILED, "failed")           /* its first runs all failed; resumable */   \
    X(INTERRUPTED, "interrupted") /* Ctrl-C; resumable */                      \
    X(CANCELED, "canceled")

/* Why the engine cancels an attempt, as the word a run's reason holds:
 * a timeout is a failure whose reason begins with its word ("timeout
 * after 60s"), and so is a run a PBT exploit replaced ("replaced by run
 * ..."); the others are the reason itself. */
#define SW_CANCELS(X)                                                          \
    X(TIMEOUT, "timeout")                                                      \
    X(STOPPED, "stopped early by the stopping rule")                           \
    X(INTERRUPTED, "interrupted") /* Ctrl-C twice */                           \
    X(TARGET, "target reached")   /* the metric's target */                    \
    X(BY_HAND, "stopped by hand") /* `sweep stop RUN`: ends `stopped` */       \
    X(REPLACED, "replaced") /* PBT: an exploit took its place; `stopped` */

#define SW_VOCAB_ONE_(id, word) +1

typedef enum {
#define SW_VOCAB_X_(id, word) SW_RUN_##id,
    SW_RUN_STATES(SW_VOCAB_X_)
#undef SW_VOCAB_X_
} sw_run_state;

typedef enum {
#define SW_VOCAB_X_(id, word) SW_OUTCOME_##id,
    SW_OUTCOMES(SW_VOCAB_X_)
#undef SW_VOCAB_X_
} sw_outcome;

typedef enum {
#define SW_VOCAB_X_(id, word) SW_SWEEP_##id,
    SW_SWEEP_STATES(SW_VOCAB_X_)
#undef SW_VOCAB_X_
} sw_sweep_state;

typedef enum {
    SW_CANCEL_NONE = 0, /* not canceled; not a word of the list */
#define SW_VOCAB_X_(id, word) SW_CANCEL_##id,
    SW_CANCELS(SW_VOCAB_X_)
#undef SW_VOCAB_X_
} sw_cancel;

/* How many words each list has: the size of an array indexed by it (by
 * value - 1 for the cancel reasons, which start at 1). */
#define SW_RUN_N_STATES (0 SW_RUN_STATES(SW_VOCAB_ONE_))
#define SW_N_OUTCOMES (0 SW_OUTCOMES(SW_VOCAB_ONE_))
#define SW_SWEEP_N_STATES (0 SW_SWEEP_STATES(SW_VOCAB_ONE_))
#define SW_N_CANCELS (0 SW_CANCELS(SW_VOCAB_ONE_))

/* The word of each value; never NULL: "unknown" outside the list. */
const char *sw_run_state_name(sw_run_state s);
const char *sw_outcome_name(sw_outcome o);
const char *sw_sweep_state_name(sw_sweep_state s);
const char *sw_cancel_name(sw_cancel c);

/* The value of a word (exactly as the name functions write it; NULL is
 * no word); SW_EINVALID, "unknown run state 'x'" and so on, if none. */
int sw_run_state_parse(sw_run_state *out, const char *word);
int sw_outcome_parse(sw_outcome *out, const char *word);
int sw_sweep_state_parse(sw_sweep_state *out, const char *word);
int sw_cancel_parse(sw_cancel *out, const char *word);

/* Whether `word` (may be NULL) is the name of `s`: how a sweep record's
 * state, still a string, is compared. This function can't fail. */
bool sw_sweep_state_is(const char *word, sw_sweep_state s);

/* Whether a run's reason (may be NULL) says its last attempt was lost
 * ("lost: ...", "lost 3 times: ..."). This function can't fail. */
bool sw_reason_is_lost(const char *reason);
/* Whether a run's reason says a PBT exploit replaced it ("replaced by
 * run ..."): its place went on in another run. */
bool sw_reason_is_replaced(const char *reason);

/* The lists as data, for what is made from a whole list. */
typedef enum {
    SW_VOCAB_RUN_STATES,
    SW_VOCAB_OUTCOMES,
    SW_VOCAB_SWEEP_STATES,
    SW_VOCAB_CANCELS,
} sw_vocab;

/* How many words `v` has (0 for no list). */
size_t sw_vocab_count(sw_vocab v);
/* The i-th word of `v`, from 0, in the order of its enum; NULL past the
 * end. */
const char *sw_vocab_word(sw_vocab v, size_t i);
/* Appends `v` as an SQL list of string literals: ('pending', 'running',
 * ...), for an IN (...) or a CHECK. This function can't fail. */
void sw_vocab_sql_list(sw_buf *out, sw_vocab v);

#endif
