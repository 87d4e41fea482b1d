/*
 * metrics_server.c - the metrics endpoint on libmicrohttpd: the only file
 * that includes <microhttpd.h>.
 *
 * libmicrohttpd runs a small pool of threads, each watching its share
 * of the connections with epoll, so an idle or slow connection costs a
 * descriptor and a little memory, never a thread. A worker reads each
 * request, checks its path, method, size and token, and parses its body.
 * A good one becomes a report: it joins a bounded queue, its connection
 * is suspended (the worker goes on with the others), and an eventfd
 * wakes the engine's loop (when the queue was empty). The loop takes the
 * whole queue, commits it in one transaction, answers each report and
 * resumes their connections, and the workers send the answers. So
 * nothing slow stands between a report and its answer but the commit
 * itself, a 200 is only ever sent for committed values, and the loop's
 * cost per report is a few stores in memory.
 *
 * Hostile or broken clients cannot lock the others out. A request must
 * arrive whole within the request deadline, counted from when its
 * connection could send it (opened, or the previous answer sent), not
 * from its last byte: a reaper thread shuts down connections past it.
 * One client address holds at most a quarter of the connections, and
 * when an address (or the server) is at its bound, its oldest connection
 * that has not sent a whole request is shut to make room, so a client
 * holding many slow connections loses them to ones that send. A report
 * waiting for the loop is never cut. A body declared over the limit is
 * answered 413 at once.
 *
 * GET requests other than reports go to the options' `get` function (the
 * dashboard: pages, assets, the JSON API), behind the view token when
 * there is one. An event stream is a suspended connection with a cursor
 * into a ring of the last events published: publish() resumes every
 * stream waiting at the ring's end, and the reaper sends a heartbeat
 * now and then so that a closed browser is noticed. A stream is never
 * cut by the request deadline.
 *
 * Only the SHA-256 of each run's token is kept (token.h): a request's
 * token is hashed and compared in constant time against every run's. The queue
 * is bounded overall and per run, so a flood from one trial gets 503 with
 * Retry-After while the others still get through.
 */
#include "orchestrator/metrics_server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netdb.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "orchestrator/token.h"
#include "sweeps/buf.h"
#include "sweeps/error.h"
#include "sweeps/value.h"

#define PATH_PREFIX "/v1/runs/"
#define PATH_SUFFIX "/metrics"
#define NEXT_SUFFIX "/next" /* a worker asks for its next run */
#define RUN_ID_MAX 128
#define TOKEN_MAX 256
#define RING 4096          /* events kept for streams that reconnect */
#define HEARTBEAT_S 15.0   /* a stream hears something at least this often */
#define STREAM_DRAIN_S 1.0 /* at free(), for streams to send their last */
#define VIEW_COOKIE "sweep_view"

typedef struct {
    char *run;
    char hash[SW_TOKEN_HASH_LEN + 1]; /* of its token: never the token */
    size_t pending; /* its reports in the queue or with the loop */
} grant;

typedef enum { REQ_READING, REQ_WAITING, REQ_ANSWERED } req_phase;

/* One open connection, from libmicrohttpd's notice that it started to
 * the one that it closed (the descriptor stays open until then, so
 * shutting it down under the lock never reaches another connection). */
typedef struct peer {
    int fd;
    struct sockaddr_storage addr;
    socklen_t addr_len;
    double since;             /* monotonic: when it could send its request */
    bool waiting;             /* its report is with the loop: never cut */
    bool cut;                 /* shut down; closes soon */
    struct peer *prev, *next; /* oldest `since` first */
} peer;

struct sw_metrics_report {
    sw_metrics_server *srv;
    struct MHD_Connection *conn;
    req_phase phase;
    char run[RUN_ID_MAX];
    bool wants_next; /* POST .../next: a worker asks for its next run */
    sw_buf body;
    bool too_large;
    sw_metric_batch batch;
    int status;
    bool stop, pause;
    char *message;
    char *json;                   /* a 200's whole body, when not {"stop"} */
    peer *peer;                   /* its connection's */
    sw_metrics_report *next;      /* in the queue */
    sw_metrics_report *next_done; /* answered, to resume at flush */
};

/* One event stream: its connection and where it is in the ring. */
typedef struct stream {
    sw_metrics_server *srv;
    struct MHD_Connection *conn;
    unsigned long long next; /* the id of the next event to send */
    size_t off;              /* bytes of it sent already */
    unsigned long beat;      /* the heartbeat it last heard */
    bool hello;              /* its `retry:` line went out */
    bool suspended;          /* waits for publish(); only it resumes it */
    struct stream *prev, *nxt;
    struct stream *wake; /* in take_waiting()'s list */
} stream;

struct sw_http_get {
    struct MHD_Connection *conn;
    const char *path;
    unsigned long long seq;
};

struct sw_metrics_server {
    struct MHD_Daemon *daemon;
    int port;
    char *base; /* "http://host:port" */
    int efd;
    size_t body_limit, queue_limit, run_limit;
    char *listen; /* what listen() binds: opts' listen, prefer_port */
    int prefer_port;
    unsigned int max_connections, per_address;
    double deadline;      /* seconds for a whole request */
    pthread_mutex_t lock; /* grants, queue, answers, peers, counters */
    grant *grants;
    size_t n_grants, cap_grants;
    sw_metrics_report *head, *tail;
    sw_metrics_report *done; /* answered since the last flush */
    size_t queued;
    bool closing; /* free() has begun: nothing more joins the queue */
    peer *oldest, *newest;
    size_t peers; /* not cut */
    pthread_t reaper;
    bool reaping, quit;
    pthread_cond_t tick; /* wakes the reaper early: quit */
    sw_metrics_server_stats stats;
    sw_http_get_fn get;
    void *get_ctx;
    bool viewed;                           /* a view token is asked */
    char view_hash[SW_TOKEN_HASH_LEN + 1]; /* its SHA-256: never it */
    char *ring[RING];                      /* event `id` at ring[id % RING] */
    unsigned long long seq; /* the last event's id; 0: none yet */
    unsigned long beat;     /* heartbeats so far */
    double last_beat;       /* monotonic: when the last one went */
    stream *streams;        /* every open one */
};

typedef struct stream stream;
static stream *take_waiting(sw_metrics_server *s);
static void wake(stream *list);

/* ---- answers -------------------------------------------------------- */

/* Queues the answer: `json` when given, else `{"stop": ...}` (with
 * "pause" for a paused run) for a 200, else `{"error": msg}`. */
static enum MHD_Result respond_json(struct MHD_Connection *c, int status,
                                    bool stop, bool pause, const char *message,
                                    const char *json)
{
    sw_buf b = SW_BUF_INIT;
    struct MHD_Response *r;
    enum MHD_Result ok;

    if (json) {
        sw_buf_puts(&b, json);
        sw_buf_putc(&b, '\n');
    } else if (status == MHD_HTTP_OK) {
        sw_buf_puts(&b, stop && pause ? "{\"stop\": true, \"pause\": true}\n"
                        : stop        ? "{\"stop\": true}\n"
                                      : "{\"stop\": false}\n");
    } else {
        sw_buf_puts(&b, "{\"error\": ");
        sw_json_write_string(&b, message ? message : "error");
        sw_buf_puts(&b, "}\n");
    }
    r = MHD_create_response_from_buffer(b.len, (void *)sw_buf_cstr(&b),
                                        MHD_RESPMEM_MUST_COPY);
    sw_buf_dispose(&b);
    if (!r)
        return MHD_NO;
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
                            "application/json");
    if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
        MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "POST");
    if (status == MHD_HTTP_SERVICE_UNAVAILABLE)
        MHD_add_response_header(r, MHD_HTTP_HEADER_RETRY_AFTER, "1");
    ok = MHD_queue_response(c, (unsigned int)status, r);
    MHD_destroy_response(r);
    return ok;
}

static enum MHD_Result respond(struct MHD_Connection *c, int status, bool stop,
                               const char *message)
{
    return respond_json(c, status, stop, false, message, NULL);
}

/* ---- tokens --------------------------------------------------------- */

/* Equal in time that does not depend on where they differ. */
static bool same_hash(const char *a, const char *b)
{
    unsigned char d = 0;
    size_t i;

    for (i = 0; i < SW_TOKEN_HASH_LEN; i++)
        d |= (unsigned char)(a[i] ^ b[i]);
    return d == 0;
}

/* The grant holding the token whose hash is `hash` (every grant is
 * compared, so how long this takes says nothing of which matched); NULL:
 * none. Under the lock. */
static grant *by_hash(sw_metrics_server *s, const char *hash)
{
    grant *found = NULL;
    size_t i;

    for (i = 0; i < s->n_grants; i++)
        if (same_hash(s->grants[i].hash, hash))
            found = &s->grants[i];
    return found;
}

static grant *by_run(sw_metrics_server *s, const char *run)
{
    size_t i;

    for (i = 0; i < s->n_grants; i++)
        if (strcmp(s->grants[i].run, run) == 0)
            return &s->grants[i];
    return NULL;
}

void sw_metrics_server_allow_hash(sw_metrics_server *s, const char *run_id,
                                  const char *hash)
{
    grant *g;

    if (!sw_token_is_hash(hash))
        return; /* no token has it */
    pthread_mutex_lock(&s->lock);
    if (!(g = by_run(s, run_id))) {
        sw_grow(&s->grants, &s->cap_grants, s->n_grants + 1, sizeof(*g));
        g = &s->grants[s->n_grants++];
        g->run = sw_strdup(run_id);
        g->pending = 0;
    }
    memcpy(g->hash, hash, sizeof(g->hash));
    pthread_mutex_unlock(&s->lock);
}

void sw_metrics_server_allow(sw_metrics_server *s, const char *run_id,
                             const char *token)
{
    char hash[SW_TOKEN_HASH_LEN + 1];

    sw_token_hash(token, strlen(token), hash);
    sw_metrics_server_allow_hash(s, run_id, hash);
}

void sw_metrics_server_revoke(sw_metrics_server *s, const char *run_id)
{
    grant *g;

    pthread_mutex_lock(&s->lock);
    if ((g = by_run(s, run_id))) {
        free(g->run);
        *g = s->grants[--s->n_grants];
    }
    pthread_mutex_unlock(&s->lock);
}

/* ---- connections ---------------------------------------------------- */

static double mono_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void unlink_peer(sw_metrics_server *s, peer *p)
{
    if (p->prev)
        p->prev->next = p->next;
    else
        s->oldest = p->next;
    if (p->next)
        p->next->prev = p->prev;
    else
        s->newest = p->prev;
    p->prev = p->next = NULL;
}

static void append_peer(sw_metrics_server *s, peer *p)
{
    p->prev = s->newest;
    p->next = NULL;
    if (s->newest)
        s->newest->next = p;
    else
        s->oldest = p;
    s->newest = p;
}

/* `p` may send its next request from now on. Under the lock. */
static void restart_peer(sw_metrics_server *s, peer *p)
{
    p->since = mono_now();
    p->waiting = false;
    unlink_peer(s, p);
    append_peer(s, p);
}

/* Shuts `p` down; libmicrohttpd sees it end and closes it. Under the
 * lock, so `p` (and its descriptor) are still open. */
static void cut(sw_metrics_server *s, peer *p)
{
    if (p->fd >= 0)
        shutdown(p->fd, SHUT_RDWR);
    p->cut = true;
    s->peers--;
    s->stats.cut++;
}

/* Whether two socket addresses are of the same host (ports aside). */
static bool same_host(const struct sockaddr *a, const struct sockaddr *b)
{
    if (a->sa_family != b->sa_family)
        return false;
    if (a->sa_family == AF_INET)
        return ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
               ((const struct sockaddr_in *)b)->sin_addr.s_addr;
    if (a->sa_family == AF_INET6)
        return memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
                      &((const struct sockaddr_in6 *)b)->sin6_addr,
                      sizeof(struct in6_addr)) == 0;
    return true;
}

/* Admits a connection from `addr`, first making room when its address
 * or the server is at its bound: the oldest connection (of that address,
 * or of anyone) that has not handed a whole request over is cut. Refused
 * only when every one there is waiting for the loop. */
static enum MHD_Result on_accept(void *cls, const struct sockaddr *addr,
                                 socklen_t len)
{
    sw_metrics_server *s = cls;
    peer *p, *mine_old = NULL, *any_old = NULL;
    size_t mine = 0;
    bool ok = true;

    (void)len;
    pthread_mutex_lock(&s->lock);
    for (p = s->oldest; p; p = p->next) {
        bool same = !p->cut && same_host((struct sockaddr *)&p->addr, addr);

        mine += same;
        if (p->cut || p->waiting)
            continue;
        any_old = any_old ? any_old : p;
        mine_old = mine_old || !same ? mine_old : p;
    }
    if (mine >= s->per_address && (ok = mine_old != NULL))
        cut(s, mine_old);
    else if (mine < s->per_address && s->peers >= s->max_connections &&
             (ok = any_old != NULL))
        cut(s, any_old);
    s->stats.turned_away += !ok;
    pthread_mutex_unlock(&s->lock);
    return ok ? MHD_YES : MHD_NO;
}

/* Keeps a peer for each connection, from its start to its close. */
static void on_connection(void *cls, struct MHD_Connection *c, void **ctx,
                          enum MHD_ConnectionNotificationCode code)
{
    sw_metrics_server *s = cls;
    const union MHD_ConnectionInfo *fd, *addr;
    peer *p = *ctx;

    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        p = sw_calloc(1, sizeof(*p));
        fd = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
        addr = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
        p->fd = fd ? fd->connect_fd : -1;
        if (addr && addr->client_addr) {
            p->addr_len = addr->client_addr->sa_family == AF_INET6
                              ? sizeof(struct sockaddr_in6)
                              : sizeof(struct sockaddr_in);
            memcpy(&p->addr, addr->client_addr, p->addr_len);
        }
        p->since = mono_now();
        pthread_mutex_lock(&s->lock);
        append_peer(s, p);
        s->peers++;
        pthread_mutex_unlock(&s->lock);
        *ctx = p;
        return;
    }
    if (!p)
        return;
    pthread_mutex_lock(&s->lock);
    unlink_peer(s, p);
    s->peers -= !p->cut;
    pthread_mutex_unlock(&s->lock);
    free(p);
    *ctx = NULL;
}

/* The reaper: cuts every connection whose request has not arrived whole
 * within the deadline, then sleeps until the next one could be due. */
static void *reap(void *arg)
{
    sw_metrics_server *s = arg;
    struct timespec until;
    double now, next;
    stream *list;
    peer *p;

    pthread_mutex_lock(&s->lock);
    while (!s->quit) {
        now = mono_now();
        next = now + s->deadline;
        for (p = s->oldest; p; p = p->next) {
            if (p->since + s->deadline > now) {
                next = p->since + s->deadline;
                break;
            }
            if (!p->cut && !p->waiting)
                cut(s, p);
        }
        if (s->streams && now - s->last_beat >= HEARTBEAT_S) {
            s->beat++;
            s->last_beat = now;
            list = take_waiting(s);
            pthread_mutex_unlock(&s->lock);
            wake(list);
            pthread_mutex_lock(&s->lock);
            continue;
        }
        if (next > s->last_beat + HEARTBEAT_S)
            next = s->last_beat + HEARTBEAT_S;
        next += 0.01; /* past it, not a hair before */
        until.tv_sec = (time_t)next;
        until.tv_nsec = (long)((next - (double)until.tv_sec) * 1e9);
        pthread_cond_timedwait(&s->tick, &s->lock, &until);
    }
    pthread_mutex_unlock(&s->lock);
    return NULL;
}

/* ---- requests ------------------------------------------------------- */

/* The run id in `url`, copied into `out`, and whether it asks for the
 * next run; false when the path is neither /v1/runs/<run id>/metrics nor
 * /v1/runs/<run id>/next. */
static bool run_of(const char *url, char out[RUN_ID_MAX], bool *next)
{
    size_t np = strlen(PATH_PREFIX), ns, len, n;

    len = strlen(url);
    *next = len > strlen(NEXT_SUFFIX) &&
            strcmp(url + len - strlen(NEXT_SUFFIX), NEXT_SUFFIX) == 0;
    ns = strlen(*next ? NEXT_SUFFIX : PATH_SUFFIX);
    if (len <= np + ns || strncmp(url, PATH_PREFIX, np) != 0 ||
        strcmp(url + len - ns, *next ? NEXT_SUFFIX : PATH_SUFFIX) != 0)
        return false;
    n = len - np - ns;
    if (n >= RUN_ID_MAX || memchr(url + np, '/', n))
        return false;
    memcpy(out, url + np, n);
    out[n] = '\0';
    return true;
}

/* The bearer token in the request; NULL when there is none. */
static const char *bearer(struct MHD_Connection *c, size_t *len)
{
    const char *h = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
                                                MHD_HTTP_HEADER_AUTHORIZATION);

    if (!h || strncasecmp(h, "Bearer ", 7) != 0)
        return NULL;
    h += 7;
    while (*h == ' ')
        h++;
    *len = strlen(h);
    return *len && *len <= TOKEN_MAX ? h : NULL;
}

/* Who may write: 0, or the status that says why not. Under the lock. */
static int authorize(sw_metrics_server *s, struct MHD_Connection *c,
                     const char *run, grant **out)
{
    size_t len = 0;
    const char *token = bearer(c, &len);
    char hash[SW_TOKEN_HASH_LEN + 1];
    grant *g = NULL;

    if (token) {
        sw_token_hash(token, len, hash);
        g = by_hash(s, hash);
    }

    if (!g)
        return MHD_HTTP_UNAUTHORIZED;
    if (strcmp(g->run, run) != 0)
        return MHD_HTTP_FORBIDDEN;
    *out = g;
    return 0;
}

static void wake_loop(sw_metrics_server *s)
{
    uint64_t one = 1;

    while (write(s->efd, &one, sizeof(one)) < 0 && errno == EINTR)
        ;
}

/* Hands a parsed report to the loop; its connection is suspended
 * already, and is resumed when the loop (or, for 401, 403 or 503, this
 * function) has answered. Only a queue that was empty wakes the loop,
 * since sw_metrics_server_take() takes all of it. */
static void join(sw_metrics_server *s, sw_metrics_report *r)
{
    grant *g = NULL;
    bool wake = false;
    int status;

    pthread_mutex_lock(&s->lock);
    status = authorize(s, r->conn, r->run, &g);
    if (!status && (s->closing || s->queued >= s->queue_limit ||
                    g->pending >= s->run_limit))
        status = MHD_HTTP_SERVICE_UNAVAILABLE;
    if (!status) {
        g->pending++;
        s->queued++;
        r->phase = REQ_WAITING;
        if (r->peer)
            r->peer->waiting = true;
        wake = s->head == NULL;
        if (s->tail)
            s->tail->next = r;
        else
            s->head = r;
        s->tail = r;
        s->stats.accepted++;
    } else {
        s->stats.busy += status == MHD_HTTP_SERVICE_UNAVAILABLE;
        s->stats.refused += status != MHD_HTTP_SERVICE_UNAVAILABLE;
        r->status = status;
        r->phase = REQ_ANSWERED;
    }
    pthread_mutex_unlock(&s->lock);
    if (status)
        MHD_resume_connection(r->conn);
    else if (wake)
        wake_loop(s);
}

static const char *why(int status)
{
    switch (status) {
    case MHD_HTTP_UNAUTHORIZED:
        return "missing or unknown token";
    case MHD_HTTP_FORBIDDEN:
        return "this token belongs to another run";
    case MHD_HTTP_SERVICE_UNAVAILABLE:
        return "too many reports waiting; retry";
    }
    return "error";
}

/* ---- GET: pages and event streams ----------------------------------- */

const char *sw_http_get_path(const sw_http_get *g)
{
    return g->path;
}

const char *sw_http_get_arg(const sw_http_get *g, const char *name)
{
    return MHD_lookup_connection_value(g->conn, MHD_GET_ARGUMENT_KIND, name);
}

unsigned long long sw_http_get_seq(const sw_http_get *g)
{
    return g->seq;
}

/* Whether `a` is the view token, in time that does not depend on where
 * they differ. */
static bool is_view_token(const sw_metrics_server *s, const char *a)
{
    char hash[SW_TOKEN_HASH_LEN + 1];

    if (!a)
        return false;
    sw_token_hash(a, strlen(a), hash); /* kept as the run tokens are */
    return same_hash(hash, s->view_hash);
}

/* Copies what `st` has not sent yet into buf: its retry line, a reset
 * when it fell behind the ring, the events, else a heartbeat. Under the
 * lock. */
static size_t fill(sw_metrics_server *s, stream *st, char *buf, size_t max)
{
    static const char hello[] = "retry: 2000\n\n", ping[] = ": ping\n\n",
                      reset[] = "event: reset\ndata: {}\n\n";
    size_t n = 0, len, k;
    const char *m;

    if (!st->hello && max >= sizeof(hello)) {
        memcpy(buf, hello, (n = sizeof(hello) - 1));
        st->hello = true;
    }
    if (s->seq >= RING && st->next <= s->seq - RING &&
        max - n >= sizeof(reset)) {
        memcpy(buf + n, reset, sizeof(reset) - 1);
        n += sizeof(reset) - 1;
        st->next = s->seq + 1, st->off = 0;
    }
    while (st->next <= s->seq && n < max) {
        m = s->ring[st->next % RING];
        len = strlen(m) - st->off;
        k = len < max - n ? len : max - n;
        memcpy(buf + n, m + st->off, k);
        n += k;
        st->off += k;
        if (k < len)
            break;
        st->next++, st->off = 0;
    }
    if (n == 0 && st->beat != s->beat && max >= sizeof(ping)) {
        memcpy(buf, ping, (n = sizeof(ping) - 1));
        st->beat = s->beat;
    }
    return n;
}

/* libmicrohttpd asks for more of a stream: what there is, else the
 * connection is suspended until publish() (or a heartbeat, or free())
 * resumes it. Resumed only once it is suspended, by whoever clears
 * `suspended`: here, when something arrived in between. */
static ssize_t stream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
    stream *st = cls;
    sw_metrics_server *s = st->srv;
    size_t n;
    bool again;

    (void)pos;
    pthread_mutex_lock(&s->lock);
    n = fill(s, st, buf, max);
    again = s->closing;
    pthread_mutex_unlock(&s->lock);
    if (n)
        return (ssize_t)n;
    if (again)
        return MHD_CONTENT_READER_END_OF_STREAM;
    MHD_suspend_connection(st->conn);
    pthread_mutex_lock(&s->lock);
    st->suspended = true;
    again = st->next <= s->seq || st->beat != s->beat || s->closing;
    if (again)
        st->suspended = false;
    pthread_mutex_unlock(&s->lock);
    if (again)
        MHD_resume_connection(st->conn);
    return 0;
}

static void stream_free(void *cls)
{
    stream *st = cls;
    sw_metrics_server *s = st->srv;

    pthread_mutex_lock(&s->lock);
    if (st->prev)
        st->prev->nxt = st->nxt;
    else
        s->streams = st->nxt;
    if (st->nxt)
        st->nxt->prev = st->prev;
    s->stats.streams--;
    pthread_mutex_unlock(&s->lock);
    free(st);
}

/* Takes every stream that waits (for publish, a heartbeat, free()) off
 * waiting, under the lock; wake() then resumes them outside it, so that
 * our lock is never held into libmicrohttpd's. A stream taken stays
 * suspended, so open, until wake() resumes it. */
static stream *take_waiting(sw_metrics_server *s)
{
    stream *st, *list = NULL;

    for (st = s->streams; st; st = st->nxt) {
        if (!st->suspended)
            continue;
        st->suspended = false;
        st->wake = list;
        list = st;
    }
    return list;
}

static void wake(stream *list)
{
    stream *next;

    for (; list; list = next) {
        next = list->wake; /* list may be gone once resumed */
        MHD_resume_connection(list->conn);
    }
}

void sw_metrics_server_publish(sw_metrics_server *s, const char *name,
                               const char *json)
{
    stream *list;
    char *m;

    pthread_mutex_lock(&s->lock);
    m = sw_aprintf("id: %llu\nevent: %s\ndata: %s\n\n", s->seq + 1, name, json);
    s->seq++;
    free(s->ring[s->seq % RING]);
    s->ring[s->seq % RING] = m;
    list = take_waiting(s);
    pthread_mutex_unlock(&s->lock);
    wake(list);
}

/* Where a stream starts: after the Last-Event-ID (or `since`) it gives,
 * when that is not in the future; else after the last event. */
static unsigned long long stream_start(const sw_http_get *g)
{
    const char *h =
        MHD_lookup_connection_value(g->conn, MHD_HEADER_KIND, "Last-Event-ID");
    unsigned long long n;
    char *end;

    if (!h)
        h = sw_http_get_arg(g, "since");
    if (!h || !*h)
        return g->seq + 1;
    errno = 0;
    n = strtoull(h, &end, 10);
    if (errno || *end || n > g->seq)
        return g->seq + 1;
    return n + 1;
}

static enum MHD_Result open_stream(sw_metrics_server *s, sw_metrics_report *r,
                                   const sw_http_get *g)
{
    stream *st = sw_calloc(1, sizeof(*st));
    struct MHD_Response *resp;
    enum MHD_Result ok;

    st->srv = s;
    st->conn = r->conn;
    st->next = stream_start(g);
    resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 16 * 1024,
                                             stream_read, st, stream_free);
    if (!resp) {
        free(st);
        return MHD_NO;
    }
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
                            "text/event-stream");
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
    pthread_mutex_lock(&s->lock);
    st->beat = s->beat;
    st->nxt = s->streams;
    if (s->streams)
        s->streams->prev = st;
    s->streams = st;
    s->stats.streams++;
    if (r->peer)
        r->peer->waiting = true; /* held open on purpose: never cut */
    pthread_mutex_unlock(&s->lock);
    ok = MHD_queue_response(r->conn, MHD_HTTP_OK, resp);
    MHD_destroy_response(resp);
    return ok;
}

/* The headers every page and API answer carries: nothing of it may be
 * framed or sniffed, and scripts come only from this server. */
static void page_headers(struct MHD_Response *resp, const sw_http_reply *out)
{
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
                            out->type ? out->type : "application/json");
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL,
                            out->immutable ? "max-age=86400" : "no-store");
    MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
    MHD_add_response_header(resp, "X-Frame-Options", "DENY");
    MHD_add_response_header(resp, "Content-Security-Policy",
                            "default-src 'self'; style-src 'self' "
                            "'unsafe-inline'; img-src 'self' data:");
}

/* A GET the dashboard answers: checked against the view token, then
 * handed to `get`. A good `?token=` also sets the cookie, so the page's
 * own requests need not carry it. */
static enum MHD_Result serve_get(sw_metrics_server *s, sw_metrics_report *r,
                                 const char *url)
{
    sw_http_get g = {r->conn, url, 0};
    sw_http_reply out = {0};
    struct MHD_Response *resp;
    const char *arg = NULL;
    enum MHD_Result ok;
    bool by_arg = false;
    char *cookie;

    pthread_mutex_lock(&s->lock);
    g.seq = s->seq;
    s->stats.pages++;
    pthread_mutex_unlock(&s->lock);
    if (s->viewed) {
        arg = sw_http_get_arg(&g, "token");
        by_arg = is_view_token(s, arg);
        if (!by_arg &&
            !is_view_token(s, MHD_lookup_connection_value(
                                  r->conn, MHD_COOKIE_KIND, VIEW_COOKIE)))
            return respond(r->conn, MHD_HTTP_UNAUTHORIZED, false,
                           "this dashboard needs its view token: open the "
                           "URL sweep printed, with its ?token=");
    }
    s->get(s->get_ctx, &g, &out);
    if (out.stream)
        return open_stream(s, r, &g);
    resp = MHD_create_response_from_buffer(out.len, (void *)out.data,
                                           out.owned ? MHD_RESPMEM_MUST_FREE
                                                     : MHD_RESPMEM_PERSISTENT);
    if (!resp) {
        if (out.owned)
            free((void *)out.data);
        return MHD_NO;
    }
    page_headers(resp, &out);
    if (by_arg) {
        cookie = sw_aprintf(VIEW_COOKIE "=%s; Path=/; HttpOnly; "
                                        "SameSite=Strict",
                            arg);
        MHD_add_response_header(resp, MHD_HTTP_HEADER_SET_COOKIE, cookie);
        free(cookie);
    }
    ok = MHD_queue_response(r->conn,
                            out.status ? (unsigned int)out.status : 200u, resp);
    MHD_destroy_response(resp);
    return ok;
}

/* A whole request has arrived: answer what is wrong with it, or hand it
 * to the loop; libmicrohttpd calls again once it is answered. */
static enum MHD_Result route(sw_metrics_server *s, sw_metrics_report *r,
                             const char *url, const char *method)
{
    int error;

    if (s->get && !run_of(url, r->run, &r->wants_next) &&
        strncmp(url, "/v1/", 4) != 0) {
        if (strcmp(method, MHD_HTTP_METHOD_GET) == 0 ||
            strcmp(method, MHD_HTTP_METHOD_HEAD) == 0)
            return serve_get(s, r, url);
        return respond(r->conn, MHD_HTTP_METHOD_NOT_ALLOWED, false,
                       "the dashboard only reads: GET");
    }
    if (!run_of(url, r->run, &r->wants_next))
        return respond(r->conn, MHD_HTTP_NOT_FOUND, false,
                       "no such endpoint: POST " PATH_PREFIX
                       "<run id>" PATH_SUFFIX " (or " NEXT_SUFFIX ")");
    if (strcmp(method, MHD_HTTP_METHOD_POST) != 0)
        return respond(r->conn, MHD_HTTP_METHOD_NOT_ALLOWED, false,
                       "only POST reports metrics");
    if (r->too_large)
        return respond(r->conn, MHD_HTTP_CONTENT_TOO_LARGE, false,
                       "the report is over the body limit");
    if (r->wants_next) { /* no values: its body, if any, is not read */
        sw_buf_dispose(&r->body);
        MHD_suspend_connection(r->conn);
        join(s, r);
        return MHD_YES;
    }
    r->batch.strict = true;
    if ((error = sw_metrics_parse(&r->batch, sw_buf_cstr(&r->body),
                                  r->body.len)) != SW_OK) {
        pthread_mutex_lock(&s->lock);
        s->stats.refused++;
        pthread_mutex_unlock(&s->lock);
        return respond(r->conn,
                       error == SW_EOVERFLOW ? MHD_HTTP_CONTENT_TOO_LARGE
                                             : MHD_HTTP_BAD_REQUEST,
                       false, sw_error_last());
    }
    sw_buf_dispose(&r->body);
    MHD_suspend_connection(r->conn);
    join(s, r);
    return MHD_YES;
}

static void take_body(sw_metrics_server *s, sw_metrics_report *r,
                      const char *data, size_t n)
{
    if (r->too_large || r->body.len + n > s->body_limit) {
        r->too_large = true;
        sw_buf_dispose(&r->body);
        return;
    }
    sw_buf_put(&r->body, data, n);
}

/* Whether the request says ahead that its body is over the limit. */
static bool declares_too_much(sw_metrics_server *s, struct MHD_Connection *c)
{
    const char *h = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
                                                MHD_HTTP_HEADER_CONTENT_LENGTH);
    unsigned long long n;
    char *end;

    if (!h)
        return false;
    errno = 0;
    n = strtoull(h, &end, 10);
    return errno == 0 && end != h && n > s->body_limit;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c,
                                  const char *url, const char *method,
                                  const char *version, const char *data,
                                  size_t *size, void **con_cls)
{
    sw_metrics_server *s = cls;
    sw_metrics_report *r = *con_cls;
    const union MHD_ConnectionInfo *ctx;

    (void)version;
    if (!r) {
        r = sw_calloc(1, sizeof(*r));
        r->srv = s;
        r->conn = c;
        ctx = MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
        r->peer = ctx ? ctx->socket_context : NULL;
        sw_metric_batch_init(&r->batch);
        *con_cls = r;
        pthread_mutex_lock(&s->lock);
        s->stats.requests++;
        pthread_mutex_unlock(&s->lock);
        if (declares_too_much(s, c)) /* answered now, the body unread */
            return respond(c, MHD_HTTP_CONTENT_TOO_LARGE, false,
                           "the report is over the body limit");
        return MHD_YES;
    }
    if (r->phase == REQ_ANSWERED)
        return respond_json(c, r->status, r->stop, r->pause,
                            r->message ? r->message : why(r->status), r->json);
    if (*size) {
        take_body(s, r, data, *size);
        *size = 0;
        return MHD_YES;
    }
    return route(s, r, url, method);
}

static void free_report(sw_metrics_report *r)
{
    sw_buf_dispose(&r->body);
    sw_metric_batch_dispose(&r->batch);
    free(r->message);
    free(r->json);
    free(r);
}

/* A request ended (answered, or its connection closed): its connection
 * may send the next one, with a deadline of its own. */
static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                         enum MHD_RequestTerminationCode why_ended)
{
    sw_metrics_server *s = cls;
    sw_metrics_report *r = *con_cls;

    (void)c;
    (void)why_ended;
    if (!r)
        return;
    if (r->peer) {
        pthread_mutex_lock(&s->lock);
        restart_peer(s, r->peer);
        pthread_mutex_unlock(&s->lock);
    }
    free_report(r);
    *con_cls = NULL;
}

/* ---- the loop's side ------------------------------------------------ */

sw_metrics_report *sw_metrics_server_take(sw_metrics_server *s)
{
    sw_metrics_report *head;
    uint64_t n;

    while (read(s->efd, &n, sizeof(n)) < 0 && errno == EINTR)
        ;
    pthread_mutex_lock(&s->lock);
    head = s->head;
    s->head = s->tail = NULL;
    s->queued = 0;
    pthread_mutex_unlock(&s->lock);
    return head;
}

sw_metrics_report *sw_metrics_report_next(const sw_metrics_report *r)
{
    return r->next;
}

const char *sw_metrics_report_run(const sw_metrics_report *r)
{
    return r->run;
}

const sw_metric_batch *sw_metrics_report_batch(const sw_metrics_report *r)
{
    return &r->batch;
}

bool sw_metrics_report_is_next(const sw_metrics_report *r)
{
    return r->wants_next;
}

void sw_metrics_report_answer_json(sw_metrics_report *r, const char *json)
{
    r->json = sw_strdup(json); /* its connection is suspended: ours alone */
    sw_metrics_report_answer(r, MHD_HTTP_OK, false, NULL);
}

void sw_metrics_report_answer(sw_metrics_report *r, int status, bool stop,
                              const char *message)
{
    sw_metrics_server *s = r->srv;
    char *copy = message ? sw_strdup(message) : NULL;
    grant *g;

    pthread_mutex_lock(&s->lock);
    if ((g = by_run(s, r->run)) && g->pending > 0)
        g->pending--;
    r->status = status;
    r->stop = stop;
    r->message = copy;
    r->next = NULL;
    r->phase = REQ_ANSWERED;
    r->next_done = s->done;
    s->done = r;
    pthread_mutex_unlock(&s->lock);
}

void sw_metrics_report_answer_pause(sw_metrics_report *r)
{
    r->pause = true; /* read once flush() has resumed its connection */
    sw_metrics_report_answer(r, 200, true, NULL);
}

void sw_metrics_server_flush(sw_metrics_server *s)
{
    sw_metrics_report *r, *next;

    pthread_mutex_lock(&s->lock);
    r = s->done;
    s->done = NULL;
    pthread_mutex_unlock(&s->lock);
    for (; r; r = next) {
        next = r->next_done; /* r belongs to its connection once resumed */
        MHD_resume_connection(r->conn);
    }
}

/* ---- starting and stopping ------------------------------------------ */

/* Splits "ADDR:PORT" ("[v6]:PORT" for IPv6) into a socket address. */
static int parse_listen(const char *listen, struct sockaddr_storage *out,
                        socklen_t *len)
{
    struct addrinfo hints = {0}, *ai = NULL;
    const char *colon = strrchr(listen, ':');
    char host[256];
    size_t n;
    int rc;

    if (!colon || colon == listen || !colon[1])
        return sw_error_set(SW_EINVALID,
                            "--listen %s: expected ADDR:PORT, such as "
                            "0.0.0.0:8765",
                            listen);
    n = (size_t)(colon - listen);
    if (listen[0] == '[' && n >= 2 && listen[n - 1] == ']')
        listen++, n -= 2;
    if (n >= sizeof(host))
        return sw_error_set(SW_EINVALID, "--listen: address too long");
    memcpy(host, listen, n);
    host[n] = '\0';
    hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV | AI_PASSIVE;
    hints.ai_socktype = SOCK_STREAM;
    if ((rc = getaddrinfo(host, colon + 1, &hints, &ai)) != 0)
        return sw_error_set(SW_EINVALID,
                            "--listen %s: not a numeric address and port "
                            "(%s)",
                            listen, gai_strerror(rc));
    memcpy(out, ai->ai_addr, ai->ai_addrlen);
    *len = ai->ai_addrlen;
    freeaddrinfo(ai);
    return SW_OK;
}

/* The host trials are told: the bound address, or this machine's name
 * when bound to every address (trials on other nodes must find it). */
static char *url_host(const struct sockaddr_storage *a)
{
    char text[INET6_ADDRSTRLEN], name[256];

    if (a->ss_family == AF_INET6) {
        const struct in6_addr *in =
            &((const struct sockaddr_in6 *)a)->sin6_addr;
        if (IN6_IS_ADDR_UNSPECIFIED(in) && gethostname(name, sizeof(name)) == 0)
            return sw_strdup(name);
        inet_ntop(AF_INET6, in, text, sizeof(text));
        return sw_aprintf("[%s]", text);
    }
    if (((const struct sockaddr_in *)a)->sin_addr.s_addr == htonl(INADDR_ANY) &&
        gethostname(name, sizeof(name)) == 0)
        return sw_strdup(name);
    inet_ntop(AF_INET, &((const struct sockaddr_in *)a)->sin_addr, text,
              sizeof(text));
    return sw_strdup(text);
}

static void set_port(struct sockaddr_storage *a, int port)
{
    if (a->ss_family == AF_INET6)
        ((struct sockaddr_in6 *)a)->sin6_port = htons((uint16_t)port);
    else
        ((struct sockaddr_in *)a)->sin_port = htons((uint16_t)port);
}

/* The workers: one per CPU, from 2 to 4 (parsing a large report on one
 * does not hold up the others). */
static unsigned int pool_size(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);

    return n < 2 ? 2u : n > 4 ? 4u : (unsigned int)n;
}

/* libmicrohttpd's own bound stays above ours, which on_accept() keeps
 * by cutting: its bound only stops accepting (the backlog waits). */
static struct MHD_Daemon *start_daemon(sw_metrics_server *s,
                                       struct sockaddr_storage *a)
{
    unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL |
                         MHD_ALLOW_SUSPEND_RESUME;
    unsigned int idle = (unsigned int)s->deadline + 1;

    if (a->ss_family == AF_INET6)
        flags |= MHD_USE_IPv6;
    return MHD_start_daemon(
        flags, 0, on_accept, s, on_request, s, MHD_OPTION_SOCK_ADDR,
        (struct sockaddr *)a, MHD_OPTION_THREAD_POOL_SIZE, pool_size(),
        MHD_OPTION_CONNECTION_LIMIT,
        s->max_connections + s->max_connections / 2,
        MHD_OPTION_CONNECTION_TIMEOUT, idle, MHD_OPTION_NOTIFY_COMPLETED,
        on_completed, s, MHD_OPTION_NOTIFY_CONNECTION, on_connection, s,
        MHD_OPTION_LISTEN_BACKLOG_SIZE, 1024u, MHD_OPTION_END);
}

/* Room for every connection in the descriptor limit: the soft limit is
 * raised toward the hard one, or the bound lowered to what fits. */
static void fit_descriptors(sw_metrics_server *s)
{
    rlim_t need = (rlim_t)s->max_connections * 3 / 2 + 256;
    struct rlimit rl;

    if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur >= need)
        return;
    rl.rlim_cur =
        rl.rlim_max == RLIM_INFINITY || rl.rlim_max > need ? need : rl.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &rl) != 0 && getrlimit(RLIMIT_NOFILE, &rl))
        return;
    if (rl.rlim_cur < need)
        s->max_connections = rl.rlim_cur > 512
                                 ? (unsigned int)((rl.rlim_cur - 256) * 2 / 3)
                                 : 128;
    if (s->per_address > s->max_connections)
        s->per_address = s->max_connections;
}

/* Why the daemon could not listen on `a`: MHD says nothing, so the bind
 * is tried again here (as MHD binds, with SO_REUSEADDR) for its errno;
 * "" when it binds now. */
static const char *why_not_bound(const struct sockaddr_storage *a,
                                 socklen_t len)
{
    int fd = socket(a->ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0), on = 1;
    int rc = fd < 0 ? errno : 0;

    if (fd >= 0) {
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
        rc = bind(fd, (const struct sockaddr *)a, len) == 0 ? 0 : errno;
        close(fd);
    }
    if (rc == EADDRINUSE)
        return ": address already in use (another sweep or server listens "
               "there: choose another port, or leave --listen out for a "
               "free one)";
    return rc ? strerror(rc) : "";
}

static int bind_daemon(sw_metrics_server *s)
{
    struct sockaddr_storage a = {0};
    socklen_t len = 0;
    const union MHD_DaemonInfo *info;
    int error;

    if ((error = parse_listen(s->listen ? s->listen : "127.0.0.1:0", &a,
                              &len)) != SW_OK)
        return error;
    if (!s->listen && s->prefer_port > 0) {
        set_port(&a, s->prefer_port);
        s->daemon = start_daemon(s, &a);
        set_port(&a, 0);
    }
    if (!s->daemon)
        s->daemon = start_daemon(s, &a);
    if (!s->daemon) {
        const char *why = why_not_bound(&a, len);

        return sw_error_set(SW_EIO, "metrics server: cannot listen on %s%s%s",
                            s->listen ? s->listen : "127.0.0.1",
                            why[0] && why[0] != ':' ? ": " : "", why);
    }
    info = MHD_get_daemon_info(s->daemon, MHD_DAEMON_INFO_BIND_PORT);
    s->port = info ? info->port : 0;
    {
        char *host = url_host(&a);
        s->base = sw_aprintf("http://%s:%d", host, s->port);
        free(host);
    }
    return SW_OK;
}

int sw_metrics_server_new(sw_metrics_server **out,
                          const sw_metrics_server_opts *o)
{
    sw_metrics_server *s = sw_calloc(1, sizeof(*s));
    pthread_condattr_t attr;

    pthread_mutex_init(&s->lock, NULL);
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&s->tick, &attr);
    pthread_condattr_destroy(&attr);
    s->listen = o->listen ? sw_strdup(o->listen) : NULL;
    s->prefer_port = o->prefer_port;
    s->max_connections = o->max_connections ? o->max_connections : 4096;
    s->per_address =
        o->per_address ? o->per_address : (s->max_connections + 3) / 4;
    s->deadline = o->request_deadline > 0 ? o->request_deadline : 20.0;
    s->body_limit = o->body_limit ? o->body_limit : SW_METRICS_BODY_LIMIT;
    s->queue_limit = o->queue_limit ? o->queue_limit : 4096;
    s->run_limit = o->run_limit ? o->run_limit : 64;
    s->get = o->version >= 2 ? o->get : NULL;
    s->get_ctx = o->version >= 2 ? o->get_ctx : NULL;
    s->viewed = o->version >= 2 && o->view_token;
    if (s->viewed)
        sw_token_hash(o->view_token, strlen(o->view_token), s->view_hash);
    s->last_beat = mono_now();
    fit_descriptors(s);
    s->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (s->efd < 0) {
        int error = sw_error_set(SW_EIO, "metrics server: eventfd: %s",
                                 strerror(errno));
        sw_metrics_server_free(s);
        return error;
    }
    *out = s;
    return SW_OK;
}

int sw_metrics_server_listen(sw_metrics_server *s)
{
    int error;

    if (s->daemon)
        return SW_OK;
    if ((error = bind_daemon(s)) != SW_OK)
        return error;
    if (pthread_create(&s->reaper, NULL, reap, s) == 0)
        s->reaping = true;
    return SW_OK;
}

int sw_metrics_server_start(sw_metrics_server **out,
                            const sw_metrics_server_opts *o)
{
    sw_metrics_server *s = NULL;
    int error = sw_metrics_server_new(&s, o);

    if (!error && (error = sw_metrics_server_listen(s)) != SW_OK)
        sw_metrics_server_free(s);
    if (!error)
        *out = s;
    return error;
}

/* Stops the reaper before the connections it watches go. */
static void stop_reaper(sw_metrics_server *s)
{
    if (!s->reaping)
        return;
    pthread_mutex_lock(&s->lock);
    s->quit = true;
    pthread_cond_signal(&s->tick);
    pthread_mutex_unlock(&s->lock);
    pthread_join(s->reaper, NULL);
    s->reaping = false;
}

/* Gives the streams, woken to end, up to STREAM_DRAIN_S to send what
 * they still hold and close: stopping the daemon at once would drop the
 * last events (a run's end, the sweep's) that every page waits for. A
 * client that does not read only costs that wait. */
static void drain_streams(sw_metrics_server *s)
{
    struct timespec nap = {0, 10 * 1000 * 1000};
    double until = mono_now() + STREAM_DRAIN_S;
    bool open;

    do {
        pthread_mutex_lock(&s->lock);
        open = s->streams != NULL;
        pthread_mutex_unlock(&s->lock);
    } while (open && mono_now() < until && nanosleep(&nap, NULL) == 0);
}

void sw_metrics_server_free(sw_metrics_server *s)
{
    sw_metrics_report *r, *next;
    stream *list;
    size_t i;

    if (!s)
        return;
    pthread_mutex_lock(&s->lock);
    s->closing = true;      /* a report still on its way answers itself */
    list = take_waiting(s); /* and each stream ends */
    pthread_mutex_unlock(&s->lock);
    wake(list);
    for (r = sw_metrics_server_take(s); r; r = next) {
        next = r->next;
        sw_metrics_report_answer(r, MHD_HTTP_SERVICE_UNAVAILABLE, false,
                                 "sweep is stopping; retry");
    }
    sw_metrics_server_flush(s);
    if (s->daemon)
        drain_streams(s);
    stop_reaper(s);
    if (s->daemon)
        MHD_stop_daemon(s->daemon);
    for (i = 0; i < s->n_grants; i++) {
        free(s->grants[i].run);
    }
    free(s->grants);
    for (i = 0; i < RING; i++)
        free(s->ring[i]);
    free(s->base);
    free(s->listen);
    if (s->efd >= 0)
        close(s->efd);
    pthread_mutex_destroy(&s->lock);
    pthread_cond_destroy(&s->tick);
    free(s);
}

int sw_metrics_server_port(const sw_metrics_server *s)
{
    return s->port;
}

char *sw_metrics_server_run_url(const sw_metrics_server *s, const char *run_id)
{
    return sw_aprintf("%s" PATH_PREFIX "%s" PATH_SUFFIX, s->base, run_id);
}

bool sw_metrics_server_loopback(const char *listen)
{
    return !listen || strncmp(listen, "127.", 4) == 0 ||
           strncmp(listen, "localhost", 9) == 0 ||
           strncmp(listen, "[::1]", 5) == 0 || strncmp(listen, "::1", 3) == 0;
}

const char *sw_metrics_server_base(const sw_metrics_server *s)
{
    return s->base;
}

char *sw_metrics_server_view_url(const sw_metrics_server *s, const char *token,
                                 const char *fragment)
{
    const char *host = strstr(s->base, "://") + 3, *rest;
    char name[256];

    rest = host[0] == '[' ? strchr(host, ']') + 1 : strrchr(host, ':');
    if ((strncmp(host, "0.0.0.0:", 8) == 0 || strncmp(host, "[::]:", 5) == 0) &&
        gethostname(name, sizeof(name) - 1) == 0) {
        name[sizeof(name) - 1] = '\0';
        return sw_aprintf("http://%s%s/%s%s#/%s", name, rest,
                          token ? "?token=" : "", token ? token : "",
                          fragment ? fragment : "");
    }
    return sw_aprintf("%s/%s%s#/%s", s->base, token ? "?token=" : "",
                      token ? token : "", fragment ? fragment : "");
}

int sw_metrics_server_fd(const sw_metrics_server *s)
{
    return s->efd;
}

void sw_metrics_server_stats_get(sw_metrics_server *s,
                                 sw_metrics_server_stats *out)
{
    pthread_mutex_lock(&s->lock);
    *out = s->stats;
    pthread_mutex_unlock(&s->lock);
}
