/*
 * wandb_internal.h - what the exporter's files share: the HTTP client
 * (wandb_http.c, the only file that includes <curl/curl.h>) under the
 * W&B protocol (wandb.c), and the credentials (wandb_auth.c). Nothing
 * outside backends/wandb*.c includes this header.
 */
#ifndef SW_WANDB_INTERNAL_H
#define SW_WANDB_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backends/wandb.h"
#include "sweeps/buf.h"

typedef struct sw_wandb_http sw_wandb_http;

/* One HTTP request. */
typedef struct {
    const char *method; /* "POST", "PUT" */
    const char *url;
    const char *const *headers; /* "Key: value" each */
    size_t n_headers;
    bool auth; /* send the Authorization header (never to upload URLs) */
    const char *body;
    size_t len;
    const char *what; /* for messages: "UpsertBucket", "file_stream" */
} sw_wandb__req;

/* A client for `base_url`, authenticating with `key` (copied; wiped on
 * free). `entity` names whose key it is in messages. */
int sw_wandb__http_new(sw_wandb_http **out, const char *base_url,
                       const char *entity, const char *key,
                       const sw_wandb_opts *opts);
void sw_wandb__http_free(sw_wandb_http *h);

/* Sends `r`, retrying with exponential backoff and jitter on connection
 * errors, 429 (after Retry-After) and 5xx. A 2xx answer is 0 with its
 * body in *answer. 401 and 403 are SW_EINVALID with a line naming the
 * base URL and the entity; other failures SW_EIO. */
int sw_wandb__http_send(sw_wandb_http *h, const sw_wandb__req *r,
                        sw_buf *answer);
/* Requests made, each retry counted. */
int64_t sw_wandb__http_count(const sw_wandb_http *h);

/* A session (wandb.h). */
struct sw_wandb {
    char *base;          /* no trailing slash */
    char *entity;        /* as given */
    char *project;       /* as given */
    char *path;          /* "ENTITY/PROJECT", each percent-encoded */
    FILE *dry;           /* dry run: where requests are printed */
    sw_wandb_http *http; /* NULL in a dry run */
    size_t max_request;
    int64_t printed; /* requests printed in a dry run */
    int64_t bytes;   /* their bodies' bytes */
    int64_t files;   /* of them, file uploads (PUT) */
};

/* Sends `r` (or prints it, in a dry run, as a JSON line with the key
 * redacted: then *answer is left empty). */
int sw_wandb__send(sw_wandb *w, const sw_wandb__req *r, sw_buf *answer);

/* The run files the exporter uploads, as bits. */
enum { SW_WANDB__META = 1, SW_WANDB__PATCH = 2 };

/* Sends the run's history from mark->history on, its summary, its end
 * and the files just uploaded (`uploaded`, SW_WANDB__* bits), in
 * file_stream requests under the size limit; updates *mark after each. */
int sw_wandb__stream(sw_wandb *w, const sw_wandb_run *run, const char *name,
                     unsigned uploaded, sw_wandb_mark *mark,
                     sw_wandb_mark_fn fn, void *ctx);

/* Appends `s` as a JSON string. */
void sw_wandb__json_str(sw_buf *out, const char *s, size_t n);

/* The API key for `base_url`: WANDB_API_KEY, else the password of the
 * URL's host in ~/.netrc (or $NETRC). The caller wipes and frees it;
 * SW_ENOTFOUND with a message saying where to put one. */
int sw_wandb__key(char **out, const char *base_url);

/* "Basic " + base64("api:" + key), the Authorization header's value;
 * the caller wipes and frees it. */
char *sw_wandb__basic(const char *key);

/* Overwrites `s` with zeroes and frees it. Accepts NULL. */
void sw_wandb__wipe(char *s);

#endif
