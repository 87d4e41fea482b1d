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
 *
 * libcurl is opened with dlopen() when the first client is made: linked,
 * it and what it links (GnuTLS, Kerberos, LDAP, SSH, ...) cost every
 * command of sweep 4 ms of the dynamic loader's time at start, for the
 * one that exports.
 */
#include <curl/curl.h>
#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
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

#define CURL_SONAME "libcurl.so.4"

/* The libcurl calls this file makes, resolved once by load(). */
static struct {
    CURLcode (*global_init)(long);
    void (*global_cleanup)(void);
    CURL *(*easy_init)(void);
    void (*easy_cleanup)(CURL *);
    void (*easy_reset)(CURL *);
    CURLcode (*easy_setopt)(CURL *, CURLoption, ...);
    CURLcode (*easy_perform)(CURL *);
    CURLcode (*easy_getinfo)(CURL *, CURLINFO, ...);
    const char *(*easy_strerror)(CURLcode);
    struct curl_slist *(*slist_append)(struct curl_slist *, const char *);
    void (*slist_free_all)(struct curl_slist *);
    char why[256]; /* "": loaded */
} cu;

static pthread_once_t cu_once = PTHREAD_ONCE_INIT;

/* dlsym's object pointer into a function pointer (ISO C has no cast);
 * false, with why[] set, when the library has no such symbol. */
static bool resolve(void *lib, const char *name, void *fn, size_t size)
{
    void *p = dlsym(lib, name);

    memcpy(fn, &p, size);
    if (!p)
        snprintf(cu.why, sizeof(cu.why), "%s", dlerror());
    return p != NULL;
}

#define RESOLVE(lib, field, name)                                              \
    resolve(lib, name, &cu.field, sizeof(cu.field))

static void load(void)
{
    void *lib = dlopen(CURL_SONAME, RTLD_NOW | RTLD_LOCAL);

    if (!lib) {
        snprintf(cu.why, sizeof(cu.why), "%s", dlerror());
        return;
    }
    (void)(RESOLVE(lib, global_init, "curl_global_init") &&
           RESOLVE(lib, global_cleanup, "curl_global_cleanup") &&
           RESOLVE(lib, easy_init, "curl_easy_init") &&
           RESOLVE(lib, easy_cleanup, "curl_easy_cleanup") &&
           RESOLVE(lib, easy_reset, "curl_easy_reset") &&
           RESOLVE(lib, easy_setopt, "curl_easy_setopt") &&
           RESOLVE(lib, easy_perform, "curl_easy_perform") &&
           RESOLVE(lib, easy_getinfo, "curl_easy_getinfo") &&
           RESOLVE(lib, easy_strerror, "curl_easy_strerror") &&
           RESOLVE(lib, slist_append, "curl_slist_append") &&
           RESOLVE(lib, slist_free_all, "curl_slist_free_all"));
}

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
    pthread_once(&cu_once, load);
    if (cu.why[0])
        return sw_error_set(SW_ENOTFOUND,
                            "sweep export needs libcurl: cannot load %s: %s "
                            "(apt-get install libcurl4)",
                            CURL_SONAME, cu.why);
    if (cu.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
        return sw_error_set(SW_ERROR, "libcurl: cannot initialise");
    h = sw_calloc(1, sizeof(*h));
    h->curl = cu.easy_init();
    if (!h->curl) {
        free(h);
        cu.global_cleanup();
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
    cu.easy_cleanup(h->curl);
    cu.global_cleanup();
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
    struct curl_slist *next = cu.slist_append(*list, s);

    if (!next) {
        cu.slist_free_all(*list);
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
    cu.easy_reset(c);
    cu.easy_setopt(c, CURLOPT_URL, r->url);
    cu.easy_setopt(c, CURLOPT_CUSTOMREQUEST, r->method);
    cu.easy_setopt(c, CURLOPT_POSTFIELDS, r->body ? r->body : "");
    cu.easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)r->len);
    cu.easy_setopt(c, CURLOPT_HTTPHEADER, hdrs);
    cu.easy_setopt(c, CURLOPT_USERAGENT, "sweep/0.1.0 (W&B export)");
    cu.easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
    cu.easy_setopt(c, CURLOPT_WRITEDATA, answer);
    cu.easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
    cu.easy_setopt(c, CURLOPT_HEADERDATA, h);
    cu.easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    cu.easy_setopt(c, CURLOPT_CONNECTTIMEOUT, 30L);
    cu.easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)(h->timeout_s * 1000));
    cu.easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
    rc = cu.easy_perform(c);
    if (rc == CURLE_OK)
        cu.easy_getinfo(c, CURLINFO_RESPONSE_CODE, status);
    cu.slist_free_all(hdrs);
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
                            h->base_url, r->what, cu.easy_strerror(rc),
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
        snprintf(why, sizeof(why), "%s", cu.easy_strerror(rc));
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
