/*
 * bench_metrics.c - how many metric values per second the engine
 * acknowledges, how fast it answers, and whether it ever loses one.
 *
 * A real sweep of 64 trials (each a `sleep`) runs in this process on the
 * engine's own loop, with its metrics server and a Hyperband rule. Once
 * every trial runs, 64 reporter threads, one per run with that run's own
 * token and URL, POST reports of 4 values each as fast as they can for
 * 10 s over keep-alive connections. Each report is acknowledged only
 * after it is committed; at the end the store's rows are counted against
 * the values acknowledged (lost: must be 0). Reporter k reports a loss of
 * k, so Hyperband stops the worse runs at iteration 9: the latency of
 * the answer that first says {"stop": true} is the stop latency.
 *
 * The same sweep runs again beside 1,000 slow clients: connections from
 * the reporters' own address that send a header line every 3 s and never
 * finish a request (reopened when cut). The reporters' throughput and
 * p99 should stay within 20 % of the run without them.
 *
 * The reference, in the same run: the same reporters against the same
 * server whose loop answers at once, storing nothing.
 *
 *   build/release/tests/bench/bench_metrics [SECONDS]
 *
 * Targets (issue "Live metrics over HTTP and early stopping"): at least
 * 50,000 acknowledged values per second, 0 lost, stop latency < 50 ms.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "orchestrator/engine/engine_internal.h"
#include "orchestrator/metrics_server.h"

#define REPORTERS 64
#define VALUES 4 /* per report */
#define MAX_SAMPLES 400000
#define SLOW_CLIENTS 1000

static double seconds = 10;

static double now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

typedef struct reporter reporter;
struct reporter {
    int k; /* 1..REPORTERS */
    int port;
    char path[256];
    char token[128];
    bool (*find)(reporter *r); /* its URL and token; false: not yet */
    const char *home, *sweep;  /* where find() looks */
    unsigned long long acked, measured, errors; /* values */
    double stop_latency; /* of the first stop answer; <0: none */
    float *lat_ms;       /* each measured report's round trip */
    size_t n_lat;
};

/* Reporters warm up (their reports prove their trials, so the engine
 * launches the rest) until all are ready; then all measure together. */
static pthread_mutex_t ready_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t ready_cond = PTHREAD_COND_INITIALIZER;
static int n_ready;
static double window_start, window_end;

static int dial(int port)
{
    struct sockaddr_in sa = {0};
    int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;

    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)port);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    return fd;
}

/* Reads one answer: its status, and whether its body says stop. */
static int read_answer(int fd, char *buf, size_t cap, bool *stop)
{
    size_t got = 0, need = 0;
    char *body, *cl;
    ssize_t n;
    int status = -1;

    for (;;) {
        if (got == cap - 1 || (n = read(fd, buf + got, cap - 1 - got)) <= 0)
            return -1;
        got += (size_t)n;
        buf[got] = '\0';
        if (!(body = strstr(buf, "\r\n\r\n")))
            continue;
        body += 4;
        if (!need) {
            if (!(cl = strstr(buf, "Content-Length:")))
                return -1;
            need = (size_t)(body - buf) + strtoul(cl + 15, NULL, 10);
        }
        if (got >= need)
            break;
    }
    sscanf(buf, "HTTP/1.1 %d", &status);
    *stop = strstr(body, "\"stop\": true") != NULL;
    return status;
}

/* One report; its status (<0: the connection failed). */
static int report(reporter *r, int fd, long step, bool *stop)
{
    char body[256], req[1024], buf[2048];
    size_t len, hl;

    len = (size_t)snprintf(body, sizeof(body),
                           "{\"step\": %ld, \"loss\": %d, \"acc\": 0.5, "
                           "\"lr\": 0.001, \"seconds\": %.6f}",
                           step, r->k, now());
    hl = (size_t)snprintf(req, sizeof(req),
                          "POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                          "Authorization: Bearer %s\r\n"
                          "Content-Type: application/json\r\n"
                          "Content-Length: %zu\r\n\r\n%s",
                          r->path, r->token, len, body);
    if (write(fd, req, hl) != (ssize_t)hl)
        return -1;
    return read_answer(fd, buf, sizeof(buf), stop);
}

static void become_ready(void)
{
    pthread_mutex_lock(&ready_lock);
    if (++n_ready == REPORTERS) {
        window_start = now();
        window_end = window_start + seconds;
        pthread_cond_broadcast(&ready_cond);
    }
    pthread_mutex_unlock(&ready_lock);
}

static void *report_loop(void *arg)
{
    reporter *r = arg;
    double t0, t1;
    int fd, status;
    long step = 0;
    bool stop, measuring;

    while (r->find && !r->find(r))
        usleep(20000);
    fd = dial(r->port);
    become_ready();
    r->stop_latency = -1;
    while (fd >= 0) {
        t0 = now();
        measuring = window_end > 0 && t0 >= window_start;
        if (window_end > 0 && t0 >= window_end)
            break;
        if ((status = report(r, fd, step, &stop)) < 0) {
            r->errors++;
            close(fd);
            fd = dial(r->port);
            continue;
        }
        t1 = now();
        if (measuring && r->n_lat < MAX_SAMPLES)
            r->lat_ms[r->n_lat++] = (float)((t1 - t0) * 1e3);
        if (status == 200) {
            r->acked += VALUES;
            r->measured += measuring ? VALUES : 0;
            step++;
            if (stop && r->stop_latency < 0)
                r->stop_latency = (t1 - t0) * 1e3;
        } else if (status != 503) {
            r->errors++;
        }
    }
    if (fd >= 0)
        close(fd);
    return NULL;
}

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;

    return x < y ? -1 : x > y;
}

typedef struct {
    double wall, p50, p99, stop_p50, stop_max;
    unsigned long long acked, measured, errors, stops;
} result;

/* Runs the reporters against whatever serves `rs` and sums them up. */
static void run_reporters(reporter *rs, result *out)
{
    pthread_t t[REPORTERS];
    float *all;
    size_t n = 0, i, j;
    double stops[REPORTERS];

    memset(out, 0, sizeof(*out));
    n_ready = 0;
    window_start = window_end = 0;
    for (i = 0; i < REPORTERS; i++) {
        rs[i].lat_ms = malloc(MAX_SAMPLES * sizeof(float));
        pthread_create(&t[i], NULL, report_loop, &rs[i]);
    }
    for (i = 0; i < REPORTERS; i++)
        pthread_join(t[i], NULL);
    out->wall = seconds;
    for (i = 0; i < REPORTERS; i++)
        n += rs[i].n_lat;
    all = malloc((n ? n : 1) * sizeof(float));
    for (i = 0, n = 0; i < REPORTERS; i++) {
        for (j = 0; j < rs[i].n_lat; j++)
            all[n++] = rs[i].lat_ms[j];
        out->acked += rs[i].acked;
        out->measured += rs[i].measured;
        out->errors += rs[i].errors;
        if (rs[i].stop_latency >= 0)
            stops[out->stops++] = rs[i].stop_latency;
        free(rs[i].lat_ms);
    }
    qsort(all, n, sizeof(float), cmp_float);
    out->p50 = n ? all[n / 2] : 0;
    out->p99 = n ? all[(size_t)((double)n * 0.99)] : 0;
    free(all);
    for (i = 1; i < out->stops; i++) /* insertion sort, 64 at most */
        for (j = i; j > 0 && stops[j - 1] > stops[j]; j--) {
            double x = stops[j];
            stops[j] = stops[j - 1];
            stops[j - 1] = x;
        }
    out->stop_p50 = out->stops ? stops[out->stops / 2] : 0;
    out->stop_max = out->stops ? stops[out->stops - 1] : 0;
}

/* ---- the reference: the server answering without storing ------------ */

typedef struct {
    sw_metrics_server *srv;
    volatile int quit;
} bare_loop;

static void *bare_main(void *arg)
{
    bare_loop *l = arg;
    struct pollfd p = {sw_metrics_server_fd(l->srv), POLLIN, 0};
    sw_metrics_report *r, *next;

    while (!l->quit) {
        if (poll(&p, 1, 50) <= 0)
            continue;
        for (r = sw_metrics_server_take(l->srv); r; r = next) {
            next = sw_metrics_report_next(r);
            sw_metrics_report_answer(r, 200, false, NULL);
        }
        sw_metrics_server_flush(l->srv);
    }
    return NULL;
}

static void reference(result *out)
{
    sw_metrics_server_opts o = SW_METRICS_SERVER_OPTS_INIT;
    reporter rs[REPORTERS];
    bare_loop l = {0};
    pthread_t t;
    char run[32];
    int i;

    if (sw_metrics_server_start(&l.srv, &o) != SW_OK)
        exit(1);
    memset(rs, 0, sizeof(rs));
    for (i = 0; i < REPORTERS; i++) {
        rs[i].k = i + 1;
        rs[i].port = sw_metrics_server_port(l.srv);
        snprintf(rs[i].path, sizeof(rs[i].path), "/v1/runs/r%d/metrics", i);
        snprintf(rs[i].token, sizeof(rs[i].token), "token-%064d", i);
        snprintf(run, sizeof(run), "r%d", i);
        sw_metrics_server_allow(l.srv, run, rs[i].token);
    }
    pthread_create(&t, NULL, bare_main, &l);
    run_reporters(rs, out);
    l.quit = 1;
    pthread_join(t, NULL);
    sw_metrics_server_free(l.srv);
}

/* ---- slow clients: connections that never finish a request ---------- */

/* SLOW_CLIENTS connections that each send one header line every 3 s and
 * never finish their request, reopened as soon as the server cuts one:
 * what a broken proxy or a slowloris attack does. */
typedef struct {
    const reporter *rs; /* their port, once known */
    pthread_t thread;
    volatile int quit;
    int n, open_min, open_max; /* held open during the window */
    unsigned long long opened;
} slow_crowd;

static bool cut_by_server(int fd)
{
    struct pollfd p = {fd, POLLIN, 0};
    char c;

    return poll(&p, 1, 0) == 1 && read(fd, &c, 1) <= 0;
}

/* One round: every cut connection reopened, every open one a line on. */
static int trickle(slow_crowd *c, int *fds, int port)
{
    static const char start[] = "POST /v1/runs/x/metrics HTTP/1.1\r\n";
    static const char line[] = "X-Slow: 1\r\n";
    int i, open_now = 0;

    for (i = 0; i < c->n; i++) {
        if (fds[i] >= 0 && cut_by_server(fds[i])) {
            close(fds[i]);
            fds[i] = -1;
        }
        if (fds[i] < 0 && (fds[i] = dial(port)) >= 0) {
            c->opened++;
            (void)!write(fds[i], start, sizeof(start) - 1);
        } else if (fds[i] >= 0) {
            (void)!write(fds[i], line, sizeof(line) - 1);
        }
        open_now += fds[i] >= 0;
    }
    return open_now;
}

static void *slow_main(void *arg)
{
    slow_crowd *c = arg;
    int *fds = malloc((size_t)c->n * sizeof(int)), i, k, open_now;
    double t;

    for (i = 0; i < c->n; i++)
        fds[i] = -1;
    while (!c->quit && c->rs[0].port == 0)
        usleep(10000);
    c->open_min = c->n;
    while (!c->quit) {
        open_now = trickle(c, fds, c->rs[0].port);
        t = now();
        if (window_start > 0 && t > window_start && t < window_end) {
            c->open_min = open_now < c->open_min ? open_now : c->open_min;
            c->open_max = open_now > c->open_max ? open_now : c->open_max;
        }
        for (k = 0; k < 300 && !c->quit; k++)
            usleep(10000);
    }
    for (i = 0; i < c->n; i++)
        if (fds[i] >= 0)
            close(fds[i]);
    free(fds);
    return NULL;
}

/* ---- the engine ----------------------------------------------------- */

typedef struct {
    sw_engine *e;
    char home[512];
    reporter rs[REPORTERS];
    result res;
    slow_crowd slow; /* n 0: none */
} engine_run;

static bool read_file(const char *path, char *out, size_t cap)
{
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(out, 1, cap - 1, f) : 0;

    if (f)
        fclose(f);
    out[n] = '\0';
    return n > 0;
}

/* A run's URL and token, once its trial is launched. */
static bool find_run(reporter *r)
{
    char path[1024], url[512], *p;

    snprintf(path, sizeof(path), "%s/runs/%s-%d/metrics_url", r->home, r->sweep,
             r->k);
    if (!read_file(path, url, sizeof(url)))
        return false;
    snprintf(path, sizeof(path), "%s/runs/%s-%d/bench_token", r->home, r->sweep,
             r->k);
    if (!read_file(path, r->token, sizeof(r->token)) ||
        strlen(r->token) != 64 || /* written whole */
        !(p = strchr(url + 7, ':')))
        return false;
    r->port = atoi(p + 1);
    snprintf(r->path, sizeof(r->path), "%s", strchr(p, '/'));
    usleep(100000); /* its launch answered */
    return true;
}

/* Reports, then ends the sweep with two SIGTERMs (the second cancels
 * the trials). */
static void *drive(void *arg)
{
    engine_run *x = arg;
    int i;

    for (i = 0; i < REPORTERS; i++) {
        x->rs[i].k = i + 1;
        x->rs[i].find = find_run;
        x->rs[i].home = x->home;
        x->rs[i].sweep = x->e->sweep.id;
    }
    x->slow.rs = x->rs;
    if (x->slow.n)
        pthread_create(&x->slow.thread, NULL, slow_main, &x->slow);
    run_reporters(x->rs, &x->res);
    if (x->slow.n) {
        x->slow.quit = 1;
        pthread_join(x->slow.thread, NULL);
    }
    kill(getpid(), SIGTERM);
    usleep(200000);
    kill(getpid(), SIGTERM);
    return NULL;
}

static long long count_rows(const char *home, const char *sweep)
{
    char path[600], sql[256];
    sqlite3 *db;
    sqlite3_stmt *s;
    long long n = -1;

    snprintf(path, sizeof(path), "%s/sweep.db", home);
    snprintf(sql, sizeof(sql),
             "SELECT count(*) FROM metrics WHERE run_id LIKE '%s-%%'", sweep);
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
        sqlite3_prepare_v2(db, sql, -1, &s, NULL) == SQLITE_OK) {
        if (sqlite3_step(s) == SQLITE_ROW)
            n = sqlite3_column_int64(s, 0);
        sqlite3_finalize(s);
    }
    sqlite3_close(db);
    return n;
}

static int with_engine(engine_run *x, long long *stored)
{
    char dir[] = "/tmp/sweep-bench-metrics-XXXXXX", path[600];
    sw_engine_opts o = SW_ENGINE_OPTS_INIT;
    sw_engine e;
    pthread_t t;
    FILE *f;
    int error;

    if (!mkdtemp(dir))
        return 1;
    snprintf(path, sizeof(path), "%s/sweep.yaml", dir);
    snprintf(x->home, sizeof(x->home), "%s/.sweep", dir);
    if (!(f = fopen(path, "w")))
        return 1;
    fprintf(f,
            "method: grid\nparallel: %d\n"
            "metric: {name: loss, goal: minimize}\n"
            "early_terminate: {type: hyperband, min_iter: 9, eta: 3, "
            "grace: 600}\n"
            /* a trial has its token only in its environment */
            "command: [/bin/sh, -c, 'printf %%s \"$SWEEP_TOKEN\" > "
            "\"$SWEEP_RUN_DIR/bench_token\"; exec sleep 600']\n"
            "parameters:\n  k: {values: [",
            REPORTERS);
    for (int i = 0; i < REPORTERS; i++)
        fprintf(f, "%s%d", i ? ", " : "", i + 1);
    fprintf(f, "]}\n");
    fclose(f);
    if (chdir(dir) != 0)
        return 1;
    sw_engine__init(&e);
    o.home = x->home;
    o.quiet = true;
    x->e = &e;
    error = sw_engine__prepare_run(&e, path, &o);
    if (!error)
        error = sw_engine__setup(&e, &o);
    e.serve = true;
    if (!error)
        pthread_create(&t, NULL, drive, x);
    if (!error)
        error = sw_engine__run_uv(&e);
    if (error && error != SW_EINTR)
        fprintf(stderr, "bench_metrics: %s\n", sw_error_last());
    pthread_join(t, NULL);
    *stored = count_rows(x->home, e.sweep.id);
    sw_engine__dispose(&e);
    snprintf(path, sizeof(path), "rm -rf %s", dir);
    return system(path) == 0 && (!error || error == SW_EINTR) ? 0 : 1;
}

static void print(const char *what, const result *r)
{
    printf("  %-34s %9.0f values/s  %7.0f reports/s  p50 %6.2f ms  p99 "
           "%6.2f ms  errors %llu\n",
           what, (double)r->measured / r->wall,
           (double)r->measured / VALUES / r->wall, r->p50, r->p99, r->errors);
}

int main(int argc, char **argv)
{
    static engine_run x, crowded;
    result ref;
    long long stored = -1, stored2 = -1;
    int rc;

    if (argc > 1)
        seconds = strtod(argv[1], NULL);
    signal(SIGPIPE, SIG_IGN);
    rc = with_engine(&x, &stored);
    crowded.slow.n = SLOW_CLIENTS;
    rc |= with_engine(&crowded, &stored2);

    reference(&ref);
    printf("%d reporters, %d values a report, %.0f s each, on %ld CPUs:\n",
           REPORTERS, VALUES, seconds, sysconf(_SC_NPROCESSORS_ONLN));
    print("engine (committed, then answered)", &x.res);
    print("engine, beside 1000 slow clients", &crowded.res);
    print("server alone, storing nothing", &ref);
    printf("  with the slow clients: throughput %.2fx, p99 %.2fx of the "
           "engine alone; %d to %d of them held open meanwhile, %llu "
           "opened (reopened when cut), lost %lld\n",
           (double)crowded.res.measured / (double)x.res.measured,
           x.res.p99 > 0 ? crowded.res.p99 / x.res.p99 : 0,
           crowded.slow.open_min, crowded.slow.open_max, crowded.slow.opened,
           stored2 - (long long)crowded.res.acked);
    printf("  lost values (stored - acknowledged): %lld (stored %lld, "
           "acknowledged %llu)\n",
           stored - (long long)x.res.acked, stored, x.res.acked);
    printf("  stop latency (answer that first says stop): %llu runs stopped, "
           "p50 %.2f ms, worst %.2f ms\n",
           x.res.stops, x.res.stop_p50, x.res.stop_max);
    printf("  targets: >= 50,000 values/s, 0 lost, stop latency < 50 ms\n");
    return rc;
}
