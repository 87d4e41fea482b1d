/*
 * wandb_http.c - the exporter's HTTP client: one libcurl handle, kept
 * alive across requests, and the retry policy. The only file of sweep
 * that includes <curl/curl.h>.
 *
 * A request is retried on connection errors, timeouts, 429 and 5xx, up to
 * max_attempts times, waiting backoff * 2^(n-1) seconds (at most 60),
 * times a jitter in [0.5, 1.5) from a seeded generator, or what a 429's
 * Retry-After says (at most 300 s). 401 and 403 are never retried: the
 * key is wrong, and the message says where to look without showing it.
 * The Authorization header is built once and wiped on free; curl's own
 * verbose output is never turned on.
 */
#include <curl/curl.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "backends/wandb_internal.h"

#define MAX_WAIT_S 60.0
#define MAX_RETRY_AFTER_S 300.0

struct sw_wandb_http {
    CURL *curl;
    char *base_url;
    char *entity;
    char *auth; /* "Authorization: Basic ..." */
    uint64_t rng;
    int max_attempts;
    double backoff_s, timeout_s;
    int64_t count;
    double retry_after; /* of the last answer; < 0: none */
    FILE *notices;
};

/* splitmix64: small, seeded, and good enough for jitter. */
static double next_unit(sw_wandb_http *h)
{
    uint64_t z = (h->rng += 0x9e3779b97f4a7c15ULL);

    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    return (double)(z >> 11) / 9007199254740992.0;
}

int sw_wandb__http_new(sw_wandb_http **out, const char *base_url,
                       const char *entity, const char *key,
                       const sw_wandb_opts *opts)
{
    sw_wandb_http *h;
    char *basic;

    *out = NULL;
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
        return sw_error_set(SW_ERROR, "libcurl: cannot initialise");
    h = sw_calloc(1, sizeof(*h));
    h->curl = curl_easy_init();
    if (!h->curl) {
        free(h);
        curl_global_cleanup();
        return sw_error_set(SW_ERROR, "libcurl: cannot create a handle");
    }
    h->base_url = sw_strdup(base_url);
    h->entity = sw_strdup(entity);
    basic = sw_wandb__basic(key);
    h->auth = sw_aprintf("Authorization: %s", basic);
    sw_wandb__wipe(basic);
    h->rng = opts->seed;
    h->max_attempts = opts->max_attempts > 0 ? opts->max_attempts : 10;
    h->backoff_s = opts->backoff_s > 0 ? opts->backoff_s : 0.5;
    h->timeout_s = opts->timeout_s > 0 ? opts->timeout_s : 300;
    h->notices = opts->notices;
    *out = h;
    return SW_OK;
}

void sw_wandb__http_free(sw_wandb_http *h)
{
    if (!h)
        return;
    curl_easy_cleanup(h->curl);
    curl_global_cleanup();
    sw_wandb__wipe(h->auth);
    free(h->base_url);
    free(h->entity);
    free(h);
}

int64_t sw_wandb__http_count(const sw_wandb_http *h)
{
    return h ? h->count : 0;
}

static size_t on_body(char *data, size_t size, size_t n, void *ctx)
{
    sw_buf_put(ctx, data, size * n);
    return size * n;
}

/* Notes a Retry-After given in seconds (an HTTP date counts as none). */
static size_t on_header(char *data, size_t size, size_t n, void *ctx)
{
    static const char name[] = "retry-after:";
    sw_wandb_http *h = ctx;
    size_t len = size * n, k = sizeof(name) - 1;
    char num[32], *end;
    double v;

    if (len > k && len - k < sizeof(num) && strncasecmp(data, name, k) == 0) {
        memcpy(num, data + k, len - k);
        num[len - k] = 0;
        v = strtod(num, &end);
        if (end != num && v >= 0 && isfinite(v))
            h->retry_after = v;
    }
    return len;
}

/* Appends `s` to *list; on failure frees the list and leaves NULL. */
static bool append(struct curl_slist **list, const char *s)
{
    struct curl_slist *next = curl_slist_append(*list, s);

    if (!next) {
        curl_slist_free_all(*list);
        *list = NULL;
        return false;
    }
    *list = next;
    return true;
}

/* Whether W&B's upload headers name a Content-Type. */
static bool has_content_type(const sw_wandb__req *r)
{
    for (size_t i = 0; i < r->n_headers; i++)
        if (strncasecmp(r->headers[i], "Content-Type:", 13) == 0)
            return true;
    return false;
}

/* The headers of one request; the caller frees the list (NULL: out of
 * memory). An upload carries W&B's upload headers alone, as wandb-core's
 * DefaultFileTransfer.Upload sends them
 * (core/internal/filetransfer/file_transfer_default.go): not the
 * Content-Type libcurl gives every body (application/x-www-form-
 * urlencoded), which a signed URL may refuse. */
static struct curl_slist *headers_of(const sw_wandb_http *h,
                                     const sw_wandb__req *r)
{
    struct curl_slist *list = NULL;

    /* no "Expect: 100-continue" round trip before large bodies */
    if (!append(&list, "Expect:"))
        return NULL;
    if (r->auth && (!append(&list, h->auth) ||
                    !append(&list, "Content-Type: application/json")))
        return NULL;
    if (!r->auth && !has_content_type(r) && !append(&list, "Content-Type:"))
        return NULL;
    for (size_t i = 0; i < r->n_headers; i++)
        if (!append(&list, r->headers[i]))
            return NULL;
    return list;
}

/* One attempt: *status gets the HTTP status (0 when none came). */
static CURLcode perform(sw_wandb_http *h, const sw_wandb__req *r,
                        sw_buf *answer, long *status)
{
    CURL *c = h->curl;
    struct curl_slist *hdrs = headers_of(h, r);
    CURLcode rc;

    *status = 0;
    answer->len = 0;
    h->retry_after = -1;
    if (!hdrs)
        return CURLE_OUT_OF_MEMORY;
    curl_easy_reset(c);
    curl_easy_setopt(c, CURLOPT_URL, r->url);
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, r->method);
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, r->body ? r->body : "");
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)r->len);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdrs);
    curl_easy_setopt(c, CURLOPT_USERAGENT, "sweep/0.1.0 (W&B export)");
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, answer);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, h);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, 30L);
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)(h->timeout_s * 1000));
    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
    rc = curl_easy_perform(c);
    if (rc == CURLE_OK)
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, status);
    curl_slist_free_all(hdrs);
    h->count++;
    return rc;
}

static bool transient(CURLcode rc)
{
    switch (rc) {
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_CONNECT:
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_PARTIAL_FILE:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
        return true;
    default:
        return false;
    }
}

static void nap(double seconds)
{
    struct timespec ts, rem;

    ts.tv_sec = (time_t)seconds;
    ts.tv_nsec = (long)((seconds - (double)ts.tv_sec) * 1e9);
    while (nanosleep(&ts, &rem) != 0 && errno == EINTR)
        ts = rem;
}

/* How long to wait before attempt `n + 1` (n >= 1). */
static double wait_for(sw_wandb_http *h, int n)
{
    double base = h->backoff_s * pow(2.0, n - 1);

    if (h->retry_after >= 0)
        return fmin(h->retry_after, MAX_RETRY_AFTER_S) *
               (1.0 + 0.1 * next_unit(h));
    return fmin(base, MAX_WAIT_S) * (0.5 + next_unit(h));
}

/* The first line of an answer, at most 200 bytes, for a message. */
static void snippet(char *out, size_t cap, const sw_buf *answer)
{
    const char *s = sw_buf_cstr(answer);
    size_t n = strcspn(s, "\r\n");

    if (n >= cap)
        n = cap - 1;
    memcpy(out, s, n);
    out[n] = 0;
}

static int refused(const sw_wandb_http *h, const sw_wandb__req *r, long st)
{
    return sw_error_set(SW_EINVALID,
                        "W&B at %s refused the API key for entity '%s' "
                        "(HTTP %ld on %s): check WANDB_API_KEY or the "
                        "netrc entry, and that the key may write to '%s'",
                        h->base_url, h->entity, st, r->what, h->entity);
}

static int failed(const sw_wandb_http *h, const sw_wandb__req *r, CURLcode rc,
                  long st, const sw_buf *answer, int attempts)
{
    char text[201];

    if (rc != CURLE_OK)
        return sw_error_set(SW_EIO, "W&B at %s: %s: %s (after %d attempt%s)",
                            h->base_url, r->what, curl_easy_strerror(rc),
                            attempts, attempts == 1 ? "" : "s");
    snippet(text, sizeof(text), answer);
    return sw_error_set(SW_EIO,
                        "W&B at %s: %s: HTTP %ld%s%s (after %d attempt%s)",
                        h->base_url, r->what, st, text[0] ? ": " : "", text,
                        attempts, attempts == 1 ? "" : "s");
}

/* Says on the notices stream why and how long it waits. */
static void notice(const sw_wandb_http *h, const sw_wandb__req *r, CURLcode rc,
                   long st, int n, double wait)
{
    char why[64];

    if (rc != CURLE_OK)
        snprintf(why, sizeof(why), "%s", curl_easy_strerror(rc));
    else
        snprintf(why, sizeof(why), "HTTP %ld", st);
    fprintf(h->notices,
            "sweep export: W&B at %s: %s: %s (attempt %d of %d), trying "
            "again in %.1f s\n",
            h->base_url, r->what, why, n, h->max_attempts, wait);
    fflush(h->notices);
}

int sw_wandb__http_send(sw_wandb_http *h, const sw_wandb__req *r,
                        sw_buf *answer)
{
    CURLcode rc;
    long st = 0;
    double wait;

    for (int n = 1;; n++) {
        rc = perform(h, r, answer, &st);
        if (rc == CURLE_OK && st >= 200 && st < 300)
            return SW_OK;
        if (rc == CURLE_OK && r->auth && (st == 401 || st == 403))
            return refused(h, r, st);
        if (!(rc == CURLE_OK ? st == 429 || st >= 500 : transient(rc)) ||
            n >= h->max_attempts)
            return failed(h, r, rc, st, answer, n);
        wait = wait_for(h, n);
        if (h->notices)
            notice(h, r, rc, st, n, wait);
        nap(wait);
    }
}
