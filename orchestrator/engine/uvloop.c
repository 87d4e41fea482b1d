/*
 * uvloop.c - the engine on a libuv loop: the only file that includes
 * <uv.h>. Its sources are the executor's descriptor, one timer set to
 * sw_engine__next_wake(), SIGINT and SIGTERM, and libuv's worker pool
 * for slow work; each wakes sw_engine__pump(). Nothing here decides
 * anything, and the loop's thread is the only one that writes the store.
 *
 * The loop sleeps in epoll until something happens: with trials running
 * and nothing due, `sweep` wakes only to read their output (lifecycle.c's
 * TAIL_S) and for what the executor asked.
 */
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <uv.h>

#include "orchestrator/engine/engine_internal.h"
#include "orchestrator/metrics_server.h"

typedef struct {
    sw_engine *e;
    uv_loop_t loop;
    uv_timer_t timer;
    uv_signal_t sigint, sigterm;
    uv_poll_t *poll; /* on the executor's descriptor; NULL: none */
    int poll_fd;
    uv_poll_t *reports; /* on the metrics server's; NULL: none */
    bool closing;
    uv_timer_t probe; /* with e->probe: the 1 ms timer */
    uint64_t probe_due;
} driver;

typedef struct {
    uv_work_t req;
    sw_engine_work *w;
    driver *d;
    uint64_t ns; /* how long run() took */
} work_req;

static void step(driver *d);

static void free_handle(uv_handle_t *h)
{
    free(h);
}

/* Slow work yields to the loop: each worker thread lowers its own
 * priority once, so on a machine whose cores the trials keep busy the
 * loop's thread is the one the scheduler runs first when it wakes. */
static void lower_my_priority(void)
{
    static _Thread_local bool done;

    if (!done && setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), 10))
        done = true; /* not permitted: the loop works all the same */
    done = true;
}

static void on_work(uv_work_t *req)
{
    work_req *wr = req->data;
    uint64_t t0;

    lower_my_priority();
    t0 = uv_hrtime();

    wr->w->run(wr->w);
    wr->ns = uv_hrtime() - t0;
}

static void probe_work(driver *d, const work_req *wr)
{
    sw_loop_probe *p = d->e->probe;
    double ms = (double)wr->ns / 1e6;

    if (!p)
        return;
    p->works++;
    p->work_sum_ms += ms;
    if (ms > p->work_worst_ms)
        p->work_worst_ms = ms;
}

static void after_work(uv_work_t *req, int status)
{
    work_req *wr = req->data;
    driver *d = wr->d;

    (void)status; /* never canceled: the loop waits for all work */
    probe_work(d, wr);
    sw_engine__work_done(d->e, wr->w);
    free(wr);
    step(d);
}

static void submit(void *ctx, sw_engine_work *w)
{
    driver *d = ctx;
    work_req *wr = sw_calloc(1, sizeof(*wr));

    wr->req.data = wr;
    wr->w = w;
    wr->d = d;
    uv_queue_work(&d->loop, &wr->req, on_work, after_work);
}

/* A watch of a trial's output file (inotify, through libuv): each change
 * marks its slot and wakes the engine, so a @metrics line is read as it
 * is written, not at the next poll. */
typedef struct {
    uv_fs_event_t h;
    driver *d;
    void *slot; /* NULL once unwatched: the handle is closing */
} output_watch;

static void on_output(uv_fs_event_t *h, const char *name, int events,
                      int status)
{
    output_watch *w = h->data;

    (void)name;
    (void)events;
    if (status < 0 || !w->slot)
        return;
    sw_engine__output_changed(w->slot);
    step(w->d);
}

static void *watch(void *ctx, const char *path, void *slot)
{
    output_watch *w = sw_calloc(1, sizeof(*w));

    w->d = ctx;
    w->slot = slot;
    w->h.data = w;
    if (uv_fs_event_init(&w->d->loop, &w->h) != 0) {
        free(w);
        return NULL; /* polled, as without a watch */
    }
    if (uv_fs_event_start(&w->h, on_output, path, 0) != 0) {
        uv_close((uv_handle_t *)&w->h, free_handle);
        return NULL;
    }
    return w;
}

static void unwatch(void *ctx, void *handle)
{
    output_watch *w = handle;

    (void)ctx;
    w->slot = NULL;
    uv_fs_event_stop(&w->h);
    uv_close((uv_handle_t *)&w->h, free_handle);
}

static void on_timer(uv_timer_t *t)
{
    step(t->data);
}

static void on_poll(uv_poll_t *p, int status, int events)
{
    (void)status;
    (void)events;
    step(p->data);
}

static void on_signal(uv_signal_t *s, int signum)
{
    driver *d = s->data;

    sw_engine__interrupt(d->e, signum);
    step(d);
}

/* The probe's 1 ms timer: how late it fires is how long the loop was
 * busy with something else. */
static void on_probe(uv_timer_t *t)
{
    driver *d = t->data;
    sw_loop_probe *p = d->e->probe;
    uint64_t now = uv_hrtime();
    double late = now > d->probe_due ? (double)(now - d->probe_due) / 1e6 : 0;
    size_t bucket = (size_t)(late * 10);

    p->ticks++;
    p->sum_ms += late;
    if (late > p->worst_ms)
        p->worst_ms = late;
    p->late_hist[bucket < 255 ? bucket : 255]++;
    d->probe_due = now + 1000000;
}

static void start_probe(driver *d)
{
    if (!d->e->probe)
        return;
    uv_timer_init(&d->loop, &d->probe);
    d->probe.data = d;
    d->probe_due = uv_hrtime() + 1000000;
    uv_timer_start(&d->probe, on_probe, 1, 1);
}

static void stop_poll(driver *d)
{
    if (!d->poll)
        return;
    uv_poll_stop(d->poll);
    uv_close((uv_handle_t *)d->poll, free_handle);
    d->poll = NULL;
    d->poll_fd = -1;
}

/* Watches the executor's descriptor, which may change after a pump. */
static void watch_executor(driver *d)
{
    int fd = sw_executor_fd(d->e->ex);

    if (fd == d->poll_fd)
        return;
    stop_poll(d);
    if (fd < 0)
        return;
    d->poll = sw_calloc(1, sizeof(*d->poll));
    d->poll->data = d;
    if (uv_poll_init(&d->loop, d->poll, fd) != 0) {
        free(d->poll);
        d->poll = NULL;
        return; /* the timer still polls the executor */
    }
    d->poll_fd = fd;
    uv_poll_start(d->poll, UV_READABLE | UV_DISCONNECT, on_poll);
}

/* Watches the metrics server's descriptor, once it runs. */
static void watch_server(driver *d)
{
    if (d->reports || !d->e->server)
        return;
    d->reports = sw_calloc(1, sizeof(*d->reports));
    d->reports->data = d;
    if (uv_poll_init(&d->loop, d->reports,
                     sw_metrics_server_fd(d->e->server)) != 0) {
        free(d->reports);
        d->reports = NULL;
        return;
    }
    uv_poll_start(d->reports, UV_READABLE, on_poll);
}

static void close_all(driver *d)
{
    sw_engine *e = d->e;

    d->closing = true;
    for (size_t i = 0; i < e->n_slots; i++) { /* left by a store error */
        if (e->slots[i]->watch)
            unwatch(d, e->slots[i]->watch);
        e->slots[i]->watch = NULL;
    }
    stop_poll(d);
    if (d->reports) {
        uv_poll_stop(d->reports);
        uv_close((uv_handle_t *)d->reports, free_handle);
        d->reports = NULL;
    }
    uv_close((uv_handle_t *)&d->timer, NULL);
    uv_close((uv_handle_t *)&d->sigint, NULL);
    uv_close((uv_handle_t *)&d->sigterm, NULL);
    if (d->e->probe)
        uv_close((uv_handle_t *)&d->probe, NULL);
}

/* One round: the engine does what is due, then the sources are set for
 * the next. */
static double thread_cpu_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* With a probe: how long one step took, on the clock and on the CPU. */
static void probe_step(driver *d, uint64_t t0, double cpu0)
{
    sw_loop_probe *p = d->e->probe;
    double ms = (double)(uv_hrtime() - t0) / 1e6, cpu = thread_cpu_ms() - cpu0;

    p->steps++;
    p->step_worst_ms = ms > p->step_worst_ms ? ms : p->step_worst_ms;
    p->step_cpu_worst_ms =
        cpu > p->step_cpu_worst_ms ? cpu : p->step_cpu_worst_ms;
}

static void step(driver *d)
{
    bool probe = d->e->probe != NULL;
    uint64_t t0 = probe ? uv_hrtime() : 0;
    double cpu0 = probe ? thread_cpu_ms() : 0, wake, delay;

    if (d->closing)
        return;
    sw_engine__pump(d->e);
    if (probe)
        probe_step(d, t0, cpu0);
    if (d->e->finished) {
        close_all(d);
        return;
    }
    watch_executor(d);
    watch_server(d);
    wake = sw_engine__next_wake(d->e);
    if (wake <= 0) {
        uv_timer_stop(&d->timer);
        return;
    }
    delay = ceil((wake - sw_clock_mono(d->e->clock)) * 1000);
    uv_timer_start(&d->timer, on_timer, delay < 1 ? 1 : (uint64_t)delay, 0);
}

static int init(driver *d, sw_engine *e)
{
    int rc;

    d->e = e;
    d->poll_fd = -1;
    if ((rc = uv_loop_init(&d->loop)) != 0)
        return sw_error_set(SW_ERROR, "event loop: %s", uv_strerror(rc));
    uv_timer_init(&d->loop, &d->timer);
    uv_signal_init(&d->loop, &d->sigint);
    uv_signal_init(&d->loop, &d->sigterm);
    d->timer.data = d->sigint.data = d->sigterm.data = d;
    uv_signal_start(&d->sigint, on_signal, SIGINT);
    uv_signal_start(&d->sigterm, on_signal, SIGTERM);
    e->host.submit = submit;
    e->watcher = (sw_engine_watcher){watch, unwatch, d};
    e->host.ctx = d;
    start_probe(d);
    return SW_OK;
}

int sw_engine__run_uv(sw_engine *e)
{
    driver *d = sw_calloc(1, sizeof(*d)); /* the engine points at it */
    int error = init(d, e);

    if (!error) {
        error = sw_engine__begin(e);
        step(d);
        uv_run(&d->loop, UV_RUN_DEFAULT);
        uv_loop_close(&d->loop);
    }
    e->host.submit = NULL;
    e->watcher = (sw_engine_watcher){NULL, NULL, NULL};
    e->host.ctx = NULL;
    free(d);
    return error ? error : sw_engine__end(e);
}
