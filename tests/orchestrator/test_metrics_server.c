/*
 * test_metrics_server.c - the metrics endpoint over real HTTP on
 * 127.0.0.1: every answer the protocol names (docs/metrics.md), with a
 * thread of the test standing in for the engine's loop.
 */
#include <arpa/inet.h>
#include <math.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdbool.h>
#include <pthread.h>
#include <signal.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "orchestrator/metrics_server.h"
#include "sweeps/error.h"

#define TOKEN_A                                                                \
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define TOKEN_C                                                                \
    "cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc"
#define TOKEN_B                                                                \
    "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"

/* The loop: answers every report 200, stop for run "r2", and keeps the
 * values it saw. With `hold`, it takes nothing. */
typedef struct {
    sw_metrics_server *srv;
    pthread_t thread;
    pthread_mutex_t lock;
    atomic_int quit, hold; /* set by the test, read by the loop thread */
    double values[64];
    char names[64][32];
    size_t n;
} loop;

static void *loop_main(void *arg)
{
    loop *l = arg;
    struct pollfd p = {sw_metrics_server_fd(l->srv), POLLIN, 0};
    sw_metrics_report *r, *next;
    const sw_metric_batch *b;
    size_t i;

    while (!l->quit) {
        if (poll(&p, 1, 20) <= 0 || l->hold)
            continue;
        for (r = sw_metrics_server_take(l->srv); r; r = next) {
            next = sw_metrics_report_next(r);
            if (sw_metrics_report_is_next(r)) { /* a worker's: r1 gets r3 */
                sw_metrics_report_answer_json(
                    r, strcmp(sw_metrics_report_run(r), "r1") == 0
                           ? "{\"run\": {\"id\": \"r3\"}}"
                           : "{\"run\": null}");
                continue;
            }
            b = sw_metrics_report_batch(r);
            pthread_mutex_lock(&l->lock);
            for (i = 0; i < b->len && l->n < 64; i++, l->n++) {
                l->values[l->n] = b->items[i].value;
                snprintf(l->names[l->n], 32, "%s", b->items[i].name);
            }
            pthread_mutex_unlock(&l->lock);
            if (strcmp(sw_metrics_report_run(r), "r3") == 0)
                sw_metrics_report_answer_pause(r);
            else
                sw_metrics_report_answer(
                    r, 200, strcmp(sw_metrics_report_run(r), "r2") == 0, NULL);
        }
        sw_metrics_server_flush(l->srv);
    }
    return NULL;
}

typedef struct {
    int status;
    char body[4096];
    char headers[4096];
} answer;

/* One HTTP/1.1 request on a fresh connection; the whole answer read. */
static void http(int port, const char *method, const char *path,
                 const char *token, const char *body, size_t body_len,
                 answer *a)
{
    struct sockaddr_in sa = {0};
    char head[1024], buf[16384], *sep;
    size_t got = 0;
    ssize_t n;
    int fd = socket(AF_INET, SOCK_STREAM, 0);

    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)port);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    snprintf(head, sizeof(head),
             "%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
             "%s%s%sContent-Type: application/json\r\n"
             "Content-Length: %zu\r\n\r\n",
             method, path, token ? "Authorization: Bearer " : "",
             token ? token : "", token ? "\r\n" : "", body_len);
    assert_true(write(fd, head, strlen(head)) == (ssize_t)strlen(head));
    if (body_len)
        (void)!write(fd, body, body_len); /* may be cut short by a 413 */
    while (got < sizeof(buf) - 1 &&
           (n = read(fd, buf + got, sizeof(buf) - 1 - got)) > 0)
        got += (size_t)n;
    buf[got] = '\0';
    close(fd);
    memset(a, 0, sizeof(*a));
    assert_int_equal(sscanf(buf, "HTTP/1.1 %d", &a->status), 1);
    sep = strstr(buf, "\r\n\r\n");
    assert_non_null(sep);
    snprintf(a->headers, sizeof(a->headers), "%.*s", (int)(sep - buf), buf);
    snprintf(a->body, sizeof(a->body), "%s", sep + 4);
}

static void post(int port, const char *run, const char *token, const char *body,
                 answer *a)
{
    char path[256];

    snprintf(path, sizeof(path), "/v1/runs/%s/metrics", run);
    http(port, "POST", path, token, body, strlen(body), a);
}

static int setup(void **state)
{
    sw_metrics_server_opts o = SW_METRICS_SERVER_OPTS_INIT;
    loop *l = calloc(1, sizeof(*l));

    o.body_limit = 4096;
    o.run_limit = 2;
    assert_int_equal(sw_metrics_server_start(&l->srv, &o), SW_OK);
    sw_metrics_server_allow(l->srv, "r1", TOKEN_A);
    sw_metrics_server_allow(l->srv, "r2", TOKEN_B);
    sw_metrics_server_allow(l->srv, "r3", TOKEN_C);
    pthread_mutex_init(&l->lock, NULL);
    pthread_create(&l->thread, NULL, loop_main, l);
    *state = l;
    return 0;
}

static int teardown(void **state)
{
    loop *l = *state;

    l->quit = 1;
    pthread_join(l->thread, NULL);
    sw_metrics_server_free(l->srv);
    pthread_mutex_destroy(&l->lock);
    free(l);
    return 0;
}

static void test_report_is_answered(void **state)
{
    loop *l = *state;
    int port = sw_metrics_server_port(l->srv);
    char *url = sw_metrics_server_run_url(l->srv, "r1");
    answer a;

    assert_true(port > 0);
    assert_non_null(strstr(url, "http://127.0.0.1:"));
    assert_non_null(strstr(url, "/v1/runs/r1/metrics"));
    free(url);
    post(port, "r1", TOKEN_A, "{\"step\": 3, \"loss\": 0.41, \"acc\": 0.87}",
         &a);
    assert_int_equal(a.status, 200);
    assert_string_equal(a.body, "{\"stop\": false}\n");
    post(port, "r2", TOKEN_B, "[{\"loss\": NaN}, {\"loss\": -Infinity}]", &a);
    assert_int_equal(a.status, 200);
    assert_string_equal(a.body, "{\"stop\": true}\n");
    pthread_mutex_lock(&l->lock);
    assert_int_equal(l->n, 4);
    assert_string_equal(l->names[0], "loss");
    assert_true(l->values[0] == 0.41);
    assert_true(isnan(l->values[2]));
    assert_true(isinf(l->values[3]) && l->values[3] < 0);
    pthread_mutex_unlock(&l->lock);
}

static void test_tokens(void **state)
{
    loop *l = *state;
    int port = sw_metrics_server_port(l->srv);
    answer a;

    post(port, "r1", NULL, "{\"loss\": 1}", &a);
    assert_int_equal(a.status, 401);
    post(port, "r1", "nope", "{\"loss\": 1}", &a);
    assert_int_equal(a.status, 401);
    post(port, "r1", TOKEN_A "x", "{\"loss\": 1}", &a);
    assert_int_equal(a.status, 401);
    post(port, "r2", TOKEN_A, "{\"loss\": 1}", &a);
    assert_int_equal(a.status, 403);
    assert_non_null(strstr(a.body, "another run"));
    sw_metrics_server_revoke(l->srv, "r1");
    post(port, "r1", TOKEN_A, "{\"loss\": 1}", &a);
    assert_int_equal(a.status, 401);
    assert_int_equal(l->n, 0); /* nothing reached the loop */
}

static void test_bad_requests(void **state)
{
    loop *l = *state;
    int port = sw_metrics_server_port(l->srv);
    char big[8192];
    answer a;

    post(port, "r1", TOKEN_A, "{\"loss\": ", &a);
    assert_int_equal(a.status, 400);
    assert_true(strchr(a.body, '\n') == a.body + strlen(a.body) - 1);
    post(port, "r1", TOKEN_A, "{\"loss\": \"low\"}", &a);
    assert_int_equal(a.status, 400);
    assert_non_null(strstr(a.body, "not a number"));
    post(port, "r1", TOKEN_A, "{\"step\": -1, \"loss\": 1}", &a);
    assert_int_equal(a.status, 400);
    post(port, "r1", TOKEN_A, "[1, 2]", &a);
    assert_int_equal(a.status, 400);
    memset(big, ' ', sizeof(big));
    memcpy(big, "{\"loss\": 1}", 11);
    http(port, "POST", "/v1/runs/r1/metrics", TOKEN_A, big, sizeof(big), &a);
    assert_int_equal(a.status, 413);
    post(port, "r1/x", TOKEN_A, "{\"loss\": 1}", &a);
    assert_int_equal(a.status, 404);
    http(port, "POST", "/", TOKEN_A, "{}", 2, &a);
    assert_int_equal(a.status, 404);
    http(port, "GET", "/v1/runs/r1/metrics", TOKEN_A, "", 0, &a);
    assert_int_equal(a.status, 405);
    assert_non_null(strstr(a.headers, "Allow: POST"));
    assert_int_equal(l->n, 0);
}

/* A worker's request for its next run: no values, its body unread, and
 * the loop's answer as the whole body; tokens and methods as for a
 * report. */
static void test_next_run(void **state)
{
    loop *l = *state;
    int port = sw_metrics_server_port(l->srv);
    answer a;

    http(port, "POST", "/v1/runs/r1/next", TOKEN_A, "", 0, &a);
    assert_int_equal(a.status, 200);
    assert_string_equal(a.body, "{\"run\": {\"id\": \"r3\"}}\n");
    http(port, "POST", "/v1/runs/r2/next", TOKEN_B, "not json", 8, &a);
    assert_int_equal(a.status, 200);
    assert_string_equal(a.body, "{\"run\": null}\n");
    http(port, "POST", "/v1/runs/r1/next", NULL, "", 0, &a);
    assert_int_equal(a.status, 401);
    http(port, "POST", "/v1/runs/r2/next", TOKEN_A, "", 0, &a);
    assert_int_equal(a.status, 403);
    http(port, "GET", "/v1/runs/r1/next", TOKEN_A, "", 0, &a);
    assert_int_equal(a.status, 405);
    http(port, "POST", "/v1/runs/r1/nexts", TOKEN_A, "", 0, &a);
    assert_int_equal(a.status, 404);
    assert_non_null(strstr(a.body, "/next"));
    http(port, "POST", "/v1/runs//next", TOKEN_A, "", 0, &a);
    assert_int_equal(a.status, 404);
    assert_int_equal(l->n, 0); /* no values from any of them */
}

typedef struct {
    int port;
    const char *run, *token;
    answer a;
} poster;

static void *post_thread(void *arg)
{
    poster *p = arg;

    post(p->port, p->run, p->token, "{\"loss\": 2}", &p->a);
    return NULL;
}

static void wait_accepted(sw_metrics_server *srv, unsigned long long n)
{
    sw_metrics_server_stats st;

    do {
        usleep(1000);
        sw_metrics_server_stats_get(srv, &st);
    } while (st.accepted < n);
}

/* A run with `run_limit` reports waiting gets 503 and Retry-After; the
 * waiting ones are answered once the loop takes them. */
static void test_flood_gets_503(void **state)
{
    loop *l = *state;
    int port = sw_metrics_server_port(l->srv);
    poster p[3] = {{port, "r1", TOKEN_A, {0}},
                   {port, "r1", TOKEN_A, {0}},
                   {port, "r2", TOKEN_B, {0}}};
    pthread_t t[3];
    answer a;
    int i;

    l->hold = 1;
    for (i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, post_thread, &p[i]);
    wait_accepted(l->srv, 2);
    post(port, "r1", TOKEN_A, "{\"loss\": 3}", &a);
    assert_int_equal(a.status, 503);
    assert_non_null(strstr(a.headers, "Retry-After: 1"));
    pthread_create(&t[2], NULL, post_thread, &p[2]); /* another run */
    wait_accepted(l->srv, 3);                        /* gets through */
    l->hold = 0;
    for (i = 0; i < 3; i++) {
        pthread_join(t[i], NULL);
        assert_int_equal(p[i].a.status, 200);
    }
    post(port, "r1", TOKEN_A, "{\"loss\": 4}", &a);
    assert_int_equal(a.status, 200);
}

/* A connection that sends a request's first line and then one more
 * header line every `every_ms`, never finishing: libmicrohttpd's idle
 * timeout alone would keep it open for ever. */
static int slow_open(int port)
{
    struct sockaddr_in sa = {0};
    const char *start = "POST /v1/runs/r1/metrics HTTP/1.1\r\n";
    int fd = socket(AF_INET, SOCK_STREAM, 0);

    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)port);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
        write(fd, start, strlen(start)) != (ssize_t)strlen(start)) {
        close(fd);
        return -1;
    }
    return fd;
}

/* Whether the server has closed `fd` (read gives 0 or an error). */
static bool closed_by_server(int fd)
{
    struct pollfd p = {fd, POLLIN, 0};
    char c;

    return poll(&p, 1, 0) == 1 && read(fd, &c, 1) <= 0;
}

static int threads_now(void)
{
    char line[256];
    int n = -1;
    FILE *f = fopen("/proc/self/status", "r");

    while (f && fgets(line, sizeof(line), f))
        if (sscanf(line, "Threads: %d", &n) == 1)
            break;
    if (f)
        fclose(f);
    return n;
}

#define SLOW 48

/* Slow clients cannot lock the others out: 48 connections from the
 * reporters' own address trickle header lines, more than the server's
 * 32 connections and its 8 per address. Real reports still get through
 * every time (the oldest slow connection is cut to make room), every
 * slow one is cut within the 1 s request deadline however often it
 * sends, and no connection costs a thread. */
static void test_slow_clients(void **state)
{
    sw_metrics_server_opts o = SW_METRICS_SERVER_OPTS_INIT;
    loop *l = *state, *mine = calloc(1, sizeof(*mine));
    sw_metrics_server_stats st;
    int fds[SLOW], port, i, k, open_now, threads;
    answer a;

    teardown(state); /* the fixture's server, replaced by a small one */
    o.max_connections = 32;
    o.per_address = 8;
    o.request_deadline = 1.0;
    assert_int_equal(sw_metrics_server_start(&mine->srv, &o), SW_OK);
    sw_metrics_server_allow(mine->srv, "r1", TOKEN_A);
    pthread_mutex_init(&mine->lock, NULL);
    pthread_create(&mine->thread, NULL, loop_main, mine);
    *state = l = mine;
    port = sw_metrics_server_port(l->srv);
    threads = threads_now();
    for (i = 0; i < SLOW; i++)
        fds[i] = slow_open(port);
    for (k = 0; k < 8; k++) { /* 2.4 s: past the deadline twice */
        for (i = 0; i < SLOW; i++)
            if (fds[i] >= 0)
                (void)!write(fds[i], "X-Slow: 1\r\n", 11);
        post(port, "r1", TOKEN_A, "{\"loss\": 1}", &a);
        assert_int_equal(a.status, 200);
        usleep(300 * 1000);
    }
    assert_true(threads_now() <= threads + 1);
    for (open_now = 0, i = 0; i < SLOW; i++) {
        open_now += fds[i] >= 0 && !closed_by_server(fds[i]);
        if (fds[i] >= 0)
            close(fds[i]);
    }
    assert_int_equal(open_now, 0);
    sw_metrics_server_stats_get(l->srv, &st);
    assert_true(st.cut >= SLOW - 8);
    assert_int_equal(st.accepted, 8);
}

/* A body declared over the limit is answered 413 at once: nothing waits
 * for the terabyte that will never come. */
static void test_declared_huge_body(void **state)
{
    loop *l = *state;
    int port = sw_metrics_server_port(l->srv), fd = slow_open(port);
    const char *rest = "Host: x\r\nAuthorization: Bearer " TOKEN_A
                       "\r\nContent-Length: 1000000000000\r\n\r\n{";
    struct pollfd p = {fd, POLLIN, 0};
    char buf[512] = {0};

    assert_true(fd >= 0);
    assert_true(write(fd, rest, strlen(rest)) == (ssize_t)strlen(rest));
    assert_int_equal(poll(&p, 1, 2000), 1);
    assert_true(read(fd, buf, sizeof(buf) - 1) > 0);
    assert_non_null(strstr(buf, "HTTP/1.1 413"));
    close(fd);
}

/* More values than a report may hold is 413; a bad name 400. */
static void test_report_limits(void **state)
{
    loop *l = *state;
    int port = sw_metrics_server_port(l->srv);
    answer a;

    post(port, "r1", TOKEN_A, "{\"\": 1}", &a);
    assert_int_equal(a.status, 400);
    assert_non_null(strstr(a.body, "1 to 256 bytes"));
    assert_int_equal(l->n, 0);
}

/* A run promotion ASHA pauses is told to stop and to pause. */
static void test_pause_answer(void **state)
{
    loop *l = *state;
    answer a;

    post(sw_metrics_server_port(l->srv), "r3", TOKEN_C, "{\"loss\": 1}", &a);
    assert_int_equal(a.status, 200);
    assert_non_null(strstr(a.body, "{\"stop\": true, \"pause\": true}"));
    post(sw_metrics_server_port(l->srv), "r1", TOKEN_A, "{\"loss\": 1}", &a);
    assert_null(strstr(a.body, "pause"));
}

/* ---- GET: the dashboard's side ------------------------------------- */

/* A site: /page answers "hello", /events streams, the rest 404. */
static void site_get(void *ctx, const sw_http_get *req, sw_http_reply *out)
{
    const char *path = sw_http_get_path(req);

    (void)ctx;
    if (strcmp(path, "/events") == 0) {
        out->stream = true;
    } else if (strcmp(path, "/page") == 0) {
        out->type = "text/plain";
        out->data = "hello";
        out->len = 5;
    } else {
        out->status = 404;
        out->data = "{}";
        out->len = 2;
    }
}

static sw_metrics_server *site_server(const char *view_token)
{
    sw_metrics_server_opts o = SW_METRICS_SERVER_OPTS_INIT;
    sw_metrics_server *srv = NULL;

    o.get = site_get;
    o.view_token = view_token;
    assert_int_equal(sw_metrics_server_start(&srv, &o), SW_OK);
    return srv;
}

/* Opens an event stream; `extra` is more header lines ("" for none). */
static int stream_open(int port, const char *path, const char *extra)
{
    struct sockaddr_in sa = {0};
    char head[512];
    int fd = socket(AF_INET, SOCK_STREAM, 0);

    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)port);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    snprintf(head, sizeof(head), "GET %s HTTP/1.1\r\nHost: x\r\n%s\r\n", path,
             extra);
    assert_true(write(fd, head, strlen(head)) == (ssize_t)strlen(head));
    return fd;
}

/* Reads from `fd` into buf (appending) until `want` is in it or 5 s
 * pass; whether it came. */
static bool read_until(int fd, char *buf, size_t cap, const char *want)
{
    struct pollfd p = {fd, POLLIN, 0};
    size_t got = strlen(buf);
    ssize_t n;
    int waited = 0;

    while (!strstr(buf, want) && waited < 5000 && got < cap - 1) {
        if (poll(&p, 1, 50) <= 0) {
            waited += 50;
            continue;
        }
        if ((n = read(fd, buf + got, cap - 1 - got)) <= 0)
            break;
        got += (size_t)n;
        buf[got] = '\0';
    }
    return strstr(buf, want) != NULL;
}

/* GETs go to the site; anything else there is 405; the metrics path
 * stays POST only. */
static void test_get_is_the_sites(void **state)
{
    sw_metrics_server *srv = site_server(NULL);
    int port = sw_metrics_server_port(srv);
    answer a;

    (void)state;
    http(port, "GET", "/page", NULL, "", 0, &a);
    assert_int_equal(a.status, 200);
    assert_string_equal(a.body, "hello");
    assert_non_null(strstr(a.headers, "X-Frame-Options: DENY"));
    http(port, "GET", "/nothing", NULL, "", 0, &a);
    assert_int_equal(a.status, 404);
    http(port, "POST", "/page", NULL, "{}", 2, &a);
    assert_int_equal(a.status, 405);
    http(port, "GET", "/v1/runs/r1/metrics", NULL, "", 0, &a);
    assert_int_equal(a.status, 405);
    sw_metrics_server_free(srv);
}

/* Off loopback: no GET without the view token, given as ?token= (which
 * sets the cookie) or as the cookie. */
static void test_view_token(void **state)
{
    sw_metrics_server *srv = site_server("sekrit");
    int port = sw_metrics_server_port(srv);
    answer a;

    (void)state;
    http(port, "GET", "/page", NULL, "", 0, &a);
    assert_int_equal(a.status, 401);
    http(port, "GET", "/page?token=sekriT", NULL, "", 0, &a);
    assert_int_equal(a.status, 401);
    http(port, "GET", "/page?token=sekrit", NULL, "", 0, &a);
    assert_int_equal(a.status, 200);
    assert_non_null(strstr(a.headers, "Set-Cookie: sweep_view=sekrit;"));
    assert_non_null(strstr(a.headers, "HttpOnly"));
    sw_metrics_server_free(srv);
}

/* A stream hears every event published after it opened, in order, one
 * opened with Last-Event-ID what came after that id, and one that fell
 * past the ring a reset. Freeing the server ends every stream. */
static void test_event_stream(void **state)
{
    sw_metrics_server *srv = site_server(NULL);
    int port = sw_metrics_server_port(srv), fd, fd2, fd3, i;
    sw_metrics_server_stats st;
    static char buf[1 << 16];
    char c;

    (void)state;
    sw_metrics_server_publish(srv, "run", "{\"n\": 0}"); /* before: unheard */
    fd = stream_open(port, "/events", "");
    buf[0] = '\0';
    assert_true(read_until(fd, buf, sizeof(buf), "retry: 2000"));
    assert_non_null(strstr(buf, "text/event-stream"));
    sw_metrics_server_publish(srv, "run", "{\"n\": 1}");
    sw_metrics_server_publish(srv, "value", "{\"n\": 2}");
    assert_true(read_until(fd, buf, sizeof(buf), "id: 3\nevent: value"));
    assert_null(strstr(buf, "{\"n\": 0}"));
    assert_true(strstr(buf, "id: 2\nevent: run\ndata: {\"n\": 1}\n\n") <
                strstr(buf, "id: 3"));

    fd2 = stream_open(port, "/events", "Last-Event-ID: 2\r\n");
    buf[0] = '\0';
    assert_true(read_until(fd2, buf, sizeof(buf), "id: 3\n"));
    assert_null(strstr(buf, "id: 2\n"));
    sw_metrics_server_stats_get(srv, &st);
    assert_int_equal(st.streams, 2);

    for (i = 0; i < 5000; i++) /* past the ring of 4096 */
        sw_metrics_server_publish(srv, "value", "{}");
    fd3 = stream_open(port, "/events?since=3", "");
    buf[0] = '\0';
    assert_true(read_until(fd3, buf, sizeof(buf), "event: reset"));

    /* the last event before free() still reaches a stream that reads */
    sw_metrics_server_publish(srv, "sweep", "{\"n\": \"last\"}");
    sw_metrics_server_free(srv); /* every stream ends; nothing hangs */
    buf[0] = '\0';
    assert_true(read_until(fd3, buf, sizeof(buf), "{\"n\": \"last\"}"));
    for (i = 0; i < 3; i++) {
        int f = i == 0 ? fd : i == 1 ? fd2 : fd3;
        struct pollfd p = {f, POLLIN, 0};
        ssize_t n = 1;

        while (n > 0 && poll(&p, 1, 5000) == 1)
            n = read(f, &c, 1);
        assert_true(n <= 0);
        close(f);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_report_is_answered, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_tokens, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_requests, setup, teardown),
        cmocka_unit_test_setup_teardown(test_next_run, setup, teardown),
        cmocka_unit_test_setup_teardown(test_flood_gets_503, setup, teardown),
        cmocka_unit_test_setup_teardown(test_slow_clients, setup, teardown),
        cmocka_unit_test_setup_teardown(test_declared_huge_body, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_report_limits, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pause_answer, setup, teardown),
        cmocka_unit_test(test_get_is_the_sites),
        cmocka_unit_test(test_view_token),
        cmocka_unit_test(test_event_stream),
    };

    signal(SIGPIPE, SIG_IGN); /* writes to connections the server cut */
    return cmocka_run_group_tests(tests, NULL, NULL);
}
