/*
 * events.h - what the engine tells the world, as typed events: a run
 * changed state, a value was stored, the sweep changed state, a notice
 * for a person, a tick for views that redraw. Every view (the status
 * line, the attempts table, the budget, a dashboard, a test) is a
 * consumer subscribed to the engine; none is called from where things
 * are decided.
 *
 * Events are told on the loop's thread, after what they say is
 * committed to the store, in the order it happened. Pointers in an
 * event are borrowed for the length of the call.
 */
#ifndef SW_ENGINE_EVENTS_H
#define SW_ENGINE_EVENTS_H

#include <stdbool.h>
#include <stdint.h>

#include "orchestrator/store/store.h"

typedef enum {
    SW_EV_RUN,    /* a run changed state: run (as it is now), from, end */
    SW_EV_VALUE,  /* a value was stored: run, step, name, value, time */
    SW_EV_SWEEP,  /* the sweep changed state: sweep_state */
    SW_EV_NOTICE, /* for a person: level, text */
    SW_EV_TICK,   /* the loop did a round (final: the sweep is over) */
} sw_event_kind;

typedef enum {
    SW_NOTICE_RESULT, /* on stdout, even with --quiet */
    SW_NOTICE_INFO,   /* on stdout, not with --quiet */
    SW_NOTICE_WARN,   /* on stderr, not with --quiet */
    SW_NOTICE_ERROR,  /* on stderr, always */
} sw_notice_level;

/* How an attempt ended, told with the state change it caused. */
typedef struct {
    bool started;       /* false: it could not be started */
    bool lost;          /* the executor lost it (not the trial's failure) */
    bool timeout;       /* it ran out of time */
    bool disk;          /* the machine's disk failed it (sw_exit.disk) */
    double gpu;         /* the GPUs it held (devices.c's count) */
    int64_t first_step; /* its first reported step; -1: none; -2: unknown */
} sw_attempt_end;

typedef struct {
    sw_event_kind kind;
    const char *sweep_id;
    double time; /* wall time on the engine's clock */
    /* SW_EV_RUN, SW_EV_VALUE */
    const sw_run_rec *run;
    /* SW_EV_RUN: the state it left (SW_RUN_PENDING for a new run), and
     * how its attempt ended when that made the change (else NULL) */
    sw_run_state from;
    const sw_attempt_end *end;
    /* SW_EV_VALUE: one value as the store keeps it (step -1: none) */
    int64_t step;
    const char *name;
    double value;
    /* SW_EV_SWEEP */
    sw_sweep_state sweep_state;
    /* SW_EV_NOTICE: one message, without a trailing newline */
    sw_notice_level level;
    const char *text;
    /* SW_EV_TICK */
    bool final;
} sw_event;

/* A consumer: called with every event, in order. A nonzero return (an
 * SW_E code, with its message set) is a failure to record the event,
 * which ends the sweep as a store error does; the other consumers are
 * still told. */
typedef int (*sw_event_fn)(void *ctx, const sw_event *ev);

#endif
