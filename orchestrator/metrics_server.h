/*
 * metrics_server.h - the HTTP endpoint trials report metrics to
 * (docs/metrics.md): `POST /v1/runs/<run id>/metrics` with
 * `Authorization: Bearer <token>` and a JSON object or array of objects;
 * and `POST /v1/runs/<run id>/next`, where a long-lived worker asks for
 * the run it serves next.
 *
 * The server parses and checks requests on a few threads of its own
 * (never one per connection) and hands the good ones to the engine's
 * loop as reports; the loop commits them (many at once), decides, and
 * answers each. A report is answered 200 only
 * after the loop says so, so the loop stays the store's only writer and
 * an acknowledged value is a committed one. Its descriptor is readable
 * while reports wait.
 */
#ifndef SW_METRICS_SERVER_H
#define SW_METRICS_SERVER_H

#include <stdbool.h>
#include <stddef.h>

#include "orchestrator/metrics.h"

typedef struct sw_metrics_server sw_metrics_server;
typedef struct sw_metrics_report sw_metrics_report;

/* ---- GET: what the server answers besides reports ------------------ *
 * A GET request (path and query arguments, borrowed for the call) is
 * handed to the `get` function of the options on one of the server's
 * threads; it fills in the reply. A reply that asks for `stream` becomes
 * a text/event-stream of every event published from then on (or from
 * the request's Last-Event-ID or `since` argument, while the server
 * still holds it), held open until the server stops. */
typedef struct sw_http_get sw_http_get;
const char *sw_http_get_path(const sw_http_get *g);
/* A query argument, decoded; NULL when absent. */
const char *sw_http_get_arg(const sw_http_get *g, const char *name);
/* The id of the last event published when the request arrived: what it
 * reads from the store includes at least every event up to it. */
unsigned long long sw_http_get_seq(const sw_http_get *g);

typedef struct {
    int status;       /* HTTP status; 0: 200 */
    const char *type; /* Content-Type; NULL: application/json */
    const char *data; /* the body */
    size_t len;       /* its length */
    bool owned;       /* `data` came from malloc: the server frees it */
    bool immutable;   /* may be cached (an embedded asset) */
    bool stream;      /* the event stream; `data` is ignored */
} sw_http_reply;
typedef void (*sw_http_get_fn)(void *ctx, const sw_http_get *req,
                               sw_http_reply *out);

typedef struct {
    unsigned int version;
    const char *listen; /* "ADDR:PORT" (PORT 0: any); NULL: 127.0.0.1:0 */
    int prefer_port;    /* without `listen`: tried first (a resumed sweep's
                           old port, so its trials find it again); 0: none */
    size_t body_limit;  /* bytes; 0: SW_METRICS_BODY_LIMIT */
    size_t queue_limit; /* reports waiting for the loop; 0: 4096 */
    size_t run_limit;   /* of those, from one run; 0: 64 */
    unsigned int max_connections; /* open at once; 0: 4096 (fewer when
                                     descriptors are short) */
    unsigned int per_address;     /* of those, from one client address;
                                     0: a quarter of max_connections */
    double request_deadline;      /* seconds for a whole request, from when
                                     its connection could send it; 0: 20 */
    sw_http_get_fn get; /* answers GET requests (the dashboard, site.h);
                           NULL: only the metrics endpoint */
    void *get_ctx;
    const char *view_token; /* what a GET must carry (`?token=`, or the
                               cookie the first answer sets); NULL: none */
} sw_metrics_server_opts;

#define SW_METRICS_BODY_LIMIT (1u << 20)
#define SW_METRICS_SERVER_OPTS_VERSION 2
#define SW_METRICS_SERVER_OPTS_INIT                                            \
    {                                                                          \
        SW_METRICS_SERVER_OPTS_VERSION, NULL, 0, 0, 0, 0, 0, 0, 0, NULL, NULL, \
            NULL                                                               \
    }

/* Starts serving: new() then listen(). SW_EINVALID for a malformed
 * `listen`, SW_EIO when the address cannot be bound; the message says
 * which. */
int sw_metrics_server_start(sw_metrics_server **out,
                            const sw_metrics_server_opts *o);

/* A server that does not listen yet, so tokens can be allowed before any
 * request is answered (a resumed sweep's adopted attempts post the
 * instant it listens). listen() binds and starts answering; port() and
 * run_url() are valid after it. */
int sw_metrics_server_new(sw_metrics_server **out,
                          const sw_metrics_server_opts *o);
int sw_metrics_server_listen(sw_metrics_server *s);

/* Answers every report not yet taken with 503 and stops. Reports taken
 * must have been answered. Accepts NULL. */
void sw_metrics_server_free(sw_metrics_server *s);

/* The port it listens on. */
int sw_metrics_server_port(const sw_metrics_server *s);

/* The URL a run reports to; the caller frees it. */
char *sw_metrics_server_run_url(const sw_metrics_server *s, const char *run_id);

/* Readable while reports wait; sw_metrics_server_take() empties it. */
int sw_metrics_server_fd(const sw_metrics_server *s);

/* Lets `token` write to run `run_id` (replacing its earlier token), or
 * with revoke() lets no token write to it any more. Thread-safe. */
void sw_metrics_server_allow(sw_metrics_server *s, const char *run_id,
                             const char *token);
void sw_metrics_server_revoke(sw_metrics_server *s, const char *run_id);
/* allow() for the token whose SHA-256 (sw_token_hash()) is `hash`: an
 * adopted attempt, whose token `sweep` no longer has. Thread-safe. */
void sw_metrics_server_allow_hash(sw_metrics_server *s, const char *run_id,
                                  const char *hash);

/* The reports waiting, oldest first, linked by sw_metrics_report_next().
 * Each must be answered exactly once, by the loop's thread. */
sw_metrics_report *sw_metrics_server_take(sw_metrics_server *s);

sw_metrics_report *sw_metrics_report_next(const sw_metrics_report *r);
/* The run it writes to, and its values (borrowed, valid until answered). */
const char *sw_metrics_report_run(const sw_metrics_report *r);
const sw_metric_batch *sw_metrics_report_batch(const sw_metrics_report *r);

/* Whether `r` is a worker's request for its next run (POST
 * /v1/runs/<run id>/next, docs/clients.md): it has no values, and the
 * loop answers it when it knows, with answer_json(): 200 and `json` as the
 * whole body (or, like a report, with answer()). */
bool sw_metrics_report_is_next(const sw_metrics_report *r);
void sw_metrics_report_answer_json(sw_metrics_report *r, const char *json);

/* Answers `r` (which is no longer valid after): 200 with `stop`, or an
 * error status with a one-line `message`. The answer goes out at the
 * next flush(), which wakes every answered report's connection at once. */
void sw_metrics_report_answer(sw_metrics_report *r, int status, bool stop,
                              const char *message);
void sw_metrics_server_flush(sw_metrics_server *s);
/* Answers `r` 200 with {"stop": true, "pause": true}: the run reached its
 * rung and should save its checkpoint and exit (promotion ASHA). */
void sw_metrics_report_answer_pause(sw_metrics_report *r);

/* Sends one event to every open event stream: `name` (a word) and
 * `json` (one line) become an SSE message with the next id. The last
 * few thousand stay, for a stream that reconnects; one that fell
 * further behind is sent `reset` and reloads. Thread-safe. */
void sw_metrics_server_publish(sw_metrics_server *s, const char *name,
                               const char *json);

/* Whether `listen` ("ADDR:PORT"; NULL: the default, 127.0.0.1) is a
 * loopback address, which only this machine reaches. */
bool sw_metrics_server_loopback(const char *listen);

/* "http://host:port", the address trials are told. */
const char *sw_metrics_server_base(const sw_metrics_server *s);
/* The dashboard's URL for a person: the base (this host's name for a
 * wildcard address), `?token=` when given, and `#/fragment`. The caller
 * frees it. */
char *sw_metrics_server_view_url(const sw_metrics_server *s, const char *token,
                                 const char *fragment);

/* Counters, for tests and benchmarks. */
typedef struct {
    unsigned long long requests, accepted, refused, busy;
    unsigned long long cut;         /* connections shut: past the deadline,
                                       or to make room */
    unsigned long long turned_away; /* connections refused: no room */
    unsigned long long pages;       /* GET requests answered */
    unsigned long long streams;     /* event streams open now */
} sw_metrics_server_stats;
void sw_metrics_server_stats_get(sw_metrics_server *s,
                                 sw_metrics_server_stats *out);

#endif
