/*
 * metrics_server.c - the metrics endpoint on libmicrohttpd: the only file
 * that includes <microhttpd.h>.
 *
 * libmicrohttpd runs a thread per connection: it reads each request,
 * checks its path, method, size and token, and parses its body. A good
 * one becomes a report: it joins a bounded queue, an eventfd wakes the
 * engine's loop (when the queue was empty), and the connection's thread
 * waits. The loop takes the whole queue, commits it in one transaction,
 * answers each report and wakes the waiting threads once for all, and
 * each sends its answer. So nothing slow stands between a report and its
 * answer but the commit itself, a 200 is only ever sent for committed
 * values, and the loop's cost per report is a few stores in memory.
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
#include <sys/socket.h>
#include <unistd.h>

#include "orchestrator/token.h"
#include "sweeps/buf.h"
#include "sweeps/error.h"
#include "sweeps/value.h"

#define PATH_PREFIX "/v1/runs/"
#define PATH_SUFFIX "/metrics"
#define RUN_ID_MAX 128
#define TOKEN_MAX 256

typedef struct {
    char *run;
    char hash[SW_TOKEN_HASH_LEN + 1]; /* of its token: never the token */
    size_t pending; /* its reports in the queue or with the loop */
} grant;

typedef enum { REQ_READING, REQ_WAITING, REQ_ANSWERED } req_phase;

struct sw_metrics_report {
    sw_metrics_server *srv;
    struct MHD_Connection *conn;
    req_phase phase;
    char run[RUN_ID_MAX];
    sw_buf body;
    bool too_large;
    sw_metric_batch batch;
    int status;
    bool stop;
    char *message;
    sw_metrics_report *next;
};

struct sw_metrics_server {
    struct MHD_Daemon *daemon;
    int port;
    char *base; /* "http://host:port" */
    int efd;
    size_t body_limit, queue_limit, run_limit;
    char *listen; /* what listen() binds: opts' listen, prefer_port */
    int prefer_port;
    unsigned int max_connections;
    pthread_mutex_t lock;    /* the grants, the queue, answers, counters */
    pthread_cond_t answered; /* some waiting report was answered */
    grant *grants;
    size_t n_grants, cap_grants;
    sw_metrics_report *head, *tail;
    size_t queued;
    sw_metrics_server_stats stats;
};

/* ---- answers -------------------------------------------------------- */

/* Queues the answer: `{"stop": ...}` for a 200, else `{"error": msg}`. */
static enum MHD_Result respond(struct MHD_Connection *c, int status, bool stop,
                               const char *message)
{
    sw_buf b = SW_BUF_INIT;
    struct MHD_Response *r;
    enum MHD_Result ok;

    if (status == MHD_HTTP_OK) {
        sw_buf_puts(&b, stop ? "{\"stop\": true}\n" : "{\"stop\": false}\n");
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

/* ---- requests ------------------------------------------------------- */

/* The run id in `url`, copied into `out`; false when the path is not
 * /v1/runs/<run id>/metrics. */
static bool run_of(const char *url, char out[RUN_ID_MAX])
{
    size_t np = strlen(PATH_PREFIX), ns = strlen(PATH_SUFFIX), len, n;

    len = strlen(url);
    if (len <= np + ns || strncmp(url, PATH_PREFIX, np) != 0 ||
        strcmp(url + len - ns, PATH_SUFFIX) != 0)
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

/* Queues a parsed report for the loop: 0, or 401/403/503. *wake says
 * whether the queue was empty: only then must the loop be woken, since
 * sw_metrics_server_take() takes all of it. */
static int enqueue(sw_metrics_server *s, sw_metrics_report *r, bool *wake)
{
    grant *g = NULL;
    int status;

    pthread_mutex_lock(&s->lock);
    status = authorize(s, r->conn, r->run, &g);
    if (!status && (s->queued >= s->queue_limit || g->pending >= s->run_limit))
        status = MHD_HTTP_SERVICE_UNAVAILABLE;
    if (!status) {
        g->pending++;
        s->queued++;
        r->phase = REQ_WAITING;
        *wake = s->head == NULL;
        if (s->tail)
            s->tail->next = r;
        else
            s->head = r;
        s->tail = r;
        s->stats.accepted++;
    } else {
        s->stats.busy += status == MHD_HTTP_SERVICE_UNAVAILABLE;
        s->stats.refused += status != MHD_HTTP_SERVICE_UNAVAILABLE;
    }
    pthread_mutex_unlock(&s->lock);
    return status;
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

/* Waits (on the connection's own thread) for the loop's answer. */
static void await_answer(sw_metrics_server *s, sw_metrics_report *r)
{
    pthread_mutex_lock(&s->lock);
    while (r->phase != REQ_ANSWERED)
        pthread_cond_wait(&s->answered, &s->lock);
    pthread_mutex_unlock(&s->lock);
}

/* A whole request has arrived: answer what is wrong with it, or hand it
 * to the loop and wait for the loop's answer. */
static enum MHD_Result route(sw_metrics_server *s, sw_metrics_report *r,
                             const char *url, const char *method)
{
    bool wake = false;
    int status;

    if (!run_of(url, r->run))
        return respond(r->conn, MHD_HTTP_NOT_FOUND, false,
                       "no such endpoint: POST " PATH_PREFIX
                       "<run id>" PATH_SUFFIX);
    if (strcmp(method, MHD_HTTP_METHOD_POST) != 0)
        return respond(r->conn, MHD_HTTP_METHOD_NOT_ALLOWED, false,
                       "only POST reports metrics");
    if (r->too_large)
        return respond(r->conn, MHD_HTTP_CONTENT_TOO_LARGE, false,
                       "the report is over the body limit");
    r->batch.strict = true;
    if ((status = sw_metrics_parse(&r->batch, sw_buf_cstr(&r->body),
                                   r->body.len)) != SW_OK) {
        pthread_mutex_lock(&s->lock);
        s->stats.refused++;
        pthread_mutex_unlock(&s->lock);
        return respond(r->conn,
                       status == SW_EOVERFLOW ? MHD_HTTP_CONTENT_TOO_LARGE
                                              : MHD_HTTP_BAD_REQUEST,
                       false, sw_error_last());
    }
    if ((status = enqueue(s, r, &wake)) != 0)
        return respond(r->conn, status, false, why(status));
    if (wake)
        wake_loop(s);
    await_answer(s, r);
    return respond(r->conn, r->status, r->stop, r->message);
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

    (void)version;
    if (!r) {
        r = sw_calloc(1, sizeof(*r));
        r->srv = s;
        r->conn = c;
        sw_metric_batch_init(&r->batch);
        *con_cls = r;
        pthread_mutex_lock(&s->lock);
        s->stats.requests++;
        pthread_mutex_unlock(&s->lock);
        if (declares_too_much(s, c))
            r->too_large = true; /* answered once the body is skipped */
        return MHD_YES;
    }
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
    free(r);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                         enum MHD_RequestTerminationCode why_ended)
{
    (void)cls;
    (void)c;
    (void)why_ended;
    if (*con_cls)
        free_report(*con_cls);
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
    r->phase = REQ_ANSWERED; /* r belongs to its connection again */
    pthread_mutex_unlock(&s->lock);
}

void sw_metrics_server_flush(sw_metrics_server *s)
{
    pthread_mutex_lock(&s->lock);
    pthread_cond_broadcast(&s->answered);
    pthread_mutex_unlock(&s->lock);
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

/* A thread each: past this many connections at once, new ones are
 * refused (the clients retry). */
static struct MHD_Daemon *start_daemon(sw_metrics_server *s,
                                       struct sockaddr_storage *a,
                                       unsigned int max_connections)
{
    unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD |
                         MHD_USE_THREAD_PER_CONNECTION | MHD_USE_POLL;

    if (a->ss_family == AF_INET6)
        flags |= MHD_USE_IPv6;
    return MHD_start_daemon(
        flags, 0, NULL, NULL, on_request, s, MHD_OPTION_SOCK_ADDR,
        (struct sockaddr *)a, MHD_OPTION_CONNECTION_LIMIT, max_connections,
        MHD_OPTION_CONNECTION_TIMEOUT, 120u, MHD_OPTION_NOTIFY_COMPLETED,
        on_completed, s, MHD_OPTION_END);
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
        s->daemon = start_daemon(s, &a, s->max_connections);
        set_port(&a, 0);
    }
    if (!s->daemon)
        s->daemon = start_daemon(s, &a, s->max_connections);
    if (!s->daemon)
        return sw_error_set(SW_EIO, "metrics server: cannot listen on %s",
                            s->listen ? s->listen : "127.0.0.1");
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

    pthread_mutex_init(&s->lock, NULL);
    pthread_cond_init(&s->answered, NULL);
    s->listen = o->listen ? sw_strdup(o->listen) : NULL;
    s->prefer_port = o->prefer_port;
    s->max_connections = o->max_connections ? o->max_connections : 1024;
    s->body_limit = o->body_limit ? o->body_limit : SW_METRICS_BODY_LIMIT;
    s->queue_limit = o->queue_limit ? o->queue_limit : 4096;
    s->run_limit = o->run_limit ? o->run_limit : 64;
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
    return s->daemon ? SW_OK : bind_daemon(s);
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

void sw_metrics_server_free(sw_metrics_server *s)
{
    sw_metrics_report *r, *next;
    size_t i;

    if (!s)
        return;
    for (r = sw_metrics_server_take(s); r; r = next) {
        next = r->next;
        sw_metrics_report_answer(r, MHD_HTTP_SERVICE_UNAVAILABLE, false,
                                 "sweep is stopping; retry");
    }
    sw_metrics_server_flush(s);
    if (s->daemon)
        MHD_stop_daemon(s->daemon);
    for (i = 0; i < s->n_grants; i++) {
        free(s->grants[i].run);
    }
    free(s->grants);
    free(s->base);
    free(s->listen);
    if (s->efd >= 0)
        close(s->efd);
    pthread_mutex_destroy(&s->lock);
    pthread_cond_destroy(&s->answered);
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
