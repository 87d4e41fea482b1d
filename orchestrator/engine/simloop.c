/*
 * simloop.c - the engine on an executor's virtual clock (`--backend
 * sim`): the driver that replaces uvloop.c when the executor keeps a
 * clock. It never sleeps on time: it pumps the engine, and when nothing
 * is left to do at this instant it moves the clock straight to
 * sw_engine__next_wake() (which holds the executor's next event) and
 * pumps again. A 64-GPU week is played as fast as the engine can decide.
 *
 * Slow work (search suggestions, run folders, store checkpoints) still
 * runs off the loop's thread, on a small pool of our own, and the clock
 * does not move while any is in flight, nor while the executor waits for
 * something real (its fd() is open: a surrogate process still running).
 * So a simulation's virtual timeline does not depend on how fast the
 * machine is: the same seed gives the same runs at the same virtual
 * times. SIGINT and SIGTERM reach the engine as they do under libuv. Only
 * the loop's thread writes the store.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "orchestrator/engine/engine_internal.h"

#define WORKERS 2
#define MAX_IDLE_PUMPS 100000 /* in a row at one instant: a stall */
#define COMMIT_EVERY_S 0.1    /* real seconds a transaction stays open */

typedef struct node node;
struct node {
    sw_engine_work *w;
    node *next;
};

typedef struct {
    sw_engine *e;
    pthread_t threads[WORKERS];
    size_t n_threads;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    node *todo, *done; /* under mu; todo in order, done in any */
    size_t in_flight;  /* submitted, not yet handed back to the engine */
    bool quit;
    int wake_fd;       /* an eventfd: a piece of work is done, or a signal */
    bool held;         /* the store's transaction is open (pump()) */
    double held_since; /* since when, in real seconds */
    bool signals;      /* our handlers are installed; old[] are the others */
    struct sigaction old[2];
} driver;

static volatile sig_atomic_t last_signal;
static int signal_fd = -1;

static void on_signal(int sig)
{
    uint64_t one = 1;
    int saved = errno;

    last_signal = sig;
    if (signal_fd >= 0 && write(signal_fd, &one, sizeof(one)) < 0)
        (void)0; /* the loop sees the signal at its next turn anyway */
    errno = saved;
}

static double real_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---- the worker pool -------------------------------------------------- */

static void *worker(void *arg)
{
    driver *d = arg;
    uint64_t one = 1;
    node *n;

    pthread_mutex_lock(&d->mu);
    for (;;) {
        while (!d->todo && !d->quit)
            pthread_cond_wait(&d->cv, &d->mu);
        if (!d->todo)
            break;
        n = d->todo;
        d->todo = n->next;
        pthread_mutex_unlock(&d->mu);
        n->w->run(n->w);
        pthread_mutex_lock(&d->mu);
        n->next = d->done;
        d->done = n;
        if (write(d->wake_fd, &one, sizeof(one)) < 0)
            (void)0; /* the counter is full: the loop is awake anyway */
    }
    pthread_mutex_unlock(&d->mu);
    return NULL;
}

static void submit(void *ctx, sw_engine_work *w)
{
    driver *d = ctx;
    node *n = sw_calloc(1, sizeof(*n)), **p;

    n->w = w;
    pthread_mutex_lock(&d->mu);
    for (p = &d->todo; *p; p = &(*p)->next)
        ;
    *p = n;
    d->in_flight++;
    pthread_cond_signal(&d->cv);
    pthread_mutex_unlock(&d->mu);
}

/* Hands finished work back to the engine, on the loop's thread. */
static void collect(driver *d)
{
    node *n, *next;

    pthread_mutex_lock(&d->mu);
    n = d->done;
    d->done = NULL;
    pthread_mutex_unlock(&d->mu);
    for (; n; n = next) {
        next = n->next;
        sw_engine__work_done(d->e, n->w);
        d->in_flight--;
        free(n);
    }
}

/* ---- waiting on real things ------------------------------------------- */

static void commit(driver *d);

/* Sleeps until some work is done, the executor's descriptor is readable
 * or a signal came; the store's transaction is committed when it has
 * been open COMMIT_EVERY_S, so a long wait leaves no reader behind. */
static void wait_real(driver *d)
{
    struct pollfd fds[2] = {{d->wake_fd, POLLIN, 0},
                            {sw_executor_fd(d->e->ex), POLLIN, 0}};
    double left = d->held_since + COMMIT_EVERY_S - real_now();
    uint64_t count;
    int n = 0;

    if (d->held && left > 0)
        n = poll(fds, 2, (int)(left * 1000) + 1);
    if (n == 0) {
        commit(d);
        n = poll(fds, 2, -1);
    }
    if (n > 0 && (fds[0].revents & POLLIN) &&
        read(d->wake_fd, &count, sizeof(count)) < 0)
        (void)0; /* nothing to clear */
}

static void take_signal(driver *d)
{
    int sig = last_signal;

    if (!sig)
        return;
    last_signal = 0;
    sw_engine__interrupt(d->e, sig);
}

/* The store's one transaction, committed between pumps (so a virtual
 * instant is recorded whole or not at all) once it has been open
 * COMMIT_EVERY_S of real time, before the loop waits on something real,
 * and at the end. Nothing of a simulation outlives it, so the store need
 * not reach the disk at each change; and most of what a commit costs is
 * writing each page it touched, which a commit of many instants does
 * once: the metrics of thousands of runs at distinct instants touch
 * nearly a page each. Only this connection reads what the loop decides
 * from, so when it is committed changes no decision. */
static void pump(driver *d)
{
    sw_engine *e = d->e;

    /* no hold while the WAL is checkpointed: SQLite starts the WAL over
     * only at a write transaction that begins once all of it is copied,
     * and a hold begun meanwhile would let it grow without end */
    if (!d->held && !e->checkpointing && sw_store_hold(e->st) == SW_OK) {
        d->held = true;
        d->held_since = real_now();
    }
    sw_engine__pump(e);
}

static void commit(driver *d)
{
    if (!d->held)
        return;
    d->held = false;
    sw_engine__fatal(d->e, sw_store_release(d->e->st));
}

static void commit_if_due(driver *d)
{
    if (d->held && real_now() - d->held_since >= COMMIT_EVERY_S)
        commit(d);
}

/* Moves the clock to `wake`; a clock that does not get there would spin
 * the loop forever, and ends the sweep instead. */
static void advance(sw_engine *e, double wake)
{
    double now;

    sw_executor_advance(e->ex, wake);
    now = sw_clock_mono(e->clock);
    if (now < wake)
        sw_engine__fatal(e, sw_error_set(SW_ERROR,
                                         "the simulated clock stays at %.9f "
                                         "when asked for %.9f",
                                         now, wake));
}

/* One turn: whether the loop goes on. The clock moves only when nothing
 * real is pending and nothing is due now. */
static bool turn(driver *d, size_t *idle)
{
    sw_engine *e = d->e;
    double wake, now;

    collect(d);
    take_signal(d);
    pump(d);
    if (e->finished) {
        commit(d);
        return false;
    }
    wake = sw_engine__next_wake(e);
    now = sw_clock_mono(e->clock);
    if (wake > 0 && wake <= now) { /* due now: pump again */
        if (++*idle == MAX_IDLE_PUMPS)
            sw_engine__fatal(e, sw_error_set(SW_ERROR,
                                             "the simulation is stuck at "
                                             "virtual second %.3f",
                                             now - e->t0));
        return true;
    }
    *idle = 0;
    if (d->in_flight > 0 || sw_executor_fd(e->ex) >= 0) {
        if (e->checkpointing) /* it copies what is committed */
            commit(d);
        wait_real(d);
    } else if (wake > 0) {
        commit_if_due(d);
        advance(e, wake);
    } else
        sw_engine__fatal(e, sw_error_set(SW_ERROR,
                                         "the simulation has nothing left "
                                         "to wait for"));
    return true;
}

/* ---- setting up ------------------------------------------------------- */

/* SIGINT and SIGTERM wake the loop and reach the engine at its next
 * turn (no SA_RESTART: poll() returns). */
static void catch_signals(driver *d)
{
    struct sigaction sa;

    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    signal_fd = d->wake_fd;
    last_signal = 0;
    sigaction(SIGINT, &sa, &d->old[0]);
    sigaction(SIGTERM, &sa, &d->old[1]);
    d->signals = true;
}

static int start(driver *d, sw_engine *e)
{
    d->e = e;
    pthread_mutex_init(&d->mu, NULL);
    pthread_cond_init(&d->cv, NULL);
    d->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (d->wake_fd < 0)
        return sw_error_set(SW_ERROR, "simulation: eventfd: %s",
                            strerror(errno));
    for (; d->n_threads < WORKERS; d->n_threads++)
        if (pthread_create(&d->threads[d->n_threads], NULL, worker, d) != 0)
            break;
    if (d->n_threads == 0)
        return sw_error_set(SW_ERROR, "simulation: cannot start a thread");
    e->host.submit = submit;
    e->host.ctx = d;
    catch_signals(d);
    return SW_OK;
}

/* Stops the workers (no work is in flight once the engine finished). */
static void stop(driver *d)
{
    size_t i;

    if (d->signals) {
        sigaction(SIGINT, &d->old[0], NULL);
        sigaction(SIGTERM, &d->old[1], NULL);
        signal_fd = -1;
    }
    pthread_mutex_lock(&d->mu);
    d->quit = true;
    pthread_cond_broadcast(&d->cv);
    pthread_mutex_unlock(&d->mu);
    for (i = 0; i < d->n_threads; i++)
        pthread_join(d->threads[i], NULL);
    pthread_cond_destroy(&d->cv);
    pthread_mutex_destroy(&d->mu);
    if (d->wake_fd >= 0)
        close(d->wake_fd);
    d->e->host.submit = NULL;
    d->e->host.ctx = NULL;
}

int sw_engine__run_sim(sw_engine *e)
{
    driver d;
    size_t idle = 0;
    int error;

    memset(&d, 0, sizeof(d));
    d.wake_fd = -1;
    if ((error = start(&d, e)) == SW_OK) {
        error = sw_engine__begin(e);
        while (turn(&d, &idle))
            ;
    }
    stop(&d);
    return error ? error : sw_engine__end(e);
}
